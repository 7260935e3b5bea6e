/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backend_file.c - the file backend: each request becomes SQEs on the
 * image in the loop's ring.  A short transfer is continued from the first
 * byte not moved, and the whole sectors moved end as they go.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backend_uring.h"
#include "driver_uring.h"
#include "queue_limits.h" /* BLK_PAGE_SIZE */

/*
 * Write-zeroes on a file system that cannot zero a range writes from one
 * zeroed buffer, repeated in up to FILE_ZERO_IOVS entries: 1 MiB an SQE.
 */
#define FILE_ZERO_BUF_SIZE (64u * 1024)
#define FILE_ZERO_IOVS 16u

/* What the next SQE of a slot does. */
enum file_kind {
	FILE_READ,
	FILE_WRITE,
	FILE_FSYNC, /* a flush, or the sync that makes a FUA discard or zeroing durable */
	FILE_DISCARD,
	FILE_ZERO_RANGE,
	FILE_ZERO_WRITE, /* the fallback: write the zeros */
};

struct file_backend;

/* One request in flight, and where the kernel is in it. */
struct file_slot {
	struct uring_op op; /* the CQEs of its SQEs come here */
	struct file_backend *fb;
	TAILQ_ENTRY(file_slot) link; /* on the free or the resubmit list */
	struct request *rq;
	enum file_kind kind;
	struct iovec *iov;    /* dev_max_segments() entries */
	unsigned int iov_idx; /* the first entry not fully transferred */
	unsigned int nr_iov;
	uint64_t pos; /* byte offset on the file, at dispatch */
	size_t len;   /* bytes of the request, at dispatch */
	size_t xfer;  /* bytes the kernel has moved so far; whole sectors of it are ended */
	unsigned int ended; /* sectors ended up the stack: a filter above may hold them */
};

TAILQ_HEAD(file_slot_list, file_slot);

struct file_backend {
	struct blk_dev *dev;
	struct uring_driver *d;
	int fd;
	struct file_slot *slots;
	struct iovec *iovs; /* every slot's entries, in one block */
	unsigned int max_segs;
	struct file_slot_list free;
	struct file_slot_list resubmit; /* continuations still to be given an SQE */
	void *zero_buf;
	unsigned int zero_iovs;
	bool no_zero_range; /* the file system said EOPNOTSUPP once: go straight to writes */
};

static enum file_kind file_kind_of(const struct file_backend *fb, const struct request *rq)
{
	switch (rq->cmd_op) {
	case REQ_OP_READ:
		return FILE_READ;
	case REQ_OP_WRITE:
		return FILE_WRITE;
	case REQ_OP_DISCARD:
		return FILE_DISCARD;
	case REQ_OP_WRITE_ZEROES:
		return fb->no_zero_range ? FILE_ZERO_WRITE : FILE_ZERO_RANGE;
	case REQ_OP_FLUSH:
		break;
	}
	return FILE_FSYNC;
}

/* Take rq into slot s: its memory is mapped once, here, and only walked on after. */
static void file_slot_init(struct file_backend *fb, struct file_slot *s, struct request *rq)
{
	size_t mapped = 0;

	s->rq = rq;
	rq->special = s;
	s->kind = file_kind_of(fb, rq);
	if (s->kind == FILE_ZERO_WRITE)
		uring_driver_stats_of(fb->d)->zero_writes++;
	s->pos = blk_rq_pos(rq) << SECTOR_SHIFT;
	s->len = (size_t)blk_rq_sectors(rq) << SECTOR_SHIFT;
	s->xfer = 0;
	s->ended = 0;
	s->iov_idx = 0;
	s->nr_iov = 0;
	if (!op_has_data(rq->cmd_op))
		return;
	/* The core counts segments the way it maps them: no overflow. */
	s->nr_iov = (unsigned int)dev_map_sg(fb->dev, rq, s->iov);
	assert(s->nr_iov <= fb->max_segs);
	for (unsigned int i = 0; i < s->nr_iov; i++)
		mapped += s->iov[i].iov_len;
	assert(mapped == s->len);
}

/* Drop the first bytes of the slot's entries: they are on the file (or in memory) now. */
static void file_iov_advance(struct file_slot *s, size_t bytes)
{
	while (bytes) {
		struct iovec *v = &s->iov[s->iov_idx];

		assert(s->iov_idx < s->nr_iov);
		if (bytes < v->iov_len) {
			v->iov_base = (char *)v->iov_base + bytes;
			v->iov_len -= bytes;
			return;
		}
		bytes -= v->iov_len;
		s->iov_idx++;
	}
}

/* The next piece of zeros, from the one zeroed buffer. */
static unsigned int file_zero_iov(struct file_backend *fb, struct file_slot *s)
{
	size_t left = s->len - s->xfer;
	unsigned int n = 0;

	while (left && n < fb->zero_iovs) {
		size_t len = left < FILE_ZERO_BUF_SIZE ? left : FILE_ZERO_BUF_SIZE;

		s->iov[n++] = (struct iovec){ fb->zero_buf, len };
		left -= len;
	}
	return n;
}

