/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_deadline.c - the deadline elevator: sorted batches, FIFO expiry,
 * reads first, merges, and async_depth on a multi-queue queue.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elv_harness.h"
#include "fake_mq.h"
#include "tunable_test.h"

#define ELEVATOR "deadline"

/* One-sector reads, gaps between them, so that none merges with another. */
static void submit_reads(struct fake_disk *fd, struct test_bio *tb, const sector_t *sectors,
			 unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		elv_submit(fd, &tb[i], REQ_OP_READ, sectors[i], 1);
}

/*
 * deadline_dispatch_requests, dispatch_find_request: a batch starts at the
 * oldest request and goes up in sector order (deadline_latter_request);
 * once nothing is above it, the next batch starts again at the oldest left.
 */
START_TEST(test_batch_ascending_sectors)
{
	static const sector_t in[] = { 50, 10, 70, 30, 90, 60 };
	static const sector_t out[] = { 50, 60, 70, 90, 10, 30 };
	struct fake_disk *fd = elv_stopped_disk(ELEVATOR);
	struct test_bio tb[6];

	submit_reads(fd, tb, in, 6);
	ck_assert_uint_eq(fd->nr_events, 0);
	fake_start(fd);
	elv_assert_order(fd, out, 6);
	elv_finish(fd, tb, 6);
}
END_TEST

/*
 * next_rq is the request after the last one dispatched, taken then
 * (deadline_move_request): requests arriving mid-batch join it if they lie
 * ahead of it; one behind waits.
 */
START_TEST(test_batch_continues_upward)
{
	static const sector_t first[] = { 100, 200, 300 };
	struct fake_disk *fd = elv_stopped_disk(ELEVATOR);
	struct test_bio tb[5];

	fd->q->limits.nr_requests = 1;
	submit_reads(fd, tb, first, 3);
	fake_start(fd);
	elv_assert_dispatched(fd, 0, 100, 1);
	elv_submit(fd, &tb[3], REQ_OP_READ, 50, 1);
	elv_submit(fd, &tb[4], REQ_OP_READ, 250, 1);
	ck_assert_uint_eq(fd->nr_events, 1);

	elv_complete_one(fd);
	elv_assert_dispatched(fd, 1, 200, 1);
	elv_complete_one(fd);
	elv_assert_dispatched(fd, 2, 250, 1);
	elv_complete_one(fd);
	elv_assert_dispatched(fd, 3, 300, 1);
	elv_complete_one(fd);
	elv_assert_dispatched(fd, 4, 50, 1);
	elv_finish(fd, tb, 5);
}
END_TEST

/*
 * __dd_dispatch_request: 40 reads going up and one write: two read batches
 * of fifo_batch (16) may pass the write (writes_starved 2, dd->starved++),
 * then the write goes, then the rest.
 */
START_TEST(test_batch_limit_reevaluates_direction)
{
	struct fake_disk *fd = elv_stopped_disk(ELEVATOR);
	struct test_bio tb[41];

	for (unsigned int i = 0; i < 40; i++)
		elv_submit(fd, &tb[i], REQ_OP_READ, 10 * i, 1);
	elv_submit(fd, &tb[40], REQ_OP_WRITE, 10000, 1);
	fake_start(fd);

	ck_assert_uint_eq(fd->nr_events, 41);
	for (unsigned int i = 0; i < 32; i++)
		elv_assert_dispatched(fd, i, 10 * i, 1);
	ck_assert_int_eq(fd->events[32].op, REQ_OP_WRITE);
	elv_assert_dispatched(fd, 32, 10000, 1);
	for (unsigned int i = 33; i < 41; i++)
		elv_assert_dispatched(fd, i, 10 * (i - 1), 1);
	elv_finish(fd, tb, 41);
}
END_TEST

/* X at 500 is the oldest, L at 0 the next, then above more going up from 510. */
static void submit_x_l_and_above(struct fake_disk *fd, struct test_bio *tb, enum req_op op,
				 unsigned int above)
{
	elv_submit(fd, &tb[0], op, 500, 1);
	elv_submit(fd, &tb[1], op, 0, 1);
	for (unsigned int i = 0; i < above; i++)
		elv_submit(fd, &tb[2 + i], op, 510 + 10 * i, 1);
}

/*
 * dispatch_find_request: with L expired before the start, the batch from X
 * still runs its 16 requests in sector order; only the next batch starts
 * from L (deadline_check_fifo, then deadline_fifo_request).
 */
START_TEST(test_batch_limit_then_fifo_head)
{
	struct fake_disk *fd = elv_stopped_disk(ELEVATOR);
	struct test_bio tb[22];

	submit_x_l_and_above(fd, tb, REQ_OP_READ, 20);
	fd->clock.virtual_ns += 501 * MS;
	fake_start(fd);

	ck_assert_uint_eq(fd->nr_events, 22);
	elv_assert_dispatched(fd, 0, 500, 1);
	for (unsigned int i = 1; i < 16; i++)
		elv_assert_dispatched(fd, i, 500 + 10 * i, 1);
	elv_assert_dispatched(fd, 16, 0, 1);
	for (unsigned int i = 17; i < 22; i++)
		elv_assert_dispatched(fd, i, 500 + 10 * (i - 1), 1);
	elv_finish(fd, tb, 22);
}
END_TEST

/* dd->batching < dd->fifo_batch: a smaller fifo_batch ends the batch sooner. */
START_TEST(test_fifo_batch_tunable_honoured)
{
	struct fake_disk *fd = elv_stopped_disk(ELEVATOR);
	struct test_bio tb[8];

	tunable_store_ok(fd, "fifo_batch", "4");
	submit_x_l_and_above(fd, tb, REQ_OP_READ, 6);
	fd->clock.virtual_ns += 501 * MS;
	fake_start(fd);

	ck_assert_uint_eq(fd->nr_events, 8);
	elv_assert_dispatched(fd, 0, 500, 1);
	elv_assert_dispatched(fd, 1, 510, 1);
	elv_assert_dispatched(fd, 2, 520, 1);
	elv_assert_dispatched(fd, 3, 530, 1);
	elv_assert_dispatched(fd, 4, 0, 1);
	elv_assert_dispatched(fd, 5, 540, 1);
	elv_finish(fd, tb, 8);
}
END_TEST

