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

#define MAX_RQ 32
#define BUF_SECTORS 64

/* ------------------------------------------------ a backend ended by hand */

static struct request *below[MAX_RQ];
static unsigned int nr_below;

static int hand_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		     size_t whylen)
{
	lim->capacity = 1 << 21;
	lim->logical_block_size = SECTOR_SIZE;
	lim->discard = lim->write_zeroes = true;
	nr_below = 0;
	return 0;
}

static void hand_submit(struct blk_dev *dev, struct request *rq)
{
	ck_assert_uint_lt(nr_below, MAX_RQ);
	below[nr_below++] = rq;
}

static const struct dev_ops hand_ops = {
	.api_version = DEV_API_VERSION,
	.name = "hand",
	.backend = true,
	.open = hand_open,
	.submit = hand_submit,
};

/* The host's side: one watched fd, the writer's eventfd. */
static int watched_fd = -1;

static int fake_watch(void *host, int fd, void (*ready)(void *arg), void *arg)
{
	watched_fd = fd;
	return 0;
}

static void fake_unwatch(void *host, int fd)
{
	ck_assert_int_eq(fd, watched_fd);
	watched_fd = -1;
}

static const struct dev_host_ops fake_host = { .watch_fd = fake_watch, .unwatch_fd = fake_unwatch };

/* ------------------------------------------------------------ the harness */

struct rig {
	struct blk_clock clock;
	struct request_queue *q;
	struct dev_stack s;
	struct bio bio[MAX_RQ];
	struct bio_vec vec[MAX_RQ];
	unsigned char buf[MAX_RQ][BUF_SECTORS * SECTOR_SIZE];
	int error[MAX_RQ];
	bool ended[MAX_RQ];
	unsigned int nr;
	char dir[64], log[96];
};

static void rig_end_io(struct bio *bio, int error)
{
	struct rig *r = bio->bi_private;
	unsigned int i = (unsigned int)(bio - r->bio);

	r->ended[i] = true;
	r->error[i] = error;
}

/* Requests go down from issue(), not from the queue. */
static void no_request_fn(struct request_queue *q)
{
}

static void rig_open_spec(struct rig *r, const char *spec)
{
	struct dev_limits lim = { .capacity = 1 << 21 };
	char why[256] = "";

	blk_virtual_clock_init(&r->clock, 1000);
	r->q = blk_init_queue(no_request_fn, NULL, &r->clock);
	ck_assert_ptr_nonnull(r->q);
	r->s.host_ops = &fake_host;
	r->s.host = r;
	ck_assert_msg(!dev_stack_open(&r->s, r->q, &spec, 1, &hand_ops, NULL, &lim, why,
				      sizeof(why)),
		      "%s", why);
	blk_queue_set_pdu_size(r->q, dev_stack_pdu_size(&r->s));
	ck_assert_int_ge(watched_fd, 0);
}

static struct rig *rig_open(const char *extra)
{
	struct rig *r = calloc(1, sizeof(*r));
	char spec[256];

