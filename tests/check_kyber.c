/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_kyber.c - the kyber elevator: tokens per domain, batches in round
 * robin, latency histograms and the depth they scale, on a virtual clock;
 * and read latency under a write flood on the ssd model, against none.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "elv_harness.h"
#include "fake_mq.h"
#include "stack_harness.h"
#include "tunable_test.h"

#define US 1000ull

#define POOL 1024
static struct test_bio pool[POOL];
static sector_t next_free_sector;

/*
 * A kyber queue set up under a queue depth of depth, then given a depth
 * of 1024 so that only kyber's tokens hold requests back; stopped.
 */
static struct fake_disk *kyber_disk(unsigned int depth)
{
	struct fake_disk *fd = elv_disk("none", false, depth);

	elv_switch(fd, "kyber");
	fd->q->limits.nr_requests = 1024;
	fd->stopped = true;
	next_free_sector = 0;
	return fd;
}

static void switch_to(struct fake_disk *fd, const char *name)
{
	elv_switch(fd, name);
	ck_assert(!fd->q->switch_pending);
}

/* One sector (a range, for discard and write zeroes), never next to another: none merge. */
static void submit(struct fake_disk *fd, struct test_bio *tb, enum req_op op)
{
	sector_t sector = next_free_sector;

	next_free_sector = (next_free_sector + 16) % (1u << 24);
	tbio_init(tb, op, sector, 1, op_has_data(op) ? elv_buf : NULL);
	submit_bio(fd->q, &tb->bio);
}

static unsigned int nr_dispatched_op(const struct fake_disk *fd, enum req_op op)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < fd->nr_events; i++)
		n += fd->events[i].op == op;
	return n;
}

/* Submit n of each op of ops[] into pool, in turn. */
static void submit_each(struct fake_disk *fd, const enum req_op *ops, const unsigned int *n,
			unsigned int nr_ops)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < nr_ops; i++)
		for (unsigned int j = 0; j < n[i]; j++) {
			ck_assert_uint_lt(k, POOL);
			submit(fd, &pool[k++], ops[i]);
		}
}

static void finish(struct fake_disk *fd, unsigned int nr_bios)
{
	fake_start(fd);
	fake_complete_all(fd);
	elv_assert_ended(pool, nr_bios);
	fake_disk_free(fd);
}

/* The first request out, of op, still in the driver. */
static struct request *first_out(struct fake_disk *fd, enum req_op op)
{
	struct request *rq;

	TAILQ_FOREACH(rq, &fd->dispatched, queuelist)
		if (rq->cmd_op == op)
			return rq;
	ck_abort_msg("no request of op %d is out", op);
	return NULL;
}

static const enum req_op four_ops[] = { REQ_OP_READ, REQ_OP_WRITE, REQ_OP_DISCARD,
					REQ_OP_WRITE_ZEROES };

/*
 * kyber_depth and kyber_get_domain_token: a domain has 256 (read), 128
 * (write), 64 (discard), 16 (other) requests out at most; the completed
 * hook gives the token back, and the core runs the queue after a
 * completion, so the next request of that domain goes at once.
 */
START_TEST(test_tokens_per_domain)
{
	static const unsigned int n[] = { 300, 200, 100, 30 };
	struct fake_disk *fd = kyber_disk(1024);

	submit_each(fd, four_ops, n, 4);
	fake_start(fd);
	ck_assert_uint_eq(nr_dispatched_op(fd, REQ_OP_READ), 256);
	ck_assert_uint_eq(nr_dispatched_op(fd, REQ_OP_WRITE), 128);
	ck_assert_uint_eq(nr_dispatched_op(fd, REQ_OP_DISCARD), 64);
	ck_assert_uint_eq(nr_dispatched_op(fd, REQ_OP_WRITE_ZEROES), 16);

	/* a token back: one more of that domain, none of another */
	fake_complete(fd, first_out(fd, REQ_OP_READ), 0, 1);
	ck_assert_uint_eq(nr_dispatched_op(fd, REQ_OP_READ), 257);
	ck_assert_uint_eq(fd->nr_events, 256 + 128 + 64 + 16 + 1);
	fake_complete(fd, first_out(fd, REQ_OP_WRITE_ZEROES), 0, 1);
	ck_assert_uint_eq(nr_dispatched_op(fd, REQ_OP_WRITE_ZEROES), 17);
	ck_assert_uint_eq(fd->nr_events, 256 + 128 + 64 + 16 + 2);
	finish(fd, 630);
}
END_TEST

/*
 * n[] of each of the four ops submitted to fd, stopped: the reads, writes,
 * discards and zeroings kyber lets out at once are want[]; then all end.
 */
static void assert_tokens(struct fake_disk *fd, const unsigned int *n, const unsigned int *want)
{
	submit_each(fd, four_ops, n, 4);
	fake_start(fd);
	for (unsigned int i = 0; i < 4; i++)
		ck_assert_msg(nr_dispatched_op(fd, four_ops[i]) == want[i], "op %d: %u out, not %u",
			      four_ops[i], nr_dispatched_op(fd, four_ops[i]), want[i]);
	finish(fd, n[0] + n[1] + n[2] + n[3]);
}

/* kyber_depth, bounded by the queue's depth when kyber was set up. */
START_TEST(test_tokens_bounded_by_queue_depth)
{
	static const unsigned int n[] = { 100, 100, 100, 30 }, want[] = { 40, 40, 40, 16 };

	assert_tokens(kyber_disk(40), n, want);
}
END_TEST

/* queue/nr_requests written, as the control tree does: kyber is told. */
static void set_nr_requests(struct fake_disk *fd, unsigned int nr)
{
	blk_queue_lock(fd->q);
	blk_queue_update_nr_requests(fd->q, nr);
	blk_queue_unlock(fd->q);
}

/*
 * kyber_depth_updated: domains at their most tokens follow the queue's
 * depth, up to kyber_depth when it is raised, and down to it when it is
 * lowered (the queue's own bound put back out of the way by hand).
 */
