/* SPDX-License-Identifier: BSD-3-Clause */
/* check_cfq.c - the CFQ elevator: slices per process and priority, sector order, FIFO, idling. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elv_harness.h"
#include "elv_sim.h"
#include "tunable_test.h"
#include "../sched/cfq_impl.h"

#define ELEVATOR "cfq"

#define PID_A 100
#define PID_B 200

#define RT(level) IOPRIO_PRIO_VALUE(IOPRIO_CLASS_RT, level)
#define BE(level) IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, level)
#define IDLE IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)

static void submit_prio(struct fake_disk *fd, struct test_bio *tb, enum req_op op, pid_t pid,
			unsigned short ioprio, sector_t sector, unsigned int sectors)
{
	elv_submit_from(fd, tb, op, sector, sectors, pid, ioprio);
}

static void submit(struct fake_disk *fd, struct test_bio *tb, enum req_op op, pid_t pid,
		   sector_t sector, unsigned int sectors)
{
	submit_prio(fd, tb, op, pid, IOPRIO_DEFAULT, sector, sectors);
}

/* One-sector reads (sync) and writes (async); callers leave gaps so none merge. */
static void read_at(struct fake_disk *fd, struct test_bio *tb, pid_t pid, sector_t sector)
{
	submit(fd, tb, REQ_OP_READ, pid, sector, 1);
}

static void write_at(struct fake_disk *fd, struct test_bio *tb, pid_t pid, sector_t sector)
{
	submit(fd, tb, REQ_OP_WRITE, pid, sector, 1);
}

static void read_prio(struct fake_disk *fd, struct test_bio *tb, pid_t pid, unsigned short ioprio,
		      sector_t sector)
{
	submit_prio(fd, tb, REQ_OP_READ, pid, ioprio, sector, 1);
}

/*
 * Two processes with 20 sync reads each, one request at a time, 10 ms
 * apiece: each gets a 100 ms slice from its first completion, 11 requests,
 * in turn; A's last 9 leave slice over, so the disk idles 8 ms for A before
 * B's last 9.  Each run goes up in sector order.
 */
START_TEST(test_fairness_two_pids_in_slices)
{
	static const struct elv_run want[] = {
		{ PID_A, 11 }, { PID_B, 11 }, { PID_A, 9 }, { PID_B, 9 }
	};
	struct fake_disk *fd = elv_disk(ELEVATOR, true, 1);
	struct test_bio tb[40];
	struct elv_run runs[8];
	unsigned int n, a = 0;

	for (unsigned int i = 0; i < 20; i++) {
		read_at(fd, &tb[2 * i], PID_A, 1000 + 10 * i);
		read_at(fd, &tb[2 * i + 1], PID_B, 500000 + 10 * i);
	}
	fake_start(fd);
	elv_serve_serially(fd, 10);

	ck_assert_uint_eq(fd->nr_events, 40);
	n = elv_pid_runs(fd, runs, 8);
	ck_assert_uint_le(n, 8);
	ck_assert_uint_eq(n, 4);
	for (unsigned int i = 0; i < n; i++)
		ck_assert_msg(runs[i].pid == want[i].pid && runs[i].len == want[i].len,
			      "run %u: pid %d x%u, expected pid %d x%u", i, (int)runs[i].pid,
			      runs[i].len, (int)want[i].pid, want[i].len);
	for (unsigned int i = 0; i < 22; i++)
		a += fd->events[i].pid == PID_A;
	ck_assert_uint_eq(a, 11);
	for (unsigned int i = 1; i < 40; i++)
		if (fd->events[i].pid == fd->events[i - 1].pid)
			ck_assert_uint_gt(fd->events[i].sector, fd->events[i - 1].sector);
	elv_finish_drained(fd, tb, 40);
}
END_TEST

/*
 * A's slice starts at its first completion and lasts slice_ms: a
 * completion one ms before the end lets A go on, one at the end hands the
 * disk to B.  slice_sync, unless NULL, is stored first; both are at ioprio.
 */
static void check_slice_end_prio(const char *slice_sync, unsigned short ioprio, uint64_t slice_ms)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, true, 1);
	struct test_bio tb[11];

	if (slice_sync)
		tunable_store_ok(fd, "slice_sync", slice_sync);
	for (unsigned int i = 0; i < 10; i++)
		read_prio(fd, &tb[i], PID_A, ioprio, 1000 + 10 * i);
	read_prio(fd, &tb[10], PID_B, ioprio, 500000);
	fake_start(fd);
	elv_assert_event(fd, 0, PID_A, 1000);
	elv_complete_one_after(fd, 1); /* the slice starts */
	elv_assert_event(fd, 1, PID_A, 1010);
	elv_complete_one_after(fd, slice_ms - 1);
	elv_assert_event(fd, 2, PID_A, 1020);
	elv_complete_one_after(fd, 1);
	elv_assert_event(fd, 3, PID_B, 500000);
	elv_finish_drained(fd, tb, 11);
}

static void check_slice_end(const char *slice_sync, uint64_t slice_ms)
{
	check_slice_end_prio(slice_sync, IOPRIO_DEFAULT, slice_ms);
}

START_TEST(test_slice_expiry_default)
{
	check_slice_end(NULL, 100);
}
END_TEST

START_TEST(test_slice_sync_tunable_in_ms)
{
	check_slice_end("30", 30);
	check_slice_end("250", 250);
}
END_TEST

/* The async queue's slice is slice_async long. */
START_TEST(test_slice_async_expiry)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, true, 1);
	struct test_bio tb[11];

	for (unsigned int i = 0; i < 10; i++)
		write_at(fd, &tb[i], PID_A, 1000 + 10 * i);
	read_at(fd, &tb[10], PID_B, 500000);
	fake_start(fd);
	elv_assert_event(fd, 0, PID_A, 1000);
	elv_complete_one_after(fd, 1); /* the slice starts */
	elv_complete_one_after(fd, 39);
	elv_assert_event(fd, 2, PID_A, 1020);
	elv_complete_one_after(fd, 1);
	elv_assert_event(fd, 3, PID_B, 500000);
	elv_finish_drained(fd, tb, 11);
}
END_TEST

/* From the head at 0, one queue's requests go up in sector order. */
START_TEST(test_sector_order_within_queue)
{
	static const sector_t in[] = { 50, 10, 70, 30, 90, 60 };
	static const sector_t out[] = { 10, 30, 50, 60, 70, 90 };
	struct fake_disk *fd = elv_disk(ELEVATOR, true, 0);
	struct test_bio tb[6];

	for (unsigned int i = 0; i < 6; i++)
		read_at(fd, &tb[i], PID_A, in[i]);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 6);
	for (unsigned int i = 0; i < 6; i++)
		elv_assert_event(fd, i, PID_A, out[i]);
	elv_finish_drained(fd, tb, 6);
}
END_TEST

/*
 * The request served after head (8 sectors at head_sector) when a and b
 * wait, submitted in either order; tunable, unless NULL, is set to value.
 */
static sector_t next_after(sector_t head_sector, sector_t a, sector_t b, const char *tunable,
			   const char *value)
{
	sector_t first = 0;

	for (int order = 0; order < 2; order++) {
		struct fake_disk *fd = elv_disk(ELEVATOR, false, 1);
		struct test_bio tb[3];

		if (tunable)
			tunable_store_ok(fd, tunable, value);
		submit(fd, &tb[0], REQ_OP_READ, PID_A, head_sector, 8);
		read_at(fd, &tb[1], PID_A, order ? b : a);
		read_at(fd, &tb[2], PID_A, order ? a : b);
		ck_assert_uint_eq(fd->nr_events, 1);
		elv_complete_one_after(fd, 1);
		ck_assert_uint_eq(fd->nr_events, 2);
		ck_assert(order == 0 || fd->events[1].sector == first);
		first = fd->events[1].sector;
		elv_finish_drained(fd, tb, 3);
	}
	return first;
}

