/* check_uring.c - the io_uring driver on a real file: data, errors, short transfers, timers. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "blktrace.h"
#include "driver_uring.h"
#include "fake_driver.h"

#define KIB 1024u
#define MIB (1024u * 1024)
#define DISK_SIZE (4 * MIB)
#define NS_PER_MS 1000000L
#define WAIT_SECONDS 30 /* a bio not ended by then never will be */

static const char *const elevators[] = { "deadline", "none" };
#define NR_ELEVATORS (int)(sizeof(elevators) / sizeof(elevators[0]))

/*
 * Every test drives the disk through uring_driver_run(), the daemon's loop,
 * in the test's own thread: what a test submits waits as steps until the
 * loop's serve runs them, so bios go in as the daemon's do, from the loop
 * thread with deferred submission, and end there too.
 */
struct disk;
typedef void(step_fn)(struct disk *k, void *arg, uint64_t val);

struct step {
	step_fn *fn;
	void *arg;
	uint64_t val;
};

#define MAX_STEPS 1024

struct disk {
	int fd;
	struct request_queue *q;
	struct uring_driver *d;
	int idle[2]; /* the watched pipe: never any input */
	struct uring_watch w;
	struct step steps[MAX_STEPS];
	unsigned int nr_steps;
	unsigned int ended; /* bios ended since the last wait */
	unsigned int want;  /* serve says DONE once this many have */
	bool running;       /* inside uring_driver_run() */
	char trace_dir[64];
};

struct tbio {
	struct bio bio;
	struct bio_vec vec[4];
	struct disk *k;
	int ended;
	int error;
};

static const char *tmp_dir(void)
{
	const char *dir = getenv("TMPDIR");

	return dir && *dir ? dir : "/tmp";
}

/* A file of size bytes in dir, gone from the directory at once; read-only if asked. */
static int temp_file(const char *dir, off_t size, bool readonly)
{
	char path[1024];
	int fd, rofd;

	ck_assert_int_lt(snprintf(path, sizeof(path), "%s/check_uring.XXXXXX", dir), sizeof(path));
	fd = mkstemp(path);
	ck_assert_msg(fd >= 0, "mkstemp %s: %s", path, strerror(errno));
	ck_assert_int_eq(ftruncate(fd, size), 0);
	if (readonly) {
		rofd = open(path, O_RDONLY);
		ck_assert_int_ge(rofd, 0);
		close(fd);
		fd = rofd;
	}
	unlink(path);
	return fd;
}

/* serve: run the steps, then wait for completions, each of which looks again. */
static enum uring_serve disk_serve(void *arg)
{
	struct disk *k = arg;
	unsigned int n = k->nr_steps;

	k->nr_steps = 0;
	for (unsigned int i = 0; i < n; i++)
		k->steps[i].fn(k, k->steps[i].arg, k->steps[i].val);
	return k->ended >= k->want ? URING_SERVE_DONE : URING_SERVE_DRAINED;
}

/* q before the driver; the elevator (NULL: leave it) before the limits are final. */
/* model: a --model spec, or NULL for none: the model filter over the backend. */
static void disk_start_flags(struct disk *k, unsigned int entries, const char *model,
			     unsigned int flags)
{
	char why[256], spec[256];
	const char *filters[] = { spec };

	k->d = uring_driver_new(k->q, k->fd, entries, flags, why, sizeof(why));
	ck_assert_msg(k->d != NULL, "uring_driver_new: %s", why);
	ck_assert_ptr_eq(k->q->queuedata, k->d);
	if (!model || !strcmp(model, "none"))
		return;
	snprintf(spec, sizeof(spec), "model:%s", model);
	ck_assert_msg(!uring_driver_set_filters(k->d, filters, 1, DISK_SIZE >> SECTOR_SHIFT, NULL,
						why, sizeof(why)),
		      "%s", why);
}

static void disk_start_model(struct disk *k, unsigned int entries, const char *model)
{
	disk_start_flags(k, entries, model, 0);
}

static void disk_start(struct disk *k, unsigned int entries)
{
	disk_start_model(k, entries, NULL);
}

static void disk_init(struct disk *k, int fd, const char *elevator)
{
	memset(k, 0, sizeof(*k));
	k->fd = fd;
	k->q = blk_init_queue(NULL, NULL, NULL);
	ck_assert_ptr_nonnull(k->q);
	ck_assert_int_eq(elevator_init(k->q, elevator), 0);
	ck_assert_int_eq(pipe2(k->idle, O_NONBLOCK), 0);
	k->w = (struct uring_watch){ .fd = k->idle[0], .serve = disk_serve, .arg = k };
}

static void disk_open(struct disk *k, const char *elevator, const char *dir, off_t size,
		      bool readonly, unsigned int entries)
{
	disk_init(k, temp_file(dir, size, readonly), elevator);
	disk_start(k, entries);
}

static void disk_close(struct disk *k)
{
	ck_assert_uint_eq(k->nr_steps, 0);
	ck_assert(blk_queue_idle(k->q));
	ck_assert_uint_eq(k->q->in_flight, 0);
	uring_driver_free(k->d);
	blk_cleanup_queue(k->q);
	close(k->fd);
	close(k->idle[0]);
	close(k->idle[1]);
}

/* Runs in the loop: the loop looks at serve again once the test's bios have ended. */
static void tbio_end_io(struct bio *bio, int error)
{
	struct tbio *tb = bio->bi_private;
	struct disk *k = tb->k;

	tb->ended++;
	tb->error = error;
	k->ended++;
	ck_assert(k->running);
	if (k->ended >= k->want)
		uring_driver_watch_again(k->d);
}

/* A bio of bytes at sector from buf (NULL: no data), ready to submit. */
static void tbio_setup(struct tbio *tb, struct disk *k, enum req_op op, unsigned int flags,
		       sector_t sector, unsigned int bytes, void *buf)
{
	tb->vec[0] = (struct bio_vec){ buf, bytes };
	bio_init(&tb->bio, op, sector, bytes, buf ? tb->vec : NULL, buf ? 1 : 0);
	tb->bio.bi_flags = flags;
	tb->bio.bi_end_io = tbio_end_io;
	tb->bio.bi_private = tb;
	tb->k = k;
	tb->ended = 0;
	tb->error = 0;
}

/* Something for serve to do, in the order asked, when the loop next runs. */
static void disk_step(struct disk *k, step_fn *fn, void *arg, uint64_t val)
{
	ck_assert_uint_lt(k->nr_steps, MAX_STEPS);
	k->steps[k->nr_steps++] = (struct step){ fn, arg, val };
}

static void step_submit(struct disk *k, void *bio, uint64_t val)
{
	(void)val;
	submit_bio(k->q, bio);
}

static void step_plug(struct disk *k, void *arg, uint64_t val)
{
	(void)arg, (void)val;
	blk_plug_device(k->q);
}

static void step_unplug(struct disk *k, void *arg, uint64_t val)
{
	(void)arg, (void)val;
	blk_unplug(k->q);
}

static void disk_submit(struct disk *k, struct tbio *tb)
{
	disk_step(k, step_submit, &tb->bio, 0);
}

static void disk_plug(struct disk *k)
{
	disk_step(k, step_plug, NULL, 0);
}

static void disk_unplug(struct disk *k)
{
	disk_step(k, step_unplug, NULL, 0);
}

/*
 * Run the loop until n bios of k have ended since the last wait, and the
 * queue is idle (the loop returns only then).  A bio that never ends hangs
 * the loop: Check's timeout fails the test.
 */
static void wait_ended(struct disk *k, unsigned int n)
{
	k->want = n;
	k->running = true;
	uring_driver_run(k->d, &k->w);
	k->running = false;
	ck_assert_uint_eq(k->nr_steps, 0);
	ck_assert_msg(k->ended >= n, "%u of %u bios ended", k->ended, n);
	k->ended = 0;
}

/* One bio, submitted and waited for; returns how it ended. */
static int disk_io(struct disk *k, enum req_op op, unsigned int flags, sector_t sector,
		   unsigned int bytes, void *buf)
{
	struct tbio tb;

	tbio_setup(&tb, k, op, flags, sector, bytes, buf);
	disk_submit(k, &tb);
	wait_ended(k, 1);
	ck_assert_int_eq(tb.ended, 1);
	return tb.error;
}

/* What the queue's blktrace shows of a run. */
struct trace_counts {
	unsigned int issued, requeued, completed;
	unsigned int max_in_flight; /* issued, not requeued or completed, at once */
	uint64_t min_d2c_ns;        /* the shortest time from an issue to a completion */
};

static void disk_trace_start(struct disk *k)
{
	char name[300], why[256];

	ck_assert_int_lt(snprintf(k->trace_dir, sizeof(k->trace_dir), "%s/check_uring.XXXXXX",
				  tmp_dir()),
			 sizeof(k->trace_dir));
	ck_assert_ptr_nonnull(mkdtemp(k->trace_dir));
	snprintf(name, sizeof(name), "%s/t", k->trace_dir);
	ck_assert_msg(!blk_trace_setup(k->q, name, why, sizeof(why)), "%s", why);
}

