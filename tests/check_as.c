/* SPDX-License-Identifier: BSD-3-Clause */
/* check_as.c - the anticipatory elevator: waiting for a reader's next read, batches, FIFOs. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "elv_harness.h"
#include "tunable_test.h"

#define ANTIC_MS 6 /* antic_expire's default */

#define PID_A 100 /* the reader waited for */
#define PID_B 200 /* a reader far away */
#define PID_C 300 /* a reader close to A */
#define FAR 1000000 /* sectors: far beyond any "close" */

/* Virtual time of each dispatch, by event index. */
static uint64_t dispatch_ns[FAKE_MAX_EVENTS];

static void record_time(struct fake_disk *fd, struct request *rq)
{
	(void)rq;
	dispatch_ns[fd->nr_events - 1] = fd->clock.virtual_ns;
}

static struct fake_disk *new_disk(bool stopped, unsigned int depth)
{
	struct fake_disk *fd = elv_disk("as", stopped, depth);

	fd->on_dispatch = record_time;
	return fd;
}

static void submit(struct fake_disk *fd, struct test_bio *tb, enum req_op op, sector_t sector,
		   unsigned int sectors, pid_t pid)
{
	elv_submit_from(fd, tb, op, sector, sectors, pid, IOPRIO_DEFAULT);
}

static void read8(struct fake_disk *fd, struct test_bio *tb, sector_t sector, pid_t pid)
{
	submit(fd, tb, REQ_OP_READ, sector, 8, pid);
}

static void advance(struct fake_disk *fd, uint64_t ns)
{
	fd->clock.virtual_ns += ns;
}

/* Every request to its end, one at a time as the elevator hands them out. */
static void finish(struct fake_disk *fd, struct test_bio *tb, unsigned int n)
{
	fd->stopped = false;
	elv_drain_stepped(fd, 0);
	elv_assert_ended(tb, n);
	fake_disk_free(fd);
}

/*
 * A reads 8 sectors at 1000 and it completes; then B queues a read FAR
 * away.  Returns when A's read completed.
 */
static uint64_t a_done_b_queued(struct fake_disk *fd, struct test_bio *tb)
{
	uint64_t done;

	read8(fd, &tb[0], 1000, PID_A);
	elv_assert_event(fd, 0, PID_A, 1000);
	elv_complete_one(fd);
	done = fd->clock.virtual_ns;
	advance(fd, 1 * MS);
	read8(fd, &tb[1], FAR, PID_B);
	return done;
}

/* ---- sector order ---- */

/* as_dispatch_request, as_find_next_rq: a read batch starts at the oldest request and goes up. */
START_TEST(test_batch_ascending_sectors)
{
	static const sector_t in[] = { 10, 50, 30, 90, 70 };
	static const sector_t out[] = { 10, 30, 50, 70, 90 };
	struct fake_disk *fd = new_disk(true, 0);
	struct test_bio tb[5];

	for (unsigned int i = 0; i < 5; i++)
		submit(fd, &tb[i], REQ_OP_READ, in[i], 1, 1);
	ck_assert_uint_eq(fd->nr_events, 0);
	fake_start(fd);
	elv_assert_order(fd, out, 5);
	finish(fd, tb, 5);
}
END_TEST

/* as_choose_req: with nothing left ahead, short backward seeks come before the lowest. */
START_TEST(test_batch_then_short_seeks_back)
{
	static const sector_t in[] = { 50, 10, 70, 30, 90, 60 };
	static const sector_t out[] = { 50, 60, 70, 90, 30, 10 };
	struct fake_disk *fd = new_disk(true, 0);
	struct test_bio tb[6];

	for (unsigned int i = 0; i < 6; i++)
		submit(fd, &tb[i], REQ_OP_READ, in[i], 1, 1);
	fake_start(fd);
	elv_assert_order(fd, out, 6);
	finish(fd, tb, 6);
}
END_TEST

/*
 * The head is left at head (a read of 8 sectors ending there); which of a
 * and b (one sector each, queued meanwhile) goes next?
 */
