/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backend_null.c - the null backend, null_blk's instant device: every
 * request ends, whole and without error, when a NOP in its place comes
 * back through the host's loop (dev_host_ops.submit_io).  What rqdisk
 * itself costs, without a device's time.  Reads leave their memory as it
 * was; writes are dropped.  Its args, if any, name the image that gives
 * the disk its size; nothing else of it is read or written.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "backend_uring.h"

/* Kept with each request. */
struct null_rq {
	struct dev_io io; /* first: its completion comes here */
	struct blk_dev *dev;
	struct request *rq;
};

static int null_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		     size_t whylen)
{
	const struct dev_host_ops *ops = dev->stack->host_ops;
	struct stat st;

	if (!ops || !ops->io_room || !ops->submit_io) {
		snprintf(why, whylen, "null: this host cannot carry out I/O");
		return -EINVAL;
	}
	if (args && *args) {
		int fd, ret = file_image_size(args, lim, &st, why, whylen);

		if (ret)
			return ret;
		/* nothing of it is read, but its user may read it, as a file image's must */
		fd = open(args, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			ret = -errno;
			snprintf(why, whylen, "image %s: %s", args, strerror(errno));
			return ret;
		}
		close(fd);
	}
	lim->discard = lim->write_zeroes = true; /* dropped, as writes are */
	lim->has_cache = false;
	return 0;
}

static bool null_can_take(struct blk_dev *dev)
{
	return dev->stack->host_ops->io_room(dev->stack->host, 1);
}

static void null_complete(struct dev_io *io, int res)
{
	struct null_rq *n = (struct null_rq *)io;

	dev_end(n->dev, n->rq, res < 0 ? res : 0, blk_rq_sectors(n->rq));
}

static void null_submit(struct blk_dev *dev, struct request *rq)
{
	struct null_rq *n = dev_rq_pdu(dev, rq);

	n->io.done = null_complete; /* the pdu is zeroed: the rest of io too */
	n->io.op = DEV_IO_NOP;
	n->dev = dev;
	n->rq = rq;
	dev->stack->host_ops->submit_io(dev->stack->host, &n->io);
}

BACKEND_REGISTER(null,
	.description = "no I/O: each request ends at once, as null_blk (--null)",
	.rq_pdu_size = sizeof(struct null_rq),
	.open = null_open,
	.can_take = null_can_take,
	.submit = null_submit);