/* One record's action, or 0 for a note; its pdu is skipped. */
static uint32_t trace_next(FILE *f, struct blk_io_trace *t)
{
	char pdu[256];

	if (fread(t, sizeof(*t), 1, f) != 1)
		return UINT32_MAX;
	ck_assert_uint_le(t->pdu_len, sizeof(pdu));
	ck_assert_uint_eq(fread(pdu, 1, t->pdu_len, f), t->pdu_len);
	return t->action & BLK_TC_ACT(BLK_TC_NOTIFY) ? 0 : t->action & 0xffff;
}

/* Stop tracing k and count its issues (D), requeues (R) and completions (C). */
static struct trace_counts disk_trace_stop(struct disk *k)
{
	struct trace_counts tc = { .min_d2c_ns = UINT64_MAX };
	uint64_t issued_at[64] = { 0 }; /* by sector / 64: the tests' requests are that far apart */
	char path[300];
	struct blk_io_trace t;
	unsigned int in_flight = 0;
	uint32_t a;
	FILE *f;

	ck_assert_int_eq(blk_trace_remove(k->q), 0);
	snprintf(path, sizeof(path), "%s/t.blktrace.0", k->trace_dir);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	while ((a = trace_next(f, &t)) != UINT32_MAX) {
		uint64_t *at = &issued_at[(t.sector / 64) % 64];

		if (a == __BLK_TA_ISSUE) {
			tc.issued++;
			*at = t.time;
			if (++in_flight > tc.max_in_flight)
				tc.max_in_flight = in_flight;
		} else if (a == __BLK_TA_REQUEUE) {
			tc.requeued++;
			in_flight--;
		} else if (a == __BLK_TA_COMPLETE) {
			tc.completed++;
			in_flight--;
			if (t.time - *at < tc.min_d2c_ns)
				tc.min_d2c_ns = t.time - *at;
		}
	}
	fclose(f);
	unlink(path);
	rmdir(k->trace_dir);
	return tc;
}

static void *mem_alloc(size_t size)
{
	void *p = NULL;

	ck_assert_int_eq(posix_memalign(&p, 4096, size), 0);
	return p;
}

/* A pattern that differs in every sector and with every seed. */
static void mem_fill(void *buf, size_t size, unsigned int seed)
{
	unsigned char *p = buf;

	for (size_t i = 0; i < size; i++)
		p[i] = (unsigned char)((i >> 9) * 31 + i * 7 + seed);
}

static bool mem_is_zero(const void *buf, size_t size)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < size; i++)
		if (p[i])
			return false;
	return true;
}

/* The file itself holds buf at byte off. */
static void file_has(struct disk *k, off_t off, const void *buf, size_t size)
{
	void *got = mem_alloc(size);

	ck_assert_int_eq(pread(k->fd, got, size, off), (ssize_t)size);
	ck_assert_msg(!memcmp(got, buf, size), "file differs at %lld+%zu", (long long)off, size);
	free(got);
}

static void write_pattern(struct disk *k, sector_t sector, unsigned int bytes, unsigned int seed)
{
	void *buf = mem_alloc(bytes);

	mem_fill(buf, bytes, seed);
	ck_assert_int_eq(disk_io(k, REQ_OP_WRITE, 0, sector, bytes, buf), 0);
	free(buf);
}

/* A write of three segments reads back, and so do two writes a read spans. */
START_TEST(test_write_then_read)
{
	struct disk k;
	char *a = mem_alloc(16 * KIB), *b = mem_alloc(32 * KIB), *c = mem_alloc(16 * KIB);
	char *want = mem_alloc(64 * KIB), *got = mem_alloc(64 * KIB);
	struct tbio tb[2];

	disk_open(&k, elevators[_i], tmp_dir(), DISK_SIZE, false, 0);
	mem_fill(want, 64 * KIB, 1);
	memcpy(a, want, 16 * KIB);
	memcpy(b, want + 16 * KIB, 32 * KIB);
	memcpy(c, want + 48 * KIB, 16 * KIB);
	tbio_setup(&tb[0], &k, REQ_OP_WRITE, 0, 16, 64 * KIB, a);
	tb[0].vec[1] = (struct bio_vec){ b, 32 * KIB };
	tb[0].vec[2] = (struct bio_vec){ c, 16 * KIB };
	tb[0].vec[0].bv_len = 16 * KIB;
	tb[0].bio.bi_vcnt = 3;
	disk_submit(&k, &tb[0]);
	wait_ended(&k, 1);
	ck_assert_int_eq(tb[0].error, 0);
	ck_assert_int_eq(disk_io(&k, REQ_OP_READ, 0, 16, 64 * KIB, got), 0);
	ck_assert(!memcmp(got, want, 64 * KIB));
	file_has(&k, 16 * 512, want, 64 * KIB);

	/* two plugged writes side by side (one request under deadline), one read */
	mem_fill(want, 16 * KIB, 2);
	disk_plug(&k);
	tbio_setup(&tb[0], &k, REQ_OP_WRITE, 0, 1000, 8 * KIB, want);
	disk_submit(&k, &tb[0]);
	tbio_setup(&tb[1], &k, REQ_OP_WRITE, 0, 1016, 8 * KIB, want + 8 * KIB);
	disk_submit(&k, &tb[1]);
	disk_unplug(&k);
	wait_ended(&k, 2);
	ck_assert_int_eq(tb[0].error, 0);
	ck_assert_int_eq(tb[1].error, 0);
	ck_assert_int_eq(disk_io(&k, REQ_OP_READ, 0, 1000, 16 * KIB, got), 0);
	ck_assert(!memcmp(got, want, 16 * KIB));
	file_has(&k, 1000 * 512, want, 16 * KIB);
	disk_close(&k);
	free(a), free(b), free(c), free(want), free(got);
}
END_TEST

/* Memory off the DMA alignment goes through a bounce buffer both ways. */
START_TEST(test_unaligned_memory)
{
	struct disk k;
	char *src = mem_alloc(8 * KIB + 8), *dst = mem_alloc(8 * KIB + 8);

	disk_open(&k, elevators[_i], tmp_dir(), DISK_SIZE, false, 0);
	mem_fill(src + 8, 8 * KIB, 3);
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE, 0, 40, 8 * KIB, src + 8), 0);
	ck_assert_int_eq(disk_io(&k, REQ_OP_READ, 0, 40, 8 * KIB, dst + 8), 0);
	ck_assert_uint_ge(k.q->bounced, 2);
	ck_assert(!memcmp(src + 8, dst + 8, 8 * KIB));
	file_has(&k, 40 * 512, src + 8, 8 * KIB);
	disk_close(&k);
	free(src), free(dst);
}
END_TEST

/* 1 MiB is more than one request may carry: the core splits, the pieces land. */
START_TEST(test_big_write_is_split)
{
	struct disk k;
	char *want = mem_alloc(MIB), *got = mem_alloc(MIB);

	disk_open(&k, elevators[_i], tmp_dir(), DISK_SIZE, false, 0);
	mem_fill(want, MIB, 4);
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE, 0, 2048, MIB, want), 0);
	ck_assert_uint_gt(k.q->split, 0);
	file_has(&k, MIB, want, MIB);
	ck_assert_int_eq(disk_io(&k, REQ_OP_READ, 0, 2048, MIB, got), 0);
	ck_assert(!memcmp(got, want, MIB));
	disk_close(&k);
	free(want), free(got);
}
END_TEST

/* The callback runs inside the completion, under the queue lock: read after it. */
static uint64_t ios_done(struct disk *k, enum stat_group g)
{
	uint64_t n;

	blk_queue_lock(k->q);
	n = k->q->stats.ios[g];
	blk_queue_unlock(k->q);
	return n;
}

/* A flush, and a barrier write (a core-made preflush, then the write as FUA). */
START_TEST(test_flush_and_barrier)
{
	struct disk k;
	char *buf = mem_alloc(4 * KIB);

	disk_open(&k, elevators[_i], tmp_dir(), DISK_SIZE, false, 0);
	write_pattern(&k, 0, 4 * KIB, 5);
	ck_assert_int_eq(disk_io(&k, REQ_OP_FLUSH, 0, 0, 0, NULL), 0);
	ck_assert_uint_eq(ios_done(&k, STAT_FLUSH), 1);
	mem_fill(buf, 4 * KIB, 6);
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE, REQ_BARRIER, 8, 4 * KIB, buf), 0);
	ck_assert_uint_eq(ios_done(&k, STAT_FLUSH), 2);
	file_has(&k, 8 * 512, buf, 4 * KIB);
	disk_close(&k);
	free(buf);
}
END_TEST

