/* SPDX-License-Identifier: BSD-3-Clause */
/* frontend.h - the disk as a FUSE file: byte ranges in, bios out, replies from completions. */
#ifndef RQDISK_FRONTEND_H
#define RQDISK_FRONTEND_H

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "blkdev.h"
#include "bufpool.h"
#include "device.h"
#include "ioprio_cache.h"
#include "model.h"
#include "rangelock.h"
#include "wb_err.h"

#define RQDISK_ROOT_INO FUSE_ROOT_ID
#define RQDISK_DISK_INO 2
#define RQDISK_DISK_NAME "disk"
#define FE_MAX_IO (1u << 20) /* max_read and max_write */
/*
 * The I/O buffers' arena, locked at start: 16 FUSE input buffers of
 * 1 MiB + 8 KiB (a 2 MiB block each), 32 of 1 MiB or 8192 of 4 KiB.
 * Past it buffers come from malloc.
 */
#define FE_POOL_SIZE (32 * FE_MAX_IO)

struct fuse_ring;
struct ctl_file;
LIST_HEAD(ctl_file_list, ctl_file);
struct fe_file;
LIST_HEAD(fe_file_list, fe_file);

struct rqdisk {
	struct request_queue *q;
	uint64_t size; /* bytes, a multiple of lbs */
	unsigned int lbs;
	bool read_only;
	bool file_mount; /* the mount point is the disk itself */
	struct range_lock writes; /* under the queue lock */
	unsigned int max_nr_requests; /* what the driver was set up to carry */
	const struct dev_stack *stack; /* the device below the queue */
	bool null_device;             /* --null: no I/O on the image */
	struct bufpool bufs;          /* data buffers, and what FUSE requests are read into */
	char *in;                     /* what FUSE requests are read into (fe_input) */
	char *spare; /* an input buffer for when bufs has none: what the request needs fails */
	struct fuse_ring *ring;       /* FUSE over io_uring, or NULL */
	bool fuse_on_ring;            /* the ring has carried a request: fuse/transport */
	unsigned int fuse_ring_depth; /* the ring's entries a CPU queue, or 0 */
	uid_t uid; /* the mount's owner: with root, the only one who may write */
	gid_t gid;
	struct timespec mtime;
	fuse_req_t switch_req; /* the write to queue/scheduler a pending switch answers */
	size_t switch_size;
	struct ctl_file_list ctl_files; /* control files open */
	struct fe_file_list files;      /* the disk's open files, each an fsync's error sequence */
	/*
	 * Writes lost after they were acknowledged: every open file's next
	 * fsync (or O_DSYNC write) fails once (wb_err.h).  Under the queue lock.
	 */
	struct wb_err wb_err;
	uint64_t lost_taken; /* of the stack's losses (stack->lost.events), those in wb_err */
	struct ioprio_cache ioprio;	/* the callers' I/O priorities and cgroups, which their bios carry */
	/*
	 * A write to power/cut, lock held; NULL: the write cache's own store.
	 * Several disks (--disk) are one power domain: it cuts them all.
	 */
	int (*cut_all)(struct rqdisk *d, const char *how);
};

extern const struct fuse_lowlevel_ops rqdisk_fuse_ops;

/*
 * What the thread handing a FUSE request to the session knows of it and
 * libfuse does not carry, for the time of fuse_session_process_buf(): the
 * ring sets it (fuse_ring.c); a request read from /dev/fuse has none.  Per
 * thread: on a multi-queue queue each hardware queue's thread answers the
 * requests of its own CPUs' ring queues, all at once.
 */
struct fe_origin {
	/*
	 * Memory that stays the request's own until it is answered (the ring
	 * entry's payload), or NULL.  A write's data is read from it in place
	 * and a read's data read into it.
	 */
	char *held;
	size_t held_len;
	int cpu; /* the CPU the caller ran on (its ring queue's), or -1: not known */
	struct ioprio_cache *ioprio; /* this thread's priority cache, or NULL: the disk's */
};

extern __thread struct fe_origin fe_origin;

/*
 * The buffers, from an arena of pool bytes (bufpool_init() flags), and the
 * spare input buffer set aside; 0 or -ENOMEM.
 */
int fe_buffers_init(struct rqdisk *d, size_t pool, unsigned int flags);
void fe_buffers_free(struct rqdisk *d);

/*
 * The memory the next FUSE request is read into, size bytes.  A
 * whole-block write of 64 KiB or more keeps the buffer it came in (no
 * copy), and the next call gives a new one.  When memory is short it is
 * the spare, which no request keeps: the request is read, and fails with
 * ENOMEM if it needs memory of its own.
 */
char *fe_input(struct rqdisk *d, size_t *size);
/*
 * Whether the arena holds what the next request read may need (its input
 * buffer, and a data buffer of the largest size); while it does not and
 * requests are in flight, the daemon reads no more: backpressure, so that
 * buffers come from malloc only when nothing is in flight to free one.
 */
bool fe_input_ready(struct rqdisk *d);
void fe_input_free(struct rqdisk *d);

#endif