/* Backward seeks cost back_seek_penalty times their length, up to back_seek_max KiB. */
START_TEST(test_back_seek_penalty_and_max)
{
	/* the head ends at 1008: 999 is 9 back (18), 990 is 18 back (36), 1030 is 22 ahead */
	ck_assert_uint_eq(next_after(1000, 999, 1030, NULL, NULL), 999);
	ck_assert_uint_eq(next_after(1000, 990, 1030, NULL, NULL), 1030);
	ck_assert_uint_eq(next_after(1000, 990, 1030, "back_seek_penalty", "1"), 990);
	ck_assert_uint_eq(next_after(1000, 999, 1030, "back_seek_penalty", "3"), 1030);
	/* 4 KiB is 8 sectors: 9 back is too far, whatever its cost */
	ck_assert_uint_eq(next_after(1000, 999, 1030, "back_seek_max", "4"), 1030);
	ck_assert_uint_eq(next_after(1000, 999, 1030, "back_seek_max", "5"), 999);
	/* the default 16384 KiB is 32768 sectors back from 100008 */
	ck_assert_uint_eq(next_after(100000, 67240, 165544, NULL, NULL), 165544);
	ck_assert_uint_eq(next_after(100000, 67240, 165545, NULL, NULL), 67240);
	ck_assert_uint_eq(next_after(100000, 67239, 9000000, NULL, NULL), 9000000);
	/* both too far behind: back to the lower one, then forward */
	ck_assert_uint_eq(next_after(100000, 20, 10, NULL, NULL), 10);
}
END_TEST

/*
 * H at 1000 goes out at t0 with L at 0 and 30 requests from 1010 up
 * queued behind it; one completes every 10 ms.  Returns where L went: in
 * sector order it is last (31), but once L is older than its FIFO expiry
 * it goes next, out of order.  tunable, unless NULL, is set to value.
 */
static unsigned int fifo_pos(enum req_op op, const char *tunable, const char *value)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, false, 1);
	struct test_bio tb[32];
	unsigned int pos;

	if (tunable)
		tunable_store_ok(fd, tunable, value);
	submit(fd, &tb[0], op, PID_A, 1000, 1);
	submit(fd, &tb[1], op, PID_A, 0, 1);
	for (unsigned int i = 0; i < 30; i++)
		submit(fd, &tb[2 + i], op, PID_A, 1010 + 10 * i, 1);
	elv_serve_serially(fd, 10);
	ck_assert_uint_eq(fd->nr_events, 32);
	for (pos = 0; pos < 32 && fd->events[pos].sector != 0; pos++)
		;
	/* the sorted walk goes on from L upward */
	for (unsigned int i = 1; i < 32; i++)
		if (i != pos && i != pos + 1)
			ck_assert_uint_gt(fd->events[i].sector, fd->events[i - 1].sector);
	elv_finish_drained(fd, tb, 32);
	return pos;
}

START_TEST(test_fifo_expire_sync)
{
	/* L expires at t0 + 125 ms: the completion at t0 + 130 ms sends it, the 13th */
	ck_assert_uint_eq(fifo_pos(REQ_OP_READ, NULL, NULL), 13);
	ck_assert_uint_eq(fifo_pos(REQ_OP_READ, "fifo_expire_sync", "50"), 5);
	ck_assert_uint_eq(fifo_pos(REQ_OP_READ, "fifo_expire_sync", "1000"), 31);
}
END_TEST

START_TEST(test_fifo_expire_async)
{
	ck_assert_uint_eq(fifo_pos(REQ_OP_WRITE, NULL, NULL), 25);
	ck_assert_uint_eq(fifo_pos(REQ_OP_WRITE, "fifo_expire_async", "70"), 7);
	/* async writes do not follow the sync expiry */
	ck_assert_uint_eq(fifo_pos(REQ_OP_WRITE, "fifo_expire_sync", "50"), 25);
}
END_TEST

/*
 * Two expired requests: only one goes out of order per slice.  L1 at 0
 * goes at 130 ms; L2 far up at 90000 waits for the slice that starts at
 * the 220 ms completion, and then goes first.
 */
START_TEST(test_one_fifo_rescue_per_slice)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, false, 1);
	struct test_bio tb[33];

	read_at(fd, &tb[0], PID_A, 1000);
	read_at(fd, &tb[1], PID_A, 0);
	read_at(fd, &tb[2], PID_A, 90000);
	for (unsigned int i = 0; i < 30; i++)
		read_at(fd, &tb[3 + i], PID_A, 1010 + 10 * i);
	elv_serve_serially(fd, 10);
	ck_assert_uint_eq(fd->nr_events, 33);
	elv_assert_event(fd, 13, PID_A, 0);
	elv_assert_event(fd, 14, PID_A, 1130);
	elv_assert_event(fd, 22, PID_A, 90000);
	elv_finish_drained(fd, tb, 33);
}
END_TEST

/*
 * 40 async writes and 40 sync reads queued.  The async queue goes first:
 * quantum (8) at a time, and its slice ends after 8 * slice_async_rq
 * requests (2.6's budget at the default priority), for the reads.
 */
static unsigned int async_run_prio(const char *slice_async_rq, unsigned short ioprio)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, true, 0);
	struct test_bio tb[80];
	unsigned int writes;

	if (slice_async_rq)
		tunable_store_ok(fd, "slice_async_rq", slice_async_rq);
	for (unsigned int i = 0; i < 40; i++)
		submit_prio(fd, &tb[i], REQ_OP_WRITE, PID_A, ioprio, 10 * i, 1);
	for (unsigned int i = 0; i < 40; i++)
		read_at(fd, &tb[40 + i], PID_B, 500000 + 10 * i);
	fake_start(fd);
	for (unsigned int round = 0; round < 8 && fd->events[fd->nr_events - 1].op == REQ_OP_WRITE;
	     round++)
		fake_complete_batch(fd);
	for (writes = 0; writes < fd->nr_events && fd->events[writes].op == REQ_OP_WRITE; writes++)
		;
	/* then a sync slice: quantum reads */
	ck_assert_uint_eq(fd->nr_events, writes + 8);
	for (unsigned int i = writes; i < fd->nr_events; i++)
		ck_assert_int_eq(fd->events[i].pid, PID_B);
	elv_finish_drained(fd, tb, 80);
	return writes;
}

static unsigned int async_run(const char *slice_async_rq)
{
	return async_run_prio(slice_async_rq, IOPRIO_DEFAULT);
}

START_TEST(test_async_slice_async_rq)
{
	ck_assert_uint_eq(async_run(NULL), 16);
	ck_assert_uint_eq(async_run("1"), 8);
	ck_assert_uint_eq(async_run("3"), 24);
}
END_TEST

/*
 * A's read completes with A's queue empty and its slice running: B's
 * read waits for A's next one, up to slice_idle.
 */
static struct fake_disk *idling_disk(struct test_bio *tb)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, false, 0);

	read_at(fd, &tb[0], PID_A, 100);
	read_at(fd, &tb[1], PID_B, 500000);
	ck_assert_uint_eq(fd->nr_events, 1); /* B waits while A's read is out */
	elv_complete_one_after(fd, 1);
	return fd;
}

