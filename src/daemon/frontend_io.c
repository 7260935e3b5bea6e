/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * frontend_io.c - the disk's data path: every FUSE read, write, fsync and
 * fallocate becomes bios on whole logical blocks; a write that covers part
 * of a block reads the rest first (read-modify-write).  Writes hold their
 * block range, so two writes to different bytes of one block both survive.
 * Requests are answered from the completion path, exactly once each, so
 * the queue sees the caller's real depth.  Bio completions run with the
 * queue lock held; every bio here is submitted with it held too.
 * Each open of the disk is a file of its own (disk_files.c): its fsync
 * and O_DSYNC writes fail once for writes the device lost since it last
 * looked, whoever wrote them.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <linux/falloc.h>
#include <linux/fuse.h>
#include <stdlib.h>
#include <string.h>

#include "blk_mq.h"
#include "disk_files.h"
#include "frontend_impl.h"

#define FE_CHUNK (1u << 30)        /* discard and zeroing go out in bios of this much */
/* a write's data follows these headers: they end where the input buffer's second page starts */
#define FE_WRITE_HDR (sizeof(struct fuse_in_header) + sizeof(struct fuse_write_in))
#define FE_INPUT_SIZE (FE_MAX_IO + 2 * BLK_PAGE_SIZE)
#define FE_TAKE_INPUT_MIN (64u * 1024) /* smaller writes are copied out of the input */

struct fe_io {
	fuse_req_t req;
	struct rqdisk *disk;
	uint64_t off, len;   /* what the caller asked for */
	uint64_t start, end; /* the same, widened to whole blocks */
	char *buf;           /* [start, end) for reads and writes */
	char *input;         /* the FUSE input buffer buf lies in, or NULL: buf is a copy */
	bool held;           /* buf lies in the request's own memory (fe_origin.held) */
	char *edge;          /* a write's partial head and tail blocks, as on disk */
	int pending;         /* bios out in the current stage */
	int error;
	enum req_op op;
	uint64_t next;       /* discard, zeroes: the next chunk */
	bool fua;            /* a write durable when answered: O_DSYNC, O_SYNC, RWF_DSYNC */
	struct fe_file *file; /* an fsync's or FUA write's: told of losses as it ends */
	struct range_waiter lock;
	pid_t pid;                /* the caller's, which its bios carry */
	unsigned int cpu;         /* the caller's: its bios' software queue (mq) */
	unsigned short ioprio;    /* and its I/O priority, looked up as the request came */
	const struct blkcg *blkcg; /* and its cgroup, looked up with it */
	struct bio bio, head, tail;
	struct bio_vec vec, head_vec, tail_vec;
};

__thread struct fe_origin fe_origin = { .cpu = -1 };

/* The caller's CPU, as the ring's queue says it, else the thread's that reads the request. */
static unsigned int fe_cpu(void)
{
	int cpu = fe_origin.cpu >= 0 ? fe_origin.cpu : sched_getcpu();

	return cpu < 0 ? 0 : (unsigned int)cpu;
}

static struct fe_io *fe_io_new(fuse_req_t req, uint64_t off, uint64_t len)
{
	struct rqdisk *d = fe_disk(req);
	struct fe_io *io = calloc(1, sizeof(*io));
	struct ioprio_cache *cache;

	if (!io)
		return NULL;
	io->req = req;
	io->disk = d;
	io->off = off;
	io->len = len;
	/*
	 * Here, on the thread that took the FUSE request: a bio made later,
	 * as a range lock is granted, may be made on another thread (a
	 * hardware queue's, --queue-mode=mq), and the priority cache is this
	 * thread's (the cgroups it hands out are the disk's, shared by every
	 * thread's cache, and never change once made: any thread reads them).
	 */
	cache = fe_origin.ioprio ? fe_origin.ioprio : &d->ioprio;
	io->pid = fuse_req_ctx(req)->pid;
	ioprio_cache_lookup(cache, io->pid, &io->ioprio, &io->blkcg);
	/* the caller's CPU picks a software queue, which the 2.6 queue has none of */
	io->cpu = queue_is_mq(d->q) ? fe_cpu() : 0;
	io->start = off / d->lbs * d->lbs;
	io->end = (off + len + d->lbs - 1) / d->lbs * d->lbs;
	return io;
}

