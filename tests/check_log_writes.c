/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_log_writes.c - the log-writes filter over a backend the test ends by
 * hand, in the order it chooses: the log has the order of completion with
 * each FLUSH entry after exactly what its flush covers (c,a,FLUSH,b,FUA d
 * for Wa,Wb,Wc,Cc,Ca,FLUSH,FUAd,Cb,CFLUSH,CFUAd), so that it replays to
 * the image; each write's bytes, discards and zeroes, marks and the end
 * mark, the gaps logging off leaves, what a request ended in parts or with
 * an error puts there, and the files it makes new or refuses.
 */
#include <check.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device.h"
#include "log_writes.h"
#include "stack_harness.h"

#define MAX_RQ 32
#define BUF_SECTORS 64

/* ------------------------------------------------------------ the harness */

/* A stack over the hand backend, its requests' bios, and the log in a directory of its own. */
struct rig {
	struct stack_harness h;
	char dir[64], log[96];
};

static void rig_open_specs(struct rig *r, const char *const *specs, unsigned int nr)
{
	sh_setup(&r->h, specs, nr, &sh_hand_ops, 1 << 21, MAX_RQ);
	ck_assert_int_ge(r->h.watched_fd, 0);
}

static void rig_open_spec(struct rig *r, const char *spec)
{
	rig_open_specs(r, &spec, 1);
}

/* A rig whose log is in a new directory; a spec of log-writes there, with extra. */
static struct rig *rig_new(char *spec, size_t len, const char *extra)
{
	struct rig *r = calloc(1, sizeof(*r));

	ck_assert_ptr_nonnull(r);
	strcpy(r->dir, "/tmp/check_log_writes.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(r->dir));
	snprintf(r->log, sizeof(r->log), "%s/log", r->dir);
	snprintf(spec, len, "log-writes:file=%s%s", r->log, extra);
	return r;
}

static struct rig *rig_open(const char *extra)
{
	char spec[256];
	struct rig *r = rig_new(spec, sizeof(spec), extra);

	rig_open_spec(r, spec);
	return r;
}

/* Close the stack (the log is complete then) and keep the log to read. */
static void rig_close(struct rig *r)
{
	for (unsigned int i = 0; i < r->h.nr_bios; i++)
		ck_assert_msg(r->h.ended_at[i], "request %u never ended", i);
	sh_close(&r->h);
	ck_assert_int_eq(r->h.watched_fd, -1);
}

static void rig_free(struct rig *r)
{
	unlink(r->log);
	rmdir(r->dir);
	sh_free(&r->h);
	free(r);
}

/*
 * A request straight to the stack, as the host dispatches one: the queue's
 * barriers would not let a flush go down while writes before it are below,
 * and the filter must keep dm-log-writes' order whatever comes to it.
 * Each sector's bytes are its request's letter and its index.
 */
static unsigned int issue(struct rig *r, enum req_op op, unsigned int flags, sector_t sector,
			  unsigned int nr_sectors, char fill)
{
	unsigned int i = sh_bio(&r->h, op, flags, sector, nr_sectors, fill);

	ck_assert_uint_le(nr_sectors, BUF_SECTORS);
	for (unsigned int s = 0; s < nr_sectors; s++)
		r->h.buf[i][s * SECTOR_SIZE] = (unsigned char)s;
	sh_issue(&r->h, i);
	ck_assert_uint_eq(sh_hand.nr - 1, i);
	ck_assert_ptr_eq(sh_hand.below[i]->bio, &r->h.bio[i]);
	return i;
}

/* End n sectors of the k-th request that went below. */
static void complete(struct rig *r, unsigned int k, int error, unsigned int n)
{
	sh_hand_end(&r->h, k, error, n);
}

static void complete_all(struct rig *r, unsigned int k)
{
	complete(r, k, 0, blk_rq_sectors(sh_hand.below[k]));
}

/* ------------------------------------------------------------ the log read */

struct entry {
	uint64_t sector, nr, flags, data_len;
	char name[512];
	unsigned char *data; /* nr sectors, or NULL */
};

struct log {
	uint64_t nr_entries;
	uint32_t ss;
	struct entry e[64];
	unsigned int nr;
};

static void log_read(const char *path, struct log *l)
{
	struct log_write_super sb;
	struct log_write_entry le;
	int fd = open(path, O_RDONLY);
	off_t off;

	memset(l, 0, sizeof(*l));
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &sb, sizeof(sb), 0), sizeof(sb));
	ck_assert_uint_eq(le64toh(sb.magic), LOG_WRITES_MAGIC);
	ck_assert_uint_eq(le64toh(sb.version), 1);
	l->nr_entries = le64toh(sb.nr_entries);
	l->ss = le32toh(sb.sectorsize);
	ck_assert_uint_eq(l->ss, 512);
	off = l->ss;
	for (uint64_t i = 0; i < l->nr_entries; i++) {
		struct entry *e = &l->e[l->nr++];

		ck_assert_uint_lt(l->nr, 64);
		ck_assert_int_eq(pread(fd, &le, sizeof(le), off), sizeof(le));
		e->sector = le64toh(le.sector);
		e->nr = le64toh(le.nr_sectors);
		e->flags = le64toh(le.flags);
		e->data_len = le64toh(le.data_len);
		if (e->flags & LOG_MARK_FLAG) {
			ck_assert_uint_lt(e->data_len, l->ss - sizeof(le));
			ck_assert_int_eq(pread(fd, e->name, e->data_len, off + (off_t)sizeof(le)),
					 (ssize_t)e->data_len);
		} else {
			ck_assert_uint_eq(e->data_len, 0); /* as dm-log-writes: data is blocks */
		}
		off += l->ss;
		if (!(e->flags & LOG_DISCARD_FLAG) && e->nr) {
			e->data = malloc(e->nr * l->ss);
			ck_assert_int_eq(pread(fd, e->data, e->nr * l->ss, off),
					 (ssize_t)(e->nr * l->ss));
			off += (off_t)(e->nr * l->ss);
		}
	}
	close(fd);
}