/*
 * deadline_check_fifo, only at a batch start: one request at a time,
 * moving the clock, at a batch boundary L (oldest, lowest) is passed by
 * while younger than read_expire; once it has waited longer it starts the
 * next batch, but does not cut the running one short, though every request
 * of the batch is a seek from the last (2.6.23 ended a batch at the first
 * request not contiguous with the last: last_sector).
 */
START_TEST(test_read_fifo_expiry)
{
	struct fake_disk *fd = elv_stopped_disk(ELEVATOR);
	uint64_t t0 = fd->clock.virtual_ns;
	struct test_bio tb[42];
	unsigned int i;

	fd->q->limits.nr_requests = 1;
	submit_x_l_and_above(fd, tb, REQ_OP_READ, 40);
	fake_start(fd);
	elv_assert_dispatched(fd, 0, 500, 1);

	/* First boundary, after 16: L not yet expired, the run goes on upward. */
	for (i = 1; i < 16; i++) {
		elv_complete_one(fd);
		elv_assert_dispatched(fd, i, 500 + 10 * i, 1);
	}
	fd->clock.virtual_ns = t0 + 499 * MS;
	elv_complete_one(fd);
	elv_assert_dispatched(fd, 16, 660, 1);

	/* Expired now, but a batch is not cut short for it. */
	fd->clock.virtual_ns = t0 + 501 * MS;
	for (i = 17; i < 32; i++) {
		elv_complete_one(fd);
		elv_assert_dispatched(fd, i, 500 + 10 * i, 1);
	}

	/* Second boundary: the next batch starts at the FIFO head, L. */
	elv_complete_one(fd);
	elv_assert_dispatched(fd, 32, 0, 1);
	for (i = 33; i < 42; i++) {
		elv_complete_one(fd);
		elv_assert_dispatched(fd, i, 500 + 10 * (i - 1), 1);
	}
	elv_finish(fd, tb, 42);
}
END_TEST

/*
 * Where L lands when the requests have waited wait_ms before the driver
 * starts: 16 (the second batch starts at L) once L's direction expired, 21
 * (last, the sector-ordered run goes on) before.  expire_ms, unless NULL, is
 * stored first as that direction's tunable.
 */
static unsigned int expired_pos(enum req_op op, uint64_t wait_ms, const char *expire_ms)
{
	struct fake_disk *fd = elv_stopped_disk(ELEVATOR);
	struct test_bio tb[22];
	unsigned int pos;

	if (expire_ms)
		tunable_store_ok(fd, op == REQ_OP_READ ? "read_expire" : "write_expire", expire_ms);
	submit_x_l_and_above(fd, tb, op, 20);
	fd->clock.virtual_ns += wait_ms * MS;
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 22);
	for (pos = 0; pos < 22 && fd->events[pos].sector != 0; pos++)
		;
	elv_finish(fd, tb, 22);
	return pos;
}

START_TEST(test_read_expire_default)
{
	ck_assert_uint_eq(expired_pos(REQ_OP_READ, 499, NULL), 21);
	ck_assert_uint_eq(expired_pos(REQ_OP_READ, 501, NULL), 16);
}
END_TEST

START_TEST(test_write_expire_default)
{
	ck_assert_uint_eq(expired_pos(REQ_OP_WRITE, 4999, NULL), 21);
	ck_assert_uint_eq(expired_pos(REQ_OP_WRITE, 5001, NULL), 16);
}
END_TEST

/* The expires are stored in milliseconds. */
START_TEST(test_expire_tunables_in_ms)
{
	ck_assert_uint_eq(expired_pos(REQ_OP_READ, 99, "100"), 21);
	ck_assert_uint_eq(expired_pos(REQ_OP_READ, 101, "100"), 16);
	ck_assert_uint_eq(expired_pos(REQ_OP_WRITE, 999, "1000"), 21);
	ck_assert_uint_eq(expired_pos(REQ_OP_WRITE, 1001, "1000"), 16);
	ck_assert_uint_eq(expired_pos(REQ_OP_WRITE, 5001, "10000"), 21);
}
END_TEST

/*
 * __dd_dispatch_request, writes_starved: writes went in first, yet reads go
 * first; after writes_starved (2) read batches a write batch runs.  Sectors
 * go down so each batch is one request.
 */
START_TEST(test_reads_first_writes_not_starved)
{
	static const sector_t out[] = { 900, 800, 300, 700, 600, 200, 500, 400, 100 };
	struct fake_disk *fd = elv_stopped_disk(ELEVATOR);
	struct test_bio tb[9];
	unsigned int n = 0;

	for (sector_t s = 300; s >= 100; s -= 100)
		elv_submit(fd, &tb[n++], REQ_OP_WRITE, s, 1);
	for (sector_t s = 900; s >= 400; s -= 100)
		elv_submit(fd, &tb[n++], REQ_OP_READ, s, 1);
	fake_start(fd);

	elv_assert_order(fd, out, 9);
	for (unsigned int i = 0; i < 9; i++)
		ck_assert_int_eq(fd->events[i].op, out[i] <= 300 ? REQ_OP_WRITE : REQ_OP_READ);
	elv_finish(fd, tb, 9);
}
END_TEST