/* submit_bio, into the caller's CPU's software queue on a multi-queue queue. */
static void fe_submit(struct fe_io *io, struct bio *bio)
{
	struct request_queue *q = io->disk->q;

	if (queue_is_mq(q))
		blk_mq_submit_bio(q, bio, io->cpu);
	else
		submit_bio(q, bio);
}

/* The same, queue lock held: the queue's request_fn kicks the hardware queues. */
static void __fe_submit(struct fe_io *io, struct bio *bio)
{
	struct request_queue *q = io->disk->q;

	if (queue_is_mq(q))
		__blk_mq_submit_bio(q, bio, io->cpu);
	else
		__submit_bio(q, bio);
}

static void fe_io_free(struct fe_io *io)
{
	if (io->input)
		bufpool_put(&io->disk->bufs, io->input, FE_INPUT_SIZE);
	else if (!io->held)
		bufpool_put(&io->disk->bufs, io->buf, io->end - io->start);
	bufpool_put(&io->disk->bufs, io->edge, 2 * io->disk->lbs);
	free(io);
}

static int fe_alloc(struct fe_io *io, char **p, uint64_t size)
{
	*p = bufpool_get(&io->disk->bufs, size);
	return *p ? 0 : -ENOMEM;
}

static void fe_bio(struct fe_io *io, struct bio *bio, struct bio_vec *vec, enum req_op op,
		   uint64_t pos, uint64_t size, char *mem, bio_end_io_t *end_io)
{
	*vec = (struct bio_vec){ mem, size };
	bio_init(bio, op, pos >> SECTOR_SHIFT, (unsigned int)size, vec, mem ? 1 : 0);
	bio->bi_pid = io->pid;
	bio->bi_ioprio = io->ioprio;
	bio->bi_blkcg = io->blkcg;
	bio->bi_end_io = end_io;
	bio->bi_private = io;
}

/* Replies once, for a request whose stage had no bio out. */
static void fe_fail(struct fe_io *io, int error)
{
	fuse_reply_err(io->req, -error);
	fe_io_free(io);
}

/*
 * A read that failed after a good prefix (a bad sector) returns the prefix:
 * a short read, as a disk's partial completion gives; the next read, from
 * where it stopped, gets the error.
 */
static void fe_read_done(struct bio *bio, int error)
{
	struct fe_io *io = bio->bi_private;
	uint64_t good = io->start + bio->bi_good;

	if (!error)
		fuse_reply_buf(io->req, io->buf + (io->off - io->start), io->len);
	else if (good > io->off)
		fuse_reply_buf(io->req, io->buf + (io->off - io->start),
			       good - io->off < io->len ? good - io->off : io->len);
	else
		fuse_reply_err(io->req, -error);
	fe_io_free(io);
}

static bool fe_unaligned(const struct fe_io *io)
{
	return io->off != io->start || io->off + io->len != io->end;
}

/* Reads and writes past the end are cut there, as on a block device. */
static uint64_t fe_clamp(const struct rqdisk *d, uint64_t off, uint64_t len)
{
	return off >= d->size ? 0 : len < d->size - off ? len : d->size - off;
}

void fe_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct rqdisk *d = fe_disk(req);
	uint64_t len = fe_clamp(d, (uint64_t)off, size);
	struct fe_io *io;

	if (fe_is_ctl(d, ino)) {
		ctl_read(req, d, ino, fi, size, off);
		return;
	}
	if (!len) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	io = fe_io_new(req, (uint64_t)off, len);
	if (io && !fe_unaligned(io) && len <= fe_origin.held_len) {
		io->buf = fe_origin.held;
		io->held = true;
	}
	if (!io || (!io->held && fe_alloc(io, &io->buf, io->end - io->start))) {
		fuse_reply_err(req, ENOMEM);
		if (io)
			fe_io_free(io);
		return;
	}
	fe_bio(io, &io->bio, &io->vec, REQ_OP_READ, io->start, io->end - io->start, io->buf,
	       fe_read_done);
	io->bio.bi_flags = REQ_SYNC;
	fe_submit(io, &io->bio);
}

/*
 * An O_DSYNC write is a write and an fsync, as the kernel's
 * generic_write_sync makes it: its file is told of a loss since it last
 * looked, and has looked, whatever the write's own end.
 */
