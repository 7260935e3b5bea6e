/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_mq.c - the multi-queue queue under every elevator: each bio ends
 * once with its error, in parts too; no hardware queue ever has more out
 * than its driver tags, no elevator holds more than the scheduler tags; a
 * busy device gets its request again; a driver with no room (has_room) has
 * nothing taken for it; CPUs map onto hardware queues; an
 * elevator switch under load waits for what is in flight and loses nothing.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fake_driver.h"
#include "fake_mq.h"

static char mem[1 << 20] __attribute__((aligned(4096)));

static void io_at(struct fake_mq *fm, struct test_bio *tb, enum req_op op, sector_t sector,
		  unsigned int sectors, unsigned int cpu)
{
	tbio_init(tb, op, sector, sectors, mem + (sector % 128) * 4096);
	fake_mq_submit(fm, &tb->bio, cpu);
}

static struct fake_mq *mq_disk(const char *elevator, unsigned int nr_hw, unsigned int depth,
			       unsigned int nr_requests)
{
	struct fake_mq_opts o = { .elevator = elevator, .nr_hw_queues = nr_hw,
				  .queue_depth = depth, .nr_requests = nr_requests,
				  .nr_cpus = 2 * nr_hw };

	return fake_mq_new(&o);
}

/* A request of one bio ended in two parts: the bio ends once, at the end, with the error. */
START_TEST(test_partial_completion_ends_once)
{
	struct fake_mq *fm = mq_disk(fake_elevator(_i), 2, 4, 0);
	struct test_bio tb[2];
	struct request *rq;

	io_at(fm, &tb[0], REQ_OP_WRITE, 0, 16, 1);
	rq = fake_mq_nth(fm, 1, 0);
	ck_assert_ptr_nonnull(rq);
	fake_mq_complete(fm, 1, rq, 0, 8);
	ck_assert_int_eq(tb[0].ended, 0);
	fake_mq_complete(fm, 1, rq, -EIO, 8);
	ck_assert_int_eq(tb[0].ended, 1);
	ck_assert_int_eq(tb[0].error, -EIO);

	/* a failed read on hctx 0 fails only its own bio */
	io_at(fm, &tb[0], REQ_OP_READ, 64, 8, 0);
	io_at(fm, &tb[1], REQ_OP_READ, 512, 8, 1);
	fake_mq_complete(fm, 0, fake_mq_nth(fm, 0, 0), -EIO, 0);
	fake_mq_drain(fm);
	ck_assert_int_eq(tb[0].ended, 1);
	ck_assert_int_eq(tb[0].error, -EIO);
	ck_assert_int_eq(tb[1].ended, 1);
	ck_assert_int_eq(tb[1].error, 0);
	fake_mq_free(fm);
}
END_TEST

/*
 * Two bios merged into one request (they wait for the one driver tag): a
 * part that covers the first ends it, the error the second.
 */
START_TEST(test_merged_request_ends_each_bio_once)
{
	struct fake_mq *fm = mq_disk(fake_elevator(_i), 1, 1, 0);
	struct test_bio tb[3];
	struct request *rq;

	io_at(fm, &tb[2], REQ_OP_READ, 1000, 8, 0);
	io_at(fm, &tb[0], REQ_OP_WRITE, 0, 8, 0);
	io_at(fm, &tb[1], REQ_OP_WRITE, 8, 8, 0);
	ck_assert(fake_mq_complete_first(fm, 0));
	if (!fake_mq_nth(fm, 0, 0)) /* cfq and bfq idle for the reader first */
		fake_mq_wake(fm);
	rq = fake_mq_nth(fm, 0, 0);
	ck_assert_ptr_nonnull(rq);
	if (fm->q->elevator) { /* the core merges under an elevator, never without one */
		ck_assert_uint_eq(fm->nr_events, 2);
		ck_assert_uint_eq(blk_rq_sectors(rq), 16);
		ck_assert_uint_ge(fm->q->mq->hctxs[0].merged, 1);
		fake_mq_complete(fm, 0, rq, 0, 8);
		ck_assert_int_eq(tb[0].ended, 1);
		ck_assert_int_eq(tb[0].error, 0);
		ck_assert_int_eq(tb[1].ended, 0);
		fake_mq_complete(fm, 0, rq, -EIO, 8);
	} else {
		fake_mq_complete(fm, 0, rq, 0, 8);
		ck_assert_uint_eq(fm->nr_events, 3);
		fake_mq_complete(fm, 0, fake_mq_nth(fm, 0, 0), -EIO, 8);
	}
	ck_assert_int_eq(tb[0].ended, 1);
	ck_assert_int_eq(tb[0].error, 0);
	ck_assert_int_eq(tb[1].ended, 1);
	ck_assert_int_eq(tb[1].error, -EIO);
	fake_mq_free(fm);
}
END_TEST