/* writes_starved 1: with both waiting, read and write batches alternate. */
START_TEST(test_writes_starved_tunable_honoured)
{
	static const sector_t out[] = { 900, 300, 800, 200, 100 };
	struct fake_disk *fd = elv_stopped_disk(ELEVATOR);
	struct test_bio tb[5];

	tunable_store_ok(fd, "writes_starved", "1");
	elv_submit(fd, &tb[0], REQ_OP_WRITE, 300, 1);
	elv_submit(fd, &tb[1], REQ_OP_WRITE, 200, 1);
	elv_submit(fd, &tb[2], REQ_OP_WRITE, 100, 1);
	elv_submit(fd, &tb[3], REQ_OP_READ, 900, 1);
	elv_submit(fd, &tb[4], REQ_OP_READ, 800, 1);
	fake_start(fd);
	elv_assert_order(fd, out, 5);
	elv_finish(fd, tb, 5);
}
END_TEST

/*
 * dd_request_merge (2.6.23's deadline_merge): a bio ending where a queued
 * request starts joins its front.  U is queued
 * after A so that the core's last-merge cache points elsewhere: only the
 * elevator's front-merge lookup can find A.
 */
static void submit_front_merge_case(struct fake_disk *fd, struct test_bio *tb)
{
	elv_submit(fd, &tb[0], REQ_OP_READ, 100, 8);
	elv_submit(fd, &tb[1], REQ_OP_READ, 500, 8);
	elv_submit(fd, &tb[2], REQ_OP_READ, 92, 8);
}

START_TEST(test_front_merge)
{
	struct fake_disk *fd = elv_stopped_disk(ELEVATOR);
	struct test_bio tb[3];

	submit_front_merge_case(fd, tb);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 2);
	elv_assert_dispatched(fd, 0, 92, 16);
	elv_assert_dispatched(fd, 1, 500, 8);
	ck_assert_uint_eq(fd->q->stats.merges[STAT_READ], 1);
	elv_finish(fd, tb, 3);
	/* The front bio comes first in the request, so it ends first. */
	ck_assert_uint_lt(tb[2].order, tb[0].order);
}
END_TEST

START_TEST(test_front_merges_off)
{
	struct fake_disk *fd = elv_stopped_disk(ELEVATOR);
	struct test_bio tb[3];

	tunable_store_ok(fd, "front_merges", "0");
	submit_front_merge_case(fd, tb);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 3);
	elv_assert_dispatched(fd, 0, 100, 8);
	elv_assert_dispatched(fd, 1, 500, 8);
	elv_assert_dispatched(fd, 2, 92, 8);
	ck_assert_uint_eq(fd->q->stats.merges[STAT_READ], 0);
	elv_finish(fd, tb, 3);
}
END_TEST

/*
 * dd_merged_requests (deadline_merged_requests): B (oldest) and A are
 * joined by a bio filling the gap between them: the request that survives
 * keeps B's place at the head of the FIFO, so it goes
 * before Z, which is lower but younger than B.
 */
START_TEST(test_merged_requests_keep_oldest_fifo_place)
{
	struct fake_disk *fd = elv_stopped_disk(ELEVATOR);
	struct test_bio tb[5];

	elv_submit(fd, &tb[0], REQ_OP_READ, 116, 8); /* B */
	fd->clock.virtual_ns += 10 * MS;
	elv_submit(fd, &tb[1], REQ_OP_READ, 50, 8);  /* Z */
	elv_submit(fd, &tb[2], REQ_OP_READ, 100, 8); /* A */
	elv_submit(fd, &tb[3], REQ_OP_READ, 500, 8); /* U */
	elv_submit(fd, &tb[4], REQ_OP_READ, 108, 8); /* the gap */
	fake_start(fd);

	ck_assert_uint_eq(fd->nr_events, 3);
	elv_assert_dispatched(fd, 0, 100, 24);
	elv_assert_dispatched(fd, 1, 500, 8);
	elv_assert_dispatched(fd, 2, 50, 8);
	elv_finish(fd, tb, 5);
	ck_assert_uint_lt(tb[2].order, tb[4].order);
	ck_assert_uint_lt(tb[4].order, tb[0].order);
}
END_TEST

/* ---- the kernel's rules, one scenario each ---- */

/*
 * deadline_check_fifo (mq-deadline's time_after_eq): a request has expired
 * at its deadline, not only after it.  2.6.23 waited a tick more.
 */
START_TEST(test_expired_at_deadline_exactly)
{
	ck_assert_uint_eq(expired_pos(REQ_OP_READ, 500, NULL), 16);
	ck_assert_uint_eq(expired_pos(REQ_OP_WRITE, 5000, NULL), 16);
}
END_TEST

/*
 * deadline_move_request: dispatching clears the other direction's next
 * request, so a read batch after a write batch starts at the oldest read,
 * not where the reads' sweep stopped (Linux 6.3's latest_pos would go on
 * at 700).  fifo_batch 2, writes_starved 1: R R | W | R R | R.
 */
START_TEST(test_batch_after_other_direction_starts_at_fifo_head)
{
	static const sector_t out[] = { 500, 600, 50, 100, 700, 800 };
	static const sector_t reads[] = { 500, 100, 600, 700, 800 };
	struct fake_disk *fd = elv_stopped_disk(ELEVATOR);
	struct test_bio tb[6];

	tunable_store_ok(fd, "fifo_batch", "2");
	tunable_store_ok(fd, "writes_starved", "1");
	submit_reads(fd, tb, reads, 5);
	elv_submit(fd, &tb[5], REQ_OP_WRITE, 50, 1);
	fake_start(fd);
	elv_assert_order(fd, out, 6);
	elv_finish(fd, tb, 6);
}
END_TEST

/*
 * __dd_dispatch_request chooses the direction before it looks at a FIFO:
 * a read that expired during the second read batch still waits for the
 * write batch writes_starved makes due, then starts the next read batch.
 * One request out at a time, 10 ms each: L, queued at 0, expires at 500 ms
 * and goes at dispatch 48 (480 ms), after 16 reads, 16 reads and 16 writes.
 */
