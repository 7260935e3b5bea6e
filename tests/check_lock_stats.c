/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_lock_stats.c - the queue lock's statistics: the histogram's buckets
 * and percentiles, wait and hold times of the queue lock, and the time in
 * the elevator's hooks per request, all on a clock the test moves.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elv_harness.h"
#include "fake_mq.h"

/* ---- the histogram ---- */

/* A percentile is the top of the bucket its sample fell in: at most an eighth above. */
#define ck_assert_bucket_of(p, v)                                                                  \
	do {                                                                                       \
		ck_assert_uint_ge((p), (v));                                                       \
		ck_assert_uint_le((p), (v) + (v) / 8);                                             \
	} while (0)

/* Every value falls in a bucket whose top is at or above it, and the one before tops out below. */
START_TEST(test_bucket_bounds)
{
	static const uint64_t big[] = {1ull << 20, (1ull << 20) - 1, (1ull << 40) + 12345,
				       1ull << 63, UINT64_MAX};

	for (uint64_t v = 0; v < 100000; v++) {
		unsigned int b = blk_hist_bucket(v);

		ck_assert_uint_lt(b, BLK_HIST_BUCKETS);
		ck_assert_uint_ge(blk_hist_bucket_upper(b), v);
		if (b)
			ck_assert_uint_lt(blk_hist_bucket_upper(b - 1), v);
	}
	for (unsigned int i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
		unsigned int b = blk_hist_bucket(big[i]);

		ck_assert_uint_lt(b, BLK_HIST_BUCKETS);
		ck_assert_uint_ge(blk_hist_bucket_upper(b), big[i]);
		ck_assert_uint_lt(blk_hist_bucket_upper(b - 1), big[i]);
	}
	ck_assert_uint_eq(blk_hist_bucket(UINT64_MAX), BLK_HIST_BUCKETS - 1);
}
END_TEST

/* A bucket is at most an eighth of its values wide: what a percentile may be off by. */
START_TEST(test_bucket_resolution)
{
	for (uint64_t v = 8; v < (1ull << 62); v = v * 3 + 1) {
		unsigned int b = blk_hist_bucket(v);
		uint64_t lo = blk_hist_bucket_upper(b - 1) + 1;

		ck_assert_uint_le(blk_hist_bucket_upper(b) - lo + 1, lo / 8);
	}
}
END_TEST

START_TEST(test_percentile_empty)
{
	static struct blk_hist h;

	ck_assert_uint_eq(blk_hist_percentile(&h, 50), 0);
	ck_assert_uint_eq(blk_hist_percentile(&h, 99), 0);
}
END_TEST

/* One sample: every percentile is it, not its bucket's edge. */
START_TEST(test_percentile_one)
{
	static struct blk_hist h;

	blk_hist_add(&h, 1000);
	ck_assert_uint_eq(blk_hist_percentile(&h, 50), 1000);
	ck_assert_uint_eq(blk_hist_percentile(&h, 99), 1000);
	ck_assert_uint_eq(h.min, 1000);
	ck_assert_uint_eq(h.max, 1000);
}
END_TEST

/* 1..100: p50 is 50 and p99 is 99, each within its bucket's eighth. */
START_TEST(test_percentile_uniform)
{
	static struct blk_hist h;

	for (uint64_t v = 1; v <= 100; v++)
		blk_hist_add(&h, v);
	ck_assert_uint_eq(h.count, 100);
	ck_assert_uint_eq(h.sum, 5050);
	ck_assert_bucket_of(blk_hist_percentile(&h, 50), 50);
	ck_assert_uint_ge(blk_hist_percentile(&h, 99), 99);
	ck_assert_uint_le(blk_hist_percentile(&h, 99), 100);
	ck_assert_uint_eq(blk_hist_percentile(&h, 100), 100);
}
END_TEST

/*
 * The tail: one slow sample in a hundred is not the p99 (ninety-nine are at
 * or below 100), two are.
 */
START_TEST(test_percentile_tail)
{
	static struct blk_hist h;

	for (int i = 0; i < 99; i++)
		blk_hist_add(&h, 100);
	blk_hist_add(&h, 10000);
	ck_assert_bucket_of(blk_hist_percentile(&h, 50), 100);
	ck_assert_bucket_of(blk_hist_percentile(&h, 99), 100);
	memset(&h, 0, sizeof(h));
	for (int i = 0; i < 98; i++)
		blk_hist_add(&h, 100);
	blk_hist_add(&h, 10000);
	blk_hist_add(&h, 10000);
	ck_assert_bucket_of(blk_hist_percentile(&h, 50), 100);
	ck_assert_uint_eq(blk_hist_percentile(&h, 99), 10000);
}
END_TEST

