/* SPDX-License-Identifier: BSD-3-Clause */
/* check_bfq.c - the BFQ elevator: B-WF2Q+ shares, budgets, idling, classes, weights, latency. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elv_harness.h"
#include "elv_sim.h"
#include "model.h"
#include "tunable_test.h"
#include "../sched/bfq_impl.h"

#define PID_A 100
#define PID_B 200
#define PID_C 300

#define RT0 IOPRIO_PRIO_VALUE(IOPRIO_CLASS_RT, 0)
#define IDLE IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)

static struct fake_disk *bfq_disk(void)
{
	return elv_disk("bfq", true, 1024);
}

static struct bfq_queue *sync_queue_of(const struct fake_disk *fd, pid_t pid);

/* The same on flash: queue/rotational 0, which bfq asks of the queue as it decides. */
static struct fake_disk *bfq_flash_disk(void)
{
	struct fake_disk *fd = bfq_disk();

	fd->q->limits.rotational = false;
	return fd;
}

static void submit(struct fake_disk *fd, struct test_bio *tb, pid_t pid, unsigned short ioprio,
		   sector_t sector, unsigned int sectors)
{
	elv_submit_from(fd, tb, REQ_OP_READ, sector, sectors, pid, ioprio);
}

/* An 8-sector read; callers leave gaps so none merge. */
static void read_at(struct fake_disk *fd, struct test_bio *tb, pid_t pid, sector_t sector)
{
	submit(fd, tb, pid, IOPRIO_DEFAULT, sector, 8);
}

/* The driver no longer one at a time: everything to its end. */
static void finish(struct fake_disk *fd, struct test_bio *tb, unsigned int n)
{
	fd->on_dispatch = NULL;
	elv_finish_drained(fd, tb, n);
}

/* Index of the first dispatch of pid, or -1. */
static int first_of(const struct fake_disk *fd, pid_t pid)
{
	for (unsigned int i = 0; i < fd->nr_events; i++)
		if (fd->events[i].pid == pid)
			return (int)i;
	return -1;
}

/* ---- B-WF2Q+ shares ---- */

#define SHARE_DEPTH 16

struct share_run {
	struct test_bio tb[2][SHARE_DEPTH];
	sector_t next[2];
	uint64_t sectors[2];
};

static const pid_t share_pids[2] = { PID_A, PID_B };

/* Every bio that ended goes again at its process's next sector: always busy. */
static void share_refill(struct fake_disk *fd, struct share_run *r)
{
	for (int p = 0; p < 2; p++)
		for (int i = 0; i < SHARE_DEPTH; i++)
			if (r->tb[p][i].ended) {
				r->sectors[p] += 8;
				read_at(fd, &r->tb[p][i], share_pids[p], r->next[p]);
				r->next[p] += 16;
			}
}

/*
 * Two always-busy processes, weights 100 and 300 (the weights tunable),
 * over 6000 requests: B-WF2Q+ (bfq_first_active_entity picking the
 * eligible queue with the smallest finish, bfq_bfqq_served advancing the
 * virtual time) gives B three times A's sectors, within 5%.  A FIFO
 * would give 1:1.
 */
START_TEST(test_service_proportional_to_weights)
{
	struct fake_disk *fd = bfq_disk();
	struct share_run *r = calloc(1, sizeof(*r));
	double ratio;

	ck_assert_ptr_nonnull(r);
	tunable_store_ok(fd, "low_latency", "0");
	tunable_store_ok(fd, "max_budget", "256");
	ck_assert_int_eq(elv_tunable_store(fd->q->elevator, "weights", "100 100\n"), 0);
	ck_assert_int_eq(elv_tunable_store(fd->q->elevator, "weights", "200 300\n"), 0);
	r->next[0] = 1000;
	r->next[1] = 50000000;
	for (int i = 0; i < SHARE_DEPTH; i++)
		for (int p = 0; p < 2; p++) {
			read_at(fd, &r->tb[p][i], share_pids[p], r->next[p]);
			r->next[p] += 16;
		}
	elv_start_serial(fd);
	for (int n = 0; n < 6000; n++) {
		if (!fd->nr_dispatched)
			elv_wake(fd);
		elv_complete_one_after(fd, 1);
		share_refill(fd, r);
	}
	ratio = (double)r->sectors[1] / (double)r->sectors[0];
	ck_assert_msg(ratio > 2.85 && ratio < 3.15, "B/A service %.3f (%llu/%llu), want 3 +- 5%%",
		      ratio, (unsigned long long)r->sectors[1], (unsigned long long)r->sectors[0]);
	finish(fd, &r->tb[0][0], 2 * SHARE_DEPTH);
	free(r);
}
END_TEST

/*
 * B-WF2Q+ picks, of the eligible queues, the one that finishes first
 * (bfq_first_active_entity): B (weight 100) and A (300) start together,
 * B queued first, and A goes first, its finish being a third of B's.
 * After A's first budget (5 reads of 8 sectors, max_budget 64) its start
 * has moved past the virtual time: not eligible, though its next finish
 * is still the smaller, so B gets its budget before A goes again.
 */
START_TEST(test_smallest_eligible_finish_first)
{
	static const struct elv_run want[] = { { PID_A, 5 }, { PID_B, 5 } };
	struct fake_disk *fd = bfq_disk();
	struct test_bio tb[80];

	tunable_store_ok(fd, "low_latency", "0");
	tunable_store_ok(fd, "slice_idle", "0");
	tunable_store_ok(fd, "max_budget", "64");
	ck_assert_int_eq(elv_tunable_store(fd->q->elevator, "weights", "100 300"), 0);
	ck_assert_int_eq(elv_tunable_store(fd->q->elevator, "weights", "200 100"), 0);
	for (unsigned int i = 0; i < 40; i++) {
		read_at(fd, &tb[2 * i], PID_B, 900000 + 16 * i);
		read_at(fd, &tb[2 * i + 1], PID_A, 1000 + 16 * i);
	}
	elv_start_serial(fd);
	elv_serve_serially(fd, 1);
	elv_assert_runs(fd, want, 2);
	finish(fd, tb, 80);
}
END_TEST

/* Weights from ioprio levels: 0 (80) against 4 (40) is 2:1 (bfq_ioprio_to_weight). */
START_TEST(test_ioprio_levels_weigh)
{
	struct fake_disk *fd = bfq_disk();
	struct share_run *r = calloc(1, sizeof(*r));
	unsigned short prio[2] = { IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 4),
				   IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 0) };
	double ratio;

	ck_assert_ptr_nonnull(r);
	tunable_store_ok(fd, "low_latency", "0");
	tunable_store_ok(fd, "max_budget", "256");
	r->next[0] = 1000;
	r->next[1] = 50000000;
	for (int n = -1; n < 4000; n++) {
		for (int p = 0; p < 2; p++)
			for (int i = 0; i < SHARE_DEPTH; i++)
				if (n < 0 || r->tb[p][i].ended) {
					r->sectors[p] += n < 0 ? 0 : 8;
					submit(fd, &r->tb[p][i], share_pids[p], prio[p],
					       r->next[p], 8);
					r->next[p] += 16;
				}
		if (n < 0) {
			elv_start_serial(fd);
			continue;
		}
		if (!fd->nr_dispatched)
			elv_wake(fd);
		elv_complete_one_after(fd, 1);
	}
	ratio = (double)r->sectors[1] / (double)r->sectors[0];
	ck_assert_msg(ratio > 1.9 && ratio < 2.1, "level 0/level 4 service %.3f, want 2 +- 5%%",
		      ratio);
	finish(fd, &r->tb[0][0], 2 * SHARE_DEPTH);
	free(r);
}
END_TEST

/* ---- budget expiry ---- */

/*
 * max_budget 64: a new queue's budget is 2/3 of it, 42 sectors, five
 * 8-sector reads; the sixth does not fit (bfq_select_queue:
 * BFQQE_BUDGET_EXHAUSTED), and __bfq_bfqq_recalc_budget quadruples the
 * budget up to max_budget: 64, eight reads, from then on.
 */
START_TEST(test_budget_exhausted_grows_budget)
{
	static const struct elv_run want[] = {
		{ PID_A, 5 }, { PID_B, 5 }, { PID_A, 8 }, { PID_B, 8 }, { PID_A, 8 }, { PID_B, 8 },
	};
	struct fake_disk *fd = bfq_disk();
	struct test_bio tb[80];

	tunable_store_ok(fd, "low_latency", "0");
	tunable_store_ok(fd, "slice_idle", "0");
	tunable_store_ok(fd, "max_budget", "64");
	for (unsigned int i = 0; i < 40; i++) {
		read_at(fd, &tb[2 * i], PID_A, 1000 + 16 * i);
		read_at(fd, &tb[2 * i + 1], PID_B, 900000 + 16 * i);
	}
	elv_start_serial(fd);
	elv_serve_serially(fd, 1);
	elv_assert_runs(fd, want, 6);
	finish(fd, tb, 80);
}
END_TEST

/*
 * Requests of 50 ms each: at the third completion, 150 ms in, the budget
 * timeout (timeout_sync, 125 ms) has passed with most of the budget left
 * (bfq_may_expire_for_budg_timeout: BFQQE_BUDGET_TIMEOUT), and B gets
 * the disk though A has budget and requests.  A shorter timeout_sync
 * ends A's turn sooner.
 */
static void check_budget_timeout(const char *timeout, unsigned int run)
{
	const struct elv_run want[] = { { PID_A, run }, { PID_B, run }, { PID_A, run } };
	struct fake_disk *fd = bfq_disk();
	struct test_bio tb[40];

	tunable_store_ok(fd, "low_latency", "0");
	if (timeout)
		tunable_store_ok(fd, "timeout_sync", timeout);
	for (unsigned int i = 0; i < 20; i++) {
		read_at(fd, &tb[2 * i], PID_A, 1000 + 16 * i);
		read_at(fd, &tb[2 * i + 1], PID_B, 900000 + 16 * i);
	}
	elv_start_serial(fd);
	elv_serve_serially(fd, 50);
	elv_assert_runs(fd, want, 3);
	finish(fd, tb, 40);
}

START_TEST(test_budget_timeout)
{
	check_budget_timeout(NULL, 3);
	check_budget_timeout("60", 2);
}
END_TEST

/*
 * slice_idle 0: A's two requests done, nothing is left to wait for, and
 * B's first goes out at A's last completion (bfq_completed_request:
 * BFQQE_NO_MORE_REQUESTS), with no wake-up asked for.
 */
START_TEST(test_no_more_requests_without_idling)
{
	static const struct elv_run want[] = { { PID_A, 2 }, { PID_B, 5 } };
	struct fake_disk *fd = bfq_disk();
	struct test_bio tb[7];

	tunable_store_ok(fd, "slice_idle", "0");
	read_at(fd, &tb[0], PID_A, 1000);
	read_at(fd, &tb[1], PID_A, 1016);
	for (unsigned int i = 0; i < 5; i++)
		read_at(fd, &tb[2 + i], PID_B, 900000 + 16 * i);
	elv_start_serial(fd);
	elv_complete_one_after(fd, 1);
	elv_complete_one_after(fd, 1);
	ck_assert_uint_eq(fd->nr_dispatched, 1);
	ck_assert_uint_eq(fd->q->dispatch_at, 0);
	elv_serve_serially(fd, 1);
	elv_assert_runs(fd, want, 2);
	finish(fd, tb, 7);
}
END_TEST

