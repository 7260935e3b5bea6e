/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_uring_timers.c - the io_uring driver's timers: an elevator's wake-up runs the queue, and a
 * model's time and depth hold for every elevator.
 */
#include <check.h>
#include <stdlib.h>

#include "uring_harness.h"

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


/*
 * Look before taking: under a model of depth 1, and of depth 4, sixteen
 * reads at once are sixteen issues, no requeue and sixteen completions,
 * whatever the elevator.  What the device cannot take yet waits in the
 * elevator; it is never issued and taken back.
 */
START_TEST(test_model_depth_issues_each_once)
{
	const char *e = fake_elevator(_i);
	struct trace_counts one =
		modelled_reads(e, "ssd:read_us=1000,depth=1", 16, &dev_file_ops, NULL);
	struct trace_counts four =
		modelled_reads(e, "ssd:read_us=1000,depth=4", 16, &dev_file_ops, NULL);

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
	struct trace_counts one =
		modelled_reads("noop", "ssd:read_us=30000,depth=1", 4, &dev_file_ops, &ns);
	struct trace_counts four;

	ck_assert_uint_ge(ns, 120 * NSEC_PER_MSEC);
	ck_assert_uint_ge(one.min_d2c_ns, 30 * NSEC_PER_MSEC);
	ck_assert_uint_eq(one.max_in_flight, 1);
	four = modelled_reads("noop", "ssd:read_us=30000,depth=4", 4, &dev_file_ops, &ns);
	ck_assert_uint_ge(ns, 30 * NSEC_PER_MSEC);
	ck_assert_uint_ge(four.min_d2c_ns, 30 * NSEC_PER_MSEC);
	ck_assert_uint_eq(four.max_in_flight, 4);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("uring_timers");
	TCase *tc = tcase_create("timers");
	int unavailable = uring_available();

	if (unavailable)
		return unavailable;
	tcase_set_timeout(tc, 2 * WAIT_SECONDS);
	tcase_add_test(tc, test_timed_dispatch);
	tcase_add_test(tc, test_timed_dispatch_already_past);
	tcase_add_test(tc, test_model_times_and_depth);
	tcase_add_loop_test(tc, test_model_depth_issues_each_once, 0, fake_nr_elevators());
	suite_add_tcase(s, tc);
	return fake_run_suite(s);
}