static void fe_write_done(struct bio *bio, int error)
{
	struct fe_io *io = bio->bi_private;
	int lost = io->fua ? fe_file_check(io->disk, io->file) : 0;

	range_lock_release(&io->disk->writes, &io->lock);
	if (!error)
		error = lost;
	if (error)
		fuse_reply_err(io->req, -error);
	else
		fuse_reply_write(io->req, io->len);
	fe_io_free(io);
}

static void fe_write_submit(struct fe_io *io)
{
	fe_bio(io, &io->bio, &io->vec, REQ_OP_WRITE, io->start, io->end - io->start, io->buf,
	       fe_write_done);
	if (io->fua)
		io->bio.bi_flags = REQ_FUA | REQ_SYNC;
	__fe_submit(io, &io->bio);
}

static bool fe_head_partial(const struct fe_io *io)
{
	return io->off != io->start;
}

static bool fe_tail_partial(const struct fe_io *io)
{
	return io->off + io->len != io->end &&
	       !(fe_head_partial(io) && io->end - io->start == io->disk->lbs);
}

/* The bytes around the caller's, from the blocks as they were on disk. */
static void fe_patch_edges(struct fe_io *io)
{
	unsigned int lbs = io->disk->lbs;
	uint64_t tail_block = io->end - lbs;
	uint64_t tail_from = io->off + io->len;
	char *tail = fe_tail_partial(io) ? io->edge + lbs : io->edge;

	if (fe_head_partial(io))
		memcpy(io->buf, io->edge, io->off - io->start);
	if (tail_from != io->end)
		memcpy(io->buf + (tail_from - io->start), tail + (tail_from - tail_block),
		       io->end - tail_from);
}

static void fe_rmw_read_done(struct bio *bio, int error)
{
	struct fe_io *io = bio->bi_private;

	if (error && !io->error)
		io->error = error;
	if (--io->pending)
		return;
	if (io->error) {
		range_lock_release(&io->disk->writes, &io->lock);
		fe_fail(io, io->error);
		return;
	}
	fe_patch_edges(io);
	fe_write_submit(io);
}

/* Holding the range: read the partial edge blocks first, or write straight away. */
static void fe_write_granted(struct range_waiter *w)
{
	struct fe_io *io = (struct fe_io *)((char *)w - offsetof(struct fe_io, lock));
	unsigned int lbs = io->disk->lbs;
	bool head = fe_head_partial(io), tail = fe_tail_partial(io);

	if (!head && io->off + io->len == io->end) {
		fe_write_submit(io);
		return;
	}
	io->pending = head + tail + (!head && !tail);
	if (head || !tail)
		fe_bio(io, &io->head, &io->head_vec, REQ_OP_READ, head ? io->start : io->end - lbs,
		       lbs, io->edge, fe_rmw_read_done);
	if (tail)
		fe_bio(io, &io->tail, &io->tail_vec, REQ_OP_READ, io->end - lbs, lbs,
		       io->edge + lbs, fe_rmw_read_done);
	if (head || !tail)
		__fe_submit(io, &io->head);
	if (tail)
		__fe_submit(io, &io->tail);
}

static void fe_write_start(struct fe_io *io)
{
	struct request_queue *q = io->disk->q;

	io->lock.start = io->start;
	io->lock.end = io->end;
	io->lock.granted = fe_write_granted;
	blk_queue_lock(q);
	if (range_lock_acquire(&io->disk->writes, &io->lock))
		fe_write_granted(&io->lock);
	blk_queue_unlock(q);
}

int fe_buffers_init(struct rqdisk *d, size_t pool, unsigned int flags)
{
	if (bufpool_init(&d->bufs, pool, flags))
		return -ENOMEM;
	d->spare = bufpool_get(&d->bufs, FE_INPUT_SIZE);
	return d->spare ? 0 : -ENOMEM;
}

void fe_buffers_free(struct rqdisk *d)
{
	fe_input_free(d);
	bufpool_put(&d->bufs, d->spare, FE_INPUT_SIZE);
	d->spare = NULL;
	bufpool_destroy(&d->bufs);
}

char *fe_input(struct rqdisk *d, size_t *size)
{
	char *in;

	if (!d->in)
		d->in = bufpool_get(&d->bufs, FE_INPUT_SIZE);
	in = d->in ? d->in : d->spare; /* fe_take_input takes only d->in */
	*size = FE_INPUT_SIZE - (BLK_PAGE_SIZE - FE_WRITE_HDR);
	return in ? in + BLK_PAGE_SIZE - FE_WRITE_HDR : NULL;
}