/* A's next read within slice_idle goes at once, before B's. */
START_TEST(test_idle_same_pid_goes_first)
{
	struct test_bio tb[3];
	struct fake_disk *fd = idling_disk(tb);

	ck_assert_uint_eq(fd->nr_events, 1);
	ck_assert_uint_eq(fd->q->dispatch_at, elv_now(fd) + 8 * MS);
	fd->clock.virtual_ns += 7 * MS;
	blk_run_queue(fd->q);
	ck_assert_uint_eq(fd->nr_events, 1);
	read_at(fd, &tb[2], PID_A, 108);
	ck_assert_uint_eq(fd->nr_events, 2);
	elv_assert_event(fd, 1, PID_A, 108);
	elv_finish_drained(fd, tb, 3);
}
END_TEST

/* Nothing from A within slice_idle: B's read goes when the wake-up comes. */
START_TEST(test_idle_expires_after_slice_idle)
{
	struct test_bio tb[2];
	struct fake_disk *fd = idling_disk(tb);
	uint64_t until = elv_now(fd) + 8 * MS;

	ck_assert_uint_eq(fd->q->dispatch_at, until);
	fd->clock.virtual_ns = until - 1;
	blk_run_queue(fd->q);
	ck_assert_uint_eq(fd->nr_events, 1);
	fd->clock.virtual_ns = until;
	blk_run_queue(fd->q);
	ck_assert_uint_eq(fd->nr_events, 2);
	elv_assert_event(fd, 1, PID_B, 500000);
	elv_finish_drained(fd, tb, 2);
}
END_TEST

/* How long the disk idles after A's read, with the tunables given set first. */
static uint64_t idle_ms(const char *slice_idle, const char *slice_sync)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, false, 0);
	struct test_bio tb[2];
	uint64_t ms;

	if (slice_idle)
		tunable_store_ok(fd, "slice_idle", slice_idle);
	if (slice_sync)
		tunable_store_ok(fd, "slice_sync", slice_sync);
	read_at(fd, &tb[0], PID_A, 100);
	read_at(fd, &tb[1], PID_B, 500000);
	fd->clock.virtual_ns += MS;
	fake_complete(fd, fake_nth(fd, 0), 0, 1);
	ms = fd->q->dispatch_at ? (fd->q->dispatch_at - elv_now(fd)) / MS : 0;
	/* without idling B does not even wait for A's read to complete */
	ck_assert_uint_eq(fd->nr_events, ms ? 1 : 2);
	elv_finish_drained(fd, tb, 2);
	return ms;
}

START_TEST(test_slice_idle_tunable)
{
	ck_assert_uint_eq(idle_ms(NULL, NULL), 8);
	ck_assert_uint_eq(idle_ms("3", NULL), 3);
	ck_assert_uint_eq(idle_ms("0", NULL), 0);
	/* never past the end of the slice */
	ck_assert_uint_eq(idle_ms("8", "5"), 5);
}
END_TEST

/* Idling waits for the disk to empty: no wait while another queue's request is out. */
START_TEST(test_no_idle_with_requests_in_driver)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, false, 0);
	struct test_bio tb[3];

	write_at(fd, &tb[0], PID_B, 900000); /* the async queue's, out first */
	read_at(fd, &tb[1], PID_A, 100);     /* preempts it */
	read_at(fd, &tb[2], PID_B, 500000);
	ck_assert_uint_eq(fd->nr_events, 2);
	elv_assert_event(fd, 1, PID_A, 100);
	fake_complete(fd, fake_nth(fd, 1), 0, 1); /* A's read, the write still out */
	ck_assert_uint_eq(fd->nr_events, 3);
	elv_assert_event(fd, 2, PID_B, 500000);
	elv_finish_drained(fd, tb, 3);
}
END_TEST

/* An async request from the process idled for ends the wait. */
START_TEST(test_async_request_ends_idle)
{
	struct test_bio tb[3];
	struct fake_disk *fd = idling_disk(tb);

	ck_assert_uint_eq(fd->nr_events, 1);
	write_at(fd, &tb[2], PID_A, 700000);
	ck_assert_uint_ge(fd->nr_events, 2);
	elv_assert_event(fd, 1, PID_B, 500000); /* B waited longer than the write */
	elv_finish_drained(fd, tb, 3);
}
END_TEST

/* The async queue waits while sync requests are in the driver. */
START_TEST(test_async_waits_for_sync_in_flight)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, false, 0);
	struct test_bio tb[2];

	tunable_store_ok(fd, "slice_idle", "0"); /* A's queue gives way at once */
	read_at(fd, &tb[0], PID_A, 100);
	write_at(fd, &tb[1], PID_B, 500000);
	ck_assert_uint_eq(fd->nr_events, 1);
	elv_complete_one_after(fd, 1);
	ck_assert_uint_eq(fd->nr_events, 2);
	elv_assert_event(fd, 1, PID_B, 500000);
	elv_finish_drained(fd, tb, 2);
}
END_TEST

/* A sync request takes the disk from the async queue at once. */
START_TEST(test_sync_preempts_async)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, false, 1);
	struct test_bio tb[6];

	for (unsigned int i = 0; i < 5; i++)
		write_at(fd, &tb[i], PID_A, 10 * i);
	read_at(fd, &tb[5], PID_B, 500000);
	elv_complete_one_after(fd, 1);
	elv_assert_event(fd, 0, PID_A, 0);
	elv_assert_event(fd, 1, PID_B, 500000);
	elv_finish_drained(fd, tb, 6);
}
END_TEST

/* While another queue waits, the active one has at most quantum requests out. */
static unsigned int quantum_run(const char *quantum, unsigned int b_reads)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, true, 0);
	struct test_bio tb[25];
	unsigned int out;

	if (quantum)
		tunable_store_ok(fd, "quantum", quantum);
	for (unsigned int i = 0; i < 20; i++)
		read_at(fd, &tb[i], PID_A, 1000 + 10 * i);
	for (unsigned int i = 0; i < b_reads; i++)
		read_at(fd, &tb[20 + i], PID_B, 500000 + 10 * i);
	fake_start(fd);
	out = fd->nr_events;
	for (unsigned int i = 0; i < out; i++)
		ck_assert_int_eq(fd->events[i].pid, PID_A);
	if (out < 20) {
		/* one completes, one more goes: still A's slice */
		fake_complete(fd, fake_nth(fd, 0), 0, 1);
		ck_assert_uint_eq(fd->nr_events, out + 1);
		ck_assert_int_eq(fd->events[out].pid, PID_A);
		ck_assert_uint_eq(fd->nr_dispatched, out);
	}
	elv_finish_drained(fd, tb, 20 + b_reads);
	return out;
}

START_TEST(test_quantum_limit)
{
	ck_assert_uint_eq(quantum_run(NULL, 5), 8);
	ck_assert_uint_eq(quantum_run("4", 5), 4);
	ck_assert_uint_eq(quantum_run("1", 5), 1);
	/* alone, a queue is not held back */
	ck_assert_uint_eq(quantum_run(NULL, 0), 20);
}
END_TEST

/* A bio joins the front of a queued request of its own process. */
START_TEST(test_front_merge_own_queue)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, true, 0);
	struct test_bio tb[3];

	submit(fd, &tb[0], REQ_OP_READ, PID_A, 100, 8);
	submit(fd, &tb[1], REQ_OP_READ, PID_A, 500, 8);
	submit(fd, &tb[2], REQ_OP_READ, PID_A, 92, 8);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 2);
	elv_assert_event(fd, 0, PID_A, 92);
	ck_assert_uint_eq(fd->events[0].nr_sectors, 16);
	ck_assert_uint_eq(fd->q->stats.merges[STAT_READ], 1);
	elv_finish_drained(fd, tb, 3);
	ck_assert_uint_lt(tb[2].order, tb[0].order);
}
END_TEST