START_TEST(test_tokens_follow_nr_requests)
{
	static const unsigned int n[] = { 300, 200, 100, 30 }, raised[] = { 256, 128, 64, 16 },
				  lowered[] = { 20, 20, 20, 16 };
	struct fake_disk *fd = kyber_disk(40);

	set_nr_requests(fd, 1024);
	assert_tokens(fd, n, raised);
	fd = kyber_disk(1024);
	set_nr_requests(fd, 20);
	fd->q->limits.nr_requests = 1024; /* kyber's tokens alone hold requests back */
	assert_tokens(fd, n, lowered);
}
END_TEST

static void assert_runs(const struct fake_disk *fd, const enum req_op *ops, const unsigned int *len,
			unsigned int nr_runs)
{
	unsigned int i = 0;

	for (unsigned int r = 0; r < nr_runs; r++)
		for (unsigned int j = 0; j < len[r]; j++, i++) {
			ck_assert_uint_lt(i, fd->nr_events);
			ck_assert_msg(fd->events[i].op == ops[r],
				      "dispatch %u is op %d, expected %d (run %u)", i,
				      fd->events[i].op, ops[r], r);
		}
	ck_assert_uint_eq(fd->nr_events, i);
}

/*
 * kyber_dispatch_request and kyber_batch_size: batches of 16 reads, 8
 * writes, 1 discard, 1 other, in turn, a domain with nothing skipped;
 * within a domain, first in first out (sectors go down here: no sorting).
 */
START_TEST(test_batches_round_robin)
{
	static const enum req_op ops[] = {
		REQ_OP_READ,  REQ_OP_WRITE, REQ_OP_DISCARD, REQ_OP_WRITE_ZEROES,
		REQ_OP_READ,  REQ_OP_WRITE, REQ_OP_DISCARD, REQ_OP_WRITE_ZEROES,
		REQ_OP_READ,  REQ_OP_WRITE, REQ_OP_DISCARD, REQ_OP_WRITE_ZEROES,
		REQ_OP_WRITE, REQ_OP_WRITE_ZEROES,
	};
	static const unsigned int len[] = { 16, 8, 1, 1, 16, 8, 1, 1, 8, 8, 1, 1, 6, 2 };
	static const unsigned int max[] = { 40, 30, 3, 5 };
	struct fake_disk *fd = kyber_disk(1024);
	unsigned int k = 0;

	/* interleaved, newest sector lowest */
	next_free_sector = 1u << 20;
	for (unsigned int i = 0; i < 40; i++) {
		for (unsigned int j = 0; j < 4; j++) {
			if (i < max[j]) {
				next_free_sector -= 32;
				submit(fd, &pool[k++], four_ops[j]);
			}
		}
	}
	fake_start(fd);
	assert_runs(fd, ops, len, sizeof(len) / sizeof(len[0]));
	for (unsigned int i = 1; i < fd->nr_events; i++)
		if (fd->events[i].op == fd->events[i - 1].op)
			ck_assert_uint_lt(fd->events[i].sector, fd->events[i - 1].sector);
	finish(fd, k);
}
END_TEST

/*
 * kyber_dispatch_cur_domain and kyber_get_domain_token: a domain out of
 * tokens gives its turn away, and the round robin comes back to it when a
 * token returns, even in the middle of another domain's batch.
 */
START_TEST(test_domain_without_token_passes)
{
	static const unsigned int n[] = { 5, 5 };
	static const enum req_op ops[] = { REQ_OP_READ, REQ_OP_WRITE };
	static const unsigned int len[] = { 2, 2 };
	struct fake_disk *fd = kyber_disk(2);

	submit_each(fd, ops, n, 2);
	fake_start(fd);
	assert_runs(fd, ops, len, 2);
	fake_complete(fd, first_out(fd, REQ_OP_READ), 0, 1);
	ck_assert_uint_eq(fd->nr_events, 5);
	ck_assert_int_eq(fd->events[4].op, REQ_OP_READ);
	fake_complete(fd, first_out(fd, REQ_OP_WRITE), 0, 1);
	ck_assert_uint_eq(fd->nr_events, 6);
	ck_assert_int_eq(fd->events[5].op, REQ_OP_WRITE);
	finish(fd, 10);
}
END_TEST

/*
 * elevator_move under kyber: a switch empties the elevator through
 * dispatch_request, more requests than a domain has tokens, none in
 * flight: everything goes, nothing waits for a token that cannot return.
 */
START_TEST(test_switch_away_moves_more_than_tokens)
{
	static const unsigned int n[] = { 300, 20 };
	static const enum req_op ops[] = { REQ_OP_READ, REQ_OP_WRITE_ZEROES };
	struct fake_disk *fd = kyber_disk(1024);

	submit_each(fd, ops, n, 2);
	switch_to(fd, "none");
	ck_assert_ptr_null(fd->q->elevator);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 320);
	finish(fd, 320);
}
END_TEST

/*
 * kyber_finish_request: a token goes back to the instance that gave it,
 * once.  A request the driver gave back (requeued: not in flight, so no
 * bar to a switch) still holds one of the kyber it left; under a new kyber
 * it gives none back, and the new kyber's depth of 2 writes stays 2.  The
 * new kyber may well be set up where the old one was freed: its request
 * carries here what the old one would have left at that address.
 */
START_TEST(test_token_of_another_instance)
{
	struct fake_disk *fd = kyber_disk(2);
	struct request *rq;

	submit(fd, &pool[0], REQ_OP_WRITE);
	fake_start(fd);
	rq = fake_nth(fd, 0);
	TAILQ_REMOVE(&fd->dispatched, rq, queuelist);
	fd->nr_dispatched--;
	fd->stopped = true;
	blk_queue_lock(fd->q);
	blk_requeue_request(fd->q, rq);
	blk_queue_unlock(fd->q);
	switch_to(fd, "deadline");
	fd->q->limits.nr_requests = 2;
	switch_to(fd, "kyber");
	fd->q->limits.nr_requests = 1024;
	rq->elv_priv[0] = fd->q->elevator->elevator_data;

	for (unsigned int i = 1; i <= 4; i++)
		submit(fd, &pool[i], REQ_OP_WRITE);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 4); /* the requeued one, then two of the new */
	fd->stopped = true;
	fake_complete(fd, fake_nth(fd, 0), 0, 1); /* the requeued one: no token here */
	ck_assert_uint_eq(fd->nr_events, 4);
	fd->stopped = false;
	fake_complete(fd, fake_nth(fd, 0), 0, 1); /* one of the new: its token, one more */
	ck_assert_uint_eq(fd->nr_events, 5);
	finish(fd, 5);
}
END_TEST

