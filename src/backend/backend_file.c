/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backend_file.c - the file backend: it opens the image named by its args,
 * and each request becomes I/O on it that the host's loop carries out
 * (dev_host_ops.submit_io: the daemon's io_uring ring).  A short transfer
 * is continued from the first byte not moved, and the whole sectors moved
 * end as they go.  A host with several I/O queues (a multi-queue queue's
 * hardware queues, a thread and a ring each) has the image opened once per
 * queue, and each thread's I/O goes on its own open file: no two threads
 * share a struct file's counts in the kernel.  A flush on any of them
 * makes the whole file's writes durable (fdatasync is the inode's).
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backend_uring.h"

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
	struct dev_io io; /* first: the host's I/O, whose completions come here */
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
	const struct dev_host_ops *host_ops;
	void *host;
	int fd;    /* the image, as first opened: fds[0] */
	int *fds;  /* an open file of the image per host I/O queue */
	unsigned int nr_fds;
	char *path; /* as opened: what a failed flush at exit names */
	bool read_only;
	unsigned long zero_writes; /* write-zeroes done by writing zeros */
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
		fb->zero_writes++;
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

static void file_prep_rw(struct file_slot *s, enum dev_io_op op, const struct iovec *iov,
			 unsigned int n)
{
	s->io.op = op;
	s->io.iov = iov;
	s->io.nr_iov = n;
	s->io.offset = s->pos + s->xfer;
	/* FUA: this write is durable when it completes, and nothing more is. */
	s->io.flags = op == DEV_IO_WRITEV && (s->rq->cmd_flags & REQ_FUA) ? RWF_DSYNC : 0;
}

static void file_prep_fallocate(struct file_slot *s, int mode)
{
	s->io.op = DEV_IO_FALLOCATE;
	s->io.flags = mode | FALLOC_FL_KEEP_SIZE;
	s->io.offset = s->pos;
	s->io.len = s->len;
}

/* The calling thread's open file of the image. */
static int file_fd(const struct file_backend *fb)
{
	unsigned int q = fb->nr_fds > 1 ? fb->host_ops->io_queue(fb->host) : 0;

	return fb->fds[q < fb->nr_fds ? q : 0];
}

/* Send what slot s needs next: the whole request, or what is left of it. */
static void file_issue(struct file_backend *fb, struct file_slot *s)
{
	s->io.fd = file_fd(fb);
	switch (s->kind) {
	case FILE_READ:
		file_prep_rw(s, DEV_IO_READV, s->iov + s->iov_idx, s->nr_iov - s->iov_idx);
		break;
	case FILE_WRITE:
		file_prep_rw(s, DEV_IO_WRITEV, s->iov + s->iov_idx, s->nr_iov - s->iov_idx);
		break;
	case FILE_ZERO_WRITE:
		file_prep_rw(s, DEV_IO_WRITEV, s->iov, file_zero_iov(fb, s));
		break;
	case FILE_FSYNC:
		s->io.op = DEV_IO_FDATASYNC;
		break;
	case FILE_DISCARD:
		file_prep_fallocate(s, FALLOC_FL_PUNCH_HOLE);
		break;
	case FILE_ZERO_RANGE:
		file_prep_fallocate(s, FALLOC_FL_ZERO_RANGE);
		break;
	}
	fb->host_ops->submit_io(fb->host, &s->io);
}

static bool file_io_room(struct file_backend *fb)
{
	return fb->host_ops->io_room(fb->host, 1);
}