START_TEST(test_fua_write)
{
	struct disk k;
	char *buf = mem_alloc(12 * KIB);

	disk_open(&k, elevators[_i], tmp_dir(), DISK_SIZE, false, 0);
	mem_fill(buf, 12 * KIB, 7);
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE, REQ_FUA, 24, 12 * KIB, buf), 0);
	file_has(&k, 24 * 512, buf, 12 * KIB);
	disk_close(&k);
	free(buf);
}
END_TEST

/* Discard punches a hole: the range reads back as zeros, its neighbours keep their data. */
START_TEST(test_discard)
{
	struct disk k;
	char *want = mem_alloc(64 * KIB), *got = mem_alloc(64 * KIB);

	disk_open(&k, elevators[_i], tmp_dir(), DISK_SIZE, false, 0);
	mem_fill(want, 64 * KIB, 8);
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE, 0, 64, 64 * KIB, want), 0);
	ck_assert_int_eq(disk_io(&k, REQ_OP_DISCARD, 0, 64 + 16, 32 * KIB, NULL), 0);
	memset(want + 8 * KIB, 0, 32 * KIB);
	ck_assert_int_eq(disk_io(&k, REQ_OP_READ, 0, 64, 64 * KIB, got), 0);
	ck_assert(!memcmp(got, want, 64 * KIB));
	file_has(&k, 64 * 512, want, 64 * KIB);
	/* a barrier discard: FUA on a discard means a datasync after it */
	ck_assert_int_eq(disk_io(&k, REQ_OP_DISCARD, REQ_BARRIER, 64, 8 * KIB, NULL), 0);
	memset(want, 0, 8 * KIB);
	file_has(&k, 64 * 512, want, 64 * KIB);
	disk_close(&k);
	free(want), free(got);
}
END_TEST

/* Whether fallocate(FALLOC_FL_ZERO_RANGE) works on the file fd. */
static bool zero_range_works(int fd)
{
	if (!fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 0, 4096))
		return true;
	ck_assert_msg(errno == EOPNOTSUPP, "fallocate(ZERO_RANGE): %s", strerror(errno));
	return false;
}

/* A file of size bytes in memory (tmpfs without a mount: no ZERO_RANGE there). */
static int memory_file(off_t size)
{
	int fd = memfd_create("check_uring", 0);

	ck_assert_msg(fd >= 0, "memfd_create: %s", strerror(errno));
	ck_assert_int_eq(ftruncate(fd, size), 0);
	return fd;
}

/*
 * Write-zeroes on a file in $TMPDIR (ext4 and xfs zero ranges) and on a
 * memfd, whose shmem answers EOPNOTSUPP: the fallback writes the zeros in
 * pieces, each piece ending its whole sectors.  Which way was taken is
 * checked against what the file system says it can do.
 */
START_TEST(test_write_zeroes)
{
	bool in_memory = _i / NR_ELEVATORS;
	unsigned int size = 3 * MIB, zstart = 4 * KIB, zlen = 2 * MIB + 4 * KIB;
	char *want = mem_alloc(size), *got = mem_alloc(size);
	int fd = in_memory ? memory_file(DISK_SIZE) : temp_file(tmp_dir(), DISK_SIZE, false);
	bool zero_range = zero_range_works(fd);
	struct uring_driver_stats st;
	struct disk k;

	fprintf(stderr, "test_write_zeroes: %s: %s\n", in_memory ? "memfd" : tmp_dir(),
		zero_range ? "FALLOC_FL_ZERO_RANGE" : "the fallback, zeros written");
	if (in_memory)
		ck_assert_msg(!zero_range, "a memfd zeroes ranges now: the fallback is not tested");
	disk_init(&k, fd, elevators[_i % NR_ELEVATORS]);
	disk_start(&k, 0);
	mem_fill(want, size, 9);
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE, 0, 0, size, want), 0);
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE_ZEROES, 0, zstart / 512, zlen, NULL), 0);
	memset(want + zstart, 0, zlen);
	ck_assert_int_eq(disk_io(&k, REQ_OP_READ, 0, 0, size, got), 0);
	ck_assert(!memcmp(got, want, size));
	file_has(&k, 0, want, size);
	/* FUA zeroing: durable through a datasync after it */
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE_ZEROES, REQ_FUA, 0, 8 * KIB, NULL), 0);
	memset(want, 0, 8 * KIB);
	file_has(&k, 0, want, size);
	uring_driver_get_stats(k.d, &st);
	if (zero_range)
		ck_assert_uint_eq(st.zero_writes, 0);
	else
		ck_assert_uint_ge(st.zero_writes, 2); /* both zeroings, in one request or more */
	disk_close(&k);
	free(want), free(got);
}
END_TEST

/* 8 KiB of file, a 16 KiB read: the short read goes on, meets the end, fails with EIO. */
START_TEST(test_read_past_eof)
{
	struct disk k;
	char *want = mem_alloc(8 * KIB), *got = mem_alloc(16 * KIB);

	disk_open(&k, elevators[_i], tmp_dir(), 8 * KIB, false, 0);
	mem_fill(want, 8 * KIB, 10);
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE, 0, 0, 8 * KIB, want), 0);
	ck_assert_int_eq(disk_io(&k, REQ_OP_READ, 0, 0, 16 * KIB, got), -EIO);
	ck_assert(!memcmp(got, want, 8 * KIB)); /* the part before the end was read */
	ck_assert_int_eq(disk_io(&k, REQ_OP_READ, 0, 16, 8 * KIB, got), -EIO);
	ck_assert_int_eq(disk_io(&k, REQ_OP_READ, 0, 8, 4 * KIB, got), 0);
	disk_close(&k);
	free(want), free(got);
}
END_TEST

/*
 * Loop tests over both elevators, without a model and then under one: the
 * elevator of run i, and the disk started with the model of run i.
 */
static const char *elevator_of(int i)
{
	return elevators[i % NR_ELEVATORS];
}

static void disk_open_modelled(struct disk *k, int i, off_t size)
{
	disk_init(k, temp_file(tmp_dir(), size, false), elevator_of(i));
	disk_start_model(k, 0, i >= NR_ELEVATORS ? "ssd:read_us=1000,write_us=1000" : NULL);
}

/*
 * The file ends 100 bytes into sector 16.  Two 8 KiB reads (one request
 * under deadline): the one before the end succeeds with its data, the one
 * across it fails.  The kernel's first answer is short by a part sector:
 * the continuation starts inside sector 16, not over again.  Under a model
 * too, where nothing ends before the modelled time: the sectors read before
 * the error still end as done.
 */
START_TEST(test_short_read_is_continued)
{
	unsigned int fsize = 8 * KIB + 100;
	char *want = mem_alloc(fsize), *got = mem_alloc(16 * KIB);
	struct tbio tb[2];
	struct disk k;

	disk_open_modelled(&k, _i, fsize);
	mem_fill(want, fsize, 11);
	ck_assert_int_eq(pwrite(k.fd, want, fsize, 0), (ssize_t)fsize);
	disk_plug(&k);
	tbio_setup(&tb[0], &k, REQ_OP_READ, 0, 0, 8 * KIB, got);
	disk_submit(&k, &tb[0]);
	tbio_setup(&tb[1], &k, REQ_OP_READ, 0, 16, 8 * KIB, got + 8 * KIB);
	disk_submit(&k, &tb[1]);
	disk_unplug(&k);
	wait_ended(&k, 2);
	if (!strcmp(elevator_of(_i), "deadline"))
		ck_assert_uint_eq(k.q->stats.merges[STAT_READ], 1);
	ck_assert_int_eq(tb[0].ended, 1);
	ck_assert_int_eq(tb[0].error, 0);
	ck_assert(!memcmp(got, want, 8 * KIB));
	ck_assert_int_eq(tb[1].ended, 1);
	ck_assert_int_eq(tb[1].error, -EIO);
	ck_assert(!memcmp(got + 8 * KIB, want + 8 * KIB, 100));
	disk_close(&k);
	free(want), free(got);
}
END_TEST

static void set_fsize_limit(rlim_t limit, struct rlimit *old)
{
	struct rlimit rl;

	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, old), 0);
	rl = *old;
	rl.rlim_cur = limit;
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
}

/*
 * RLIMIT_FSIZE makes the kernel write short, deterministically: up to
 * the limit, then EFBIG.  The bio before the limit succeeds and lands, the
 * one across it gets EFBIG, and the part sector before the limit lands too.
 * Under a model as well: the written bio is not failed with the rest.
 */