/* nr_entries as the super block has it now, or -1 before it is there. */
static int64_t super_entries(const char *path)
{
	struct log_write_super sb;
	int fd = open(path, O_RDONLY);
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	n = pread(fd, &sb, sizeof(sb), 0);
	close(fd);
	return n == sizeof(sb) ? (int64_t)le64toh(sb.nr_entries) : -1;
}

/* rqdisk's record in the log's super block as it is now; false when it has none. */
static bool super_rqdisk(const char *path, struct log_write_super_rqdisk *rec)
{
	unsigned char blk[512];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	n = pread(fd, blk, sizeof(blk), 0);
	close(fd);
	ck_assert_int_eq(n, sizeof(blk));
	return log_write_super_rqdisk_decode(blk, rec);
}

/* The log applied in order to img (sectors of 512 bytes), as replay-log applies it. */
static void log_replay(const struct log *l, unsigned char *img, size_t sectors)
{
	for (unsigned int i = 0; i < l->nr; i++) {
		const struct entry *e = &l->e[i];

		if (e->flags & (LOG_MARK_FLAG | LOG_FLUSH_FLAG) || !e->nr)
			continue;
		ck_assert_uint_le(e->sector + e->nr, sectors);
		if (e->data)
			memcpy(img + e->sector * SECTOR_SIZE, e->data, e->nr * SECTOR_SIZE);
		else
			memset(img + e->sector * SECTOR_SIZE, 0, e->nr * SECTOR_SIZE);
	}
}

static void log_free(struct log *l)
{
	for (unsigned int i = 0; i < l->nr; i++)
		free(l->e[i].data);
}

/* Entry i is a write of request k's sectors from..from+nr-1, bytes and all. */
static void assert_write(struct log *l, unsigned int i, struct rig *r, unsigned int k,
			 uint64_t flags, unsigned int from, unsigned int nr)
{
	struct entry *e = &l->e[i];

	ck_assert_uint_lt(i, l->nr);
	ck_assert_msg(e->flags == flags, "entry %u: flags %llu, not %llu", i,
		      (unsigned long long)e->flags, (unsigned long long)flags);
	ck_assert_uint_eq(e->sector, r->h.bio[k].bi_sector + from);
	ck_assert_uint_eq(e->nr, nr);
	ck_assert_ptr_nonnull(e->data);
	ck_assert_msg(!memcmp(e->data, r->h.buf[k] + from * SECTOR_SIZE, nr * SECTOR_SIZE),
		      "entry %u: the data is not request %u's", i, k);
}

static void assert_flag(struct log *l, unsigned int i, uint64_t flags)
{
	ck_assert_uint_lt(i, l->nr);
	ck_assert_msg(l->e[i].flags == flags, "entry %u: flags %llu, not %llu", i,
		      (unsigned long long)l->e[i].flags, (unsigned long long)flags);
}

static void assert_mark(struct log *l, unsigned int i, const char *name)
{
	assert_flag(l, i, LOG_MARK_FLAG);
	ck_assert_str_eq(l->e[i].name, name);
	ck_assert_uint_eq(l->e[i].nr, 0);
}

static int store(struct rig *r, const char *name, const char *val)
{
	return sh_store(&r->h, r->h.stack.top, name, val);
}

static void show(struct rig *r, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s", sh_show(&r->h, r->h.stack.top, name));
}

/* ------------------------------------------------------------------ tests */

/*
 * dm-log-writes' own example, Wa,Wb,Wc,Cc,Ca,FLUSH,FUAd,Cb,CFLUSH,CFUAd:
 * c and a as they complete, the FLUSH entry, then b, which completed while
 * the flush was below (the flush does not cover it), then d.
 */
START_TEST(completion_order_with_each_flush_in_place)
{
	struct rig *r = rig_open("");
	unsigned int a, b, c, flush, d;
	struct log l;

	a = issue(r, REQ_OP_WRITE, 0, 0, 8, 'a');
	b = issue(r, REQ_OP_WRITE, 0, 100, 4, 'b');
	c = issue(r, REQ_OP_WRITE, 0, 200, 16, 'c');
	complete_all(r, c);
	complete_all(r, a);
	flush = issue(r, REQ_OP_FLUSH, 0, 0, 0, 0);
	d = issue(r, REQ_OP_WRITE, REQ_FUA, 300, 2, 'd');
	complete_all(r, b);
	complete(r, flush, 0, 0);
	complete_all(r, d);
	rig_close(r);

	log_read(r->log, &l);
	ck_assert_uint_eq(l.nr_entries, 6);
	assert_write(&l, 0, r, c, 0, 0, 16);
	assert_write(&l, 1, r, a, 0, 0, 8);
	assert_flag(&l, 2, LOG_FLUSH_FLAG);
	ck_assert_uint_eq(l.e[2].nr, 0);
	assert_write(&l, 3, r, b, 0, 0, 4); /* completed after the flush was issued: not its */
	assert_write(&l, 4, r, d, LOG_FUA_FLAG, 0, 2);
	assert_mark(&l, 5, LOG_WRITES_END_MARK);
	log_free(&l);
	rig_free(r);
}
END_TEST

/*
 * A FUA write over an older write that no flush covered yet comes after
 * it, with no FLUSH between (the older stays volatile): the log replays to
 * the FUA write's data.  The same when both complete while a flush is
 * below: they follow its FLUSH entry, in their order.
 */