/* A bio ending where a queued request of its domain starts joins its front. */
START_TEST(test_front_merge)
{
	struct fake_disk *fd = kyber_disk(1024);

	tbio_init(&pool[0], REQ_OP_READ, 100, 8, elv_buf);
	submit_bio(fd->q, &pool[0].bio);
	tbio_init(&pool[1], REQ_OP_READ, 500, 8, elv_buf);
	submit_bio(fd->q, &pool[1].bio);
	tbio_init(&pool[2], REQ_OP_READ, 92, 8, elv_buf);
	submit_bio(fd->q, &pool[2].bio);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 2);
	ck_assert_uint_eq(fd->events[0].sector, 92);
	ck_assert_uint_eq(fd->events[0].nr_sectors, 16);
	finish(fd, 3);
}
END_TEST

/*
 * n requests of op at once, held back wait ns, then out in rounds of at
 * most chunk that each take io ns: every one's I/O latency is io, its
 * total latency wait + io when n <= chunk.  Returns when the first ended.
 */
static uint64_t serve(struct fake_disk *fd, enum req_op op, unsigned int n, uint64_t wait,
		      uint64_t io, unsigned int chunk)
{
	uint64_t first = 0;

	ck_assert_uint_le(n, POOL);
	while (n) {
		unsigned int m = n < chunk ? n : chunk, out = fd->nr_events;

		for (unsigned int i = 0; i < m; i++)
			submit(fd, &pool[i], op);
		fd->clock.virtual_ns += wait;
		fake_start(fd);
		fd->stopped = true;
		ck_assert_uint_eq(fd->nr_events - out, m);
		fd->clock.virtual_ns += io;
		if (!first)
			first = fd->clock.virtual_ns;
		fake_complete_batch(fd);
		for (unsigned int i = 0; i < m; i++)
			ck_assert_int_eq(pool[i].ended, 1);
		n -= m;
	}
	return first;
}

/*
 * n requests of op queued at once, held back wait ns, then out in rounds
 * of whatever the tokens let go, each round taking io ns: the later rounds
 * wait longer in the queue.
 */
static void serve_queued(struct fake_disk *fd, enum req_op op, unsigned int n, uint64_t wait,
			 uint64_t io)
{
	ck_assert_uint_le(n, POOL);
	for (unsigned int i = 0; i < n; i++)
		submit(fd, &pool[i], op);
	fd->clock.virtual_ns += wait;
	while (fd->nr_dispatched || fd->q->nr_queued) {
		unsigned int out = fd->nr_events;

		fake_start(fd);
		fd->stopped = true;
		ck_assert_uint_gt(fd->nr_events, out);
		fd->clock.virtual_ns += io;
		fake_complete_batch(fd);
	}
	for (unsigned int i = 0; i < n; i++)
		ck_assert_int_eq(pool[i].ended, 1);
}

/*
 * How many writes kyber lets out at once now: 200 submitted, counted, then
 * all ended at this same time (latency 0).  Their completions arm the next
 * window, which ends 100 ms from now.
 */
static unsigned int write_depth(struct fake_disk *fd)
{
	unsigned int out = fd->nr_events, depth;

	for (unsigned int i = 0; i < 200; i++)
		submit(fd, &pool[i], REQ_OP_WRITE);
	fake_start(fd);
	depth = fd->nr_events - out;
	fake_complete_all(fd);
	fd->stopped = true;
	for (unsigned int i = 0; i < 200; i++)
		ck_assert_int_eq(pool[i].ended, 1);
	return depth;
}

/*
 * One 100 ms window: 500 reads of I/O latency read_io (queued for no
 * longer), 500 writes queued write_wait and served in write_io, in rounds
 * of the write depth (given); then the window's end, and the write depth
 * after it.
 */
static unsigned int window(struct fake_disk *fd, uint64_t read_io, uint64_t write_wait,
			   uint64_t write_io, unsigned int depth, bool queue_writes)
{
	uint64_t start = fd->clock.virtual_ns;

	serve(fd, REQ_OP_READ, 250, 0, read_io, 250);
	serve(fd, REQ_OP_READ, 250, 0, read_io, 250);
	if (queue_writes)
		serve_queued(fd, REQ_OP_WRITE, 500, write_wait, write_io);
	else
		for (unsigned int i = 0; i < 4; i++)
			serve(fd, REQ_OP_WRITE, 125, write_wait, write_io,
			      depth < 125 ? depth : 125);
	ck_assert_uint_lt(fd->clock.virtual_ns, start + 100 * MS);
	fd->clock.virtual_ns = start + 100 * MS;
	return write_depth(fd);
}

/* The write depth after one window with fresh tokens. */
static unsigned int depth_after(uint64_t read_io, uint64_t write_total)
{
	struct fake_disk *fd = kyber_disk(1024);
	unsigned int depth;

	write_depth(fd); /* the first window starts here */
	depth = window(fd, read_io, write_total / 2, write_total - write_total / 2, 128, false);
	fd->stopped = false;
	fake_disk_free(fd);
	return depth;
}

/*
 * add_latency_sample: a latency in (k/4, (k+1)/4] of the target lands in
 * bucket k, above 7/4 in the last; kyber_timer_fn then scales a domain's
 * depth by (p99 bucket + 1) / 4.  Reads at 2.4 ms (over their 2 ms
 * target) make the congestion; writes' total latency against 10 ms picks
 * the bucket.
 */
