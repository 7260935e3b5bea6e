/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * elv-mqfifo.c - a test elevator with the multi-queue hooks of version 4,
 * per hardware queue (no ELEVATOR_F_MQ_SINGLE_QUEUE): a FIFO per hctx,
 * each dispatching only its own, and limit_depth keeping half the
 * scheduler tags from writes.  On a 2.6 queue it is one FIFO.
 */
#include <stdlib.h>

#include <rqdisk/elevator.h>

struct mqfifo_data {
	unsigned int nr;
	struct elv_fifo fifo[]; /* one per hardware queue; one on a 2.6 queue */
};

static int mqfifo_init_queue(struct elevator_queue *e)
{
	unsigned int nr = e->nr_hw_queues ? e->nr_hw_queues : 1;
	struct mqfifo_data *md = calloc(1, sizeof(*md) + nr * sizeof(md->fifo[0]));

	if (!md)
		return -1;
	md->nr = nr;
	for (unsigned int i = 0; i < nr; i++)
		TAILQ_INIT(&md->fifo[i]);
	e->elevator_data = md;
	return 0;
}

static void mqfifo_exit_queue(struct elevator_queue *e)
{
	free(e->elevator_data);
}

static struct elv_fifo *fifo_of(struct elevator_queue *e, struct blk_mq_hw_ctx *hctx)
{
	struct mqfifo_data *md = e->elevator_data;

	return &md->fifo[hctx ? blk_mq_hctx_index(hctx) : 0];
}

static struct request *fifo_take(struct elv_fifo *fifo)
{
	struct request *rq = TAILQ_FIRST(fifo);

	if (rq)
		TAILQ_REMOVE(fifo, rq, queuelist);
	return rq;
}

/* ---- the 2.6 hooks ---- */

static void mqfifo_add_request(struct elevator_queue *e, struct request *rq)
{
	TAILQ_INSERT_TAIL(fifo_of(e, NULL), rq, queuelist);
}

static struct request *mqfifo_dispatch_request(struct elevator_queue *e, uint64_t now_ns)
{
	(void)now_ns;
	return fifo_take(fifo_of(e, NULL));
}

static bool mqfifo_has_work(const struct elevator_queue *e)
{
	const struct mqfifo_data *md = e->elevator_data;

	return !TAILQ_EMPTY(&md->fifo[0]);
}

/* ---- the multi-queue hooks ---- */

static void mqfifo_insert_requests(struct elevator_queue *e, struct blk_mq_hw_ctx *hctx,
				   struct elv_fifo *list, bool at_head)
{
	struct elv_fifo *fifo = fifo_of(e, hctx);
	struct request *rq;

	while ((rq = fifo_take(list))) {
		if (at_head)
			TAILQ_INSERT_HEAD(fifo, rq, queuelist);
		else
			TAILQ_INSERT_TAIL(fifo, rq, queuelist);
	}
}

static struct request *mqfifo_mq_dispatch(struct elevator_queue *e, struct blk_mq_hw_ctx *hctx,
					  uint64_t now_ns)
{
	(void)now_ns;
	return fifo_take(fifo_of(e, hctx));
}

static bool mqfifo_mq_has_work(struct elevator_queue *e, struct blk_mq_hw_ctx *hctx)
{
	return !TAILQ_EMPTY(fifo_of(e, hctx));
}

static void mqfifo_limit_depth(struct elevator_queue *e, enum req_op op,
			       struct blk_mq_alloc_data *data)
{
	(void)e;
	if (op == REQ_OP_WRITE)
		data->shallow_depth = data->nr_tags / 2;
}

static struct elevator_type elevator_mqfifo = {
	.elevator_name = "mqfifo",
	.init_queue = mqfifo_init_queue,
	.exit_queue = mqfifo_exit_queue,
	.add_request = mqfifo_add_request,
	.dispatch_request = mqfifo_dispatch_request,
	.has_work = mqfifo_has_work,
	.elevator_description = "first in, first out per hardware queue (a test)",
	.mq_ops = {
		.insert_requests = mqfifo_insert_requests,
		.dispatch_request = mqfifo_mq_dispatch,
		.has_work = mqfifo_mq_has_work,
		.limit_depth = mqfifo_limit_depth,
	},
};

ELEVATOR_REGISTER(mqfifo, elevator_mqfifo)