START_TEST(fua_over_an_unflushed_write_replays_to_the_fua_data)
{
	unsigned char img[64 * SECTOR_SIZE];

	for (int in_flush = 0; in_flush <= 1; in_flush++) {
		struct rig *r = rig_open("");
		unsigned int a, d, f0 = 0, flush;
		struct log l;
		int i = 0;

		if (in_flush)
			f0 = issue(r, REQ_OP_FLUSH, REQ_PREFLUSH, 0, 0, 0);
		a = issue(r, REQ_OP_WRITE, 0, 0, 8, 'a');
		d = issue(r, REQ_OP_WRITE, REQ_FUA, 0, 8, 'd');
		complete_all(r, a);
		complete_all(r, d);
		if (in_flush)
			complete(r, f0, 0, 0);
		flush = issue(r, REQ_OP_FLUSH, REQ_PREFLUSH, 0, 0, 0); /* as the core makes one */
		complete(r, flush, 0, 0);
		rig_close(r);

		log_read(r->log, &l);
		ck_assert_uint_eq(l.nr_entries, 4 + in_flush);
		if (in_flush)
			assert_flag(&l, i++, LOG_FLUSH_FLAG);
		assert_write(&l, i++, r, a, 0, 0, 8);
		assert_write(&l, i++, r, d, LOG_FUA_FLAG, 0, 8);
		assert_flag(&l, i++, LOG_FLUSH_FLAG);
		assert_mark(&l, i, LOG_WRITES_END_MARK);
		memset(img, 0, sizeof(img));
		log_replay(&l, img, 64);
		ck_assert_msg(!memcmp(img, r->h.buf[d], 8 * SECTOR_SIZE),
			      "the log replays to the older write's data (flush below: %d)", in_flush);
		log_free(&l);
		rig_free(r);
	}
}
END_TEST

/*
 * Two flushes below, the later ending first: each FLUSH entry comes after
 * the writes that completed before its flush was issued, and before those
 * after.  w1 (after f1, before f2) goes ahead of f2's FLUSH; w2 (after f2)
 * waits for f1 too, which was issued before it completed.
 */
START_TEST(held_writes_follow_the_flushes_issued_before_them)
{
	struct rig *r = rig_open("");
	unsigned int f1, f2, w1, w2;
	struct log l;
	char stats[512];

	f1 = issue(r, REQ_OP_FLUSH, 0, 0, 0, 0);
	w1 = issue(r, REQ_OP_WRITE, 0, 0, 8, '1');
	complete_all(r, w1);
	f2 = issue(r, REQ_OP_FLUSH, 0, 0, 0, 0);
	w2 = issue(r, REQ_OP_WRITE, 0, 64, 4, '2');
	complete_all(r, w2);
	show(r, "stats", stats, sizeof(stats));
	ck_assert_msg(strstr(stats, "held_bytes 7168\n"), "%s", stats); /* 2 entries, 12 sectors */
	complete(r, f2, 0, 0);
	complete(r, f1, 0, 0);
	show(r, "stats", stats, sizeof(stats));
	ck_assert_msg(strstr(stats, "held_bytes 0\n"), "%s", stats);
	rig_close(r);

	log_read(r->log, &l);
	ck_assert_uint_eq(l.nr_entries, 5);
	assert_write(&l, 0, r, w1, 0, 0, 8);
	assert_flag(&l, 1, LOG_FLUSH_FLAG);
	assert_flag(&l, 2, LOG_FLUSH_FLAG);
	assert_write(&l, 3, r, w2, 0, 0, 4);
	assert_mark(&l, 4, LOG_WRITES_END_MARK);
	log_free(&l);
	rig_free(r);
}
END_TEST

/*
 * A failed flush makes nothing durable, and may have lost what it covered
 * (an NBD server that lost its cache as its connection dropped fails the
 * flushes after): no FLUSH entry, and a mark after the writes it covered,
 * so that the next flush's FLUSH entry does not call them durable unsaid.
 * b completed while the failed flush was below: after the mark.
 */
START_TEST(failed_flush_marks_what_it_covered_as_maybe_lost)
{
	struct rig *r = rig_open("");
	unsigned int a, b, f1, f2;
	struct log l;

	a = issue(r, REQ_OP_WRITE, 0, 0, 8, 'a');
	complete_all(r, a);
	f1 = issue(r, REQ_OP_FLUSH, 0, 0, 0, 0);
	b = issue(r, REQ_OP_WRITE, 0, 64, 8, 'b');
	complete_all(r, b);
	complete(r, f1, -EIO, 0);
	f2 = issue(r, REQ_OP_FLUSH, 0, 0, 0, 0);
	complete(r, f2, 0, 0);
	rig_close(r);

	log_read(r->log, &l);
	ck_assert_uint_eq(l.nr_entries, 5);
	assert_write(&l, 0, r, a, 0, 0, 8);
	assert_mark(&l, 1, LOG_WRITES_FLUSH_FAILED_MARK);
	assert_write(&l, 2, r, b, 0, 0, 8);
	assert_flag(&l, 3, LOG_FLUSH_FLAG);
	assert_mark(&l, 4, LOG_WRITES_END_MARK);
	log_free(&l);
	rig_free(r);
}
END_TEST

/* A discard is an entry with no data; write-zeroes a write of zeros. */
START_TEST(discard_and_write_zeroes)
{
	struct rig *r = rig_open("");
	unsigned int dis, z, flush;
	unsigned char zeros[8 * SECTOR_SIZE] = { 0 };
	struct log l;
	char stats[512];

	dis = issue(r, REQ_OP_DISCARD, 0, 1000, 32, 0);
	z = issue(r, REQ_OP_WRITE_ZEROES, 0, 2000, 8, 0);
	complete_all(r, z);
	complete_all(r, dis);
	flush = issue(r, REQ_OP_FLUSH, 0, 0, 0, 0);
	complete(r, flush, 0, 0);
	show(r, "stats", stats, sizeof(stats));
	ck_assert_msg(strstr(stats, "discards 1\nzeroes 1\nflushes 1\n"), "%s", stats);
	rig_close(r);

	log_read(r->log, &l);
	ck_assert_uint_eq(l.nr_entries, 4);
	assert_flag(&l, 0, 0);
	ck_assert_uint_eq(l.e[0].sector, 2000);
	ck_assert_uint_eq(l.e[0].nr, 8);
	ck_assert_ptr_nonnull(l.e[0].data);
	ck_assert(!memcmp(l.e[0].data, zeros, sizeof(zeros)));
	assert_flag(&l, 1, LOG_DISCARD_FLAG);
	ck_assert_uint_eq(l.e[1].sector, 1000);
	ck_assert_uint_eq(l.e[1].nr, 32);
	ck_assert_ptr_null(l.e[1].data);
	assert_flag(&l, 2, LOG_FLUSH_FLAG);
	assert_mark(&l, 3, LOG_WRITES_END_MARK);
	log_free(&l);
	rig_free(r);
}
END_TEST