/* ---- the lock, on a clock the test moves ---- */

/* Each read counted, and moved on by step (0: only by the test). */
static struct blk_clock tclock;
static uint64_t tclock_step;
static unsigned int tclock_reads;

static uint64_t tclock_now(const struct blk_clock *clock)
{
	(void)clock;
	__atomic_add_fetch(&tclock_reads, 1, __ATOMIC_SEQ_CST);
	return __atomic_add_fetch(&tclock.virtual_ns, tclock_step, __ATOMIC_SEQ_CST);
}

static void tclock_advance(uint64_t ns)
{
	__atomic_add_fetch(&tclock.virtual_ns, ns, __ATOMIC_SEQ_CST);
}

/*
 * On, over the test's clock, each read of which moves it by step: each
 * hook call then takes step, none of which is the clock's (clock_cost 0).
 */
static struct fake_disk *timed_disk(const char *elevator, uint64_t step, bool stopped)
{
	struct fake_disk *fd = stopped ? elv_stopped_disk(elevator) : fake_disk_new(elevator);

	tclock.now = tclock_now;
	tclock.virtual_ns = 5000;
	tclock_step = step;
	fd->q->lock_stats.clock = &tclock;
	blk_queue_lock(fd->q);
	blk_lock_stats_set_enabled(&fd->q->lock_stats, true);
	fd->q->lock_stats.clock_cost = 0;
	blk_queue_unlock(fd->q);
	return fd;
}

/* Off (the default): taking and letting go of the lock counts nothing. */
START_TEST(test_off_counts_nothing)
{
	struct fake_disk *fd = fake_disk_new("deadline");
	struct test_bio tb[2];

	ck_assert(!blk_lock_stats_enabled(&fd->q->lock_stats));
	elv_submit(fd, &tb[0], REQ_OP_READ, 100, 8);
	elv_submit(fd, &tb[1], REQ_OP_READ, 900, 8);
	fake_complete_all(fd);
	ck_assert_uint_eq(fd->q->lock_stats.c.wait.count, 0);
	ck_assert_uint_eq(fd->q->lock_stats.c.hold.count, 0);
	ck_assert_uint_eq(fd->q->lock_stats.c.elv_rq.count, 0);
	ck_assert_uint_eq(fd->q->lock_stats.c.elv_calls, 0);
	elv_assert_ended(tb, 2);
	fake_disk_free(fd);
}
END_TEST

/*
 * Held for 1000 ns, with no wait: the hold is 1000 exactly, the wait 0 (a
 * free lock is not timed from the attempt, however the clock moves).
 */
START_TEST(test_hold_time)
{
	struct fake_disk *fd = timed_disk("none", 0, false);
	struct blk_lock_counts *c = &fd->q->lock_stats.c;

	blk_queue_lock(fd->q);
	blk_lock_stats_reset(&fd->q->lock_stats); /* the acquisition being timed goes on */
	tclock_advance(1000);
	blk_queue_unlock(fd->q);
	ck_assert_uint_eq(c->wait.count, 0);
	ck_assert_uint_eq(c->hold.count, 1);
	ck_assert_uint_eq(c->hold.max, 1000);
	ck_assert_uint_eq(blk_hist_percentile(&c->hold, 50), 1000);
	blk_queue_lock(fd->q);
	tclock_advance(30);
	blk_queue_unlock(fd->q);
	ck_assert_uint_eq(c->wait.count, 1);
	ck_assert_uint_eq(c->wait.max, 0);
	ck_assert_uint_eq(c->contentions, 0);
	ck_assert_uint_eq(c->hold.count, 2);
	ck_assert_bucket_of(blk_hist_percentile(&c->hold, 50), 30);
	ck_assert_uint_eq(blk_hist_percentile(&c->hold, 99), 1000);
	fake_disk_free(fd);
}
END_TEST