START_TEST(test_expired_read_waits_for_due_write_batch)
{
	struct fake_disk *fd = elv_stopped_disk(ELEVATOR);
	struct test_bio tb[82];
	unsigned int i, at = 0;

	fd->q->limits.nr_requests = 1;
	tunable_store_ok(fd, "read_expire", "300");
	submit_x_l_and_above(fd, tb, REQ_OP_READ, 60);
	for (i = 0; i < 20; i++)
		elv_submit(fd, &tb[62 + i], REQ_OP_WRITE, 100000 + 10 * i, 1);
	fake_start(fd);
	for (i = 1; i < 82; i++) {
		fd->clock.virtual_ns += 10 * MS;
		elv_complete_one(fd);
		if (fd->events[i].sector == 0)
			at = i;
	}
	/* L expired at 300 ms, in the second read batch (dispatches 16..31). */
	for (i = 32; i < 48; i++)
		ck_assert_int_eq(fd->events[i].op, REQ_OP_WRITE);
	ck_assert_uint_eq(at, 48);
	elv_finish(fd, tb, 82);
}
END_TEST

/*
 * deadline_check_fifo looks at the FIFO head only, and only when a batch
 * starts (dispatch_find_request); the batch then goes up in sector order
 * from there.  So with several reads expired at once, each batch rescues
 * one: the k-th oldest goes at the k-th batch start.  Eight expired reads,
 * each lower than the one before, 120 younger ones above them, 10 ms a
 * request: the eighth goes at dispatch 112, 1.62 s after it was queued,
 * more than three times read_expire.  That is what the rules give, and
 * what a replay of random I/O at depth 32 on one arm shows.
 */
START_TEST(test_expired_reads_one_per_batch_start)
{
	struct fake_disk *fd = elv_stopped_disk(ELEVATOR);
	uint64_t t0 = fd->clock.virtual_ns;
	struct test_bio tb[128];
	uint64_t at[8] = { 0 };
	unsigned int i;

	fd->q->limits.nr_requests = 1;
	for (i = 0; i < 8; i++)
		elv_submit(fd, &tb[i], REQ_OP_READ, 8000 - 1000 * i, 1);
	for (i = 8; i < 128; i++)
		elv_submit(fd, &tb[i], REQ_OP_READ, 8010 + 10 * i, 1);
	fd->clock.virtual_ns = t0 + 501 * MS;
	fake_start(fd);
	for (i = 1; i <= 128; i++) {
		sector_t s = fd->events[i - 1].sector;

		if (s <= 8000)
			at[(8000 - s) / 1000] = i - 1;
		if (i == 128)
			break;
		fd->clock.virtual_ns += 10 * MS;
		elv_complete_one(fd);
	}
	for (i = 0; i < 8; i++)
		ck_assert_uint_eq(at[i], 16 * i);
	ck_assert_uint_gt(501 + 10 * at[7], 3 * 500);
	elv_finish(fd, tb, 128);
}
END_TEST

/*
 * The bound the kernel's rules put on a read's wait, on a closed loop as
 * rqdisk-replay --depth 32 runs one: 32 I/Os out, 70% reads at random
 * sectors, a disk taking one request at a time, 10 ms each.  Once a read R
 * expired, each read batch start dispatches the oldest read
 * (deadline_check_fifo, deadline_fifo_request), so R goes within m = k + 1
 * read batch starts, k the older reads still queued when R expired; at
 * most every third batch is of writes (writes_starved 2), and a batch is
 * at most fifo_batch (16) requests.  So at most 15 + 16 * (m + ceil(m / 2))
 * requests go between R's expiry and R.  The bound lets a read wait
 * several times read_expire, and on this loop one waits more than twice.
 */
#define LOOP_DEPTH 32
#define LOOP_IOS 4000
#define LOOP_STEP (10 * MS)

struct loop_run {
	struct test_bio *tb;
	uint64_t queued[LOOP_IOS], dispatched[LOOP_IOS];
	unsigned int nr[LOOP_IOS]; /* dispatch number */
	uint64_t ready[LOOP_IOS];  /* the first dispatch number at or after a time */
};

static void loop_on_dispatch(struct fake_disk *fd, struct request *rq)
{
	struct loop_run *lr = fd->priv;
	size_t i = (size_t)((struct test_bio *)rq->bio->bi_private - lr->tb);

	lr->dispatched[i] = fd->clock.virtual_ns;
	lr->nr[i] = fd->nr_events - 1;
}

static unsigned int loop_submit(struct fake_disk *fd, struct loop_run *lr, unsigned int i,
				uint32_t *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	lr->queued[i] = fd->clock.virtual_ns;
	elv_submit(fd, &lr->tb[i], (*seed >> 16) % 10 < 7 ? REQ_OP_READ : REQ_OP_WRITE,
	       16 * (sector_t)((*seed >> 8) % 1000000), 1);
	return i + 1;
}

START_TEST(test_closed_loop_read_wait_bound)
{
	struct fake_disk *fd = elv_stopped_disk(ELEVATOR);
	struct loop_run *lr = calloc(1, sizeof(*lr));
	uint64_t expire = 500 * MS, worst = 0;
	unsigned int expired = 0;
	uint32_t seed = 1;
	unsigned int next = 0;

	ck_assert_ptr_nonnull(lr);
	lr->tb = calloc(LOOP_IOS, sizeof(*lr->tb));
	ck_assert_ptr_nonnull(lr->tb);
	fd->priv = lr;
	fd->on_dispatch = loop_on_dispatch;
	fd->q->limits.nr_requests = 1;
	while (next < LOOP_DEPTH)
		next = loop_submit(fd, lr, next, &seed);
	fake_start(fd);
	while (fd->nr_dispatched) {
		fd->clock.virtual_ns += LOOP_STEP;
		elv_complete_one(fd);
		if (next < LOOP_IOS)
			next = loop_submit(fd, lr, next, &seed);
	}
	ck_assert_uint_eq(fd->nr_events, LOOP_IOS);

	for (unsigned int r = 0; r < LOOP_IOS; r++) {
		uint64_t t_exp = lr->queued[r] + expire;
		unsigned int k = 0, m, before = 0;

		if (lr->tb[r].bio.bi_op != REQ_OP_READ || lr->dispatched[r] <= t_exp)
			continue;
		for (unsigned int j = 0; j < r; j++)
			k += lr->tb[j].bio.bi_op == REQ_OP_READ && lr->dispatched[j] >= t_exp;
		for (unsigned int j = 0; j < LOOP_IOS; j++)
			before += lr->dispatched[j] < t_exp;
		m = k + 1;
		expired++;
		ck_assert_msg(lr->nr[r] - before <= 15 + 16 * (m + (m + 1) / 2),
			      "read %u went %u requests after it expired, %u older reads waiting",
			      r, lr->nr[r] - before, k);
		if (lr->dispatched[r] - lr->queued[r] > worst)
			worst = lr->dispatched[r] - lr->queued[r];
	}
	ck_assert_uint_gt(expired, 0);
	ck_assert_uint_gt(worst, 2 * expire);
	fake_complete_all(fd);
	fake_disk_free(fd);
	free(lr->tb);
	free(lr);
}
END_TEST

