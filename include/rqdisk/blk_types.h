/* SPDX-License-Identifier: BSD-3-Clause */
/* blk_types.h - bio and request, the units of block I/O shared by the core and every elevator. */
#ifndef RQDISK_BLK_TYPES_H
#define RQDISK_BLK_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <bsd/sys/queue.h>
#include <bsd/sys/tree.h>

#include "ioprio.h"

typedef uint64_t sector_t;

/* Sector numbers and counts are always in these units, whatever the logical block size. */
#define SECTOR_SHIFT 9
#define SECTOR_SIZE (1u << SECTOR_SHIFT)
/* The page I/O memory is aligned to, whatever the machine's (bounce buffers, O_DIRECT). */
#define BLK_PAGE_SIZE 4096u

enum req_op {
	REQ_OP_READ,
	REQ_OP_WRITE,
	REQ_OP_FLUSH,
	REQ_OP_DISCARD,
	REQ_OP_WRITE_ZEROES,
};
#define REQ_OP_NR 5

/* bi_flags / cmd_flags */
#define REQ_BARRIER (1u << 0) /* everything before is durable before this starts */
#define REQ_FUA (1u << 1)     /* durable when completed */
#define REQ_SYNC (1u << 2)    /* someone waits for it */
#define REQ_PREFLUSH (1u << 3) /* core-made flush that opens a barrier write */

/* bi_state, core-managed */
#define BIO_ENDED (1u << 0)  /* bi_end_io has run */
#define BIO_CLONED (1u << 1) /* made by the core from a parent bio */

struct bio;
typedef void(bio_end_io_t)(struct bio *bio, int error);

/*
 * A cgroup (v2) as bios carry it, Linux's blkcg: interned, one object
 * per cgroup for as long as the program runs, so two bios come from one
 * cgroup exactly when they point at the same one.  NULL: the root
 * cgroup, or nobody said.  Opaque: an elevator asks blk_rq_cgroup() and
 * blkcg_path() (elevator.h).
 */
struct blkcg;

/* One memory segment of a bio: any address, any length. */
struct bio_vec {
	void *bv_base;
	size_t bv_len;
};

/* As struct request, a bio's whole layout is part of the elevator API. */
struct bio {
	struct bio *bi_next; /* link in its request; core-managed */
	enum req_op bi_op;
	unsigned int bi_flags;
	sector_t bi_sector;
	unsigned int bi_size; /* bytes, a multiple of the logical block size */
	unsigned short bi_vcnt;
	struct bio_vec *bi_io_vec;
	pid_t bi_pid;
	unsigned short bi_ioprio; /* IOPRIO_PRIO_VALUE; bio_init sets IOPRIO_DEFAULT */
	bio_end_io_t *bi_end_io; /* called exactly once, with 0 or -errno */
	void *bi_private;

	/* Core-managed from submit_bio() on. */
	unsigned int bi_done;  /* bytes completed so far */
	int bi_error;          /* first error seen on any part */
	unsigned int bi_state; /* BIO_* */
	int bi_remaining;      /* split children still out */
	struct bio *bi_parent; /* split or bounce parent, for clones */
	void *bi_bounce;       /* aligned copy of the data, for bounced clones */
	unsigned int bi_good;  /* bytes before the first that failed: bi_size while none has */

	/*
	 * The submitter's cgroup, or NULL (the root).  Added at the end with
	 * no new API version, as elv_ns: the core and its callers make every
	 * bio, an elevator only reads one.
	 */
	const struct blkcg *bi_blkcg;
};

static inline unsigned int bio_sectors(const struct bio *bio)
{
	return bio->bi_size >> SECTOR_SHIFT;
}

static inline sector_t bio_end_sector(const struct bio *bio)
{
	return bio->bi_sector + bio_sectors(bio);
}

static inline bool op_has_data(enum req_op op)
{
	return op == REQ_OP_READ || op == REQ_OP_WRITE;
}

static inline bool op_is_write(enum req_op op)
{
	return op != REQ_OP_READ;
}