/* Give waiting continuations their SQEs, oldest first; false if the SQ filled up. */
static bool file_resubmit(struct file_backend *fb)
{
	struct file_slot *s;

	while ((s = TAILQ_FIRST(&fb->resubmit))) {
		if (!file_io_room(fb))
			return false;
		TAILQ_REMOVE(&fb->resubmit, s, link);
		file_issue(fb, s);
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

	return !TAILQ_EMPTY(&fb->free) && file_resubmit(fb) && file_io_room(fb);
}

/* rq is started and file_can_take() said yes: it goes out in this batch. */
static void file_submit(struct blk_dev *dev, struct request *rq)
{
	struct file_backend *fb = dev->priv;
	struct file_slot *s = TAILQ_FIRST(&fb->free);

	assert(s);
	TAILQ_REMOVE(&fb->free, s, link);
	file_slot_init(fb, s, rq);
	file_issue(fb, s);
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
		fb->zero_writes++;
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
static void file_complete(struct dev_io *io, int res)
{
	struct file_slot *s = (struct file_slot *)io;
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
	for (unsigned int i = 1; i < fb->nr_fds; i++)
		if (fb->fds[i] >= 0)
			close(fb->fds[i]);
	free(fb->fds);
	if (fb->fd >= 0)
		close(fb->fd);
	free(fb->path);
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
		fb->slots[i].io.done = file_complete;
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

/*
 * Where the host does not know the disk's size (lim->capacity 0, as the
 * daemon's), it is the file's, a non-zero multiple of the logical block
 * size; a host that gives one keeps it (a test's disk past its file's end).
 */
int file_image_size(const char *path, struct dev_limits *lim, struct stat *st, char *why,
		    size_t whylen)
{
	if (stat(path, st)) {
		snprintf(why, whylen, "image %s: %s", path, strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st->st_mode)) {
		snprintf(why, whylen, "image %s is not a regular file", path);
		return -EINVAL;
	}
	if (lim->capacity)
		return 0;
	if (!st->st_size || st->st_size % lim->logical_block_size) {
		snprintf(why, whylen,
			 "image %s: size %lld is not a non-zero multiple of the logical block size %u",
			 path, (long long)st->st_size, lim->logical_block_size);
		return -EINVAL;
	}
	lim->capacity = (sector_t)st->st_size >> SECTOR_SHIFT;
	return 0;
}

/*
 * O_DIRECT on the image takes I/O only at the offsets and from the memory
 * the file system there allows (statx's dio alignment, Linux 6.1).  Offsets
 * are the queue's logical blocks: a coarser need is refused, as a 512-byte
 * disk cannot sit on a 4096-byte device.  Memory is the queue's dma
 * alignment: raised to what the file needs, as a driver declares it, so
 * that the core bounces anything less aligned.
 */
static int file_direct_alignment(struct file_backend *fb, struct dev_limits *lim, char *why,
				 size_t whylen)
{
	struct statx stx;

	if (statx(fb->fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) ||
	    !(stx.stx_mask & STATX_DIOALIGN))
		return 0; /* not told: the first I/O says, with EINVAL */
	if (!stx.stx_dio_offset_align) {
		snprintf(why, whylen, "image %s: --direct: the file system there takes no O_DIRECT I/O",
			 fb->path);
		return -EINVAL;
	}
	if (stx.stx_dio_offset_align > lim->logical_block_size) {
		snprintf(why, whylen,
			 "image %s: --direct: O_DIRECT there needs I/O in blocks of %u bytes, above "
			 "the logical block size %u (try --logical-block-size %u)",
			 fb->path, stx.stx_dio_offset_align, lim->logical_block_size,
			 stx.stx_dio_offset_align);
		return -EINVAL;
	}
	if (stx.stx_dio_mem_align > BLK_PAGE_SIZE) {
		snprintf(why, whylen,
			 "image %s: --direct: O_DIRECT there needs memory aligned to %u bytes, above "
			 "a page",
			 fb->path, stx.stx_dio_mem_align);
		return -EINVAL;
	}
	if (stx.stx_dio_mem_align && stx.stx_dio_mem_align - 1 > lim->dma_alignment)
		lim->dma_alignment = stx.stx_dio_mem_align - 1;
	return 0;
}

/* The image, args its path, read-only and with O_DIRECT as the stack says. */
static int file_open_image(struct file_backend *fb, const char *args, struct dev_limits *lim,
			   char *why, size_t whylen)
{
	const struct dev_stack *stack = fb->dev->stack;
	int flags = (stack->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC;
	struct stat st;
	int ret;

	if (!args || !*args) {
		snprintf(why, whylen, "file: no image: the backend opens file:PATH");
		return -EINVAL;
	}
	fb->path = strdup(args);
	if (!fb->path) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	ret = file_image_size(args, lim, &st, why, whylen);
	if (ret)
		return ret;
	fb->read_only = stack->read_only;
	fb->fd = open(args, flags | (stack->direct ? O_DIRECT : 0));
	if (fb->fd < 0) {
		ret = -errno;
		snprintf(why, whylen, "image %s: %s%s", args,
			 stack->direct && errno == EINVAL ? "O_DIRECT is not supported there: " : "",
			 strerror(errno));
		return ret;
	}
	return stack->direct ? file_direct_alignment(fb, lim, why, whylen) : 0;
}

/*
 * An open file of the image for each further host I/O queue: opened anew
 * through the first (/proc/self/fd), so that each is a file of its own on
 * the same inode, whatever has become of the path since.
 */
static int file_open_queues(struct file_backend *fb, int flags, char *why, size_t whylen)
{
	const struct dev_host_ops *ops = fb->host_ops;
	unsigned int nr = ops->nr_io_queues && ops->io_queue ? ops->nr_io_queues(fb->host) : 1;
	char self[64];

	fb->fds = calloc(nr ? nr : 1, sizeof(*fb->fds));
	if (!fb->fds) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	fb->fds[0] = fb->fd;
	fb->nr_fds = 1;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fb->fd);
	while (fb->nr_fds < nr) {
		int fd = open(self, flags);

		if (fd < 0) {
			int err = errno;

			snprintf(why, whylen, "image %s: opening it again for hardware queue %u: %s",
				 fb->path, fb->nr_fds, strerror(err));
			return -err;
		}
		fb->fds[fb->nr_fds++] = fd;
	}
	return 0;
}

static int file_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		     size_t whylen)
{
	const struct dev_host_ops *ops = dev->stack->host_ops;
	struct file_backend *fb;
	int ret;

	if (!ops || !ops->io_room || !ops->submit_io || !ops->set_io_kick) {
		snprintf(why, whylen, "file: this host cannot carry out I/O on a file");
		return -EINVAL;
	}
	fb = calloc(1, sizeof(*fb));
	if (!fb) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	TAILQ_INIT(&fb->free);
	TAILQ_INIT(&fb->resubmit);
	fb->fd = -1;
	fb->dev = dev;
	fb->host_ops = ops;
	fb->host = dev->stack->host;
	if (file_alloc_slots(fb, dev_depth(dev), dev_max_segments(dev))) {
		snprintf(why, whylen, "out of memory");
		ret = -ENOMEM;
		goto fail;
	}
	ret = file_open_image(fb, args, lim, why, whylen);
	if (!ret)
		ret = file_open_queues(fb, (fb->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC |
					   (dev->stack->direct ? O_DIRECT : 0), why, whylen);
	if (ret)
		goto fail;
	dev->priv = fb;
	/* punching holes and zeroing ranges, or writing zeros */
	lim->discard = lim->write_zeroes = true;
	/*
	 * A write is durable only after a flush (fdatasync), --direct or not:
	 * O_DIRECT goes around the page cache, not the host disk's cache nor
	 * the allocation of a sparse image's blocks.
	 */
	lim->has_cache = true;
	lim->image_file = fb->path; /* the image: the sectors as they are */
	ops->set_io_kick(fb->host, file_kick, fb);
	return 0;
fail:
	file_free(fb);
	return ret;
}

/*
 * The stack is idle: what was written is made durable, as the image's
 * last word (a disk that never served has nothing to keep).  A failed
 * fdatasync is said, and is the stack's close_error.
 */
static void file_close(struct blk_dev *dev)
{
	struct file_backend *fb = dev->priv;

	assert(TAILQ_EMPTY(&fb->resubmit));
	fb->host_ops->set_io_kick(fb->host, NULL, NULL);
	if (!fb->read_only && !dev->stack->aborted && fdatasync(fb->fd)) {
		int err = errno;

		fprintf(stderr, "rqdisk: image %s: fdatasync: %s\n", fb->path, strerror(err));
		dev->stack->close_error = -err;
	}
	file_free(fb);
}

unsigned long file_backend_zero_writes(const struct blk_dev *dev)
{
	const struct file_backend *fb = dev->priv;

	return fb->zero_writes;
}

BACKEND_REGISTER(file,
	.description = "an image file, read and written with io_uring (the default)",
	.open = file_open,
	.close = file_close,
	.can_take = file_can_take,
	.submit = file_submit);