/* ---- priority classes (mq-deadline's dd_dispatch_request) ---- */

static void submit_prio(struct fake_disk *fd, struct test_bio *tb, enum req_op op, sector_t sector,
			int class)
{
	tbio_init(tb, op, sector, 1, elv_buf);
	tb->bio.bi_ioprio = IOPRIO_PRIO_VALUE(class, 0);
	submit_bio(fd->q, &tb->bio);
}

/*
 * dd_dispatch_request: real time, then best effort, then idle, whatever
 * the arrival order, the sector or the direction.
 */
START_TEST(test_prio_classes_in_order)
{
	static const sector_t out[] = { 500, 400, 200, 300, 100 };
	struct fake_disk *fd = elv_stopped_disk(ELEVATOR);
	struct test_bio tb[5];

	submit_prio(fd, &tb[0], REQ_OP_READ, 100, IOPRIO_CLASS_IDLE);
	submit_prio(fd, &tb[1], REQ_OP_READ, 200, IOPRIO_CLASS_BE);
	submit_prio(fd, &tb[2], REQ_OP_READ, 300, IOPRIO_CLASS_NONE);
	submit_prio(fd, &tb[3], REQ_OP_WRITE, 400, IOPRIO_CLASS_RT);
	submit_prio(fd, &tb[4], REQ_OP_READ, 500, IOPRIO_CLASS_RT);
	fd->q->limits.nr_requests = 1;
	fake_start(fd);
	for (unsigned int i = 1; i < 5; i++)
		elv_complete_one(fd);
	elv_assert_order(fd, out, 5);
	for (unsigned int i = 0; i < 2; i++)
		ck_assert_int_eq(IOPRIO_PRIO_CLASS(fd->events[i].ioprio), IOPRIO_CLASS_RT);
	elv_finish(fd, tb, 5);
}
END_TEST

/*
 * dd_queued counts a class's requests until they complete: while a real
 * time request is out, no best-effort one goes, though the driver has room.
 */
START_TEST(test_prio_in_flight_holds_lower_class)
{
	struct fake_disk *fd = elv_stopped_disk(ELEVATOR);
	struct test_bio tb[2];

	submit_prio(fd, &tb[0], REQ_OP_READ, 100, IOPRIO_CLASS_RT);
	submit_prio(fd, &tb[1], REQ_OP_READ, 200, IOPRIO_CLASS_BE);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 1);
	elv_assert_dispatched(fd, 0, 100, 1);
	elv_complete_one(fd);
	ck_assert_uint_eq(fd->nr_events, 2);
	elv_assert_dispatched(fd, 1, 200, 1);
	elv_finish(fd, tb, 2);
}
END_TEST

/*
 * dd_dispatch_prio_aged_requests and started_after: a best-effort read B
 * waits while real-time reads keep coming, one out at a time, step_ms
 * apart, until it has waited prio_aging_expire; then it goes first.  The
 * dispatch at which B went.
 */
static unsigned int aged_at(const char *aging_ms, unsigned int step_ms, unsigned int n)
{
	struct fake_disk *fd = elv_stopped_disk(ELEVATOR);
	struct test_bio *tb = calloc(n + 2, sizeof(*tb));
	unsigned int at = 0;

	ck_assert_ptr_nonnull(tb);
	fd->q->limits.nr_requests = 1;
	if (aging_ms)
		tunable_store_ok(fd, "prio_aging_expire", aging_ms);
	submit_prio(fd, &tb[0], REQ_OP_READ, 0, IOPRIO_CLASS_RT);
	submit_prio(fd, &tb[1], REQ_OP_READ, 5000, IOPRIO_CLASS_BE);
	fake_start(fd);
	for (unsigned int i = 1; i <= n; i++) {
		submit_prio(fd, &tb[i + 1], REQ_OP_READ, 10 * i, IOPRIO_CLASS_RT);
		fd->clock.virtual_ns += step_ms * MS;
		elv_complete_one(fd);
	}
	while (at < fd->nr_events && fd->events[at].sector != 5000)
		at++;
	fake_complete_all(fd);
	fake_disk_free(fd);
	free(tb);
	return at;
}

/* 10 s by default: after 99 steps of 100 ms B is younger, at the 100th it goes. */
START_TEST(test_prio_aging_default)
{
	ck_assert_uint_eq(aged_at(NULL, 100, 120), 100);
	ck_assert_uint_eq(aged_at(NULL, 101, 120), 100);
	ck_assert_uint_eq(aged_at(NULL, 99, 120), 102);
}
END_TEST

/* The tunable is in milliseconds; 0 lets a waiting lower class go at once. */
START_TEST(test_prio_aging_tunable_in_ms)
{
	ck_assert_uint_eq(aged_at("1000", 100, 20), 10);
	ck_assert_uint_eq(aged_at("1000", 250, 20), 4);
	ck_assert_uint_eq(aged_at("0", 100, 20), 0);
}
END_TEST