bool fe_input_ready(struct rqdisk *d)
{
	return bufpool_has(&d->bufs, BUFPOOL_BLOCK, d->in ? 1 : 2);
}

void fe_input_free(struct rqdisk *d)
{
	bufpool_put(&d->bufs, d->in, FE_INPUT_SIZE);
	d->in = NULL;
}

/* [mem, mem + len) lies inside [area, area + size); a NULL area holds nothing. */
static bool fe_within(const char *mem, uint64_t len, const char *area, size_t size)
{
	return area && mem >= area && mem + len <= area + size;
}

/*
 * A big write of whole blocks is written from the buffer the request was
 * read into, which it keeps until it ends: a 1 MiB write is not copied
 * again.  A small one is cheaper to copy than to hold 1 MiB of input for,
 * unless the request came in memory of its own (a ring entry's payload).
 */
static bool fe_take_input(struct fe_io *io, const struct fuse_bufvec *bufv)
{
	struct rqdisk *d = io->disk;
	char *mem = bufv->buf[0].mem;

	if (bufv->count != 1 || (bufv->buf[0].flags & FUSE_BUF_IS_FD) || fe_unaligned(io))
		return false;
	if (fe_origin.held) { /* a ring entry's: never an input buffer of the loop's */
		if (!fe_within(mem, io->len, fe_origin.held, fe_origin.held_len))
			return false;
		io->buf = mem;
		io->held = true;
		return true;
	}
	if (io->len < FE_TAKE_INPUT_MIN || !fe_within(mem, io->len, d->in, FE_INPUT_SIZE))
		return false;
	io->buf = mem;
	io->input = d->in;
	d->in = NULL;
	return true;
}

static void fe_ctl_write(fuse_req_t req, struct rqdisk *d, fuse_ino_t ino,
			 struct fuse_bufvec *bufv)
{
	size_t size = fuse_buf_size(bufv);
	char val[CTL_VALUE_MAX];
	struct fuse_bufvec dst = FUSE_BUFVEC_INIT(size < sizeof(val) ? size : sizeof(val));

	dst.buf[0].mem = val;
	if (size >= sizeof(val) || fuse_buf_copy(&dst, bufv, 0) != (ssize_t)size) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	ctl_write(req, d, ino, val, size, fe_owner(req, d));
}

void fe_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *bufv, off_t off,
		  struct fuse_file_info *fi)
{
	struct rqdisk *d = fe_disk(req);
	size_t size = fuse_buf_size(bufv);
	uint64_t len = fe_clamp(d, (uint64_t)off, size);
	struct fuse_bufvec dst = FUSE_BUFVEC_INIT(len);
	struct fe_io *io;

	if (fe_is_ctl(d, ino)) {
		fe_ctl_write(req, d, ino, bufv);
		return;
	}
	if (!fe_owner(req, d)) { /* through a handle the owner passed on */
		fuse_reply_err(req, EACCES);
		return;
	}
	if (!size) {
		fuse_reply_write(req, 0);
		return;
	}
	if (!len) { /* at or past the end */
		fuse_reply_err(req, ENOSPC);
		return;
	}
	io = fe_io_new(req, (uint64_t)off, len);
	/*
	 * The kernel passes a synchronous write's O_DSYNC (O_SYNC holds it,
	 * RWF_DSYNC sets it) with the write and, with direct I/O, sends no
	 * fsync after it: the write itself must be durable when answered.
	 */
	if (io) {
		io->fua = fi->flags & O_DSYNC;
		io->file = (struct fe_file *)(uintptr_t)fi->fh;
	}
	if (io && fe_take_input(io, bufv)) {
		fe_write_start(io);
		return;
	}
	if (!io || fe_alloc(io, &io->buf, io->end - io->start) ||
	    (fe_unaligned(io) && fe_alloc(io, &io->edge, 2 * d->lbs))) {
		fuse_reply_err(req, ENOMEM);
		if (io)
			fe_io_free(io);
		return;
	}
	/* the request's buffer is libfuse's until we return: keep a copy */
	dst.buf[0].mem = io->buf + (io->off - io->start);
	if (fuse_buf_copy(&dst, bufv, 0) != (ssize_t)len) {
		fe_fail(io, -EIO);
		return;
	}
	fe_write_start(io);
}