static sector_t next_after(sector_t head, sector_t a, sector_t b)
{
	struct fake_disk *fd = new_disk(false, 1);
	struct test_bio tb[3];
	sector_t next;

	read8(fd, &tb[0], head - 8, 1);
	submit(fd, &tb[1], REQ_OP_READ, a, 1, 1);
	submit(fd, &tb[2], REQ_OP_READ, b, 1, 1);
	ck_assert_uint_eq(fd->nr_events, 1);
	elv_complete_one(fd);
	ck_assert_uint_eq(fd->nr_events, 2);
	next = fd->events[1].sector;
	finish(fd, tb, 3);
	return next;
}

/*
 * as_choose_req: a backward seek costs twice a forward one (BACK_PENALTY),
 * and only up to MAXBACK (2^20 sectors); a tie goes ahead.
 */
START_TEST(test_backward_seek_rules)
{
	ck_assert_uint_eq(next_after(1000, 1100, 960), 960);  /* 40 back (80) beats 100 ahead */
	ck_assert_uint_eq(next_after(1000, 1060, 960), 1060); /* 60 ahead beats 40 back (80) */
	ck_assert_uint_eq(next_after(1000, 1080, 960), 1080); /* a tie goes ahead */
	/* 1.1M back (2.2M) would beat 3M ahead, but is too far back */
	ck_assert_uint_eq(next_after(3000000, 6000000, 1900000), 6000000);
	/* nothing ahead, nothing near behind: the sweep restarts at the lowest */
	ck_assert_uint_eq(next_after(5000000, 3000000, 100), 100);
}
END_TEST

/* ---- FIFO expiry ---- */

/*
 * as_fifo_expired: S (8 sectors at 492) goes out at once; L (sector 0, behind the head) and
 * above requests from 510 up queue behind it.  One request at a time, 10 ms
 * each: where does L go?  It is passed by in sector order until, at the
 * first look at the FIFO after it expired, it goes first.  The FIFO is
 * looked at once per expire interval, counted from the batch's start.
 */
static unsigned int expired_pos(enum req_op op, const char *expire_ms, unsigned int above)
{
	struct fake_disk *fd = new_disk(false, 1);
	struct test_bio tb[64];
	unsigned int pos = 0;

	if (expire_ms)
		tunable_store_ok(fd, op == REQ_OP_READ ? "read_expire" : "write_expire", expire_ms);
	submit(fd, &tb[0], op, 492, 8, 1);
	submit(fd, &tb[1], op, 0, 1, 1);
	for (unsigned int i = 0; i < above; i++)
		submit(fd, &tb[2 + i], op, 510 + 10 * i, 1, 1);
	for (unsigned int i = 1; i < above + 2; i++) {
		advance(fd, 10 * MS);
		elv_complete_one(fd);
		if (fd->events[i].sector == 0)
			pos = i;
	}
	ck_assert_uint_eq(fd->nr_events, above + 2);
	/* the run goes on upward from L */
	if (pos && pos < above + 1)
		ck_assert_uint_eq(fd->events[pos + 1].sector, 510 + 10 * (pos - 1));
	finish(fd, tb, above + 2);
	return pos;
}

START_TEST(test_read_fifo_expiry)
{
	ck_assert_uint_eq(expired_pos(REQ_OP_READ, NULL, 20), 13); /* 125 ms: first look at 130 */
	ck_assert_uint_eq(expired_pos(REQ_OP_READ, "50", 20), 5);
	ck_assert_uint_eq(expired_pos(REQ_OP_READ, "1000", 20), 21); /* last, in sector order */
}
END_TEST

START_TEST(test_write_fifo_expiry)
{
	ck_assert_uint_eq(expired_pos(REQ_OP_WRITE, NULL, 30), 25); /* 250 ms */
	ck_assert_uint_eq(expired_pos(REQ_OP_WRITE, "100", 30), 10);
	ck_assert_uint_eq(expired_pos(REQ_OP_WRITE, "1000", 30), 31);
}
END_TEST

/*
 * as_fifo_expired's rate limit (last_check_fifo): the FIFO is looked at
 * once per read_expire (125 ms) from the batch's
 * start, not at every dispatch, so that expired requests do not turn the
 * sweep into a seek storm.  S goes out at 0; L (the oldest queued, behind
 * the head) and the run above come at 50 ms, so L expires at 175 ms.  The
 * look at 130 ms finds L young; the next is due at 255 ms.
 */