START_TEST(test_short_write_is_continued)
{
	unsigned int limit = 8 * KIB + 100;
	char *want = mem_alloc(16 * KIB);
	struct rlimit old;
	struct tbio tb[2];
	struct disk k;

	disk_open_modelled(&k, _i, DISK_SIZE);
	mem_fill(want, 16 * KIB, 12);
	signal(SIGXFSZ, SIG_IGN);
	set_fsize_limit(limit, &old);
	disk_plug(&k);
	tbio_setup(&tb[0], &k, REQ_OP_WRITE, 0, 0, 8 * KIB, want);
	disk_submit(&k, &tb[0]);
	tbio_setup(&tb[1], &k, REQ_OP_WRITE, 0, 16, 8 * KIB, want + 8 * KIB);
	disk_submit(&k, &tb[1]);
	disk_unplug(&k);
	wait_ended(&k, 2);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
	if (!strcmp(elevator_of(_i), "deadline"))
		ck_assert_uint_eq(k.q->stats.merges[STAT_WRITE], 1);
	ck_assert_int_eq(tb[0].error, 0);
	ck_assert_int_eq(tb[1].error, -EFBIG);
	file_has(&k, 0, want, limit);
	disk_close(&k);
	free(want);
}
END_TEST

/* What the kernel answers reaches the bio: writes on a read-only file get EBADF. */
START_TEST(test_kernel_error_reaches_the_bio)
{
	struct disk k;
	char *buf = mem_alloc(8 * KIB);

	disk_open(&k, elevators[_i], tmp_dir(), DISK_SIZE, true, 0);
	mem_fill(buf, 8 * KIB, 13);
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE, 0, 0, 8 * KIB, buf), -EBADF);
	ck_assert_int_eq(disk_io(&k, REQ_OP_DISCARD, 0, 0, 8 * KIB, NULL), -EBADF);
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE_ZEROES, 0, 0, 8 * KIB, NULL), -EBADF);
	ck_assert_int_eq(disk_io(&k, REQ_OP_READ, 0, 0, 8 * KIB, buf), 0);
	ck_assert(mem_is_zero(buf, 8 * KIB));
	disk_close(&k);
	free(buf);
}
END_TEST

/*
 * Far more requests than SQEs, let out in one batch by an unplug: the SQ
 * fills, goes out to make room, and more are in flight than the CQ holds.
 * Each request is issued once: none is taken and given back for want of
 * an SQE.
 */
START_TEST(test_small_ring_deep_queue)
{
	enum { N = 256, STRIDE = 37 };
	struct tbio *tb = calloc(N, sizeof(*tb));
	char *want = mem_alloc(N * 4 * KIB), *got = mem_alloc(N * 4 * KIB);
	struct trace_counts tc;
	struct disk k;

	ck_assert_ptr_nonnull(tb);
	disk_init(&k, temp_file(tmp_dir(), DISK_SIZE, false), elevators[_i]);
	k.q->limits.nomerges = BLK_MERGES_NONE; /* N requests, not a few big ones */
	k.q->unplug_thresh = N + 1;
	disk_start(&k, 4);
	disk_trace_start(&k);
	mem_fill(want, N * 4 * KIB, 14);
	disk_plug(&k);
	for (unsigned int i = 0; i < N; i++) {
		unsigned int blk = i * STRIDE % N;

		tbio_setup(&tb[i], &k, REQ_OP_WRITE, 0, blk * 8, 4 * KIB, want + blk * 4 * KIB);
		disk_submit(&k, &tb[i]);
	}
	disk_unplug(&k);
	wait_ended(&k, N);
	for (unsigned int i = 0; i < N; i++)
		ck_assert_int_eq(tb[i].error, 0);
	file_has(&k, 0, want, N * 4 * KIB);
	disk_plug(&k);
	for (unsigned int i = 0; i < N; i++) {
		tbio_setup(&tb[i], &k, REQ_OP_READ, 0, i * 8, 4 * KIB, got + i * 4 * KIB);
		disk_submit(&k, &tb[i]);
	}
	disk_unplug(&k);
	wait_ended(&k, N);
	for (unsigned int i = 0; i < N; i++)
		ck_assert_int_eq(tb[i].error, 0);
	ck_assert(!memcmp(got, want, N * 4 * KIB));
	tc = disk_trace_stop(&k);
	ck_assert_msg(tc.issued == 2 * N && tc.requeued == 0 && tc.completed == 2 * N,
		      "%u D, %u R, %u C for %u requests", tc.issued, tc.requeued, tc.completed,
		      2 * N);
	disk_close(&k);
	free(tb), free(want), free(got);
}
END_TEST

/* An elevator that holds every request until a set time, then lets them go in order. */
struct hold_data {
	struct rq_list list;
	uint64_t release_at;
	bool late_once; /* the next ask is answered "at the time you asked": past already */
};

static int hold_init(struct elevator_queue *e)
{
	struct hold_data *hd = calloc(1, sizeof(*hd));

	if (!hd)
		return -1;
	TAILQ_INIT(&hd->list);
	e->elevator_data = hd;
	return 0;
}

static void hold_exit(struct elevator_queue *e)
{
	struct hold_data *hd = e->elevator_data;

	ck_assert(TAILQ_EMPTY(&hd->list));
	free(hd);
}

static void hold_add(struct elevator_queue *e, struct request *rq)
{
	struct hold_data *hd = e->elevator_data;

	TAILQ_INSERT_TAIL(&hd->list, rq, queuelist);
}

static struct request *hold_dispatch(struct elevator_queue *e, uint64_t now)
{
	struct hold_data *hd = e->elevator_data;
	struct request *rq = TAILQ_FIRST(&hd->list);

	if (!rq)
		return NULL;
	if (hd->late_once) {
		hd->late_once = false;
		elv_schedule_dispatch(e, now);
		return NULL;
	}
	if (now < hd->release_at) {
		elv_schedule_dispatch(e, hd->release_at);
		return NULL;
	}
	TAILQ_REMOVE(&hd->list, rq, queuelist);
	return rq;
}

static bool hold_has_work(const struct elevator_queue *e)
{
	const struct hold_data *hd = e->elevator_data;

	return !TAILQ_EMPTY(&hd->list);
}

static const struct elevator_type hold_type = {
	.size = sizeof(struct elevator_type),
	.api_version = ELV_API_VERSION,
	.elevator_name = "hold",
	.init_queue = hold_init,
	.exit_queue = hold_exit,
	.add_request = hold_add,
	.dispatch_request = hold_dispatch,
	.has_work = hold_has_work,
};

static void step_hold(struct disk *k, void *arg, uint64_t when)
{
	(void)arg;
	blk_queue_lock(k->q);
	((struct hold_data *)k->q->elevator->elevator_data)->release_at = when;
	blk_queue_unlock(k->q);
}

/* From the next step on, the elevator holds every request until when. */
static void hold_until(struct disk *k, uint64_t when)
{
	disk_step(k, step_hold, NULL, when);
}

static uint64_t now_ns(void)
{
	return blk_clock_now(&blk_real_clock);
}

/*
 * Nothing but the driver's timer runs the queue once the elevator has
 * said "later": a held read ends after its time.  A later request asking
 * for an earlier time moves the armed timer forward (5 s to 100 ms).
 */
START_TEST(test_timed_dispatch)
{
	char *buf = mem_alloc(8 * KIB);
	struct tbio tb[2];
	struct disk k;
	uint64_t start;

	disk_init(&k, temp_file(tmp_dir(), DISK_SIZE, false), "none");
	k.q->elevator = elevator_alloc(k.q, &hold_type);
	ck_assert_ptr_nonnull(k.q->elevator);
	disk_start(&k, 0);

	start = now_ns();
	hold_until(&k, start + 50 * NSEC_PER_MSEC);
	ck_assert_int_eq(disk_io(&k, REQ_OP_READ, 0, 0, 4 * KIB, buf), 0);
	ck_assert_uint_ge(now_ns(), start + 50 * NSEC_PER_MSEC);

	start = now_ns();
	hold_until(&k, start + 5000 * NSEC_PER_MSEC);
	tbio_setup(&tb[0], &k, REQ_OP_READ, 0, 0, 4 * KIB, buf);
	disk_submit(&k, &tb[0]);
	hold_until(&k, start + 100 * NSEC_PER_MSEC);
	tbio_setup(&tb[1], &k, REQ_OP_READ, 0, 8, 4 * KIB, buf + 4 * KIB);
	disk_submit(&k, &tb[1]);
	wait_ended(&k, 2);
	ck_assert_int_eq(tb[0].error, 0);
	ck_assert_int_eq(tb[1].error, 0);
	ck_assert_uint_ge(now_ns(), start + 100 * NSEC_PER_MSEC);
	ck_assert_uint_lt(now_ns(), start + 3000 * NSEC_PER_MSEC);
	disk_close(&k);
	free(buf);
}
END_TEST

/*
 * An elevator may ask for a time that has passed by the time the driver
 * looks (a short idle on a busy machine).  With nothing in flight, only the
 * driver's timer can run the queue again: the read still ends.
 */