/* Switched on while held: that hold had no start, so only the next acquisition counts. */
START_TEST(test_enable_while_held)
{
	struct fake_disk *fd = fake_disk_new("none");
	struct blk_lock_counts *c = &fd->q->lock_stats.c;

	tclock.now = tclock_now;
	tclock.virtual_ns = 0;
	tclock_step = 0;
	fd->q->lock_stats.clock = &tclock;
	blk_queue_lock(fd->q);
	blk_lock_stats_set_enabled(&fd->q->lock_stats, true);
	tclock_advance(1000000);
	blk_queue_unlock(fd->q);
	ck_assert_uint_eq(c->hold.count, 0);
	blk_queue_lock(fd->q);
	tclock_advance(7);
	blk_lock_stats_set_enabled(&fd->q->lock_stats, false);
	blk_queue_unlock(fd->q); /* switched off while held: this hold still ends */
	ck_assert_uint_eq(c->wait.count, 1);
	ck_assert_uint_eq(c->hold.count, 1);
	ck_assert_uint_eq(c->hold.max, 7);
	blk_queue_lock(fd->q);
	blk_queue_unlock(fd->q);
	ck_assert_uint_eq(c->wait.count, 1);
	ck_assert_uint_eq(c->hold.count, 1);
	fake_disk_free(fd);
}
END_TEST

static void *take_lock(void *arg)
{
	struct request_queue *q = arg;

	blk_queue_lock(q);
	blk_queue_unlock(q);
	return NULL;
}

/*
 * A thread that asks while the lock is held 5000 ns more waits those
 * 5000 ns: the holder's hold and the waiter's wait both read them.
 */
START_TEST(test_wait_time)
{
	struct fake_disk *fd = timed_disk("none", 0, false);
	struct blk_lock_counts *c = &fd->q->lock_stats.c;
	pthread_t t;
	unsigned int reads;

	blk_queue_lock(fd->q);
	blk_lock_stats_reset(&fd->q->lock_stats);
	reads = __atomic_load_n(&tclock_reads, __ATOMIC_SEQ_CST);
	ck_assert_int_eq(pthread_create(&t, NULL, take_lock, fd->q), 0);
	/* the thread has read the time it asked at */
	while (__atomic_load_n(&tclock_reads, __ATOMIC_SEQ_CST) == reads)
		sched_yield();
	tclock_advance(5000);
	blk_queue_unlock(fd->q);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_uint_eq(c->wait.count, 1);
	ck_assert_uint_eq(c->wait.max, 5000);
	ck_assert_uint_eq(c->contentions, 1);
	ck_assert_uint_eq(c->hold.count, 2);
	ck_assert_uint_eq(c->hold.max, 5000);
	ck_assert_uint_eq(c->hold.min, 0);
	fake_disk_free(fd);
}
END_TEST

/* ---- the elevator's time per request ---- */

/*
 * Each clock read moves it by 100 ns, so each timed hook call takes 100:
 * noop's request is one add and one dispatch, 200 ns; the dispatch that
 * finds nothing is in the total, not in a request's.
 */
START_TEST(test_elevator_per_request)
{
	struct fake_disk *fd = timed_disk("noop", 100, true);
	struct blk_lock_counts *c = &fd->q->lock_stats.c;
	struct test_bio tb[4];

	for (unsigned int i = 0; i < 4; i++)
		elv_submit(fd, &tb[i], REQ_OP_READ, 1000 * (i + 1), 8);
	fake_start(fd);
	fake_complete_all(fd);
	elv_assert_ended(tb, 4);
	ck_assert_uint_eq(c->elv_rq.count, 4);
	ck_assert_uint_eq(c->elv_rq.min, 200);
	ck_assert_uint_eq(c->elv_rq.max, 200);
	ck_assert_uint_eq(blk_hist_percentile(&c->elv_rq, 50), 200);
	ck_assert_uint_eq(blk_hist_percentile(&c->elv_rq, 99), 200);
	ck_assert_uint_gt(c->elv_ns, c->elv_rq.sum);
	ck_assert_uint_eq(c->elv_ns, 100 * c->elv_calls);
	fake_disk_free(fd);
}
END_TEST

/* deadline's requests also go through completed: 300 ns each. */
START_TEST(test_elevator_completed)
{
	struct fake_disk *fd = timed_disk("deadline", 100, true);
	struct blk_lock_counts *c = &fd->q->lock_stats.c;
	struct test_bio tb[3];

	for (unsigned int i = 0; i < 3; i++)
		elv_submit(fd, &tb[i], REQ_OP_WRITE, 1000 * (i + 1), 8);
	fake_start(fd);
	fake_complete_all(fd);
	elv_assert_ended(tb, 3);
	ck_assert_uint_eq(c->elv_rq.count, 3);
	ck_assert_uint_eq(c->elv_rq.min, 300);
	ck_assert_uint_eq(c->elv_rq.max, 300);
	fake_disk_free(fd);
}
END_TEST

