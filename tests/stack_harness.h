/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stack_harness.h - what the device stack's unit tests share: a request
 * queue (noop) over a stack of filters and a backend of the test's, on a
 * virtual clock, with every bio's end recorded; a host that records the fd
 * a layer watches; a backend whose requests wait until the test ends them;
 * and a layer's control files.
 */
#ifndef RQDISK_STACK_HARNESS_H
#define RQDISK_STACK_HARNESS_H

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include "device.h"
#include "fake_driver.h"

#define SH_START_NS 1000000000ull /* the clock when a harness opens */

struct stack_harness {
	struct blk_clock clock;
	struct request_queue *q;
	struct dev_stack stack;
	struct bio *bio;
	struct bio_vec *vec;
	unsigned char **buf; /* each bio's data, or NULL */
	uint64_t *ended_at;  /* 0: not yet */
	int *error;
	unsigned int *order; /* 1 for the first bio to end */
	unsigned int max_bios, nr_bios, nr_ended;
	unsigned int max_below; /* requests in flight below the queue at once, at most */
	bool in_submit;         /* inside dev_submit: no request may end there */
	bool may_end_in_submit; /* unless the test says so (null's irqmode=none) */
	unsigned int ended_in_submit; /* bios that ended there */
	/* I/O a layer gave the host (dev_host_ops.submit_io), carried out at its next turn */
#define SH_MAX_IO 64
	struct dev_io *io[SH_MAX_IO];
	unsigned int nr_io;
	int watched_fd;         /* what a layer watches in the host's loop, or -1 */
	void (*watched_ready)(void *arg);
	void *watched_arg;
};

/*
 * dev_stack_open under q as a host does it: q the queue above the stack
 * (blk_stack_set_queue) before, q's limits made to follow the stack's
 * (blk_queue_stack_limits) after, and the stack closed as a failed start
 * if they cannot.  s->host and s->host_ops are the caller's, set before.
 */
int sh_stack_open(struct dev_stack *s, struct request_queue *q, const char *const *specs,
		  unsigned int nr, const struct dev_ops *backend, const char *backend_args,
		  struct dev_limits *lim, char *why, size_t whylen);

/*
 * The clock at SH_START_NS, a queue whose request_fn hands requests down
 * while the stack's top takes them, and the stack of specs (top first)
 * over backend, for a disk of capacity sectors; room for max_bios bios.
 * Returns what dev_stack_open returns, its reason in why.
 */
int sh_open(struct stack_harness *h, const char *const *specs, unsigned int nr,
	    const struct dev_ops *backend, sector_t capacity, unsigned int max_bios, char *why,
	    size_t whylen);
/* sh_open with the backend opened from args. */
int sh_open_args(struct stack_harness *h, const char *const *specs, unsigned int nr,
		 const struct dev_ops *backend, const char *args, sector_t capacity,
		 unsigned int max_bios, char *why, size_t whylen);
/* sh_open, which must succeed; then the queue's pdu and the noop elevator. */
void sh_setup(struct stack_harness *h, const char *const *specs, unsigned int nr,
	      const struct dev_ops *backend, sector_t capacity, unsigned int max_bios);
/* The queue is idle: the stack closes, then the queue; the bios' data is kept. */
void sh_close(struct stack_harness *h);
/* The bios and their data. */
void sh_free(struct stack_harness *h);
/* sh_close and sh_free. */
void sh_teardown(struct stack_harness *h);
/* After a failed sh_open: the queue and the bios. */
void sh_open_failed(struct stack_harness *h);

/*
 * The host's next turn of its loop: the I/O given to it since the last
 * (only NOPs: done with 0), then the queue.  sh_run takes turns too.
 */
void sh_host_turn(struct stack_harness *h);

/* Every timer due by now, and the queue after each. */
void sh_kick(struct stack_harness *h);
/* On to time t, every timer on the way at its time. */
void sh_run_until(struct stack_harness *h, uint64_t t);
/* From timer to timer until the stack has none; then every bio has ended. */
void sh_run(struct stack_harness *h);