/*
 * A queue that ran dry gets as its next budget what it used
 * (__bfq_bfqq_recalc_budget, BFQQE_NO_MORE_REQUESTS): A's two reads, 16
 * sectors.  Back with twenty, after B's first budget, A has two reads on
 * that budget, then (exhausted: four times, 64) eight more while its
 * finish is still the smaller: ten.  On its old budget (two thirds of
 * max_budget 64: five reads) it would have had five.
 */
START_TEST(test_no_more_requests_budget_is_service)
{
	static const struct elv_run want[] = {
		{ PID_A, 2 }, { PID_B, 5 }, { PID_A, 10 }, { PID_B, 8 }
	};
	struct fake_disk *fd = bfq_disk();
	struct test_bio tb[42];

	tunable_store_ok(fd, "low_latency", "0");
	tunable_store_ok(fd, "slice_idle", "0");
	tunable_store_ok(fd, "max_budget", "64");
	read_at(fd, &tb[0], PID_A, 1000);
	read_at(fd, &tb[1], PID_A, 1016);
	elv_start_serial(fd);
	elv_serve_serially(fd, 1);
	fd->stopped = true;
	for (unsigned int i = 0; i < 20; i++) {
		read_at(fd, &tb[2 + 2 * i], PID_A, 2000 + 16 * i);
		read_at(fd, &tb[3 + 2 * i], PID_B, 900000 + 16 * i);
	}
	elv_start_serial(fd);
	elv_serve_serially(fd, 1);
	elv_assert_runs(fd, want, 4);
	finish(fd, tb, 42);
}
END_TEST

/*
 * Within a queue, the next request is the one nearest ahead of the head,
 * a backward seek counting back_seek_penalty times its length and none
 * further back than back_seek_max KiB (bfq_choose_req).  The head is at
 * 100008 after the first read: 100 sectors back costs 200 against 150
 * ahead, but 100 with a penalty of 1; 40000 back is past 16384 KiB.
 */
static sector_t next_after_head(const char *penalty, sector_t behind, sector_t ahead)
{
	struct fake_disk *fd = bfq_disk();
	struct test_bio tb[3];
	sector_t first;

	tunable_store_ok(fd, "back_seek_penalty", penalty);
	read_at(fd, &tb[0], PID_A, 100000);
	elv_start_serial(fd);
	read_at(fd, &tb[1], PID_A, 100008 - behind);
	read_at(fd, &tb[2], PID_A, 100008 + ahead);
	elv_complete_one_after(fd, 1);
	first = fd->events[1].sector;
	finish(fd, tb, 3);
	return first;
}

START_TEST(test_back_seek_penalty_and_max)
{
	ck_assert_uint_eq(next_after_head("2", 100, 150), 100008 + 150);
	ck_assert_uint_eq(next_after_head("1", 100, 150), 100008 - 100);
	ck_assert_uint_eq(next_after_head("1", 40000, 60000), 100008 + 60000);
	ck_assert_uint_eq(next_after_head("1", 30000, 60000), 100008 - 30000);
}
END_TEST

/* ---- idling ---- */

/*
 * A's only request completes; B waits while the disk idles slice_idle
 * (8 ms) for A's next (bfq_arm_slice_timer), and then A expires
 * (bfq_idle_slice_timer: BFQQE_TOO_IDLE) and B goes.
 */
START_TEST(test_idle_waits_slice_idle_then_expires)
{
	struct fake_disk *fd = bfq_disk();
	struct test_bio tb[2];
	uint64_t done;

	tunable_store_ok(fd, "low_latency", "0");
	read_at(fd, &tb[0], PID_A, 1000);
	read_at(fd, &tb[1], PID_B, 900000);
	elv_start_serial(fd);
	ck_assert_int_eq(fd->events[0].pid, PID_A);
	elv_complete_one_after(fd, 1);
	done = elv_now(fd);
	ck_assert_uint_eq(fd->nr_dispatched, 0);
	ck_assert_uint_eq(fd->q->dispatch_at, done + 8 * MS);
	fd->clock.virtual_ns = done + 8 * MS - 1;
	blk_run_queue(fd->q);
	ck_assert_uint_eq(fd->nr_dispatched, 0);
	elv_wake(fd);
	ck_assert_uint_eq(fd->nr_events, 2);
	ck_assert_int_eq(fd->events[1].pid, PID_B);
	finish(fd, tb, 2);
}
END_TEST

/* A's next request within slice_idle is served at once, before B's older one. */
START_TEST(test_idle_pays_off)
{
	struct fake_disk *fd = bfq_disk();
	struct test_bio tb[3];

	tunable_store_ok(fd, "low_latency", "0");
	read_at(fd, &tb[0], PID_A, 1000);
	read_at(fd, &tb[1], PID_B, 900000);
	elv_start_serial(fd);
	elv_complete_one_after(fd, 1);
	fd->clock.virtual_ns += 5 * MS;
	read_at(fd, &tb[2], PID_A, 1016);
	ck_assert_uint_eq(fd->nr_events, 2);
	ck_assert_int_eq(fd->events[1].pid, PID_A);
	finish(fd, tb, 3);
}
END_TEST

/*
 * Teach bfq that the disk queues (bfq_update_hw_tag): PID_C's reads all go
 * out at once, more than BFQ_HW_QUEUE_THRESHOLD of them, and complete one
 * by one, each completion a sample.
 */
static void queue_deep(struct fake_disk *fd, struct test_bio *warm, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		read_at(fd, &warm[i], PID_C, 2000000 + i * 16);
	fd->stopped = false;
	blk_run_queue(fd->q);
	ck_assert_uint_gt(fd->nr_dispatched, 4);
	fake_complete_all(fd);
	fd->stopped = true;
	fd->clock.virtual_ns += 1000 * MS; /* past PID_C's idling: it expires at the next dispatch */
}

/*
 * A on a disk seen to queue requests (bfq_update_hw_tag), flash or not:
 * A's one read, and B's waiting; A's completes.  Whether B's read went at
 * once, A's queue expired rather than idled for.
 */
static bool queueing_disk_serves_b(bool flash)
{
	struct fake_disk *fd = flash ? bfq_flash_disk() : bfq_disk();
	struct test_bio warm[64], tb[2];
	bool served;

	tunable_store_ok(fd, "low_latency", "0");
	queue_deep(fd, warm, 64);
	read_at(fd, &tb[0], PID_A, 1000);
	read_at(fd, &tb[1], PID_B, 900000);
	elv_start_serial(fd);
	elv_complete_one_after(fd, 1);
	served = fd->nr_dispatched == 1 && fd->events[fd->nr_events - 1].pid == PID_B;
	finish(fd, tb, 2);
	for (unsigned int i = 0; i < 64; i++)
		ck_assert_int_eq(warm[i].ended, 1);
	return served;
}

/*
 * idling_boosts_thr_without_issues: on flash seen to queue requests
 * (nonrot_with_queueing), idling no longer boosts the throughput: a sync
 * queue that empties while another of the same weight and class waits is
 * expired at once, and the other's request goes.  On a rotating disk that
 * queues, a sequential queue with a short think time is still idled for.
 */
START_TEST(test_queueing_disk_stops_idling)
{
	ck_assert(queueing_disk_serves_b(true));
	ck_assert(!queueing_disk_serves_b(false));
}
END_TEST

/*
 * A queue's 32 reads of sectors each, 100000 sectors apart, on flash or
 * not (BFQ_RQ_SEEKY): whether the queue is seeky after them.
 */
static bool far_reads_seeky(bool flash, unsigned int sectors)
{
	struct fake_disk *fd = flash ? bfq_flash_disk() : bfq_disk();
	struct test_bio tb[32];
	bool seeky;

	for (unsigned int i = 0; i < 32; i++)
		submit(fd, &tb[i], PID_A, IOPRIO_DEFAULT, 1000 + i * 100000, sectors);
	seeky = bfq_seeky(sync_queue_of(fd, PID_A));
	finish(fd, tb, 32);
	return seeky;
}

/* On flash a jump is a seek only for a request under 32 sectors; on a rotating disk any. */
START_TEST(test_seek_rule_flash)
{
	ck_assert(far_reads_seeky(false, 64));
	ck_assert(far_reads_seeky(false, 8));
	ck_assert(far_reads_seeky(true, 8));
	ck_assert(!far_reads_seeky(true, BFQQ_SECT_THR_NONROT));
	ck_assert(far_reads_seeky(true, BFQQ_SECT_THR_NONROT - 1));
}
END_TEST

/*
 * Too few requests out at once to tell (bfq_update_hw_tag takes no
 * sample): the disk is still taken for one that does not queue, and A is
 * idled for.
 */
START_TEST(test_shallow_disk_keeps_idling)
{
	struct fake_disk *fd = bfq_disk();
	struct test_bio warm[3], tb[2];

	tunable_store_ok(fd, "low_latency", "0");
	for (int round = 0; round < 20; round++) {
		for (unsigned int i = 0; i < 3; i++)
			read_at(fd, &warm[i], PID_C, 2000000 + i * 16);
		fd->stopped = false;
		blk_run_queue(fd->q);
		ck_assert_uint_eq(fd->nr_dispatched, 3);
		fake_complete_all(fd);
		fd->stopped = true;
		fd->clock.virtual_ns += 1000 * MS;
	}
	read_at(fd, &tb[0], PID_A, 1000);
	read_at(fd, &tb[1], PID_B, 900000);
	elv_start_serial(fd);
	elv_complete_one_after(fd, 1);
	ck_assert_uint_eq(fd->nr_dispatched, 0);
	ck_assert_uint_eq(fd->q->dispatch_at, elv_now(fd) + 8 * MS);
	finish(fd, tb, 2);
}
END_TEST

/*
 * On a queueing disk idling is still needed for service guarantees
 * (idling_needed_for_service_guarantees, bfq_asymmetric_scenario): with B
 * weighing more than A, B's emptied queue is idled for, or A would take
 * some of B's share.
 */
START_TEST(test_queueing_disk_idles_when_asymmetric)
{
	struct fake_disk *fd = bfq_disk();
	struct test_bio warm[64], tb[2];

	tunable_store_ok(fd, "low_latency", "0");
	queue_deep(fd, warm, 64);
	tunable_store_ok(fd, "weights", "200 500");
	read_at(fd, &tb[0], PID_A, 1000);
	read_at(fd, &tb[1], PID_B, 900000);
	elv_start_serial(fd);
	ck_assert_int_eq(fd->events[fd->nr_events - 1].pid, PID_B); /* heavier: first */
	elv_complete_one_after(fd, 1);
	ck_assert_uint_eq(fd->nr_dispatched, 0);
	ck_assert_uint_eq(fd->q->dispatch_at, elv_now(fd) + 8 * MS);
	finish(fd, tb, 2);
}
END_TEST

/* A weight-raised (new, low_latency) queue idles at least 20 ms (bfq_arm_slice_timer). */
START_TEST(test_raised_queue_idles_longer)
{
	struct fake_disk *fd = bfq_disk();
	struct test_bio tb[2];

	read_at(fd, &tb[0], PID_A, 1000);
	read_at(fd, &tb[1], PID_B, 900000);
	elv_start_serial(fd);
	elv_complete_one_after(fd, 1);
	ck_assert_uint_eq(fd->q->dispatch_at, elv_now(fd) + 20 * MS);
	finish(fd, tb, 2);
}
END_TEST