START_TEST(test_fifo_looked_at_once_per_interval)
{
	struct fake_disk *fd = new_disk(false, 1);
	uint64_t t0 = fd->clock.virtual_ns;
	struct test_bio tb[32];
	unsigned int pos = 0;

	submit(fd, &tb[0], REQ_OP_READ, 492, 8, 1);
	advance(fd, 50 * MS);
	submit(fd, &tb[1], REQ_OP_READ, 0, 1, 1);
	for (unsigned int i = 0; i < 30; i++)
		submit(fd, &tb[2 + i], REQ_OP_READ, 510 + 10 * i, 1, 1);
	for (unsigned int i = 1; i < 32; i++) {
		advance(fd, 10 * MS);
		elv_complete_one(fd);
		if (fd->events[i].sector == 0)
			pos = i;
	}
	ck_assert_uint_eq(pos, 21);
	ck_assert_uint_eq(dispatch_ns[pos] - t0, 260 * MS);
	finish(fd, tb, 32);
}
END_TEST

/* ---- batches ---- */

/* Lengths of the runs of one direction in the dispatch order. */
static unsigned int runs(const struct fake_disk *fd, unsigned int *len, unsigned int max)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < fd->nr_events; i++) {
		if (!i || fd->events[i].op != fd->events[i - 1].op) {
			ck_assert_uint_lt(n, max);
			len[n++] = 0;
		}
		len[n - 1]++;
	}
	return n;
}

/*
 * reads and writes all queued at once, one request out at a time, 10 ms
 * each: a read batch first, then batches alternate as they expire.
 */
static struct fake_disk *run_batches(struct test_bio *tb, unsigned int reads, unsigned int writes,
				     const char *read_batch, const char *write_batch)
{
	struct fake_disk *fd = new_disk(true, 1);

	if (read_batch)
		tunable_store_ok(fd, "read_batch_expire", read_batch);
	if (write_batch)
		tunable_store_ok(fd, "write_batch_expire", write_batch);
	for (unsigned int i = 0; i < writes; i++)
		submit(fd, &tb[i], REQ_OP_WRITE, 100000 + 10 * i, 1, 1);
	for (unsigned int i = 0; i < reads; i++)
		submit(fd, &tb[writes + i], REQ_OP_READ, 10 * i, 1, 2);
	fake_start(fd);
	elv_drain_stepped(fd, 10 * MS);
	return fd;
}

/*
 * as_batch_expired, as_dispatch_request: reads are preferred (500 ms
 * batches against 125 ms) yet writes are not
 * starved: each read batch gives way once it expired.  After the last read
 * the writes wait antic_expire, in case the reader reads again.
 */
START_TEST(test_reads_preferred_writes_not_starved)
{
	static const unsigned int want[] = { 50, 13, 50, 13 };
	struct test_bio tb[126];
	struct fake_disk *fd = run_batches(tb, 100, 26, NULL, NULL);
	unsigned int len[8], n = runs(fd, len, 8);
	uint64_t t0 = dispatch_ns[0];

	ck_assert_uint_eq(n, 4);
	for (unsigned int i = 0; i < n; i++)
		ck_assert_uint_eq(len[i], want[i]);
	ck_assert_int_eq(fd->events[0].op, REQ_OP_READ);
	ck_assert_uint_eq(dispatch_ns[50] - t0, 500 * MS);  /* the read batch expired */
	ck_assert_uint_eq(dispatch_ns[63] - t0, 630 * MS);  /* the write batch (125) expired */
	ck_assert_uint_eq(dispatch_ns[113] - t0, (1130 + ANTIC_MS) * MS);
	finish(fd, tb, 126);
}
END_TEST

START_TEST(test_batch_expire_tunables_honoured)
{
	static const unsigned int want[] = { 10, 5, 10, 5, 10, 5 };
	struct test_bio tb[45];
	struct fake_disk *fd = run_batches(tb, 30, 15, "100", "50");
	unsigned int len[8], n = runs(fd, len, 8);

	ck_assert_uint_eq(n, 6);
	for (unsigned int i = 0; i < n; i++)
		ck_assert_uint_eq(len[i], want[i]);
	finish(fd, tb, 45);
}
END_TEST