/*
 * Write-zeroes' zeros are not held in memory (a request may zero 4 GiB):
 * the log is made long enough for them, readable as soon as the super
 * block counts the entry, here a FUA one that is last in the log.
 */
START_TEST(write_zeroes_last_in_a_running_log)
{
	struct rig *r = rig_open("");
	static const unsigned char zeros[BUF_SECTORS * SECTOR_SIZE];
	unsigned int z;
	struct log l;

	z = issue(r, REQ_OP_WRITE_ZEROES, REQ_FUA, 4096, BUF_SECTORS, 0);
	complete_all(r, z);
	for (int i = 0; i < 500 && super_entries(r->log) != 1; i++)
		usleep(10000); /* the writer is a thread: 5 s at most */
	log_read(r->log, &l);
	ck_assert_uint_eq(l.nr_entries, 1);
	assert_flag(&l, 0, LOG_FUA_FLAG);
	ck_assert_uint_eq(l.e[0].sector, 4096);
	ck_assert_uint_eq(l.e[0].nr, BUF_SECTORS);
	ck_assert(!memcmp(l.e[0].data, zeros, sizeof(zeros)));
	log_free(&l);
	rig_close(r);
	rig_free(r);
}
END_TEST

/* A mark goes in at once, after what completed; bad names are refused. */
START_TEST(marks)
{
	struct rig *r = rig_open("");
	char longest[512 - sizeof(struct log_write_entry)], toolong[sizeof(longest) + 1], buf[64];
	unsigned int a;
	struct log l;

	a = issue(r, REQ_OP_WRITE, 0, 0, 8, 'a');
	complete_all(r, a);
	ck_assert_int_eq(store(r, "mark", "one"), 0);
	show(r, "mark", buf, sizeof(buf));
	ck_assert_str_eq(buf, "one\n");
	show(r, "entries", buf, sizeof(buf));
	ck_assert_str_eq(buf, "2\n");
	/* the longest name: with a NUL, what fits in the block after the entry (479 bytes) */
	memset(longest, 'x', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = 0;
	ck_assert_int_eq(store(r, "mark", longest), 0);
	memset(toolong, 'y', sizeof(toolong) - 1);
	toolong[sizeof(toolong) - 1] = 0;
	ck_assert_int_eq(store(r, "mark", toolong), -EINVAL);
	ck_assert_int_eq(store(r, "mark", ""), -EINVAL);
	ck_assert_int_eq(store(r, "mark", "two\nlines"), -EINVAL);
	/* the log's own words: a forged end would make a killed daemon's log read as whole */
	ck_assert_int_eq(store(r, "mark", LOG_WRITES_END_MARK), -EPERM);
	ck_assert_int_eq(store(r, "mark", LOG_WRITES_GAP_END_MARK), -EPERM);
	ck_assert_int_eq(store(r, "mark", LOG_WRITES_FLUSH_FAILED_MARK), -EPERM);
	ck_assert_int_eq(store(r, "mark", "rqdisk-anything"), -EPERM);
	show(r, "entries", buf, sizeof(buf));
	ck_assert_str_eq(buf, "3\n");
	rig_close(r);

	log_read(r->log, &l);
	ck_assert_uint_eq(l.nr_entries, 4);
	assert_write(&l, 0, r, a, 0, 0, 8);
	assert_mark(&l, 1, "one");
	assert_flag(&l, 2, LOG_MARK_FLAG);
	ck_assert_uint_eq(l.e[2].data_len, 479);
	assert_mark(&l, 3, LOG_WRITES_END_MARK);
	log_free(&l);
	rig_free(r);
}
END_TEST

/* Off: what completed is logged, a mark; writes then are not; on: a mark. */
START_TEST(enable_leaves_marked_gaps)
{
	struct rig *r = rig_open("");
	unsigned int a, b, c;
	struct log l;
	char buf[16];

	a = issue(r, REQ_OP_WRITE, 0, 0, 8, 'a');
	complete_all(r, a);
	ck_assert_int_eq(store(r, "enable", "2"), -EINVAL);
	ck_assert_int_eq(store(r, "enable", "0"), 0);
	show(r, "enable", buf, sizeof(buf));
	ck_assert_str_eq(buf, "0\n");
	b = issue(r, REQ_OP_WRITE, 0, 64, 8, 'b');
	complete_all(r, b);
	ck_assert_int_eq(store(r, "enable", "1"), 0);
	c = issue(r, REQ_OP_WRITE, 0, 128, 8, 'c');
	complete_all(r, c);
	rig_close(r);

	log_read(r->log, &l);
	ck_assert_uint_eq(l.nr_entries, 5);
	assert_write(&l, 0, r, a, 0, 0, 8);
	assert_mark(&l, 1, "rqdisk-log-disabled");
	assert_mark(&l, 2, "rqdisk-log-enabled");
	assert_write(&l, 3, r, c, 0, 0, 8);
	assert_mark(&l, 4, LOG_WRITES_END_MARK);
	log_free(&l);
	rig_free(r);
}
END_TEST

/*
 * enable=0 from the open is a gap from the start: the first entry says
 * so, and a write that completed (and was flushed) then is missing after
 * the mark that ends it, not in a log that looks whole.
 */
START_TEST(logging_off_from_the_open_is_a_gap)
{
	struct rig *r = rig_open(",enable=0");
	unsigned int a, f1, b, f2;
	struct log l;

	a = issue(r, REQ_OP_WRITE, 0, 0, 8, 'a');
	complete_all(r, a);
	f1 = issue(r, REQ_OP_FLUSH, 0, 0, 0, 0);
	complete(r, f1, 0, 0);
	ck_assert_int_eq(store(r, "enable", "1"), 0);
	b = issue(r, REQ_OP_WRITE, 0, 64, 8, 'b');
	complete_all(r, b);
	f2 = issue(r, REQ_OP_FLUSH, 0, 0, 0, 0);
	complete(r, f2, 0, 0);
	rig_close(r);

	log_read(r->log, &l);
	ck_assert_uint_eq(l.nr_entries, 5);
	assert_mark(&l, 0, LOG_WRITES_GAP_MARK);
	assert_mark(&l, 1, LOG_WRITES_GAP_END_MARK);
	assert_write(&l, 2, r, b, 0, 0, 8);
	assert_flag(&l, 3, LOG_FLUSH_FLAG);
	assert_mark(&l, 4, LOG_WRITES_END_MARK);
	log_free(&l);
	rig_free(r);
}
END_TEST

/*
 * A write submitted with logging off, or with a part ended while it was
 * off, is not logged however late it ends: the gap goes on until it has
 * ended (what completes meanwhile is logged inside the gap), so no write
 * is missing after the mark that ends it.
 */
START_TEST(a_gap_lasts_until_the_writes_it_missed_end)
{
	struct rig *r = rig_open("");
	unsigned int b, c, d, e, f;
	struct log l;

	ck_assert_int_eq(store(r, "enable", "0"), 0);
	b = issue(r, REQ_OP_WRITE, 0, 64, 8, 'b'); /* submitted with logging off */
	ck_assert_int_eq(store(r, "enable", "1"), 0);
	c = issue(r, REQ_OP_WRITE, 0, 128, 8, 'c');
	complete_all(r, c);
	complete_all(r, b);
	d = issue(r, REQ_OP_WRITE, 0, 192, 8, 'd');
	complete_all(r, d);
	/* a write half ended while logging is off, the rest once it is on */
	e = issue(r, REQ_OP_WRITE, 0, 256, 8, 'e');
	ck_assert_int_eq(store(r, "enable", "0"), 0);
	complete(r, e, 0, 4);
	ck_assert_int_eq(store(r, "enable", "1"), 0);
	complete(r, e, 0, 4);
	f = issue(r, REQ_OP_WRITE, 0, 320, 8, 'f');
	complete_all(r, f);
	rig_close(r);

	log_read(r->log, &l);
	ck_assert_uint_eq(l.nr_entries, 8);
	assert_mark(&l, 0, "rqdisk-log-disabled");
	assert_write(&l, 1, r, c, 0, 0, 8);
	assert_mark(&l, 2, "rqdisk-log-enabled"); /* after b ended */
	assert_write(&l, 3, r, d, 0, 0, 8);
	assert_mark(&l, 4, "rqdisk-log-disabled");
	assert_mark(&l, 5, "rqdisk-log-enabled"); /* after e ended */
	assert_write(&l, 6, r, f, 0, 0, 8);
	assert_mark(&l, 7, LOG_WRITES_END_MARK);
	log_free(&l);
	rig_free(r);
}
END_TEST

/*
 * Ended in parts: the bytes of each part are copied as it ends, so the
 * entry has the whole write.  An error after a good prefix: the prefix.
 * An error from the first sector: nothing.
 */
START_TEST(partial_completion)
{
	struct rig *r = rig_open("");
	unsigned int a, b, c;
	struct log l;

	a = issue(r, REQ_OP_WRITE, 0, 0, 24, 'a');
	complete(r, a, 0, 5);
	complete(r, a, 0, 11);
	complete(r, a, 0, 8);
	b = issue(r, REQ_OP_WRITE, 0, 100, 16, 'b');
	complete(r, b, 0, 6);
	complete(r, b, -EIO, 10);
	c = issue(r, REQ_OP_WRITE, 0, 200, 8, 'c');
	complete(r, c, -EIO, 8);
	ck_assert_int_eq(r->h.error[b], -EIO);
	rig_close(r);

	log_read(r->log, &l);
	ck_assert_uint_eq(l.nr_entries, 3);
	assert_write(&l, 0, r, a, 0, 0, 24);
	assert_write(&l, 1, r, b, 0, 0, 6);
	assert_mark(&l, 2, LOG_WRITES_END_MARK);
	log_free(&l);
	rig_free(r);
}
END_TEST

/*
 * A flush issued while a write has ended only a part below covers that
 * part (it reached the disk, and went up, before the flush was issued):
 * the part is logged ahead of the flush's FLUSH entry, the rest after it
 * (whole, or up to an error).
 */
START_TEST(a_part_ended_before_a_flush_is_logged_before_its_flush)
{
	for (int fail_rest = 0; fail_rest <= 1; fail_rest++) {
		struct rig *r = rig_open("");
		unsigned int a, f;
		struct log l;

		a = issue(r, REQ_OP_WRITE, 0, 0, 16, 'a');
		complete(r, a, 0, 6);
		f = issue(r, REQ_OP_FLUSH, 0, 0, 0, 0);
		complete(r, a, fail_rest ? -EIO : 0, 10);
		complete(r, f, 0, 0);
		rig_close(r);

		log_read(r->log, &l);
		ck_assert_uint_eq(l.nr_entries, fail_rest ? 3 : 4);
		assert_write(&l, 0, r, a, 0, 0, 6);
		assert_flag(&l, 1, LOG_FLUSH_FLAG);
		if (!fail_rest)
			assert_write(&l, 2, r, a, 0, 6, 10);
		assert_mark(&l, fail_rest ? 2 : 3, LOG_WRITES_END_MARK);
		log_free(&l);
		rig_free(r);
	}
}
END_TEST

/*
 * With the model above, the parts a request ends in below are held there:
 * the queue has not moved past the first when the second comes, and the
 * second's bytes are still found where they are.
 */
START_TEST(partial_completion_under_a_filter_that_holds_ends)
{
	const char *specs[2] = { "model:ssd:depth=4", NULL };
	char spec[160];
	struct rig *r = rig_new(spec, sizeof(spec), "");
	unsigned int a;
	struct log l;

	specs[1] = spec;
	rig_open_specs(r, specs, 2);
	a = issue(r, REQ_OP_WRITE, 0, 0, 24, 'a');
	complete(r, a, 0, 5);
	complete(r, a, 0, 11);
	complete(r, a, 0, 8);
	ck_assert(!r->h.ended_at[a]); /* held in the model */
	r->h.clock.virtual_ns += 1000000000ull;
	blk_queue_lock(r->h.q);
	dev_stack_run_timers(&r->h.stack, r->h.clock.virtual_ns);
	blk_queue_unlock(r->h.q);
	rig_close(r);

	log_read(r->log, &l);
	ck_assert_uint_eq(l.nr_entries, 2);
	assert_write(&l, 0, r, a, 0, 0, 24);
	log_free(&l);
	rig_free(r);
}
END_TEST

/* The super block counts the entries as the log grows: a daemon that dies leaves a log to read. */
START_TEST(super_block_follows_each_flush)
{
	struct rig *r = rig_open("");
	unsigned int a, flush;
	struct log l;
	char buf[16];

	a = issue(r, REQ_OP_WRITE, 0, 0, 8, 'a');
	complete_all(r, a);
	flush = issue(r, REQ_OP_FLUSH, 0, 0, 0, 0);
	complete(r, flush, 0, 0);
	for (int i = 0; i < 500 && super_entries(r->log) != 2; i++)
		usleep(10000); /* the writer is a thread: 5 s at most */
	log_read(r->log, &l); /* while the daemon runs */
	ck_assert_uint_eq(l.nr_entries, 2);
	assert_write(&l, 0, r, a, 0, 0, 8);
	assert_flag(&l, 1, LOG_FLUSH_FLAG);
	log_free(&l);
	show(r, "entries", buf, sizeof(buf));
	ck_assert_str_eq(buf, "2\n");
	rig_close(r);
	rig_free(r);
}
END_TEST

/* Bad args say why in a line, and no file is made, not even for good ones checked. */
START_TEST(bad_args_make_nothing)
{
	const char *path = "/tmp/check_log_writes.never";
	struct stack_harness h;
	const char *spec = "log-writes:file=/tmp/check_log_writes.never";
	char why[256] = "";
	struct stat st;

	unlink(path);
	sh_assert_refused("log-writes", "log-writes: give file=LOG");
	sh_assert_refused("log-writes:", "log-writes: give file=LOG");
	sh_assert_refused("log-writes:file=", "log-writes: file= needs a value");
	sh_assert_refused("log-writes:file", "log-writes: file= needs a value");
	sh_assert_refused("log-writes:file=/tmp/check_log_writes.never,x=1", "log-writes: no key 'x'");
	sh_assert_refused("log-writes:file=/tmp/check_log_writes.never,enable=2",
		       "log-writes: enable must be 0 or 1, not '2'");
	ck_assert_int_eq(dev_check_filter(spec, why, sizeof(why)), 0);
	ck_assert_int_ne(stat(path, &st), 0);

	ck_assert_int_eq(sh_open(&h, &spec, 1, &dev_sim_ops, 1 << 21, 1, why, sizeof(why)),
			 -EINVAL);
	ck_assert_msg(strstr(why, "log-writes: the device below has no data to log"), "%s", why);
	ck_assert_int_ne(stat(path, &st), 0);
	blk_cleanup_queue(h.q);
	sh_free(&h);
	spec = "log-writes:file=/tmp/check_log_writes.never,base=/nonexistent/dir/base";
	ck_assert_int_eq(sh_open(&h, &spec, 1, &sh_hand_ops, 1 << 21, 1, why, sizeof(why)),
			 -EINVAL);
	ck_assert_msg(strstr(why, "base= needs an image"), "%s", why);
	ck_assert_int_ne(stat(path, &st), 0);
	blk_cleanup_queue(h.q);
	sh_free(&h);
}
END_TEST

/*
 * The hand backend, saying of itself what says_lim holds besides: whether
 * it cuts its power, and (says_image) that its args name the file its
 * sectors are in.  A test copies its ops to name it.
 */
static struct dev_limits says_lim;
static bool says_image;

static int says_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		     size_t whylen)
{
	int ret = sh_hand_ops.open(dev, args, lim, why, whylen);

	lim->power_cuts = says_lim.power_cuts;
	lim->image_file = says_image ? dev->args : NULL;
	return ret;
}

