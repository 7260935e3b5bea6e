/* SPDX-License-Identifier: BSD-3-Clause */
/* uring_harness.c - a queue over the io_uring driver on a real file, run by the daemon's loop. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uring_harness.h"

const char *const elevators[NR_ELEVATORS] = { "deadline", "none" };

const char *tmp_dir(void)
{
	const char *dir = getenv("TMPDIR");

	return dir && *dir ? dir : "/tmp";
}

/* A file of size bytes in dir, gone from the directory at once; read-only if asked. */
int temp_file(const char *dir, off_t size, bool readonly)
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

/*
 * q before the driver; the elevator (NULL: leave it) before the limits are final.
 * model: a --model spec, or NULL for none: the model filter over the backend.
 * The backend opens the file again by its fd's name, read-only as the fd
 * is, on a disk of DISK_SIZE whatever the file's size (a test's file may
 * end before the disk, or in a sector).
 */
void disk_start_flags(struct disk *k, unsigned int entries, const char *model,
		      unsigned int flags, const struct dev_ops *backend)
{
	char why[256], spec[256], path[64];
	const char *filters[] = { spec };
	bool filter = model && strcmp(model, "none");

	snprintf(path, sizeof(path), "/proc/self/fd/%d", k->fd);
	if ((fcntl(k->fd, F_GETFL) & O_ACCMODE) == O_RDONLY)
		flags |= URING_DRIVER_READ_ONLY;
	k->d = uring_driver_new(k->q, entries, flags, NULL, NULL, why, sizeof(why));
	ck_assert_msg(k->d != NULL, "uring_driver_new: %s", why);
	ck_assert_ptr_eq(k->q->queuedata, k->d);
	if (filter)
		snprintf(spec, sizeof(spec), "model:%s", model);
	ck_assert_msg(!uring_driver_set_stack(k->d, filters, filter ? 1 : 0, backend, path,
					      DISK_SIZE >> SECTOR_SHIFT, why, sizeof(why)),
		      "%s", why);
}

void disk_start_model(struct disk *k, unsigned int entries, const char *model)
{
	disk_start_flags(k, entries, model, 0, &dev_file_ops);
}

void disk_start(struct disk *k, unsigned int entries)
{
	disk_start_model(k, entries, NULL);
}

void disk_init(struct disk *k, int fd, const char *elevator)
{
	memset(k, 0, sizeof(*k));
	k->fd = fd;
	k->q = blk_init_queue(NULL, NULL, NULL);
	ck_assert_ptr_nonnull(k->q);
	ck_assert_int_eq(elevator_init(k->q, elevator), 0);
	ck_assert_int_eq(pipe2(k->idle, O_NONBLOCK), 0);
	k->w = (struct uring_watch){ .fd = k->idle[0], .serve = disk_serve, .arg = k };
}

void disk_open(struct disk *k, const char *elevator, const char *dir, off_t size,
	       bool readonly, unsigned int entries)
{
	disk_init(k, temp_file(dir, size, readonly), elevator);
	disk_start(k, entries);
}