/*
 * as_dispatch_request (reads && !writes renews current_batch_expires): a
 * read batch alone renews itself, a write arriving late waits a whole batch.
 */
START_TEST(test_read_batch_clock_starts_with_a_waiting_write)
{
	struct fake_disk *fd = new_disk(true, 1);
	struct test_bio tb[121];
	unsigned int first_write;

	for (unsigned int i = 0; i < 120; i++)
		submit(fd, &tb[i], REQ_OP_READ, 10 * i, 1, 2);
	fake_start(fd);
	for (unsigned int i = 0; i < 30; i++) { /* 300 ms of reads alone */
		advance(fd, 10 * MS);
		elv_complete_one(fd);
	}
	submit(fd, &tb[120], REQ_OP_WRITE, 100000, 1, 1);
	elv_drain_stepped(fd, 10 * MS);
	for (first_write = 0; fd->events[first_write].op != REQ_OP_WRITE; first_write++)
		;
	/* 500 ms after the write came, reads still queued */
	ck_assert_uint_eq(dispatch_ns[first_write] - dispatch_ns[30], 500 * MS);
	ck_assert_uint_eq(first_write, 80);
	finish(fd, tb, 121);
}
END_TEST

/*
 * as_dispatch_request, dispatch_writes: a write batch goes on in sector
 * order from where the last write left the head (next_rq), unless the
 * oldest write is found expired (the write FIFO's clock is not restarted
 * with the batch); only a read batch starts at its FIFO head.  Writes W1
 * (oldest, 9000), 100 and 200 wait through a 100 ms read batch, with no
 * anticipation; writes[] gets the order they went in.
 */
static void write_batch_order(const char *write_expire, sector_t *out)
{
	static const sector_t writes[] = { 9000, 100, 200 };
	struct fake_disk *fd = new_disk(true, 1);
	struct test_bio tb[23];
	unsigned int first = 0;

	tunable_store_ok(fd, "antic_expire", "0");
	tunable_store_ok(fd, "write_expire", write_expire);
	tunable_store_ok(fd, "read_batch_expire", "100");
	for (unsigned int i = 0; i < 3; i++)
		submit(fd, &tb[i], REQ_OP_WRITE, writes[i], 1, 1);
	for (unsigned int i = 0; i < 20; i++)
		submit(fd, &tb[3 + i], REQ_OP_READ, 1000 + 10 * i, 1, 2);
	fake_start(fd);
	elv_drain_stepped(fd, 10 * MS);
	ck_assert_uint_eq(fd->nr_events, 23);
	while (fd->events[first].op == REQ_OP_READ)
		first++;
	ck_assert_uint_eq(first, 10);
	for (unsigned int i = 0; i < 3; i++)
		out[i] = fd->events[first + i].sector;
	finish(fd, tb, 23);
}

START_TEST(test_write_batch_starts_in_sector_order)
{
	sector_t out[3];

	write_batch_order("5000", out);
	ck_assert_uint_eq(out[0], 100);
	ck_assert_uint_eq(out[1], 200);
	ck_assert_uint_eq(out[2], 9000);
	/* expired when the batch starts: W1 first, then back down, nearest first */
	write_batch_order("50", out);
	ck_assert_uint_eq(out[0], 9000);
	ck_assert_uint_eq(out[1], 200);
	ck_assert_uint_eq(out[2], 100);
}
END_TEST

/* ---- anticipation ---- */

/*
 * as_can_anticipate, as_antic_waitnext, as_antic_timeout: B is held back
 * after A's read; at antic_expire from A's completion it goes.
 */