START_TEST(test_timed_dispatch_already_past)
{
	char *buf = mem_alloc(4 * KIB);
	struct disk k;

	disk_init(&k, temp_file(tmp_dir(), DISK_SIZE, false), "none");
	k.q->elevator = elevator_alloc(k.q, &hold_type);
	ck_assert_ptr_nonnull(k.q->elevator);
	disk_start(&k, 0);
	blk_queue_lock(k.q);
	((struct hold_data *)k.q->elevator->elevator_data)->late_once = true;
	blk_queue_unlock(k.q);
	ck_assert_int_eq(disk_io(&k, REQ_OP_READ, 0, 0, 4 * KIB, buf), 0);
	disk_close(&k);
	free(buf);
}
END_TEST

/* n 4 KiB reads 64 sectors apart at once (n <= 16), under the elevator and the model. */
static struct trace_counts modelled_reads(const char *elevator, const char *spec, unsigned int n,
					  unsigned int flags, uint64_t *ns)
{
	char *buf = mem_alloc(16 * 4 * KIB);
	struct trace_counts tc;
	struct tbio tb[16];
	struct disk k;
	uint64_t start;

	ck_assert_uint_le(n, 16);
	disk_init(&k, temp_file(tmp_dir(), DISK_SIZE, false), elevator);
	disk_start_flags(&k, 0, spec, flags);
	disk_trace_start(&k);
	for (unsigned int i = 0; i < n; i++) {
		tbio_setup(&tb[i], &k, REQ_OP_READ, 0, 64 * i, 4 * KIB, buf + 4 * KIB * i);
		disk_submit(&k, &tb[i]);
	}
	start = now_ns();
	wait_ended(&k, n);
	if (ns)
		*ns = now_ns() - start;
	tc = disk_trace_stop(&k);
	for (unsigned int i = 0; i < n; i++)
		ck_assert_int_eq(tb[i].error, 0);
	disk_close(&k);
	free(buf);
	return tc;
}

static const char *const all_elevators[] = { "none", "noop", "deadline", "cfq",
					     "as",   "sstf", "clook", "kyber", "bfq" };
#define NR_ALL_ELEVATORS (int)(sizeof(all_elevators) / sizeof(all_elevators[0]))

/*
 * Look before taking: under a model of depth 1, and of depth 4, sixteen
 * reads at once are sixteen issues, no requeue and sixteen completions,
 * whatever the elevator.  What the device cannot take yet waits in the
 * elevator; it is never issued and taken back.
 */
START_TEST(test_model_depth_issues_each_once)
{
	const char *e = all_elevators[_i];
	struct trace_counts one = modelled_reads(e, "ssd:read_us=1000,depth=1", 16, 0, NULL);
	struct trace_counts four = modelled_reads(e, "ssd:read_us=1000,depth=4", 16, 0, NULL);

	ck_assert_msg(one.issued == 16 && one.requeued == 0 && one.completed == 16,
		      "%s, depth 1: %u D, %u R, %u C", e, one.issued, one.requeued, one.completed);
	ck_assert_uint_eq(one.max_in_flight, 1);
	ck_assert_msg(four.issued == 16 && four.requeued == 0 && four.completed == 16,
		      "%s, depth 4: %u D, %u R, %u C", e, four.issued, four.requeued,
		      four.completed);
	ck_assert_uint_le(four.max_in_flight, 4);
}
END_TEST

/*
 * A request ends no earlier than its modelled time, and the driver keeps no
 * more in flight than the model's depth: one at a time, four 30 ms reads take
 * 120 ms; under depth 4 all four are in flight at once.
 */
START_TEST(test_model_times_and_depth)
{
	uint64_t ns;
	struct trace_counts one = modelled_reads("noop", "ssd:read_us=30000,depth=1", 4, 0, &ns);
	struct trace_counts four;

	ck_assert_uint_ge(ns, 120 * NSEC_PER_MSEC);
	ck_assert_uint_ge(one.min_d2c_ns, 30 * NSEC_PER_MSEC);
	ck_assert_uint_eq(one.max_in_flight, 1);
	four = modelled_reads("noop", "ssd:read_us=30000,depth=4", 4, 0, &ns);
	ck_assert_uint_ge(ns, 30 * NSEC_PER_MSEC);
	ck_assert_uint_ge(four.min_d2c_ns, 30 * NSEC_PER_MSEC);
	ck_assert_uint_eq(four.max_in_flight, 4);
}
END_TEST

/*
 * URING_DRIVER_NULL: every request ends without error and the file is never
 * touched: writes and discards leave it as it was, a read leaves its memory
 * as it was, and all of them are counted as done.
 */
START_TEST(test_null_does_no_io)
{
	char *want = mem_alloc(64 * KIB), *buf = mem_alloc(64 * KIB);
	struct disk k;

	disk_init(&k, temp_file(tmp_dir(), DISK_SIZE, false), elevators[_i]);
	mem_fill(want, 64 * KIB, 11);
	ck_assert_int_eq(pwrite(k.fd, want, 64 * KIB, 0), 64 * KIB);
	disk_start_flags(&k, 0, NULL, URING_DRIVER_NULL);
	mem_fill(buf, 64 * KIB, 12);
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE, 0, 0, 64 * KIB, buf), 0);
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE, REQ_BARRIER, 8, 4 * KIB, buf), 0);
	ck_assert_int_eq(disk_io(&k, REQ_OP_DISCARD, 0, 16, 8 * KIB, NULL), 0);
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE_ZEROES, 0, 32, 8 * KIB, NULL), 0);
	ck_assert_int_eq(disk_io(&k, REQ_OP_FLUSH, 0, 0, 0, NULL), 0);
	memset(buf, 0xa5, 64 * KIB);
	ck_assert_int_eq(disk_io(&k, REQ_OP_READ, 0, 0, 64 * KIB, buf), 0);
	for (size_t i = 0; i < 64 * KIB; i++)
		ck_assert_uint_eq((unsigned char)buf[i], 0xa5);
	file_has(&k, 0, want, 64 * KIB);
	ck_assert_uint_eq(ios_done(&k, STAT_READ), 1);
	ck_assert_uint_ge(ios_done(&k, STAT_WRITE), 2);
	ck_assert_uint_ge(ios_done(&k, STAT_FLUSH), 2); /* the barrier's preflush, and the flush */
	disk_close(&k);
	free(want), free(buf);
}
END_TEST

/*
 * A backend as libnbd's or librbd's would be: not io_uring-native.  Its
 * requests go to a worker thread, which does them and says so on an
 * eventfd; the loop polls the eventfd (dev_host_ops.watch_fd) and the
 * backend ends what is done there, on the loop's own thread.
 */
struct evfd_backend {
	struct blk_dev *dev;
	int efd;
	pthread_t worker, loop;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct request *todo[64], *done[64];
	unsigned int nr_todo, nr_done;
	bool stop;
	unsigned int ready_calls, ended, ended_off_loop;
};

static struct evfd_backend evb;
static bool evfd_unwatch_in_ready; /* the server hung up: ready stops watching, as a backend would */

static void *evfd_worker(void *arg)
{
	struct evfd_backend *b = arg;
	uint64_t one = 1;

	pthread_mutex_lock(&b->lock);
	for (;;) {
		while (!b->nr_todo && !b->stop)
			pthread_cond_wait(&b->cond, &b->lock);
		if (b->stop)
			break;
		pthread_mutex_unlock(&b->lock);
		usleep(1000); /* the server's time */
		pthread_mutex_lock(&b->lock);
		while (b->nr_todo)
			b->done[b->nr_done++] = b->todo[--b->nr_todo];
		ck_assert_int_eq(write(b->efd, &one, sizeof(one)), (ssize_t)sizeof(one));
	}
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

/* The eventfd fired: end, on the loop's thread, what the worker has done. */
static void evfd_ready(void *arg)
{
	struct evfd_backend *b = arg;
	struct request *done[64];
	unsigned int n;
	uint64_t v;

	b->ready_calls++;
	ck_assert_int_eq(read(b->efd, &v, sizeof(v)), (ssize_t)sizeof(v));
	pthread_mutex_lock(&b->lock);
	n = b->nr_done;
	memcpy(done, b->done, n * sizeof(done[0]));
	b->nr_done = 0;
	pthread_mutex_unlock(&b->lock);
	for (unsigned int i = 0; i < n; i++) {
		struct bio *bio;

		if (!pthread_equal(pthread_self(), b->loop))
			b->ended_off_loop++;
		if (done[i]->cmd_op == REQ_OP_READ)
			rq_for_each_bio(bio, done[i])
				memset(bio->bi_io_vec[0].bv_base, 0x5e, bio->bi_io_vec[0].bv_len);
		b->ended++;
		dev_end(b->dev, done[i], 0, blk_rq_sectors(done[i]));
	}
	if (evfd_unwatch_in_ready && b->ended)
		b->dev->stack->host_ops->unwatch_fd(b->dev->stack->host, b->efd);
}

static int evfd_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		     size_t whylen)
{
	struct dev_stack *s = dev->stack;

	memset(&evb, 0, sizeof(evb));
	evb.dev = dev;
	evb.loop = pthread_self();
	evb.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ck_assert_int_ge(evb.efd, 0);
	pthread_mutex_init(&evb.lock, NULL);
	pthread_cond_init(&evb.cond, NULL);
	ck_assert_int_eq(pthread_create(&evb.worker, NULL, evfd_worker, &evb), 0);
	ck_assert_ptr_nonnull(s->host_ops);
	return s->host_ops->watch_fd(s->host, evb.efd, evfd_ready, &evb);
}