/*
 * A bio of nr sectors at sector (none for a flush), its data nr sectors of
 * byte fill; not yet submitted.  Its index.
 */
unsigned int sh_bio(struct stack_harness *h, enum req_op op, unsigned int flags, sector_t sector,
		    unsigned int nr, int fill);
/* sh_bio queued with the lock held (several make one request while plugged). */
unsigned int sh_queue_bio(struct stack_harness *h, enum req_op op, unsigned int flags,
			  sector_t sector, unsigned int nr, int fill);
/* sh_bio submitted (submit_bio), and every timer due by now run. */
unsigned int sh_submit(struct stack_harness *h, enum req_op op, unsigned int flags, sector_t sector,
		       unsigned int nr, int fill);
/*
 * Bio i as a request straight to the stack's top, as the host dispatches
 * one, past the queue's barriers and elevator.
 */
void sh_issue(struct stack_harness *h, unsigned int i);

/* Copy between a request's data, from its first sector on, and medium. */
void sh_copy(struct request *rq, void *medium, bool to_rq);

/*
 * The hand backend: each request waits in sh_hand.below, in the order it
 * came, until the test ends it (sh_hand_end); it takes nothing while
 * sh_hand.refuse.  Discard and write-zeroes, 512-byte blocks.
 */
#define SH_HAND_MAX 64
struct sh_hand {
	struct request *below[SH_HAND_MAX];
	unsigned int nr;
	bool refuse;
};
extern struct sh_hand sh_hand;
extern const struct dev_ops sh_hand_ops;
/* End n sectors of the kth request that came below, with error. */
void sh_hand_end(struct stack_harness *h, unsigned int k, int error, unsigned int n);

/*
 * The memory backend: the medium is an array of the disk's size, zeroed
 * (sh_mem_cache_ops: the same with a volatile cache, so that flushes come
 * down to it).  A request waits in fifo until it ends: at once, from its
 * timer, or (hold) when the test ends it with sh_mem_finish.  A read's
 * data is taken when it comes: the device read it then.
 */
struct sh_mem_rq {
	TAILQ_ENTRY(sh_mem_rq) link;
	struct request *rq;
	unsigned char *snap; /* a read's data */
};

struct sh_mem_op {
	enum req_op op;
	unsigned int flags;
	sector_t sector;
	unsigned int nr;
	uint64_t at;
};

struct sh_mem {
	unsigned char *data;
	TAILQ_HEAD(, sh_mem_rq) fifo;
	unsigned int nr_pending;
	bool hold;        /* end only when the test says; else at once, from the timer */
	bool fail_writes; /* writes end with -EIO, and change nothing */
	bool refuse;      /* takes nothing (can_take false) */
	bool no_overlap;  /* two writes to the same sectors are never below at once */
	struct sh_mem_op *log; /* what came, in order */
	unsigned int nr_log;
	unsigned int reads, writes, others; /* what came, by kind */
	unsigned int writes_done, flushes_done;
	unsigned int writes_done_at_flush; /* when the last flush came */
};

extern struct sh_mem *sh_mem; /* the open one, or NULL */
extern const struct dev_ops sh_mem_ops, sh_mem_cache_ops;
/* End p, the lock held. */
void sh_mem_finish(struct blk_dev *dev, struct sh_mem_rq *p);

/* The layer of that name nearest the top, or NULL: a test's way to its control files. */
struct blk_dev *sh_layer(const struct dev_stack *s, const char *name);

/* A layer's control file: show's text (a static buffer), store's return; the lock held. */
const char *sh_show(struct stack_harness *h, struct blk_dev *dev, const char *name);
int sh_store(struct stack_harness *h, struct blk_dev *dev, const char *name, const char *val);

/* A filter spec is refused, and why names reason in one line. */
void sh_assert_refused(const char *spec, const char *reason);

#endif