static void file_prep_write(struct file_backend *fb, struct file_slot *s,
			    struct io_uring_sqe *sqe, const struct iovec *iov, unsigned int n)
{
	io_uring_prep_writev(sqe, fb->fd, iov, n, s->pos + s->xfer);
	/* FUA: this write is durable when it completes, and nothing more is. */
	if (s->rq->cmd_flags & REQ_FUA)
		sqe->rw_flags = RWF_DSYNC;
}

/* Fill sqe with what slot s needs next: the whole request, or what is left of it. */
static void file_prep(struct file_backend *fb, struct file_slot *s, struct io_uring_sqe *sqe)
{
	switch (s->kind) {
	case FILE_READ:
		io_uring_prep_readv(sqe, fb->fd, s->iov + s->iov_idx, s->nr_iov - s->iov_idx,
				    s->pos + s->xfer);
		break;
	case FILE_WRITE:
		file_prep_write(fb, s, sqe, s->iov + s->iov_idx, s->nr_iov - s->iov_idx);
		break;
	case FILE_ZERO_WRITE:
		file_prep_write(fb, s, sqe, s->iov, file_zero_iov(fb, s));
		break;
	case FILE_FSYNC:
		io_uring_prep_fsync(sqe, fb->fd, IORING_FSYNC_DATASYNC);
		break;
	case FILE_DISCARD:
		io_uring_prep_fallocate(sqe, fb->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
					(off_t)s->pos, (off_t)s->len);
		break;
	case FILE_ZERO_RANGE:
		io_uring_prep_fallocate(sqe, fb->fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
					(off_t)s->pos, (off_t)s->len);
		break;
	}
	uring_op_set(sqe, &s->op);
}

/* Give waiting continuations their SQEs, oldest first; false if the SQ filled up. */
static bool file_resubmit(struct file_backend *fb)
{
	struct file_slot *s;

	while ((s = TAILQ_FIRST(&fb->resubmit))) {
		if (!uring_driver_sq_room(fb->d, 1))
			return false;
		TAILQ_REMOVE(&fb->resubmit, s, link);
		file_prep(fb, s, uring_driver_get_sqe(fb->d));
	}
	return true;
}

/* The loop's kick, after each reap: continuations go out before new requests. */
static void file_kick(void *arg)
{
	file_resubmit(arg);
}

/* A free slot and room in the SQ, with no continuation waiting for room before it. */
static bool file_can_take(struct blk_dev *dev)
{
	struct file_backend *fb = dev->priv;

	return !TAILQ_EMPTY(&fb->free) && file_resubmit(fb) && uring_driver_sq_room(fb->d, 1);
}

/* rq is started and file_can_take() said yes: it goes out in this batch. */
static void file_submit(struct blk_dev *dev, struct request *rq)
{
	struct file_backend *fb = dev->priv;
	struct file_slot *s = TAILQ_FIRST(&fb->free);

	assert(s);
	TAILQ_REMOVE(&fb->free, s, link);
	file_slot_init(fb, s, rq);
	file_prep(fb, s, uring_driver_get_sqe(fb->d));
}

/*
 * The slot's request is over: the whole sectors the kernel moved that
 * have not ended yet end as done, and error is for the rest only.
 */
static void file_finish(struct file_backend *fb, struct file_slot *s, int error)
{
	struct request *rq = s->rq;
	unsigned int moved = (unsigned int)(s->xfer >> SECTOR_SHIFT) - s->ended;
	unsigned int left = (unsigned int)(s->len >> SECTOR_SHIFT) - s->ended;

	/* The slot is free before the queue runs again from the end. */
	s->rq = NULL;
	rq->special = NULL;
	TAILQ_INSERT_HEAD(&fb->free, s, link);
	if (error && moved) {
		dev_end(fb->dev, rq, 0, moved);
		left -= moved;
	}
	dev_end(fb->dev, rq, error, left);
}

static void file_again(struct file_backend *fb, struct file_slot *s)
{
	TAILQ_INSERT_TAIL(&fb->resubmit, s, link);
}

/*
 * A read or write moved res bytes.  End the whole sectors now covered and
 * go on from the first byte not moved: a short transfer is continued, never
 * taken for the whole.  No progress at all (end of file) fails the rest.
 */
static void file_complete_rw(struct file_backend *fb, struct file_slot *s, int res)
{
	unsigned int sectors;

	if (res <= 0) {
		file_finish(fb, s, res ? res : -EIO);
		return;
	}
	assert((size_t)res <= s->len - s->xfer);
	sectors = (unsigned int)(((s->xfer + (size_t)res) >> SECTOR_SHIFT) -
				 (s->xfer >> SECTOR_SHIFT));
	s->xfer += (size_t)res;
	if (s->kind != FILE_ZERO_WRITE)
		file_iov_advance(s, (size_t)res);
	if (s->xfer == s->len) {
		file_finish(fb, s, 0);
		return;
	}
	file_again(fb, s); /* first: the end below may run the queue, which resubmits */
	if (sectors) {
		s->ended += sectors;
		dev_end(fb->dev, s->rq, 0, sectors);
	}
}