struct request_queue;
struct elv_rb_root;
struct blk_mq_ctx;
struct blk_mq_hw_ctx;

/*
 * Elevators read a request in place: every field's offset and meaning is
 * part of the elevator API (ELV_API_VERSION), the core's own fields too.
 */
struct request {
	/* The elevator's while the request is queued; the core's once dispatched. */
	TAILQ_ENTRY(request) queuelist;
	RB_ENTRY(request) rb_node;
	uint64_t fifo_time; /* elevator's: when it expires */
	/* The elevator's from add_request until completed returns; the core never touches it. */
	void *elv_priv[2];
	struct elv_rb_root *rb_tree; /* core-managed: the elv_rb tree rb_node is in, or NULL */

	struct request_queue *q;
	enum req_op cmd_op;
	unsigned int cmd_flags; /* REQ_* */
	unsigned int rq_flags;  /* RQF_*, core-managed */
	pid_t pid;
	unsigned short ioprio; /* its bios', all alike: the core never merges across priorities */
	uint64_t epoch; /* barrier epoch; the elevator only sees the current one */

	/* Submission position: where the driver is in the request. */
	sector_t sector;
	unsigned int nr_sectors;
	/* Completion position: what end_that_request_first() has covered. */
	sector_t hard_sector;
	unsigned int hard_nr_sectors;

	unsigned short nr_phys_segments;
	unsigned short nr_hw_segments;

	struct bio *bio; /* next bio to complete */
	struct bio *biotail;

	/* BIO walking state: the next bio to submit and where we are in it. */
	struct bio *cbio;
	unsigned short cbio_idx;        /* its current segment */
	size_t cbio_offset;             /* bytes already taken from that segment */
	unsigned short nr_cbio_segments; /* segments left in cbio, counting the current one */
	unsigned int nr_cbio_sectors;   /* sectors left in cbio */

	uint64_t start_time_ns; /* queued */
	uint64_t io_start_time_ns; /* dispatched */
	int errors;
	void *special; /* the driver's */

	/* Core-managed merge lookup. */
	LIST_ENTRY(request) hash_start;
	LIST_ENTRY(request) hash_end;
	TAILQ_ENTRY(request) holdlist;

	/* Core-managed: the range first handed to the driver, which a completion covers. */
	sector_t issue_sector;
	unsigned int issue_nr_sectors;
	/* Core-managed: the order requests were made in, for ties between equal sectors. */
	uint64_t seq;

	/*
	 * Core-managed, multi-queue only (version 4): the driver tag, the
	 * scheduler tag (-1: none held), and the software and hardware
	 * queues the request belongs to.  Unused (0, NULL) on a 2.6 queue.
	 */
	int tag;
	int internal_tag;
	struct blk_mq_ctx *mq_ctx;
	struct blk_mq_hw_ctx *mq_hctx;
	/* Core-managed: ns inside the elevator's hooks for it, while lock statistics are on. */
	uint64_t elv_ns;
	/*
	 * Core-managed: its bios' cgroup, all alike (the core never merges
	 * across cgroups).  Read it with blk_rq_cgroup().
	 */
	const struct blkcg *blkcg;
};

#define rq_for_each_bio(_bio, rq) \
	for ((_bio) = (rq)->bio; (_bio) != NULL; (_bio) = (_bio)->bi_next)

static inline sector_t blk_rq_pos(const struct request *rq)
{
	return rq->hard_sector;
}

static inline unsigned int blk_rq_sectors(const struct request *rq)
{
	return rq->hard_nr_sectors;
}

static inline sector_t blk_rq_end_sector(const struct request *rq)
{
	return rq->hard_sector + rq->hard_nr_sectors;
}

static inline bool rq_is_sync(const struct request *rq)
{
	return rq->cmd_op == REQ_OP_READ || (rq->cmd_flags & (REQ_SYNC | REQ_FUA));
}

/* Reads are one direction, everything that changes the disk the other. */
static inline int rq_data_dir(const struct request *rq)
{
	return op_is_write(rq->cmd_op);
}

#endif
