/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_uring_loop.c - the io_uring event loop: it serves its input until done, idles, polls,
 * wakes for a signal, and reaps completions while input waits.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <liburing.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "uring_harness.h"

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
	disk_start_flags(&k, 0, NULL, URING_DRIVER_SQE128, &dev_file_ops);
	f.d = k.d;
	disk_run(&k, &w);
	ck_assert_int_eq(f.turns, 3);
	ck_assert_int_eq(f.completed, 1);
	close(p[0]);
	close(p[1]);
	disk_close(&k);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("uring_loop");
	TCase *tc = tcase_create("loop");
	int unavailable = uring_available();

	if (unavailable)
		return unavailable;
	tcase_set_timeout(tc, 2 * WAIT_SECONDS);
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