/* Bios larger than max_sectors are split; every piece goes out, the bio ends once. */
START_TEST(test_split_bio_ends_once)
{
	struct fake_mq *fm = mq_disk(fake_elevator(_i), 2, 2, 0);
	struct test_bio tb;

	tbio_init(&tb, REQ_OP_WRITE, 0, 1024, mem);
	fake_mq_submit(fm, &tb.bio, 0);
	ck_assert_uint_le(fm->hw[0].nr_out, 2);
	fake_mq_drain(fm);
	ck_assert_int_eq(tb.ended, 1);
	ck_assert_int_eq(tb.error, 0);
	ck_assert_uint_eq(fm->nr_events, 5); /* 4 x 255 + 4 */
	fake_mq_free(fm);
}
END_TEST

/*
 * 64 reads at distinct places from 4 CPUs onto nr_hw queues of 2 driver
 * tags each and 6 scheduler tags: never more than 2 out on a queue, never
 * more than 6 held by the elevator and the driver, and both are reached.
 */
static void tags_bound(const char *elevator, unsigned int nr_hw)
{
	struct fake_mq *fm = mq_disk(elevator, nr_hw, 2, 6);
	static struct test_bio tb[64];
	unsigned long dispatched = 0;

	for (unsigned int i = 0; i < 64; i++)
		io_at(fm, &tb[i], REQ_OP_READ, (sector_t)((i * 37) % 64) * 64, 8, i % 4);
	for (unsigned int i = 0; i < nr_hw; i++)
		ck_assert_uint_eq(fm->hw[i].nr_out, 2);
	fake_mq_drain(fm);
	for (unsigned int i = 0; i < 64; i++) {
		ck_assert_int_eq(tb[i].ended, 1);
		ck_assert_int_eq(tb[i].error, 0);
	}
	for (unsigned int i = 0; i < nr_hw; i++) {
		ck_assert_msg(fm->hw[i].max_out == 2, "%s: hctx %u had %u out with 2 driver tags",
			      elevator, i, fm->hw[i].max_out);
		dispatched += fm->q->mq->hctxs[i].dispatched;
	}
	ck_assert_uint_eq(dispatched, fm->nr_events);
	if (fm->q->elevator)
		ck_assert_msg(fm->max_queued == 6, "%s: %u queued with 6 scheduler tags", elevator,
			      fm->max_queued);
	fake_mq_free(fm);
}

START_TEST(test_driver_and_scheduler_tags_bound_one_queue)
{
	tags_bound(fake_elevator(_i), 1);
}
END_TEST

START_TEST(test_driver_and_scheduler_tags_bound_two_queues)
{
	tags_bound(fake_elevator(_i), 2);
}
END_TEST

static bool switch_pending(struct fake_mq *fm)
{
	bool pending;

	blk_queue_lock(fm->q);
	pending = fm->q->switch_pending;
	blk_queue_unlock(fm->q);
	return pending;
}

static int update_nr_requests(struct fake_mq *fm, unsigned int nr)
{
	int ret;

	blk_queue_lock(fm->q);
	ret = blk_mq_update_nr_requests(fm->q, nr);
	blk_queue_unlock(fm->q);
	blk_mq_kick_marked(fm->q);
	return ret;
}

/*
 * nr_requests written under an elevator resizes its scheduler tags, as
 * blk_mq_update_nr_requests: 32 reads on 2 driver tags and 6 scheduler
 * tags hold 6; raised to 10, the waiting take the 4 new tags at once;
 * lowered to 3, the 10 out stay out, none is taken again until fewer than
 * 3 are, and from then on 3 are out while any waits.  Every bio still
 * ends once.
 */
