/* SPDX-License-Identifier: BSD-3-Clause */
/* fake_mq.c - a multi-queue driver for unit tests: takes requests per hardware queue, completes on command. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "fake_mq.h"

static struct fake_mq *fm_of(const struct request_queue *q)
{
	return q->mq->set->driver_data;
}

static void fm_note_queued(struct fake_mq *fm)
{
	unsigned int n = fm->elv_held + fm->nr_out;

	if (n > fm->max_queued)
		fm->max_queued = n;
}

static blk_status_t fake_mq_queue_rq(struct blk_mq_hw_ctx *hctx, struct request *rq)
{
	struct fake_mq *fm = fm_of(hctx->queue);
	unsigned int i = blk_mq_hctx_index(hctx);
	struct fake_mq_hw *hw = &fm->hw[i];

	pthread_mutex_lock(&fm->lock);
	if (hw->busy) {
		hw->nr_busy++;
		pthread_mutex_unlock(&fm->lock);
		return BLK_STS_RESOURCE;
	}
	if (rq->cmd_op == REQ_OP_FLUSH && fm->nr_writes_out)
		fm->flush_passed++;
	if (rq->cmd_op == REQ_OP_WRITE)
		fm->nr_writes_out++;
	TAILQ_INSERT_TAIL(&hw->out, rq, queuelist);
	if (++hw->nr_out > hw->max_out)
		hw->max_out = hw->nr_out;
	fm->nr_out++;
	fm_note_queued(fm);
	if (fm->nr_events < FAKE_MQ_MAX_EVENTS)
		fm->events[fm->nr_events++] = (struct fake_mq_event){
			.hctx = i,
			.op = rq->cmd_op,
			.flags = rq->cmd_flags,
			.sector = blk_rq_pos(rq),
			.nr_sectors = blk_rq_sectors(rq),
			.epoch = rq->epoch,
		};
	pthread_mutex_unlock(&fm->lock);
	if (fm->on_dispatch)
		fm->on_dispatch(fm, i, rq);
	return BLK_STS_OK;
}

static void fake_mq_commit_rqs(struct blk_mq_hw_ctx *hctx)
{
	struct fake_mq *fm = fm_of(hctx->queue);

	pthread_mutex_lock(&fm->lock);
	fm->hw[blk_mq_hctx_index(hctx)].nr_commits++;
	pthread_mutex_unlock(&fm->lock);
}

static void fake_mq_run_async(struct blk_mq_hw_ctx *hctx)
{
	struct fake_mq *fm = fm_of(hctx->queue);

	pthread_mutex_lock(&fm->lock);
	fm->hw[blk_mq_hctx_index(hctx)].kicked++;
	pthread_mutex_unlock(&fm->lock);
}

static const struct blk_mq_ops fake_mq_ops = {
	.queue_rq = fake_mq_queue_rq,
	.commit_rqs = fake_mq_commit_rqs,
};

static bool fake_mq_has_room(struct blk_mq_hw_ctx *hctx)
{
	struct fake_mq *fm = fm_of(hctx->queue);
	struct fake_mq_hw *hw = &fm->hw[blk_mq_hctx_index(hctx)];
	bool room;

	pthread_mutex_lock(&fm->lock);
	hw->nr_room_asked++;
	room = !hw->no_room;
	pthread_mutex_unlock(&fm->lock);
	return room;
}

static const struct blk_mq_ops fake_mq_room_ops = {
	.queue_rq = fake_mq_queue_rq,
	.commit_rqs = fake_mq_commit_rqs,
	.has_room = fake_mq_has_room,
};

static const struct blk_mq_ops fake_mq_async_ops = {
	.queue_rq = fake_mq_queue_rq,
	.commit_rqs = fake_mq_commit_rqs,
	.run_async = fake_mq_run_async,
};

void fake_mq_run_kicked(struct fake_mq *fm)
{
	for (unsigned int i = 0; i < fm->set.nr_hw_queues; i++) {
		unsigned int kicked;

		pthread_mutex_lock(&fm->lock);
		kicked = fm->hw[i].kicked;
		fm->hw[i].kicked = 0;
		pthread_mutex_unlock(&fm->lock);
		if (kicked)
			blk_mq_run_hw_queue(&fm->q->mq->hctxs[i]);
	}
}

/* ---- the counting elevator: the real one's hooks, and a count (queue lock held) ---- */

