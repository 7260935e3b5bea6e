/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_blktrace.c - the queue's trace, read back as raw blk_io_trace
 * records: one file on the 2.6 queue, one per hardware queue (its cpu) on
 * a multi-queue one.
 */
#include <check.h>
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blkcg.h"
#include "blktrace.h"
#include "blktrace_read.h"
#include "fake_driver.h"
#include "fake_mq.h"

#define MAX_RECS 256
#define TRACE_DEV (240u << 20)

static char mem[1 << 20] __attribute__((aligned(4096)));

/* One record as it is on the file, its pdu after it. */
struct rec {
	struct blk_io_trace t;
	unsigned char pdu[64];
};

struct traced {
	struct fake_disk *fd;
	char dir[64];
	char name[96]; /* the trace's NAME */
	char path[128]; /* NAME.blktrace.0 */
	struct rec recs[MAX_RECS];
	unsigned int nr;
};

static void traced_start(struct traced *tr, const char *elevator)
{
	char why[256];

	memset(tr, 0, sizeof(*tr));
	tr->fd = fake_disk_new(elevator);
	strcpy(tr->dir, "/tmp/check_blktrace.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tr->dir));
	snprintf(tr->name, sizeof(tr->name), "%s/t", tr->dir);
	snprintf(tr->path, sizeof(tr->path), "%s.blktrace.0", tr->name);
	ck_assert_int_eq(blk_trace_setup(tr->fd->q, tr->name, why, sizeof(why)), 0);
}

static unsigned int read_recs(const char *path, struct rec *recs)
{
	FILE *f = fopen(path, "r");
	unsigned int n = 0;

	ck_assert_ptr_nonnull(f);
	while (fread(&recs[n].t, sizeof(recs[n].t), 1, f) == 1) {
		ck_assert_uint_le(recs[n].t.pdu_len, sizeof(recs[n].pdu));
		ck_assert_uint_eq(fread(recs[n].pdu, 1, recs[n].t.pdu_len, f), recs[n].t.pdu_len);
		ck_assert_uint_lt(++n, MAX_RECS);
	}
	ck_assert(feof(f));
	fclose(f);
	return n;
}

/* Stop tracing and read the file back whole. */
static void traced_stop(struct traced *tr)
{
	ck_assert_int_eq(blk_trace_remove(tr->fd->q), 0);
	ck_assert_ptr_null(tr->fd->q->blk_trace);
	tr->nr = read_recs(tr->path, tr->recs);
}

static void traced_free(struct traced *tr)
{
	fake_disk_free(tr->fd);
	unlink(tr->path);
	rmdir(tr->dir);
}

static bool is_note(const struct rec *r)
{
	return r->t.action & BLK_TC_ACT(BLK_TC_NOTIFY);
}

/* The nth record that is not a note, from 0. */
static const struct blk_io_trace *ev(const struct traced *tr, unsigned int n)
{
	for (unsigned int i = 0; i < tr->nr; i++)
		if (!is_note(&tr->recs[i]) && !n--)
			return &tr->recs[i].t;
	ck_abort_msg("no event %u", n);
	return NULL;
}

static const unsigned char *ev_pdu(const struct traced *tr, const struct blk_io_trace *t)
{
	return ((const struct rec *)t)->pdu;
}

/* The events as blkparse's letters: "QGIDC". */
static const char *acts(const struct traced *tr)
{
	static const char letter[] = { [__BLK_TA_QUEUE] = 'Q',	[__BLK_TA_BACKMERGE] = 'M',
				       [__BLK_TA_FRONTMERGE] = 'F', [__BLK_TA_GETRQ] = 'G',
				       [__BLK_TA_REQUEUE] = 'R',	[__BLK_TA_ISSUE] = 'D',
				       [__BLK_TA_COMPLETE] = 'C',	[__BLK_TA_INSERT] = 'I',
				       [__BLK_TA_SPLIT] = 'X',	[__BLK_TA_BOUNCE] = 'B' };
	static char s[MAX_RECS + 1];
	unsigned int n = 0;

	for (unsigned int i = 0; i < tr->nr; i++) {
		unsigned int a = tr->recs[i].t.action & 0xffff & ~(unsigned int)__BLK_TA_CGROUP;

		if (is_note(&tr->recs[i]))
			continue;
		s[n++] = a < sizeof(letter) && letter[a] ? letter[a] : '?';
	}
	s[n] = '\0';
	return s;
}

static uint32_t cats(const struct blk_io_trace *t)
{
	return t->action >> BLK_TC_SHIFT;
}

#define RW_CATS (BLK_TC_READ | BLK_TC_WRITE | BLK_TC_FLUSH | BLK_TC_SYNC | BLK_TC_FUA | BLK_TC_DISCARD)

static void ck_range(const struct blk_io_trace *t, sector_t sector, unsigned int sectors)
{
	ck_assert_uint_eq(t->sector, sector);
	ck_assert_uint_eq(t->bytes, sectors << SECTOR_SHIFT);
}

static void submit(struct traced *tr, struct test_bio *tb, enum req_op op, unsigned int flags,
		   sector_t sector, unsigned int sectors, void *buf)
{
	tbio_init(tb, op, sector, sectors, buf);
	tb->bio.bi_flags = flags;
	tb->bio.bi_pid = getpid();
	submit_bio(tr->fd->q, &tb->bio);
}

static void read_comm(pid_t pid, char comm[16])
{
	char path[64];
	FILE *f;

	memset(comm, 0, 16);
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(comm, 16, f));
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
}

