/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_mq_model.c - the multi-queue model against what can be worked out
 * by hand: one I/O at a time is the sum of its steps, a saturated CPU or
 * lock or a device short of tags sets the rate, and a run repeats exactly.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include "fake_driver.h"
#include "mq_model.h"

static struct mq_model_params base(void)
{
	return (struct mq_model_params){
		.cpus = 2, .hw_queues = 1, .jobs = 1, .iodepth = 1, .tags = 64,
		.shared_lock = true, .client_ns = 4000, .take_ns = 1000, .submit_lock_ns = 300,
		.end_lock_ns = 200, .answer_ns = 1000, .device_ns = 10000, .requests = 20000,
	};
}

static struct mq_model_result run(const struct mq_model_params *p)
{
	struct mq_model_result r;
	char why[160];

	ck_assert_msg(!mq_model_check(p, why, sizeof(why)), "refused: %s", why);
	ck_assert_int_eq(mq_model_run(p, &r), 0);
	return r;
}

static void assert_near(double got, double want, double tolerance, const char *what)
{
	ck_assert_msg(fabs(got - want) <= want * tolerance, "%s: %.1f, not %.1f within %.1f%%",
		      what, got, want, tolerance * 100);
}

/* One I/O in flight: nothing overlaps, so each takes every step's time in turn. */
START_TEST(test_qd1_is_the_sum_of_the_steps)
{
	struct mq_model_params p = base();
	struct mq_model_result r = run(&p);

	assert_near(r.iops, 1e9 / (4000 + 1000 + 300 + 10000 + 200 + 1000), 0.001, "IOPS");
	ck_assert_double_eq_tol(r.lock_wait_ns, 0, 1e-9);
	ck_assert_double_eq_tol(r.tag_wait_fraction, 0, 1e-9);
}
END_TEST

/*
 * A sleeping thread takes up work wake_ns after it is handed it: at QD1
 * the queue's thread sleeps twice an I/O (before the take, before the
 * end) and the job once (before the reap), and its own next submission
 * finds it awake.
 */
START_TEST(test_wake_ups_add_to_each_io)
{
	struct mq_model_params p = base();
	struct mq_model_result r;

	p.wake_ns = 5000;
	r = run(&p);
	assert_near(r.iops, 1e9 / (4000 + 1000 + 300 + 10000 + 200 + 1000 + 3 * 5000), 0.001,
		    "IOPS");
}
END_TEST

/*
 * The job and the one queue's thread share CPU 0 (both number 0): with
 * enough in flight that CPU is never idle, and every I/O takes all of its
 * CPU time there.
 */
START_TEST(test_a_saturated_cpu_sets_the_rate)
{
	struct mq_model_params p = base();
	struct mq_model_result r;

	p.iodepth = 32;
	r = run(&p);
	assert_near(r.iops, 1e9 / (4000 + 1000 + 300 + 200 + 1000), 0.005, "IOPS");
	assert_near(r.cpu_utilisation, 0.5, 0.01, "busy CPUs of 2");
}
END_TEST

/*
 * Eight queues on eight CPUs, and locked steps ten times the rest: one
 * lock for the queue caps the rate at one I/O per locked time, and is
 * never free; a lock per queue lets the eight run side by side.
 */
START_TEST(test_one_queue_lock_caps_what_many_queues_do)
{
	struct mq_model_params p = base();
	struct mq_model_result shared, per_hctx;

	p.cpus = p.hw_queues = p.jobs = 8;
	p.iodepth = 16;
	p.client_ns = 100;
	p.take_ns = p.answer_ns = 50;
	p.submit_lock_ns = p.end_lock_ns = 1000;
	p.device_ns = 0;
	shared = run(&p);
	assert_near(shared.iops, 1e9 / 2000, 0.01, "IOPS under one lock");
	ck_assert_msg(shared.lock_utilisation > 0.99, "the lock was free %.1f%% of the time",
		      (1 - shared.lock_utilisation) * 100);
	ck_assert_msg(shared.lock_wait_ns > 1000, "waited %.0f ns for the lock", shared.lock_wait_ns);
	p.shared_lock = false;
	per_hctx = run(&p);
	ck_assert_msg(per_hctx.iops > 6 * shared.iops, "a lock per queue: %.0f IOPS, one: %.0f",
		      per_hctx.iops, shared.iops);
}
END_TEST

/* Four tags and a slow device: four I/Os per device time, and the rest wait for a tag. */
START_TEST(test_tags_bound_a_slow_device)
{
	struct mq_model_params p = base();
	struct mq_model_result r;

	p.iodepth = 32;
	p.tags = 4;
	p.device_ns = 100000;
	r = run(&p);
	assert_near(r.iops, 4 * 1e9 / 100000, 0.01, "IOPS");
	ck_assert_msg(r.tag_wait_fraction > 0.95, "%.1f%% waited for a tag",
		      r.tag_wait_fraction * 100);
	p.tags = 64;
	r = run(&p);
	ck_assert_double_eq_tol(r.tag_wait_fraction, 0, 1e-9);
}
END_TEST

START_TEST(test_a_run_repeats_exactly)
{
	struct mq_model_params p = base();
	struct mq_model_result a, b;

	p.cpus = 3;
	p.hw_queues = 2;
	p.jobs = 5;
	p.iodepth = 7;
	p.tags = 3;
	a = run(&p);
	b = run(&p);
	ck_assert_int_eq(memcmp(&a, &b, sizeof(a)), 0);
}
END_TEST

START_TEST(test_parameters_that_make_no_model_are_refused)
{
	struct mq_model_params p = base();
	char why[160];

	p.cpus = 0;
	ck_assert_int_eq(mq_model_check(&p, why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "cpus, hardware queues, jobs, iodepth and tags must be at least 1");
	p = base();
	p.client_ns = p.take_ns = p.submit_lock_ns = p.end_lock_ns = p.answer_ns = 0;
	p.device_ns = 0;
	ck_assert_int_eq(mq_model_check(&p, why, sizeof(why)), -EINVAL);
	p = base();
	p.requests = 10;
	ck_assert_int_eq(mq_model_check(&p, why, sizeof(why)), -EINVAL);
}
END_TEST

static Suite *mq_model_suite(void)
{
	Suite *s = suite_create("mq_model");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_qd1_is_the_sum_of_the_steps);
	tcase_add_test(tc, test_wake_ups_add_to_each_io);
	tcase_add_test(tc, test_a_saturated_cpu_sets_the_rate);
	tcase_add_test(tc, test_one_queue_lock_caps_what_many_queues_do);
	tcase_add_test(tc, test_tags_bound_a_slow_device);
	tcase_add_test(tc, test_a_run_repeats_exactly);
	tcase_add_test(tc, test_parameters_that_make_no_model_are_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fake_run_suite(mq_model_suite());
}