static void evfd_close(struct blk_dev *dev)
{
	struct dev_stack *s = dev->stack;

	s->host_ops->unwatch_fd(s->host, evb.efd);
	pthread_mutex_lock(&evb.lock);
	evb.stop = true;
	pthread_cond_signal(&evb.cond);
	pthread_mutex_unlock(&evb.lock);
	pthread_join(evb.worker, NULL);
	close(evb.efd);
}

static bool evfd_can_take(struct blk_dev *dev)
{
	return evb.nr_todo + evb.nr_done < 32; /* the loop alone adds: a look without the lock */
}

static void evfd_submit(struct blk_dev *dev, struct request *rq)
{
	pthread_mutex_lock(&evb.lock);
	evb.todo[evb.nr_todo++] = rq;
	pthread_cond_signal(&evb.cond);
	pthread_mutex_unlock(&evb.lock);
}

static const struct dev_ops evfd_ops = {
	.api_version = DEV_API_VERSION,
	.name = "evfd",
	.backend = true,
	.open = evfd_open,
	.close = evfd_close,
	.can_take = evfd_can_take,
	.submit = evfd_submit,
};

/* Sixteen reads under the model filter, over the eventfd backend: all end, on the loop's thread. */
START_TEST(test_fd_backend_ends_on_the_loop)
{
	const char *filters[] = { "model:ssd:read_us=100" };
	char *buf = mem_alloc(16 * 4 * KIB), why[256];
	struct tbio tb[16];
	struct disk k;

	disk_init(&k, temp_file(tmp_dir(), DISK_SIZE, false), elevators[_i]);
	disk_start(&k, 0);
	ck_assert_msg(!uring_driver_set_stack(k.d, filters, (unsigned int)_i, &evfd_ops, NULL,
					      DISK_SIZE >> SECTOR_SHIFT, why, sizeof(why)),
		      "%s", why);
	memset(buf, 0, 16 * 4 * KIB);
	for (unsigned int i = 0; i < 16; i++) {
		tbio_setup(&tb[i], &k, REQ_OP_READ, 0, 64 * i, 4 * KIB, buf + 4 * KIB * i);
		disk_submit(&k, &tb[i]);
	}
	wait_ended(&k, 16);
	for (unsigned int i = 0; i < 16; i++) {
		ck_assert_int_eq(tb[i].ended, 1);
		ck_assert_int_eq(tb[i].error, 0);
	}
	for (size_t i = 0; i < 16 * 4 * KIB; i++)
		ck_assert_uint_eq((unsigned char)buf[i], 0x5e);
	ck_assert_uint_ge(evb.ready_calls, 1);
	ck_assert_uint_eq(evb.ended_off_loop, 0);
	disk_close(&k);
	ck_assert_uint_eq(evb.ended, 16); /* no merges: 64 sectors apart */
	free(buf);
}
END_TEST

/* A backend that stops watching its fd from inside ready (a server that hung up). */
START_TEST(test_fd_backend_unwatches_in_ready)
{
	char *buf = mem_alloc(4 * KIB), why[256];
	struct tbio tb;
	struct disk k;

	evfd_unwatch_in_ready = true;
	disk_init(&k, temp_file(tmp_dir(), DISK_SIZE, false), "none");
	disk_start(&k, 0);
	ck_assert_msg(!uring_driver_set_stack(k.d, NULL, 0, &evfd_ops, NULL,
					      DISK_SIZE >> SECTOR_SHIFT, why, sizeof(why)),
		      "%s", why);
	tbio_setup(&tb, &k, REQ_OP_READ, 0, 0, 4 * KIB, buf);
	disk_submit(&k, &tb);
	wait_ended(&k, 1);
	ck_assert_int_eq(tb.ended, 1);
	disk_close(&k);
	evfd_unwatch_in_ready = false;
	free(buf);
}
END_TEST

/*
 * A backend on a socket polled for input, then for output too, as libnbd's
 * is while it has bytes to send: nothing is written to the socket's other
 * end, so only the poll for output, armed anew, ends the request.
 */
static struct {
	struct blk_dev *dev;
	int sv[2];
	struct request *rq;
	unsigned int revents;
} sockb;

static void sock_ready(void *arg, unsigned int revents)
{
	struct request *rq = sockb.rq;
	struct dev_stack *s = sockb.dev->stack;

	sockb.revents |= revents;
	if (!(revents & POLLOUT) || !rq)
		return;
	sockb.rq = NULL;
	s->host_ops->set_fd_events(s->host, sockb.sv[0], POLLIN);
	dev_end(sockb.dev, rq, 0, blk_rq_sectors(rq));
}

static int sock_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		     size_t whylen)
{
	struct dev_stack *s = dev->stack;

	memset(&sockb, 0, sizeof(sockb));
	sockb.dev = dev;
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
				    sockb.sv), 0);
	ck_assert_ptr_nonnull(s->host_ops->watch_fd_events);
	return s->host_ops->watch_fd_events(s->host, sockb.sv[0], POLLIN, sock_ready, NULL);
}

static void sock_close(struct blk_dev *dev)
{
	dev->stack->host_ops->unwatch_fd(dev->stack->host, sockb.sv[0]);
	close(sockb.sv[0]);
	close(sockb.sv[1]);
}

static bool sock_can_take(struct blk_dev *dev)
{
	return !sockb.rq;
}

static void sock_submit(struct blk_dev *dev, struct request *rq)
{
	sockb.rq = rq;
	dev->stack->host_ops->set_fd_events(dev->stack->host, sockb.sv[0], POLLIN | POLLOUT);
}

static const struct dev_ops sock_ops = {
	.api_version = DEV_API_VERSION,
	.name = "sock",
	.backend = true,
	.open = sock_open,
	.close = sock_close,
	.can_take = sock_can_take,
	.submit = sock_submit,
};

/* Three reads, one at a time: each ends from the poll for output its submit asked for. */
START_TEST(test_fd_backend_polls_for_output)
{
	char *buf = mem_alloc(3 * 4 * KIB), why[256];
	struct tbio tb[3];
	struct disk k;

	disk_init(&k, temp_file(tmp_dir(), DISK_SIZE, false), "none");
	disk_start(&k, 0);
	ck_assert_msg(!uring_driver_set_stack(k.d, NULL, 0, &sock_ops, NULL,
					      DISK_SIZE >> SECTOR_SHIFT, why, sizeof(why)),
		      "%s", why);
	for (unsigned int i = 0; i < 3; i++) {
		tbio_setup(&tb[i], &k, REQ_OP_READ, 0, 64 * i, 4 * KIB, buf + 4 * KIB * i);
		disk_submit(&k, &tb[i]);
	}
	wait_ended(&k, 3);
	for (unsigned int i = 0; i < 3; i++)
		ck_assert_int_eq(tb[i].error, 0);
	ck_assert_uint_eq(sockb.revents & POLLIN, 0); /* nothing came to read */
	ck_assert_uint_ne(sockb.revents & POLLOUT, 0);
	disk_close(&k);
	free(buf);
}
END_TEST

/* A model still times a null device: four 30 ms reads one at a time take 120 ms. */
START_TEST(test_null_keeps_the_model_time)
{
	uint64_t ns;
	struct trace_counts tc =
		modelled_reads("noop", "ssd:read_us=30000,depth=1", 4, URING_DRIVER_NULL, &ns);

	ck_assert_uint_ge(ns, 120 * NSEC_PER_MSEC);
	ck_assert_uint_ge(tc.min_d2c_ns, 30 * NSEC_PER_MSEC);
	ck_assert_uint_eq(tc.max_in_flight, 1);
}
END_TEST

/* The event loop: a pipe stands for the FUSE device, each byte on it for a 4 KiB write. */
struct feed {
	struct disk *k;
	int rfd;
	struct tbio *tb;
	char *data;
	unsigned int n, next;
	bool switch_first;     /* switch elevators with the first batch in flight */
	unsigned int switched; /* times the switch was reported done */
	volatile sig_atomic_t *signalled;
};

static void feed_write(struct feed *f)
{
	unsigned int blk = f->next * 37 % f->n;

	tbio_setup(&f->tb[f->next], f->k, REQ_OP_WRITE, 0, blk * 8, 4 * KIB,
		   f->data + blk * 4 * KIB);
	submit_bio(f->k->q, &f->tb[f->next].bio);
	f->next++;
}

static void feed_switched(struct request_queue *q, void *arg)
{
	struct feed *f = arg;

	ck_assert_ptr_null(q->elevator);
	ck_assert_uint_eq(q->in_flight, 0);
	f->switched++;
}