START_TEST(test_one_write_is_q_g_i_d_c)
{
	struct traced tr;
	struct test_bio tb;
	char comm[16];

	traced_start(&tr, "noop");
	tr.fd->clock.virtual_ns += 500;
	submit(&tr, &tb, REQ_OP_WRITE, 0, 100, 8, mem);
	tr.fd->clock.virtual_ns += 1000;
	fake_complete_all(tr.fd);
	traced_stop(&tr);

	for (unsigned int i = 0; i < tr.nr; i++) {
		ck_assert_uint_eq(tr.recs[i].t.magic, BLK_IO_TRACE_MAGIC | 7);
		ck_assert_uint_eq(tr.recs[i].t.device, TRACE_DEV);
		ck_assert_uint_eq(tr.recs[i].t.cpu, 0);
		ck_assert_uint_eq(tr.recs[i].t.pid, (uint32_t)getpid());
	}
	/* the name first, then the events in order */
	ck_assert_uint_eq(tr.nr, 6);
	ck_assert_uint_eq(tr.recs[0].t.action, BLK_TN_PROCESS);
	ck_assert_uint_eq(tr.recs[0].t.pdu_len, 16);
	read_comm(getpid(), comm);
	ck_assert_str_eq((char *)tr.recs[0].pdu, comm);
	ck_assert_str_eq(acts(&tr), "QGIDC");
	for (unsigned int i = 0; i < 5; i++) {
		ck_assert_uint_eq(ev(&tr, i)->sequence, i + 1);
		ck_range(ev(&tr, i), 100, 8);
		ck_assert_uint_eq(cats(ev(&tr, i)) & RW_CATS, BLK_TC_WRITE);
		ck_assert_uint_eq(ev(&tr, i)->error, 0);
		ck_assert_uint_eq(ev(&tr, i)->pdu_len, 0);
	}
	ck_assert_uint_eq(ev(&tr, 0)->action & BLK_TC_ACT(BLK_TC_QUEUE), BLK_TC_ACT(BLK_TC_QUEUE));
	ck_assert_uint_eq(ev(&tr, 3)->action & BLK_TC_ACT(BLK_TC_ISSUE), BLK_TC_ACT(BLK_TC_ISSUE));
	/* nanoseconds on the queue's clock since tracing started */
	ck_assert_uint_eq(ev(&tr, 0)->time, 500);
	ck_assert_uint_eq(ev(&tr, 4)->time, 1500);
	traced_free(&tr);
}
END_TEST

/* Each kind of I/O by the category bits of its queue record. */
START_TEST(test_categories_follow_op_and_flags)
{
	static const struct {
		enum req_op op;
		unsigned int flags;
		bool data;
		uint32_t cats;
	} kinds[] = {
		{ REQ_OP_READ, 0, true, BLK_TC_READ | BLK_TC_SYNC },
		{ REQ_OP_WRITE, REQ_SYNC, true, BLK_TC_WRITE | BLK_TC_SYNC },
		{ REQ_OP_WRITE, REQ_FUA, true, BLK_TC_WRITE | BLK_TC_FUA },
		{ REQ_OP_DISCARD, 0, false, BLK_TC_WRITE | BLK_TC_DISCARD },
		{ REQ_OP_WRITE_ZEROES, 0, false, BLK_TC_WRITE | BLK_TC_DISCARD },
		{ REQ_OP_FLUSH, REQ_SYNC, false, BLK_TC_WRITE | BLK_TC_FLUSH | BLK_TC_SYNC },
	};
	unsigned int nkinds = sizeof(kinds) / sizeof(kinds[0]);
	struct test_bio tb[sizeof(kinds) / sizeof(kinds[0])];
	struct traced tr;

	traced_start(&tr, "noop");
	for (unsigned int i = 0; i < nkinds; i++) {
		bool flush = kinds[i].op == REQ_OP_FLUSH;

		submit(&tr, &tb[i], kinds[i].op, kinds[i].flags, flush ? 0 : 64 * i,
		       flush ? 0 : 8, kinds[i].data ? mem : NULL);
		fake_complete_all(tr.fd);
	}
	traced_stop(&tr);
	ck_assert_str_eq(acts(&tr), "QGIDCQGIDCQGIDCQGIDCQGIDCQGIDC");
	for (unsigned int i = 0; i < nkinds; i++)
		for (unsigned int j = 0; j < 5; j++)
			ck_assert_msg((cats(ev(&tr, 5 * i + j)) & RW_CATS) == kinds[i].cats,
				      "kind %u event %u: categories %#x", i, j,
				      cats(ev(&tr, 5 * i + j)));
	traced_free(&tr);
}
END_TEST