/*
 * A process that reads a little now and then is raised as soft real-time
 * (bfq_bfqq_softrt_next_start, bfq_update_bfqq_wr_on_rq_arrival): its
 * coefficient (3000) beats the interactive one (30) of the queue in
 * service, so its read takes the disk at once (bfq_bfqq_handle_idle_busy_
 * switch) rather than after that queue's budget.
 */
START_TEST(test_soft_rt_raising_preempts)
{
	struct fake_disk *fd = bfq_disk();
	struct test_bio tb[202];
	uint64_t t0 = elv_now(fd);
	unsigned int n;

	read_at(fd, &tb[200], PID_A, 1000);
	for (unsigned int i = 0; i < 200; i++)
		read_at(fd, &tb[i], PID_B, 900000 + 16 * i);
	elv_start_serial(fd);
	ck_assert_int_eq(fd->events[0].pid, PID_A);
	while (elv_now(fd) < t0 + 100 * MS) {
		if (fd->nr_dispatched)
			elv_complete_one_after(fd, 1);
		else
			elv_wake(fd);
	}
	ck_assert_int_eq(fd->events[fd->nr_events - 1].pid, PID_B);
	n = fd->nr_events;
	read_at(fd, &tb[201], PID_A, 1016);
	elv_complete_one_after(fd, 1);
	ck_assert_uint_eq(fd->nr_events, n + 1);
	ck_assert_int_eq(fd->events[n].pid, PID_A);
	finish(fd, tb, 202);
}
END_TEST

/*
 * strict_guarantees: one request out at a time, and the disk idles even
 * for an async queue (bfq_better_to_idle, __bfq_dispatch_request).
 */
START_TEST(test_strict_guarantees)
{
	struct fake_disk *fd = bfq_disk();
	struct test_bio tb[12];

	tunable_store_ok(fd, "strict_guarantees", "1");
	for (unsigned int i = 0; i < 10; i++)
		read_at(fd, &tb[i], PID_A, 1000 + 16 * i);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_dispatched, 1);
	finish(fd, tb, 10);

	fd = bfq_disk();
	tunable_store_ok(fd, "strict_guarantees", "1");
	tunable_store_ok(fd, "low_latency", "0");
	tbio_init(&tb[10], REQ_OP_WRITE, 1000, 8, elv_buf);
	tb[10].bio.bi_pid = PID_A;
	submit_bio(fd->q, &tb[10].bio);
	read_at(fd, &tb[11], PID_B, 900000);
	elv_start_serial(fd);
	ck_assert_int_eq(fd->events[0].op, REQ_OP_WRITE);
	elv_complete_one_after(fd, 1);
	ck_assert_uint_eq(fd->nr_dispatched, 0);
	ck_assert_uint_eq(fd->q->dispatch_at, elv_now(fd) + 8 * MS);
	finish(fd, tb + 10, 2);
}
END_TEST

/* Without strict_guarantees the same async queue does not idle, and all ten go at once. */
START_TEST(test_no_strict_guarantees)
{
	struct fake_disk *fd = bfq_disk();
	struct test_bio tb[12];

	for (unsigned int i = 0; i < 10; i++)
		read_at(fd, &tb[i], PID_A, 1000 + 16 * i);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_dispatched, 10);
	finish(fd, tb, 10);

	fd = bfq_disk();
	tunable_store_ok(fd, "low_latency", "0");
	tbio_init(&tb[10], REQ_OP_WRITE, 1000, 8, elv_buf);
	tb[10].bio.bi_pid = PID_A;
	submit_bio(fd->q, &tb[10].bio);
	read_at(fd, &tb[11], PID_B, 900000);
	elv_start_serial(fd);
	elv_complete_one_after(fd, 1);
	ck_assert_uint_eq(fd->nr_dispatched, 1);
	finish(fd, tb + 10, 2);
}
END_TEST

/*
 * Within a queue requests go in sector order from the head, but when one
 * leaves, a FIFO head that has waited fifo_expire_sync (125 ms) is next
 * instead; the FIFO is looked at once a budget (bfq_find_next_rq,
 * bfq_check_fifo), so the sorted walk then goes on from there.
 */
START_TEST(test_fifo_expiry_once_a_budget)
{
	static const sector_t want[] = { 1000, 500000, 1016, 1032, 1048, 300000 };
	struct fake_disk *fd = bfq_disk();
	struct test_bio tb[6];

	read_at(fd, &tb[0], PID_A, 500000);
	read_at(fd, &tb[1], PID_A, 300000);
	for (unsigned int i = 0; i < 4; i++)
		read_at(fd, &tb[2 + i], PID_A, 1000 + 16 * i);
	fd->clock.virtual_ns += 125 * MS;
	elv_start_serial(fd);
	elv_serve_serially(fd, 1);
	/* 300000 expired too, but the FIFO had its turn this budget: sorted from the head on */
	for (unsigned int i = 0; i < 6; i++)
		ck_assert_msg(fd->events[i].sector == want[i],
			      "dispatch %u: sector %llu, want %llu", i,
			      (unsigned long long)fd->events[i].sector, (unsigned long long)want[i]);
	finish(fd, tb, 6);
}
END_TEST

/*
 * An async queue is charged bfq_async_charge_factor (3) times its
 * sectors (bfq_serv_to_charge): at equal weight, always busy, a reader
 * gets three times the writer's sectors, within 10%.
 */
START_TEST(test_async_charged_more)
{
	struct fake_disk *fd = bfq_disk();
	struct share_run *r = calloc(1, sizeof(*r));
	enum req_op op[2] = { REQ_OP_WRITE, REQ_OP_READ };
	double ratio;

	ck_assert_ptr_nonnull(r);
	tunable_store_ok(fd, "low_latency", "0");
	tunable_store_ok(fd, "max_budget", "256");
	r->next[0] = 1000;
	r->next[1] = 50000000;
	for (int n = -1; n < 6000; n++) {
		for (int p = 0; p < 2; p++)
			for (int i = 0; i < SHARE_DEPTH; i++)
				if (n < 0 || r->tb[p][i].ended) {
					r->sectors[p] += n < 0 ? 0 : 8;
					tbio_init(&r->tb[p][i], op[p], r->next[p], 8, elv_buf);
					r->tb[p][i].bio.bi_pid = share_pids[p];
					submit_bio(fd->q, &r->tb[p][i].bio);
					r->next[p] += 16;
				}
		if (n < 0) {
			elv_start_serial(fd);
			continue;
		}
		if (!fd->nr_dispatched)
			elv_wake(fd);
		elv_complete_one_after(fd, 1);
	}
	ratio = (double)r->sectors[1] / (double)r->sectors[0];
	ck_assert_msg(ratio > 2.7 && ratio < 3.3, "read/write service %.3f, want 3 +- 10%%", ratio);
	finish(fd, &r->tb[0][0], 2 * SHARE_DEPTH);
	free(r);
}
END_TEST

/* ---- classes ---- */

/*
 * Queued together, the RT queue goes first, then BE, and the idle class
 * last (bfq_lookup_next_entity walks the classes in order).
 */
START_TEST(test_rt_then_be_then_idle)
{
	static const struct elv_run want[] = { { PID_B, 4 }, { PID_A, 4 }, { PID_C, 4 } };
	struct fake_disk *fd = bfq_disk();
	struct test_bio tb[12];

	for (unsigned int i = 0; i < 4; i++) {
		read_at(fd, &tb[i], PID_A, 1000 + 16 * i);
		submit(fd, &tb[4 + i], PID_B, RT0, 500000 + 16 * i, 8);
		submit(fd, &tb[8 + i], PID_C, IDLE, 900000 + 16 * i, 8);
	}
	elv_start_serial(fd);
	elv_serve_serially(fd, 1);
	elv_assert_runs(fd, want, 3);
	finish(fd, tb, 12);
}
END_TEST

/* An RT request takes the disk from a BE queue in service (bfq_bfqq_higher_class_or_weight). */
START_TEST(test_rt_preempts_be)
{
	struct fake_disk *fd = bfq_disk();
	struct test_bio tb[11];

	tunable_store_ok(fd, "low_latency", "0");
	for (unsigned int i = 0; i < 10; i++)
		read_at(fd, &tb[i], PID_A, 1000 + 16 * i);
	elv_start_serial(fd);
	elv_complete_one_after(fd, 1);
	elv_complete_one_after(fd, 1);
	submit(fd, &tb[10], PID_B, RT0, 500000, 8);
	elv_complete_one_after(fd, 1);
	ck_assert_int_eq(fd->events[3].pid, PID_B);
	finish(fd, tb, 11);
}
END_TEST

/*
 * A BE queue busy for 400 ms does not starve the idle class for ever:
 * once BFQ_CL_IDLE_TIMEOUT (200 ms) has passed, the next queue chosen is
 * the idle one (bfq_lookup_next_entity), for one request only while
 * others wait (bfq_dispatch_rq_from_bfqq); before 200 ms it gets none.
 */
START_TEST(test_idle_class_starvation_guard)
{
	struct fake_disk *fd = bfq_disk();
	struct test_bio tb[403];
	uint64_t t0 = elv_now(fd);
	uint64_t first;
	int i;

	tunable_store_ok(fd, "low_latency", "0");
	for (i = 0; i < 400; i++)
		read_at(fd, &tb[i], PID_A, 1000 + 16 * (sector_t)i);
	for (i = 0; i < 3; i++)
		submit(fd, &tb[400 + i], PID_C, IDLE, 900000 + 16 * (sector_t)i, 8);
	elv_start_serial(fd);
	elv_serve_serially(fd, 1);
	i = first_of(fd, PID_C);
	ck_assert_int_gt(i, 0);
	ck_assert_int_lt(i, 400); /* before the BE queue ran out */
	first = t0 + (uint64_t)i * MS; /* one request a millisecond, no idling on the way */
	ck_assert_msg(first >= t0 + 200 * MS && first <= t0 + (200 + 125 + 2) * MS,
		      "the idle class first served after %llu ms",
		      (unsigned long long)((first - t0) / MS));
	ck_assert_int_eq(fd->events[i + 1].pid, PID_A);
	finish(fd, tb, 403);
}
END_TEST

/* ---- the weights tunable ---- */

static const struct elv_tunable *text_tunable(const struct fake_disk *fd, const char *name)
{
	const struct elv_tunable *t = fd->q->elevator->type->tunables;

	for (; t && t->name; t++)
		if (!strcmp(t->name, name))
			return t;
	ck_abort_msg("bfq has no %s tunable", name);
	return NULL;
}

static void assert_text(const struct fake_disk *fd, const char *name, const char *want)
{
	char text[256];
	int n = elv_tunable_text(fd->q->elevator, text_tunable(fd, name), text, sizeof(text));

	ck_assert_int_ge(n, 0);
	text[n] = '\0';
	ck_assert_str_eq(text, want);
}

static void assert_weights(const struct fake_disk *fd, const char *want)
{
	char text[256];
	int n = elv_tunable_text(fd->q->elevator, text_tunable(fd, "weights"), text, sizeof(text));

	ck_assert_int_ge(n, 0);
	text[n] = '\0';
	ck_assert_str_eq(text, want);
}

