/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fault_impl.h - what the fault filter's files share: its state and its
 * requests', and the calls between its open and control-tree files
 * (filter_fault.c), its rules' effects on I/O (fault_io.c) and its
 * error_file watcher (fault_watch.c).
 */
#ifndef RQDISK_FAULT_IMPL_H
#define RQDISK_FAULT_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include "device.h"
#include "fault.h"

#define NSEC_PER_MS 1000000ull

/* FA_PART: a write dropped in part, its other sectors written by pieces of the layer's own. */
enum fault_act { FA_PASS, FA_FAIL, FA_DROP, FA_PART };

/* What the layer keeps with each request. */
struct fault_rq {
	TAILQ_ENTRY(fault_rq) link;
	struct request *rq;
	uint64_t due;
	sector_t pos; /* where it began, for the aimed sectors */
	enum fault_act act;
	unsigned int total;	/* sectors */
	unsigned int fail_at;	/* sectors before the first that fails; total: none fails */
	int err;		/* -errno for those from fail_at on */
	unsigned int done;	/* sectors ended below */
	unsigned int held_good; /* of them, held back to corrupt before passing up */
	bool corrupt_byte;	/* corrupt_bio_byte on this read's data */
	bool corrupt_random;	/* one random byte of this read's data */
	bool fails;		/* from fail_at on (a flush: fail_at 0 and total 0) */
	/* FA_PART: its pieces, and a piece's own state */
	struct fault_rq *unsent; /* the parent's pieces not sent yet, chained by next */
	struct fault_rq *next;
	unsigned int pieces;	 /* the parent's pieces not ended yet */
	int piece_err;		 /* the parent's: the first error a piece ended with */
	struct fault_rq *parent; /* a piece's; NULL for a request from above */
	void *buf;		 /* a piece's copy of its sectors' data */
};

TAILQ_HEAD(fault_list, fault_rq);

struct fault_stats {
	uint64_t errors, badblock_errors, flakey_errors, dropped_writes, corrupted, delayed, spikes,
	    cleared_badblocks;
};

/*
 * error_file's watcher: a thread of its own, so that no stat(2) runs on the
 * host's loop.  Detached, it shares this with the filter and the last of
 * the two frees it: a stat that hangs (a dead mount) holds up neither the
 * disk's stop nor anything else.
 */
struct fault_watch {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	char *path;	    /* under lock; NULL: nothing to watch */
	uint64_t gen;	    /* under lock: paths set so far */
	bool stop;	    /* under lock */
	unsigned int refs;  /* under lock: the filter's and the thread's */
	atomic_bool exists; /* what the last look at the current path saw */
};

struct fault_filter {
	struct fault_rules r;
	struct sector_ranges bb; /* max FAULT_MAX_BAD_RANGES */
	sector_t capacity;
	uint64_t epoch; /* when the rules were set: flakey is up from then */
	uint64_t rng_err, rng_spike, rng_corrupt;
	uint64_t matched, fired; /* requests the error rule matched, and failed */
	int was_down;		 /* -1: not looked yet */
	struct fault_list held;	 /* in due order */
	unsigned int nr_held, nr_below;
	struct fault_stats st;
	struct fault_watch *w; /* NULL: no watcher */
	bool no_data;	       /* over a device with no data (rqdisk-replay's) */
};

/* fault_io.c: what the rules do to each request, and when it goes on */
bool fault_can_take(struct blk_dev *dev);
void fault_submit(struct blk_dev *dev, struct request *rq);
void fault_timer(struct blk_dev *dev, uint64_t now);
void fault_end(struct blk_dev *dev, struct request *rq, int error, unsigned int n);

/* fault_watch.c: whether error_file exists, looked at off the host's loop */
int fault_watch_set(struct fault_filter *ff, const char *path);
void fault_watch_stop(struct fault_filter *ff);

#endif
