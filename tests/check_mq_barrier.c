/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_mq_barrier.c - barriers across hardware queues, under every
 * elevator: a flush through one queue starts only once every write before
 * it has ended on any queue, nothing after it starts before it ends; and
 * random streams from random CPUs, ended in random order, parts and
 * errors, never see a barrier passed, a request past the limits, or a
 * bio ended twice or wrongly.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "fake_driver.h"
#include "fake_mq.h"

static char mem[1 << 20] __attribute__((aligned(4096)));

static struct fake_mq *mq_disk(const char *elevator, unsigned int nr_hw)
{
	struct fake_mq_opts o = { .elevator = elevator, .nr_hw_queues = nr_hw, .queue_depth = 4 };

	return fake_mq_new(&o);
}

static void write_at(struct fake_mq *fm, struct test_bio *tb, sector_t sector,
		     unsigned int flags, unsigned int cpu)
{
	tbio_init(tb, REQ_OP_WRITE, sector, 8, mem + (sector % 128) * 4096);
	tb->bio.bi_flags = flags;
	fake_mq_submit(fm, &tb->bio, cpu);
}

static void flush_from(struct fake_mq *fm, struct test_bio *tb, unsigned int cpu)
{
	tbio_init(tb, REQ_OP_FLUSH, 0, 0, NULL);
	fake_mq_submit(fm, &tb->bio, cpu);
}

static unsigned int nr_hw_of(int i)
{
	return 1 + (unsigned int)(i % 2);
}

static const char *elevator_of(int i)
{
	return fake_elevator(i / 2);
}

/*
 * A write out on hctx 0, a flush submitted on the last hctx, a write after
 * it on hctx 0: the flush goes out only once the first write has ended,
 * and the later write only once the flush has.
 */
START_TEST(test_flush_waits_for_writes_on_other_queues)
{
	unsigned int nr_hw = nr_hw_of(_i), last = nr_hw - 1;
	struct fake_mq *fm = mq_disk(elevator_of(_i), nr_hw);
	struct test_bio tb[4];

	write_at(fm, &tb[0], 0, 0, 0);
	write_at(fm, &tb[1], 512, 0, last);
	flush_from(fm, &tb[2], last);
	write_at(fm, &tb[3], 8, 0, 0); /* would merge with the first, but not across */
	ck_assert_uint_eq(fm->nr_events, 2);
	fake_mq_complete(fm, last, fake_mq_nth(fm, last, last ? 0 : 1), 0, 8);
	ck_assert_uint_eq(fm->nr_events, 2); /* the write on hctx 0 is still out */
	fake_mq_complete(fm, 0, fake_mq_nth(fm, 0, 0), 0, 8);
	ck_assert_uint_eq(fm->nr_events, 3);
	ck_assert_int_eq(fm->events[2].op, REQ_OP_FLUSH);
	ck_assert_uint_eq(fm->events[2].hctx, last);
	ck_assert_int_eq(tb[3].ended, 0);
	fake_mq_complete(fm, last, fake_mq_nth(fm, last, 0), 0, 0);
	ck_assert_int_eq(tb[2].ended, 1);
	ck_assert_uint_eq(fm->nr_events, 4);
	ck_assert_uint_eq(fm->events[3].sector, 8);
	ck_assert_uint_eq(fm->events[3].nr_sectors, 8); /* not merged across the flush */
	fake_mq_drain(fm);
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(tb[i].ended, 1);
		ck_assert_int_eq(tb[i].error, 0);
	}
	ck_assert_uint_lt(tb[0].order, tb[2].order);
	ck_assert_uint_lt(tb[1].order, tb[2].order);
	ck_assert_uint_gt(tb[3].order, tb[2].order);
	fake_mq_free(fm);
}
END_TEST

/* A barrier write on the last hctx: preflush after hctx 0's write, then the write as FUA, alone. */
START_TEST(test_barrier_write_across_queues)
{
	unsigned int nr_hw = nr_hw_of(_i), last = nr_hw - 1;
	struct fake_mq *fm = mq_disk(elevator_of(_i), nr_hw);
	struct test_bio tb[3];

	write_at(fm, &tb[0], 0, 0, 0);
	write_at(fm, &tb[1], 64, REQ_BARRIER, last);
	write_at(fm, &tb[2], 128, 0, 0);
	ck_assert_uint_eq(fm->nr_events, 1);
	fake_mq_complete_first(fm, 0);
	ck_assert_uint_eq(fm->nr_events, 2);
	ck_assert_int_eq(fm->events[1].op, REQ_OP_FLUSH);
	ck_assert(fm->events[1].flags & REQ_PREFLUSH);
	ck_assert_uint_eq(fm->events[1].hctx, last);
	fake_mq_complete_first(fm, last);
	ck_assert_uint_eq(fm->nr_events, 3);
	ck_assert_uint_eq(fm->events[2].sector, 64);
	ck_assert(fm->events[2].flags & REQ_FUA);
	ck_assert_int_eq(tb[2].ended, 0);
	fake_mq_complete_first(fm, last);
	ck_assert_uint_eq(fm->nr_events, 4);
	ck_assert_uint_eq(fm->events[3].sector, 128);
	fake_mq_drain(fm);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(tb[i].ended, 1);
	fake_mq_free(fm);
}
END_TEST

