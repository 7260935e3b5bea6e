/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_uring_mq.c - the io_uring driver's hardware-queue threads: a
 * thread asked to serve from another thread always wakes, even when its
 * watcher left the thread's SQ full of commands that may never complete
 * (FUSE over io_uring's fetches wait for the next FUSE request); and the
 * loop, waiting for requests to end, never sleeps past an end that came
 * while its watcher looked.
 */
#include <check.h>
#include <errno.h>
#include <liburing.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend_uring.h"
#include "blk_mq.h"
#include "driver_uring.h"

#define ENTRIES 8     /* the hardware queue's SQ: a power of two, as the kernel rounds */
#define WAIT_MS 5000  /* a wake-up not seen by then never will be */
#define SETTLE_MS 200 /* for the thread to be asleep on its ring */

struct mqt {
	struct request_queue *q;
	struct uring_driver *d;
	struct blk_mq_tag_set set;
	struct uring_watch w;
	int stop[2];    /* the watched file: a byte ends the loop */
	int data[2];    /* what the watcher's reads wait on */
	char buf[ENTRIES];
	uint32_t tags[ENTRIES]; /* 4-aligned, as the watcher's tags must be */
	unsigned int serves;  /* atomic: serve_queue calls */
	unsigned int reads;   /* atomic: the watcher's reads ended */
	bool woke_first, woke_second;
};

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static bool wait_for(const unsigned int *counter, unsigned int n)
{
	for (long ms = 0; ms < WAIT_MS; ms++) {
		if (__atomic_load_n(counter, __ATOMIC_ACQUIRE) >= n)
			return true;
		sleep_ms(1);
	}
	return false;
}

/* The loop's watched file: any byte ends the run. */
static enum uring_serve stop_serve(void *arg)
{
	struct mqt *t = arg;
	char c;

	return read(t->stop[0], &c, 1) == 1 ? URING_SERVE_DONE : URING_SERVE_DRAINED;
}

static void read_complete(void *arg, void *tag, int res)
{
	struct mqt *t = arg;

	(void)tag;
	ck_assert_int_eq(res, 1);
	__atomic_add_fetch(&t->reads, 1, __ATOMIC_RELEASE);
}

/*
 * On the hardware queue's thread.  The first call fills its SQ with reads
 * of a pipe nobody writes yet, as many as the SQ holds, as a watcher
 * answering a burst of FUSE requests would with its fetch commands.
 */
static void fill_serve_queue(void *arg, unsigned int n)
{
	struct mqt *t = arg;

	ck_assert_uint_eq(n, 0);
	if (__atomic_add_fetch(&t->serves, 1, __ATOMIC_ACQ_REL) > 1)
		return;
	for (unsigned int i = 0; i < ENTRIES; i++) {
		struct io_uring_sqe *sqe = uring_driver_thread_sqe(t->d, &t->tags[i]);

		ck_assert_ptr_nonnull(sqe);
		io_uring_prep_read(sqe, t->data[0], &t->buf[i], 1, 0);
	}
}

/*
 * Another thread's: ask the hardware queue's thread to serve, once it is
 * asleep, twice; then let its reads end, and the loop.
 */
static void *kicker(void *arg)
{
	struct mqt *t = arg;

	sleep_ms(SETTLE_MS);
	uring_driver_watch_again_queue(t->d, 0);
	t->woke_first = wait_for(&t->serves, 1);
	sleep_ms(SETTLE_MS);
	uring_driver_watch_again_queue(t->d, 0);
	t->woke_second = wait_for(&t->serves, 2);
	ck_assert_int_eq(write(t->data[1], "xxxxxxxx", ENTRIES), ENTRIES);
	wait_for(&t->reads, ENTRIES);
	ck_assert_int_eq(write(t->stop[1], "x", 1), 1);
	return NULL;
}

static void mqt_start(struct mqt *t)
{
	char why[256];

	memset(t, 0, sizeof(*t));
	ck_assert_int_eq(pipe(t->stop), 0);
	ck_assert_int_eq(pipe(t->data), 0);
	t->set = (struct blk_mq_tag_set){ .ops = &uring_mq_ops, .nr_hw_queues = 1,
					  .queue_depth = ENTRIES, .nr_cpus = 1 };
	t->q = blk_mq_init_queue(&t->set, NULL, why, sizeof(why));
	ck_assert_msg(t->q != NULL, "%s", why);
	ck_assert_msg(!blk_mq_elevator_init(t->q, "none", why, sizeof(why)), "%s", why);
	t->d = uring_driver_new(t->q, ENTRIES, 0, &dev_null_ops, NULL, why, sizeof(why));
	ck_assert_msg(t->d != NULL, "uring_driver_new: %s", why);
	t->w = (struct uring_watch){ .fd = t->stop[0], .serve = stop_serve, .arg = t,
				     .complete = read_complete,
				     .serve_queue = fill_serve_queue };
}

static void mqt_stop(struct mqt *t)
{
	ck_assert_int_eq(uring_driver_free(t->d), 0);
	blk_mq_free_queue(t->q);
	for (int i = 0; i < 2; i++) {
		close(t->stop[i]);
		close(t->data[i]);
	}
}

/*
 * Its SQ full when the thread went to sleep, the read of its eventfd was
 * not out: a kick from another thread waited for one of those commands to
 * end, which with FUSE's fetches may be never.
 */
START_TEST(kick_wakes_a_thread_whose_sq_was_full)
{
	struct mqt t;
	pthread_t th;

	mqt_start(&t);
	ck_assert_int_eq(pthread_create(&th, NULL, kicker, &t), 0);
	uring_driver_run(t.d, &t.w);
	pthread_join(th, NULL);
	ck_assert_msg(t.woke_first, "the first kick never reached the thread");
	ck_assert_msg(t.woke_second, "a kick after the watcher filled the SQ never woke the thread");
	ck_assert_uint_eq(__atomic_load_n(&t.reads, __ATOMIC_ACQUIRE), ENTRIES);
	mqt_stop(&t);
}
END_TEST

/*
 * The watcher's first serve sends a read, waits until the hardware queue's
 * thread has ended it, and says it waits for requests to end (BLOCKED):
 * the end came before the loop set end_wake, so it woke no one, and no
 * other request is out to wake the loop.  The loop must look again, not
 * sleep: the second serve comes and ends the run.  (A 1 ms limit on the
 * loop's wait hid this; without one the loop slept for ever.)
 */
struct endt {
	struct mqt t;
	struct bio bio;
	struct bio_vec vec;
	char *buf;
	unsigned int serves; /* atomic */
	unsigned int ended;  /* atomic */
};

static void endt_end_io(struct bio *bio, int error)
{
	struct endt *e = bio->bi_private;

	ck_assert_int_eq(error, 0);
	__atomic_add_fetch(&e->ended, 1, __ATOMIC_RELEASE);
}

static enum uring_serve end_then_block(void *arg)
{
	struct endt *e = arg;

	if (__atomic_add_fetch(&e->serves, 1, __ATOMIC_ACQ_REL) > 1)
		return URING_SERVE_DONE;
	e->vec = (struct bio_vec){ e->buf, 4096 };
	bio_init(&e->bio, REQ_OP_READ, 0, 4096, &e->vec, 1);
	e->bio.bi_end_io = endt_end_io;
	e->bio.bi_private = e;
	submit_bio(e->t.q, &e->bio);
	ck_assert_msg(wait_for(&e->ended, 1), "the read never ended");
	return URING_SERVE_BLOCKED;
}

/* Another thread's: the second serve comes within WAIT_MS of the end, or the loop slept past it. */
static void *end_watchdog(void *arg)
{
	struct endt *e = arg;

	ck_assert_msg(wait_for(&e->ended, 1), "the read never ended");
	ck_assert_msg(wait_for(&e->serves, 2),
		      "the loop slept past an end that came while serve looked");
	return NULL;
}

START_TEST(an_end_while_serve_looked_is_not_slept_past)
{
	static struct endt e;
	pthread_t th;

	mqt_start(&e.t);
	ck_assert_int_eq(posix_memalign((void **)&e.buf, 4096, 4096), 0);
	e.t.w.serve = end_then_block;
	e.t.w.arg = &e;
	e.t.w.serve_queue = NULL;
	ck_assert_int_eq(pthread_create(&th, NULL, end_watchdog, &e), 0);
	uring_driver_run(e.t.d, &e.t.w);
	pthread_join(th, NULL);
	ck_assert_uint_eq(__atomic_load_n(&e.serves, __ATOMIC_ACQUIRE), 2);
	mqt_stop(&e.t);
	free(e.buf);
}
END_TEST

static Suite *uring_mq_suite(void)
{
	Suite *s = suite_create("uring_mq");
	TCase *tc = tcase_create("wake");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, kick_wakes_a_thread_whose_sq_was_full);
	tcase_add_test(tc, an_end_while_serve_looked_is_not_slept_past);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(uring_mq_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