/* A group's weight where its cgroup has no io.bfq.weight: set, change, remove; refuse the rest. */
START_TEST(test_group_weights_parse_and_refuse)
{
	static const char *const bad[] = {
		"",	     "\n",	   "/a",	"/a ",	     "a 10",	"/a 1001", "/a -1",
		" /a 10",    "/a 10 20",  "/a 10x",	"/a defaultx", "/a 0x10", "/a 10\n\n",
		"/a 100000000000000000000",
	};
	struct fake_disk *fd = bfq_disk();
	struct elevator_queue *e = fd->q->elevator;

	assert_text(fd, "group_weights", "");
	ck_assert_int_eq(elv_tunable_store(e, "group_weights", "/a 500\n"), 0);
	ck_assert_int_eq(elv_tunable_store(e, "group_weights", "/b/c\t1"), 0);
	assert_text(fd, "group_weights", "/a 500\n/b/c 1\n");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(elv_tunable_store(e, "group_weights", bad[i]) == -EINVAL,
			      "'%s' taken", bad[i]);
		assert_text(fd, "group_weights", "/a 500\n/b/c 1\n");
	}
	ck_assert_int_eq(elv_tunable_store(e, "group_weights", "/a default"), 0);
	assert_text(fd, "group_weights", "/b/c 1\n");
	ck_assert_int_eq(elv_tunable_store(e, "group_weights", "/b/c 0\n"), 0);
	assert_text(fd, "group_weights", "");
	fake_disk_free(fd);
}
END_TEST

/* Linux's cgroup io.bfq.weight per process: set, change, remove; refuse anything else. */
START_TEST(test_weights_parse_and_refuse)
{
	static const char *const bad[] = {
		"",	      "\n",	      "100",	     "100 ",	     "100 1001",
		"100 -1",     "-5 10",	      "0 10",	     "abc 10",	     "100 10 20",
		"100 10x",    "100 defaultx", "99999999999 5", "100 1e2",    " 100 10",
		"100 10\n\n", "100\t",	      "100 0x10",    "100 100000000000000000000",
	};
	struct fake_disk *fd = bfq_disk();
	struct elevator_queue *e = fd->q->elevator;

	assert_weights(fd, "");
	ck_assert_int_eq(elv_tunable_store(e, "weights", "100 500\n"), 0);
	ck_assert_int_eq(elv_tunable_store(e, "weights", "200 1"), 0);
	assert_weights(fd, "100 500\n200 1\n");
	ck_assert_int_eq(elv_tunable_store(e, "weights", "100 1000"), 0);
	assert_weights(fd, "100 1000\n200 1\n");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(elv_tunable_store(e, "weights", bad[i]) == -EINVAL, "'%s' taken",
			      bad[i]);
		assert_weights(fd, "100 1000\n200 1\n");
	}
	ck_assert_int_eq(elv_tunable_store(e, "weights", "300 30"), 0);
	ck_assert_int_eq(elv_tunable_store(e, "weights", "100 default\n"), 0);
	assert_weights(fd, "200 1\n300 30\n");
	ck_assert_int_eq(elv_tunable_store(e, "weights", "300 0\n"), 0);
	assert_weights(fd, "200 1\n");
	ck_assert_int_eq(elv_tunable_store(e, "weights", "200 0"), 0);
	assert_weights(fd, "");
	ck_assert_int_eq(elv_tunable_store(e, "weights", "300 0"), 0); /* none to remove */
	assert_weights(fd, "");
	fake_disk_free(fd);
}
END_TEST

/* ---- the published result: start-up latency under sequential readers (comm_startup_lat) ---- */

#define BG_READERS 3
#define BG_DEPTH 4
#define BG_SECTORS 128 /* 64 KiB a read: readahead-sized */
#define APP_READS 32
#define BG_WARMUP_NS (4000 * MS)

struct lat_sim {
	struct fake_disk *fd;
	struct disk_model *m;
	uint64_t done_at; /* the request out completes then */
	struct test_bio bg[BG_READERS][BG_DEPTH];
	sector_t bg_next[BG_READERS];
	struct test_bio app;
	unsigned int app_done;
	uint64_t app_start, app_end;
};

static struct lat_sim *sim_of(struct fake_disk *fd)
{
	return fd->priv;
}

/* The model says when the one request out completes; the driver takes no other. */
static void sim_dispatch(struct fake_disk *fd, struct request *rq)
{
	struct lat_sim *s = sim_of(fd);
	struct model_io io = { rq->cmd_op, rq->cmd_flags, blk_rq_pos(rq), blk_rq_sectors(rq) };

	s->done_at = disk_model_service(s->m, &io, elv_now(fd));
	fd->stopped = true;
}

static sector_t app_sector(unsigned int i)
{
	/* scattered over 400 MiB in the last quarter of a 4 GiB disk, as a program's files */
	return 6291456 + ((sector_t)i * 2654435761u % 819200) / 8 * 8;
}

static void sim_refill(struct lat_sim *s, bool with_app)
{
	for (int r = 0; r < BG_READERS; r++)
		for (int i = 0; i < BG_DEPTH; i++)
			if (s->bg[r][i].ended) {
				submit(s->fd, &s->bg[r][i], 1000 + r, IOPRIO_DEFAULT, s->bg_next[r],
				       BG_SECTORS);
				s->bg_next[r] += BG_SECTORS;
			}
	if (!with_app || !s->app.ended)
		return;
	s->app.ended = 0;
	if (++s->app_done == APP_READS) {
		s->app_end = elv_now(s->fd);
		return;
	}
	submit(s->fd, &s->app, 4000, IOPRIO_DEFAULT, app_sector(s->app_done), 8);
}

/* Move the clock to the next event: a completion, or the elevator's wake-up. */
static void sim_step(struct lat_sim *s)
{
	struct fake_disk *fd = s->fd;
	struct request *rq = fake_nth(fd, 0);

	/* a wake-up due while the one request is out waits for its completion */
	if (rq && (fd->q->dispatch_at <= elv_now(fd) || s->done_at <= fd->q->dispatch_at)) {
		fd->clock.virtual_ns = s->done_at > elv_now(fd) ? s->done_at : elv_now(fd);
		fd->stopped = false;
		fake_complete(fd, rq, 0, blk_rq_sectors(rq));
		return;
	}
	ck_assert_msg(fd->q->dispatch_at, "nothing out and no wake-up asked for");
	if (fd->q->dispatch_at > elv_now(fd))
		fd->clock.virtual_ns = fd->q->dispatch_at;
	blk_run_queue(fd->q);
}

/*
 * The time a small reader takes for APP_READS dependent 4 KiB reads
 * ("application start-up"), on the default hdd model, under elevator,
 * with BG_READERS sequential readers (BG_DEPTH reads of 64 KiB out each)
 * started BG_WARMUP_NS before it, or alone.
 */
static uint64_t startup_latency(const char *elevator, bool background)
{
	struct lat_sim *s = calloc(1, sizeof(*s));
	char why[256];
	uint64_t lat;

	ck_assert_ptr_nonnull(s);
	s->fd = fake_disk_new(elevator);
	s->fd->q->limits.nr_requests = 1024;
	s->fd->priv = s;
	s->fd->on_dispatch = sim_dispatch;
	ck_assert_int_eq(disk_model_new("hdd", 8388608, &s->m, why, sizeof(why)), 0);
	for (int r = 0; background && r < BG_READERS; r++) {
		s->bg_next[r] = (sector_t)r * 2000000;
		for (int i = 0; i < BG_DEPTH; i++)
			s->bg[r][i].ended = 1;
	}
	sim_refill(s, false);
	for (unsigned int guard = 0; background && elv_now(s->fd) < 1000000000ull + BG_WARMUP_NS;
	     guard++) {
		ck_assert_uint_lt(guard, 1000000);
		sim_step(s);
		sim_refill(s, false);
	}
	s->app_start = elv_now(s->fd);
	submit(s->fd, &s->app, 4000, IOPRIO_DEFAULT, app_sector(0), 8);
	for (unsigned int guard = 0; !s->app_end; guard++) {
		ck_assert_uint_lt(guard, 1000000);
		sim_step(s);
		sim_refill(s, true);
	}
	lat = s->app_end - s->app_start;
	/* let the background go: end every bio, then free */
	for (int r = 0; r < BG_READERS; r++)
		for (int i = 0; i < BG_DEPTH; i++)
			s->bg[r][i].ended = 0;
	s->fd->on_dispatch = NULL;
	s->fd->stopped = false;
	blk_run_queue(s->fd->q);
	for (unsigned int guard = 0; !blk_queue_idle(s->fd->q); guard++) {
		ck_assert_uint_lt(guard, 100000);
		if (s->fd->nr_dispatched)
			fake_complete_all(s->fd);
		else
			elv_wake(s->fd);
	}
	fake_disk_free(s->fd);
	disk_model_free(s->m);
	free(s);
	return lat;
}

/*
 * BFQ's comm_startup_lat result: with bfq the small reader's start-up
 * under three sequential readers stays within 1.6x its time alone
 * (bfq_bfqq_handle_idle_busy_switch raises the new queue and preempts,
 * bfq_arm_slice_timer idles for it), while under deadline and noop it
 * grows at least 4x.  Every time is virtual, on the hdd model.
 */
START_TEST(test_startup_latency_under_sequential_readers)
{
	uint64_t alone = startup_latency("bfq", false);
	uint64_t bfq = startup_latency("bfq", true);
	uint64_t deadline = startup_latency("deadline", true);
	uint64_t noop = startup_latency("noop", true);

	fprintf(stderr, "start-up: alone %.1f ms, bfq %.1f, deadline %.1f, noop %.1f\n",
		(double)alone / MS, (double)bfq / MS, (double)deadline / MS, (double)noop / MS);
	ck_assert_msg(bfq * 5 <= alone * 8, "bfq: %llu ms, alone %llu ms",
		      (unsigned long long)(bfq / MS), (unsigned long long)(alone / MS));
	ck_assert_msg(deadline >= 4 * alone, "deadline: %llu ms, alone %llu ms",
		      (unsigned long long)(deadline / MS), (unsigned long long)(alone / MS));
	ck_assert_msg(noop >= 4 * alone, "noop: %llu ms, alone %llu ms",
		      (unsigned long long)(noop / MS), (unsigned long long)(alone / MS));
}
END_TEST

/* ---- comm_startup_lat: ten sequential readers ---- */

#define SU_READERS 10
#define SU_READS 32
#define SU_THINK_NS (2 * MS)
#define SU_START_NS (3000 * MS)

/*
 * The S suite's comm_startup_lat on the hdd model: an application start-up
 * (SU_READS dependent 4 KiB reads scattered over the disk, SU_THINK_NS of
 * think time after each) begun SU_START_NS after SU_READERS sequential
 * readers (64 KiB, four out each) were started together, or on an idle
 * disk: how long the start-up takes, in ns, or UINT64_MAX where it did not
 * finish in the run's 600 s (an elevator that starves it: sstf, clook).
 */
static uint64_t startup_under_readers(const char *elevator, unsigned int readers)
{
	struct elv_sim *s = elv_sim_new(elevator, "hdd");
	struct elv_sim_proc *app;
	uint64_t t;

	for (unsigned int i = 0; i < readers; i++)
		elv_sim_add(s, 5000 + i, (sector_t)i * 700000, 128, 4, 0, 0);
	app = elv_sim_add(s, 5100, 7500000, 8, 1, SU_THINK_NS, SU_START_NS);
	app->stride = 1234567; /* each read far from the last: a program's scattered files */
	app->limit = SU_READS;
	elv_sim_run(s, 600000 * MS);
	t = app->reads_done == SU_READS ? app->end_ns - s->t0 - SU_START_NS : UINT64_MAX;
	elv_sim_free(s);
	return t;
}