START_TEST(test_nr_requests_resizes_scheduler_tags)
{
	const char *elevator = fake_elevator(_i);
	struct fake_mq *fm = mq_disk(elevator, 1, 2, 6);
	struct blk_mq_tags *tags = &fm->q->mq->sched_tags;
	static struct test_bio tb[32];
	unsigned int prev, n, at_three = 0;

	if (!fm->q->elevator) { /* none: test_nr_requests_resizes_driver_tags */
		fake_mq_free(fm);
		return;
	}
	for (unsigned int i = 0; i < 32; i++)
		io_at(fm, &tb[i], REQ_OP_READ, (sector_t)((i * 37) % 64) * 64, 8, 0);
	ck_assert_uint_eq(fm->max_queued, 6);
	ck_assert_int_eq(update_nr_requests(fm, 10), 0);
	ck_assert_uint_eq(fm->q->limits.nr_requests, 10);
	ck_assert_uint_eq(blk_mq_tags_in_use(tags), 10);
	ck_assert_int_eq(update_nr_requests(fm, 3), 0);
	prev = blk_mq_tags_in_use(tags);
	while (fake_mq_complete_first(fm, 0)) {
		n = blk_mq_tags_in_use(tags);
		ck_assert_msg(n < prev || n <= 3, "%s: %u scheduler tags out, %u before, nr_requests 3",
			      elevator, n, prev);
		at_three += n == 3;
		prev = n;
	}
	fake_mq_drain(fm);
	ck_assert_msg(at_three >= 16, "%s: 3 scheduler tags out after only %u ends", elevator,
		      at_three);
	for (unsigned int i = 0; i < 32; i++)
		ck_assert_int_eq(tb[i].ended, 1);
	ck_assert_int_eq(update_nr_requests(fm, 0), -EINVAL);
	fake_mq_free(fm);
}
END_TEST

/*
 * Without an elevator nr_requests is each hardware queue's driver tags, up
 * to the tag set's depth, and shows them: down to 2 of 4, two out at most;
 * above 4, no.  The elevator's nr_requests stays as it was, and an
 * elevator that comes gives the driver tags back their depth.
 */
START_TEST(test_nr_requests_resizes_driver_tags)
{
	struct fake_mq *fm = mq_disk(NULL, 2, 4, 0);
	unsigned int elv_nr = fm->q->limits.nr_requests;
	static struct test_bio tb[32];
	char why[256] = "";

	ck_assert_uint_eq(blk_mq_nr_requests(fm->q), 4);
	ck_assert_int_eq(update_nr_requests(fm, 5), -EINVAL);
	ck_assert_int_eq(update_nr_requests(fm, 2), 0);
	ck_assert_uint_eq(blk_mq_nr_requests(fm->q), 2);
	ck_assert_uint_eq(fm->q->limits.nr_requests, elv_nr);
	for (unsigned int i = 0; i < 32; i++)
		io_at(fm, &tb[i], REQ_OP_READ, (sector_t)((i * 37) % 64) * 64, 8, i % 4);
	ck_assert_uint_eq(fm->hw[0].nr_out, 2);
	ck_assert_uint_eq(fm->hw[1].nr_out, 2);
	ck_assert_int_eq(update_nr_requests(fm, 4), 0);
	ck_assert_uint_eq(fm->hw[0].nr_out, 4);
	ck_assert_uint_eq(fm->hw[1].nr_out, 4);
	fake_mq_drain(fm);
	for (unsigned int i = 0; i < 32; i++)
		ck_assert_int_eq(tb[i].ended, 1);
	ck_assert_uint_eq(fm->hw[0].max_out, 4);
	ck_assert_int_eq(update_nr_requests(fm, 1), 0);
	ck_assert_msg(!blk_mq_elevator_switch(fm->q, "deadline", why, sizeof(why)), "%s", why);
	ck_assert_uint_eq(fm->q->mq->hctxs[0].tags.nr_tags, 4);
	ck_assert_uint_eq(fm->q->mq->hctxs[1].tags.nr_tags, 4);
	ck_assert_uint_eq(blk_mq_nr_requests(fm->q), elv_nr);
	fake_mq_free(fm);
}
END_TEST

/*
 * While an elevator switch waits for what is in flight, nr_requests is
 * refused (EBUSY): the incoming elevator's tags are sized already.  Once
 * the switch is done it is taken.
 */