/* A discard or zeroing is done: with FUA it is durable only after a datasync. */
static void file_complete_alloc(struct file_backend *fb, struct file_slot *s, int res)
{
	if (res == -EOPNOTSUPP && s->kind == FILE_ZERO_RANGE) {
		fb->no_zero_range = true;
		s->kind = FILE_ZERO_WRITE;
		uring_driver_stats_of(fb->d)->zero_writes++;
		file_again(fb, s);
		return;
	}
	if (!res && (s->rq->cmd_flags & REQ_FUA)) {
		s->kind = FILE_FSYNC;
		file_again(fb, s);
		return;
	}
	file_finish(fb, s, res);
}

/*
 * A CQE of the slot's, lock held.  EAGAIN, EINTR, ECANCELED (work the
 * kernel dropped from an io-wq before it started): nothing happened, and
 * the same SQE goes again.
 */
static void file_complete(struct uring_op *op, int res)
{
	struct file_slot *s = (struct file_slot *)op;
	struct file_backend *fb = s->fb;

	assert(s->rq && s->rq->special == s);
	if (res == -EAGAIN || res == -EINTR || res == -ECANCELED) {
		file_again(fb, s);
		return;
	}
	switch (s->kind) {
	case FILE_READ:
	case FILE_WRITE:
	case FILE_ZERO_WRITE:
		file_complete_rw(fb, s, res);
		break;
	case FILE_DISCARD:
	case FILE_ZERO_RANGE:
		file_complete_alloc(fb, s, res);
		break;
	case FILE_FSYNC:
		file_finish(fb, s, res);
		break;
	}
}

static void file_free(struct file_backend *fb)
{
	free(fb->zero_buf);
	free(fb->iovs);
	free(fb->slots);
	free(fb);
}

static int file_alloc_slots(struct file_backend *fb, unsigned int nr, unsigned int max_segs)
{
	fb->slots = calloc(nr, sizeof(*fb->slots));
	fb->iovs = calloc((size_t)nr * max_segs, sizeof(*fb->iovs));
	if (!fb->slots || !fb->iovs)
		return -ENOMEM;
	fb->max_segs = max_segs;
	for (unsigned int i = 0; i < nr; i++) {
		fb->slots[i].op.done = file_complete;
		fb->slots[i].fb = fb;
		fb->slots[i].iov = fb->iovs + (size_t)i * max_segs;
		TAILQ_INSERT_TAIL(&fb->free, &fb->slots[i], link);
	}
	fb->zero_iovs = max_segs < FILE_ZERO_IOVS ? max_segs : FILE_ZERO_IOVS;
	if (posix_memalign(&fb->zero_buf, BLK_PAGE_SIZE, FILE_ZERO_BUF_SIZE))
		return -ENOMEM;
	memset(fb->zero_buf, 0, FILE_ZERO_BUF_SIZE);
	return 0;
}

/* The image is the loop's fd, opened and checked by the daemon; args is its path. */
static int file_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		     size_t whylen)
{
	struct uring_driver *d = dev->stack->host;
	struct file_backend *fb = calloc(1, sizeof(*fb));

	if (fb) {
		TAILQ_INIT(&fb->free);
		TAILQ_INIT(&fb->resubmit);
	}
	if (!fb || file_alloc_slots(fb, dev_depth(dev), dev_max_segments(dev))) {
		if (fb)
			file_free(fb);
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	fb->dev = dev;
	fb->d = d;
	fb->fd = uring_driver_fd(d);
	dev->priv = fb;
	/* punching holes and zeroing ranges, or writing zeros */
	lim->discard = lim->write_zeroes = true;
	/*
	 * A write is durable only after a flush (fdatasync), --direct or not:
	 * O_DIRECT goes around the page cache, not the host disk's cache nor
	 * the allocation of a sparse image's blocks.
	 */
	lim->has_cache = true;
	lim->image_file = dev->args; /* the image's path: the sectors as they are */
	uring_driver_set_kick(d, file_kick, fb);
	return 0;
}

static void file_close(struct blk_dev *dev)
{
	struct file_backend *fb = dev->priv;

	assert(TAILQ_EMPTY(&fb->resubmit));
	uring_driver_set_kick(fb->d, NULL, NULL);
	file_free(fb);
}

BACKEND_REGISTER(file,
	.description = "an image file, read and written with io_uring (the default)",
	.open = file_open,
	.close = file_close,
	.can_take = file_can_take,
	.submit = file_submit);