/*
 * BFQ's published comm_startup_lat result, weight raising's reason to be:
 * under ten sequential readers the start-up takes at most twice its time
 * on an idle disk with bfq (the new queue is raised as interactive and
 * preempts, bfq_bfqq_handle_idle_busy_switch; the readers, started
 * together, are a large burst and not raised).  The other elevators' times
 * (every built-in one) are printed beside it, as the table in
 * rqdisk-elevators(7).
 */
START_TEST(test_comm_startup_lat_ten_readers)
{
	const char *const *others = elevator_builtin_names();
	uint64_t idle = startup_under_readers("bfq", 0);
	uint64_t bfq = startup_under_readers("bfq", SU_READERS);

	fprintf(stderr, "comm_startup_lat, hdd, %d readers: idle disk %.1f ms\n", SU_READERS,
		(double)idle / MS);
	fprintf(stderr, "  %-9s %9.1f ms  %5.1fx\n", "bfq", (double)bfq / MS,
		(double)bfq / (double)idle);
	for (size_t i = 0; others[i]; i++) {
		uint64_t t;

		if (!strcmp(others[i], "bfq"))
			continue;
		t = startup_under_readers(others[i], SU_READERS);
		if (t == UINT64_MAX)
			fprintf(stderr, "  %-9s starved: not done in 600 s\n", others[i]);
		else
			fprintf(stderr, "  %-9s %9.1f ms  %5.1fx\n", others[i], (double)t / MS,
				(double)t / (double)idle);
	}
	ck_assert_uint_ne(idle, UINT64_MAX);
	ck_assert_msg(bfq <= 2 * idle, "bfq: %llu ms, idle disk %llu ms",
		      (unsigned long long)(bfq / MS), (unsigned long long)(idle / MS));
}
END_TEST

/* ---- think time and seekiness ---- */

#define TT_READER 500
#define TT_THINKER 600
#define TT_RUN_NS (4000 * MS)
/*
 * The reader's budget, 1 MiB (9 ms of reading on the hdd model): with the
 * automatic one (125 ms of reading) the thinker, not raised, waits for
 * most of it each time, so that idling for it would cost the reader only
 * 8 ms in 110 and the comparison would not see it; with this one the
 * thinker is served every 30 ms or so, and idling for it costs a quarter.
 */
#define TT_MAX_BUDGET "2048"

/*
 * A sequential reader (four 64 KiB reads out at a time) beside a process
 * that reads 4 KiB, thinks 20 ms, and reads the next 4 KiB: the reader's
 * sectors in TT_RUN_NS under bfq with slice_idle (ms), low_latency off so
 * that no raising idles for the thinker, max_budget TT_MAX_BUDGET.  The thinker's reads done in *thinker.
 */
static uint64_t reader_beside_thinker(const char *model, const char *slice_idle,
				      uint64_t *thinker_reads)
{
	struct elv_sim *s = elv_sim_new("bfq", model);
	struct elv_sim_proc *reader, *thinker;
	uint64_t sectors;

	tunable_store_ok(s->fd, "low_latency", "0");
	tunable_store_ok(s->fd, "slice_idle", slice_idle);
	tunable_store_ok(s->fd, "max_budget", TT_MAX_BUDGET);
	reader = elv_sim_add(s, TT_READER, 0, 128, 4, 0, 0);
	thinker = elv_sim_add(s, TT_THINKER, 4000000, 8, 1, 20 * MS, 0);
	elv_sim_run(s, TT_RUN_NS);
	sectors = reader->sectors_done;
	*thinker_reads = thinker->reads_done;
	elv_sim_free(s);
	return sectors;
}

/*
 * bfq_update_io_thinktime, bfq_update_has_short_ttime: the thinker's
 * think time (20 ms, capped at 2 * slice_idle) is long past slice_idle / 2
 * after three samples, so its queue is no longer idled for once its read
 * is done, and the sequential reader gets at least what it gets with
 * slice_idle=0, within 3%.  On the hdd model it gets more: with
 * slice_idle=0 no queue is worth idling for, so each of the thinker's
 * reads takes the disk from the reader at once (bfq_bfqq_handle_idle_busy_
 * switch); idling 8 ms for each of them instead would cost the reader half
 * of what it gets.  On the ssd model, which queues, nothing is idled for
 * throughput, and the two are the same within 3%.
 */
static void check_long_thinker(const char *model, bool queues)
{
	uint64_t t_idle, t_none;
	uint64_t idle = reader_beside_thinker(model, "8", &t_idle);
	uint64_t none = reader_beside_thinker(model, "0", &t_none);

	fprintf(stderr, "%s: reader %llu sectors beside a thinker (%llu reads), %llu (%llu) %s\n",
		model, (unsigned long long)idle, (unsigned long long)t_idle,
		(unsigned long long)none, (unsigned long long)t_none, "with slice_idle=0");
	/* served, if once a budget of the reader's (up to timeout_sync) where it is not raised */
	ck_assert_uint_ge(t_idle, 20);
	ck_assert_uint_ge(t_none, 20);
	ck_assert_msg(idle * 100 >= none * 97 && (!queues || idle * 100 <= none * 103),
		      "%s: reader %llu sectors, %llu with slice_idle=0", model,
		      (unsigned long long)idle, (unsigned long long)none);
}

START_TEST(test_long_thinker_not_idled_hdd)
{
	check_long_thinker("hdd", false);
}
END_TEST

START_TEST(test_long_thinker_not_idled_ssd)
{
	check_long_thinker("ssd", true);
}
END_TEST

/*
 * A reads from n places 10000 sectors apart, all queued at once, B once,
 * and bfq idles for A's next when A's last completes (bfq_arm_slice_timer): a
 * queue with more than 19 seeks in its last 32 requests (BFQQ_SEEKY) waits
 * only BFQ_MIN_TT (2 ms), one with 19 the whole slice_idle (8 ms).
 */
static uint64_t idle_after_seeks(unsigned int n)
{
	struct fake_disk *fd = bfq_disk();
	struct test_bio tb[33];
	uint64_t wait;

	tunable_store_ok(fd, "low_latency", "0");
	for (unsigned int i = 0; i < n; i++)
		read_at(fd, &tb[i], PID_A, 10000 * (i + 1));
	read_at(fd, &tb[n], PID_B, 4000000);
	elv_start_serial(fd);
	for (unsigned int i = 0; i < n; i++) {
		ck_assert_int_eq(fd->events[fd->nr_events - 1].pid, PID_A);
		elv_complete_one_after(fd, 1);
	}
	ck_assert_uint_eq(fd->nr_dispatched, 0);
	ck_assert_uint_ne(fd->q->dispatch_at, 0);
	wait = fd->q->dispatch_at - elv_now(fd);
	finish(fd, tb, n + 1);
	return wait;
}

START_TEST(test_seeky_queue_idles_briefly)
{
	ck_assert_uint_eq(idle_after_seeks(19), 8 * MS);
	ck_assert_uint_eq(idle_after_seeks(20), 2 * MS);
}
END_TEST

/* ---- bursts ---- */

#define BURST_READERS 16
#define BURST_READS 64 /* of 64 KiB: 4 MiB each */

/* pid's sync queue in the bfq under fd, or NULL. */
static struct bfq_queue *sync_queue_of(const struct fake_disk *fd, pid_t pid)
{
	const struct bfq_data *bfqd = fd->q->elevator->elevator_data;

	for (int i = 0; i < 1 << BFQ_HASH_BITS; i++) {
		struct bfq_queue *bfqq;

		LIST_FOREACH(bfqq, &bfqd->hash[i], hash)
			if (bfqq->pid == pid)
				return bfqq;
	}
	return NULL;
}

/*
 * n processes each send one read, gap_ms apart but for one gap of
 * long_gap_ms after the fourth, onto a stopped disk: how many of their
 * queues are in a large burst.
 */
static unsigned int in_large_burst(unsigned int n, uint64_t gap_ms, uint64_t long_gap_ms)
{
	struct fake_disk *fd = bfq_disk();
	struct test_bio tb[16];
	unsigned int marked = 0;

	for (unsigned int i = 0; i < n; i++) {
		fd->clock.virtual_ns += (i == 4 ? long_gap_ms : gap_ms) * MS;
		read_at(fd, &tb[i], 3000 + i, 100000 * (i + 1));
	}
	for (unsigned int i = 0; i < n; i++)
		marked += sync_queue_of(fd, 3000 + i)->in_large_burst;
	finish(fd, tb, n);
	return marked;
}

/*
 * bfq_handle_burst: 7 queues made 1 ms apart are a burst, not a large one;
 * the 8th (bfq_large_burst_thresh) makes it large and marks all; 16 made
 * 179 ms apart are one large burst; a gap of 181 ms (past bfq_burst_interval,
 * 180 ms) with queues busy ends the burst, and no new one starts until
 * nothing is busy.
 */
START_TEST(test_burst_threshold_and_interval)
{
	ck_assert_uint_eq(in_large_burst(7, 1, 1), 0);
	ck_assert_uint_eq(in_large_burst(8, 1, 1), 8);
	ck_assert_uint_eq(in_large_burst(16, 179, 179), 16);
	ck_assert_uint_eq(in_large_burst(16, 1, 181), 0);
}
END_TEST

/*
 * BURST_READERS sequential readers started 1 ms apart, each reading
 * BURST_READS * 64 KiB, two reads out at a time, 400000 sectors apart, on
 * model under elevator: when the last one is done, in ns from the start.
 * Under bfq, how many of their queues were still raised, or not in a large
 * burst, when all were done (*unlike).
 */
static uint64_t burst_finish(const char *elevator, const char *model, unsigned int *unlike)
{
	struct elv_sim *s = elv_sim_new(elevator, model);
	struct elv_sim_proc *p[BURST_READERS];
	uint64_t last = 0;

	*unlike = 0;
	for (unsigned int i = 0; i < BURST_READERS; i++) {
		p[i] = elv_sim_add(s, 2000 + i, (sector_t)i * 400000, 128, 2, 0, i * MS);
		p[i]->limit = BURST_READS;
	}
	elv_sim_run(s, 600000 * MS);
	for (unsigned int i = 0; i < BURST_READERS; i++) {
		struct bfq_queue *own = strcmp(elevator, "bfq") ? NULL : sync_queue_of(s->fd, 2000 + i);
		/* the queue its requests go to: on flash stable merging may share one */
		const struct bfq_queue *bfqq = own ? bfq_coop_lookup(own) : NULL;

		ck_assert_uint_eq(p[i]->reads_done, BURST_READS);
		if (p[i]->end_ns - s->t0 > last)
			last = p[i]->end_ns - s->t0;
		*unlike += bfqq && (bfqq->wr_coeff > 1 || !bfqq->in_large_burst);
	}
	elv_sim_free(s);
	return last;
}

/*
 * bfq_update_wr_data, BFQ_MAX_SERVICE_FROM_WR: a new sequential reader
 * (64 KiB, two out) alone on the hdd model is raised as interactive, by
 * BFQ_WR_COEFF (30), for a duration of at least BFQ_WR_MIN_DURATION_MS
 * (3 s); its raising ends once it has been served 120000 sectors, long
 * before that time is up: a reader is not interactive however new.
 */