/* CFQ's front-merge lookup searches only the bio's own process's queue. */
START_TEST(test_front_merge_not_across_processes)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, true, 0);
	struct test_bio tb[3];

	submit(fd, &tb[0], REQ_OP_READ, PID_A, 100, 8);
	submit(fd, &tb[1], REQ_OP_READ, PID_A, 500, 8);
	submit(fd, &tb[2], REQ_OP_READ, PID_B, 92, 8);
	ck_assert_uint_eq(fd->q->stats.merges[STAT_READ], 0);
	elv_drain(fd);
	ck_assert_uint_eq(fd->nr_events, 3);
	elv_finish_drained(fd, tb, 3);
}
END_TEST

/*
 * The core joins two queued requests of different processes when a bio
 * fills the gap: the survivor stays in its queue, the other queue, left
 * empty, goes (the sanitizers watch for a use after free).
 */
START_TEST(test_requests_merged_across_queues)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, true, 0);
	struct test_bio tb[3];

	submit(fd, &tb[0], REQ_OP_READ, PID_A, 100, 8);
	submit(fd, &tb[1], REQ_OP_READ, PID_B, 116, 8);
	submit(fd, &tb[2], REQ_OP_READ, PID_A, 108, 8);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 1);
	elv_assert_event(fd, 0, PID_A, 100);
	ck_assert_uint_eq(fd->events[0].nr_sectors, 24);
	elv_finish_drained(fd, tb, 3);
}
END_TEST

/* Merged in one queue, the request keeps the older FIFO deadline. */
START_TEST(test_merged_requests_keep_oldest_fifo_place)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, false, 1);
	struct test_bio tb[20];
	unsigned int pos;

	read_at(fd, &tb[0], PID_A, 1000);         /* out first, the head at 1001 */
	submit(fd, &tb[1], REQ_OP_READ, PID_A, 16, 8); /* the oldest: 16..24 */
	fd->clock.virtual_ns += 100 * MS;
	for (unsigned int i = 0; i < 16; i++)
		read_at(fd, &tb[2 + i], PID_A, 1010 + 10 * i);
	submit(fd, &tb[18], REQ_OP_READ, PID_A, 0, 8);  /* young */
	submit(fd, &tb[19], REQ_OP_READ, PID_A, 8, 8);  /* joins 0..8 and 16..24 */
	elv_serve_serially(fd, 10);
	for (pos = 0; pos < fd->nr_events && fd->events[pos].sector != 0; pos++)
		;
	ck_assert_uint_eq(fd->nr_events, 18);
	ck_assert_uint_eq(fd->events[pos].nr_sectors, 24);
	/* the first completion is at t0 + 110 ms, past the old request's 125 ms only at 130 */
	ck_assert_uint_eq(pos, 3);
	elv_finish_drained(fd, tb, 20);
}
END_TEST

/* Switching away while CFQ idles hands every queued request over, none lost or stuck. */
START_TEST(test_switch_away_while_idling)
{
	struct test_bio tb[5];
	struct fake_disk *fd = idling_disk(tb);

	read_at(fd, &tb[2], PID_B, 500010);
	write_at(fd, &tb[3], PID_A, 700000);
	ck_assert_uint_eq(fd->nr_events, 3); /* the write ended the idling: B's reads go */
	elv_assert_event(fd, 1, PID_B, 500000);
	elv_assert_event(fd, 2, PID_B, 500010);
	fake_complete_all(fd);
	fd->stopped = true;
	read_at(fd, &tb[4], PID_B, 300);
	ck_assert_int_eq(elv_try_switch(fd, "deadline"), 0);
	ck_assert_str_eq(fd->q->elevator->type->elevator_name, "deadline");
	elv_finish_drained(fd, tb, 5);
}
END_TEST

/* Switching to CFQ: the queued requests are sorted into per-process queues. */
START_TEST(test_switch_to_cfq)
{
	struct fake_disk *fd = fake_disk_new("noop");
	struct test_bio tb[4];

	fd->stopped = true;
	read_at(fd, &tb[0], PID_A, 300);
	read_at(fd, &tb[1], PID_B, 500000);
	read_at(fd, &tb[2], PID_A, 100);
	read_at(fd, &tb[3], PID_B, 400000);
	ck_assert_int_eq(elv_try_switch(fd, "cfq"), 0);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 2); /* A's queue, in sector order; B waits */
	elv_assert_event(fd, 0, PID_A, 100);
	elv_assert_event(fd, 1, PID_A, 300);
	elv_drain(fd);
	ck_assert_uint_eq(fd->nr_events, 4);
	elv_finish_drained(fd, tb, 4);
}
END_TEST

/*
 * Priorities.  Each test names the 2.6.23 cfq-iosched.c function whose
 * rule it pins (2.6.24's where said).
 */

/* cfq_prio_slice: the base slice, a fifth more per level above 4, a fifth less per level below. */
START_TEST(test_prio_slice_by_level)
{
	check_slice_end_prio(NULL, BE(0), 180);
	check_slice_end_prio(NULL, BE(7), 40);
	check_slice_end_prio(NULL, RT(4), 100);
	check_slice_end_prio("50", BE(2), 70);
	/* no class: best effort at the normal level */
	check_slice_end_prio(NULL, IOPRIO_PRIO_VALUE(IOPRIO_CLASS_NONE, 0), 100);
}
END_TEST

/* cfq_prio_to_maxrq: an async queue's requests per slice, 2 * slice_async_rq * (8 - level). */
START_TEST(test_async_budget_by_level)
{
	ck_assert_uint_eq(async_run_prio(NULL, BE(0)), 32);
	ck_assert_uint_eq(async_run_prio(NULL, BE(7)), 4);
	ck_assert_uint_eq(async_run_prio("1", BE(6)), 4);
}
END_TEST

/* cfq_service_tree_add: a real-time queue goes before best-effort ones queued earlier. */
START_TEST(test_rt_before_be)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, true, 1);
	struct test_bio tb[3];

	read_prio(fd, &tb[0], PID_A, BE(0), 1000);
	read_prio(fd, &tb[1], PID_A, BE(0), 1010);
	read_prio(fd, &tb[2], PID_B, RT(7), 500000);
	fake_start(fd);
	elv_serve_serially(fd, 1);
	elv_assert_event(fd, 0, PID_B, 500000);
	elv_assert_event(fd, 1, PID_A, 1000);
	elv_assert_event(fd, 2, PID_A, 1010);
	elv_finish_drained(fd, tb, 3);
}
END_TEST

/*
 * cfq_service_tree_add, cfq_get_next_queue: an idle-class queue goes after
 * best-effort ones, and only CFQ_IDLE_GRACE (100 ms) after their last
 * request completed, not when the best-effort queue's idling ends.
 */
START_TEST(test_idle_after_be_and_grace)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, true, 1);
	struct test_bio tb[2];
	uint64_t done;

	read_prio(fd, &tb[0], PID_A, IDLE, 1000);
	read_prio(fd, &tb[1], PID_B, BE(7), 500000);
	fake_start(fd);
	elv_assert_event(fd, 0, PID_B, 500000);
	elv_complete_one_after(fd, 1);
	done = elv_now(fd);
	ck_assert_uint_eq(fd->q->dispatch_at, done + 8 * MS); /* B's idle window */
	elv_wake(fd);
	ck_assert_uint_eq(fd->nr_events, 1);
	ck_assert_uint_eq(fd->q->dispatch_at, done + 100 * MS);
	fd->clock.virtual_ns = done + 100 * MS - 1;
	blk_run_queue(fd->q);
	ck_assert_uint_eq(fd->nr_events, 1);
	elv_wake(fd);
	ck_assert_uint_eq(fd->nr_events, 2);
	elv_assert_event(fd, 1, PID_A, 1000);
	elv_finish_drained(fd, tb, 2);
}
END_TEST