	ck_assert_ptr_nonnull(r);
	strcpy(r->dir, "/tmp/check_log_writes.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(r->dir));
	snprintf(r->log, sizeof(r->log), "%s/log", r->dir);
	snprintf(spec, sizeof(spec), "log-writes:file=%s%s", r->log, extra);
	rig_open_spec(r, spec);
	return r;
}

/* Close the stack (the log is complete then) and keep the log to read. */
static void rig_close(struct rig *r)
{
	for (unsigned int i = 0; i < r->nr; i++)
		ck_assert_msg(r->ended[i], "request %u never ended", i);
	ck_assert(blk_queue_idle(r->q));
	dev_stack_close(&r->s);
	ck_assert_int_eq(watched_fd, -1);
	blk_cleanup_queue(r->q);
}

static void rig_free(struct rig *r)
{
	unlink(r->log);
	rmdir(r->dir);
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
	unsigned int i = r->nr++;
	struct request *rq;

	ck_assert_uint_lt(i, MAX_RQ);
	ck_assert_uint_le(nr_sectors, BUF_SECTORS);
	for (unsigned int s = 0; s < nr_sectors; s++) {
		memset(r->buf[i] + s * SECTOR_SIZE, fill, SECTOR_SIZE);
		r->buf[i][s * SECTOR_SIZE] = (unsigned char)s;
	}
	r->vec[i] = (struct bio_vec){ r->buf[i], (size_t)nr_sectors << SECTOR_SHIFT };
	bio_init(&r->bio[i], op, sector, nr_sectors << SECTOR_SHIFT, &r->vec[i],
		 op_has_data(op) ? 1 : 0);
	r->bio[i].bi_flags = flags;
	r->bio[i].bi_end_io = rig_end_io;
	r->bio[i].bi_private = r;
	r->bio[i].bi_remaining = 1; /* what submit_bio sets */
	blk_queue_lock(r->q);
	rq = blk_alloc_request(r->q, &r->bio[i]);
	ck_assert_ptr_nonnull(rq);
	rq->rq_flags |= RQF_STARTED; /* as blk_fetch_request leaves it */
	r->q->in_flight++;
	r->q->epoch_count++;
	ck_assert(dev_can_take(r->s.top));
	dev_submit(r->s.top, rq);
	blk_queue_unlock(r->q);
	ck_assert_ptr_eq(below[nr_below - 1], rq);
	return nr_below - 1;
}

/* End n sectors of the k-th request that went below. */
static void complete(struct rig *r, unsigned int k, int error, unsigned int n)
{
	blk_queue_lock(r->q);
	dev_end(r->s.bottom, below[k], error, n);
	blk_queue_unlock(r->q);
}

static void complete_all(struct rig *r, unsigned int k)
{
	complete(r, k, 0, blk_rq_sectors(below[k]));
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
	ck_assert_uint_eq(e->sector, r->bio[k].bi_sector + from);
	ck_assert_uint_eq(e->nr, nr);
	ck_assert_ptr_nonnull(e->data);
	ck_assert_msg(!memcmp(e->data, r->buf[k] + from * SECTOR_SIZE, nr * SECTOR_SIZE),
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

/* A control file of the layer. */
static const struct dev_attr *attr(struct rig *r, const char *name)
{
	for (const struct dev_attr *a = r->s.top->ops->attrs; a->name; a++)
		if (!strcmp(a->name, name))
			return a;
	ck_abort_msg("no file %s", name);
	return NULL;
}

static int store(struct rig *r, const char *name, const char *val)
{
	int ret;

	blk_queue_lock(r->q);
	ret = attr(r, name)->store(r->s.top, val);
	blk_queue_unlock(r->q);
	return ret;
}

static void show(struct rig *r, const char *name, char *buf, size_t len)
{
	blk_queue_lock(r->q);
	attr(r, name)->show(r->s.top, buf, len);
	blk_queue_unlock(r->q);
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
	ck_assert_int_eq(r->error[b], -EIO);
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
	struct rig *r = calloc(1, sizeof(*r));
	const char *specs[2] = { "model:ssd:depth=4", NULL };
	struct dev_limits lim = { .capacity = 1 << 21 };
	char why[256] = "", spec[160];
	unsigned int a;
	struct log l;

	ck_assert_ptr_nonnull(r);
	strcpy(r->dir, "/tmp/check_log_writes.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(r->dir));
	snprintf(r->log, sizeof(r->log), "%s/log", r->dir);
	snprintf(spec, sizeof(spec), "log-writes:file=%s", r->log);
	specs[1] = spec;
	blk_virtual_clock_init(&r->clock, 1000);
	r->q = blk_init_queue(no_request_fn, NULL, &r->clock);
	r->s.host_ops = &fake_host;
	ck_assert_msg(!dev_stack_open(&r->s, r->q, specs, 2, &hand_ops, NULL, &lim, why,
				      sizeof(why)),
		      "%s", why);
	blk_queue_set_pdu_size(r->q, dev_stack_pdu_size(&r->s));
	a = issue(r, REQ_OP_WRITE, 0, 0, 24, 'a');
	complete(r, a, 0, 5);
	complete(r, a, 0, 11);
	complete(r, a, 0, 8);
	ck_assert(!r->ended[a]); /* held in the model */
	r->clock.virtual_ns += 1000000000ull;
	blk_queue_lock(r->q);
	dev_stack_run_timers(&r->s, r->clock.virtual_ns);
	blk_queue_unlock(r->q);
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

static void assert_refused(const char *spec, const char *reason)
{
	char why[256] = "";

	ck_assert_int_eq(dev_check_filter(spec, why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, reason), "%s: '%s' lacks '%s'", spec, why, reason);
	ck_assert_msg(!strchr(why, '\n'), "%s: '%s' is more than a line", spec, why);
}

/* Bad args say why in a line, and no file is made, not even for good ones checked. */
START_TEST(bad_args_make_nothing)
{
	const char *path = "/tmp/check_log_writes.never";
	struct dev_stack s = { .host_ops = &fake_host };
	struct dev_limits lim = { .capacity = 1 << 21 };
	struct request_queue *q;
	struct blk_clock clock;
	const char *spec = "log-writes:file=/tmp/check_log_writes.never";
	char why[256] = "";
	struct stat st;

	unlink(path);
	assert_refused("log-writes", "log-writes: give file=LOG");
	assert_refused("log-writes:", "log-writes: give file=LOG");
	assert_refused("log-writes:file=", "log-writes: file= needs a value");
	assert_refused("log-writes:file", "log-writes: file= needs a value");
	assert_refused("log-writes:file=/tmp/check_log_writes.never,x=1", "log-writes: no key 'x'");
	assert_refused("log-writes:file=/tmp/check_log_writes.never,enable=2",
		       "log-writes: enable must be 0 or 1, not '2'");
	ck_assert_int_eq(dev_check_filter(spec, why, sizeof(why)), 0);
	ck_assert_int_ne(stat(path, &st), 0);

	blk_virtual_clock_init(&clock, 1000);
	q = blk_init_queue(no_request_fn, NULL, &clock);
	ck_assert_int_eq(dev_stack_open(&s, q, &spec, 1, &dev_sim_ops, NULL, &lim, why,
					sizeof(why)),
			 -EINVAL);
	ck_assert_msg(strstr(why, "log-writes: the sim backend has no data to log"), "%s", why);
	ck_assert_int_ne(stat(path, &st), 0);
	spec = "log-writes:file=/tmp/check_log_writes.never,base=/nonexistent/dir/base";
	s.host_ops = &fake_host;
	ck_assert_int_eq(dev_stack_open(&s, q, &spec, 1, &hand_ops, NULL, &lim, why, sizeof(why)),
			 -EINVAL);
	ck_assert_msg(strstr(why, "base= needs an image"), "%s", why);
	ck_assert_int_ne(stat(path, &st), 0);
	blk_cleanup_queue(q);
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
	struct stat st;
	int fd;

	ck_assert_int_eq(stat(r->log, &st), 0);
	r->s.aborted = true;
	rig_close(r);
	ck_assert_msg(stat(r->log, &st) && errno == ENOENT, "the log of an aborted start is left");
	rig_free(r);

	r = calloc(1, sizeof(*r));
	ck_assert_ptr_nonnull(r);
	strcpy(r->dir, "/tmp/check_log_writes.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(r->dir));
	snprintf(r->log, sizeof(r->log), "%s/log", r->dir);
	fd = open(r->log, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	{
		char spec[sizeof(r->log) + 32];

		snprintf(spec, sizeof(spec), "log-writes:file=%s", r->log);
		rig_open_spec(r, spec);
	}
	r->s.aborted = true;
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
	ck_assert_int_eq(r->error[b], 0);
	rig_close(r);
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