void disk_close(struct disk *k)
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
void tbio_setup(struct tbio *tb, struct disk *k, enum req_op op, unsigned int flags,
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
void disk_step(struct disk *k, step_fn *fn, void *arg, uint64_t val)
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

void disk_submit(struct disk *k, struct tbio *tb)
{
	disk_step(k, step_submit, &tb->bio, 0);
}

void disk_plug(struct disk *k)
{
	disk_step(k, step_plug, NULL, 0);
}

void disk_unplug(struct disk *k)
{
	disk_step(k, step_unplug, NULL, 0);
}

/*
 * Run the loop until n bios of k have ended since the last wait, and the
 * queue is idle (the loop returns only then).  A bio that never ends hangs
 * the loop: Check's timeout fails the test.
 */
void wait_ended(struct disk *k, unsigned int n)
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
int disk_io(struct disk *k, enum req_op op, unsigned int flags, sector_t sector,
	    unsigned int bytes, void *buf)
{
	struct tbio tb;

	tbio_setup(&tb, k, op, flags, sector, bytes, buf);
	disk_submit(k, &tb);
	wait_ended(k, 1);
	ck_assert_int_eq(tb.ended, 1);
	return tb.error;
}

void disk_trace_start(struct disk *k)
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
struct trace_counts disk_trace_stop(struct disk *k)
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

void *mem_alloc(size_t size)
{
	void *p = NULL;

	ck_assert_int_eq(posix_memalign(&p, 4096, size), 0);
	return p;
}

/* A pattern that differs in every sector and with every seed. */
void mem_fill(void *buf, size_t size, unsigned int seed)
{
	unsigned char *p = buf;

	for (size_t i = 0; i < size; i++)
		p[i] = (unsigned char)((i >> 9) * 31 + i * 7 + seed);
}

bool mem_is_zero(const void *buf, size_t size)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < size; i++)
		if (p[i])
			return false;
	return true;
}

/* The file itself holds buf at byte off. */
void file_has(struct disk *k, off_t off, const void *buf, size_t size)
{
	void *got = mem_alloc(size);

	ck_assert_int_eq(pread(k->fd, got, size, off), (ssize_t)size);
	ck_assert_msg(!memcmp(got, buf, size), "file differs at %lld+%zu", (long long)off, size);
	free(got);
}

void write_pattern(struct disk *k, sector_t sector, unsigned int bytes, unsigned int seed)
{
	void *buf = mem_alloc(bytes);

	mem_fill(buf, bytes, seed);
	ck_assert_int_eq(disk_io(k, REQ_OP_WRITE, 0, sector, bytes, buf), 0);
	free(buf);
}

/* The callback runs inside the completion, under the queue lock: read after it. */
uint64_t ios_done(struct disk *k, enum stat_group g)
{
	uint64_t n;

	blk_queue_lock(k->q);
	n = k->q->stats.ios[g];
	blk_queue_unlock(k->q);
	return n;
}

/*
 * Loop tests over both elevators, without a model and then under one: the
 * elevator of run i, and the disk started with the model of run i.
 */
const char *elevator_of(int i)
{
	return elevators[i % NR_ELEVATORS];
}

void disk_open_modelled(struct disk *k, int i, off_t size)
{
	disk_init(k, temp_file(tmp_dir(), size, false), elevator_of(i));
	disk_start_model(k, 0, i >= NR_ELEVATORS ? "ssd:read_us=1000,write_us=1000" : NULL);
}

uint64_t now_ns(void)
{
	return blk_clock_now(&blk_real_clock);
}

/* n 4 KiB reads 64 sectors apart at once (n <= 16), under the elevator and the model. */
struct trace_counts modelled_reads(const char *elevator, const char *spec, unsigned int n,
				   const struct dev_ops *backend, uint64_t *ns)
{
	char *buf = mem_alloc(16 * 4 * KIB);
	struct trace_counts tc;
	struct tbio tb[16];
	struct disk k;
	uint64_t start;

	ck_assert_uint_le(n, 16);
	disk_init(&k, temp_file(tmp_dir(), DISK_SIZE, false), elevator);
	disk_start_flags(&k, 0, spec, 0, backend);
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

/* 77 when this kernel or this process has no io_uring, 0 when it has, 1 otherwise. */
int uring_available(void)
{
	struct request_queue *q = blk_init_queue(NULL, NULL, NULL);
	struct uring_driver *d;
	char why[256];
	int ret = 0;

	if (!q)
		return 1;
	d = uring_driver_new(q, 0, 0, NULL, NULL, why, sizeof(why));
	if (!d) {
		ret = errno == ENOSYS || errno == EPERM ? 77 : 1;
		fprintf(stderr, "check_uring: %s%s\n", why, ret == 77 ? ", skipped" : "");
	}
	uring_driver_free(d);
	blk_cleanup_queue(q);
	return ret;
}
