/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backend_null.c - the null backend, null_blk's instant device: every
 * request ends, whole and without error, when a NOP in its place comes
 * back through the loop's ring.  What rqdisk itself costs, without a
 * device's time.  Reads leave their memory as it was; writes are dropped.
 */
#include <liburing.h>
#include <stdio.h>

#include "backend_uring.h"
#include "driver_uring.h"

/* Kept with each request. */
struct null_rq {
	struct uring_op op; /* first: the CQE's user_data is the request's pdu */
	struct blk_dev *dev;
	struct request *rq;
};

static int null_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		     size_t whylen)
{
	dev->priv = dev->stack->host;
	lim->discard = lim->write_zeroes = true; /* dropped, as writes are */
	lim->has_cache = false;
	return 0;
}

static bool null_can_take(struct blk_dev *dev)
{
	return uring_driver_sq_room(dev->priv, 1);
}

static void null_complete(struct uring_op *op, int res)
{
	struct null_rq *n = (struct null_rq *)op;

	dev_end(n->dev, n->rq, res < 0 ? res : 0, blk_rq_sectors(n->rq));
}

static void null_submit(struct blk_dev *dev, struct request *rq)
{
	struct null_rq *n = dev_rq_pdu(dev, rq);
	struct io_uring_sqe *sqe = uring_driver_get_sqe(dev->priv);

	n->op.done = null_complete;
	n->dev = dev;
	n->rq = rq;
	io_uring_prep_nop(sqe);
	uring_op_set(sqe, &n->op);
}

BACKEND_REGISTER(null,
	.description = "no I/O: each request ends at once, as null_blk (--null)",
	.rq_pdu_size = sizeof(struct null_rq),
	.open = null_open,
	.can_take = null_can_take,
	.submit = null_submit);