/* Nothing waits: the loop goes on serving, and the last completion ends the switch. */
static void feed_switch(struct feed *f)
{
	struct request_queue *q = f->k->q;
	char why[256];

	blk_queue_lock(q);
	ck_assert_int_eq(elevator_switch(q, "none", why, sizeof(why)), 0);
	ck_assert_msg(q->switch_pending, "the first batch was not in flight");
	q->switch_done = feed_switched;
	q->switch_arg = f;
	blk_queue_unlock(q);
}

static enum uring_serve feed_serve(void *arg)
{
	struct feed *f = arg;
	char c[64];
	ssize_t got;

	if (f->signalled && *f->signalled)
		return URING_SERVE_DONE;
	got = read(f->rfd, c, sizeof(c));
	if (got < 0 && errno == EAGAIN)
		return URING_SERVE_DRAINED;
	ck_assert_int_ge(got, 0);
	if (!got)
		return URING_SERVE_DONE;
	for (ssize_t i = 0; i < got && f->next < f->n; i++)
		feed_write(f);
	if (f->switch_first) {
		f->switch_first = false;
		feed_switch(f);
	}
	return URING_SERVE_MORE;
}

struct feeder {
	int wfd;
	unsigned int n;
	long pause_ns;
};

/* Writes the bytes in bursts with pauses, so the loop sleeps on its poll between them. */
static void *feeder_run(void *arg)
{
	struct feeder *fd = arg;
	struct timespec pause = { 0, fd->pause_ns };

	for (unsigned int sent = 0; sent < fd->n; sent += 16) {
		char burst[16] = { 0 };

		ck_assert_int_eq(write(fd->wfd, burst, 16), 16);
		nanosleep(&pause, NULL);
	}
	close(fd->wfd);
	return NULL;
}

/* How the feeder paces its bursts (0: all input is there before the loop runs). */
struct feed_pace {
	long pause_ns;
	unsigned int idle_poll_us; /* how long the loop polls when idle */
};

static const struct feed_pace feed_2ms = { 2 * NS_PER_MS, 0 };

/* uring_driver_run() with w, for a test whose own serve submits the bios. */
static void disk_run(struct disk *k, const struct uring_watch *w)
{
	k->want = UINT_MAX; /* serve decides when it is done */
	k->running = true;
	uring_driver_run(k->d, w);
	k->running = false;
}

/* 256 writes through the loop, fed by a pipe; returns what the loop decided. */
static struct uring_driver_stats feed_run(const char *elevator, unsigned int entries,
					  const char *model, bool switch_first,
					  const struct feed_pace *pace)
{
	enum { N = 256 };
	struct tbio *tb = calloc(N, sizeof(*tb));
	char *data = mem_alloc(N * 4 * KIB);
	struct feed f = { .tb = tb, .data = data, .n = N, .switch_first = switch_first };
	struct feeder fr = { .n = N, .pause_ns = pace->pause_ns };
	struct uring_watch w = { .serve = feed_serve, .arg = &f,
				 .idle_poll_us = pace->idle_poll_us };
	struct uring_driver_stats st;
	struct disk k;
	pthread_t t;
	int p[2];

	ck_assert_ptr_nonnull(tb);
	ck_assert_int_eq(pipe2(p, O_NONBLOCK), 0);
	f.rfd = w.fd = p[0];
	fr.wfd = p[1];
	disk_init(&k, temp_file(tmp_dir(), DISK_SIZE, false), elevator);
	k.q->limits.nomerges = BLK_MERGES_NONE;
	disk_start_model(&k, entries, model);
	f.k = &k;
	mem_fill(data, N * 4 * KIB, 21);
	if (pace->pause_ns)
		ck_assert_int_eq(pthread_create(&t, NULL, feeder_run, &fr), 0);
	else
		feeder_run(&fr); /* the pipe holds it all */
	disk_run(&k, &w);
	/* it returns only once every bio has ended, each exactly once */
	ck_assert_uint_eq(f.next, N);
	for (unsigned int i = 0; i < N; i++) {
		ck_assert_msg(tb[i].ended == 1, "bio %u ended %d times; queued %u in flight %u", i,
			      tb[i].ended, k.q->nr_queued, k.q->in_flight);
		ck_assert_int_eq(tb[i].error, 0);
	}
	ck_assert_uint_eq(f.switched, switch_first);
	ck_assert(!k.q->switch_pending);
	if (pace->pause_ns)
		pthread_join(t, NULL);
	file_has(&k, 0, data, N * 4 * KIB);
	uring_driver_get_stats(k.d, &st);
	ck_assert_uint_le(st.idle_poll_hits + st.idle_poll_timeouts, st.idle_polls);
	close(p[0]);
	disk_close(&k);
	free(data);
	free(tb);
	return st;
}

/*
 * A ring of 4 SQEs under 256 writes: the loop's batches flush the SQ when it
 * fills.  The writes take 0.2 ms two at a time, slower than they arrive, so
 * many are still queued when the input ends: the loop must drain them.
 */
START_TEST(test_loop_serves_until_done)
{
	feed_run(elevators[_i], 4, "ssd:write_us=200,depth=2", false, &feed_2ms);
}
END_TEST

/* A switch inside the loop ends, and is reported once, when the loop reaps the last I/O. */
START_TEST(test_loop_switch_ends_in_the_completion_path)
{
	feed_run("deadline", 0, "none", true, &feed_2ms);
}
END_TEST

/*
 * Idle between bursts 2 ms apart, the loop polls through the gaps instead of
 * sleeping: polls start, and a burst ends one.  (A gap of more than 100 ms,
 * a very loaded machine, may end some by time; not most.)
 */
START_TEST(test_loop_idle_poll_spans_short_gaps)
{
	const struct feed_pace poll = { 2 * NS_PER_MS, 100000 };
	struct uring_driver_stats st = feed_run("deadline", 0, "none", false, &poll);

	ck_assert_uint_ge(st.idle_polls, 1);
	ck_assert_uint_ge(st.idle_poll_hits, 1);
	ck_assert_msg(st.idle_poll_timeouts <= st.idle_poll_hits,
		      "%lu idle polls ended by time, %lu by a completion", st.idle_poll_timeouts,
		      st.idle_poll_hits);
}
END_TEST

/*
 * Bursts 20 ms apart and a 1 ms poll: the poll ends when its time is up,
 * and the loop sleeps after it.  The feeder's pauses are at least 20 ms
 * however loaded the machine: some poll must end by time.
 */
START_TEST(test_loop_idle_poll_ends)
{
	const struct feed_pace poll = { 20 * NS_PER_MS, 1000 };
	struct uring_driver_stats st = feed_run("deadline", 0, "none", false, &poll);

	ck_assert_uint_ge(st.idle_poll_timeouts, 1);
	ck_assert_uint_ge(st.sleeps, st.idle_poll_timeouts);
}
END_TEST

/*
 * All 256 writes are in the pipe at once and take 2 ms each, one at a time:
 * something is queued from the first turn to the last, so the loop sleeps
 * while they run and never polls.
 */
START_TEST(test_loop_no_idle_poll_while_busy)
{
	const struct feed_pace poll = { 0, 100000 };
	struct uring_driver_stats st =
		feed_run("deadline", 0, "ssd:write_us=2000,depth=1", false, &poll);

	ck_assert_uint_eq(st.idle_polls, 0);
	ck_assert_uint_ge(st.sleeps, 1);
}
END_TEST

static volatile sig_atomic_t got_usr1;

static void on_usr1(int sig)
{
	(void)sig;
	got_usr1 = 1;
}

static void *send_usr1(void *arg)
{
	struct timespec pause = { 0, 100000000 };

	nanosleep(&pause, NULL);
	pthread_kill(*(pthread_t *)arg, SIGUSR1);
	return NULL;
}

/* A signal blocked but in the wait mask ends the loop's sleep, and serve sees it. */
START_TEST(test_loop_signal_ends_the_wait)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigset_t usr1, waitmask;
	pthread_t self = pthread_self(), t;
	struct disk k;
	struct feed f = { .k = &k, .signalled = &got_usr1 };
	struct uring_watch w = { .serve = feed_serve, .arg = &f, .waitmask = &waitmask };
	int p[2];

	ck_assert_int_eq(pipe2(p, O_NONBLOCK), 0);
	f.rfd = w.fd = p[0];
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, &waitmask);
	sigdelset(&waitmask, SIGUSR1);
	disk_init(&k, temp_file(tmp_dir(), DISK_SIZE, false), "none");
	disk_start(&k, 0);
	ck_assert_int_eq(pthread_create(&t, NULL, send_usr1, &self), 0);
	disk_run(&k, &w);
	ck_assert_int_eq(got_usr1, 1);
	pthread_join(t, NULL);
	close(p[0]);
	close(p[1]);
	disk_close(&k);
}
END_TEST