START_TEST(test_nr_requests_busy_while_switching)
{
	struct fake_mq *fm = mq_disk("deadline", 1, 2, 6);
	static struct test_bio tb[8];
	char why[256] = "";

	for (unsigned int i = 0; i < 8; i++)
		io_at(fm, &tb[i], REQ_OP_READ, (sector_t)i * 64, 8, 0);
	ck_assert_msg(!blk_mq_elevator_switch(fm->q, "noop", why, sizeof(why)), "%s", why);
	ck_assert(switch_pending(fm));
	ck_assert_int_eq(update_nr_requests(fm, 3), -EBUSY);
	fake_mq_drain(fm);
	ck_assert(!switch_pending(fm));
	ck_assert_uint_eq(blk_mq_nr_requests(fm->q), 6);
	ck_assert_int_eq(update_nr_requests(fm, 3), 0);
	ck_assert_uint_eq(blk_mq_nr_requests(fm->q), 3);
	fake_mq_free(fm);
}
END_TEST

/* A busy device gets the same request again, first, once it can take it. */
START_TEST(test_busy_requeues_in_order)
{
	struct fake_mq *fm = mq_disk(NULL, 1, 4, 0);
	struct test_bio tb[3];

	fake_mq_set_busy(fm, 0, true);
	io_at(fm, &tb[0], REQ_OP_READ, 100, 8, 0);
	io_at(fm, &tb[1], REQ_OP_READ, 0, 8, 0);
	io_at(fm, &tb[2], REQ_OP_READ, 50, 8, 0);
	ck_assert_uint_eq(fm->nr_events, 0);
	ck_assert_uint_ge(fm->hw[0].nr_busy, 3);
	ck_assert_uint_eq(fm->q->mq->hctxs[0].busy, fm->hw[0].nr_busy);
	fake_mq_set_busy(fm, 0, false);
	ck_assert_uint_eq(fm->nr_events, 3);
	ck_assert_uint_eq(fm->events[0].sector, 100);
	ck_assert_uint_eq(fm->events[1].sector, 0);
	ck_assert_uint_eq(fm->events[2].sector, 50);
	ck_assert_uint_eq(fm->hw[0].nr_commits, 1);
	fake_mq_drain(fm);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(tb[i].ended, 1);
	fake_mq_free(fm);
}
END_TEST

/*
 * A driver that says it has no room (blk_mq_ops.has_room) is asked before
 * a request is taken: nothing leaves the elevator or the software queue,
 * no driver tag is taken for it, none waits on the dispatch list, and queue_rq
 * never answers busy; once it has room every request goes out.
 */
START_TEST(test_no_room_takes_nothing)
{
	struct fake_mq_opts o = { .elevator = fake_elevator(_i), .nr_hw_queues = 1,
				  .queue_depth = 4, .nr_cpus = 2, .has_room = true };
	struct fake_mq *fm = fake_mq_new(&o);
	struct blk_mq_hw_ctx *hctx = &fm->q->mq->hctxs[0];
	struct test_bio tb[3];

	fake_mq_set_room(fm, 0, false);
	io_at(fm, &tb[0], REQ_OP_READ, 100, 8, 0);
	io_at(fm, &tb[1], REQ_OP_READ, 0, 8, 1);
	io_at(fm, &tb[2], REQ_OP_READ, 50, 8, 0);
	ck_assert_uint_ge(fm->hw[0].nr_room_asked, 1);
	ck_assert_uint_eq(fm->nr_events, 0);
	ck_assert_uint_eq(hctx->busy, 0);
	ck_assert(TAILQ_EMPTY(&hctx->dispatch));
	if (fm->q->elevator) /* without one, a request takes its driver tag as it is queued */
		ck_assert_uint_eq(blk_mq_tags_in_use(&hctx->tags), 0);
	fake_mq_set_room(fm, 0, true);
	if (fm->nr_events < 3) /* cfq and bfq may idle for the next read first */
		fake_mq_drain(fm);
	ck_assert_uint_eq(fm->nr_events, 3);
	ck_assert_uint_eq(fm->hw[0].nr_busy, 0);
	fake_mq_drain(fm);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(tb[i].ended, 1);
	fake_mq_free(fm);
}
END_TEST

/*
 * A hardware queue the driver said had no room is marked to run at the
 * next end, on whichever hardware queue: the room the end makes is its.
 */