START_TEST(test_raising_ends_after_120000_sectors)
{
	struct elv_sim *s = elv_sim_new("bfq", "hdd");
	struct elv_sim_proc *p = elv_sim_add(s, 3000, 0, 128, 2, 0, 0);
	const struct bfq_queue *bfqq;
	uint64_t ended_at = 0, done_then = 0;

	elv_sim_run(s, 10 * MS);
	bfqq = sync_queue_of(s->fd, 3000);
	ck_assert_ptr_nonnull(bfqq);
	ck_assert_uint_eq(bfqq->wr_coeff, BFQ_WR_COEFF);
	ck_assert_uint_ge(bfqq->wr_cur_max_time, BFQ_WR_MIN_DURATION_MS * MS);
	while (!ended_at && elv_now(s->fd) - s->t0 < 2500 * MS) {
		elv_sim_run(s, MS);
		if (bfqq->wr_coeff == 1) {
			ended_at = elv_now(s->fd) - s->t0;
			done_then = p->sectors_done;
		}
	}
	fprintf(stderr, "hdd: raising ended at %.1f ms, %llu sectors read\n", (double)ended_at / MS,
		(unsigned long long)done_then);
	ck_assert_msg(ended_at, "still raised after 2.5 s, %llu sectors read",
		      (unsigned long long)p->sectors_done);
	/* served counts what went out: at most the two reads out more than what ended */
	ck_assert_uint_ge(done_then + 2 * 128, BFQ_MAX_SERVICE_FROM_WR);
	ck_assert_uint_le(done_then, BFQ_MAX_SERVICE_FROM_WR + 2 * 128);
	elv_sim_free(s);
}
END_TEST

/*
 * bfq_update_peak_rate, bfq_wr_duration: the disk's peak rate, measured
 * while a sequential reader keeps it busy alone for 2 s on the hdd model,
 * is the rate the reader got (within 10%: sectors per microsecond <<
 * BFQ_RATE_SHIFT), whatever the clock read when the disk started; a new
 * interactive queue is then raised for 7 s times BFQ_REF_RATE over that
 * rate, within 3 to 25 s, not for the reference 7 s.
 */
START_TEST(test_raising_time_from_peak_rate)
{
	struct elv_sim *s = elv_sim_new("bfq", "hdd");
	const struct bfq_data *bfqd = s->fd->q->elevator->elevator_data;
	struct elv_sim_proc *p = elv_sim_add(s, 3000, 0, 128, 2, 0, 0);
	const struct bfq_queue *bfqq;
	uint64_t want_ms, got;

	elv_sim_run(s, 2000 * MS);
	got = (p->sectors_done << BFQ_RATE_SHIFT) / (2000 * 1000);
	fprintf(stderr, "hdd: the reader got %llu, the peak rate measured %llu\n",
		(unsigned long long)got, (unsigned long long)bfqd->peak_rate);
	ck_assert_uint_ge(bfqd->peak_rate * 10, got * 9);
	ck_assert_uint_le(bfqd->peak_rate * 10, got * 11);
	want_ms = (uint64_t)BFQ_WR_REF_DURATION_MS * BFQ_REF_RATE / bfqd->peak_rate;
	if (want_ms < BFQ_WR_MIN_DURATION_MS)
		want_ms = BFQ_WR_MIN_DURATION_MS;
	if (want_ms > BFQ_WR_MAX_DURATION_MS)
		want_ms = BFQ_WR_MAX_DURATION_MS;
	fprintf(stderr, "hdd: peak rate %llu, raising for %llu ms\n",
		(unsigned long long)bfqd->peak_rate, (unsigned long long)want_ms);
	ck_assert_uint_ne(want_ms, BFQ_WR_REF_DURATION_MS);
	elv_sim_add(s, 3001, 3000000, 8, 1, 50 * MS, elv_now(s->fd) - s->t0);
	elv_sim_run(s, 10 * MS);
	bfqq = sync_queue_of(s->fd, 3001);
	ck_assert_ptr_nonnull(bfqq);
	ck_assert_uint_eq(bfqq->wr_coeff, BFQ_WR_COEFF);
	ck_assert_uint_eq(bfqq->wr_cur_max_time, want_ms * MS);
	elv_sim_free(s);
}
END_TEST

/*
 * bfq_handle_burst, bfq_add_to_burst: the eighth of the readers created
 * within 180 ms of each other makes the burst large, so all sixteen are
 * marked, none is raised once it has been served again (the first seven
 * were raised on arrival, before the burst was known to be large), and,
 * served in full budgets with no idling for the throughput, they are all
 * done no later than under deadline on the hdd model, and within 5% of it
 * on the ssd model (3% later: a queue that is the only one with requests
 * queued is still waited for while its reads are out, as Linux's
 * idling_needed_for_service_guarantees has it for a queue alone).  Without
 * burst detection all sixteen are raised: 1.6 s on the hdd, 627 ms on the
 * ssd, against 0.9 s and 151 ms.
 */
static void check_burst(const char *model, uint64_t margin)
{
	unsigned int unlike, none;
	uint64_t bfq = burst_finish("bfq", model, &unlike);
	uint64_t deadline = burst_finish("deadline", model, &none);

	fprintf(stderr, "%s: 16 readers done in %.1f ms under bfq (%u unlike), %.1f under deadline\n",
		model, (double)bfq / MS, unlike, (double)deadline / MS);
	ck_assert_uint_eq(unlike, 0);
	ck_assert_msg(bfq * 100 <= deadline * margin, "%s: bfq %llu ms, deadline %llu ms", model,
		      (unsigned long long)(bfq / MS), (unsigned long long)(deadline / MS));
}

START_TEST(test_burst_not_raised_hdd)
{
	check_burst("hdd", 100);
}
END_TEST

START_TEST(test_burst_not_raised_ssd)
{
	check_burst("ssd", 105);
}
END_TEST

/* ---- injection ---- */

#define INJ_THINKER 700
#define INJ_READER 800
#define INJ_RUN_NS (3000 * MS)

struct inj_result {
	uint64_t reader_sectors;
	uint64_t thinker_reads, thinker_lat_ns; /* its mean read latency */
};

/*
 * A process that reads 4 KiB, thinks think_ms, and reads the next, at
 * weight 300 (so the scenario is asymmetric, and bfq idles for it to keep
 * its share), beside a sequential reader at the default weight with four
 * 64 KiB reads out (or alone), for INJ_RUN_NS on model, low_latency off,
 * slice_idle (ms) as given.
 */
static struct inj_result thinker_and_reader(const char *model, uint64_t think_ms, bool reader,
					    const char *slice_idle)
{
	struct elv_sim *s = elv_sim_new("bfq", model);
	struct elv_sim_proc *t, *r = NULL;
	struct inj_result res = { 0 };
	char w[32];

	tunable_store_ok(s->fd, "low_latency", "0");
	tunable_store_ok(s->fd, "slice_idle", slice_idle);
	snprintf(w, sizeof(w), "%d 300", INJ_THINKER);
	tunable_store_ok(s->fd, "weights", w);
	t = elv_sim_add(s, INJ_THINKER, 6000000, 8, 1, think_ms * MS, 0);
	/* on flash a large request is not injected beside another (test_flash_injects_small) */
	if (reader)
		r = elv_sim_add(s, INJ_READER, 0, strcmp(model, "ssd") ? 128 : 16, 4, 0, 0);
	elv_sim_run(s, INJ_RUN_NS);
	res.reader_sectors = r ? r->sectors_done : 0;
	res.thinker_reads = t->reads_done;
	res.thinker_lat_ns = t->reads_done ? t->lat_sum_ns / t->reads_done : 0;
	elv_sim_free(s);
	return res;
}

/*
 * bfq_update_inject_limit, bfq_reset_inject_limit, bfq_check_waker, on a
 * queue's state as bfq keeps it: a request that took 1.5 times the base
 * with injected ones out lowers the limit, one that took less raises it,
 * but not past one more than the disk held; a request alone on the disk
 * with no base gives the base and a limit of 1; a second after the limit
 * last fell it starts again, from 0 for a short thinker and 1 for a long
 * one; a queue whose requests come within 4 ms of another's completions
 * three times running has it as its waker, whose request then goes while
 * the disk idles for it, whatever the limit.
 */
START_TEST(test_inject_limit_rules)
{
	struct fake_disk *fd = bfq_disk();
	struct bfq_data *bfqd = fd->q->elevator->elevator_data;
	struct test_bio tb[2];
	struct bfq_queue *a, *b;
	uint64_t now;

	read_at(fd, &tb[0], PID_A, 1000);
	read_at(fd, &tb[1], PID_B, 900000);
	a = (struct bfq_queue *)sync_queue_of(fd, PID_A);
	b = (struct bfq_queue *)sync_queue_of(fd, PID_B);
	now = elv_now(fd);
	bfqd->max_rq_in_driver = 3;

	a->last_serv_time_ns = 2 * MS;
	a->inject_limit = 2;
	bfqd->rqs_injected = true;
	bfqd->rq_in_driver = 2;
	bfqd->last_empty_occupied_ns = now - 3 * MS; /* 1.5 times the base */
	bfq_update_inject_limit(bfqd, a, now);
	ck_assert_uint_eq(a->inject_limit, 1);
	ck_assert_uint_eq(a->decrease_time, now);
	ck_assert(!bfqd->rqs_injected);
	for (unsigned int limit = 1; limit <= 5; limit++) {
		bfqd->rqs_injected = true;
		bfqd->last_empty_occupied_ns = now - 3 * MS + 1;
		bfq_update_inject_limit(bfqd, a, now);
	}
	ck_assert_uint_eq(a->inject_limit, 4); /* max_rq_in_driver + 1 */
	ck_assert_uint_eq(a->last_serv_time_ns, 2 * MS);

	a->last_serv_time_ns = 0;
	a->inject_limit = 0;
	bfqd->rq_in_driver = 1;
	bfqd->last_empty_occupied_ns = now - MS / 2;
	bfq_update_inject_limit(bfqd, a, now);
	ck_assert_uint_eq(a->last_serv_time_ns, MS / 2);
	ck_assert_uint_eq(a->inject_limit, 1);
	bfqd->rq_in_driver = 0;

	a->decrease_time = now;
	a->has_short_ttime = true;
	bfq_inject_on_add(bfqd, a, false, now + 999 * MS);
	ck_assert_uint_eq(a->inject_limit, 1);
	bfq_inject_on_add(bfqd, a, false, now + 1000 * MS);
	ck_assert_uint_eq(a->inject_limit, 0);
	ck_assert_uint_eq(a->last_serv_time_ns, 0);
	a->has_short_ttime = false;
	bfq_inject_on_add(bfqd, a, false, now + 2000 * MS);
	ck_assert_uint_eq(a->inject_limit, 1);

	b->has_short_ttime = false;
	for (unsigned int i = 0; i < 3; i++) {
		ck_assert_ptr_null(b->waker);
		bfqd->last_completed_rq_bfqq = a;
		bfqd->last_completion = now + 3000 * MS + i * 10 * MS;
		bfq_inject_on_add(bfqd, b, true,
				  bfqd->last_completion + (i == 2 ? 4 * MS - 1 : MS));
	}
	ck_assert_ptr_eq(b->waker, a);
	b->waker = NULL;
	b->tentative_waker = a;
	b->num_waker_detections = 1;
	for (unsigned int i = 0; i < 3; i++) { /* 4 ms after: no wake-up */
		bfqd->last_completion += 10 * MS;
		bfq_inject_on_add(bfqd, b, true, bfqd->last_completion + 4 * MS);
	}
	ck_assert_uint_eq(b->num_waker_detections, 1);
	ck_assert_ptr_null(b->waker);
	b->waker = a;
	a->inject_limit = 0;
	ck_assert_ptr_eq(bfq_inject_queue(bfqd, b, now), a);
	b->waker = NULL;
	finish(fd, tb, 2);
}
END_TEST