/* Serve without ever running dry: the loop never sleeps, so it never waits on the ring. */
struct busy_feed {
	struct disk *k;
	struct tbio tb;
	char *data;
	unsigned long turns;
};

static enum uring_serve busy_serve(void *arg)
{
	struct busy_feed *f = arg;

	if (!f->turns++) {
		tbio_setup(&f->tb, f->k, REQ_OP_WRITE, 0, 0, 4 * KIB, f->data);
		submit_bio(f->k->q, &f->tb.bio);
	}
	if (f->tb.ended)
		return URING_SERVE_DONE;
	ck_assert_msg(f->turns < 10000000, "the write never ended while input kept coming");
	return URING_SERVE_MORE;
}

/*
 * Input that never runs dry must not starve completions: a ring that keeps
 * completion work until its thread waits gives it up on the loop's next
 * submission too.
 */
START_TEST(test_loop_reaps_while_input_waits)
{
	struct disk k;
	struct busy_feed f = { .k = &k, .data = mem_alloc(4 * KIB) };
	struct uring_watch w = { .fd = -1, .serve = busy_serve, .arg = &f };

	mem_fill(f.data, 4 * KIB, 5);
	disk_init(&k, temp_file(tmp_dir(), DISK_SIZE, false), "none");
	disk_start(&k, 0);
	disk_run(&k, &w);
	ck_assert_int_eq(f.tb.ended, 1);
	ck_assert_int_eq(f.tb.error, 0);
	file_has(&k, 0, f.data, 4 * KIB);
	disk_close(&k);
	free(f.data);
}
END_TEST

/* Serve that can take no input while its one write is in flight. */
struct blocked_feed {
	struct disk *k;
	struct tbio tb;
	char *data;
	unsigned int turns;
};

static enum uring_serve blocked_serve(void *arg)
{
	struct blocked_feed *f = arg;

	if (!f->turns++) {
		tbio_setup(&f->tb, f->k, REQ_OP_WRITE, 0, 0, 4 * KIB, f->data);
		submit_bio(f->k->q, &f->tb.bio);
	}
	return f->tb.ended ? URING_SERVE_DONE : URING_SERVE_BLOCKED;
}

/*
 * BLOCKED: the watcher takes no input until a request ends.  The loop
 * neither polls the file nor spins on serve; it waits for a CQE and serves
 * again after it: two turns for one slow (modelled 20 ms) write.
 */
START_TEST(test_loop_blocked_serves_after_a_completion)
{
	struct disk k;
	struct blocked_feed f = { .k = &k, .data = mem_alloc(4 * KIB) };
	struct uring_watch w = { .fd = -1, .serve = blocked_serve, .arg = &f };

	mem_fill(f.data, 4 * KIB, 6);
	disk_init(&k, temp_file(tmp_dir(), DISK_SIZE, false), "none");
	disk_start_model(&k, 0, "ssd:write_us=20000,depth=1");
	disk_run(&k, &w);
	ck_assert_int_eq(f.tb.ended, 1);
	ck_assert_int_eq(f.tb.error, 0);
	ck_assert_uint_le(f.turns, 3); /* the write, its modelled wait's end, its CQE */
	file_has(&k, 0, f.data, 4 * KIB);
	disk_close(&k);
	free(f.data);
}
END_TEST

/*
 * The watcher's own SQEs: a NOP on a 128-byte-SQE ring ends in
 * w->complete with its tag and result, and serve runs again without input;
 * so it does after uring_driver_watch_again().  The pipe never has input.
 */
struct own_feed {
	struct uring_driver *d;
	int turns;
	int completed;
	void *tag;
	int res;
	long tagged; /* the tag: any 4-aligned address */
};

static void own_complete(void *arg, void *tag, int res)
{
	struct own_feed *f = arg;

	f->completed++;
	f->tag = tag;
	f->res = res;
}

static enum uring_serve own_serve(void *arg)
{
	struct own_feed *f = arg;
	struct io_uring_sqe *sqe;

	switch (f->turns++) {
	case 0:
		sqe = uring_driver_watch_sqe(f->d, &f->tagged);
		ck_assert_ptr_nonnull(sqe);
		sqe->opcode = IORING_OP_NOP;
		return URING_SERVE_DRAINED;
	case 1:
		ck_assert_int_eq(f->completed, 1);
		ck_assert_ptr_eq(f->tag, &f->tagged);
		ck_assert_int_eq(f->res, 0);
		uring_driver_watch_again(f->d);
		return URING_SERVE_DRAINED;
	default:
		return URING_SERVE_DONE;
	}
}

START_TEST(test_loop_watch_sqe_completes_to_the_watcher)
{
	struct disk k;
	struct own_feed f = { 0 };
	int p[2];
	struct uring_watch w = { .serve = own_serve, .arg = &f, .complete = own_complete };

	ck_assert_int_eq(pipe(p), 0);
	w.fd = p[0];
	disk_init(&k, temp_file(tmp_dir(), DISK_SIZE, false), "none");
	disk_start_flags(&k, 0, NULL, URING_DRIVER_SQE128);
	f.d = k.d;
	disk_run(&k, &w);
	ck_assert_int_eq(f.turns, 3);
	ck_assert_int_eq(f.completed, 1);
	close(p[0]);
	close(p[1]);
	disk_close(&k);
}
END_TEST

/* 77 when this kernel or this process has no io_uring, 0 when it has, 1 otherwise. */
static int uring_available(void)
{
	struct request_queue *q = blk_init_queue(NULL, NULL, NULL);
	struct uring_driver *d;
	char why[256];
	int ret = 0;

	if (!q)
		return 1;
	d = uring_driver_new(q, -1, 0, 0, why, sizeof(why));
	if (!d) {
		ret = errno == ENOSYS || errno == EPERM ? 77 : 1;
		fprintf(stderr, "check_uring: %s%s\n", why, ret == 77 ? ", skipped" : "");
	}
	uring_driver_free(d);
	blk_cleanup_queue(q);
	return ret;
}

int main(void)
{
	Suite *s = suite_create("uring");
	TCase *tc = tcase_create("driver");
	int unavailable = uring_available();

	if (unavailable)
		return unavailable;
	tcase_set_timeout(tc, 2 * WAIT_SECONDS);
	tcase_add_loop_test(tc, test_write_then_read, 0, NR_ELEVATORS);
	tcase_add_loop_test(tc, test_fd_backend_ends_on_the_loop, 0, 2);
	tcase_add_test(tc, test_fd_backend_unwatches_in_ready);
	tcase_add_test(tc, test_fd_backend_polls_for_output);
	tcase_add_loop_test(tc, test_unaligned_memory, 0, NR_ELEVATORS);
	tcase_add_loop_test(tc, test_big_write_is_split, 0, NR_ELEVATORS);
	tcase_add_loop_test(tc, test_flush_and_barrier, 0, NR_ELEVATORS);
	tcase_add_loop_test(tc, test_fua_write, 0, NR_ELEVATORS);
	tcase_add_loop_test(tc, test_discard, 0, NR_ELEVATORS);
	tcase_add_loop_test(tc, test_write_zeroes, 0, 2 * NR_ELEVATORS);
	tcase_add_loop_test(tc, test_read_past_eof, 0, NR_ELEVATORS);
	tcase_add_loop_test(tc, test_short_read_is_continued, 0, 2 * NR_ELEVATORS);
	tcase_add_loop_test(tc, test_short_write_is_continued, 0, 2 * NR_ELEVATORS);
	tcase_add_loop_test(tc, test_kernel_error_reaches_the_bio, 0, NR_ELEVATORS);
	tcase_add_loop_test(tc, test_small_ring_deep_queue, 0, NR_ELEVATORS);
	tcase_add_test(tc, test_timed_dispatch);
	tcase_add_test(tc, test_timed_dispatch_already_past);
	tcase_add_test(tc, test_model_times_and_depth);
	tcase_add_loop_test(tc, test_model_depth_issues_each_once, 0, NR_ALL_ELEVATORS);
	tcase_add_loop_test(tc, test_null_does_no_io, 0, NR_ELEVATORS);
	tcase_add_test(tc, test_null_keeps_the_model_time);
	tcase_add_loop_test(tc, test_loop_serves_until_done, 0, NR_ELEVATORS);
	tcase_add_test(tc, test_loop_switch_ends_in_the_completion_path);
	tcase_add_test(tc, test_loop_idle_poll_spans_short_gaps);
	tcase_add_test(tc, test_loop_idle_poll_ends);
	tcase_add_test(tc, test_loop_no_idle_poll_while_busy);
	tcase_add_test(tc, test_loop_signal_ends_the_wait);
	tcase_add_test(tc, test_loop_reaps_while_input_waits);
	tcase_add_test(tc, test_loop_blocked_serves_after_a_completion);
	tcase_add_test(tc, test_loop_watch_sqe_completes_to_the_watcher);
	suite_add_tcase(s, tc);
	return fake_run_suite(s);
}
