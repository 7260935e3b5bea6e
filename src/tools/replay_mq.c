/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replay_mq.c - the replay's multi-queue driver: queue_rq hands a request
 * to the device stack while its top takes more; a kick only notes the
 * hardware queue, and replay_mq_run runs the noted ones in the order they
 * were noted, as long as the device has room, so that every run of the
 * same trace takes the same steps.
 */
#include <errno.h>
#include <stdio.h>

#include "replay_mq.h"

static struct replay_mq *replay_mq_of(const struct request_queue *q)
{
	return q->mq->set->driver_data;
}

/* blk_mq_ops.queue_rq, no lock held: the stack takes rq under the queue lock, or it is busy. */
static blk_status_t replay_mq_queue_rq(struct blk_mq_hw_ctx *hctx, struct request *rq)
{
	struct request_queue *q = hctx->queue;
	struct replay_mq *m = replay_mq_of(q);
	blk_status_t ret = BLK_STS_OK;

	blk_queue_lock(q);
	if (dev_can_take(m->stack->top))
		dev_submit(m->stack->top, rq);
	else
		ret = BLK_STS_RESOURCE;
	blk_queue_unlock(q);
	return ret;
}

/* blk_mq_ops.run_async, any lock held or none: noted, run by replay_mq_run. */
static void replay_mq_run_async(struct blk_mq_hw_ctx *hctx)
{
	struct replay_mq *m = replay_mq_of(hctx->queue);
	unsigned int n = hctx->queue_num;

	if (m->pending[n])
		return;
	m->pending[n] = true;
	m->order[(m->head + m->nr_pending++) % REPLAY_MAX_HW_QUEUES] = n;
}

/*
 * blk_mq_ops.has_room, queue lock held: whether the device's top takes one
 * more, asked before a request is taken, as the 2.6 queue's request_fn
 * asks before it fetches one, so that the elevator chooses each request
 * when the device can take it, not earlier.
 */
static bool replay_mq_has_room(struct blk_mq_hw_ctx *hctx)
{
	return dev_can_take(replay_mq_of(hctx->queue)->stack->top);
}

/* The same, from the replay's loop, which holds no lock. */
static bool replay_mq_room(struct blk_mq_hw_ctx *hctx)
{
	bool room;

	blk_queue_lock(hctx->queue);
	room = replay_mq_has_room(hctx);
	blk_queue_unlock(hctx->queue);
	return room;
}

static const struct blk_mq_ops replay_mq_ops = {
	.queue_rq = replay_mq_queue_rq,
	.run_async = replay_mq_run_async,
	.has_room = replay_mq_has_room,
};

/*
 * The queue's request_fn, lock held: where the 2.6 queue would dispatch
 * (a request ended, a layer's kick, an unplug), every hardware queue is
 * asked to run, as rqdisk's io_uring driver does.
 */
static void replay_mq_request_fn(struct request_queue *q)
{
	replay_mq_of(q)->ran = true;
	blk_mq_kick_hw_queues(q);
}

bool replay_mq_take_ran(struct request_queue *q)
{
	struct replay_mq *m = replay_mq_of(q);
	bool ran = m->ran;

	m->ran = false;
	return ran;
}

struct request_queue *replay_mq_init(struct replay_mq *m, struct dev_stack *stack,
				     unsigned int nr_hw, unsigned int depth,
				     const struct blk_clock *clock, char *why, size_t whylen)
{
	struct request_queue *q;

	m->stack = stack;
	m->set = (struct blk_mq_tag_set){
		.ops = &replay_mq_ops,
		.nr_hw_queues = nr_hw,
		.queue_depth = depth,
		.nr_cpus = nr_hw, /* never the machine's: the same mapping on every host */
		.driver_data = m,
	};
	if (nr_hw > REPLAY_MAX_HW_QUEUES) {
		snprintf(why, whylen, "more than %d hardware queues", REPLAY_MAX_HW_QUEUES);
		return NULL;
	}
	q = blk_mq_init_queue(&m->set, clock, why, whylen);
	if (q)
		q->request_fn = replay_mq_request_fn;
	return q;
}

void replay_mq_submit(struct request_queue *q, struct bio *bio, unsigned int cpu)
{
	struct blk_mq_hw_ctx *hctx = q->mq->ctxs[cpu % q->mq->nr_ctx].hctx;

	/* the submitter's hardware queue first, as blk_mq_submit_bio kicks it */
	replay_mq_run_async(hctx);
	if (__blk_mq_submit_bio(q, bio, cpu))
		blk_mq_kick_hw_queues(q);
}

void replay_mq_run(struct request_queue *q)
{
	struct replay_mq *m = replay_mq_of(q);

	while (m->nr_pending && replay_mq_room(&q->mq->hctxs[m->order[m->head]])) {
		unsigned int n = m->order[m->head];

		m->head = (m->head + 1) % REPLAY_MAX_HW_QUEUES;
		m->nr_pending--;
		m->pending[n] = false;
		blk_mq_run_hw_queue(&q->mq->hctxs[n]);
	}
}

void replay_mq_kick_all(struct request_queue *q)
{
	blk_mq_kick_hw_queues(q);
}

/* A queue of one hardware queue, over no device, told to take name: what replay_run would meet. */
int replay_mq_check_elevator(const char *name, char *why, size_t whylen)
{
	struct dev_stack none = { 0 };
	struct replay_mq m = { 0 };
	struct request_queue *q = replay_mq_init(&m, &none, 1, 1, NULL, why, whylen);
	int ret;

	if (!q)
		return -ENOMEM;
	ret = blk_mq_elevator_init(q, name, why, whylen);
	blk_mq_free_queue(q);
	return ret;
}