/* A barrier write: its preflush first, then the write itself as FUA, each in its epoch. */
START_TEST(test_barrier_write_and_its_preflush)
{
	static const unsigned int preflush[] = { 1, 2, 4, 5 }, fua_write[] = { 3, 6, 7, 8 };
	struct traced tr;
	struct test_bio tb;

	traced_start(&tr, "noop");
	submit(&tr, &tb, REQ_OP_WRITE, REQ_BARRIER, 16, 8, mem);
	fake_complete_all(tr.fd); /* the preflush; the write goes in after it */
	fake_complete_all(tr.fd);
	traced_stop(&tr);
	/* the write's G comes as it is made; the queue runs once the bio is in */
	ck_assert_str_eq(acts(&tr), "QGIGDCIDC");
	ck_assert_uint_eq(cats(ev(&tr, 0)) & RW_CATS, BLK_TC_WRITE | BLK_TC_FLUSH);
	ck_range(ev(&tr, 0), 16, 8);
	for (unsigned int i = 0; i < 4; i++) {
		const struct blk_io_trace *flush = ev(&tr, preflush[i]);
		const struct blk_io_trace *write = ev(&tr, fua_write[i]);

		ck_assert_uint_eq(cats(flush) & RW_CATS, BLK_TC_WRITE | BLK_TC_FLUSH);
		ck_range(flush, 0, 0);
		ck_assert_uint_eq(flush->pid, (uint32_t)getpid());
		ck_assert_uint_eq(cats(write) & RW_CATS, BLK_TC_WRITE | BLK_TC_FLUSH | BLK_TC_FUA);
		ck_range(write, 16, 8);
	}
	traced_free(&tr);
}
END_TEST

START_TEST(test_back_and_front_merges)
{
	struct traced tr;
	struct test_bio tb[4];

	traced_start(&tr, "noop");
	tr.fd->stopped = true;
	submit(&tr, &tb[0], REQ_OP_WRITE, 0, 0, 8, mem);
	submit(&tr, &tb[1], REQ_OP_WRITE, 0, 8, 8, mem + 4096);
	fake_start(tr.fd);
	fake_complete_all(tr.fd);
	tr.fd->stopped = true;
	submit(&tr, &tb[2], REQ_OP_WRITE, 0, 108, 8, mem + 8192);
	submit(&tr, &tb[3], REQ_OP_WRITE, 0, 100, 8, mem);
	fake_start(tr.fd);
	fake_complete_all(tr.fd);
	traced_stop(&tr);
	ck_assert_str_eq(acts(&tr), "QGIQMDCQGIQFDC");
	ck_range(ev(&tr, 4), 8, 8);   /* M: the bio that joined */
	ck_range(ev(&tr, 5), 0, 16);  /* D and C: the request it made */
	ck_range(ev(&tr, 6), 0, 16);
	ck_range(ev(&tr, 11), 100, 8);
	ck_range(ev(&tr, 12), 100, 16);
	ck_range(ev(&tr, 13), 100, 16);
	traced_free(&tr);
}
END_TEST

/*
 * Discards merged up to the limit: no request's bytes overflow the
 * record's 32 bits (a 4 GiB request was traced as 0 bytes).
 */
START_TEST(test_merged_discards_keep_their_bytes)
{
	const unsigned int gib = 1u << 21; /* sectors */
	struct traced tr;
	struct test_bio tb[5];
	uint64_t issued = 0, completed = 0;

	traced_start(&tr, "deadline");
	tr.fd->stopped = true;
	for (unsigned int i = 0; i < 5; i++)
		submit(&tr, &tb[i], REQ_OP_DISCARD, 0, (sector_t)i * gib, gib, NULL);
	fake_start(tr.fd);
	fake_complete_all(tr.fd);
	traced_stop(&tr);
	for (unsigned int i = 0; i < tr.nr; i++) {
		const struct blk_io_trace *t = &tr.recs[i].t;
		unsigned int a = t->action & 0xffff;

		if (is_note(&tr.recs[i]) || (a != __BLK_TA_ISSUE && a != __BLK_TA_COMPLETE))
			continue;
		ck_assert_uint_ne(t->bytes, 0);
		ck_assert_uint_le(t->bytes >> SECTOR_SHIFT, BLK_MAX_DISCARD_SECTORS);
		*(a == __BLK_TA_ISSUE ? &issued : &completed) += t->bytes;
	}
	ck_assert_uint_eq(issued, 5ull << 30);
	ck_assert_uint_eq(completed, 5ull << 30);
	for (unsigned int i = 0; i < 5; i++)
		ck_assert_int_eq(tb[i].ended, 1);
	traced_free(&tr);
}
END_TEST

/* Each cut is an X of the part before it, its pdu where the rest starts (big-endian). */
START_TEST(test_split_records_each_cut)
{
	struct traced tr;
	struct test_bio tb;
	uint64_t at;

	traced_start(&tr, "noop");
	tr.fd->q->limits.max_sectors = 8;
	submit(&tr, &tb, REQ_OP_WRITE, 0, 0, 20, mem);
	fake_complete_all(tr.fd);
	traced_stop(&tr);
	ck_assert_str_eq(acts(&tr), "QXGIXGIGIDDDCCC");
	ck_range(ev(&tr, 0), 0, 20);
	ck_range(ev(&tr, 1), 0, 8);
	ck_range(ev(&tr, 4), 8, 8);
	ck_assert_uint_eq(ev(&tr, 1)->pdu_len, 8);
	memcpy(&at, ev_pdu(&tr, ev(&tr, 1)), 8);
	ck_assert_uint_eq(be64toh(at), 8);
	memcpy(&at, ev_pdu(&tr, ev(&tr, 4)), 8);
	ck_assert_uint_eq(be64toh(at), 16);
	ck_range(ev(&tr, 7), 16, 4);
	ck_range(ev(&tr, 14), 16, 4);
	traced_free(&tr);
}
END_TEST