/* A failed preflush fails its barrier write, which never reaches the device. */
START_TEST(test_failed_preflush_fails_the_barrier_write)
{
	unsigned int nr_hw = nr_hw_of(_i), last = nr_hw - 1;
	struct fake_mq *fm = mq_disk(elevator_of(_i), nr_hw);
	struct test_bio tb[2];

	write_at(fm, &tb[0], 8, REQ_BARRIER, last);
	write_at(fm, &tb[1], 16, 0, 0);
	ck_assert_uint_eq(fm->nr_events, 1);
	fake_mq_complete(fm, last, fake_mq_nth(fm, last, 0), -EIO, 0);
	ck_assert_int_eq(tb[0].ended, 1);
	ck_assert_int_eq(tb[0].error, -EIO);
	ck_assert_uint_eq(fm->nr_events, 2);
	ck_assert_uint_eq(fm->events[1].sector, 16);
	fake_mq_drain(fm);
	ck_assert_int_eq(tb[1].ended, 1);
	ck_assert_int_eq(tb[1].error, 0);
	fake_mq_free(fm);
}
END_TEST

/* ---- random streams ---- */

#define NR_BIOS 200
#define NR_SEEDS 6

struct pbio {
	struct bio bio;
	struct bio_vec vec;
	unsigned int idx;
	bool barrier, barrier_write, expect_error;
	int ended, error;
};

struct prop {
	struct pbio bios[NR_BIOS];
	unsigned int nr_submitted;
	unsigned int nr_preflushes; /* issued so far: the nth goes with the nth barrier write */
	struct fake_mq *fm;
};

static unsigned int rnd(unsigned int *seed, unsigned int n)
{
	return (unsigned int)(rand_r(seed) % n);
}

static void pbio_end_io(struct bio *bio, int error)
{
	struct pbio *pb = bio->bi_private;

	pb->ended++;
	pb->error = error;
}

/* The submitted bio a request's bio came from (splits and bounces are clones). */
static struct pbio *root_of(struct bio *bio)
{
	while (bio->bi_parent)
		bio = bio->bi_parent;
	return bio->bi_private;
}

/* Every bio submitted before index end has ended. */
static void require_ended_before(const struct prop *p, unsigned int end, const char *what)
{
	for (unsigned int i = 0; i < end; i++)
		if (!p->bios[i].ended)
			ck_abort_msg("%s %u started with bio %u before it still out", what, end, i);
}

/* The nth barrier write, in submission order. */
static struct pbio *nth_barrier_write(struct prop *p, unsigned int n)
{
	for (unsigned int i = 0; i < p->nr_submitted; i++)
		if (p->bios[i].barrier_write && !n--)
			return &p->bios[i];
	return NULL;
}

/* At each start: no bio before a barrier still out, no barrier before a bio still out. */
static void check_start(struct fake_mq *fm, unsigned int hctx, struct request *rq)
{
	struct prop *p = fm->priv;
	struct bio *bio;

	(void)hctx;
	if (blk_rq_sectors(rq) > queue_max_sectors(&fm->q->limits, rq->cmd_op) ||
	    rq->nr_phys_segments > queue_max_segments(&fm->q->limits))
		ck_abort_msg("a request of %u sectors, %u segments, past the limits",
			     blk_rq_sectors(rq), rq->nr_phys_segments);
	if (rq->cmd_flags & REQ_PREFLUSH) {
		struct pbio *b = nth_barrier_write(p, p->nr_preflushes++);

		ck_assert_ptr_nonnull(b);
		require_ended_before(p, b->idx, "the preflush of barrier write");
		return;
	}
	rq_for_each_bio(bio, rq) {
		struct pbio *pb = root_of(bio);

		if (pb->barrier)
			require_ended_before(p, pb->idx, "barrier");
		for (unsigned int i = 0; i < pb->idx; i++)
			if (p->bios[i].barrier && !p->bios[i].ended)
				ck_abort_msg("bio %u started before barrier %u ended", pb->idx, i);
	}
}

static void submit_random(struct prop *p, unsigned int *seed, unsigned int nr_cpus)
{
	struct pbio *pb = &p->bios[p->nr_submitted];
	unsigned int kind = rnd(seed, 20), sectors = 8 * (1 + rnd(seed, 8));
	sector_t sector = 8 * (sector_t)rnd(seed, 256);
	enum req_op op = kind < 8 ? REQ_OP_READ : REQ_OP_WRITE;

	pb->idx = p->nr_submitted++;
	if (kind == 18) {
		op = REQ_OP_FLUSH;
		sectors = 0;
	}
	pb->vec = (struct bio_vec){ mem + (sector % 128) * 4096, (size_t)sectors << SECTOR_SHIFT };
	bio_init(&pb->bio, op, sector, sectors << SECTOR_SHIFT, &pb->vec, sectors ? 1 : 0);
	pb->bio.bi_end_io = pbio_end_io;
	pb->bio.bi_private = pb;
	pb->barrier = kind >= 18;
	pb->barrier_write = kind == 19;
	if (kind == 19)
		pb->bio.bi_flags = REQ_BARRIER;
	fake_mq_submit(p->fm, &pb->bio, rnd(seed, nr_cpus));
}