START_TEST(test_antic_holds_far_read_until_timeout)
{
	struct fake_disk *fd = new_disk(false, 0);
	struct test_bio tb[2];
	uint64_t done = a_done_b_queued(fd, tb);

	ck_assert_uint_eq(fd->nr_events, 1);
	ck_assert_uint_eq(fd->nr_dispatched, 0);
	ck_assert_uint_eq(fd->q->dispatch_at, done + ANTIC_MS * MS);
	fd->clock.virtual_ns = done + ANTIC_MS * MS - 1;
	blk_run_queue(fd->q);
	ck_assert_uint_eq(fd->nr_events, 1);
	fd->clock.virtual_ns = done + ANTIC_MS * MS;
	blk_run_queue(fd->q);
	ck_assert_uint_eq(fd->nr_events, 2);
	elv_assert_event(fd, 1, PID_B, FAR);
	finish(fd, tb, 2);
}
END_TEST

/* as_antic_expired: B comes antic_expire after A's read completed, B goes at once. */
START_TEST(test_antic_not_started_past_its_time)
{
	struct fake_disk *fd = new_disk(false, 0);
	struct test_bio tb[2];

	read8(fd, &tb[0], 1000, PID_A);
	elv_complete_one(fd);
	advance(fd, ANTIC_MS * MS);
	read8(fd, &tb[1], FAR, PID_B);
	ck_assert_uint_eq(fd->nr_events, 2);
	finish(fd, tb, 2);
}
END_TEST

/* as_can_break_anticipation, same process: A reads on close by, it goes first. */
START_TEST(test_antic_close_read_from_same_process_goes_first)
{
	struct fake_disk *fd = new_disk(false, 0);
	struct test_bio tb[3];
	uint64_t done;

	a_done_b_queued(fd, tb);
	advance(fd, 2 * MS);
	read8(fd, &tb[2], 1008, PID_A);
	ck_assert_uint_eq(fd->nr_events, 2);
	elv_assert_event(fd, 1, PID_A, 1008);
	/* A's read is out: B still waits for it, and then for A's next */
	advance(fd, 50 * MS);
	blk_run_queue(fd->q);
	ck_assert_uint_eq(fd->nr_events, 2);
	elv_complete_one(fd);
	done = fd->clock.virtual_ns;
	ck_assert_uint_eq(fd->nr_events, 2);
	ck_assert_uint_eq(fd->q->dispatch_at, done + ANTIC_MS * MS);
	elv_wake(fd);
	elv_assert_event(fd, 2, PID_B, FAR);
	finish(fd, tb, 3);
}
END_TEST

/* as_close_req: a close read from another process also ends the wait (cooperating). */
START_TEST(test_antic_close_read_from_other_process)
{
	struct fake_disk *fd = new_disk(false, 0);
	struct test_bio tb[3];

	a_done_b_queued(fd, tb);
	read8(fd, &tb[2], 1016, PID_C);
	ck_assert_uint_eq(fd->nr_events, 2);
	elv_assert_event(fd, 1, PID_C, 1016);
	finish(fd, tb, 3);
	ck_assert_uint_lt(tb[2].order, tb[1].order);
}
END_TEST

/* as_can_break_anticipation (nr_queued): any request from A ends the wait; B goes next. */
START_TEST(test_antic_far_read_from_same_process_ends_wait)
{
	struct fake_disk *fd = new_disk(false, 0);
	struct test_bio tb[3];

	a_done_b_queued(fd, tb);
	read8(fd, &tb[2], 5 * FAR, PID_A);
	ck_assert_uint_ge(fd->nr_events, 2);
	elv_assert_event(fd, 1, PID_B, FAR);
	finish(fd, tb, 3);
}
END_TEST

/*
 * as_antic_waitreq, as_completed_request: while A's read is out nothing else
 * goes; the wait is timed from its completion.
 */
START_TEST(test_antic_waits_for_read_in_flight)
{
	struct fake_disk *fd = new_disk(false, 0);
	struct test_bio tb[2];
	uint64_t done;

	read8(fd, &tb[0], 1000, PID_A);
	read8(fd, &tb[1], FAR, PID_B);
	ck_assert_uint_eq(fd->nr_events, 1);
	ck_assert_uint_eq(fd->q->dispatch_at, 0);
	advance(fd, 100 * MS);
	blk_run_queue(fd->q);
	ck_assert_uint_eq(fd->nr_events, 1);
	elv_complete_one(fd);
	done = fd->clock.virtual_ns;
	ck_assert_uint_eq(fd->nr_events, 1);
	ck_assert_uint_eq(fd->q->dispatch_at, done + ANTIC_MS * MS);
	elv_wake(fd);
	elv_assert_event(fd, 1, PID_B, FAR);
	finish(fd, tb, 2);
}
END_TEST