/* Off (the default, as Linux's blk_cgroup option): no record names its cgroup. */
START_TEST(test_cgroup_id_only_when_asked)
{
	struct blkcg_table cgs = { 0 };
	struct traced tr;
	struct test_bio tb;

	traced_start(&tr, "noop");
	tbio_init(&tb, REQ_OP_WRITE, 0, 8, mem);
	tb.bio.bi_pid = getpid();
	tb.bio.bi_blkcg = blkcg_intern(&cgs, "/jobs/a", 4242);
	submit_bio(tr.fd->q, &tb.bio);
	fake_complete_all(tr.fd);
	traced_stop(&tr);
	ck_assert_str_eq(acts(&tr), "QGIDC");
	for (unsigned int i = 0; i < 5; i++) {
		ck_assert_uint_eq(ev(&tr, i)->action & __BLK_TA_CGROUP, 0);
		ck_assert_uint_eq(ev(&tr, i)->pdu_len, 0);
	}
	traced_free(&tr);
	blkcg_table_free(&cgs);
}
END_TEST

/* The cgroup id a record carries (before its own pdu), or 0 where it is not marked. */
static uint64_t rec_cgroup(const struct traced *tr, const struct blk_io_trace *t)
{
	uint64_t id;

	if (!(t->action & __BLK_TA_CGROUP))
		return 0;
	ck_assert_uint_ge(t->pdu_len, sizeof(id));
	memcpy(&id, ev_pdu(tr, t), sizeof(id));
	return id;
}

/*
 * Asked for (q->blk_trace_cgroup, trace/cgroup in the control tree), as
 * Linux's blktrace (4.14 on) with its blk_cgroup option: a record of a
 * bio or request from a cgroup is marked __BLK_TA_CGROUP with the kernel's cgroup id, in host
 * byte order, before its own pdu (a split's sector after it); the root's
 * and an unknown cgroup's records are not marked.  rqdisk-replay's reader
 * takes the same ids back off the file.
 */
START_TEST(test_cgroup_id_recorded_and_read_back)
{
	struct blkcg_table cgs = { 0 };
	const struct blkcg *cg = blkcg_intern(&cgs, "/jobs/a", 4242);
	struct traced tr;
	struct test_bio tb[2];
	struct bt_trace bt;
	char why[256];
	uint64_t at;

	ck_assert_ptr_nonnull(cg);
	traced_start(&tr, "noop");
	tr.fd->q->blk_trace_cgroup = true;
	tr.fd->q->limits.max_sectors = 8;
	tbio_init(&tb[0], REQ_OP_WRITE, 0, 12, mem);
	tb[0].bio.bi_pid = getpid();
	tb[0].bio.bi_blkcg = cg;
	submit_bio(tr.fd->q, &tb[0].bio);
	fake_complete_all(tr.fd);
	submit(&tr, &tb[1], REQ_OP_READ, 0, 1000, 8, mem); /* the root's */
	fake_complete_all(tr.fd);
	traced_stop(&tr);

	ck_assert_str_eq(acts(&tr), "QXGIGIDDCCQGIDC");
	for (unsigned int i = 0; i < 10; i++)
		ck_assert_uint_eq(rec_cgroup(&tr, ev(&tr, i)), 4242);
	ck_assert_uint_eq(ev(&tr, 0)->pdu_len, 8);
	ck_assert_uint_eq(ev(&tr, 1)->pdu_len, 16); /* the id, then where the rest starts */
	memcpy(&at, ev_pdu(&tr, ev(&tr, 1)) + 8, sizeof(at));
	ck_assert_uint_eq(be64toh(at), 8);
	for (unsigned int i = 10; i < 15; i++) {
		ck_assert_uint_eq(ev(&tr, i)->action & __BLK_TA_CGROUP, 0);
		ck_assert_uint_eq(ev(&tr, i)->pdu_len, 0);
	}

	ck_assert_msg(!bt_trace_load(tr.name, &bt, why, sizeof(why)), "%s", why);
	ck_assert_uint_eq(bt.nr, 16); /* the process note, then the 15 events */
	for (size_t i = 0, n = 0; i < bt.nr; i++) {
		if (bt.ev[i].action & BLK_TC_ACT(BLK_TC_NOTIFY))
			continue;
		ck_assert_uint_eq(bt.ev[i].cgroup_id, n++ < 10 ? 4242 : 0);
		ck_assert_uint_eq(bt.ev[i].action & __BLK_TA_CGROUP, 0);
		if (bt_act(&bt.ev[i]) == __BLK_TA_SPLIT)
			ck_assert_uint_eq(bt.ev[i].split_at, 8);
	}
	bt_trace_free(&bt);
	traced_free(&tr);
	blkcg_table_free(&cgs);
}
END_TEST

START_TEST(test_bounce_is_recorded)
{
	struct traced tr;
	struct test_bio tb;

	traced_start(&tr, "noop");
	submit(&tr, &tb, REQ_OP_WRITE, 0, 32, 8, mem + 1);
	fake_complete_all(tr.fd);
	traced_stop(&tr);
	ck_assert_str_eq(acts(&tr), "QBGIDC");
	ck_range(ev(&tr, 1), 32, 8);
	traced_free(&tr);
}
END_TEST