/* Mark what ending rq's remaining sectors with an error fails. */
static void expect_failed(struct prop *p, struct request *rq)
{
	struct bio *bio;

	if (rq->cmd_flags & REQ_PREFLUSH) {
		nth_barrier_write(p, p->nr_preflushes - 1)->expect_error = true;
		return;
	}
	rq_for_each_bio(bio, rq)
		root_of(bio)->expect_error = true;
}

/* End something out: whole or a part, now and then with an error. */
static bool complete_random(struct prop *p, unsigned int *seed)
{
	struct fake_mq *fm = p->fm;
	unsigned int nr_hw = fm->set.nr_hw_queues, hw = rnd(seed, nr_hw);

	for (unsigned int k = 0; k < nr_hw; k++, hw = (hw + 1) % nr_hw) {
		unsigned int n = fm->hw[hw].nr_out;
		struct request *rq = n ? fake_mq_nth(fm, hw, rnd(seed, n)) : NULL;
		unsigned int left;

		if (!rq)
			continue;
		left = blk_rq_sectors(rq);
		if (!rnd(seed, 12)) {
			expect_failed(p, rq);
			fake_mq_complete(fm, hw, rq, -EIO, left);
		} else if (left > 8 && rnd(seed, 3) == 0) {
			fake_mq_complete(fm, hw, rq, 0, 8 * (1 + rnd(seed, left / 8 - 1)));
		} else {
			fake_mq_complete(fm, hw, rq, 0, left);
		}
		return true;
	}
	return false;
}

static void run_stream(const char *elevator, unsigned int nr_hw, unsigned int seed)
{
	struct fake_mq_opts o = { .elevator = elevator, .nr_hw_queues = nr_hw,
				  .queue_depth = 1 + seed % 4, .nr_requests = 4 + seed % 8,
				  .nr_cpus = 4 };
	struct prop *p = calloc(1, sizeof(*p));
	struct queue_limits lim;
	char why[256];

	ck_assert_ptr_nonnull(p);
	p->fm = fake_mq_new(&o);
	/* small requests, so that bios split and merges stop at the limit */
	lim = p->fm->q->limits;
	lim.max_sectors = 16 + 8 * (seed % 4);
	ck_assert_msg(!blk_queue_set_limits(p->fm->q, &lim, why, sizeof(why)), "%s", why);
	p->fm->priv = p;
	p->fm->on_dispatch = check_start;
	for (unsigned int guard = 0; !blk_mq_queue_idle(p->fm->q) || p->nr_submitted < NR_BIOS;
	     guard++) {
		unsigned int what = rnd(&seed, 10);

		ck_assert_uint_lt(guard, 100000);
		if (p->nr_submitted < NR_BIOS && what < 4)
			submit_random(p, &seed, 4);
		else if (what == 4 && nr_hw > 1)
			fake_mq_set_busy(p->fm, rnd(&seed, nr_hw), rnd(&seed, 2));
		else if (!complete_random(p, &seed) && !blk_mq_queue_idle(p->fm->q)) {
			for (unsigned int i = 0; i < nr_hw; i++)
				fake_mq_set_busy(p->fm, i, false);
			if (!p->fm->nr_out)
				fake_mq_wake(p->fm);
		}
	}
	for (unsigned int i = 0; i < NR_BIOS; i++) {
		struct pbio *pb = &p->bios[i];

		ck_assert_msg(pb->ended == 1, "%s seed %u: bio %u ended %d times", elevator, seed,
			      i, pb->ended);
		ck_assert_msg(pb->error == (pb->expect_error ? -EIO : 0),
			      "%s seed %u: bio %u ended with %d", elevator, seed, i, pb->error);
	}
	fake_mq_free(p->fm);
	free(p);
}

START_TEST(test_random_streams)
{
	for (unsigned int seed = 1; seed <= NR_SEEDS; seed++)
		run_stream(elevator_of(_i), nr_hw_of(_i) + (seed % 2), seed * 7919);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mq_barrier");
	TCase *tc = tcase_create("core");
	int n = 2 * fake_nr_elevators(); /* every elevator, from the registry, on 1 and 2 queues */

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_flush_waits_for_writes_on_other_queues, 0, n);
	tcase_add_loop_test(tc, test_barrier_write_across_queues, 0, n);
	tcase_add_loop_test(tc, test_failed_preflush_fails_the_barrier_write, 0, n);
	tcase_add_loop_test(tc, test_random_streams, 0, n);
	suite_add_tcase(s, tc);
	return fake_run_suite(s);
}