START_TEST(test_histogram_buckets)
{
	static const struct {
		uint64_t write_total;
		unsigned int depth;
	} c[] = {
		{ 0, 32 },
		{ 2500 * US, 32 },
		{ 2500 * US + 1, 64 },
		{ 5000 * US, 64 },
		{ 5000 * US + 1, 96 },
		{ 7500 * US, 96 },
		{ 7500 * US + 1, 128 },
		{ 20 * MS, 128 }, /* the last bucket: would double, clamped at the domain's 128 */
	};

	for (unsigned int i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		ck_assert_msg(depth_after(2400 * US, c[i].write_total) == c[i].depth,
			      "writes of %llu ns: depth %u, expected %u",
			      (unsigned long long)c[i].write_total,
			      depth_after(2400 * US, c[i].write_total), c[i].depth);
}
END_TEST

/*
 * kyber_timer_fn: a domain is scaled by its p99, not its median nor its
 * p90: with 25 writes of 700 in the last bucket (3.6%) the depth stays
 * (doubled, clamped); with 4 of 700 (0.6%) the p99 is in bucket 0, and
 * the depth goes down to a quarter.
 */
START_TEST(test_scaled_by_p99)
{
	for (unsigned int slow = 4; slow <= 25; slow += 21) {
		struct fake_disk *fd = kyber_disk(1024);
		uint64_t start;

		write_depth(fd);
		start = fd->clock.virtual_ns;
		serve(fd, REQ_OP_READ, 250, 0, 2400 * US, 250);
		serve(fd, REQ_OP_READ, 250, 0, 2400 * US, 250);
		/* with the 200 of write_depth: 700 writes, slow of them slow */
		serve(fd, REQ_OP_WRITE, 500 - slow, 0, 100 * US, 125);
		serve(fd, REQ_OP_WRITE, slow, 0, 20 * MS, 125);
		fd->clock.virtual_ns = start + 100 * MS;
		ck_assert_uint_eq(write_depth(fd), slow < 7 ? 32 : 128);
		fd->stopped = false;
		fake_disk_free(fd);
	}
}
END_TEST

/* 500 reads of I/O latency read_io, and writes of 1 ms in rounds of 125, in a window of 100 ms. */
static unsigned int reads_window(struct fake_disk *fd, uint64_t read_io, unsigned int nr_writes)
{
	uint64_t start = fd->clock.virtual_ns;

	serve(fd, REQ_OP_READ, 250, 0, read_io, 250);
	serve(fd, REQ_OP_READ, 250, 0, read_io, 250);
	for (unsigned int i = 0; i < nr_writes; i += 125)
		serve(fd, REQ_OP_WRITE, 125, 0, 1 * MS, 125);
	fd->clock.virtual_ns = start + 100 * MS;
	return write_depth(fd);
}

/*
 * kyber_timer_fn: a domain with too few samples in the window congestion
 * comes in is scaled by the p99 it had last, once.  Writes have a p99 of
 * bucket 0 in a quiet window; in the next two, congested, they have only
 * the 200 of write_depth: the first shrinks them to a quarter, the second
 * leaves them.
 */
START_TEST(test_last_p99_stands_in_once)
{
	struct fake_disk *fd = kyber_disk(1024);

	write_depth(fd);
	ck_assert_uint_eq(reads_window(fd, 500 * US, 500), 128);
	ck_assert_uint_eq(reads_window(fd, 2400 * US, 0), 32);
	ck_assert_uint_eq(reads_window(fd, 2400 * US, 0), 32);
	fd->stopped = false;
	fake_disk_free(fd);
}
END_TEST

/*
 * kyber_timer_fn: congestion is an I/O latency p90 above the target, the
 * target itself still good (bucket 3); without it a domain within its own
 * target keeps its depth.
 */
START_TEST(test_congestion_at_target)
{
	ck_assert_uint_eq(depth_after(2000 * US, 1 * MS), 128);
	ck_assert_uint_eq(depth_after(2000 * US + 1, 1 * MS), 32);
}
END_TEST

/*
 * kyber_timer_fn: congestion is judged on the I/O latency (dispatch to
 * end), not the total: reads that waited long in the queue but were
 * served fast make none.
 */
START_TEST(test_congestion_is_io_latency)
{
	struct fake_disk *fd = kyber_disk(1024);
	uint64_t start;

	write_depth(fd);
	start = fd->clock.virtual_ns;
	serve(fd, REQ_OP_READ, 250, 20 * MS, 100 * US, 250);
	serve(fd, REQ_OP_READ, 250, 20 * MS, 100 * US, 250);
	for (unsigned int i = 0; i < 4; i++)
		serve(fd, REQ_OP_WRITE, 125, 0, 1 * MS, 125);
	fd->clock.virtual_ns = start + 100 * MS;
	ck_assert_uint_eq(write_depth(fd), 128);
	fd->stopped = false;
	fake_disk_free(fd);
}
END_TEST

/*
 * calculate_percentile: fewer than 500 samples (within a second) give no
 * percentile: 499 reads over target are no congestion yet, 500 are.
 */
START_TEST(test_percentile_needs_500_samples)
{
	for (unsigned int nr_reads = 499; nr_reads <= 500; nr_reads++) {
		struct fake_disk *fd = kyber_disk(1024);
		uint64_t start;

		write_depth(fd);
		start = fd->clock.virtual_ns;
		serve(fd, REQ_OP_READ, nr_reads, 0, 2400 * US, 256);
		for (unsigned int i = 0; i < 4; i++)
			serve(fd, REQ_OP_WRITE, 125, 0, 1 * MS, 125);
		fd->clock.virtual_ns = start + 100 * MS;
		ck_assert_uint_eq(write_depth(fd), nr_reads < 500 ? 128 : 32);
		fd->stopped = false;
		fake_disk_free(fd);
	}
}
END_TEST

/*
 * calculate_percentile: with fewer than 500 samples a percentile comes a
 * second after the first look that found too few: 300 reads over target
 * are no congestion 999 ms after it, and are one at the first window end
 * past the second.
 */
START_TEST(test_percentile_after_a_second)
{
	struct fake_disk *fd = kyber_disk(1024);
	uint64_t start, first_look;

	write_depth(fd);
	start = fd->clock.virtual_ns;
	serve(fd, REQ_OP_READ, 250, 0, 2400 * US, 250);
	serve(fd, REQ_OP_READ, 50, 0, 2400 * US, 250);
	for (unsigned int i = 0; i < 4; i++)
		serve(fd, REQ_OP_WRITE, 125, 0, 1 * MS, 125);
	first_look = fd->clock.virtual_ns = start + 100 * MS;
	ck_assert_uint_eq(write_depth(fd), 128);
	fd->clock.virtual_ns = first_look + 999 * MS;
	ck_assert_uint_eq(write_depth(fd), 128);
	fd->clock.virtual_ns += 100 * MS;
	ck_assert_uint_eq(write_depth(fd), 32);
	fd->stopped = false;
	fake_disk_free(fd);
}
END_TEST

/*
 * kyber_completed_request and kyber_timer_fn: the first completion arms
 * the timer; the window ends 100 ms later, not before.
 */
START_TEST(test_window_is_100ms)
{
	struct fake_disk *fd = kyber_disk(1024);
	uint64_t first;

	first = serve(fd, REQ_OP_READ, 250, 0, 2400 * US, 250);
	/* kyber asks the core to run the queue then: the timer may free tokens */
	ck_assert_uint_eq(fd->q->dispatch_at, first + 100 * MS);
	serve(fd, REQ_OP_READ, 250, 0, 2400 * US, 250);
	for (unsigned int i = 0; i < 4; i++)
		serve(fd, REQ_OP_WRITE, 125, 0, 1 * MS, 125);
	fd->clock.virtual_ns = first + 100 * MS - 1;
	ck_assert_uint_eq(write_depth(fd), 128);
	fd->clock.virtual_ns = first + 100 * MS;
	ck_assert_uint_eq(write_depth(fd), 32);
	fd->stopped = false;
	fake_disk_free(fd);
}
END_TEST

/*
 * kyber_timer_fn and kyber_resize_domain: while reads miss their target,
 * writes within theirs shrink by (p99 + 1) / 4 a window, never below one
 * token; once reads are fine, writes that now miss their own target (they
 * wait for tokens) grow back, doubling, up to their 128.
 */
START_TEST(test_depth_shrinks_and_grows_back)
{
	static const unsigned int shrink[] = { 32, 8, 2, 1, 1 };
	static const unsigned int grow[] = { 2, 4, 8, 16, 32, 64, 128, 128 };
	struct fake_disk *fd = kyber_disk(1024);
	unsigned int depth = write_depth(fd);

	ck_assert_uint_eq(depth, 128);
	for (unsigned int i = 0; i < sizeof(shrink) / sizeof(shrink[0]); i++) {
		depth = window(fd, 2400 * US, 0, 100 * US, depth, false);
		ck_assert_uint_eq(depth, shrink[i]);
	}
	for (unsigned int i = 0; i < sizeof(grow) / sizeof(grow[0]); i++) {
		depth = window(fd, 500 * US, 20 * MS, 10 * US, depth, true);
		ck_assert_uint_eq(depth, grow[i]);
	}
	fd->stopped = false;
	fake_disk_free(fd);
}
END_TEST

/*
 * kyber_depth_updated with a domain a congested window scaled down: writes
 * at 32 of their 128 stay at 32 when nr_requests is raised, are held to a
 * lowered 16, and are back at 32, not 128, when it is raised again.
 */
START_TEST(test_scaled_depth_through_nr_requests)
{
	struct fake_disk *fd = kyber_disk(1024);
	unsigned int depth = write_depth(fd);

	ck_assert_uint_eq(depth, 128);
	ck_assert_uint_eq(window(fd, 2400 * US, 0, 100 * US, depth, false), 32);
	set_nr_requests(fd, 2048);
	ck_assert_uint_eq(write_depth(fd), 32);
	set_nr_requests(fd, 16);
	fd->q->limits.nr_requests = 1024; /* kyber's tokens alone hold requests back */
	ck_assert_uint_eq(write_depth(fd), 16);
	fd->q->limits.nr_requests = 16;
	set_nr_requests(fd, 1024);
	ck_assert_uint_eq(write_depth(fd), 32);
	fd->stopped = false;
	fake_disk_free(fd);
}
END_TEST

/*
 * kyber_timer_fn: a domain with good latency and no congestion keeps its
 * depth, shrunk or not.
 */
START_TEST(test_good_latency_keeps_depth)
{
	struct fake_disk *fd = kyber_disk(1024);
	unsigned int depth = write_depth(fd);

	depth = window(fd, 2400 * US, 0, 100 * US, depth, false);
	ck_assert_uint_eq(depth, 32);
	for (unsigned int i = 0; i < 3; i++)
		ck_assert_uint_eq(window(fd, 500 * US, 0, 100 * US, depth, false), 32);
	fd->stopped = false;
	fake_disk_free(fd);
}
END_TEST

/*
 * KYBER_LAT_SHOW_STORE: the targets are in nanoseconds, and the histogram
 * follows them: reads at 2.4 ms are fine against a 3 ms target, writes at
 * 1 ms are in the 4th bucket of a 1.2 ms one.
 */
START_TEST(test_targets_in_nsec)
{
	struct fake_disk *fd = kyber_disk(1024);

	tunable_store_ok(fd, "read_lat_nsec", "3000000");
	write_depth(fd);
	ck_assert_uint_eq(window(fd, 2400 * US, 0, 1 * MS, 128, false), 128);
	tunable_store_ok(fd, "read_lat_nsec", "2000000");
	tunable_store_ok(fd, "write_lat_nsec", "1200000");
	ck_assert_uint_eq(window(fd, 2400 * US, 0, 1 * MS, 128, false), 128);
	tunable_store_ok(fd, "write_lat_nsec", "10000000");
	ck_assert_uint_eq(window(fd, 2400 * US, 0, 1 * MS, 128, false), 32);
	fd->stopped = false;
	fake_disk_free(fd);
}
END_TEST

/*
 * The published result, on the ssd model and a virtual clock: 32 writers
 * each keep one 64 KiB write out (a flood that keeps the disk's 32 slots
 * and 8 channels busy), while a 4 KiB read arrives every 150 us.  Without
 * an elevator a read waits behind the writes in the queue and in the
 * disk; kyber sends it past the queued writes and cuts the writes' depth
 * until reads meet their target.
 */
#define FLOOD_WRITERS 32
#define FLOOD_WRITE_SECTORS 128
#define FLOOD_READ_EVERY (150 * US)
#define FLOOD_START (1000 * MS)	 /* the clock's origin */
#define FLOOD_WARMUP (2000 * MS) /* kyber's windows have scaled the depth by then */
#define FLOOD_END (FLOOD_START + 5000 * MS)
#define FLOOD_READS 1024	    /* reads out at once, at most */
#define FLOOD_CAPACITY (1ull << 21) /* 1 GiB */
#define NEVER UINT64_MAX

struct flood_bio {
	struct bio bio;
	struct bio_vec vec;
	struct flood *f;
	uint64_t submitted;
	bool busy;
};

struct flood {
	struct blk_clock clock;
	struct request_queue *q;
	struct dev_stack stack;
	struct flood_bio writer[FLOOD_WRITERS];
	struct flood_bio reader[FLOOD_READS];
	unsigned int outstanding;
	uint64_t rng;
	uint64_t *lat; /* read latencies after the warm-up */
	size_t nr_lat, alloc_lat;
	uint64_t writes_done;
	void *buf;
};

struct flood_result {
	uint64_t p50, p99;
	uint64_t writes; /* completed after the warm-up */
};

static uint64_t flood_now(const struct flood *f)
{
	return f->clock.virtual_ns;
}

static uint64_t flood_random(struct flood *f, uint64_t n)
{
	f->rng = f->rng * 6364136223846793005ull + 1442695040888963407ull;
	return (f->rng >> 33) % n;
}

static void flood_request_fn(struct request_queue *q)
{
	struct flood *f = q->queuedata;
	struct request *rq;

	while (dev_can_take(f->stack.top) && (rq = blk_fetch_request(q)))
		dev_submit(f->stack.top, rq);
}

static void flood_end_io(struct bio *bio, int error)
{
	struct flood_bio *fb = bio->bi_private;
	struct flood *f = fb->f;

	ck_assert_int_eq(error, 0);
	fb->busy = false;
	f->outstanding--;
	if (flood_now(f) < FLOOD_START + FLOOD_WARMUP)
		return;
	if (bio->bi_op == REQ_OP_WRITE) {
		f->writes_done++;
		return;
	}
	if (f->nr_lat == f->alloc_lat) {
		f->alloc_lat = f->alloc_lat ? 2 * f->alloc_lat : 4096;
		f->lat = realloc(f->lat, f->alloc_lat * sizeof(*f->lat));
		ck_assert_ptr_nonnull(f->lat);
	}
	f->lat[f->nr_lat++] = flood_now(f) - fb->submitted;
}

static void flood_submit(struct flood *f, struct flood_bio *fb, enum req_op op,
			 unsigned int sectors)
{
	sector_t sector = flood_random(f, FLOOD_CAPACITY / sectors) * sectors;

	fb->vec = (struct bio_vec){f->buf, (size_t)sectors << SECTOR_SHIFT };
	bio_init(&fb->bio, op, sector, sectors << SECTOR_SHIFT, &fb->vec, 1);
	fb->bio.bi_end_io = flood_end_io;
	fb->bio.bi_private = fb;
	fb->f = f;
	fb->submitted = flood_now(f);
	fb->busy = true;
	f->outstanding++;
	submit_bio(f->q, &fb->bio);
}

static void flood_setup(struct flood *f, const char *elevator)
{
	static const char *const specs[] = { "model:ssd" };
	struct dev_limits lim = { .capacity = FLOOD_CAPACITY };
	char why[256] = "";

	memset(f, 0, sizeof(*f));
	f->rng = 42;
	blk_virtual_clock_init(&f->clock, FLOOD_START);
	f->q = blk_init_queue(flood_request_fn, NULL, &f->clock);
	ck_assert_ptr_nonnull(f->q);
	f->q->queuedata = f;
	ck_assert_msg(sh_stack_open(&f->stack, f->q, specs, 1, &dev_sim_ops, NULL, &lim, why,
				     sizeof(why)) == 0,
		      "%s", why);
	blk_queue_set_pdu_size(f->q, dev_stack_pdu_size(&f->stack));
	ck_assert_int_eq(elevator_init(f->q, elevator), 0);
	ck_assert_int_eq(posix_memalign(&f->buf, 4096, FLOOD_WRITE_SECTORS << SECTOR_SHIFT), 0);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Event to event on the virtual clock until FLOOD_END, then until everything ended. */
static struct flood_result flood_run(const char *elevator)
{
	struct flood *f = malloc(sizeof(*f));
	uint64_t next_read = FLOOD_START;
	struct flood_result r;
	unsigned int slot = 0;

	ck_assert_ptr_nonnull(f);
	flood_setup(f, elevator);
	for (;;) {
		bool open = flood_now(f) < FLOOD_END;
		uint64_t dev = dev_stack_next_timer(&f->stack);
		uint64_t elv = f->q->dispatch_at > flood_now(f) ? f->q->dispatch_at : NEVER;
		uint64_t rd = open ? next_read : NEVER;
		uint64_t t;

		for (unsigned int i = 0; open && i < FLOOD_WRITERS; i++)
			if (!f->writer[i].busy)
				flood_submit(f, &f->writer[i], REQ_OP_WRITE, FLOOD_WRITE_SECTORS);
		if (!dev)
			dev = NEVER;
		t = dev < rd ? dev : rd;
		t = t < elv ? t : elv;
		if (t == NEVER) {
			ck_assert_msg(!f->outstanding, "%s stalled with %u bios out", elevator,
				      f->outstanding);
			break;
		}
		f->clock.virtual_ns = t;
		if (t == dev) {
			blk_queue_lock(f->q);
			dev_stack_run_timers(&f->stack, t);
			blk_queue_unlock(f->q);
			blk_run_queue(f->q);
		} else if (t == rd) {
			ck_assert_msg(!f->reader[slot].busy, "more than %d reads out", FLOOD_READS);
			flood_submit(f, &f->reader[slot], REQ_OP_READ, 8);
			slot = (slot + 1) % FLOOD_READS;
			next_read += FLOOD_READ_EVERY;
		} else {
			blk_run_queue(f->q);
		}
	}
	ck_assert_uint_gt(f->nr_lat, 1000);
	qsort(f->lat, f->nr_lat, sizeof(*f->lat), cmp_u64);
	r.p50 = f->lat[f->nr_lat / 2];
	r.p99 = f->lat[f->nr_lat * 99 / 100];
	r.writes = f->writes_done;
	blk_cleanup_queue(f->q);
	dev_stack_close(&f->stack);
	free(f->lat);
	free(f->buf);
	free(f);
	return r;
}

/*
 * Kyber keeps the read p99 within 1.25 times read_lat_nsec (2.5 ms; it
 * gets 1.0 ms); none lets it past 2 times (4 ms; it gets 4.6 ms); and the
 * writes lose no more than a tenth of what they get with none (they lose
 * nothing).  The clock is virtual: the numbers are the same on every run.
 * Kyber dispatching in arrival order fails the first (4.6 ms), and so does
 * kyber never scaling the write depth (3.5 ms).
 */
START_TEST(test_write_flood_read_latency)
{
	struct flood_result none = flood_run("none");
	struct flood_result kyber = flood_run("kyber");

	fprintf(stderr,
		"write flood: reads p50/p99 none %llu/%llu us, kyber %llu/%llu us; "
		"writes none %llu, kyber %llu\n",
		(unsigned long long)(none.p50 / US), (unsigned long long)(none.p99 / US),
		(unsigned long long)(kyber.p50 / US), (unsigned long long)(kyber.p99 / US),
		(unsigned long long)none.writes, (unsigned long long)kyber.writes);
	ck_assert_uint_le(kyber.p99, 2500 * US);
	ck_assert_uint_gt(none.p99, 4 * MS);
	ck_assert_uint_ge(kyber.writes * 10, none.writes * 9);
}
END_TEST


/* ---- on a multi-queue queue: lists per hardware queue, tokens per queue, async_depth ---- */

/* kyber over nr_hw hardware queues (CPU n feeds hctx n) of depth driver tags each. */
static struct fake_mq *kyber_mq(unsigned int nr_hw, unsigned int depth, unsigned int nr_requests,
				bool run_async)
{
	struct fake_mq_opts o = { .elevator = "kyber", .nr_hw_queues = nr_hw,
				  .queue_depth = depth, .nr_requests = nr_requests,
				  .run_async = run_async };

	return fake_mq_new(&o);
}

/* One sector at sector (none next to another: they never merge), from cpu, with flags. */
static void mq_submit(struct fake_mq *fm, struct test_bio *tb, enum req_op op, sector_t sector,
		      unsigned int flags, unsigned int cpu)
{
	tbio_init(tb, op, sector, 1, op_has_data(op) ? elv_buf : NULL);
	tb->bio.bi_flags = flags;
	fake_mq_submit(fm, &tb->bio, cpu);
}

static void mq_finish(struct fake_mq *fm, unsigned int nr_bios)
{
	fake_mq_drain(fm);
	elv_assert_ended(pool, nr_bios);
	fake_mq_free(fm);
}

/*
 * Linux's kyber_hctx_data: reads from CPUs 0 and 1, interleaved, wait in
 * the lists of hctx 0 and 1 (nothing runs until asked); a run of hctx 1
 * sends its own four and none of hctx 0's, which go when hctx 0 runs.
 * One instance for both (the adapter) would send all eight from hctx 1.
 */
START_TEST(test_mq_hctx_dispatches_its_own)
{
	struct fake_mq *fm = kyber_mq(2, 16, 64, true);

	for (unsigned int i = 0; i < 8; i++)
		mq_submit(fm, &pool[i], REQ_OP_READ, (i % 2) * 1000 + i * 16, 0, i % 2);
	ck_assert_uint_eq(fm->nr_events, 0);
	blk_mq_run_hw_queue(&fm->q->mq->hctxs[1]);
	ck_assert_uint_eq(fm->nr_events, 4);
	for (unsigned int i = 0; i < 4; i++) {
		ck_assert_uint_eq(fm->events[i].hctx, 1);
		ck_assert_uint_ge(fm->events[i].sector, 1000);
	}
	blk_mq_run_hw_queue(&fm->q->mq->hctxs[0]);
	ck_assert_uint_eq(fm->nr_events, 8);
	for (unsigned int i = 4; i < 8; i++) {
		ck_assert_uint_eq(fm->events[i].hctx, 0);
		ck_assert_uint_lt(fm->events[i].sector, 1000);
	}
	mq_finish(fm, 8);
}
END_TEST

/*
 * The tokens are the queue's, not a hardware queue's (Linux's
 * kqd->domain_tokens): hctx 0 holds all 16 tokens of the "other" domain,
 * so hctx 1's write zeroes waits, while its read (another domain) goes;
 * a token back on hctx 0 lets it go, on hctx 1.
 */
START_TEST(test_mq_tokens_are_global)
{
	struct fake_mq *fm = kyber_mq(2, 32, 64, false);
	unsigned int k = 0;

	for (; k < 16; k++)
		mq_submit(fm, &pool[k], REQ_OP_WRITE_ZEROES, k * 16, 0, 0);
	ck_assert_uint_eq(fm->hw[0].nr_out, 16);
	mq_submit(fm, &pool[k++], REQ_OP_WRITE_ZEROES, 4096, 0, 1);
	mq_submit(fm, &pool[k++], REQ_OP_READ, 8192, 0, 1);
	ck_assert_uint_eq(fm->hw[1].nr_out, 1);
	ck_assert_int_eq(fm->events[fm->nr_events - 1].op, REQ_OP_READ);
	ck_assert_uint_eq(fm->events[fm->nr_events - 1].hctx, 1);

	ck_assert(fake_mq_complete_first(fm, 0));
	ck_assert_uint_eq(fm->hw[1].nr_out, 2);
	ck_assert_int_eq(fm->events[fm->nr_events - 1].op, REQ_OP_WRITE_ZEROES);
	ck_assert_uint_eq(fm->events[fm->nr_events - 1].hctx, 1);
	ck_assert_uint_eq(fm->events[fm->nr_events - 1].sector, 4096);
	mq_finish(fm, k);
}
END_TEST

/*
 * Linux's kyber_limit_depth and KYBER_ASYNC_PERCENT: with one driver tag
 * (the rest wait in kyber), async requests (writes without REQ_SYNC,
 * discards) take at most 75% of nr_requests scheduler tags, and wait
 * for the rest; reads, sync and FUA writes take all of them.
 */
static unsigned int sched_tags_taken(unsigned int nr_requests, enum req_op first_op,
				     unsigned int first_flags, unsigned int nr_first,
				     enum req_op then_op, unsigned int then_flags)
{
	struct fake_mq *fm = kyber_mq(1, 1, nr_requests, false);
	unsigned int taken;

	for (unsigned int i = 0; i < nr_requests; i++)
		mq_submit(fm, &pool[i], i < nr_first ? first_op : then_op,
			  (sector_t)i * 16, i < nr_first ? first_flags : then_flags, 0);
	taken = blk_mq_tags_in_use(&fm->q->mq->sched_tags);
	ck_assert_uint_eq(fm->nr_events, 1);
	mq_finish(fm, nr_requests);
	return taken;
}

START_TEST(test_mq_async_depth)
{
	ck_assert_uint_eq(sched_tags_taken(8, REQ_OP_WRITE, 0, 8, REQ_OP_WRITE, 0), 6);
	ck_assert_uint_eq(sched_tags_taken(64, REQ_OP_WRITE, 0, 64, REQ_OP_WRITE, 0), 48);
	ck_assert_uint_eq(sched_tags_taken(64, REQ_OP_DISCARD, 0, 64, REQ_OP_DISCARD, 0), 48);
	/* the 25% left are for sync requests */
	ck_assert_uint_eq(sched_tags_taken(8, REQ_OP_WRITE, 0, 6, REQ_OP_READ, 0), 8);
	ck_assert_uint_eq(sched_tags_taken(8, REQ_OP_WRITE, 0, 6, REQ_OP_WRITE, REQ_SYNC), 8);
	ck_assert_uint_eq(sched_tags_taken(8, REQ_OP_WRITE, REQ_SYNC, 8, REQ_OP_WRITE, 0), 8);
	ck_assert_uint_eq(sched_tags_taken(8, REQ_OP_WRITE, REQ_FUA, 8, REQ_OP_WRITE, 0), 8);
	ck_assert_uint_eq(sched_tags_taken(8, REQ_OP_READ, 0, 8, REQ_OP_READ, 0), 8);
}
END_TEST

static const struct tunable_case tunables[] = {
	{ "read_lat_nsec", 2000000, 0, INT_MAX },
	{ "write_lat_nsec", 10000000, 0, INT_MAX },
};

static Suite *kyber_suite(void)
{
	Suite *s = suite_create("kyber");
	TCase *tokens = tcase_create("tokens");
	TCase *scale = tcase_create("scale");
	TCase *flood = tcase_create("flood");
	TCase *mq = tcase_create("mq");
	TCase *tune = tunable_tests("kyber", tunables, sizeof(tunables) / sizeof(tunables[0]));

	tcase_add_test(tokens, test_tokens_per_domain);
	tcase_add_test(tokens, test_tokens_bounded_by_queue_depth);
	tcase_add_test(tokens, test_tokens_follow_nr_requests);
	tcase_add_test(tokens, test_batches_round_robin);
	tcase_add_test(tokens, test_domain_without_token_passes);
	tcase_add_test(tokens, test_switch_away_moves_more_than_tokens);
	tcase_add_test(tokens, test_token_of_another_instance);
	tcase_add_test(tokens, test_front_merge);
	suite_add_tcase(s, tokens);

	tcase_add_test(scale, test_histogram_buckets);
	tcase_add_test(scale, test_scaled_by_p99);
	tcase_add_test(scale, test_last_p99_stands_in_once);
	tcase_add_test(scale, test_congestion_at_target);
	tcase_add_test(scale, test_congestion_is_io_latency);
	tcase_add_test(scale, test_percentile_needs_500_samples);
	tcase_add_test(scale, test_percentile_after_a_second);
	tcase_add_test(scale, test_window_is_100ms);
	tcase_add_test(scale, test_depth_shrinks_and_grows_back);
	tcase_add_test(scale, test_good_latency_keeps_depth);
	tcase_add_test(scale, test_scaled_depth_through_nr_requests);
	suite_add_tcase(s, scale);

	tcase_add_test(mq, test_mq_hctx_dispatches_its_own);
	tcase_add_test(mq, test_mq_tokens_are_global);
	tcase_add_test(mq, test_mq_async_depth);
	suite_add_tcase(s, mq);

	tcase_set_timeout(flood, 60);
	tcase_add_test(flood, test_write_flood_read_latency);
	suite_add_tcase(s, flood);

	tcase_add_test(tune, test_targets_in_nsec);
	suite_add_tcase(s, tune);
	return s;
}

int main(void)
{
	return fake_run_suite(kyber_suite());
}
