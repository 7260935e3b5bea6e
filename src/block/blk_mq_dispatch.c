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

	blk_mq_mark(hctx, BLK_MQ_S_RUN);
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

void blk_mq_mark(struct blk_mq_hw_ctx *hctx, unsigned int bits)
{
	__atomic_fetch_or(&hctx->state, bits, __ATOMIC_ACQ_REL);
}

/* Clear bits of hctx's state; true when any of them was set. */
static bool blk_mq_test_clear(struct blk_mq_hw_ctx *hctx, unsigned int bits)
{
	if (!(__atomic_load_n(&hctx->state, __ATOMIC_ACQUIRE) & bits))
		return false; /* the common case: a load, no locked write */
	return __atomic_fetch_and(&hctx->state, ~bits, __ATOMIC_ACQ_REL) & bits;
}

/*
 * Queue lock held: a request ended, giving back a driver tag of hctx
 * (NULL: none) and room in the device.  Restart what stopped for them, as
 * Linux's blk_mq_sched_restart: hctx if it waited for a driver tag of its
 * own, and every queue that stopped with work the device (busy) or the
 * elevator (idling, no token, a shared single-queue instance) held back,
 * as Linux restarts every marked queue that shares the tags.  Nothing else
 * is kicked.
 *
 * No lost wake-up: a run decides it stops and marks why in one hold of
 * the queue lock (blk_mq_next), and every driver or scheduler tag goes
 * back, and an end looks at the marks, under that lock too: an end either
 * came before the run looked (the run saw the tag free) or sees the mark.
 * A busy answer is the one decided without the lock (queue_rq): its
 * requeue re-checks nr_ended (blk_mq_requeue).
 */
void blk_mq_sched_restart(struct request_queue *q, struct blk_mq_hw_ctx *hctx)
{
	struct blk_mq_queue *mq = q->mq;

	mq->nr_ended++;
	if (hctx && blk_mq_test_clear(hctx, BLK_MQ_S_TAG_RESTART))
		blk_mq_mark(hctx, BLK_MQ_S_RUN);
	for (unsigned int i = 0; i < mq->set->nr_hw_queues; i++)
		if (blk_mq_test_clear(&mq->hctxs[i], BLK_MQ_S_SCHED_RESTART))
			blk_mq_mark(&mq->hctxs[i], BLK_MQ_S_RUN);
}

/*
 * Kick each hardware queue marked BLK_MQ_S_RUN, clearing the mark.  No
 * lock held, or the queue lock with run_async (it only wakes a thread).
 */
void blk_mq_kick_marked(struct request_queue *q)
{
	for (unsigned int i = 0; i < q->mq->set->nr_hw_queues; i++)
		if (blk_mq_test_clear(&q->mq->hctxs[i], BLK_MQ_S_RUN))
			blk_mq_kick_hw_queue(&q->mq->hctxs[i]);
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
		blk_mq_mark(hctx, BLK_MQ_S_TAG_RESTART);
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
 * Stopping with work left, hctx marks what restarts it.
 */
static struct request *blk_mq_take_sched(struct blk_mq_hw_ctx *hctx, uint64_t now)
{
	struct blk_lock_stats *s = &hctx->queue->lock_stats;
	int tag = blk_mq_get_tag(&hctx->tags, 0);
	struct request *rq;
	uint64_t t0;

	if (tag < 0) {
		blk_mq_mark(hctx, BLK_MQ_S_TAG_RESTART);
		return NULL;
	}
	t0 = blk_elv_time_start(s);
	rq = blk_mq_sched_dispatch(hctx, now);
	blk_elv_time_end(s, t0, rq ? &rq->elv_ns : NULL);
	if (!rq) {
		blk_mq_put_tag(&hctx->tags, tag);
		if (blk_mq_sched_has_work(hctx))
			blk_mq_mark(hctx, BLK_MQ_S_SCHED_RESTART);
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
 * flight, never between, which an elevator switch relies on.  *seen: the
 * requests ended by then.
 */
static struct request *blk_mq_next(struct blk_mq_hw_ctx *hctx, uint64_t now, bool *ended,
				   unsigned long *seen)
{
	struct request_queue *q = hctx->queue;
	const struct blk_mq_ops *ops = q->mq->set->ops;
	struct request *rq;

	blk_queue_lock(q);
	if (ops->has_room && !ops->has_room(hctx)) {
		/* in the hold an end reads the marks in: the end that makes room runs hctx */
		blk_mq_mark(hctx, BLK_MQ_S_SCHED_RESTART);
		rq = NULL;
	} else {
		while ((rq = blk_mq_take(hctx, now)) && !blk_mq_start_request(q, rq, now))
			*ended = true;
	}
	*seen = q->mq->nr_ended;
	blk_queue_unlock(q);
	return rq;
}

/*
 * The driver was busy: rq goes back to the head of hctx's dispatch list,
 * keeping its tags, and any end restarts hctx.  An end between queue_rq's
 * answer and this (nr_ended moved since seen) may have made the room the
 * driver lacked and found no mark: then hctx runs again at once.  True
 * when the requeue let a pending elevator switch finish: the requests it
 * moved need a run.
 */
static bool blk_mq_requeue(struct blk_mq_hw_ctx *hctx, struct request *rq, unsigned long seen)
{
	struct request_queue *q = hctx->queue;
	bool switched;

	blk_queue_lock(q);
	blk_add_trace_rq(q, rq, BLK_TA_REQUEUE);
	rq->rq_flags &= ~RQF_STARTED;
	q->in_flight--;
	q->stats.in_flight[rq_data_dir(rq)]--;
	blk_mq_mark(hctx, BLK_MQ_S_SCHED_RESTART);
	pthread_mutex_lock(&hctx->lock);
	TAILQ_INSERT_HEAD(&hctx->dispatch, rq, queuelist);
	if (q->mq->nr_ended != seen)
		hctx->run_again = true;
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
	unsigned long seen;
	bool ended = false;
	struct request *rq;

	while ((rq = blk_mq_next(hctx, now, &ended, &seen))) {
		if (ops->queue_rq(hctx, rq) != BLK_STS_OK) {
			ended |= blk_mq_requeue(hctx, rq, seen);
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
	/* a request ended at its start, or a switch moved requests: what they marked may go */
	if (ended)
		blk_mq_kick_marked(hctx->queue);
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

/* Kick every hardware queue: what it was marked to run for (BLK_MQ_S_RUN) is answered. */
void blk_mq_kick_hw_queues(struct request_queue *q)
{
	for (unsigned int i = 0; i < q->mq->set->nr_hw_queues; i++) {
		blk_mq_test_clear(&q->mq->hctxs[i], BLK_MQ_S_RUN);
		blk_mq_kick_hw_queue(&q->mq->hctxs[i]);
	}
}