/* Aged best effort goes before aged idle: the aged look goes down the classes. */
START_TEST(test_prio_aged_best_effort_before_idle)
{
	struct fake_disk *fd = elv_stopped_disk(ELEVATOR);
	struct test_bio tb[4];

	fd->q->limits.nr_requests = 1;
	submit_prio(fd, &tb[0], REQ_OP_READ, 100, IOPRIO_CLASS_RT);
	submit_prio(fd, &tb[1], REQ_OP_READ, 300, IOPRIO_CLASS_IDLE);
	submit_prio(fd, &tb[2], REQ_OP_READ, 200, IOPRIO_CLASS_BE);
	fake_start(fd);
	submit_prio(fd, &tb[3], REQ_OP_READ, 400, IOPRIO_CLASS_RT);
	fd->clock.virtual_ns += 10001 * MS;
	elv_complete_one(fd);
	elv_assert_dispatched(fd, 1, 200, 1);
	elv_complete_one(fd);
	elv_assert_dispatched(fd, 2, 300, 1);
	elv_finish(fd, tb, 4);
}
END_TEST

/*
 * A look for an aged request that finds none changes nothing: the real
 * time batch still ends after fifo_batch requests, and the expired L
 * starts the next (as in expired_pos, here with a young best-effort
 * request waiting and aging short enough to look at every dispatch).
 */
START_TEST(test_prio_aged_look_leaves_batch_alone)
{
	struct fake_disk *fd = elv_stopped_disk(ELEVATOR);
	struct test_bio tb[23];
	unsigned int pos;

	tunable_store_ok(fd, "prio_aging_expire", "600");
	submit_prio(fd, &tb[0], REQ_OP_READ, 500, IOPRIO_CLASS_RT);
	submit_prio(fd, &tb[1], REQ_OP_READ, 0, IOPRIO_CLASS_RT);
	for (unsigned int i = 0; i < 20; i++)
		submit_prio(fd, &tb[2 + i], REQ_OP_READ, 510 + 10 * i, IOPRIO_CLASS_RT);
	fd->clock.virtual_ns += 501 * MS;
	submit_prio(fd, &tb[22], REQ_OP_READ, 9000, IOPRIO_CLASS_BE);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 22);
	for (pos = 0; pos < 22 && fd->events[pos].sector != 0; pos++)
		;
	ck_assert_uint_eq(pos, 16);
	fake_complete_batch(fd);
	elv_assert_dispatched(fd, 22, 9000, 1);
	elv_finish(fd, tb, 23);
}
END_TEST

/*
 * A request merged into another never completes: it counts as done
 * (dd_merged_requests, then the kernel's finish for it), or the real time
 * class would hold best effort back for ever.
 */
START_TEST(test_prio_merged_request_counts_done)
{
	struct fake_disk *fd = elv_stopped_disk(ELEVATOR);
	struct test_bio tb[4];

	fd->q->limits.nr_requests = 1;
	tbio_init(&tb[0], REQ_OP_READ, 100, 8, elv_buf);
	tbio_init(&tb[1], REQ_OP_READ, 116, 8, elv_buf);
	tbio_init(&tb[2], REQ_OP_READ, 108, 8, elv_buf);
	for (unsigned int i = 0; i < 3; i++) {
		tb[i].bio.bi_ioprio = IOPRIO_PRIO_VALUE(IOPRIO_CLASS_RT, 0);
		submit_bio(fd->q, &tb[i].bio);
	}
	submit_prio(fd, &tb[3], REQ_OP_READ, 500, IOPRIO_CLASS_BE);
	fake_start(fd);
	elv_assert_dispatched(fd, 0, 100, 24);
	elv_complete_one(fd);
	ck_assert_uint_eq(fd->nr_events, 2);
	elv_assert_dispatched(fd, 1, 500, 1);
	elv_finish(fd, tb, 4);
}
END_TEST

/* Switching away hands every class over, though none of them completed here. */
START_TEST(test_prio_switch_moves_every_class)
{
	struct fake_disk *fd = elv_stopped_disk(ELEVATOR);
	struct test_bio tb[3];
	char why[128];

	submit_prio(fd, &tb[0], REQ_OP_READ, 300, IOPRIO_CLASS_IDLE);
	submit_prio(fd, &tb[1], REQ_OP_READ, 200, IOPRIO_CLASS_BE);
	submit_prio(fd, &tb[2], REQ_OP_READ, 100, IOPRIO_CLASS_RT);
	ck_assert_int_eq(elevator_switch(fd->q, "noop", why, sizeof(why)), 0);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 3);
	elv_finish(fd, tb, 3);
}
END_TEST


/* ---- async_depth: scheduler tags kept from async requests and writes (multi-queue) ---- */

static const struct elv_tunable *dd_tunable(const struct elevator_queue *e, const char *name)
{
	for (const struct elv_tunable *t = e->type->tunables; t && t->name; t++)
		if (!strcmp(t->name, name))
			return t;
	ck_abort_msg("deadline has no tunable %s", name);
	return NULL;
}

/* What reading queue/iosched/async_depth shows, as a number. */
static long async_depth(const struct elevator_queue *e)
{
	char buf[32];

	ck_assert_int_gt(elv_tunable_text(e, dd_tunable(e, "async_depth"), buf, sizeof(buf)), 0);
	return strtol(buf, NULL, 10);
}

/* deadline over one hardware queue of one driver tag: everything else waits in deadline. */
static struct fake_mq *dd_mq(unsigned int nr_requests)
{
	struct fake_mq_opts o = { .elevator = ELEVATOR, .nr_hw_queues = 1, .queue_depth = 1,
				  .nr_requests = nr_requests };

	return fake_mq_new(&o);
}

/*
 * Submit n one-sector bios, the first nr_first of first_op with
 * first_flags and the rest of then_op with then_flags: the scheduler tags
 * they hold then (the rest wait for one).
 */
static unsigned int dd_tags_taken(struct fake_mq *fm, struct test_bio *tb, unsigned int n,
				  enum req_op first_op, unsigned int first_flags, unsigned int nr_first,
				  enum req_op then_op, unsigned int then_flags)
{
	unsigned int taken;