/* cfq_idle_class_timer: another completion while the idle class waits starts the grace again. */
START_TEST(test_idle_grace_restarts)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, false, 0);
	struct test_bio tb[3];
	uint64_t t0 = elv_now(fd);

	tunable_store_ok(fd, "slice_idle", "0");
	read_prio(fd, &tb[0], PID_B, BE(4), 500000);
	elv_complete_one_after(fd, 5); /* at 5 ms */
	read_prio(fd, &tb[1], PID_A, IDLE, 1000);
	ck_assert_uint_eq(fd->nr_events, 1);
	ck_assert_uint_eq(fd->q->dispatch_at, t0 + 105 * MS);
	fd->clock.virtual_ns = t0 + 50 * MS;
	read_prio(fd, &tb[2], PID_B, BE(4), 500008);
	ck_assert_uint_eq(fd->nr_events, 2);
	elv_complete_one_after(fd, 10); /* at 60 ms */
	fd->clock.virtual_ns = t0 + 105 * MS;
	blk_run_queue(fd->q);
	ck_assert_uint_eq(fd->nr_events, 2);
	ck_assert_uint_eq(fd->q->dispatch_at, t0 + 160 * MS);
	elv_wake(fd);
	ck_assert_uint_eq(fd->nr_events, 3);
	elv_assert_event(fd, 2, PID_A, 1000);
	elv_finish_drained(fd, tb, 3);
}
END_TEST

/* cfq_should_preempt: another class's request takes the disk from an idle-class queue at once. */
START_TEST(test_idle_preempted)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, false, 1);
	struct test_bio tb[4];

	for (unsigned int i = 0; i < 3; i++)
		read_prio(fd, &tb[i], PID_A, IDLE, 1000 + 10 * i);
	elv_assert_event(fd, 0, PID_A, 1000);
	read_prio(fd, &tb[3], PID_B, RT(4), 500000);
	elv_complete_one_after(fd, 1);
	elv_assert_event(fd, 1, PID_B, 500000);
	elv_finish_drained(fd, tb, 4);
}
END_TEST

/* cfq_should_preempt: a queue whose slice is over gives way to a new request at once. */
START_TEST(test_slice_used_preempted)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, false, 1);
	struct test_bio tb[5];

	for (unsigned int i = 0; i < 3; i++)
		read_at(fd, &tb[i], PID_A, 1000 + 10 * i);
	read_at(fd, &tb[3], PID_B, 500000);
	elv_complete_one_after(fd, 1); /* A's slice starts */
	elv_assert_event(fd, 1, PID_A, 1010);
	fd->clock.virtual_ns += 100 * MS;
	read_at(fd, &tb[4], 300, 700000); /* A's slice is over: this goes before B */
	elv_complete_one_after(fd, 0);
	elv_assert_event(fd, 2, 300, 700000);
	elv_finish_drained(fd, tb, 5);
}
END_TEST

/* cfq_should_preempt (2.6.23): a real-time request waits for a best-effort sync slice to end. */
START_TEST(test_rt_waits_for_be_slice)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, false, 1);
	struct test_bio tb[4];

	for (unsigned int i = 0; i < 3; i++)
		read_prio(fd, &tb[i], PID_A, BE(4), 1000 + 10 * i);
	read_prio(fd, &tb[3], PID_B, RT(0), 500000);
	elv_complete_one_after(fd, 1);
	elv_assert_event(fd, 1, PID_A, 1010);
	elv_finish_drained(fd, tb, 4);
}
END_TEST

/*
 * cfq_dispatch_requests, __cfq_dispatch_requests: an idle-class queue has
 * one request out while others wait and its slice ends after it; alone, it
 * has four out.
 */
START_TEST(test_idle_dispatch_limits)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, true, 0);
	struct test_bio tb[20];

	for (unsigned int i = 0; i < 10; i++) {
		read_prio(fd, &tb[i], PID_A, IDLE, 1000 + 10 * i);
		read_prio(fd, &tb[10 + i], PID_B, IDLE, 500000 + 10 * i);
	}
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 2);
	elv_assert_event(fd, 0, PID_A, 1000);
	elv_assert_event(fd, 1, PID_B, 500000);
	elv_finish_drained(fd, tb, 20);

	fd = elv_disk(ELEVATOR, true, 0);
	for (unsigned int i = 0; i < 10; i++)
		read_prio(fd, &tb[i], PID_A, IDLE, 1000 + 10 * i);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 4);
	elv_finish_drained(fd, tb, 10);
}
END_TEST

/* cfq_init_prio_data: the idle class has no idle window: with its request out, the next goes. */
START_TEST(test_idle_class_does_not_idle)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, false, 0);
	struct test_bio tb[2];

	read_prio(fd, &tb[0], PID_A, IDLE, 1000);
	read_prio(fd, &tb[1], PID_B, IDLE, 500000);
	ck_assert_uint_eq(fd->nr_events, 2);
	elv_finish_drained(fd, tb, 2);
}
END_TEST

/*
 * cfq_completed_request: only other classes' completions hold the idle
 * class back; after an idle request the next idle queue goes at once.
 */
START_TEST(test_idle_completion_no_grace)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, false, 1);
	struct test_bio tb[2];

	read_prio(fd, &tb[0], PID_A, IDLE, 1000);
	read_prio(fd, &tb[1], PID_B, IDLE, 500000);
	ck_assert_uint_eq(fd->nr_events, 1);
	elv_complete_one_after(fd, 1);
	ck_assert_uint_eq(fd->nr_events, 2);
	elv_assert_event(fd, 1, PID_B, 500000);
	elv_finish_drained(fd, tb, 2);
}
END_TEST

/*
 * cfq_should_preempt: an idle-class request never takes the disk, not even
 * from an async queue: the best-effort async queue keeps its slice (and
 * its budget of 16) while another async queue waits.
 */
START_TEST(test_idle_never_preempts)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, true, 0);
	struct test_bio tb[26];

	for (unsigned int i = 0; i < 20; i++)
		submit_prio(fd, &tb[i], REQ_OP_WRITE, PID_A, BE(4), 1000 + 10 * i, 1);
	for (unsigned int i = 0; i < 5; i++)
		submit_prio(fd, &tb[20 + i], REQ_OP_WRITE, PID_B, BE(5), 500000 + 10 * i, 1);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 8); /* quantum */
	read_prio(fd, &tb[25], 300, IDLE, 900000);
	fake_complete_batch(fd);
	/* A's budget, then the other async queue's five */
	ck_assert_uint_eq(fd->nr_events, 21);
	for (unsigned int i = 0; i < 21; i++)
		ck_assert_int_eq(fd->events[i].pid, i < 16 ? PID_A : PID_B);
	elv_finish_drained(fd, tb, 26);
}
END_TEST

/*
 * Not a kernel rule: while the active queue waits for its own request in
 * the driver, no wake-up is asked for (a completion runs the queue), least
 * of all one in the past that the daemon would spin on; the idle class's
 * grace is not a reason when no idle queue waits for it.
 */
