/* SPDX-License-Identifier: BSD-3-Clause */
/* queue_stack.c - the request queue as the host of a device stack: the layers' calls up. */
#include <stdlib.h>

#include "blk_mq.h"
#include "blkdev.h"
#include "blktrace.h"
#include "queue_stack.h"

static uint64_t qs_now(void *queue)
{
	struct request_queue *q = queue;

	return blk_clock_now(q->clock);
}

/* On a multi-queue queue, every hardware queue's driver tags may be out at once. */
static unsigned int qs_depth(void *queue)
{
	struct request_queue *q = queue;
	unsigned int tags;

	if (!queue_is_mq(q))
		return q->limits.nr_requests;
	tags = q->mq->set->nr_hw_queues * q->mq->set->queue_depth;
	return tags > q->limits.nr_requests ? tags : q->limits.nr_requests;
}

static unsigned int qs_max_segments(void *queue)
{
	struct request_queue *q = queue;

	return queue_max_segments(&q->limits);
}

static unsigned int qs_max_hw_sectors(void *queue)
{
	struct request_queue *q = queue;

	return q->limits.max_hw_sectors;
}

static int qs_map_sg(void *queue, struct request *rq, struct iovec *sg)
{
	return blk_rq_map_sg(queue, rq, sg);
}

static void qs_kick(void *queue)
{
	__blk_run_queue(queue);
}

static void qs_end_request(void *queue, struct request *rq, int error, unsigned int nr_sectors)
{
	__blk_end_request(rq, error, nr_sectors);
}

/* The request, the queue's pdu after it (blk_rq_pdu), then the bio and its one segment. */
static struct request *qs_alloc_request(void *queue, enum req_op op, unsigned int flags,
					sector_t sector, void *buf, unsigned int len)
{
	struct request_queue *q = queue;
	size_t pdu = (q->rq_pdu_size + 15) & ~(size_t)15;
	struct request *rq = calloc(1, sizeof(*rq) + pdu + sizeof(struct bio) +
					      sizeof(struct bio_vec));
	struct bio *bio;
	struct bio_vec *bv;

	if (!rq)
		return NULL;
	bio = (struct bio *)((char *)(rq + 1) + pdu);
	bv = (struct bio_vec *)(bio + 1);
	*bv = (struct bio_vec){ buf, len };
	bio_init(bio, op, sector, len, bv, op_has_data(op) ? 1 : 0);
	bio->bi_flags = flags;
	bio->bi_remaining = 1;
	rq->q = q;
	rq->cmd_op = op;
	rq->cmd_flags = flags;
	rq->sector = rq->hard_sector = rq->issue_sector = sector;
	rq->nr_sectors = rq->hard_nr_sectors = rq->issue_nr_sectors = len >> SECTOR_SHIFT;
	rq->bio = rq->biotail = bio;
	rq->nr_phys_segments = rq->nr_hw_segments = op_has_data(op) ? 1 : 0;
	rq->start_time_ns = rq->io_start_time_ns = blk_clock_now(q->clock);
	blk_rq_init_walk(rq);
	return rq;
}

static bool qs_tracing(void *queue)
{
	struct request_queue *q = queue;

	return q->blk_trace != NULL;
}

static void qs_trace_msg(void *queue, const char *text)
{
	blk_add_trace_msg(queue, text);
}

static const struct dev_queue_ops blk_stack_queue_ops = {
	.now = qs_now,
	.depth = qs_depth,
	.max_segments = qs_max_segments,
	.max_hw_sectors = qs_max_hw_sectors,
	.map_sg = qs_map_sg,
	.kick = qs_kick,
	.end_request = qs_end_request,
	.alloc_request = qs_alloc_request,
	.tracing = qs_tracing,
	.trace_msg = qs_trace_msg,
};

void blk_stack_set_queue(struct dev_stack *s, struct request_queue *q)
{
	s->queue_ops = &blk_stack_queue_ops;
	s->queue = q;
}

/*
 * What the stack takes is what the queue lets through: an op the stack
 * does not take gets a limit of 0, so that the queue refuses it
 * (EOPNOTSUPP) before any layer sees it, as Linux's max_discard_sectors
 * of 0 means no discard.  One it takes keeps the queue's limit, or the
 * default where the queue had none.  Block sizes, the memory alignment
 * and max_sectors only ever tighten what the queue had, as a driver's
 * limits stack in Linux.  Whether it seeks is the stack's word alone.
 */
int blk_queue_stack_limits(struct request_queue *q, const struct dev_limits *lim, char *why,
			   size_t whylen)
{
	struct queue_limits ql = q->limits;

	if (!lim->discard)
		ql.max_discard_sectors = 0;
	else if (!ql.max_discard_sectors)
		ql.max_discard_sectors = BLK_DEF_MAX_DISCARD_SECTORS;
	if (!lim->write_zeroes)
		ql.max_write_zeroes_sectors = 0;
	else if (!ql.max_write_zeroes_sectors)
		ql.max_write_zeroes_sectors = BLK_DEF_MAX_WRITE_ZEROES_SECTORS;
	if (lim->logical_block_size > ql.logical_block_size)
		ql.logical_block_size = lim->logical_block_size;
	if (lim->physical_block_size > ql.physical_block_size)
		ql.physical_block_size = lim->physical_block_size;
	if (lim->io_opt)
		ql.io_opt = lim->io_opt;
	if (lim->dma_alignment > ql.dma_alignment)
		ql.dma_alignment = lim->dma_alignment;
	if (lim->max_sectors && lim->max_sectors < ql.max_hw_sectors)
		ql.max_hw_sectors = lim->max_sectors;
	if (ql.max_sectors > ql.max_hw_sectors)
		ql.max_sectors = ql.max_hw_sectors;
	ql.rotational = lim->rotational;
	return blk_queue_set_limits(q, &ql, why, whylen);
}