/*
 * A request ended in part, requeued and issued again: R and the second D
 * where it is then, the C over the whole range first issued, with the error.
 */
START_TEST(test_completion_covers_the_issued_range)
{
	struct traced tr;
	struct test_bio tb;
	struct request *rq;

	traced_start(&tr, "noop");
	submit(&tr, &tb, REQ_OP_WRITE, 0, 40, 16, mem);
	rq = fake_nth(tr.fd, 0);
	fake_complete(tr.fd, rq, 0, 4);
	TAILQ_REMOVE(&tr.fd->dispatched, rq, queuelist);
	tr.fd->nr_dispatched--;
	blk_queue_lock(tr.fd->q);
	blk_requeue_request(tr.fd->q, rq);
	blk_queue_unlock(tr.fd->q);
	fake_start(tr.fd);
	fake_complete(tr.fd, fake_nth(tr.fd, 0), -EIO, 12);
	traced_stop(&tr);
	ck_assert_str_eq(acts(&tr), "QGIDRDC");
	ck_range(ev(&tr, 3), 40, 16);
	ck_range(ev(&tr, 4), 44, 12);
	ck_range(ev(&tr, 5), 44, 12);
	ck_range(ev(&tr, 6), 40, 16);
	ck_assert_uint_eq(ev(&tr, 6)->error, (uint16_t)-EIO);
	ck_assert_int_eq(tb.error, -EIO);
	traced_free(&tr);
}
END_TEST

/* One name per pid, before its first record; "unknown" for a pid that is gone. */
START_TEST(test_process_names_once_per_pid)
{
	const pid_t gone = INT_MAX;
	struct traced tr;
	struct test_bio tb[3];
	char comm[16];
	unsigned int notes = 0;

	traced_start(&tr, "noop");
	submit(&tr, &tb[0], REQ_OP_WRITE, 0, 0, 8, mem);
	tbio_init(&tb[1], REQ_OP_WRITE, 64, 8, mem);
	tb[1].bio.bi_pid = gone;
	submit_bio(tr.fd->q, &tb[1].bio);
	submit(&tr, &tb[2], REQ_OP_WRITE, 0, 128, 8, mem);
	fake_complete_all(tr.fd);
	traced_stop(&tr);

	read_comm(getpid(), comm);
	for (unsigned int i = 0; i < tr.nr; i++) {
		const struct blk_io_trace *t = &tr.recs[i].t;
		bool first = true;

		for (unsigned int j = 0; j < i; j++)
			first &= tr.recs[j].t.pid != t->pid;
		if (is_note(&tr.recs[i])) {
			notes++;
			ck_assert_msg(first, "a second name for pid %u", t->pid);
			ck_assert_uint_eq(t->sequence, 0);
			ck_assert_str_eq((char *)tr.recs[i].pdu,
					 t->pid == (uint32_t)gone ? "unknown" : comm);
		} else {
			ck_assert_msg(!first, "pid %u has a record before its name", t->pid);
		}
	}
	ck_assert_uint_eq(notes, 2);
	traced_free(&tr);
}
END_TEST

START_TEST(test_setup_refusals)
{
	struct traced tr;
	char why[256];
	int ret;

	traced_start(&tr, "noop");
	ck_assert_int_eq(blk_trace_setup(tr.fd->q, tr.name, why, sizeof(why)), -EBUSY);
	traced_stop(&tr);
	ck_assert_int_eq(blk_trace_remove(tr.fd->q), 0); /* nothing to stop */
	ret = blk_trace_setup(tr.fd->q, "/nonexistent-dir/t", why, sizeof(why));
	ck_assert_int_eq(ret, -ENOENT);
	ck_assert_ptr_nonnull(strstr(why, "/nonexistent-dir/t.blktrace.0"));
	ck_assert_ptr_null(strchr(why, '\n'));
	ck_assert_ptr_null(tr.fd->q->blk_trace);
	traced_free(&tr);
}
END_TEST

/*
 * Stopped: no more records.  Started again under the same name, the file
 * this queue made is truncated and the trace starts anew, naming the
 * processes again, as blktrace writes its files anew at each run.  The
 * name given a second link, or replaced by another file, is refused and
 * the file kept: a restart writes only over the trace it stopped; and
 * not once trace/name has been written since.
 */