/*
 * bfq_choose_bfqq_for_injection, bfq_update_inject_limit: while bfq idles
 * for the thinker (for its share, not the throughput: on the ssd model the
 * disk queues; on the hdd model its think time is long), the reader's
 * requests (64 KiB on the hdd model, 8 KiB on the ssd model, where larger
 * ones go only to an empty disk) go to the disk within the learnt limit.  The reader gets at
 * least 90% of what it gets when nothing is idled for (slice_idle=0);
 * without injection it got 4% of it on the ssd model (thinking 1 ms) and
 * half on the hdd model.  The thinker's mean read latency stays within 1.5
 * times its base: on the ssd model its latency alone; on the hdd model,
 * where every read of the reader between two of its own costs it a seek
 * whoever chose it, its latency with slice_idle=0.
 */
static void check_injection(const char *model, uint64_t think_ms, bool base_alone)
{
	struct inj_result alone = thinker_and_reader(model, think_ms, false, "8");
	struct inj_result none = thinker_and_reader(model, think_ms, true, "0");
	struct inj_result both = thinker_and_reader(model, think_ms, true, "8");
	uint64_t base = base_alone ? alone.thinker_lat_ns : none.thinker_lat_ns;

	fprintf(stderr,
		"%s: thinker (%llu ms) %.3f ms a read, alone %.3f, no idling %.3f; "
		"reader %llu sectors, no idling %llu\n",
		model, (unsigned long long)think_ms, (double)both.thinker_lat_ns / MS,
		(double)alone.thinker_lat_ns / MS, (double)none.thinker_lat_ns / MS,
		(unsigned long long)both.reader_sectors, (unsigned long long)none.reader_sectors);
	ck_assert_uint_gt(alone.thinker_reads, 50);
	ck_assert_uint_gt(both.thinker_reads, 50);
	ck_assert_msg(both.reader_sectors * 10 >= none.reader_sectors * 9,
		      "%s: reader %llu sectors, %llu with no idling", model,
		      (unsigned long long)both.reader_sectors,
		      (unsigned long long)none.reader_sectors);
	ck_assert_msg(both.thinker_lat_ns * 2 <= base * 3, "%s: thinker %llu ns a read, base %llu",
		      model, (unsigned long long)both.thinker_lat_ns, (unsigned long long)base);
}

START_TEST(test_injection_ssd)
{
	check_injection("ssd", 1, true);
	check_injection("ssd", 10, true);
}
END_TEST

/*
 * bfq_choose_bfqq_for_injection on flash: while the disk idles for A, a
 * request of BFQQ_SECT_THR_NONROT sectors or more is injected only into an
 * empty disk (flash serves one large request at a time best), a smaller
 * one beside another; on a rotating disk size does not matter.
 */
static struct bfq_queue *injected(bool flash, unsigned int b_sectors, unsigned int in_driver)
{
	struct fake_disk *fd = flash ? bfq_flash_disk() : bfq_disk();
	struct bfq_data *bfqd = fd->q->elevator->elevator_data;
	struct test_bio tb[2];
	struct bfq_queue *a, *b, *chosen;

	tunable_store_ok(fd, "low_latency", "0");
	read_at(fd, &tb[0], PID_A, 1000);
	elv_start_serial(fd);
	elv_complete_one_after(fd, 1); /* A's read is done: the disk idles for A */
	fd->stopped = true;
	a = sync_queue_of(fd, PID_A);
	ck_assert_ptr_eq(bfqd->in_service, a);
	submit(fd, &tb[1], PID_B, IOPRIO_DEFAULT, 900000, b_sectors);
	b = sync_queue_of(fd, PID_B);
	bfqd->hw_tag = 1;
	a->seek_history = ~0u; /* idling for A boosts nothing: injection is for its share */
	a->inject_limit = 4;
	bfqd->rq_in_driver = in_driver;
	chosen = bfq_inject_queue(bfqd, a, elv_now(fd));
	bfqd->rq_in_driver = 0;
	finish(fd, tb, 2);
	ck_assert(!chosen || chosen == b);
	return chosen;
}

START_TEST(test_flash_injects_small)
{
	ck_assert_ptr_null(injected(true, BFQQ_SECT_THR_NONROT, 1));
	ck_assert_ptr_nonnull(injected(true, BFQQ_SECT_THR_NONROT, 0));
	ck_assert_ptr_nonnull(injected(true, BFQQ_SECT_THR_NONROT - 1, 1));
	ck_assert_ptr_nonnull(injected(false, BFQQ_SECT_THR_NONROT, 1));
}
END_TEST

START_TEST(test_injection_hdd)
{
	check_injection("hdd", 30, false);
}
END_TEST

#define NR_TUNABLES 10

/* ---- cooperating queues ---- */

#define COOP_CHUNK 128 /* sectors: 64 KiB */
#define COOP_PROCS 3
#define COOP_RUN_NS (3000 * MS)

/*
 * The S suite's interleaved_io on the hdd model: n processes read one
 * file in turn, process k its chunks k, k + n, k + 2n, ..., one 64 KiB
 * read out at a time and no think time.  Returns the sectors all of them
 * read in COOP_RUN_NS (n = 1: one sequential reader).
 */
static uint64_t interleaved_sectors(const char *elevator, unsigned int n)
{
	struct elv_sim *s = elv_sim_new(elevator, "hdd");
	struct elv_sim_proc *p[COOP_PROCS];
	uint64_t sectors = 0;

	for (unsigned int k = 0; k < n; k++) {
		p[k] = elv_sim_add(s, 3000 + k, (sector_t)k * COOP_CHUNK, COOP_CHUNK, 1, 0, 0);
		p[k]->stride = (uint64_t)n * COOP_CHUNK;
	}
	elv_sim_run(s, COOP_RUN_NS);
	for (unsigned int k = 0; k < n; k++)
		sectors += p[k]->sectors_done;
	elv_sim_free(s);
	return sectors;
}

/*
 * bfq_setup_cooperator, bfq_merge_bfqqs: each reader's next request lies
 * within BFQQ_CLOSE_THR of where the disk is (the in-service queue's last
 * request), in the queues' first 100 ms, so the three queues become one
 * and the disk reads the file in order: together they get at least 80%
 * of one sequential reader's sectors (they get all of it: the merges are
 * done at the readers' first requests).  The margin is for a merge that
 * comes a request late, leaving a hole the merged stream turns over once.
 * Kept apart (no merging), each queue in service reads a chunk and then
 * waits for the platter to bring its next one, two chunks on, round: they
 * get 61% of it (432512 sectors against 705408).
 */
START_TEST(test_interleaved_io_merges_cooperators)
{
	uint64_t seq = interleaved_sectors("bfq", 1);
	uint64_t coop = interleaved_sectors("bfq", COOP_PROCS);

	fprintf(stderr, "interleaved_io: one reader %llu sectors, three interleaved %llu\n",
		(unsigned long long)seq, (unsigned long long)coop);
	ck_assert_uint_gt(seq, 0);
	ck_assert_msg(coop * 100 >= seq * 80, "three interleaved readers %llu sectors, one %llu",
		      (unsigned long long)coop, (unsigned long long)seq);
}
END_TEST

/*
 * A's queue has requests at 1000 and 1016 (its first I/O at 0); B's
 * first request, at sector, comes delay_ms later.  Whether B's queue was
 * merged into A's.
 */
static bool close_queues_merged(sector_t sector, uint64_t delay_ms)
{
	struct fake_disk *fd = bfq_disk();
	struct test_bio tb[3];
	bool merged;

	tunable_store_ok(fd, "low_latency", "0");
	read_at(fd, &tb[0], PID_A, 1000);
	read_at(fd, &tb[1], PID_A, 1016);
	fd->clock.virtual_ns += delay_ms * MS;
	read_at(fd, &tb[2], PID_B, sector);
	merged = sync_queue_of(fd, PID_B)->merged == sync_queue_of(fd, PID_A);
	finish(fd, tb, 3);
	return merged;
}

/*
 * bfq_find_close_cooperator, bfq_too_late_for_merging: a request within
 * BFQQ_CLOSE_THR of a busy queue's next one merges the two queues, but
 * only while both are in their first 100 ms of I/O; beyond the threshold,
 * or later, they stay apart.
 */
START_TEST(test_close_queues_merge_only_young)
{
	ck_assert(close_queues_merged(1032, 0));
	ck_assert(close_queues_merged(1000 + BFQQ_CLOSE_THR, 0));
	ck_assert(!close_queues_merged(1000 + BFQQ_CLOSE_THR + 1, 0));
	ck_assert(close_queues_merged(1032, 100));
	ck_assert(!close_queues_merged(1032, 101));
}
END_TEST

/*
 * On a disk seen to queue: A's first request, then, gap_ms later, B's
 * first, far from A's; B weighing weight_b if not 0.  Whether B's queue
 * was merged into A's for good (stably).
 */
static bool stably_merged_on_flash(uint64_t gap_ms, const char *weight_b)
{
	struct fake_disk *fd = bfq_flash_disk();
	struct test_bio warm[64], tb[2];
	struct bfq_queue *b;
	bool merged;

	tunable_store_ok(fd, "low_latency", "0");
	queue_deep(fd, warm, 64);
	if (weight_b)
		tunable_store_ok(fd, "weights", weight_b);
	read_at(fd, &tb[0], PID_A, 1000);
	fd->clock.virtual_ns += gap_ms * MS;
	read_at(fd, &tb[1], PID_B, 900000);
	b = sync_queue_of(fd, PID_B);
	merged = b->merged == sync_queue_of(fd, PID_A) && b->stably_merged;
	finish(fd, tb, 2);
	return merged;
}

/*
 * bfq_do_or_sched_stable_merge: on flash that queues, a sync queue made
 * within the burst interval (180 ms) of the last one made, of the same
 * class, level and group (weight), is merged into it at once, close I/O
 * or not, and never split; later, or of another weight, it stays apart.
 * A rotating disk that queues is no such flash: nothing is merged at once.
 */
START_TEST(test_stable_merge_on_flash)
{
	struct fake_disk *fd = bfq_disk();
	struct test_bio warm[64], tb[2];

	tunable_store_ok(fd, "low_latency", "0");
	queue_deep(fd, warm, 64);
	read_at(fd, &tb[0], PID_A, 1000);
	read_at(fd, &tb[1], PID_B, 900000);
	ck_assert_ptr_null(sync_queue_of(fd, PID_B)->merged);
	finish(fd, tb, 2);

	ck_assert(stably_merged_on_flash(0, NULL));
	ck_assert(stably_merged_on_flash(180, NULL));
	ck_assert(!stably_merged_on_flash(181, NULL));
	ck_assert(!stably_merged_on_flash(0, "200 500"));
}
END_TEST

/*
 * bfq_bfqq_expire marking a shared seeky queue split_coop, bfq_split_bfqq:
 * the three interleaved readers share one queue; once each of them jumps
 * 100000 sectors a read, the shared queue turns seeky, and at their next
 * requests they are back in their own queues, each served alone.
 * low_latency off: no raised queue, so stable merging (which never
 * splits) keeps away.
 */