static struct dev_ops says_ops(const char *name)
{
	struct dev_ops ops = sh_hand_ops;

	ops.name = name;
	ops.open = says_open;
	return ops;
}

/* spec over backend opened from args: what the stack's open returns, why in one line. */
static int open_over(const struct dev_ops *backend, const char *args, const char *spec, char *why,
		     size_t whylen)
{
	struct dev_limits lim = { .capacity = 1 << 21 };
	struct stack_harness h;
	int ret;

	memset(&h, 0, sizeof(h));
	ck_assert_int_eq(sh_open(&h, NULL, 0, backend, 1 << 21, 1, why, whylen), 0);
	dev_stack_close(&h.stack);
	ret = sh_stack_open(&h.stack, h.q, &spec, 1, backend, args, &lim, why, whylen);
	ck_assert_ptr_null(strchr(why, '\n'));
	if (!ret)
		sh_close(&h);
	else
		blk_cleanup_queue(h.q);
	sh_free(&h);
	return ret;
}

/*
 * What log-writes refuses below it is what the limits say, not a name: a
 * device that cuts its power is refused whatever it is called, and one
 * called write-cache that says no such thing is taken.
 */
START_TEST(power_cuts_below_are_a_limit_not_a_name)
{
	char spec[256], why[512] = "";
	struct rig *r = rig_new(spec, sizeof(spec), "");
	struct dev_ops cuts = says_ops("hand"), named = says_ops("write-cache");
	struct stat st;

	says_image = false;
	says_lim = (struct dev_limits){ .power_cuts = true };
	ck_assert_int_eq(open_over(&cuts, NULL, spec, why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, "log-writes: a power cut below it loses writes"), "%s", why);
	ck_assert_msg(stat(r->log, &st) && errno == ENOENT, "a refused stack made the log");
	says_lim = (struct dev_limits){ .power_cuts = false };
	ck_assert_msg(!open_over(&named, NULL, spec, why, sizeof(why)), "%s", why);
	ck_assert_int_eq(stat(r->log, &st), 0);
	rig_free(r);
}
END_TEST