START_TEST(test_no_room_restarted_by_an_end)
{
	struct fake_mq_opts o = { .nr_hw_queues = 2, .queue_depth = 4, .nr_cpus = 2,
				  .has_room = true };
	struct fake_mq *fm = fake_mq_new(&o);
	struct test_bio tb[2];

	fake_mq_set_room(fm, 1, false);
	io_at(fm, &tb[0], REQ_OP_READ, 0, 8, 0);
	io_at(fm, &tb[1], REQ_OP_READ, 100, 8, 1);
	ck_assert_uint_eq(fm->nr_events, 1);
	pthread_mutex_lock(&fm->lock); /* room again, and nobody told */
	fm->hw[1].no_room = false;
	pthread_mutex_unlock(&fm->lock);
	ck_assert(fake_mq_complete_first(fm, 0));
	ck_assert_uint_eq(fm->nr_events, 2);
	fake_mq_drain(fm);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(tb[i].ended, 1);
	fake_mq_free(fm);
}
END_TEST

/* blk_mq_map_queues: CPU n onto hctx n mod nr_hw_queues; a bio goes out on its CPU's. */
START_TEST(test_map_queues)
{
	struct fake_mq *fm = mq_disk(NULL, 2, 4, 0);
	struct test_bio tb[4];
	char list[64];

	blk_mq_cpu_list(&fm->q->mq->hctxs[0], list, sizeof(list));
	ck_assert_str_eq(list, "0, 2");
	blk_mq_cpu_list(&fm->q->mq->hctxs[1], list, sizeof(list));
	ck_assert_str_eq(list, "1, 3");
	for (unsigned int cpu = 0; cpu < 4; cpu++)
		io_at(fm, &tb[cpu], REQ_OP_READ, cpu * 64, 8, cpu);
	for (unsigned int i = 0; i < 4; i++)
		ck_assert_uint_eq(fm->events[i].hctx, fm->events[i].sector / 64 % 2);
	ck_assert_uint_eq(fm->q->mq->hctxs[0].dispatched, 2);
	ck_assert_uint_eq(fm->q->mq->hctxs[1].dispatched, 2);
	/* what /sys/block/DEV/mq/1/ and its debugfs twin would show */
	ck_assert_int_eq(blk_mq_hw_sysfs_show(&fm->q->mq->hctxs[1], "cpu_list", list,
					      sizeof(list)), 5);
	ck_assert_str_eq(list, "1, 3\n");
	blk_mq_hw_sysfs_show(&fm->q->mq->hctxs[1], "nr_tags", list, sizeof(list));
	ck_assert_str_eq(list, "4\n");
	blk_mq_hw_sysfs_show(&fm->q->mq->hctxs[1], "dispatched", list, sizeof(list));
	ck_assert_str_eq(list, "2\n");
	blk_mq_hw_sysfs_show(&fm->q->mq->hctxs[1], "busy", list, sizeof(list));
	ck_assert_str_eq(list, "0\n");
	ck_assert_int_eq(blk_mq_hw_sysfs_show(&fm->q->mq->hctxs[1], "nope", list, sizeof(list)),
			 -ENOENT);
	fake_mq_drain(fm);
	fake_mq_free(fm);
}
END_TEST

/*
 * A driver with run_async: submitting or ending a request only kicks the
 * hardware queues; queue_rq is called from the run of the queue's own.
 */
START_TEST(test_run_async_kicks_only)
{
	struct fake_mq_opts o = { .elevator = fake_elevator(_i), .nr_hw_queues = 2,
				  .queue_depth = 1, .nr_cpus = 2, .run_async = true };
	struct fake_mq *fm = fake_mq_new(&o);
	struct test_bio tb[3];

	io_at(fm, &tb[0], REQ_OP_READ, 0, 8, 0);
	io_at(fm, &tb[1], REQ_OP_READ, 512, 8, 1);
	io_at(fm, &tb[2], REQ_OP_READ, 1024, 8, 1);
	ck_assert_uint_eq(fm->nr_events, 0);
	ck_assert_uint_ge(fm->hw[0].kicked, 1);
	ck_assert_uint_ge(fm->hw[1].kicked, 1);
	blk_mq_run_hw_queue(&fm->q->mq->hctxs[1]);
	fm->hw[1].kicked = 0;
	ck_assert_uint_eq(fm->nr_events, 1);
	ck_assert_uint_eq(fm->events[0].hctx, 1);
	fake_mq_complete(fm, 1, fake_mq_nth(fm, 1, 0), 0, 8);
	ck_assert_uint_eq(fm->nr_events, 1); /* the next read waits for hctx 1's own run */
	ck_assert_uint_ge(fm->hw[1].kicked, 1);
	fake_mq_drain(fm);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(tb[i].ended, 1);
	fake_mq_free(fm);
}
END_TEST