START_TEST(test_no_wakeup_while_own_request_out)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, false, 0);
	struct test_bio tb[3];

	tunable_store_ok(fd, "slice_sync", "1000");
	read_at(fd, &tb[0], PID_A, 100);
	elv_complete_one_after(fd, 1); /* A's slice starts; A idles */
	read_at(fd, &tb[1], PID_B, 500000);
	fd->clock.virtual_ns += 5 * MS;
	read_at(fd, &tb[2], PID_A, 108);
	ck_assert_uint_eq(fd->nr_events, 2);
	fd->clock.virtual_ns += 200 * MS;
	blk_run_queue(fd->q);
	ck_assert_uint_eq(fd->nr_events, 2);
	ck_assert_msg(!fd->q->dispatch_at || fd->q->dispatch_at > elv_now(fd),
		      "a wake-up %lld ns from now", (long long)(fd->q->dispatch_at - elv_now(fd)));
	elv_finish_drained(fd, tb, 3);
}
END_TEST

/* cfq_init_prio_data: a process's sync queue takes the priority its newest request carries. */
START_TEST(test_queue_prio_from_requests)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, true, 1);
	struct test_bio tb[3];

	read_prio(fd, &tb[0], PID_A, BE(4), 1000);
	read_prio(fd, &tb[1], PID_B, BE(4), 500000);
	read_prio(fd, &tb[2], PID_B, RT(4), 500010); /* ionice -p B */
	fake_start(fd);
	ck_assert_int_eq(fd->events[0].pid, PID_B);
	elv_finish_drained(fd, tb, 3);
}
END_TEST

/* cfq_get_queue (2.6.24's cfq_async_queue_prio): an async queue per class and level. */
START_TEST(test_async_queue_per_class_level)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, true, 1);
	struct test_bio tb[4];

	submit_prio(fd, &tb[0], REQ_OP_WRITE, PID_A, BE(4), 1000, 1);
	submit_prio(fd, &tb[1], REQ_OP_WRITE, PID_A, BE(4), 1010, 1);
	submit_prio(fd, &tb[2], REQ_OP_WRITE, PID_A, RT(4), 2000, 1);
	submit_prio(fd, &tb[3], REQ_OP_WRITE, PID_A, RT(4), 2010, 1);
	fake_start(fd);
	elv_serve_serially(fd, 1);
	elv_assert_event(fd, 0, PID_A, 2000);
	ck_assert_uint_eq(fd->events[0].ioprio, RT(4));
	elv_assert_event(fd, 1, PID_A, 2010);
	elv_assert_event(fd, 2, PID_A, 1000);
	elv_finish_drained(fd, tb, 4);
}
END_TEST

/* ---- think time and seekiness (scenarios on the models, in virtual time) ---- */

#define SC_READER 500
#define SC_OTHER 600
#define SC_RUN_NS (4000 * MS)

/*
 * A sequential reader (four 64 KiB reads out at a time) beside another
 * process that reads 4 KiB at a time, one out, thinking think_ns after
 * each, stride sectors apart: the reader's sectors in SC_RUN_NS under cfq
 * with slice_idle (ms) on model, the other's reads in *other_reads.
 */
static uint64_t reader_beside(const char *model, const char *slice_idle, uint64_t think_ns,
			      uint64_t stride, unsigned int other_sectors, uint64_t *other_reads)
{
	struct elv_sim *s = elv_sim_new(ELEVATOR, model);
	struct elv_sim_proc *reader, *other;
	uint64_t sectors;

	/*
	 * Flash known not to queue, where the process's history alone decides
	 * (flash that queues, or is not known not to, is never idled for:
	 * test_queueing_flash_not_idled); five requests are never out here,
	 * too few to learn it.
	 */
	if (!strncmp(model, "ssd", 3))
		((struct cfq_data *)s->fd->q->elevator->elevator_data)->hw_tag = 0;
	tunable_store_ok(s->fd, "slice_idle", slice_idle);
	reader = elv_sim_add(s, SC_READER, 0, 128, 4, 0, 0);
	other = elv_sim_add(s, SC_OTHER, 4000000, other_sectors, 1, think_ns, 0);
	other->stride = stride;
	elv_sim_run(s, SC_RUN_NS);
	sectors = reader->sectors_done;
	*other_reads = other->reads_done;
	elv_sim_free(s);
	return sectors;
}

/*
 * The reader gets what it gets with slice_idle=0, within 3%, and the
 * other, reading sectors at a time, is served.
 */
static void check_not_idled_for(const char *model, uint64_t think_ns, uint64_t stride,
				unsigned int sectors)
{
	uint64_t o_idle, o_none;
	uint64_t idle = reader_beside(model, "8", think_ns, stride, sectors, &o_idle);
	uint64_t none = reader_beside(model, "0", think_ns, stride, sectors, &o_none);

	fprintf(stderr, "cfq %s: reader %llu sectors beside %llu reads, %llu beside %llu %s\n",
		model, (unsigned long long)idle, (unsigned long long)o_idle,
		(unsigned long long)none, (unsigned long long)o_none, "with slice_idle=0");
	ck_assert_uint_ge(o_idle, 20);
	ck_assert_uint_ge(o_none, 20);
	ck_assert_msg(idle * 100 >= none * 97 && idle * 100 <= none * 103,
		      "%s: reader %llu sectors, %llu with slice_idle=0", model,
		      (unsigned long long)idle, (unsigned long long)none);
}

/*
 * cfq_update_io_thinktime, cfq_update_idle_window: a process that reads
 * 4 KiB and thinks 20 ms (capped at 2 * slice_idle, past slice_idle once
 * three samples are in) has its idle window closed, so its queue's slice
 * ends when its read is done instead of idling 8 ms for the next, and the
 * sequential reader beside it gets what it gets with slice_idle=0.
 */
START_TEST(test_long_thinker_not_idled_hdd)
{
	check_not_idled_for("hdd", 20 * MS, 8, 8);
}
END_TEST

/* On flash a read of 4 KiB is a seek: 16 KiB ones leave the think time alone to decide. */
START_TEST(test_long_thinker_not_idled_ssd)
{
	check_not_idled_for("ssd", 20 * MS, 32, 32);
}
END_TEST

/*
 * cfq_update_io_seektime, CFQQ_SEEKY: a process reading 4 KiB at random
 * places, one at a time with no think time, has more than 4 seeks in its
 * last 32 requests and never 4 requests queued (not deep), so its idle
 * window closes: it no longer keeps the disk for its whole slice doing
 * seeks, and the sequential reader gets what it gets with slice_idle=0.
 */
START_TEST(test_seeky_not_idled_hdd)
{
	check_not_idled_for("hdd", 0, 1000003, 8);
}
END_TEST

START_TEST(test_seeky_not_idled_ssd)
{
	check_not_idled_for("ssd", 0, 1000003, 8);
}
END_TEST

/*
 * A reads eight times, one at a time, sectors each, on flash (queue/
 * rotational 0) or not: the first at sector 1000, then seeks reads
 * jumping 10000 sectors and the rest next to the last; then B waits while
 * A's last read completes.  Whether the disk idled for A.
 */
static bool idles_for_a(bool flash, int hw_tag, unsigned int seeks, unsigned int sectors)
{
	struct fake_disk *fd = elv_disk(ELEVATOR, true, 0);
	struct test_bio tb[8], b;
	sector_t pos = 1000;
	bool idled;

	fd->q->limits.rotational = !flash;
	/* whether the disk queues, as if learned (one request out never teaches it) */
	((struct cfq_data *)fd->q->elevator->elevator_data)->hw_tag = hw_tag;
	elv_start_serial(fd);
	for (unsigned int i = 0; i < 8; i++) {
		if (i)
			pos += i <= seeks ? 10000 : sectors;
		submit(fd, &tb[i], REQ_OP_READ, PID_A, pos, sectors);
		if (i == 7)
			read_at(fd, &b, PID_B, 4000000);
		elv_complete_one_after(fd, 1);
	}
	idled = fd->nr_dispatched == 0;
	elv_finish_drained(fd, tb, 8);
	elv_assert_ended(&b, 1);
	return idled;
}