/*
 * base= copies the file the limits say the sectors are in, whatever the
 * backend is called; a backend called file that says none is refused.
 */
START_TEST(base_copies_the_image_the_limits_name)
{
	char spec[256], image[128], base[128], why[512] = "", got[16] = "";
	struct rig *r = rig_new(spec, sizeof(spec), "");
	struct dev_ops says_file = says_ops("mem"), named = says_ops("file");
	struct stat st;
	int fd;

	snprintf(image, sizeof(image), "%s/image", r->dir);
	snprintf(base, sizeof(base), "%s/base", r->dir);
	snprintf(spec + strlen(spec), sizeof(spec) - strlen(spec), ",base=%s", base);
	fd = open(image, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "the image", 9), 9);
	close(fd);
	says_lim = (struct dev_limits){ 0 };
	says_image = false;
	ck_assert_int_eq(open_over(&named, image, spec, why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, "log-writes: base= needs an image file: the device below has none"),
		      "%s", why);
	ck_assert_msg(stat(base, &st) && errno == ENOENT, "base= was made over no image file");
	says_image = true;
	ck_assert_msg(!open_over(&says_file, image, spec, why, sizeof(why)), "%s", why);
	fd = open(base, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(read(fd, got, sizeof(got) - 1), 9);
	close(fd);
	ck_assert_str_eq(got, "the image");
	says_image = false;
	unlink(base);
	unlink(image);
	rig_free(r);
}
END_TEST

