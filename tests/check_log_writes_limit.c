/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_log_writes_limit.c - the log-writes filter built here with a 4 KiB
 * bound and a pwrite and fdatasync the test holds and records: past the
 * bound (bytes waiting for the writer, or held while a flush is below) the
 * stack takes no request; once the writer has caught up it wakes the host
 * through its eventfd, and the stack takes requests again.  And a super
 * block never reaches the file before a sync of every entry it counts.
 */
#include <check.h>
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>
#include <unistd.h>

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static bool gate_open;
static unsigned int held_writes;

/* What the writer did to the log, in order: a pwrite at off of len bytes, or a sync. */
struct wr_event {
	bool sync;
	off_t off;
	size_t len;
	uint64_t nr_entries; /* a super block's */
};
static struct wr_event events[512];
static unsigned int nr_events;

/* A write past fail_from fails with fail_errno (0: none), as in a file system gone full. */
static off_t fail_from;
static int fail_errno;

/* The writer's pwrite: it waits here until the test opens the gate. */
static ssize_t gated_pwrite(int fd, const void *buf, size_t len, off_t off)
{
	pthread_mutex_lock(&gate_lock);
	held_writes++;
	pthread_cond_broadcast(&gate_cond);
	while (!gate_open)
		pthread_cond_wait(&gate_cond, &gate_lock);
	if (nr_events < sizeof(events) / sizeof(events[0])) {
		uint64_t n = 0;

		if (!off && len >= 24)
			memcpy(&n, (const char *)buf + 16, sizeof(n));
		events[nr_events++] = (struct wr_event){ false, off, len, le64toh(n) };
	}
	pthread_mutex_unlock(&gate_lock);
	if (fail_errno && off + (off_t)len > fail_from) {
		errno = fail_errno;
		return -1;
	}
	return pwrite(fd, buf, len, off);
}

static int recorded_fdatasync(int fd)
{
	pthread_mutex_lock(&gate_lock);
	if (nr_events < sizeof(events) / sizeof(events[0]))
		events[nr_events++] = (struct wr_event){ .sync = true };
	pthread_mutex_unlock(&gate_lock);
	return fdatasync(fd);
}

/* The filter itself, with the test's bound, pwrite and fdatasync. */
#define LW_QUEUE_MAX 4096u
#define pwrite gated_pwrite
#define fdatasync recorded_fdatasync
#include "blkdev.h" /* the queue the test builds around the filter */
#include "log_writes_writer.c"
#include "log_writes_files.c"
#include "log_writes_entries.c"
#include "filter_log_writes.c"
#include "log_writes_io.c"
#include "log_writes_attrs.c"
#include "stack_harness.h"
#undef pwrite
#undef fdatasync

/* A backend the test ends by hand, and a host that records the watched fd. */
static struct request *below;

static int hand_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		     size_t whylen)
{
	lim->capacity = 1 << 21;
	lim->logical_block_size = SECTOR_SIZE;
	return 0;
}

static void hand_submit(struct blk_dev *dev, struct request *rq)
{
	below = rq;
}

static const struct dev_ops hand_ops = {
	.api_version = DEV_API_VERSION,
	.name = "hand",
	.backend = true,
	.open = hand_open,
	.submit = hand_submit,
};

static int watched_fd = -1;
static void (*watched_ready)(void *arg);
static void *watched_arg;

static int fake_watch(void *host, int fd, void (*ready)(void *arg), void *arg)
{
	watched_fd = fd;
	watched_ready = ready;
	watched_arg = arg;
	return 0;
}

static void fake_unwatch(void *host, int fd)
{
	watched_fd = -1;
}

static const struct dev_host_ops fake_host = { .watch_fd = fake_watch, .unwatch_fd = fake_unwatch };

static void no_request_fn(struct request_queue *q)
{
}

static void end_io(struct bio *bio, int error)
{
	*(int *)bio->bi_private = 1;
}