START_TEST(test_seeky_cooperators_split)
{
	struct elv_sim *s = elv_sim_new("bfq", "hdd");
	struct elv_sim_proc *p[COOP_PROCS];
	struct bfq_queue *own[COOP_PROCS];
	uint64_t before[COOP_PROCS];

	tunable_store_ok(s->fd, "low_latency", "0");
	for (unsigned int k = 0; k < COOP_PROCS; k++) {
		p[k] = elv_sim_add(s, 3000 + k, (sector_t)k * COOP_CHUNK, COOP_CHUNK, 1, 0, 0);
		p[k]->stride = COOP_PROCS * COOP_CHUNK;
	}
	elv_sim_run(s, 500 * MS);
	for (unsigned int k = 0; k < COOP_PROCS; k++) {
		own[k] = sync_queue_of(s->fd, 3000 + k);
		ck_assert_ptr_nonnull(own[k]);
		ck_assert_ptr_eq(bfq_coop_lookup(own[k]), bfq_coop_lookup(own[0]));
		p[k]->stride = 100000 + k * 1000;
		before[k] = p[k]->reads_done;
	}
	ck_assert(bfq_coop_lookup(own[0])->coop);
	elv_sim_run(s, 1500 * MS);
	for (unsigned int k = 0; k < COOP_PROCS; k++) {
		ck_assert_ptr_null(own[k]->merged);
		ck_assert_uint_eq(own[k]->nr_merged, 0);
		ck_assert(!own[k]->coop);
		ck_assert_uint_gt(p[k]->reads_done, before[k] + 10);
	}
	elv_sim_free(s);
}
END_TEST

/* ---- groups ---- */

#define GROUP_RUN_NS (10000 * MS)

/* /a's io.bfq.weight is 100, /b's 300. */
static unsigned int test_cgroup_weight(void *priv, const char *path)
{
	(void)priv;
	return !strcmp(path, "/b") ? 300 : 100;
}

/* No io.bfq.weight anywhere: the default, or the group_weights tunable. */
static unsigned int test_no_cgroup_weight(void *priv, const char *path)
{
	(void)priv, (void)path;
	return 0;
}

/*
 * On the real clock a group's weight is read from its cgroup's directory
 * (none for a cgroup without the file); on a virtual clock nothing is
 * read, the cgroups being no cgroups of this system.
 */
START_TEST(test_cgroup_weight_real_clock_only)
{
	struct elv_cgroup_ops ops;
	struct blk_clock vclock;

	elv_cgroup_ops_init(&ops, &blk_real_clock, "io.bfq.weight");
	ck_assert_uint_eq(ops.cgroup_weight(ops.priv, "/no-such-cgroup-here"), 0);
	blk_virtual_clock_init(&vclock, 0);
	elv_cgroup_ops_init(&ops, &vclock, "io.bfq.weight");
	ck_assert_uint_eq(ops.cgroup_weight(ops.priv, "/"), 0);
}
END_TEST

/*
 * The read-only groups file lists the groups the requests' cgroups made,
 * /b (made last) first, each with its weight and its two queues; a write
 * to it is refused.
 */
static void assert_groups_file(struct fake_disk *fd)
{
	char text[256], want[64];
	const struct bfq_data *bfqd = fd->q->elevator->elevator_data;
	const struct bfq_group *b = LIST_FIRST(&bfqd->groups);
	int n = elv_tunable_text(fd->q->elevator, text_tunable(fd, "groups"), text, sizeof(text));

	ck_assert_int_ge(n, 0);
	text[n] = '\0';
	ck_assert_ptr_nonnull(b);
	snprintf(want, sizeof(want), "/b %u 2\n/a 100 2\n", b->entity.weight);
	ck_assert_str_eq(text, want);
	ck_assert_int_eq(elv_tunable_store(fd->q->elevator, "groups", "/a 1"), -EACCES);
}

/*
 * Two groups, each with two sequential readers (64 KiB, two out at a
 * time) far apart, on model, for GROUP_RUN_NS, low_latency off: the
 * sectors /b's readers got over /a's, times 1000.  weight_of: where the
 * groups' weights come from; tunable: written to group_weights first.
 */
static uint64_t group_ratio(const char *model, unsigned int (*weight_of)(void *, const char *),
			    const char *tunable)
{
	struct elv_sim *s = elv_sim_new("bfq", model);
	struct bfq_data *bfqd = s->fd->q->elevator->elevator_data;
	struct elv_sim_proc *p[4];
	uint64_t a, b;

	bfqd->cgroup.cgroup_weight = weight_of;
	tunable_store_ok(s->fd, "low_latency", "0");
	if (tunable)
		tunable_store_ok(s->fd, "group_weights", tunable);
	for (unsigned int i = 0; i < 4; i++) {
		p[i] = elv_sim_add(s, (i < 2 ? 4000 : 4100) + i % 2, (sector_t)i * 1000000, 128, 2, 0,
				   0);
		/* the cgroup on the request, as the frontend resolves it from the caller */
		p[i]->blkcg = elv_sim_cgroup(s, i < 2 ? "/a" : "/b");
	}
	elv_sim_run(s, GROUP_RUN_NS);
	a = p[0]->sectors_done + p[1]->sectors_done;
	b = p[2]->sectors_done + p[3]->sectors_done;
	fprintf(stderr, "%s: group /a %llu sectors, /b %llu\n", model, (unsigned long long)a,
		(unsigned long long)b);
	ck_assert_uint_gt(a, 0);
	assert_groups_file(s->fd);
	elv_sim_free(s);
	return b * 1000 / a;
}

/*
 * bfq_group, B-WF2Q+ over groups (bfq_activate_requeue_entity and
 * bfq_bfqq_served going up to the group's entity): groups weighing 100
 * and 300 (io.bfq.weight, or the group_weights tunable where the cgroup
 * has none) with the same workload get 1:3 of the disk, within 10%; the
 * same readers all in one group each get the same.  Without groups the
 * four readers' queues weigh the same, and the ratio is 1.
 */
START_TEST(test_groups_share_by_weight_hdd)
{
	uint64_t r = group_ratio("hdd", test_cgroup_weight, NULL);

	ck_assert_msg(r >= 2700 && r <= 3300, "hdd: /b got %llu/1000 of /a's", (unsigned long long)r);
	r = group_ratio("hdd", test_no_cgroup_weight, "/b 300");
	ck_assert_msg(r >= 2700 && r <= 3300, "hdd, tunable: /b got %llu/1000 of /a's",
		      (unsigned long long)r);
	r = group_ratio("hdd", test_no_cgroup_weight, NULL);
	ck_assert_msg(r >= 900 && r <= 1100, "hdd, same weights: /b got %llu/1000 of /a's",
		      (unsigned long long)r);
}
END_TEST

START_TEST(test_groups_share_by_weight_ssd)
{
	uint64_t r = group_ratio("ssd", test_cgroup_weight, NULL);

	ck_assert_msg(r >= 2700 && r <= 3300, "ssd: /b got %llu/1000 of /a's", (unsigned long long)r);
}
END_TEST

static const struct tunable_case tunables[NR_TUNABLES] = {
	{ "fifo_expire_sync", 125, 1, INT_MAX },  { "fifo_expire_async", 250, 1, INT_MAX },
	{ "back_seek_max", 16384, 0, INT_MAX },   { "back_seek_penalty", 2, 1, INT_MAX },
	{ "slice_idle", 8, 0, INT_MAX },	  { "slice_idle_us", 8000, 0, INT_MAX },
	{ "max_budget", 0, 0, INT_MAX / 8 },	  { "timeout_sync", 125, 1, INT_MAX },
	{ "strict_guarantees", 0, 0, 1 },	  { "low_latency", 1, 0, 1 },
};

static Suite *bfq_suite(void)
{
	Suite *s = suite_create("bfq");
	TCase *share = tcase_create("wf2q");
	TCase *budget = tcase_create("budget");
	TCase *idle = tcase_create("idling");
	TCase *class = tcase_create("classes");
	TCase *weights = tcase_create("weights");
	TCase *latency = tcase_create("latency");

	tcase_add_test(share, test_service_proportional_to_weights);
	tcase_add_test(share, test_ioprio_levels_weigh);
	tcase_add_test(share, test_smallest_eligible_finish_first);
	suite_add_tcase(s, share);
	tcase_add_test(budget, test_budget_exhausted_grows_budget);
	tcase_add_test(budget, test_budget_timeout);
	tcase_add_test(budget, test_no_more_requests_without_idling);
	tcase_add_test(budget, test_no_more_requests_budget_is_service);
	suite_add_tcase(s, budget);
	tcase_add_test(idle, test_idle_waits_slice_idle_then_expires);
	tcase_add_test(idle, test_idle_pays_off);
	tcase_add_test(idle, test_raised_queue_idles_longer);
	tcase_add_test(idle, test_queueing_disk_stops_idling);
	tcase_add_test(idle, test_seek_rule_flash);
	tcase_add_test(idle, test_shallow_disk_keeps_idling);
	tcase_add_test(idle, test_queueing_disk_idles_when_asymmetric);
	tcase_add_test(idle, test_soft_rt_raising_preempts);
	tcase_add_test(idle, test_strict_guarantees);
	tcase_add_test(idle, test_no_strict_guarantees);
	tcase_add_test(idle, test_fifo_expiry_once_a_budget);
	tcase_add_test(idle, test_back_seek_penalty_and_max);
	tcase_add_test(idle, test_async_charged_more);
	tcase_add_test(idle, test_seeky_queue_idles_briefly);
	suite_add_tcase(s, idle);
	tcase_add_test(class, test_rt_then_be_then_idle);
	tcase_add_test(class, test_rt_preempts_be);
	tcase_add_test(class, test_idle_class_starvation_guard);
	suite_add_tcase(s, class);
	tcase_add_test(weights, test_weights_parse_and_refuse);
	tcase_add_test(weights, test_group_weights_parse_and_refuse);
	tcase_add_test(weights, test_cgroup_weight_real_clock_only);
	suite_add_tcase(s, weights);
	tcase_set_timeout(latency, 120);
	tcase_add_test(latency, test_startup_latency_under_sequential_readers);
	tcase_add_test(latency, test_comm_startup_lat_ten_readers);
	tcase_add_test(latency, test_long_thinker_not_idled_hdd);
	tcase_add_test(latency, test_long_thinker_not_idled_ssd);
	tcase_add_test(latency, test_inject_limit_rules);
	tcase_add_test(latency, test_injection_ssd);
	tcase_add_test(latency, test_flash_injects_small);
	tcase_add_test(latency, test_injection_hdd);
	tcase_add_test(latency, test_burst_threshold_and_interval);
	tcase_add_test(latency, test_burst_not_raised_hdd);
	tcase_add_test(latency, test_burst_not_raised_ssd);
	tcase_add_test(latency, test_interleaved_io_merges_cooperators);
	tcase_add_test(latency, test_seeky_cooperators_split);
	tcase_add_test(latency, test_close_queues_merge_only_young);
	tcase_add_test(latency, test_stable_merge_on_flash);
	tcase_add_test(latency, test_raising_ends_after_120000_sectors);
	tcase_add_test(latency, test_raising_time_from_peak_rate);
	tcase_add_test(latency, test_groups_share_by_weight_hdd);
	tcase_add_test(latency, test_groups_share_by_weight_ssd);
	suite_add_tcase(s, latency);
	suite_add_tcase(s, tunable_tests("bfq", tunables, NR_TUNABLES));
	return s;
}

int main(void)
{
	return fake_run_suite(bfq_suite());
}