/*
 * A stack closed as never having served (the host's start failed after it
 * opened): the log the filter made is taken away.
 */
START_TEST(aborted_start_removes_what_it_made)
{
	struct rig *r = rig_open("");
	struct stat st;

	ck_assert_int_eq(stat(r->log, &st), 0);
	r->h.stack.aborted = true;
	rig_close(r);
	ck_assert_msg(stat(r->log, &st) && errno == ENOENT, "the log of an aborted start is left");
	rig_free(r);
}
END_TEST

/* The stack over the hand backend refuses spec with a line that has want; nothing is opened. */
static void assert_open_refused(const char *spec, const char *want)
{
	struct stack_harness h;
	char why[512] = "";

	ck_assert_int_lt(sh_open(&h, &spec, 1, &sh_hand_ops, 1 << 21, 1, why, sizeof(why)), 0);
	ck_assert_msg(strstr(why, want), "'%s' lacks '%s'", why, want);
	ck_assert_ptr_null(strchr(why, '\n'));
	blk_cleanup_queue(h.q);
	sh_free(&h);
}

/* path holds exactly text. */
static void assert_holds(const char *path, const char *text)
{
	char buf[64] = "";
	int fd = open(path, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(read(fd, buf, sizeof(buf) - 1), 0);
	close(fd);
	ck_assert_str_eq(buf, text);
}

/*
 * write-cache below log-writes acknowledges writes that a power cut then
 * drops: the log would keep them, and a later FLUSH entry call them
 * durable.  Refused in one line, nothing made; above it, taken.
 */
START_TEST(write_cache_below_is_refused)
{
	const char *want = "log-writes: a power cut below it loses writes";
	char spec[256];
	struct rig *r = rig_new(spec, sizeof(spec), "");
	const char *below[2] = { spec, "write-cache:size=1" };
	const char *above[2] = { "write-cache:size=1", spec };
	struct stack_harness h;
	struct stat st;

	{
		char why[512] = "";

		ck_assert_int_lt(sh_open(&h, below, 2, &sh_hand_ops, 1 << 21, 1, why, sizeof(why)),
				 0);
		ck_assert_msg(strstr(why, want), "'%s' lacks '%s'", why, want);
		ck_assert_ptr_null(strchr(why, '\n'));
		blk_cleanup_queue(h.q);
		sh_free(&h);
	}
	ck_assert_msg(stat(r->log, &st) && errno == ENOENT, "a refused stack made the log");
	rig_open_specs(r, above, 2);
	rig_close(r);
	rig_free(r);
}
END_TEST

/*
 * base= copies an image file; a backend opened from something else (an
 * NBD URI, an RBD spec) has none here, even when a file of that name
 * exists: refused in one line, nothing copied or made.
 */
START_TEST(base_needs_an_image_file)
{
	char spec[256], image[128], base[128], why[512] = "";
	struct rig *r = rig_new(spec, sizeof(spec), "");
	struct dev_ops rbd_ops = sh_hand_ops;
	const char *specs[1] = { spec };
	struct dev_limits lim = { .capacity = 1 << 21 };
	struct stack_harness h;
	struct stat st;
	int fd;

	rbd_ops.name = "rbd";
	snprintf(image, sizeof(image), "%s/image", r->dir); /* rbd:DIR/image would name it */
	snprintf(base, sizeof(base), "%s/base", r->dir);
	snprintf(spec + strlen(spec), sizeof(spec) - strlen(spec), ",base=%s", base);
	fd = open(image, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "not the disk", 12), 12);
	close(fd);
	ck_assert_int_eq(sh_open(&h, NULL, 0, &rbd_ops, 1 << 21, 1, why, sizeof(why)), 0);
	dev_stack_close(&h.stack);
	ck_assert_int_lt(sh_stack_open(&h.stack, h.q, specs, 1, &rbd_ops, image, &lim, why,
				       sizeof(why)), 0);
	ck_assert_msg(strstr(why, "log-writes: base= needs an image file: the device below has none "
				  "to copy"), "%s", why);
	ck_assert_msg(stat(base, &st) && errno == ENOENT, "base= was made over an rbd backend");
	ck_assert_msg(stat(r->log, &st) && errno == ENOENT, "file= was made for a refused base=");
	blk_cleanup_queue(h.q);
	sh_free(&h);
	unlink(image);
	rig_free(r);
}
END_TEST