static struct fake_mq *async_disk(const char *elevator, unsigned int nr_hw, unsigned int depth)
{
	struct fake_mq_opts o = { .elevator = elevator, .nr_hw_queues = nr_hw,
				  .queue_depth = depth, .nr_cpus = nr_hw, .run_async = true };

	return fake_mq_new(&o);
}

static void clear_kicks(struct fake_mq *fm)
{
	for (unsigned int i = 0; i < fm->set.nr_hw_queues; i++)
		fm->hw[i].kicked = 0;
}

/*
 * Four hardware queues, one read out on hctx 0 and nothing waiting
 * anywhere: its completion kicks no other hardware queue (no eventfd
 * write, no thread woken for nothing).
 */
START_TEST(test_completion_kicks_no_idle_queue)
{
	struct fake_mq *fm = async_disk(fake_elevator(_i), 4, 2);
	struct test_bio tb;

	io_at(fm, &tb, REQ_OP_READ, 0, 8, 0);
	fake_mq_run_kicked(fm);
	ck_assert_uint_eq(fm->hw[0].nr_out, 1);
	clear_kicks(fm);
	fake_mq_complete(fm, 0, fake_mq_nth(fm, 0, 0), 0, 8);
	ck_assert_int_eq(tb.ended, 1);
	for (unsigned int i = 1; i < 4; i++)
		ck_assert_msg(fm->hw[i].kicked == 0, "%s: an end on hctx 0 kicked idle hctx %u",
			      fake_elevator(_i), i);
	fake_mq_free(fm);
}
END_TEST

/*
 * One driver tag per hardware queue; two reads on hctx 1, one on hctx 0.
 * hctx 1 stops with its second read left for lack of a driver tag: an end
 * on hctx 0 frees none of hctx 1's and does not kick it; the end on hctx 1
 * that frees its tag does, and the read then goes out.
 */
START_TEST(test_stalled_queue_restarted_by_its_tag)
{
	struct fake_mq *fm = async_disk(fake_elevator(_i), 2, 1);
	struct test_bio tb[3];

	io_at(fm, &tb[0], REQ_OP_READ, 0, 8, 1);
	io_at(fm, &tb[1], REQ_OP_READ, 4096, 8, 1);
	io_at(fm, &tb[2], REQ_OP_READ, 8192, 8, 0);
	fake_mq_run_kicked(fm);
	ck_assert_uint_eq(fm->hw[0].nr_out, 1);
	ck_assert_uint_eq(fm->hw[1].nr_out, 1);
	clear_kicks(fm);
	fake_mq_complete(fm, 0, fake_mq_nth(fm, 0, 0), 0, 8);
	ck_assert_msg(fm->hw[1].kicked == 0, "%s: an end on hctx 0 kicked hctx 1, which waits "
		      "for a driver tag of its own", fake_elevator(_i));
	fake_mq_run_kicked(fm);
	if (fm->nr_events == 2) { /* not taken by hctx 0 (a single-queue elevator may) */
		fake_mq_complete(fm, 1, fake_mq_nth(fm, 1, 0), 0, 8);
		ck_assert_msg(fm->hw[1].kicked >= 1, "%s: hctx 1 got its driver tag back but "
			      "was not kicked", fake_elevator(_i));
		ck_assert_uint_eq(fm->hw[0].kicked, 0);
		fake_mq_run_kicked(fm);
		if (!fm->nr_out) /* an idling elevator waits for its time */
			fake_mq_wake(fm);
		ck_assert_uint_eq(fm->nr_events, 3);
	}
	fake_mq_drain(fm);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(tb[i].ended, 1);
	fake_mq_free(fm);
}
END_TEST

/*
 * A busy device (BLK_STS_RESOURCE) on hctx 0 while hctx 1 has a request
 * out: the device is shared, so an end on hctx 1 kicks hctx 0 again.
 */
START_TEST(test_busy_queue_restarted_by_any_end)
{
	struct fake_mq *fm = async_disk(NULL, 2, 2);
	struct test_bio tb[2];

	io_at(fm, &tb[1], REQ_OP_READ, 512, 8, 1);
	fake_mq_run_kicked(fm);
	fm->hw[0].busy = true;
	io_at(fm, &tb[0], REQ_OP_READ, 0, 8, 0);
	fake_mq_run_kicked(fm);
	ck_assert_uint_eq(fm->hw[0].nr_busy, 1);
	fm->hw[0].busy = false;
	clear_kicks(fm);
	fake_mq_complete(fm, 1, fake_mq_nth(fm, 1, 0), 0, 8);
	ck_assert_uint_ge(fm->hw[0].kicked, 1);
	fake_mq_run_kicked(fm);
	ck_assert_uint_eq(fm->hw[0].nr_out, 1);
	fake_mq_drain(fm);
	ck_assert_int_eq(tb[0].ended, 1);
	ck_assert_int_eq(tb[1].ended, 1);
	fake_mq_free(fm);
}
END_TEST