static void counted_add(struct elevator_queue *e, struct request *rq)
{
	struct fake_mq *fm = fm_of(e->q);

	pthread_mutex_lock(&fm->lock);
	fm->elv_held++;
	fm_note_queued(fm);
	pthread_mutex_unlock(&fm->lock);
	fm->orig->add_request(e, rq);
}

static struct request *counted_dispatch(struct elevator_queue *e, uint64_t now)
{
	struct fake_mq *fm = fm_of(e->q);
	struct request *rq = fm->orig->dispatch_request(e, now);

	if (rq) {
		pthread_mutex_lock(&fm->lock);
		fm->elv_held--;
		pthread_mutex_unlock(&fm->lock);
	}
	return rq;
}

/* A per-queue elevator's hooks (mq_ops), counted the same way. */
static void counted_insert_requests(struct elevator_queue *e, struct blk_mq_hw_ctx *hctx,
				    struct elv_fifo *list, bool at_head)
{
	struct fake_mq *fm = fm_of(e->q);
	struct request *rq;

	pthread_mutex_lock(&fm->lock);
	TAILQ_FOREACH(rq, list, queuelist)
		fm->elv_held++;
	fm_note_queued(fm);
	pthread_mutex_unlock(&fm->lock);
	fm->orig->mq_ops.insert_requests(e, hctx, list, at_head);
}

static struct request *counted_mq_dispatch(struct elevator_queue *e, struct blk_mq_hw_ctx *hctx,
					   uint64_t now)
{
	struct fake_mq *fm = fm_of(e->q);
	struct request *rq = fm->orig->mq_ops.dispatch_request(e, hctx, now);

	if (rq) {
		pthread_mutex_lock(&fm->lock);
		fm->elv_held--;
		pthread_mutex_unlock(&fm->lock);
	}
	return rq;
}

static void counted_requests_merged(struct elevator_queue *e, struct request *rq,
				    struct request *next)
{
	struct fake_mq *fm = fm_of(e->q);

	pthread_mutex_lock(&fm->lock);
	fm->elv_held--;
	pthread_mutex_unlock(&fm->lock);
	fm->orig->requests_merged(e, rq, next);
}

static void fake_mq_elevator(struct fake_mq *fm, const char *name)
{
	char why[256] = "";
	const struct elevator_type *t = elevator_get(name, why, sizeof(why));

	ck_assert_msg(t, "%s", why);
	fm->orig = t;
	fm->counted = *t;
	fm->counted.add_request = counted_add;
	fm->counted.dispatch_request = counted_dispatch;
	if (t->requests_merged)
		fm->counted.requests_merged = counted_requests_merged;
	if (t->mq_ops.insert_requests) {
		fm->counted.mq_ops.insert_requests = counted_insert_requests;
		fm->counted.mq_ops.dispatch_request = counted_mq_dispatch;
	}
	ck_assert_msg(!blk_mq_sched_init(fm->q, &fm->counted, why, sizeof(why)), "%s: %s", name,
		      why);
}

struct fake_mq *fake_mq_new(const struct fake_mq_opts *o)
{
	struct fake_mq *fm = calloc(1, sizeof(*fm));
	char why[256] = "";

	ck_assert_ptr_nonnull(fm);
	ck_assert_uint_le(o->nr_hw_queues, FAKE_MQ_MAX_HW);
	pthread_mutex_init(&fm->lock, NULL);
	blk_virtual_clock_init(&fm->clock, 1000000000ull);
	fm->set = (struct blk_mq_tag_set){
		.ops = o->run_async  ? &fake_mq_async_ops
		       : o->has_room ? &fake_mq_room_ops
				     : &fake_mq_ops,
		.nr_hw_queues = o->nr_hw_queues,
		.queue_depth = o->queue_depth,
		.nr_cpus = o->nr_cpus ? o->nr_cpus : o->nr_hw_queues,
		.driver_data = fm,
	};
	for (unsigned int i = 0; i < FAKE_MQ_MAX_HW; i++)
		TAILQ_INIT(&fm->hw[i].out);
	fm->q = blk_mq_init_queue(&fm->set, o->real_clock ? NULL : &fm->clock, why, sizeof(why));
	ck_assert_msg(fm->q, "%s", why);
	if (o->nr_requests)
		fm->q->limits.nr_requests = o->nr_requests;
	if (o->elevator && strcmp(o->elevator, "none"))
		fake_mq_elevator(fm, o->elevator);
	return fm;
}