	for (unsigned int i = 0; i < n; i++) {
		enum req_op op = i < nr_first ? first_op : then_op;

		tbio_init(&tb[i], op, (sector_t)i * 16, 1, op_has_data(op) ? elv_buf : NULL);
		tb[i].bio.bi_flags = i < nr_first ? first_flags : then_flags;
		fake_mq_submit(fm, &tb[i].bio, 0);
	}
	taken = blk_mq_tags_in_use(&fm->q->mq->sched_tags);
	fake_mq_drain(fm);
	elv_assert_ended(tb, n);
	return taken;
}

/* dd_depth_updated (Linux 6.10 on): the full depth, nr_requests; on a 2.6 queue too. */
START_TEST(test_async_depth_default)
{
	struct fake_mq *fm = dd_mq(8);
	struct fake_disk *fd = fake_disk_new(ELEVATOR);

	ck_assert_int_eq(async_depth(fm->q->elevator), 8);
	ck_assert_int_eq(async_depth(fd->q->elevator), fd->q->limits.nr_requests);
	fake_mq_free(fm);
	fake_disk_free(fd);
}
END_TEST

/* From 1 to nr_requests (the scheduler tags); anything else is EINVAL, the value kept. */
START_TEST(test_async_depth_store_bounds)
{
	static const char *const bad[] = { "0", "9", "-1", "", "abc", "3abc", "1.5", "0x4",
					   "2147483648", "99999999999999999999999" };
	struct fake_mq *fm = dd_mq(8);
	struct elevator_queue *e = fm->q->elevator;

	ck_assert_int_eq(elv_tunable_store(e, "async_depth", "5"), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(elv_tunable_store(e, "async_depth", bad[i]) == -EINVAL,
			      "async_depth accepted \"%s\"", bad[i]);
		ck_assert_int_eq(async_depth(e), 5);
	}
	ck_assert_int_eq(elv_tunable_store(e, "async_depth", "1"), 0);
	ck_assert_int_eq(async_depth(e), 1);
	ck_assert_int_eq(elv_tunable_store(e, "async_depth", "8\n"), 0);
	ck_assert_int_eq(async_depth(e), 8);
	fake_mq_free(fm);
}
END_TEST

static void dd_mq_nr_requests(struct fake_mq *fm, unsigned int nr)
{
	blk_queue_lock(fm->q);
	ck_assert_int_eq(blk_mq_update_nr_requests(fm->q, nr), 0);
	blk_queue_unlock(fm->q);
	blk_mq_kick_marked(fm->q);
}

/*
 * dd_depth_updated: nr_requests written sets async_depth to the new depth,
 * whatever it had been set to, and the new depth bounds what async_depth
 * takes; on a 2.6 queue too.  The writes' tags follow: 3 of 8 with
 * async_depth 3, all 12 once nr_requests is 12.
 */
START_TEST(test_async_depth_follows_nr_requests)
{
	static struct test_bio tb[12];
	struct fake_mq *fm = dd_mq(8);
	struct fake_disk *fd = fake_disk_new(ELEVATOR);
	struct elevator_queue *e = fm->q->elevator;

	ck_assert_int_eq(elv_tunable_store(e, "async_depth", "3"), 0);
	ck_assert_uint_eq(dd_tags_taken(fm, tb, 8, REQ_OP_WRITE, 0, 8, REQ_OP_WRITE, 0), 3);
	dd_mq_nr_requests(fm, 12);
	ck_assert_int_eq(async_depth(e), 12);
	ck_assert_uint_eq(dd_tags_taken(fm, tb, 12, REQ_OP_WRITE, 0, 12, REQ_OP_WRITE, 0), 12);
	ck_assert_int_eq(elv_tunable_store(e, "async_depth", "11"), 0);
	dd_mq_nr_requests(fm, 4);
	ck_assert_int_eq(async_depth(e), 4);
	ck_assert_int_eq(elv_tunable_store(e, "async_depth", "5"), -EINVAL);
	ck_assert_int_eq(async_depth(e), 4);
	dd_mq_nr_requests(fm, 4); /* unchanged: async_depth as set */
	ck_assert_int_eq(elv_tunable_store(e, "async_depth", "2"), 0);
	dd_mq_nr_requests(fm, 4);
	ck_assert_int_eq(async_depth(e), 2);

	ck_assert_int_eq(elv_tunable_store(fd->q->elevator, "async_depth", "3"), 0);
	blk_queue_lock(fd->q);
	blk_queue_update_nr_requests(fd->q, fd->q->limits.nr_requests * 2);
	blk_queue_unlock(fd->q);
	ck_assert_int_eq(async_depth(fd->q->elevator), fd->q->limits.nr_requests);
	fake_mq_free(fm);
	fake_disk_free(fd);
}
END_TEST

/*
 * mq-deadline's dd_limit_depth: with async_depth 3 of 8 scheduler tags,
 * writes (sync ones too) and discards hold at most 3 and wait for the
 * rest; reads are never held back, and take the 5 left.  At the default
 * every write may take a tag.
 */
START_TEST(test_async_depth_caps_async)
{
	static struct test_bio tb[8];
	struct fake_mq *fm = dd_mq(8);

	ck_assert_uint_eq(dd_tags_taken(fm, tb, 8, REQ_OP_WRITE, 0, 8, REQ_OP_WRITE, 0), 8);
	ck_assert_int_eq(elv_tunable_store(fm->q->elevator, "async_depth", "3"), 0);
	ck_assert_uint_eq(dd_tags_taken(fm, tb, 8, REQ_OP_WRITE, 0, 8, REQ_OP_WRITE, 0), 3);
	ck_assert_uint_eq(dd_tags_taken(fm, tb, 8, REQ_OP_WRITE, REQ_SYNC, 8, REQ_OP_WRITE, 0), 3);
	ck_assert_uint_eq(dd_tags_taken(fm, tb, 8, REQ_OP_DISCARD, 0, 8, REQ_OP_DISCARD, 0), 3);
	ck_assert_uint_eq(dd_tags_taken(fm, tb, 8, REQ_OP_WRITE, 0, 3, REQ_OP_READ, 0), 8);
	ck_assert_uint_eq(dd_tags_taken(fm, tb, 8, REQ_OP_READ, 0, 8, REQ_OP_READ, 0), 8);
	fake_mq_free(fm);
}
END_TEST