/*
 * Two requests that a bio between them joins (noop's requests_merged) are
 * one request: both adds, the merge and the dispatch, 400 ns; U, apart
 * (and keeping the last-merge cache off the second), 200.
 */
START_TEST(test_elevator_merged_requests)
{
	struct fake_disk *fd = timed_disk("noop", 100, true);
	struct blk_lock_counts *c = &fd->q->lock_stats.c;
	struct test_bio tb[4];

	elv_submit(fd, &tb[0], REQ_OP_WRITE, 100, 8);
	elv_submit(fd, &tb[1], REQ_OP_WRITE, 116, 8);
	elv_submit(fd, &tb[2], REQ_OP_WRITE, 500, 8);
	elv_submit(fd, &tb[3], REQ_OP_WRITE, 108, 8);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 2);
	elv_assert_dispatched_op(fd, 0, REQ_OP_WRITE, 100, 24);
	fake_complete_all(fd);
	elv_assert_ended(tb, 4);
	ck_assert_uint_eq(c->elv_rq.count, 2);
	ck_assert_uint_eq(c->elv_rq.min, 200);
	ck_assert_uint_eq(c->elv_rq.max, 400);
	fake_disk_free(fd);
}
END_TEST

/*
 * Switched on, the statistics measure what two reads of the clock differ
 * by (here the step), and take it off every time measured: a hook call
 * that moved the clock by 100 with reads costing 30 took 70.
 */
START_TEST(test_clock_cost)
{
	struct fake_disk *fd = elv_stopped_disk("noop");
	struct blk_lock_stats *s = &fd->q->lock_stats;
	struct test_bio tb[2];

	tclock.now = tclock_now;
	tclock_step = 100;
	s->clock = &tclock;
	blk_queue_lock(fd->q);
	blk_lock_stats_set_enabled(s, true);
	ck_assert_uint_eq(s->clock_cost, 100);
	s->clock_cost = 30;
	blk_queue_unlock(fd->q);
	elv_submit(fd, &tb[0], REQ_OP_READ, 100, 8);
	elv_submit(fd, &tb[1], REQ_OP_READ, 900, 8);
	fake_start(fd);
	fake_complete_all(fd);
	elv_assert_ended(tb, 2);
	ck_assert_uint_eq(s->c.elv_rq.min, 140);
	ck_assert_uint_eq(s->c.elv_rq.max, 140);
	ck_assert_uint_eq(s->c.elv_ns, 70 * s->c.elv_calls);
	/* a hold with nothing in it is two reads apart: one step, 30 of it the clock's */
	blk_queue_lock(fd->q);
	blk_lock_stats_reset(s);
	blk_queue_unlock(fd->q);
	ck_assert_uint_eq(s->c.hold.count, 1);
	ck_assert_uint_eq(s->c.hold.max, 70);
	fake_disk_free(fd);
}
END_TEST

/* Without an elevator the lock is timed and no hook ever is. */
START_TEST(test_elevator_none)
{
	struct fake_disk *fd = timed_disk("none", 100, true);
	struct blk_lock_counts *c = &fd->q->lock_stats.c;
	struct test_bio tb[3];

	for (unsigned int i = 0; i < 3; i++)
		elv_submit(fd, &tb[i], REQ_OP_READ, 1000 * (i + 1), 8);
	fake_start(fd);
	fake_complete_all(fd);
	elv_assert_ended(tb, 3);
	ck_assert_uint_gt(c->wait.count, 6);
	ck_assert_uint_eq(c->elv_rq.count, 0);
	ck_assert_uint_eq(c->elv_calls, 0);
	ck_assert_uint_eq(c->elv_ns, 0);
	fake_disk_free(fd);
}
END_TEST

/*
 * The multi-queue queue times its calls into the elevator where it makes
 * them (blk_mq_insert_request, blk_mq_take_sched): noop's request is one
 * add and one dispatch there too, on either hardware queue; none, nothing.
 */
static char mq_mem[6 * 4096] __attribute__((aligned(4096)));