/* The point of it all: a reader's next read beats the writes queued meanwhile. */
START_TEST(test_antic_holds_writes_for_the_reader)
{
	struct fake_disk *fd = new_disk(false, 0);
	struct test_bio tb[3];
	uint64_t done;

	read8(fd, &tb[0], 1000, PID_A);
	elv_complete_one(fd);
	submit(fd, &tb[1], REQ_OP_WRITE, FAR, 8, PID_B);
	ck_assert_uint_eq(fd->nr_events, 1);
	advance(fd, 3 * MS);
	read8(fd, &tb[2], 1008, PID_A);
	ck_assert_uint_eq(fd->nr_events, 2);
	elv_assert_event(fd, 1, PID_A, 1008);
	elv_complete_one(fd);
	done = fd->clock.virtual_ns;
	/* the first wait's wake-up comes first: stale, the wait asks again for its own */
	elv_wake(fd);
	ck_assert_uint_eq(fd->nr_events, 2);
	ck_assert_uint_eq(fd->q->dispatch_at, done + ANTIC_MS * MS);
	elv_wake(fd);
	ck_assert_uint_eq(fd->nr_events, 3);
	ck_assert_int_eq(fd->events[2].op, REQ_OP_WRITE);
	finish(fd, tb, 3);
}
END_TEST

/* as_move_to_dispatch drops io_context after a write: no reader to wait for. */
START_TEST(test_no_antic_after_write)
{
	struct fake_disk *fd = new_disk(false, 0);
	struct test_bio tb[2];

	submit(fd, &tb[0], REQ_OP_WRITE, 1000, 8, PID_A);
	elv_complete_one(fd);
	read8(fd, &tb[1], FAR, PID_B);
	ck_assert_uint_eq(fd->nr_events, 2);
	finish(fd, tb, 2);
}
END_TEST

/*
 * A reads 4 times, step sectors apart, each after the last completed and
 * think_ms passed; then B queues a read FAR beyond A's last.  Is B held?
 */
static bool b_is_held(sector_t step, unsigned int think_ms)
{
	struct fake_disk *fd = new_disk(false, 0);
	struct test_bio tb[5];
	bool held;

	for (unsigned int i = 0; i < 4; i++) {
		if (i)
			advance(fd, think_ms * MS);
		read8(fd, &tb[i], 1000 + i * step, PID_A);
		elv_complete_one(fd);
	}
	read8(fd, &tb[4], 1000 + 3 * step + 8 + FAR, PID_B);
	held = fd->nr_dispatched == 0;
	finish(fd, tb, 5);
	return held;
}

/*
 * as_update_iohist, as_close_req (seek_mean), ttime_mean > antic_expire: a
 * seeky or slow-thinking reader is not worth the wait.
 */
START_TEST(test_antic_follows_process_history)
{
	ck_assert(b_is_held(8, 0));         /* sequential, at once */
	ck_assert(b_is_held(8, 5));         /* thinks 5 ms: within antic_expire */
	ck_assert(!b_is_held(8, 20));       /* thinks 20 ms: longer than we would wait */
	ck_assert(!b_is_held(3 * FAR, 0));  /* seeks 3M sectors: B, 1M away, is nearer */
}
END_TEST

START_TEST(test_antic_expire_zero_disables)
{
	struct fake_disk *fd = new_disk(false, 0);
	struct test_bio tb[2];

	tunable_store_ok(fd, "antic_expire", "0");
	a_done_b_queued(fd, tb);
	ck_assert_uint_eq(fd->nr_events, 2);
	finish(fd, tb, 2);
}
END_TEST