/*
 * The seek rule's bounds on a rotating disk: the first read is no seek
 * (nothing came before); with 4 jumps of more than 800 sectors in A's last
 * 32 requests the disk idles slice_idle for A, with 5 B goes at once.
 */
static bool idles_after_seeks(unsigned int seeks)
{
	return idles_for_a(false, -1, seeks, 8);
}

START_TEST(test_seeky_bounds)
{
	ck_assert(idles_after_seeks(4));
	ck_assert(!idles_after_seeks(5));
}
END_TEST

/*
 * cfq_update_io_seektime on flash known not to queue: a request under 32
 * sectors is a seek wherever it lies, so a process of small sequential
 * reads is seeky there and not idled for; one of larger reads is, as on a
 * rotating disk.
 */
START_TEST(test_seek_rule_flash)
{
	ck_assert(idles_for_a(false, 0, 0, 8));
	ck_assert(!idles_for_a(true, 0, 0, 8));
	ck_assert(idles_for_a(true, 0, 0, 32));
}
END_TEST

/*
 * cfq_should_idle, cfq_arm_slice_timer: flash that queues, or is not yet
 * known not to (hw_tag -1, as Linux starts), is never idled for, the
 * larger reads' process neither; a rotating disk that queues still is.
 */
START_TEST(test_queueing_flash_never_idles)
{
	ck_assert(!idles_for_a(true, 1, 0, 32));
	ck_assert(!idles_for_a(true, -1, 0, 32));
	ck_assert(idles_for_a(false, 1, 0, 32));
}
END_TEST

/*
 * cfq_update_hw_tag: readers keeping eight reads out each load the disk;
 * after 50 completions under that load cfq knows whether the disk queues:
 * the ssd model (32 at once) does, the same flash taking one at a time
 * does not, and neither does the hdd model (one at a time).  Before any
 * I/O it is not known (-1).
 */
static int hw_tag_learned(const char *model, unsigned int *depth)
{
	struct elv_sim *s = elv_sim_new(ELEVATOR, model);
	const struct cfq_data *cfqd = s->fd->q->elevator->elevator_data;
	int hw_tag;

	ck_assert_int_eq(cfqd->hw_tag, -1);
	for (unsigned int i = 0; i < 4; i++)
		elv_sim_add(s, SC_READER + (pid_t)i, (sector_t)i * 1000000, 128, 8, 0, 0);
	elv_sim_run(s, 2000 * MS);
	hw_tag = cfqd->hw_tag;
	*depth = cfqd->hw_tag_est_depth;
	fprintf(stderr, "cfq %s: hw_tag %d, deepest %u\n", model, hw_tag, *depth);
	elv_sim_free(s);
	return hw_tag;
}

START_TEST(test_hw_tag_learned)
{
	unsigned int depth;

	ck_assert_int_eq(hw_tag_learned("ssd", &depth), 1);
	ck_assert_uint_ge(depth, CFQ_HW_QUEUE_MIN);
	ck_assert_int_eq(hw_tag_learned("ssd:depth=1", &depth), 0);
	ck_assert_uint_eq(depth, 1);
	ck_assert_int_eq(hw_tag_learned("hdd", &depth), 0);
}
END_TEST

/*
 * Eight sequential readers of 64 KiB, one read out each, far apart, for
 * 2 s on model with slice_idle (ms): the sectors they read together.
 */
static uint64_t eight_readers(const char *model, const char *slice_idle)
{
	struct elv_sim *s = elv_sim_new(ELEVATOR, model);
	struct elv_sim_proc *p[8];
	uint64_t sectors = 0;

	tunable_store_ok(s->fd, "slice_idle", slice_idle);
	for (unsigned int i = 0; i < 8; i++)
		p[i] = elv_sim_add(s, SC_READER + (pid_t)i, (sector_t)i * 1000000, 128, 1, 0, 0);
	elv_sim_run(s, 2000 * MS);
	for (unsigned int i = 0; i < 8; i++)
		sectors += p[i]->sectors_done;
	elv_sim_free(s);
	return sectors;
}

/*
 * The scenario of cfq_should_idle's rule: on the ssd model, which queues,
 * eight sequential readers of one read at a time read together what they
 * read with slice_idle 0 (within 3%), each beside the others; idling for
 * each in turn, as on a rotating disk, would leave one read out at a time.
 */
START_TEST(test_queueing_flash_not_idled)
{
	uint64_t idle = eight_readers("ssd", "8"), none = eight_readers("ssd", "0");

	fprintf(stderr, "cfq ssd: eight readers %llu sectors, %llu with slice_idle=0\n",
		(unsigned long long)idle, (unsigned long long)none);
	ck_assert_msg(idle * 100 >= none * 97, "eight readers: %llu sectors, %llu with slice_idle=0",
		      (unsigned long long)idle, (unsigned long long)none);
}
END_TEST

/* ---- groups ---- */

#define MS_NS 1000000ull
#define GROUP_RUN_NS (10000 * MS_NS)

/* /a's io.weight is 100, /b's 300. */
static unsigned int test_cgroup_weight(void *priv, const char *path)
{
	(void)priv;
	return !strcmp(path, "/b") ? 300 : 100;
}

static unsigned int test_no_cgroup_weight(void *priv, const char *path)
{
	(void)priv, (void)path;
	return 0;
}

/*
 * The read-only groups file lists the groups the requests' cgroups made,
 * /b (made last) first, each with its weight and its two queues; a write
 * to it is refused.
 */
static void assert_groups_file(struct elevator_queue *e, unsigned int b_weight)
{
	const struct elv_tunable *t = e->type->tunables;
	char text[256], want[64];
	int n;

	while (t->name && strcmp(t->name, "groups"))
		t++;
	ck_assert_ptr_nonnull(t->name);
	n = elv_tunable_text(e, t, text, sizeof(text));
	ck_assert_int_ge(n, 0);
	text[n] = '\0';
	snprintf(want, sizeof(want), "/b %u 2\n/a 100 2\n", b_weight);
	ck_assert_str_eq(text, want);
	ck_assert_int_eq(elv_tunable_store(e, "groups", "/a 1"), -EACCES);
}

/*
 * Two groups, each with two sequential readers (64 KiB, two out at a
 * time) far apart, on the hdd model for GROUP_RUN_NS: the sectors /b's
 * readers got over /a's, times 1000.  weight_of: where the groups'
 * weights come from; tunable: written to group_weights first.
 */
static uint64_t group_ratio(unsigned int (*weight_of)(void *, const char *), const char *tunable)
{
	const struct elv_cgroup_ops ops = { weight_of, NULL };
	struct elv_sim *s;
	struct elv_sim_proc *p[4];
	uint64_t a, b;

	elv_cgroup_override(&ops);
	s = elv_sim_new(ELEVATOR, "hdd");
	elv_cgroup_override(NULL);
	if (tunable)
		ck_assert_int_eq(elv_tunable_store(s->fd->q->elevator, "group_weights", tunable), 0);
	for (unsigned int i = 0; i < 4; i++) {
		p[i] = elv_sim_add(s, (i < 2 ? 4000 : 4100) + i % 2, (sector_t)i * 1000000, 128, 2, 0,
				   0);
		/* the cgroup on the request, as the frontend resolves it from the caller */
		p[i]->blkcg = elv_sim_cgroup(s, i < 2 ? "/a" : "/b");
	}
	elv_sim_run(s, GROUP_RUN_NS);
	a = p[0]->sectors_done + p[1]->sectors_done;
	b = p[2]->sectors_done + p[3]->sectors_done;
	fprintf(stderr, "cfq: group /a %llu sectors, /b %llu\n", (unsigned long long)a,
		(unsigned long long)b);
	ck_assert_uint_gt(a, 0);
	assert_groups_file(s->fd->q->elevator, tunable ? 300 : weight_of(NULL, "/b") ? 300 : 100);
	elv_sim_free(s);
	return b * 1000 / a;
}