/* Queue lock held: the writes waiting for a scheduler tag are the last ones submitted, in order. */
static unsigned int dd_waiting_in_order(struct fake_mq *fm, sector_t last)
{
	struct request *rq;
	unsigned int n = 0;
	sector_t expect = 0;

	TAILQ_FOREACH(rq, &fm->q->mq->tag_wait, queuelist) {
		if (n++)
			ck_assert_uint_eq(blk_rq_pos(rq), expect);
		expect = blk_rq_pos(rq) + 16;
	}
	if (n)
		ck_assert_uint_eq(expect, last + 16);
	return n;
}

/*
 * Tag waits pass by class: with async_depth 3 of 8 scheduler tags and 8
 * writes waiting behind the 3 that hold one, a read takes one of the 5
 * free tags at once.  The writes keep their order: those left waiting are
 * always the last submitted.
 */
START_TEST(test_read_passes_writes_held_by_async_depth)
{
	static struct test_bio tb[12];
	struct fake_mq *fm = dd_mq(8);
	unsigned int waiting;

	ck_assert_int_eq(elv_tunable_store(fm->q->elevator, "async_depth", "3"), 0);
	for (unsigned int i = 0; i < 11; i++) {
		tbio_init(&tb[i], REQ_OP_WRITE, (sector_t)i * 16, 1, elv_buf);
		fake_mq_submit(fm, &tb[i].bio, 0);
	}
	ck_assert_uint_eq(blk_mq_tags_in_use(&fm->q->mq->sched_tags), 3);
	tbio_init(&tb[11], REQ_OP_READ, 4096, 1, elv_buf);
	fake_mq_submit(fm, &tb[11].bio, 0);
	ck_assert_msg(blk_mq_tags_in_use(&fm->q->mq->sched_tags) == 4,
		      "the read waits behind writes held back by async_depth");
	do {
		blk_queue_lock(fm->q);
		waiting = dd_waiting_in_order(fm, 10 * 16);
		blk_queue_unlock(fm->q);
	} while (waiting && fake_mq_complete_first(fm, 0));
	fake_mq_drain(fm);
	elv_assert_ended(tb, 12);
	fake_mq_free(fm);
}
END_TEST

static const struct tunable_case tunables[] = {
	{ "read_expire", 500, 0, INT_MAX },
	{ "write_expire", 5000, 0, INT_MAX },
	{ "writes_starved", 2, 0, INT_MAX },
	{ "fifo_batch", 16, 0, INT_MAX },
	{ "front_merges", 1, 0, 1 },
	{ "prio_aging_expire", 10000, 0, INT_MAX },
};

#define NR_TUNABLES (sizeof(tunables) / sizeof(tunables[0]))

static Suite *deadline_suite(void)
{
	Suite *s = suite_create("deadline");
	TCase *order = tcase_create("order");
	TCase *merge = tcase_create("merge");
	TCase *prio = tcase_create("prio");
	TCase *mq = tcase_create("async_depth");
	TCase *tune;

	tcase_add_test(order, test_batch_ascending_sectors);
	tcase_add_test(order, test_batch_continues_upward);
	tcase_add_test(order, test_batch_limit_reevaluates_direction);
	tcase_add_test(order, test_batch_limit_then_fifo_head);
	tcase_add_test(order, test_fifo_batch_tunable_honoured);
	tcase_add_test(order, test_read_fifo_expiry);
	tcase_add_test(order, test_read_expire_default);
	tcase_add_test(order, test_write_expire_default);
	tcase_add_test(order, test_reads_first_writes_not_starved);
	tcase_add_test(order, test_writes_starved_tunable_honoured);
	tcase_add_test(order, test_expired_at_deadline_exactly);
	tcase_add_test(order, test_batch_after_other_direction_starts_at_fifo_head);
	tcase_add_test(order, test_expired_read_waits_for_due_write_batch);
	tcase_add_test(order, test_expired_reads_one_per_batch_start);
	tcase_add_test(order, test_closed_loop_read_wait_bound);
	suite_add_tcase(s, order);

	tcase_add_test(prio, test_prio_classes_in_order);
	tcase_add_test(prio, test_prio_in_flight_holds_lower_class);
	tcase_add_test(prio, test_prio_aging_default);
	tcase_add_test(prio, test_prio_aging_tunable_in_ms);
	tcase_add_test(prio, test_prio_aged_best_effort_before_idle);
	tcase_add_test(prio, test_prio_aged_look_leaves_batch_alone);
	tcase_add_test(prio, test_prio_merged_request_counts_done);
	tcase_add_test(prio, test_prio_switch_moves_every_class);
	suite_add_tcase(s, prio);

	tcase_add_test(merge, test_front_merge);
	tcase_add_test(merge, test_front_merges_off);
	tcase_add_test(merge, test_merged_requests_keep_oldest_fifo_place);
	suite_add_tcase(s, merge);

	tcase_add_test(mq, test_async_depth_default);
	tcase_add_test(mq, test_async_depth_store_bounds);
	tcase_add_test(mq, test_async_depth_caps_async);
	tcase_add_test(mq, test_async_depth_follows_nr_requests);
	tcase_add_test(mq, test_read_passes_writes_held_by_async_depth);
	suite_add_tcase(s, mq);

	tune = tunable_tests("deadline", tunables, NR_TUNABLES);
	tcase_add_test(tune, test_expire_tunables_in_ms);
	suite_add_tcase(s, tune);
	return s;
}

int main(void)
{
	return fake_run_suite(deadline_suite());
}
