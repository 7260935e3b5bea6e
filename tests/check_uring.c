/* check_uring.c - the io_uring driver on a real file: data, errors, short transfers, timers. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "driver_uring.h"
#include "fake_driver.h"

#define KIB 1024u
#define MIB (1024u * 1024)
#define DISK_SIZE (4 * MIB)
#define NS_PER_MS 1000000L
#define WAIT_SECONDS 30 /* a bio not ended by then never will be */

static const char *const elevators[] = { "deadline", "none" };
#define NR_ELEVATORS (int)(sizeof(elevators) / sizeof(elevators[0]))

/* How the bios of one disk end: the callback runs in the completion thread. */
struct waiter {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int ended;
};

struct tbio {
	struct bio bio;
	struct bio_vec vec[4];
	struct waiter *w;
	int ended;
	int error;
};

struct disk {
	int fd;
	struct request_queue *q;
	struct uring_driver *d;
	struct waiter w;
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

/* q before the driver; the elevator (NULL: leave it) before the limits are final. */
static void disk_start_flags(struct disk *k, unsigned int entries, struct disk_model *m,
			     unsigned int flags)
{
	char why[256];

	k->d = uring_driver_new(k->q, k->fd, entries, flags, why, sizeof(why));
	ck_assert_msg(k->d != NULL, "uring_driver_new: %s", why);
	ck_assert_ptr_eq(k->q->queuedata, k->d);
	uring_driver_set_model(k->d, m);
	ck_assert_int_eq(uring_driver_start(k->d), 0);
}

static void disk_start_model(struct disk *k, unsigned int entries, struct disk_model *m)
{
	disk_start_flags(k, entries, m, 0);
}

static void disk_start(struct disk *k, unsigned int entries)
{
	disk_start_model(k, entries, NULL);
}

static void disk_init(struct disk *k, int fd, const char *elevator)
{
	memset(k, 0, sizeof(*k));
	pthread_mutex_init(&k->w.lock, NULL);
	pthread_cond_init(&k->w.cond, NULL);
	k->fd = fd;
	k->q = blk_init_queue(NULL, NULL, NULL);
	ck_assert_ptr_nonnull(k->q);
	ck_assert_int_eq(elevator_init(k->q, elevator), 0);
}

static void disk_open(struct disk *k, const char *elevator, const char *dir, off_t size,
		      bool readonly, unsigned int entries)
{
	disk_init(k, temp_file(dir, size, readonly), elevator);
	disk_start(k, entries);
}

static void disk_close(struct disk *k)
{
	uring_driver_stop(k->d);
	ck_assert(blk_queue_idle(k->q));
	ck_assert_uint_eq(k->q->in_flight, 0);
	uring_driver_free(k->d);
	blk_cleanup_queue(k->q);
	close(k->fd);
	pthread_cond_destroy(&k->w.cond);
	pthread_mutex_destroy(&k->w.lock);
}

static void tbio_end_io(struct bio *bio, int error)
{
	struct tbio *tb = bio->bi_private;
	struct waiter *w = tb->w;

	pthread_mutex_lock(&w->lock);
	tb->ended++;
	tb->error = error;
	w->ended++;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
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
	tb->w = &k->w;
	tb->ended = 0;
	tb->error = 0;
}

/* Wait until n bios of k have ended since the counter was last reset. */
static void wait_ended(struct disk *k, unsigned int n)
{
	struct timespec deadline;
	int ret = 0;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += WAIT_SECONDS;
	pthread_mutex_lock(&k->w.lock);
	while (k->w.ended < n && ret == 0)
		ret = pthread_cond_timedwait(&k->w.cond, &k->w.lock, &deadline);
	ck_assert_msg(k->w.ended >= n, "%u of %u bios ended in %d s", k->w.ended, n,
		      WAIT_SECONDS);
	k->w.ended = 0;
	pthread_mutex_unlock(&k->w.lock);
}

/* One bio, submitted and waited for; returns how it ended. */
static int disk_io(struct disk *k, enum req_op op, unsigned int flags, sector_t sector,
		   unsigned int bytes, void *buf)
{
	struct tbio tb;

	tbio_setup(&tb, k, op, flags, sector, bytes, buf);
	submit_bio(k->q, &tb.bio);
	wait_ended(k, 1);
	ck_assert_int_eq(tb.ended, 1);
	return tb.error;
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
	submit_bio(k.q, &tb[0].bio);
	wait_ended(&k, 1);
	ck_assert_int_eq(tb[0].error, 0);
	ck_assert_int_eq(disk_io(&k, REQ_OP_READ, 0, 16, 64 * KIB, got), 0);
	ck_assert(!memcmp(got, want, 64 * KIB));
	file_has(&k, 16 * 512, want, 64 * KIB);

	/* two plugged writes side by side (one request under deadline), one read */
	mem_fill(want, 16 * KIB, 2);
	blk_plug_device(k.q);
	tbio_setup(&tb[0], &k, REQ_OP_WRITE, 0, 1000, 8 * KIB, want);
	submit_bio(k.q, &tb[0].bio);
	tbio_setup(&tb[1], &k, REQ_OP_WRITE, 0, 1016, 8 * KIB, want + 8 * KIB);
	submit_bio(k.q, &tb[1].bio);
	blk_unplug(k.q);
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

/*
 * Write-zeroes on a file system that zeroes ranges ($TMPDIR, ext4 here)
 * and on one that answers EOPNOTSUPP (tmpfs): the fallback writes the
 * zeros in pieces, each piece ending its whole sectors.
 */
START_TEST(test_write_zeroes)
{
	const char *dirs[] = { tmp_dir(), "/dev/shm" };
	const char *dir = dirs[_i / NR_ELEVATORS];
	unsigned int size = 3 * MIB, zstart = 4 * KIB, zlen = 2 * MIB + 4 * KIB;
	char *want = mem_alloc(size), *got = mem_alloc(size);
	struct disk k;

	if (access(dir, W_OK)) {
		fprintf(stderr, "test_write_zeroes: no %s, skipped\n", dir);
		free(want), free(got);
		return;
	}
	disk_open(&k, elevators[_i % NR_ELEVATORS], dir, DISK_SIZE, false, 0);
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
 * The file ends 100 bytes into sector 16.  Two 8 KiB reads (one request
 * under deadline): the one before the end succeeds with its data, the one
 * across it fails.  The kernel's first answer is short by a part sector:
 * the continuation starts inside sector 16, not over again.
 */
START_TEST(test_short_read_is_continued)
{
	unsigned int fsize = 8 * KIB + 100;
	char *want = mem_alloc(fsize), *got = mem_alloc(16 * KIB);
	struct tbio tb[2];
	struct disk k;

	disk_open(&k, elevators[_i], tmp_dir(), fsize, false, 0);
	mem_fill(want, fsize, 11);
	ck_assert_int_eq(pwrite(k.fd, want, fsize, 0), (ssize_t)fsize);
	blk_plug_device(k.q);
	tbio_setup(&tb[0], &k, REQ_OP_READ, 0, 0, 8 * KIB, got);
	submit_bio(k.q, &tb[0].bio);
	tbio_setup(&tb[1], &k, REQ_OP_READ, 0, 16, 8 * KIB, got + 8 * KIB);
	submit_bio(k.q, &tb[1].bio);
	blk_unplug(k.q);
	wait_ended(&k, 2);
	if (!strcmp(elevators[_i], "deadline"))
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
 */
START_TEST(test_short_write_is_continued)
{
	unsigned int limit = 8 * KIB + 100;
	char *want = mem_alloc(16 * KIB);
	struct rlimit old;
	struct tbio tb[2];
	struct disk k;

	disk_open(&k, elevators[_i], tmp_dir(), DISK_SIZE, false, 0);
	mem_fill(want, 16 * KIB, 12);
	signal(SIGXFSZ, SIG_IGN);
	set_fsize_limit(limit, &old);
	blk_plug_device(k.q);
	tbio_setup(&tb[0], &k, REQ_OP_WRITE, 0, 0, 8 * KIB, want);
	submit_bio(k.q, &tb[0].bio);
	tbio_setup(&tb[1], &k, REQ_OP_WRITE, 0, 16, 8 * KIB, want + 8 * KIB);
	submit_bio(k.q, &tb[1].bio);
	blk_unplug(k.q);
	wait_ended(&k, 2);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
	if (!strcmp(elevators[_i], "deadline"))
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
 * fills, requests go back to the queue and out again as completions make
 * room, and more are in flight than the CQ holds.
 */
START_TEST(test_small_ring_deep_queue)
{
	enum { N = 256, STRIDE = 37 };
	struct tbio *tb = calloc(N, sizeof(*tb));
	char *want = mem_alloc(N * 4 * KIB), *got = mem_alloc(N * 4 * KIB);
	struct disk k;

	ck_assert_ptr_nonnull(tb);
	disk_init(&k, temp_file(tmp_dir(), DISK_SIZE, false), elevators[_i]);
	k.q->limits.nomerges = BLK_MERGES_NONE; /* N requests, not a few big ones */
	k.q->unplug_thresh = N + 1;
	disk_start(&k, 4);
	mem_fill(want, N * 4 * KIB, 14);
	blk_plug_device(k.q);
	for (unsigned int i = 0; i < N; i++) {
		unsigned int blk = i * STRIDE % N;

		tbio_setup(&tb[i], &k, REQ_OP_WRITE, 0, blk * 8, 4 * KIB, want + blk * 4 * KIB);
		submit_bio(k.q, &tb[i].bio);
	}
	blk_unplug(k.q);
	wait_ended(&k, N);
	for (unsigned int i = 0; i < N; i++)
		ck_assert_int_eq(tb[i].error, 0);
	file_has(&k, 0, want, N * 4 * KIB);
	blk_plug_device(k.q);
	for (unsigned int i = 0; i < N; i++) {
		tbio_setup(&tb[i], &k, REQ_OP_READ, 0, i * 8, 4 * KIB, got + i * 4 * KIB);
		submit_bio(k.q, &tb[i].bio);
	}
	blk_unplug(k.q);
	wait_ended(&k, N);
	for (unsigned int i = 0; i < N; i++)
		ck_assert_int_eq(tb[i].error, 0);
	ck_assert(!memcmp(got, want, N * 4 * KIB));
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

static void hold_until(struct disk *k, uint64_t when)
{
	blk_queue_lock(k->q);
	((struct hold_data *)k->q->elevator->elevator_data)->release_at = when;
	blk_queue_unlock(k->q);
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
	submit_bio(k.q, &tb[0].bio);
	hold_until(&k, start + 100 * NSEC_PER_MSEC);
	tbio_setup(&tb[1], &k, REQ_OP_READ, 0, 8, 4 * KIB, buf + 4 * KIB);
	submit_bio(k.q, &tb[1].bio);
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

/* Four reads at once on an ssd model of 30 ms reads: how long until all end. */
static uint64_t modelled_reads_ns(const char *spec, unsigned int flags)
{
	char *buf = mem_alloc(16 * KIB), why[160];
	struct disk_model *m;
	struct tbio tb[4];
	struct disk k;
	uint64_t start;

	ck_assert_msg(!disk_model_new(spec, DISK_SIZE >> SECTOR_SHIFT, &m, why, sizeof(why)),
		      "%s", why);
	disk_init(&k, temp_file(tmp_dir(), DISK_SIZE, false), "noop");
	disk_start_flags(&k, 0, m, flags);
	start = now_ns();
	for (unsigned int i = 0; i < 4; i++) {
		tbio_setup(&tb[i], &k, REQ_OP_READ, 0, 64 * i, 4 * KIB, buf + 4 * KIB * i);
		submit_bio(k.q, &tb[i].bio);
	}
	wait_ended(&k, 4);
	start = now_ns() - start;
	for (unsigned int i = 0; i < 4; i++)
		ck_assert_int_eq(tb[i].error, 0);
	disk_close(&k);
	disk_model_free(m);
	free(buf);
	return start;
}

/*
 * A request ends no earlier than its modelled time, and the driver keeps no
 * more in flight than the model's depth: one at a time, four 30 ms reads take
 * 120 ms; four at a time (eight channels), about 30.
 */
START_TEST(test_model_times_and_depth)
{
	uint64_t one = modelled_reads_ns("ssd:read_us=30000,depth=1", 0);
	uint64_t four = modelled_reads_ns("ssd:read_us=30000,depth=4", 0);

	ck_assert_uint_ge(one, 120 * NSEC_PER_MSEC);
	ck_assert_uint_ge(four, 30 * NSEC_PER_MSEC);
	ck_assert_uint_lt(four, 90 * NSEC_PER_MSEC);
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

/* A model still times a null device: four 30 ms reads one at a time take 120 ms. */
START_TEST(test_null_keeps_the_model_time)
{
	ck_assert_uint_ge(modelled_reads_ns("ssd:read_us=30000,depth=1", URING_DRIVER_NULL),
			  120 * NSEC_PER_MSEC);
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

/* How the feeder paces its bursts, and how long the loop polls when idle. */
struct feed_pace {
	long pause_ns;
	unsigned int idle_poll_us;
};

static const struct feed_pace feed_2ms = { 2 * NS_PER_MS, 0 };

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Returns the share of the run's time the loop's thread was on a CPU. */
static double feed_run(const char *elevator, unsigned int entries, const char *model,
		       bool switch_first, const struct feed_pace *pace)
{
	struct disk_model *m = NULL;
	enum { N = 256 };
	struct tbio *tb = calloc(N, sizeof(*tb));
	char *data = mem_alloc(N * 4 * KIB);
	struct feed f = { .tb = tb, .data = data, .n = N, .switch_first = switch_first };
	struct feeder fr = { .n = N, .pause_ns = pace->pause_ns };
	struct uring_watch w = { .serve = feed_serve, .arg = &f,
				 .idle_poll_us = pace->idle_poll_us };
	uint64_t wall, cpu;
	char why[256];
	struct disk k;
	pthread_t t;
	int p[2];

	ck_assert_ptr_nonnull(tb);
	ck_assert_int_eq(pipe2(p, O_NONBLOCK), 0);
	f.rfd = w.fd = p[0];
	fr.wfd = p[1];
	disk_init(&k, temp_file(tmp_dir(), DISK_SIZE, false), elevator);
	k.q->limits.nomerges = BLK_MERGES_NONE;
	k.d = uring_driver_new(k.q, k.fd, entries, URING_DRIVER_LOOP, why, sizeof(why));
	ck_assert_msg(k.d != NULL, "uring_driver_new: %s", why);
	ck_assert_msg(!disk_model_new(model, DISK_SIZE >> SECTOR_SHIFT, &m, why, sizeof(why)),
		      "%s", why);
	uring_driver_set_model(k.d, m);
	f.k = &k;
	mem_fill(data, N * 4 * KIB, 21);
	ck_assert_int_eq(pthread_create(&t, NULL, feeder_run, &fr), 0);
	wall = now_ns();
	cpu = thread_cpu_ns();
	uring_driver_run(k.d, &w);
	cpu = thread_cpu_ns() - cpu;
	wall = now_ns() - wall;
	/* it returns only once every bio has ended, each exactly once */
	ck_assert_uint_eq(f.next, N);
	for (unsigned int i = 0; i < N; i++) {
		ck_assert_msg(tb[i].ended == 1, "bio %u ended %d times; queued %u in flight %u", i,
			      tb[i].ended, k.q->nr_queued, k.q->in_flight);
		ck_assert_int_eq(tb[i].error, 0);
	}
	ck_assert_uint_eq(f.switched, switch_first);
	ck_assert(!k.q->switch_pending);
	pthread_join(t, NULL);
	file_has(&k, 0, data, N * 4 * KIB);
	close(p[0]);
	disk_close(&k);
	disk_model_free(m);
	free(data);
	free(tb);
	return (double)cpu / (double)wall;
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

/* Idle between bursts 2 ms apart, the loop polls through the gaps instead of sleeping. */
START_TEST(test_loop_idle_poll_spans_short_gaps)
{
	const struct feed_pace poll = { 2 * NS_PER_MS, 100000 };
	double busy = feed_run("deadline", 0, "none", false, &poll);

	ck_assert_msg(busy > 0.3, "the loop was on a CPU %.0f%% of the time", busy * 100);
}
END_TEST

/* Bursts 20 ms apart and a 1 ms poll: the loop sleeps once its poll time is up. */
START_TEST(test_loop_idle_poll_ends)
{
	const struct feed_pace poll = { 20 * NS_PER_MS, 1000 };
	double busy = feed_run("deadline", 0, "none", false, &poll);

	ck_assert_msg(busy < 0.2, "the loop was on a CPU %.0f%% of the time", busy * 100);
}
END_TEST

/* Writes of 2 ms one at a time, always some queued: the loop sleeps while they run. */
START_TEST(test_loop_no_idle_poll_while_busy)
{
	const struct feed_pace poll = { 2 * NS_PER_MS, 100000 };
	double busy = feed_run("deadline", 0, "ssd:write_us=2000,depth=1", false, &poll);

	ck_assert_msg(busy < 0.2, "the loop was on a CPU %.0f%% of the time", busy * 100);
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
	k.d = uring_driver_new(k.q, k.fd, 0, URING_DRIVER_LOOP, NULL, 0);
	ck_assert_ptr_nonnull(k.d);
	ck_assert_int_eq(pthread_create(&t, NULL, send_usr1, &self), 0);
	uring_driver_run(k.d, &w);
	ck_assert_int_eq(got_usr1, 1);
	pthread_join(t, NULL);
	close(p[0]);
	close(p[1]);
	disk_close(&k);
}
END_TEST

/* A loop-only driver has no completion thread to start. */
START_TEST(test_loop_driver_refuses_the_thread)
{
	struct disk k;

	disk_init(&k, temp_file(tmp_dir(), DISK_SIZE, false), "none");
	k.d = uring_driver_new(k.q, k.fd, 0, URING_DRIVER_LOOP, NULL, 0);
	ck_assert_ptr_nonnull(k.d);
	ck_assert_int_eq(uring_driver_start(k.d), -EINVAL);
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
	k.d = uring_driver_new(k.q, k.fd, 0, URING_DRIVER_LOOP, NULL, 0);
	ck_assert_ptr_nonnull(k.d);
	uring_driver_run(k.d, &w);
	ck_assert_int_eq(f.tb.ended, 1);
	ck_assert_int_eq(f.tb.error, 0);
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
	k.d = uring_driver_new(k.q, k.fd, 0, URING_DRIVER_LOOP | URING_DRIVER_SQE128, NULL, 0);
	ck_assert_ptr_nonnull(k.d);
	f.d = k.d;
	uring_driver_run(k.d, &w);
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
	tcase_add_loop_test(tc, test_unaligned_memory, 0, NR_ELEVATORS);
	tcase_add_loop_test(tc, test_big_write_is_split, 0, NR_ELEVATORS);
	tcase_add_loop_test(tc, test_flush_and_barrier, 0, NR_ELEVATORS);
	tcase_add_loop_test(tc, test_fua_write, 0, NR_ELEVATORS);
	tcase_add_loop_test(tc, test_discard, 0, NR_ELEVATORS);
	tcase_add_loop_test(tc, test_write_zeroes, 0, 2 * NR_ELEVATORS);
	tcase_add_loop_test(tc, test_read_past_eof, 0, NR_ELEVATORS);
	tcase_add_loop_test(tc, test_short_read_is_continued, 0, NR_ELEVATORS);
	tcase_add_loop_test(tc, test_short_write_is_continued, 0, NR_ELEVATORS);
	tcase_add_loop_test(tc, test_kernel_error_reaches_the_bio, 0, NR_ELEVATORS);
	tcase_add_loop_test(tc, test_small_ring_deep_queue, 0, NR_ELEVATORS);
	tcase_add_test(tc, test_timed_dispatch);
	tcase_add_test(tc, test_timed_dispatch_already_past);
	tcase_add_test(tc, test_model_times_and_depth);
	tcase_add_loop_test(tc, test_null_does_no_io, 0, NR_ELEVATORS);
	tcase_add_test(tc, test_null_keeps_the_model_time);
	tcase_add_loop_test(tc, test_loop_serves_until_done, 0, NR_ELEVATORS);
	tcase_add_test(tc, test_loop_switch_ends_in_the_completion_path);
	tcase_add_test(tc, test_loop_idle_poll_spans_short_gaps);
	tcase_add_test(tc, test_loop_idle_poll_ends);
	tcase_add_test(tc, test_loop_no_idle_poll_while_busy);
	tcase_add_test(tc, test_loop_signal_ends_the_wait);
	tcase_add_test(tc, test_loop_driver_refuses_the_thread);
	tcase_add_test(tc, test_loop_reaps_while_input_waits);
	tcase_add_test(tc, test_loop_watch_sqe_completes_to_the_watcher);
	suite_add_tcase(s, tc);
	return fake_run_suite(s);
}