/* The watched fd has input within ms milliseconds. */
static bool readable(int ms)
{
	struct pollfd p = { .fd = watched_fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

/* A stack of the log-writes filter over the hand backend, logging to a new file in dir. */
static struct request_queue *open_stack(struct dev_stack *s, struct blk_clock *clock, char *dir,
					char *path, size_t len)
{
	struct dev_limits lim = { .capacity = 1 << 21 };
	char spec[128], why[256] = "";
	const char *specp = spec;
	struct request_queue *q;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, len, "%s/log", dir);
	snprintf(spec, sizeof(spec), "log-writes:file=%s", path);
	blk_virtual_clock_init(clock, 1000);
	q = blk_init_queue(no_request_fn, NULL, clock);
	s->host_ops = &fake_host;
	ck_assert_msg(!sh_stack_open(s, q, &specp, 1, &hand_ops, NULL, &lim, why, sizeof(why)),
		      "%s", why);
	blk_queue_set_pdu_size(q, dev_stack_pdu_size(s));
	return q;
}

/* A request of nr sectors at sector, submitted to the stack (lock held); it waits in below. */
static struct request *submit(struct request_queue *q, struct dev_stack *s, struct bio *bio,
			      enum req_op op, unsigned int flags, sector_t sector, unsigned int nr,
			      int *ended)
{
	static unsigned char buf[16 * SECTOR_SIZE];
	static struct bio_vec vec = { buf, sizeof(buf) };
	struct request *rq;

	bio_init(bio, op, sector, nr << SECTOR_SHIFT, &vec, op == REQ_OP_WRITE ? 1 : 0);
	bio->bi_flags = flags;
	bio->bi_end_io = end_io;
	bio->bi_private = ended;
	bio->bi_remaining = 1;
	rq = blk_alloc_request(q, bio);
	rq->rq_flags |= RQF_STARTED;
	q->in_flight++;
	q->epoch_count++;
	dev_submit(s->top, rq);
	return below;
}

/* Where in the log entry n (counted from 0) ends: entry blocks and data blocks walked. */
static off_t entry_end(const char *path, uint64_t n)
{
	struct log_write_entry e;
	off_t off = SECTOR_SIZE;
	int fd = open(path, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	for (uint64_t i = 0; i < n; i++) {
		ck_assert_int_eq(pread(fd, &e, sizeof(e), off), sizeof(e));
		off += SECTOR_SIZE;
		if (!(le64toh(e.flags) & LOG_DISCARD_FLAG))
			off += (off_t)(le64toh(e.nr_sectors) * SECTOR_SIZE);
	}
	close(fd);
	return off;
}

/* The writer has written all it was handed (5 s at most); lock held. */
static void drained(struct request_queue *q, struct dev_stack *s)
{
	struct lw_filter *lw = s->top->priv;
	bool empty = false;

	blk_queue_unlock(q);
	for (int i = 0; i < 500 && !empty; i++) {
		pthread_mutex_lock(&lw->lock);
		empty = !lw->queued;
		pthread_mutex_unlock(&lw->lock);
		if (!empty)
			usleep(10000);
	}
	blk_queue_lock(q);
	ck_assert_msg(empty, "the writer did not catch up in 5 s");
}

/*
 * Writes, a FUA write, flushes and a mark: each super block the writer
 * puts in the file counts only entries that a sync before it covered (the
 * page cache may write the super block back before the entries).
 */
START_TEST(a_super_block_counts_only_synced_entries)
{
	char dir[] = "/tmp/check_log_writes_limit.XXXXXX", path[64];
	struct dev_stack s = { 0 };
	struct blk_clock clock;
	struct request_queue *q;
	unsigned int supers = 0;
	off_t synced = 0, written = 0;
	struct bio bio;
	int ended = 0;

	gate_open = true;
	q = open_stack(&s, &clock, dir, path, sizeof(path));
	blk_queue_lock(q);
	for (int i = 0; i < 4; i++) {
		submit(q, &s, &bio, REQ_OP_WRITE, 0, (sector_t)i * 16, 8, &ended);
		dev_end(s.bottom, below, 0, 8);
		submit(q, &s, &bio, REQ_OP_WRITE, REQ_FUA, 512 + (sector_t)i * 16, 4, &ended);
		dev_end(s.bottom, below, 0, 4);
		submit(q, &s, &bio, REQ_OP_FLUSH, REQ_PREFLUSH, 0, 0, &ended);
		dev_end(s.bottom, below, 0, 0);
		drained(q, &s);
	}
	ck_assert_int_eq(lw_store_mark(s.top, "m"), 0);
	blk_queue_unlock(q);
	dev_stack_close(&s);
	blk_cleanup_queue(q);

	for (unsigned int i = 0; i < nr_events; i++) {
		const struct wr_event *ev = &events[i];

		if (ev->sync) {
			synced = written;
		} else if (ev->off) {
			written = ev->off + (off_t)ev->len > written ? ev->off + (off_t)ev->len
								     : written;
		} else {
			supers++;
			ck_assert_msg(!ev->nr_entries || synced >= entry_end(path, ev->nr_entries),
				      "a super block counts %llu entries, of which those past byte "
				      "%lld were not synced",
				      (unsigned long long)ev->nr_entries, (long long)synced);
		}
	}
	ck_assert_uint_ge(supers, 5);
	unlink(path);
	rmdir(dir);
}
END_TEST

/*
 * A write that completes while a flush is below is held until the flush
 * ends; held bytes count toward the bound, and once the flush ends and
 * the writer has caught up, the stack takes requests again.
 */
START_TEST(writes_held_for_a_flush_count_toward_the_bound)
{
	char dir[] = "/tmp/check_log_writes_limit.XXXXXX", path[64];
	struct dev_stack s = { 0 };
	struct blk_clock clock;
	struct request_queue *q;
	struct request *flush;
	struct bio fbio, wbio;
	int ended = 0;

	gate_open = true;
	q = open_stack(&s, &clock, dir, path, sizeof(path));
	blk_queue_lock(q);
	flush = submit(q, &s, &fbio, REQ_OP_FLUSH, REQ_PREFLUSH, 0, 0, &ended);
	submit(q, &s, &wbio, REQ_OP_WRITE, 0, 64, 16, &ended);
	dev_end(s.bottom, below, 0, 16);
	ck_assert_msg(!dev_can_take(s.top), "8 KiB held for a flush, and the stack takes more");
	dev_end(s.bottom, flush, 0, 0);
	blk_queue_unlock(q);
	ck_assert_msg(readable(5000), "the writer did not wake the host in 5 s");
	blk_queue_lock(q);
	watched_ready(watched_arg);
	ck_assert(dev_can_take(s.top));
	blk_queue_unlock(q);
	dev_stack_close(&s);
	blk_cleanup_queue(q);
	unlink(path);
	rmdir(dir);
}
END_TEST

START_TEST(stack_waits_for_the_writer_and_is_woken)
{
	char dir[] = "/tmp/check_log_writes_limit.XXXXXX", path[64], spec[96], why[256] = "";
	static unsigned char buf[16 * SECTOR_SIZE];
	struct dev_limits lim = { .capacity = 1 << 21 };
	struct bio_vec vec = { buf, sizeof(buf) };
	struct blk_clock clock;
	struct request_queue *q;
	struct dev_stack s = { .host_ops = &fake_host };
	const char *specp = spec;
	struct request *rq;
	struct bio bio;
	int ended = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/log", dir);
	snprintf(spec, sizeof(spec), "log-writes:file=%s", path);
	blk_virtual_clock_init(&clock, 1000);
	q = blk_init_queue(no_request_fn, NULL, &clock);
	ck_assert_msg(!sh_stack_open(&s, q, &specp, 1, &hand_ops, NULL, &lim, why, sizeof(why)),
		      "%s", why);
	blk_queue_set_pdu_size(q, dev_stack_pdu_size(&s));

	/* the writer holds the empty log's super block at the gate */
	pthread_mutex_lock(&gate_lock);
	while (!held_writes)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
	blk_queue_lock(q);
	ck_assert(dev_can_take(s.top));

	/* a FUA write of 8 KiB goes to the writer at once: past the bound */
	bio_init(&bio, REQ_OP_WRITE, 64, sizeof(buf), &vec, 1);
	bio.bi_flags = REQ_FUA;
	bio.bi_end_io = end_io;
	bio.bi_private = &ended;
	bio.bi_remaining = 1;
	rq = blk_alloc_request(q, &bio);
	rq->rq_flags |= RQF_STARTED;
	q->in_flight++;
	q->epoch_count++;
	dev_submit(s.top, rq);
	dev_end(s.bottom, below, 0, 16);
	ck_assert(ended);
	ck_assert(!dev_can_take(s.top));
	blk_queue_unlock(q);
	ck_assert(!readable(0));

	/* the writer catches up and wakes the host; the host's ready empties the fd */
	pthread_mutex_lock(&gate_lock);
	gate_open = true;
	pthread_cond_broadcast(&gate_cond);
	pthread_mutex_unlock(&gate_lock);
	ck_assert_msg(readable(5000), "the writer did not wake the host in 5 s");
	blk_queue_lock(q);
	watched_ready(watched_arg);
	ck_assert(dev_can_take(s.top));
	blk_queue_unlock(q);
	ck_assert(!readable(0));

	dev_stack_close(&s);
	blk_cleanup_queue(q);
	unlink(path);
	rmdir(dir);
}
END_TEST

/* rqdisk's record in the log's super block: false when it has none. */
static bool super_record(const char *path, uint64_t *nr_entries, struct log_write_super_rqdisk *rec)
{
	unsigned char blk[SECTOR_SIZE];
	struct log_write_super sb;
	int fd = open(path, O_RDONLY);
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	n = pread(fd, blk, sizeof(blk), 0);
	close(fd);
	ck_assert_int_eq(n, sizeof(blk));
	log_write_super_decode(blk, &sb);
	*nr_entries = sb.nr_entries;
	return log_write_super_rqdisk_decode(blk, rec);
}

/*
 * Logging stops, as the log's file system fills (a write fails) or memory
 * runs out: the super block is written once more, counting every entry
 * written whole, and says that the log stopped and why; log/stats says
 * it; the stack's close fails.
 */
START_TEST(a_stopped_log_says_so_in_its_super_block)
{
	for (int oom = 0; oom <= 1; oom++) {
		char dir[] = "/tmp/check_log_writes_limit.XXXXXX", path[64], stats[512];
		struct log_write_super_rqdisk rec;
		struct dev_stack s = { 0 };
		struct blk_clock clock;
		struct request_queue *q;
		uint64_t nr;
		struct bio bio;
		int ended = 0;

		gate_open = true;
		fail_errno = 0;
		q = open_stack(&s, &clock, dir, path, sizeof(path));
		blk_queue_lock(q);
		submit(q, &s, &bio, REQ_OP_WRITE, 0, 0, 8, &ended);
		dev_end(s.bottom, below, 0, 8);
		submit(q, &s, &bio, REQ_OP_FLUSH, REQ_PREFLUSH, 0, 0, &ended);
		dev_end(s.bottom, below, 0, 0);
		drained(q, &s);
		submit(q, &s, &bio, REQ_OP_WRITE, 0, 64, 2, &ended);
		dev_end(s.bottom, below, 0, 2);
		drained(q, &s); /* three entries written, two counted */
		if (oom) {
			lw_out_of_memory(s.top->priv);
		} else {
			fail_from = entry_end(path, 3);
			fail_errno = ENOSPC;
		}
		submit(q, &s, &bio, REQ_OP_WRITE, 0, 128, 8, &ended);
		dev_end(s.bottom, below, 0, 8);
		drained(q, &s);
		lw_show_stats(s.top, stats, sizeof(stats));
		ck_assert_msg(strstr(stats, oom ? "stopped 1\nerror Cannot allocate memory\n"
						: "stopped 1\nerror No space left on device\n"),
			      "%s", stats);
		blk_queue_unlock(q);
		ck_assert_int_lt(dev_stack_close(&s), 0);
		blk_cleanup_queue(q);

		ck_assert(super_record(path, &nr, &rec));
		ck_assert_uint_eq(nr, 3);
		ck_assert_uint_eq(rec.flags, LOG_RQDISK_ENDS | LOG_RQDISK_STOPPED);
		ck_assert_uint_eq(rec.error, oom ? ENOMEM : ENOSPC);
		fail_errno = 0;
		unlink(path);
		rmdir(dir);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("log_writes_limit");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, stack_waits_for_the_writer_and_is_woken);
	tcase_add_test(tc, a_super_block_counts_only_synced_entries);
	tcase_add_test(tc, writes_held_for_a_flush_count_toward_the_bound);
	tcase_add_test(tc, a_stopped_log_says_so_in_its_super_block);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