START_TEST(test_antic_expire_tunable_honoured)
{
	struct fake_disk *fd = new_disk(false, 0);
	struct test_bio tb[2];
	uint64_t done;

	tunable_store_ok(fd, "antic_expire", "20");
	done = a_done_b_queued(fd, tb);
	ck_assert_uint_eq(fd->q->dispatch_at, done + 20 * MS);
	fd->clock.virtual_ns = done + 19 * MS;
	blk_run_queue(fd->q);
	ck_assert_uint_eq(fd->nr_events, 1);
	fd->clock.virtual_ns = done + 20 * MS;
	blk_run_queue(fd->q);
	ck_assert_uint_eq(fd->nr_events, 2);
	finish(fd, tb, 2);
}
END_TEST

/* Switching away while waiting: the held request moves on, nothing is lost. */
START_TEST(test_switch_while_anticipating)
{
	struct fake_disk *fd = new_disk(false, 0);
	struct test_bio tb[2];
	char why[256];

	a_done_b_queued(fd, tb);
	ck_assert_uint_eq(fd->nr_events, 1);
	blk_queue_lock(fd->q);
	ck_assert_int_eq(elevator_switch(fd->q, "deadline", why, sizeof(why)), 0);
	blk_queue_unlock(fd->q);
	blk_run_queue(fd->q);
	ck_assert_uint_eq(fd->nr_events, 2);
	elv_assert_event(fd, 1, PID_B, FAR);
	finish(fd, tb, 2);
}
END_TEST

/* Many processes, each read once, a second apart: the ones forgotten never come back to bite. */
START_TEST(test_many_processes)
{
	struct fake_disk *fd = new_disk(false, 0);
	struct test_bio tb[300];

	for (unsigned int i = 0; i < 300; i++) {
		read8(fd, &tb[i], (i % 2) * FAR + 8 * i, (pid_t)(1000 + i));
		if (i % 3 == 2) {
			elv_drain_stepped(fd, 0);
			advance(fd, 400 * MS);
		}
	}
	finish(fd, tb, 300);
}
END_TEST

/* ---- merges ---- */

/*
 * as_merged_request: a bio joining the front of R1 (at 100) takes it below
 * R2 (at 95): the sorted list must follow, or the sweep from Q would take
 * R2 first.
 */
START_TEST(test_front_merge_repositions)
{
	static const sector_t out[] = { 0, 92, 95 };
	struct fake_disk *fd = new_disk(true, 0);
	struct test_bio tb[4];

	submit(fd, &tb[0], REQ_OP_READ, 0, 1, 1);   /* Q */
	submit(fd, &tb[1], REQ_OP_READ, 95, 1, 1);  /* R2 */
	submit(fd, &tb[2], REQ_OP_READ, 100, 8, 1); /* R1 */
	submit(fd, &tb[3], REQ_OP_READ, 92, 8, 1);
	ck_assert_uint_eq(fd->q->stats.merges[STAT_READ], 1);
	fake_start(fd);
	elv_assert_order(fd, out, 3);
	ck_assert_uint_eq(fd->events[1].nr_sectors, 16);
	finish(fd, tb, 4);
}
END_TEST

/*
 * as_merged_requests: B (oldest) and A are joined by a bio filling the gap:
 * the survivor keeps B's place at the FIFO head and starts the batch.  The merged-away request
 * is forgotten for its process too: afterwards it is waited for as usual.
 */
START_TEST(test_merged_requests_keep_oldest_fifo_place)
{
	static const sector_t out[] = { 100, 50, 500 };
	struct fake_disk *fd = new_disk(true, 0);
	struct test_bio tb[6];

	submit(fd, &tb[0], REQ_OP_READ, 116, 8, 5); /* B */
	advance(fd, 10 * MS);
	submit(fd, &tb[1], REQ_OP_READ, 50, 8, 5);  /* Z */
	submit(fd, &tb[2], REQ_OP_READ, 100, 8, 5); /* A */
	submit(fd, &tb[3], REQ_OP_READ, 500, 8, 5); /* U */
	submit(fd, &tb[4], REQ_OP_READ, 108, 8, 5); /* the gap */
	fake_start(fd);
	elv_assert_order(fd, out, 3);
	ck_assert_uint_eq(fd->events[0].nr_sectors, 24);
	fake_complete_all(fd);

	read8(fd, &tb[5], 2 * FAR, 6);
	ck_assert_uint_eq(fd->nr_events, 3);
	finish(fd, tb, 6);
	ck_assert_uint_lt(tb[2].order, tb[4].order);
	ck_assert_uint_lt(tb[4].order, tb[0].order);
}
END_TEST