START_TEST(test_restart_truncates_its_own_trace_only)
{
	char why[256], other[160];
	struct traced tr;
	struct test_bio tb;
	struct stat st;
	FILE *f;

	traced_start(&tr, "noop");
	submit(&tr, &tb, REQ_OP_WRITE, 0, 0, 8, mem);
	fake_complete_all(tr.fd);
	traced_stop(&tr);
	ck_assert_uint_eq(tr.nr, 6);
	submit(&tr, &tb, REQ_OP_WRITE, 0, 8, 8, mem);
	fake_complete_all(tr.fd);
	ck_assert_uint_eq(read_recs(tr.path, tr.recs), 6);

	ck_assert_int_eq(blk_trace_setup(tr.fd->q, tr.name, why, sizeof(why)), 0);
	ck_assert_int_eq(stat(tr.path, &st), 0);
	ck_assert_int_eq(st.st_size, 0);
	submit(&tr, &tb, REQ_OP_READ, 0, 16, 8, mem);
	fake_complete_all(tr.fd);
	traced_stop(&tr);
	ck_assert_uint_eq(tr.nr, 6);
	ck_assert_uint_eq(tr.recs[0].t.action, BLK_TN_PROCESS);
	ck_assert_uint_eq(ev(&tr, 0)->sequence, 1);
	ck_range(ev(&tr, 0), 16, 8);

	/* a second link: the trace would be written (and read) through it */
	snprintf(other, sizeof(other), "%s.link", tr.path);
	ck_assert_int_eq(link(tr.path, other), 0);
	ck_assert_int_eq(blk_trace_setup(tr.fd->q, tr.name, why, sizeof(why)), -EEXIST);
	ck_assert_msg(strstr(why, ".blktrace.0: it exists: name a new trace"), "%s", why);
	ck_assert_uint_eq(read_recs(tr.path, tr.recs), 6);
	ck_assert_int_eq(unlink(other), 0);

	/* another file in its place (made before the old one goes: not its inode) */
	snprintf(other, sizeof(other), "%s.new", tr.path);
	f = fopen(other, "w");
	ck_assert_ptr_nonnull(f);
	fputs("another's", f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(rename(other, tr.path), 0);
	ck_assert_int_eq(blk_trace_setup(tr.fd->q, tr.name, why, sizeof(why)), -EEXIST);
	ck_assert_msg(strstr(why, ".blktrace.0: it exists: name a new trace"), "%s", why);
	ck_assert_ptr_null(tr.fd->q->blk_trace);
	ck_assert_int_eq(stat(tr.path, &st), 0);
	ck_assert_int_eq(st.st_size, 9);

	/* once it is gone, a new one from scratch */
	unlink(tr.path);
	ck_assert_int_eq(blk_trace_setup(tr.fd->q, tr.name, why, sizeof(why)), 0);
	traced_stop(&tr);
	ck_assert_uint_eq(tr.nr, 0);
	/* a name written (trace/name) lets the stopped trace go: no restart of it */
	ck_assert_int_eq(blk_trace_set_name(tr.fd->q, tr.name), 0);
	ck_assert_int_eq(blk_trace_setup(tr.fd->q, tr.name, why, sizeof(why)), -EEXIST);
	traced_free(&tr);
}
END_TEST

/*
 * A file that cannot take the records (no more than 64 bytes, by
 * RLIMIT_FSIZE): stopping says so, whether the buffer filled while
 * tracing (300 writes make 1500 records, past 64 KiB) or only its last
 * flush failed.
 */
START_TEST(test_remove_reports_a_write_error)
{
	struct rlimit small = { 64, 64 }, old;
	struct traced tr;
	struct test_bio tb;
	unsigned int nr_writes = _i ? 300 : 1;
	int ret;

	traced_start(&tr, "noop");
	ck_assert_int_eq(blk_trace_remove(tr.fd->q), 0);
	unlink(tr.path);
	ck_assert_int_eq(blk_trace_setup(tr.fd->q, tr.name, NULL, 0), 0);
	signal(SIGXFSZ, SIG_IGN); /* a write past the limit fails with EFBIG instead */
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
	for (unsigned int i = 0; i < nr_writes; i++) {
		submit(&tr, &tb, REQ_OP_WRITE, 0, 8 * i, 8, mem);
		fake_complete_all(tr.fd);
	}
	ret = blk_trace_remove(tr.fd->q);
	small.rlim_cur = old.rlim_cur; /* the hard limit stays: only root may raise it */
	setrlimit(RLIMIT_FSIZE, &small);
	ck_assert_int_eq(ret, -EFBIG);
	traced_free(&tr);
}
END_TEST

/*
 * A trace is made new: a file that is there (another user's, made to read
 * the daemon's I/O) and a symlink (to have it write over what it names)
 * are refused in one line, and neither is touched.
 */
START_TEST(test_a_trace_is_made_new_or_refused)
{
	struct traced tr;
	char why[256], target[PATH_MAX + 8];
	struct stat st;

	traced_start(&tr, "noop");
	ck_assert_int_eq(blk_trace_remove(tr.fd->q), 0);
	unlink(tr.path);
	snprintf(target, sizeof(target), "%s.target", tr.path);
	ck_assert_int_eq(symlink(target, tr.path), 0); /* dangling: O_CREAT would make target */
	ck_assert_int_eq(blk_trace_setup(tr.fd->q, tr.name, why, sizeof(why)), -ELOOP);
	ck_assert_msg(strstr(why, ".blktrace.0: a symbolic link: name a new trace"), "%s", why);
	ck_assert_int_ne(stat(target, &st), 0);
	unlink(tr.path);
	ck_assert_int_eq(mknod(tr.path, S_IFREG | 0666, 0), 0);
	ck_assert_int_eq(blk_trace_setup(tr.fd->q, tr.name, why, sizeof(why)), -EEXIST);
	ck_assert_msg(strstr(why, ".blktrace.0: it exists: name a new trace"), "%s", why);
	ck_assert_ptr_null(tr.fd->q->blk_trace);
	ck_assert_int_eq(stat(tr.path, &st), 0);
	ck_assert_int_eq(st.st_size, 0);
	traced_free(&tr);
}
END_TEST

/* ---- a multi-queue queue: a file and a sequence per hardware queue, its number as cpu ---- */

struct mq_traced {
	struct fake_mq *fm;
	char dir[64];
	char name[96];
	struct traced files[2]; /* recs and nr of NAME.blktrace.0 and .1 */
};

static void mq_path(const struct mq_traced *mt, unsigned int cpu, char *path, size_t len)
{
	snprintf(path, len, "%s.blktrace.%u", mt->name, cpu);
}

/* Two hardware queues, CPU n's software queue on hardware queue n, traced into NAME. */
static void mq_traced_start(struct mq_traced *mt, const char *elevator, bool run_async)
{
	struct fake_mq_opts o = { .elevator = elevator, .nr_hw_queues = 2, .queue_depth = 4,
				  .nr_cpus = 2, .run_async = run_async };
	char why[256];

	memset(mt, 0, sizeof(*mt));
	mt->fm = fake_mq_new(&o);
	strcpy(mt->dir, "/tmp/check_blktrace.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(mt->dir));
	snprintf(mt->name, sizeof(mt->name), "%s/t", mt->dir);
	ck_assert_int_eq(blk_trace_setup(mt->fm->q, mt->name, why, sizeof(why)), 0);
}

/* Stopped: each file read back; every record in file N says cpu N, its sequence runs 1, 2, ... */
static void mq_traced_stop(struct mq_traced *mt)
{
	char path[160];

	ck_assert_int_eq(blk_trace_remove(mt->fm->q), 0);
	for (unsigned int cpu = 0; cpu < 2; cpu++) {
		struct traced *f = &mt->files[cpu];
		uint32_t seq = 0;

		mq_path(mt, cpu, path, sizeof(path));
		f->nr = read_recs(path, f->recs);
		for (unsigned int i = 0; i < f->nr; i++) {
			ck_assert_uint_eq(f->recs[i].t.cpu, cpu);
			if (!is_note(&f->recs[i]))
				ck_assert_uint_eq(f->recs[i].t.sequence, ++seq);
		}
	}
	mq_path(mt, 2, path, sizeof(path));
	ck_assert_int_ne(access(path, F_OK), 0); /* a file per hardware queue, no more */
}

static void mq_traced_free(struct mq_traced *mt)
{
	char path[160];

	fake_mq_free(mt->fm);
	for (unsigned int cpu = 0; cpu < 2; cpu++) {
		mq_path(mt, cpu, path, sizeof(path));
		unlink(path);
	}
	rmdir(mt->dir);
}

static void mq_submit(struct mq_traced *mt, struct test_bio *tb, sector_t sector, unsigned int cpu)
{
	tbio_init(tb, REQ_OP_WRITE, sector, 8, mem);
	tb->bio.bi_pid = getpid();
	fake_mq_submit(mt->fm, &tb->bio, cpu);
}

/* The events of file cpu at sector, as letters: "QGIDC". */
static const char *mq_acts_at(const struct mq_traced *mt, unsigned int cpu, sector_t sector)
{
	static struct traced sub;
	const struct traced *f = &mt->files[cpu];

	sub.nr = 0;
	for (unsigned int i = 0; i < f->nr; i++)
		if (!is_note(&f->recs[i]) && f->recs[i].t.sector == sector)
			sub.recs[sub.nr++] = f->recs[i];
	return acts(&sub);
}

/* The D records of file cpu. */
static unsigned int mq_issues(const struct mq_traced *mt, unsigned int cpu)
{
	const struct traced *f = &mt->files[cpu];
	unsigned int n = 0;

	for (unsigned int i = 0; i < f->nr; i++)
		n += !is_note(&f->recs[i]) && (f->recs[i].t.action & 0xffff) == __BLK_TA_ISSUE;
	return n;
}

/*
 * Without an elevator a request stays on its submitter's hardware queue:
 * a write from CPU 0 is all in file 0 with cpu 0, one from CPU 1 all in
 * file 1, each file's sequence its own; the process is named once, in the
 * file of its first record, before it.
 */
START_TEST(test_mq_records_name_the_hardware_queue)
{
	struct mq_traced mt;
	struct test_bio tb[2];

	mq_traced_start(&mt, NULL, false);
	mq_submit(&mt, &tb[0], 0, 0);
	mq_submit(&mt, &tb[1], 1000, 1);
	fake_mq_drain(mt.fm);
	ck_assert_int_eq(tb[0].ended + tb[1].ended, 2);
	mq_traced_stop(&mt);
	ck_assert_str_eq(mq_acts_at(&mt, 0, 0), "QGIDC");
	ck_assert_str_eq(mq_acts_at(&mt, 1, 1000), "QGIDC");
	ck_assert_str_eq(acts(&mt.files[0]), "QGIDC");
	ck_assert_str_eq(acts(&mt.files[1]), "QGIDC");
	ck_assert_uint_eq(mt.files[0].recs[0].t.action, BLK_TN_PROCESS);
	ck_assert_uint_eq(mt.files[0].nr, 6);
	ck_assert_uint_eq(mt.files[1].nr, 5);
	for (unsigned int cpu = 0; cpu < 2; cpu++)
		ck_assert_uint_eq(mq_issues(&mt, cpu), mt.fm->q->mq->hctxs[cpu].dispatched);
	mq_traced_free(&mt);
}
END_TEST

/*
 * Under an elevator (one for every hardware queue) the hardware queue
 * that takes a request dispatches it: queued from CPU 1, taken by
 * hardware queue 0, its Q, G and I say cpu 1 and its D and C cpu 0; the D
 * records of each file are what mq/N/dispatched counts.
 */
START_TEST(test_mq_dispatch_names_the_dispatching_queue)
{
	struct mq_traced mt;
	struct test_bio tb[2];

	mq_traced_start(&mt, "noop", true);
	mq_submit(&mt, &tb[0], 0, 1);
	mq_submit(&mt, &tb[1], 1000, 1);
	blk_mq_run_hw_queue(&mt.fm->q->mq->hctxs[0]); /* before hardware queue 1's thread */
	ck_assert_uint_eq(mt.fm->hw[0].nr_out, 2);
	fake_mq_drain(mt.fm);
	mq_traced_stop(&mt);
	ck_assert_str_eq(mq_acts_at(&mt, 1, 0), "QGI");
	ck_assert_str_eq(mq_acts_at(&mt, 1, 1000), "QGI");
	ck_assert_str_eq(mq_acts_at(&mt, 0, 0), "DC");
	ck_assert_str_eq(mq_acts_at(&mt, 0, 1000), "DC");
	ck_assert_uint_eq(mq_issues(&mt, 0), 2);
	ck_assert_uint_eq(mt.fm->q->mq->hctxs[0].dispatched, 2);
	ck_assert_uint_eq(mq_issues(&mt, 1), mt.fm->q->mq->hctxs[1].dispatched);
	mq_traced_free(&mt);
}
END_TEST

/*
 * A restart takes every file of the stopped trace again or none: with
 * NAME.blktrace.1 replaced by another file it is refused (EEXIST, naming
 * that file), and NAME.blktrace.0 is left whole, not truncated.
 */
START_TEST(test_mq_restart_takes_every_file_or_none)
{
	char why[256], path[160], other[160];
	struct mq_traced mt;
	struct test_bio tb[2];
	struct stat st;
	FILE *f;

	mq_traced_start(&mt, NULL, false);
	mq_submit(&mt, &tb[0], 0, 0);
	fake_mq_drain(mt.fm);
	mq_traced_stop(&mt);
	ck_assert_uint_gt(mt.files[0].nr, 0);

	ck_assert_int_eq(blk_trace_setup(mt.fm->q, mt.name, why, sizeof(why)), 0);
	ck_assert_int_eq(blk_trace_remove(mt.fm->q), 0);
	mq_path(&mt, 0, path, sizeof(path));
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, 0); /* restarted: truncated */

	mq_submit(&mt, &tb[0], 0, 0);
	ck_assert_int_eq(blk_trace_setup(mt.fm->q, mt.name, why, sizeof(why)), 0);
	mq_submit(&mt, &tb[1], 8, 0);
	fake_mq_drain(mt.fm);
	ck_assert_int_eq(blk_trace_remove(mt.fm->q), 0);
	snprintf(other, sizeof(other), "%s/other", mt.dir);
	f = fopen(other, "w");
	ck_assert_ptr_nonnull(f);
	fputs("another's", f);
	fclose(f);
	mq_path(&mt, 1, path, sizeof(path));
	ck_assert_int_eq(rename(other, path), 0);
	ck_assert_int_eq(blk_trace_setup(mt.fm->q, mt.name, why, sizeof(why)), -EEXIST);
	ck_assert_msg(strstr(why, ".blktrace.1: it exists: name a new trace"), "%s", why);
	ck_assert_ptr_null(mt.fm->q->blk_trace);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, strlen("another's"));
	mq_path(&mt, 0, path, sizeof(path));
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_gt(st.st_size, 0); /* the stopped trace kept whole */
	mq_traced_free(&mt);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("blktrace");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_one_write_is_q_g_i_d_c);
	tcase_add_test(tc, test_categories_follow_op_and_flags);
	tcase_add_test(tc, test_barrier_write_and_its_preflush);
	tcase_add_test(tc, test_back_and_front_merges);
	tcase_add_test(tc, test_split_records_each_cut);
	tcase_add_test(tc, test_cgroup_id_recorded_and_read_back);
	tcase_add_test(tc, test_cgroup_id_only_when_asked);
	tcase_add_test(tc, test_merged_discards_keep_their_bytes);
	tcase_add_test(tc, test_bounce_is_recorded);
	tcase_add_test(tc, test_completion_covers_the_issued_range);
	tcase_add_test(tc, test_process_names_once_per_pid);
	tcase_add_test(tc, test_setup_refusals);
	tcase_add_test(tc, test_restart_truncates_its_own_trace_only);
	tcase_add_test(tc, test_a_trace_is_made_new_or_refused);
	tcase_add_loop_test(tc, test_remove_reports_a_write_error, 0, 2);
	tcase_add_test(tc, test_mq_records_name_the_hardware_queue);
	tcase_add_test(tc, test_mq_dispatch_names_the_dispatching_queue);
	tcase_add_test(tc, test_mq_restart_takes_every_file_or_none);
	suite_add_tcase(s, tc);
	return fake_run_suite(s);
}