const char *fake_mq_refusal(const char *elevator, char *why, size_t whylen)
{
	struct fake_mq_opts o = { .nr_hw_queues = 1, .queue_depth = 1 };
	struct fake_mq *fm = fake_mq_new(&o);
	int ret = blk_mq_elevator_init(fm->q, elevator, why, whylen);

	fake_mq_free(fm);
	return ret ? why : NULL;
}

void fake_mq_free(struct fake_mq *fm)
{
	ck_assert_uint_eq(fm->nr_out, 0);
	ck_assert(blk_mq_queue_idle(fm->q));
	ck_assert_uint_eq(fm->elv_held, 0);
	blk_mq_free_queue(fm->q);
	pthread_mutex_destroy(&fm->lock);
	free(fm);
}

struct request *fake_mq_nth(struct fake_mq *fm, unsigned int hw, unsigned int n)
{
	struct request *rq, *found = NULL;

	pthread_mutex_lock(&fm->lock);
	TAILQ_FOREACH(rq, &fm->hw[hw].out, queuelist)
		if (!n--) {
			found = rq;
			break;
		}
	pthread_mutex_unlock(&fm->lock);
	return found;
}

/* fm->lock held. */
static void fake_mq_unlink(struct fake_mq *fm, unsigned int hw, struct request *rq)
{
	TAILQ_REMOVE(&fm->hw[hw].out, rq, queuelist);
	fm->hw[hw].nr_out--;
	fm->nr_out--;
	if (rq->cmd_op == REQ_OP_WRITE)
		fm->nr_writes_out--;
}

struct request *fake_mq_take_first(struct fake_mq *fm, unsigned int hw)
{
	struct request *rq;

	pthread_mutex_lock(&fm->lock);
	rq = TAILQ_FIRST(&fm->hw[hw].out);
	if (rq)
		fake_mq_unlink(fm, hw, rq);
	pthread_mutex_unlock(&fm->lock);
	return rq;
}

void fake_mq_complete(struct fake_mq *fm, unsigned int hw, struct request *rq, int error,
		      unsigned int nr_sectors)
{
	bool last = nr_sectors >= blk_rq_sectors(rq) || (error && nr_sectors == 0);

	if (last) {
		pthread_mutex_lock(&fm->lock);
		fake_mq_unlink(fm, hw, rq);
		pthread_mutex_unlock(&fm->lock);
		if (error && nr_sectors == 0)
			nr_sectors = blk_rq_sectors(rq);
	}
	ck_assert_int_eq(blk_mq_end_request(rq, error, nr_sectors), !last);
}

bool fake_mq_complete_first(struct fake_mq *fm, unsigned int hw)
{
	struct request *rq = fake_mq_nth(fm, hw, 0);

	if (!rq)
		return false;
	fake_mq_complete(fm, hw, rq, 0, blk_rq_sectors(rq));
	return true;
}

void fake_mq_drain(struct fake_mq *fm)
{
	for (unsigned int guard = 0; !blk_mq_queue_idle(fm->q); guard++) {
		bool any = false;

		ck_assert_uint_lt(guard, 1000000);
		for (unsigned int i = 0; i < fm->set.nr_hw_queues; i++)
			any |= fake_mq_complete_first(fm, i);
		fake_mq_run_kicked(fm);
		if (!any && !fm->nr_out)
			fake_mq_wake(fm);
	}
}

void fake_mq_wake(struct fake_mq *fm)
{
	uint64_t at;

	blk_queue_lock(fm->q);
	at = fm->q->dispatch_at;
	blk_queue_unlock(fm->q);
	ck_assert_msg(at, "requests wait, none is out, and no wake-up was asked for");
	if (fm->clock.virtual_ns < at)
		fm->clock.virtual_ns = at;
	blk_mq_run_hw_queues(fm->q);
}

void fake_mq_set_busy(struct fake_mq *fm, unsigned int hw, bool busy)
{
	pthread_mutex_lock(&fm->lock);
	fm->hw[hw].busy = busy;
	pthread_mutex_unlock(&fm->lock);
	if (!busy)
		blk_mq_run_hw_queue(&fm->q->mq->hctxs[hw]);
}

void fake_mq_set_room(struct fake_mq *fm, unsigned int hw, bool room)
{
	pthread_mutex_lock(&fm->lock);
	fm->hw[hw].no_room = !room;
	pthread_mutex_unlock(&fm->lock);
	if (room)
		blk_mq_run_hw_queue(&fm->q->mq->hctxs[hw]);
}

void fake_mq_submit(struct fake_mq *fm, struct bio *bio, unsigned int cpu)
{
	blk_mq_submit_bio(fm->q, bio, cpu);
}