/*
 * A switch between any two elevators (none too) under load: reads and
 * writes on two hardware queues, out, queued and waiting for tags, a
 * flush and a barrier write among them.  Nothing goes out while requests
 * are in flight and the switch waits; then every request moves to the new
 * elevator, every bio ends once, and no flush passed a write.
 */
START_TEST(test_switch_under_load)
{
	int n = fake_nr_elevators();
	const char *from = fake_elevator(_i / n), *to = fake_elevator(_i % n);
	struct fake_mq *fm = mq_disk(from, 2, 2, 8);
	static struct test_bio tb[24];
	unsigned int events, guard;
	char why[256] = "";

	for (unsigned int i = 0; i < 24; i++) {
		if (i == 10) {
			tbio_init(&tb[i], REQ_OP_FLUSH, 0, 0, NULL);
			fake_mq_submit(fm, &tb[i].bio, i % 4);
			continue;
		}
		tbio_init(&tb[i], i % 3 ? REQ_OP_WRITE : REQ_OP_READ, (sector_t)((i * 37) % 24) * 64,
			  8, mem);
		if (i == 16)
			tb[i].bio.bi_flags = REQ_BARRIER;
		fake_mq_submit(fm, &tb[i].bio, i % 4);
	}
	events = fm->nr_events;
	ck_assert_msg(!blk_mq_elevator_switch(fm->q, to, why, sizeof(why)), "%s", why);
	for (guard = 0; switch_pending(fm); guard++) {
		ck_assert_uint_lt(guard, 100);
		ck_assert_uint_eq(fm->nr_events, events);
		ck_assert(fake_mq_complete_first(fm, 0) || fake_mq_complete_first(fm, 1));
	}
	ck_assert_msg(guard || from == to, "the switch did not wait for what was in flight");
	ck_assert_str_eq(fm->q->elevator ? fm->q->elevator->type->elevator_name : "none", to);
	fake_mq_drain(fm);
	for (unsigned int i = 0; i < 24; i++) {
		ck_assert_int_eq(tb[i].ended, 1);
		ck_assert_int_eq(tb[i].error, 0);
	}
	ck_assert_uint_eq(fm->flush_passed, 0);
	fake_mq_free(fm);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mq");
	TCase *tc = tcase_create("core");
	int n = fake_nr_elevators(); /* every elevator, from the registry */

	tcase_add_loop_test(tc, test_partial_completion_ends_once, 0, n);
	tcase_add_loop_test(tc, test_merged_request_ends_each_bio_once, 0, n);
	tcase_add_loop_test(tc, test_split_bio_ends_once, 0, n);
	tcase_add_loop_test(tc, test_driver_and_scheduler_tags_bound_one_queue, 0, n);
	tcase_add_loop_test(tc, test_driver_and_scheduler_tags_bound_two_queues, 0, n);
	tcase_add_loop_test(tc, test_nr_requests_resizes_scheduler_tags, 0, n);
	tcase_add_test(tc, test_nr_requests_resizes_driver_tags);
	tcase_add_test(tc, test_nr_requests_busy_while_switching);
	tcase_add_loop_test(tc, test_run_async_kicks_only, 0, n);
	tcase_add_loop_test(tc, test_completion_kicks_no_idle_queue, 0, n);
	tcase_add_loop_test(tc, test_stalled_queue_restarted_by_its_tag, 0, n);
	tcase_add_test(tc, test_busy_queue_restarted_by_any_end);
	tcase_add_test(tc, test_busy_requeues_in_order);
	tcase_add_loop_test(tc, test_no_room_takes_nothing, 0, n);
	tcase_add_test(tc, test_no_room_restarted_by_an_end);
	tcase_add_test(tc, test_map_queues);
	tcase_add_loop_test(tc, test_switch_under_load, 0, n * n);
	suite_add_tcase(s, tc);
	return fake_run_suite(s);
}