/*
 * As the kernel's blkdev_fsync: a loss since the file last looked first
 * (every open file is told once, whoever wrote what was lost), else the
 * flush's own error.
 */
static void fe_flush_done(struct bio *bio, int error)
{
	struct fe_io *io = bio->bi_private;
	int lost = fe_file_check(io->disk, io->file);

	fuse_reply_err(io->req, -(lost ? lost : error));
	fe_io_free(io);
}

/*
 * fsync and fdatasync are barriers: everything before is durable before
 * anything after.  A control file holds nothing on the disk: nothing to flush.
 */
void fe_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct fe_io *io;

	(void)datasync;
	if (!fe_is_disk(fe_disk(req), ino)) {
		fuse_reply_err(req, 0);
		return;
	}
	io = fe_io_new(req, 0, 0);
	if (!io) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	io->file = (struct fe_file *)(uintptr_t)fi->fh;
	fe_bio(io, &io->bio, &io->vec, REQ_OP_FLUSH, 0, 0, NULL, fe_flush_done);
	io->bio.bi_flags = REQ_SYNC;
	fe_submit(io, &io->bio);
}

static void fe_range_chunk(struct fe_io *io);

static void fe_range_done(struct bio *bio, int error)
{
	struct fe_io *io = bio->bi_private;

	if (error || io->next == io->end) {
		range_lock_release(&io->disk->writes, &io->lock);
		fuse_reply_err(io->req, -error);
		fe_io_free(io);
		return;
	}
	fe_range_chunk(io);
}

/* Discards and zeroing go out one chunk at a time: a bio carries under 4 GiB. */
static void fe_range_chunk(struct fe_io *io)
{
	uint64_t size = io->end - io->next < FE_CHUNK ? io->end - io->next : FE_CHUNK;

	fe_bio(io, &io->bio, &io->vec, io->op, io->next, size, NULL, fe_range_done);
	io->next += size;
	__fe_submit(io, &io->bio);
}

static void fe_range_granted(struct range_waiter *w)
{
	fe_range_chunk((struct fe_io *)((char *)w - offsetof(struct fe_io, lock)));
}

/* fallocate on a block device: PUNCH_HOLE discards, ZERO_RANGE zeroes, whole blocks only. */
static int fe_fallocate_op(const struct rqdisk *d, int mode, uint64_t off, uint64_t *len,
			   enum req_op *op)
{
	if (mode == (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE))
		*op = REQ_OP_DISCARD;
	else if ((mode & ~FALLOC_FL_KEEP_SIZE) == FALLOC_FL_ZERO_RANGE)
		*op = REQ_OP_WRITE_ZEROES;
	else
		return -EOPNOTSUPP;
	if (d->read_only)
		return -EROFS;
	/* what the device below does not take, as a block device without it refuses */
	if (!queue_max_sectors(&d->q->limits, *op))
		return -EOPNOTSUPP;
	if ((off | *len) % d->lbs || off >= d->size)
		return -EINVAL;
	if (*len > d->size - off) {
		if (!(mode & FALLOC_FL_KEEP_SIZE))
			return -EINVAL;
		*len = d->size - off;
	}
	return 0;
}

void fe_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t length,
		  struct fuse_file_info *fi)
{
	struct rqdisk *d = fe_disk(req);
	uint64_t len = (uint64_t)length;
	enum req_op op;
	int err = fe_fallocate_op(d, mode, (uint64_t)off, &len, &op);
	struct fe_io *io;

	(void)fi;
	if (!fe_is_disk(d, ino))
		err = -EOPNOTSUPP;
	else if (!fe_owner(req, d))
		err = -EACCES;
	if (err || !len) {
		fuse_reply_err(req, -err);
		return;
	}
	io = fe_io_new(req, (uint64_t)off, len);
	if (!io) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	io->op = op;
	io->next = io->start;
	io->lock = (struct range_waiter){ .start = io->start, .end = io->end,
					  .granted = fe_range_granted };
	blk_queue_lock(d->q);
	if (range_lock_acquire(&d->writes, &io->lock))
		fe_range_granted(&io->lock);
	blk_queue_unlock(d->q);
}
