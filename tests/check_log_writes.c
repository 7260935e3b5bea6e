/*
 * check_log_writes.c - the log-writes filter over a backend the test ends by
 * hand, in the order it chooses: the log has dm-log-writes' order (c,a,
 * FLUSH,FUA d,b for Wa,Wb,Wc,Cc,Ca,FLUSH,FUAd,Cb,CFLUSH,CFUAd), each
 * write's bytes, discards and zeroes, marks and the end mark, and what a
 * request ended in parts or with an error puts there.
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

/* dm-log-writes' own example: Wa,Wb,Wc,Cc,Ca,FLUSH,FUAd,Cb,CFLUSH,CFUAd. */
START_TEST(completion_order_as_dm_log_writes)
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
	assert_write(&l, 3, r, d, LOG_FUA_FLAG, 0, 2);
	assert_write(&l, 4, r, b, 0, 0, 4); /* completed after the flush was issued: not its */
	assert_mark(&l, 5, LOG_WRITES_END_MARK);
	log_free(&l);
	rig_free(r);
}
END_TEST

/* A FUA write is logged when it completes, ahead of writes that completed before it unflushed. */
START_TEST(fua_goes_ahead_of_the_unflushed)
{
	struct rig *r = rig_open("");
	unsigned int a, d, flush;
	struct log l;

	a = issue(r, REQ_OP_WRITE, 0, 0, 8, 'a');
	d = issue(r, REQ_OP_WRITE, REQ_FUA, 64, 8, 'd');
	complete_all(r, a);
	complete_all(r, d);
	flush = issue(r, REQ_OP_FLUSH, REQ_PREFLUSH, 0, 0, 0); /* as the core makes one */
	complete(r, flush, 0, 0);
	rig_close(r);

	log_read(r->log, &l);
	ck_assert_uint_eq(l.nr_entries, 4);
	assert_write(&l, 0, r, d, LOG_FUA_FLAG, 0, 8);
	assert_write(&l, 1, r, a, 0, 0, 8);
	assert_flag(&l, 2, LOG_FLUSH_FLAG);
	assert_mark(&l, 3, LOG_WRITES_END_MARK);
	log_free(&l);
	rig_free(r);
}
END_TEST

/* A failed flush makes nothing durable: its writes wait for the next, no FLUSH entry. */
START_TEST(failed_flush_gives_its_writes_to_the_next)
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
	ck_assert_uint_eq(l.nr_entries, 4);
	assert_write(&l, 0, r, a, 0, 0, 8);
	assert_write(&l, 1, r, b, 0, 0, 8);
	assert_flag(&l, 2, LOG_FLUSH_FLAG);
	assert_mark(&l, 3, LOG_WRITES_END_MARK);
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

/* A mark goes in at once, ahead of what is not flushed; bad names are refused. */
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
	ck_assert_str_eq(buf, "1\n");
	/* the longest name: with a NUL, what fits in the block after the entry (479 bytes) */
	memset(longest, 'x', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = 0;
	ck_assert_int_eq(store(r, "mark", longest), 0);
	memset(toolong, 'y', sizeof(toolong) - 1);
	toolong[sizeof(toolong) - 1] = 0;
	ck_assert_int_eq(store(r, "mark", toolong), -EINVAL);
	ck_assert_int_eq(store(r, "mark", ""), -EINVAL);
	ck_assert_int_eq(store(r, "mark", "two\nlines"), -EINVAL);
	show(r, "entries", buf, sizeof(buf));
	ck_assert_str_eq(buf, "2\n");
	rig_close(r);

	log_read(r->log, &l);
	ck_assert_uint_eq(l.nr_entries, 4);
	assert_mark(&l, 0, "one");
	assert_flag(&l, 1, LOG_MARK_FLAG);
	ck_assert_uint_eq(l.e[1].data_len, 479);
	assert_write(&l, 2, r, a, 0, 0, 8); /* unflushed at close */
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
	ck_assert_msg(strstr(why, "log-writes: the sim backend has no data to log"), "%s", why);
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
 * A stack closed as never having served (the host's start failed after it
 * opened): the log the filter made is taken away; a log file that was
 * there before it stays.
 */
START_TEST(aborted_start_removes_what_it_made)
{
	struct rig *r = rig_open("");
	char spec[256];
	struct stat st;
	int fd;

	ck_assert_int_eq(stat(r->log, &st), 0);
	r->h.stack.aborted = true;
	rig_close(r);
	ck_assert_msg(stat(r->log, &st) && errno == ENOENT, "the log of an aborted start is left");
	rig_free(r);

	r = rig_new(spec, sizeof(spec), "");
	fd = open(r->log, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	rig_open_spec(r, spec);
	r->h.stack.aborted = true;
	rig_close(r);
	ck_assert_msg(!stat(r->log, &st), "a log file the filter did not make was unlinked");
	rig_free(r);
}
END_TEST

/* A log that cannot be written: logging stops, stats says why, the disk goes on. */
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
	ck_assert_msg(strstr(stats, "error No space left on device"), "%s", stats);
	ck_assert_int_eq(store(r, "mark", "after"), -EIO);
	b = issue(r, REQ_OP_WRITE, 0, 64, 8, 'b');
	complete_all(r, b);
	ck_assert_int_eq(r->h.error[b], 0);
	rig_close(r);
	sh_free(&r->h);
	free(r);
}
END_TEST

static Suite *log_writes_suite(void)
{
	Suite *s = suite_create("log_writes");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, completion_order_as_dm_log_writes);
	tcase_add_test(tc, fua_goes_ahead_of_the_unflushed);
	tcase_add_test(tc, failed_flush_gives_its_writes_to_the_next);
	tcase_add_test(tc, discard_and_write_zeroes);
	tcase_add_test(tc, write_zeroes_last_in_a_running_log);
	tcase_add_test(tc, marks);
	tcase_add_test(tc, enable_leaves_marked_gaps);
	tcase_add_test(tc, partial_completion);
	tcase_add_test(tc, partial_completion_under_a_filter_that_holds_ends);
	tcase_add_test(tc, super_block_follows_each_flush);
	tcase_add_test(tc, bad_args_make_nothing);
	tcase_add_test(tc, aborted_start_removes_what_it_made);
	tcase_add_test(tc, log_write_error_stops_logging);
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