static void mq_elevator_run(const char *elevator, uint64_t per_rq)
{
	struct fake_mq_opts o = {.elevator = elevator, .nr_hw_queues = 2, .queue_depth = 4};
	struct fake_mq *fm = fake_mq_new(&o);
	struct blk_lock_counts *c = &fm->q->lock_stats.c;
	struct test_bio tb[6];

	tclock.now = tclock_now;
	tclock.virtual_ns = 0;
	tclock_step = 100;
	fm->q->lock_stats.clock = &tclock;
	blk_lock_stats_set_enabled(&fm->q->lock_stats, true);
	fm->q->lock_stats.clock_cost = 0;
	for (unsigned int i = 0; i < 6; i++) {
		tbio_init(&tb[i], REQ_OP_READ, 1000 * (i + 1), 8, mq_mem + i * 4096);
		fake_mq_submit(fm, &tb[i].bio, i % 2);
	}
	fake_mq_drain(fm);
	elv_assert_ended(tb, 6);
	ck_assert_uint_gt(c->wait.count, 12);
	ck_assert_uint_eq(c->elv_rq.count, per_rq ? 6 : 0);
	ck_assert_uint_eq(c->elv_rq.min, per_rq);
	ck_assert_uint_eq(c->elv_rq.max, per_rq);
	if (!per_rq)
		ck_assert_uint_eq(c->elv_calls, 0);
	fake_mq_free(fm);
}

START_TEST(test_mq_elevator)
{
	mq_elevator_run("noop", 200);
}
END_TEST

START_TEST(test_mq_none)
{
	mq_elevator_run(NULL, 0);
}
END_TEST

/* ---- the text of queue/lock_stats ---- */

START_TEST(test_format)
{
	struct fake_disk *fd = timed_disk("noop", 100, true);
	struct blk_lock_stats *s = &fd->q->lock_stats;
	struct test_bio tb[2];
	char buf[4096], want[64];
	int n;

	elv_submit(fd, &tb[0], REQ_OP_READ, 100, 8);
	elv_submit(fd, &tb[1], REQ_OP_READ, 900, 8);
	fake_start(fd);
	fake_complete_all(fd);
	elv_assert_ended(tb, 2);
	n = blk_lock_stats_format(s, "noop", buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	ck_assert_uint_eq(strlen(buf), (size_t)n);
	snprintf(want, sizeof(want), "\nacquisitions=%" PRIu64 "\n", s->c.wait.count);
	ck_assert_ptr_nonnull(strstr(buf, want));
	ck_assert_ptr_nonnull(strstr(buf, "enabled=1\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\ncontentions=0\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\nelevator=noop\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\nelevator_requests=2\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\nelevator_rq_ns_p50=200\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\nelevator_rq_ns_p99=200\n"));
	snprintf(want, sizeof(want), "\nelevator_ns_per_request=%" PRIu64 "\n", s->c.elv_ns / 2);
	ck_assert_ptr_nonnull(strstr(buf, want));
	for (int len = 0; len < n; len += 7)
		ck_assert_int_eq(blk_lock_stats_format(s, "noop", buf, (size_t)len), -ENOSPC);
	blk_lock_stats_reset(s);
	ck_assert_int_gt(blk_lock_stats_format(s, "noop", buf, sizeof(buf)), 0);
	ck_assert_ptr_nonnull(strstr(buf, "\nacquisitions=0\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\nhold_ns_p99=0\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\nelevator_requests=0\n"));
	fake_disk_free(fd);
}
END_TEST

static Suite *lock_stats_suite(void)
{
	Suite *s = suite_create("lock_stats");
	TCase *hist = tcase_create("histogram");
	TCase *lock = tcase_create("lock");
	TCase *elv = tcase_create("elevator");
	TCase *text = tcase_create("text");

	tcase_add_test(hist, test_bucket_bounds);
	tcase_add_test(hist, test_bucket_resolution);
	tcase_add_test(hist, test_percentile_empty);
	tcase_add_test(hist, test_percentile_one);
	tcase_add_test(hist, test_percentile_uniform);
	tcase_add_test(hist, test_percentile_tail);
	suite_add_tcase(s, hist);

	tcase_add_test(lock, test_off_counts_nothing);
	tcase_add_test(lock, test_hold_time);
	tcase_add_test(lock, test_enable_while_held);
	tcase_add_test(lock, test_wait_time);
	suite_add_tcase(s, lock);

	tcase_add_test(elv, test_elevator_per_request);
	tcase_add_test(elv, test_elevator_completed);
	tcase_add_test(elv, test_elevator_merged_requests);
	tcase_add_test(elv, test_elevator_none);
	tcase_add_test(elv, test_clock_cost);
	tcase_add_test(elv, test_mq_elevator);
	tcase_add_test(elv, test_mq_none);
	suite_add_tcase(s, elv);

	tcase_add_test(text, test_format);
	suite_add_tcase(s, text);
	return s;
}

int main(void)
{
	return fake_run_suite(lock_stats_suite());
}
