/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flush.c - barrier epochs.  A barrier splits the stream: every request of
 * an epoch ends before the next epoch is let in, so the elevator only ever
 * holds the epoch being served and cannot reorder across a barrier.
 * A barrier write is a preflush epoch (the earlier writes become durable)
 * followed by the write itself, as FUA, in an epoch of its own.
 */
#include <errno.h>

#include "blk_mq.h"
#include "blktrace.h"

/* Where a request of the active epoch waits for the driver. */
static void blk_activate(struct request_queue *q, struct request *rq)
{
	blk_add_trace_rq(q, rq, BLK_TA_INSERT);
	q->epoch_count++;
	if (q->mq) { /* a multi-queue queue: tags, then the elevator or a software queue */
		blk_mq_activate(q, rq);
		return;
	}
	if (!(rq->rq_flags & RQF_BARRIER) && q->elevator) {
		uint64_t t0 = blk_elv_time_start(&q->lock_stats);

		elv_insert(q, rq);
		blk_elv_time_end(&q->lock_stats, t0, &rq->elv_ns);
		return;
	}
	elv_rqhash_del(q, rq); /* the dispatch list is out of merge reach */
	TAILQ_INSERT_TAIL(&q->queue_head, rq, queuelist);
}

/* Let the next epoch in once the active one has ended. */
static void blk_epoch_advance(struct request_queue *q)
{
	struct request *rq;

	while (!q->epoch_count && (rq = TAILQ_FIRST(&q->hold))) {
		q->active_epoch = rq->epoch;
		while ((rq = TAILQ_FIRST(&q->hold)) && rq->epoch == q->active_epoch) {
			TAILQ_REMOVE(&q->hold, rq, holdlist);
			rq->rq_flags &= ~RQF_HELD;
			if (q->preflush_error && (rq->cmd_flags & REQ_BARRIER))
				rq->errors = q->preflush_error;
			blk_activate(q, rq);
		}
		q->preflush_error = 0;
	}
	if (!q->epoch_count)
		q->active_epoch = q->submit_epoch;
}

void blk_epoch_add(struct request_queue *q, struct request *rq)
{
	if (rq->epoch == q->active_epoch) {
		blk_activate(q, rq);
		return;
	}
	rq->rq_flags |= RQF_HELD;
	TAILQ_INSERT_TAIL(&q->hold, rq, holdlist);
	blk_epoch_advance(q);
}

void blk_epoch_done(struct request_queue *q, struct request *rq)
{
	if (rq->cmd_flags & REQ_PREFLUSH)
		q->preflush_error = rq->errors;
	q->epoch_count--;
	blk_epoch_advance(q);
}

/*
 * Open the epoch of a barrier bio (after a preflush epoch when it carries
 * data) before its requests are made; blk_barrier_end() closes it.
 */
int blk_barrier_begin(struct request_queue *q, struct bio *bio)
{
	if (op_has_data(bio->bi_op) || bio->bi_size) {
		struct request *flush;

		q->submit_epoch++;
		flush = blk_alloc_request(q, NULL);
		if (!flush)
			return -ENOMEM;
		flush->cmd_flags = REQ_PREFLUSH;
		flush->rq_flags = RQF_BARRIER;
		flush->pid = bio->bi_pid;
		flush->ioprio = bio->bi_ioprio;
		flush->blkcg = bio->bi_blkcg;
		blk_add_trace_rq(q, flush, BLK_TA_GETRQ);
		blk_epoch_add(q, flush);
		bio->bi_flags |= REQ_FUA;
	}
	q->submit_epoch++;
	return 0;
}

void blk_barrier_end(struct request_queue *q)
{
	q->submit_epoch++;
	blk_epoch_advance(q);
}