/*
 * cfq_group_served, cfq_get_next_cfqg: groups of io.weight 100 and 300
 * (or the group_weights tunable) with the same readers get 1:3 of the
 * disk within 10%, slice by slice; 1:1 with equal weights.  Without
 * groups the four queues take slices in turn, 1:1.
 */
START_TEST(test_groups_share_by_weight)
{
	uint64_t r = group_ratio(test_cgroup_weight, NULL);

	ck_assert_msg(r >= 2700 && r <= 3300, "/b got %llu/1000 of /a's", (unsigned long long)r);
	r = group_ratio(test_no_cgroup_weight, "/b 300");
	ck_assert_msg(r >= 2700 && r <= 3300, "tunable: /b got %llu/1000 of /a's",
		      (unsigned long long)r);
	r = group_ratio(test_no_cgroup_weight, NULL);
	ck_assert_msg(r >= 900 && r <= 1100, "same weights: /b got %llu/1000 of /a's",
		      (unsigned long long)r);
}
END_TEST

/* The group_weights file: set, list, remove; refuse what is not "PATH WEIGHT" (1..10000). */
START_TEST(test_group_weights_tunable)
{
	static const char *const bad[] = { "", "/a", "a 10", "/a 10001", "/a 10 20", "/a x" };
	struct fake_disk *fd = elv_stopped_disk(ELEVATOR);
	struct elevator_queue *e = fd->q->elevator;
	const struct elv_tunable *t = e->type->tunables;
	char text[256];
	int n;

	while (t->name && strcmp(t->name, "group_weights"))
		t++;
	ck_assert_ptr_nonnull(t->name);
	ck_assert_int_eq(elv_tunable_store(e, "group_weights", "/a 10000\n"), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_int_eq(elv_tunable_store(e, "group_weights", bad[i]), -EINVAL);
	n = elv_tunable_text(e, t, text, sizeof(text));
	ck_assert_int_ge(n, 0);
	text[n] = '\0';
	ck_assert_str_eq(text, "/a 10000\n");
	ck_assert_int_eq(elv_tunable_store(e, "group_weights", "/a default"), 0);
	n = elv_tunable_text(e, t, text, sizeof(text));
	ck_assert_int_eq(n, 0);
	fake_disk_free(fd);
}
END_TEST

static const struct tunable_case tunables[] = {
	{ "quantum", 8, 1, INT_MAX },
	{ "slice_sync", 100, 1, INT_MAX },
	{ "slice_async", 40, 1, INT_MAX },
	{ "slice_async_rq", 2, 1, INT_MAX },
	{ "slice_idle", 8, 0, INT_MAX },
	{ "fifo_expire_sync", 125, 1, INT_MAX },
	{ "fifo_expire_async", 250, 1, INT_MAX },
	{ "back_seek_max", 16384, 0, INT_MAX },
	{ "back_seek_penalty", 2, 1, INT_MAX },
};

#define NR_TUNABLES (sizeof(tunables) / sizeof(tunables[0]))

static Suite *cfq_suite(void)
{
	Suite *s = suite_create("cfq");
	TCase *groups = tcase_create("groups");
	TCase *fair = tcase_create("fairness");
	TCase *order = tcase_create("order");
	TCase *idle = tcase_create("idling");
	TCase *merge = tcase_create("merge");
	TCase *prio = tcase_create("prio");
	TCase *tune;

	tcase_add_test(fair, test_fairness_two_pids_in_slices);
	tcase_add_test(fair, test_slice_expiry_default);
	tcase_add_test(fair, test_slice_sync_tunable_in_ms);
	tcase_add_test(fair, test_slice_async_expiry);
	tcase_add_test(fair, test_async_slice_async_rq);
	tcase_add_test(fair, test_quantum_limit);
	tcase_add_test(fair, test_sync_preempts_async);
	tcase_add_test(fair, test_async_waits_for_sync_in_flight);
	suite_add_tcase(s, fair);

	tcase_add_test(order, test_sector_order_within_queue);
	tcase_add_test(order, test_back_seek_penalty_and_max);
	tcase_add_test(order, test_fifo_expire_sync);
	tcase_add_test(order, test_fifo_expire_async);
	tcase_add_test(order, test_one_fifo_rescue_per_slice);
	suite_add_tcase(s, order);

	tcase_add_test(idle, test_idle_same_pid_goes_first);
	tcase_add_test(idle, test_idle_expires_after_slice_idle);
	tcase_add_test(idle, test_slice_idle_tunable);
	tcase_add_test(idle, test_no_idle_with_requests_in_driver);
	tcase_add_test(idle, test_async_request_ends_idle);
	tcase_add_test(idle, test_seeky_bounds);
	tcase_add_test(idle, test_seek_rule_flash);
	tcase_add_test(idle, test_queueing_flash_never_idles);
	tcase_add_test(idle, test_hw_tag_learned);
	tcase_add_test(idle, test_queueing_flash_not_idled);
	tcase_set_timeout(idle, 120);
	tcase_add_test(idle, test_long_thinker_not_idled_hdd);
	tcase_add_test(idle, test_long_thinker_not_idled_ssd);
	tcase_add_test(idle, test_seeky_not_idled_hdd);
	tcase_add_test(idle, test_seeky_not_idled_ssd);
	suite_add_tcase(s, idle);

	tcase_add_test(merge, test_front_merge_own_queue);
	tcase_add_test(merge, test_front_merge_not_across_processes);
	tcase_add_test(merge, test_requests_merged_across_queues);
	tcase_add_test(merge, test_merged_requests_keep_oldest_fifo_place);
	tcase_add_test(merge, test_switch_away_while_idling);
	tcase_add_test(merge, test_switch_to_cfq);
	tcase_add_test(prio, test_prio_slice_by_level);
	tcase_add_test(prio, test_async_budget_by_level);
	tcase_add_test(prio, test_rt_before_be);
	tcase_add_test(prio, test_idle_after_be_and_grace);
	tcase_add_test(prio, test_idle_grace_restarts);
	tcase_add_test(prio, test_idle_preempted);
	tcase_add_test(prio, test_slice_used_preempted);
	tcase_add_test(prio, test_rt_waits_for_be_slice);
	tcase_add_test(prio, test_idle_dispatch_limits);
	tcase_add_test(prio, test_idle_class_does_not_idle);
	tcase_add_test(prio, test_idle_completion_no_grace);
	tcase_add_test(prio, test_idle_never_preempts);
	tcase_add_test(prio, test_no_wakeup_while_own_request_out);
	tcase_add_test(prio, test_queue_prio_from_requests);
	tcase_add_test(prio, test_async_queue_per_class_level);
	suite_add_tcase(s, merge);
	suite_add_tcase(s, prio);

	tcase_set_timeout(groups, 120);
	tcase_add_test(groups, test_groups_share_by_weight);
	tcase_add_test(groups, test_group_weights_tunable);
	suite_add_tcase(s, groups);
	tune = tunable_tests("cfq", tunables, NR_TUNABLES);
	suite_add_tcase(s, tune);
	return s;
}

int main(void)
{
	return fake_run_suite(cfq_suite());
}