/*
 * The log is made new: a file that is there (another user may have made
 * it, to read what the daemon logs) and a symlink (to have it write over
 * what it names), dangling or not, are refused in one line, and neither
 * is touched.  A device is taken as it is: a log device.
 */
START_TEST(the_log_is_made_new_or_refused)
{
	char spec[256], target[128], why[256];
	struct rig *r = rig_new(spec, sizeof(spec), "");
	int fd;

	snprintf(target, sizeof(target), "%s/target", r->dir);
	fd = open(target, O_WRONLY | O_CREAT | O_EXCL, 0666);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "theirs", 6), 6);
	close(fd);

	ck_assert_int_eq(link(target, r->log), 0); /* a file that is there */
	snprintf(why, sizeof(why), "log-writes: file=%s exists: name a new file, or a device",
		 r->log);
	assert_open_refused(spec, why);
	assert_holds(target, "theirs");
	unlink(r->log);

	ck_assert_int_eq(symlink(target, r->log), 0);
	snprintf(why, sizeof(why), "log-writes: file=%s is a symbolic link: name a new file",
		 r->log);
	assert_open_refused(spec, why);
	assert_holds(target, "theirs");
	unlink(r->log);

	unlink(target);
	ck_assert_int_eq(symlink(target, r->log), 0); /* dangling: O_CREAT would make target */
	assert_open_refused(spec, why);
	ck_assert_int_ne(access(target, F_OK), 0);
	unlink(r->log);
	rig_free(r);

	if (!access("/dev/null", W_OK)) {
		struct stack_harness h;
		const char *dev = "log-writes:file=/dev/null";

		ck_assert_int_eq(sh_open(&h, &dev, 1, &sh_hand_ops, 1 << 21, 1, why, sizeof(why)),
				 0);
		sh_teardown(&h);
	}
}
END_TEST

/*
 * A log that cannot be written: logging stops, stats says so and why, the
 * disk goes on; the stack's close fails (the daemon's exit status).
 */
START_TEST(log_write_error_stops_logging)
{
	struct rig *r = calloc(1, sizeof(*r));
	unsigned int a, b;
	char stats[512];

	ck_assert_ptr_nonnull(r);
	if (access("/dev/full", W_OK)) {
		free(r);
		return;
	}
	rig_open_spec(r, "log-writes:file=/dev/full");
	a = issue(r, REQ_OP_WRITE, 0, 0, 8, 'a');
	complete_all(r, a);
	for (int i = 0; i < 500; i++) {
		show(r, "stats", stats, sizeof(stats));
		if (strstr(stats, "error No space left on device"))
			break;
		usleep(10000);
	}
	ck_assert_msg(strstr(stats, "stopped 1\nerror No space left on device\n"), "%s", stats);
	ck_assert_int_eq(store(r, "mark", "after"), -EIO);
	b = issue(r, REQ_OP_WRITE, 0, 64, 8, 'b');
	complete_all(r, b);
	ck_assert_int_eq(r->h.error[b], 0);
	ck_assert_int_lt(dev_stack_close(&r->h.stack), 0);
	rig_close(r);
	sh_free(&r->h);
	free(r);
}
END_TEST

/* A log whole: its super block says it ends in an end mark, and that it did not stop. */
START_TEST(the_super_block_says_an_end_mark_is_due)
{
	struct rig *r = rig_open("");
	struct log_write_super_rqdisk rec;
	unsigned int a;

	a = issue(r, REQ_OP_WRITE, 0, 0, 8, 'a');
	complete_all(r, a);
	for (int i = 0; i < 500 && super_entries(r->log) < 0; i++)
		usleep(10000); /* the writer is a thread: 5 s at most */
	ck_assert(super_rqdisk(r->log, &rec)); /* from the first super block on */
	ck_assert_uint_eq(rec.flags, LOG_RQDISK_ENDS);
	rig_close(r);
	ck_assert(super_rqdisk(r->log, &rec));
	ck_assert_uint_eq(rec.flags, LOG_RQDISK_ENDS);
	ck_assert_uint_eq(rec.error, 0);
	rig_free(r);
}
END_TEST

static Suite *log_writes_suite(void)
{
	Suite *s = suite_create("log_writes");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, completion_order_with_each_flush_in_place);
	tcase_add_test(tc, fua_over_an_unflushed_write_replays_to_the_fua_data);
	tcase_add_test(tc, held_writes_follow_the_flushes_issued_before_them);
	tcase_add_test(tc, failed_flush_marks_what_it_covered_as_maybe_lost);
	tcase_add_test(tc, discard_and_write_zeroes);
	tcase_add_test(tc, write_zeroes_last_in_a_running_log);
	tcase_add_test(tc, marks);
	tcase_add_test(tc, enable_leaves_marked_gaps);
	tcase_add_test(tc, logging_off_from_the_open_is_a_gap);
	tcase_add_test(tc, a_gap_lasts_until_the_writes_it_missed_end);
	tcase_add_test(tc, partial_completion);
	tcase_add_test(tc, a_part_ended_before_a_flush_is_logged_before_its_flush);
	tcase_add_test(tc, partial_completion_under_a_filter_that_holds_ends);
	tcase_add_test(tc, super_block_follows_each_flush);
	tcase_add_test(tc, bad_args_make_nothing);
	tcase_add_test(tc, aborted_start_removes_what_it_made);
	tcase_add_test(tc, the_log_is_made_new_or_refused);
	tcase_add_test(tc, log_write_error_stops_logging);
	tcase_add_test(tc, write_cache_below_is_refused);
	tcase_add_test(tc, base_needs_an_image_file);
	tcase_add_test(tc, power_cuts_below_are_a_limit_not_a_name);
	tcase_add_test(tc, base_copies_the_image_the_limits_name);
	tcase_add_test(tc, the_super_block_says_an_end_mark_is_due);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(log_writes_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
