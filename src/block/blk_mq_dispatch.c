/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * blk_mq_dispatch.c - running a hardware queue: while a driver tag is free,
 * the next request (requeued and barrier requests first, then the
 * elevator's or the software queues') is started and handed to queue_rq.
 * Locking: see blk_mq.h.
 */
#include "blk_mq.h"
#include "blktrace.h"

static void counter_inc(unsigned long *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

/*
 * Queue lock held: rq has its queue tag and its epoch is the active one.
 * Barrier requests bypass the elevator, as on the 2.6 queue; without an
 * elevator a request waits in its software queue.
 */
void blk_mq_insert_request(struct request_queue *q, struct request *rq)
{
	struct blk_mq_hw_ctx *hctx = rq->mq_hctx;
	struct blk_mq_ctx *ctx = rq->mq_ctx;

	if (q->elevator && !(rq->rq_flags & RQF_BARRIER)) {
		uint64_t t0 = blk_elv_time_start(&q->lock_stats);

		blk_mq_sched_insert(hctx, rq);
		blk_elv_time_end(&q->lock_stats, t0, &rq->elv_ns);
		return;
	}
	elv_rqhash_del(q, rq); /* out of merge reach, as the 2.6 dispatch list */
	if (rq->rq_flags & RQF_BARRIER) {
		pthread_mutex_lock(&hctx->lock);
		TAILQ_INSERT_TAIL(&hctx->dispatch, rq, queuelist);
		pthread_mutex_unlock(&hctx->lock);
		return;
	}
	pthread_mutex_lock(&ctx->lock);
	TAILQ_INSERT_TAIL(&ctx->rq_list, rq, queuelist);
	pthread_mutex_unlock(&ctx->lock);
}

/* The head of hctx's dispatch list with a driver tag, or NULL (none there, or no tag free). */
static struct request *blk_mq_take_dispatch(struct blk_mq_hw_ctx *hctx, bool *blocked)
{
	struct request *rq;

	pthread_mutex_lock(&hctx->lock);
	rq = TAILQ_FIRST(&hctx->dispatch);
	if (rq && rq->tag < 0 && (rq->tag = blk_mq_get_tag(&hctx->tags, 0)) < 0) {
		*blocked = true;
		rq = NULL;
	}
	if (rq)
		TAILQ_REMOVE(&hctx->dispatch, rq, queuelist);
	pthread_mutex_unlock(&hctx->lock);
	return rq;
}

/* Round robin over the software queues mapped to hctx (they hold driver tags already). */
static struct request *blk_mq_take_ctx(struct blk_mq_hw_ctx *hctx)
{
	for (unsigned int i = 0; i < hctx->nr_ctx; i++) {
		struct blk_mq_ctx *ctx = hctx->ctxs[(hctx->next_ctx + i) % hctx->nr_ctx];
		struct request *rq;

		pthread_mutex_lock(&ctx->lock);
		rq = TAILQ_FIRST(&ctx->rq_list);
		if (rq)
			TAILQ_REMOVE(&ctx->rq_list, rq, queuelist);
		pthread_mutex_unlock(&ctx->lock);
		if (rq) {
			hctx->next_ctx = (hctx->next_ctx + i + 1) % hctx->nr_ctx;
			return rq;
		}
	}
	return NULL;
}

/*
 * The elevator's next request for hctx, only once a driver tag is held
 * for it: an elevator never gives out more than the device can take.
 * It goes out through hctx (a single-queue elevator serves every hctx).
 */
static struct request *blk_mq_take_sched(struct blk_mq_hw_ctx *hctx, uint64_t now)
{
	struct blk_lock_stats *s = &hctx->queue->lock_stats;
	int tag = blk_mq_get_tag(&hctx->tags, 0);
	struct request *rq;
	uint64_t t0;

	if (tag < 0)
		return NULL;
	t0 = blk_elv_time_start(s);
	rq = blk_mq_sched_dispatch(hctx, now);
	blk_elv_time_end(s, t0, rq ? &rq->elv_ns : NULL);
	if (!rq) {
		blk_mq_put_tag(&hctx->tags, tag);
		return NULL;
	}
	rq->tag = tag;
	rq->mq_hctx = hctx;
	return rq;
}

/*
 * Queue lock held: hctx's next request, holding a driver tag, or NULL:
 * none now, no driver tag free, or an elevator switch waiting for the
 * queue to drain.
 */
static struct request *blk_mq_take(struct blk_mq_hw_ctx *hctx, uint64_t now)
{
	bool blocked = false;
	struct request *rq;

	if (hctx->queue->switch_pending)
		return NULL;
	rq = blk_mq_take_dispatch(hctx, &blocked);
	if (rq || blocked)
		return rq;
	return hctx->queue->elevator ? blk_mq_take_sched(hctx, now) : blk_mq_take_ctx(hctx);
}

/*
 * Queue lock held: start rq as blk_start_request does.  False when it has
 * ended instead: a failed preflush fails its barrier write, which never
 * reaches the device.
 */
static bool blk_mq_start_request(struct request_queue *q, struct request *rq, uint64_t now)
{
	int error;

	blk_start_request(q, rq, now);
	error = rq->errors;
	if (error) {
		end_that_request_first(rq, error, rq->hard_nr_sectors);
		end_that_request_last(rq); /* frees rq */
	}
	return !error;
}

/*
 * The next request for the driver, started, or NULL.  Taken and started
 * in one hold of the queue lock: a request is always in a list or in
 * flight, never between, which an elevator switch relies on.
 */
static struct request *blk_mq_next(struct blk_mq_hw_ctx *hctx, uint64_t now, bool *ended)
{
	struct request_queue *q = hctx->queue;
	struct request *rq;

	blk_queue_lock(q);
	while ((rq = blk_mq_take(hctx, now)) && !blk_mq_start_request(q, rq, now))
		*ended = true;
	blk_queue_unlock(q);
	return rq;
}

/*
 * The driver was busy: rq goes back to the head of hctx's dispatch list,
 * keeping its tags.  True when that let a pending elevator switch finish:
 * the requests it moved need a run.
 */
static bool blk_mq_requeue(struct blk_mq_hw_ctx *hctx, struct request *rq)
{
	struct request_queue *q = hctx->queue;
	bool switched;

	blk_queue_lock(q);
	blk_add_trace_rq(q, rq, BLK_TA_REQUEUE);
	rq->rq_flags &= ~RQF_STARTED;
	q->in_flight--;
	q->stats.in_flight[rq_data_dir(rq)]--;
	pthread_mutex_lock(&hctx->lock);
	TAILQ_INSERT_HEAD(&hctx->dispatch, rq, queuelist);
	pthread_mutex_unlock(&hctx->lock);
	switched = q->switch_pending;
	blk_elevator_switch_check(q); /* it was the last in flight */
	switched = switched && !q->switch_pending;
	blk_queue_unlock(q);
	counter_inc(&hctx->busy);
	return switched;
}

/*
 * Hand requests to the driver until none is ready, no driver tag is free,
 * or it is busy (has_room says so first, or queue_rq).
 */
static bool blk_mq_dispatch(struct blk_mq_hw_ctx *hctx)
{
	struct request_queue *q = hctx->queue;
	const struct blk_mq_ops *ops = q->mq->set->ops;
	uint64_t now = blk_clock_now(q->clock);
	unsigned int queued = 0;
	bool ended = false;
	struct request *rq;

	while ((!ops->has_room || ops->has_room(hctx)) && (rq = blk_mq_next(hctx, now, &ended))) {
		if (ops->queue_rq(hctx, rq) != BLK_STS_OK) {
			ended |= blk_mq_requeue(hctx, rq);
			break;
		}
		queued++;
		counter_inc(&hctx->dispatched);
	}
	if (queued && ops->commit_rqs)
		ops->commit_rqs(hctx);
	return ended;
}

/*
 * Run hctx, never re-entering it: a run asked for while another thread
 * (or this one, from queue_rq) runs it is done by that run, after.
 */
void blk_mq_run_hw_queue(struct blk_mq_hw_ctx *hctx)
{
	bool again, ended = false;

	pthread_mutex_lock(&hctx->lock);
	counter_inc(&hctx->run);
	if (hctx->running) {
		hctx->run_again = true;
		pthread_mutex_unlock(&hctx->lock);
		return;
	}
	hctx->running = true;
	do {
		hctx->run_again = false;
		pthread_mutex_unlock(&hctx->lock);
		ended |= blk_mq_dispatch(hctx);
		pthread_mutex_lock(&hctx->lock);
		again = hctx->run_again;
		if (!again)
			hctx->running = false;
	} while (again);
	pthread_mutex_unlock(&hctx->lock);
	/* a request ended at its start, or a switch moved requests: others may go */
	if (ended)
		blk_mq_kick_hw_queues(hctx->queue);
}

void blk_mq_run_hw_queues(struct request_queue *q)
{
	for (unsigned int i = 0; i < q->mq->set->nr_hw_queues; i++)
		blk_mq_run_hw_queue(&q->mq->hctxs[i]);
}

/* hctx has work: run it here, or have its own thread run it (blk_mq_ops.run_async). */
void blk_mq_kick_hw_queue(struct blk_mq_hw_ctx *hctx)
{
	const struct blk_mq_ops *ops = hctx->queue->mq->set->ops;

	if (ops->run_async)
		ops->run_async(hctx);
	else
		blk_mq_run_hw_queue(hctx);
}

void blk_mq_kick_hw_queues(struct request_queue *q)
{
	for (unsigned int i = 0; i < q->mq->set->nr_hw_queues; i++)
		blk_mq_kick_hw_queue(&q->mq->hctxs[i]);
}