/*
 * as_merge: a bio ending where a queued request starts joins its front,
 * found by the sorted list when the core's last-merge cache points
 * elsewhere (U).
 */
START_TEST(test_front_merge_lookup)
{
	static const sector_t out[] = { 92, 500 };
	struct fake_disk *fd = new_disk(true, 0);
	struct test_bio tb[3];

	read8(fd, &tb[0], 100, 1);
	read8(fd, &tb[1], 500, 1); /* U */
	read8(fd, &tb[2], 92, 1);
	ck_assert_uint_eq(fd->q->stats.merges[STAT_READ], 1);
	fake_start(fd);
	elv_assert_order(fd, out, 2);
	ck_assert_uint_eq(fd->events[0].nr_sectors, 16);
	finish(fd, tb, 3);
	ck_assert_uint_lt(tb[2].order, tb[0].order);
}
END_TEST

/* ---- tunables ---- */

static const struct tunable_case tunables[] = {
	{ "read_expire", 125, 0, INT_MAX },
	{ "write_expire", 250, 0, INT_MAX },
	{ "read_batch_expire", 500, 0, INT_MAX },
	{ "write_batch_expire", 125, 0, INT_MAX },
	{ "antic_expire", 6, 0, INT_MAX },
};

#define NR_TUNABLES (sizeof(tunables) / sizeof(tunables[0]))

START_TEST(test_alias_anticipatory)
{
	struct fake_disk *fd = fake_disk_new("anticipatory");

	ck_assert_str_eq(fd->q->elevator->type->elevator_name, "as");
	fake_disk_free(fd);
}
END_TEST

static Suite *as_suite(void)
{
	Suite *s = suite_create("as");
	TCase *order = tcase_create("order");
	TCase *antic = tcase_create("anticipation");
	TCase *merge = tcase_create("merge");
	TCase *tune;

	tcase_add_test(order, test_batch_ascending_sectors);
	tcase_add_test(order, test_batch_then_short_seeks_back);
	tcase_add_test(order, test_backward_seek_rules);
	tcase_add_test(order, test_read_fifo_expiry);
	tcase_add_test(order, test_write_fifo_expiry);
	tcase_add_test(order, test_fifo_looked_at_once_per_interval);
	tcase_add_test(order, test_reads_preferred_writes_not_starved);
	tcase_add_test(order, test_batch_expire_tunables_honoured);
	tcase_add_test(order, test_read_batch_clock_starts_with_a_waiting_write);
	tcase_add_test(order, test_write_batch_starts_in_sector_order);
	suite_add_tcase(s, order);

	tcase_add_test(antic, test_antic_holds_far_read_until_timeout);
	tcase_add_test(antic, test_antic_not_started_past_its_time);
	tcase_add_test(antic, test_antic_close_read_from_same_process_goes_first);
	tcase_add_test(antic, test_antic_close_read_from_other_process);
	tcase_add_test(antic, test_antic_far_read_from_same_process_ends_wait);
	tcase_add_test(antic, test_antic_waits_for_read_in_flight);
	tcase_add_test(antic, test_antic_holds_writes_for_the_reader);
	tcase_add_test(antic, test_no_antic_after_write);
	tcase_add_test(antic, test_antic_follows_process_history);
	tcase_add_test(antic, test_antic_expire_zero_disables);
	tcase_add_test(antic, test_antic_expire_tunable_honoured);
	tcase_add_test(antic, test_switch_while_anticipating);
	tcase_add_test(antic, test_many_processes);
	suite_add_tcase(s, antic);

	tcase_add_test(merge, test_front_merge_repositions);
	tcase_add_test(merge, test_merged_requests_keep_oldest_fifo_place);
	tcase_add_test(merge, test_front_merge_lookup);
	suite_add_tcase(s, merge);

	tune = tunable_tests("as", tunables, NR_TUNABLES);
	tcase_add_test(tune, test_alias_anticipatory);
	suite_add_tcase(s, tune);
	return s;
}

int main(void)
{
	return fake_run_suite(as_suite());
}
