/* SPDX-License-Identifier: BSD-3-Clause */
/* blk_mq.h - the multi-queue request queue: tag sets, hardware and software queues. */
#ifndef RQDISK_BLK_MQ_H
#define RQDISK_BLK_MQ_H

#include "blkdev.h"

/*
 * Locking, outermost first; a thread never takes an earlier lock while
 * holding a later one, and none is held across queue_rq or commit_rqs:
 *
 *   q->queue_lock   the barrier epochs (submit/active epoch, epoch_count,
 *                   hold list, preflush error), the requests waiting for a
 *                   scheduler tag (mq->tag_wait) or, without an elevator, a
 *                   driver tag (hctx->tag_wait), the merge hash
 *                   and last_merge, nr_queued, in_flight and the stats, the
 *                   trace, every elevator hook, and taking a request off a
 *                   list to start it.  Held for one request at a time: a
 *                   bio's submission, one dispatch (take and start), one
 *                   completion's end of its bios.
 *   ctx->lock       the software queue's list (elevator "none").
 *   hctx->lock      the hardware queue's dispatch list, its run state
 *                   (running, run_again) and the hooks of a per-queue
 *                   elevator.
 *   tags->lock      one tag map (tags are taken and freed, nothing else).
 *
 * The counters are atomics, read without a lock.  A bio's bi_end_io runs
 * with the queue lock held, as on the 2.6 queue: it must not submit.
 *
 * Who runs a hardware queue (hctx->state, Linux's BLK_MQ_S_SCHED_RESTART):
 * whoever puts work on it under the queue lock marks it BLK_MQ_S_RUN and
 * kicks the marked queues once it drops the lock (blk_mq_kick_marked);
 * a run that stops with work left marks why, under the queue lock, and a
 * request's end, under the same lock, turns the marks its end answers
 * into BLK_MQ_S_RUN.  An end kicks nothing else.
 *
 * Not yet (each a follow-up, none needed for correctness):
 * per-hardware-queue elevator calls under hctx->lock instead of the queue
 * lock; merging into the software queues and a plug without an elevator
 * ("none" never merges, as on the 2.6 queue); a wake-up timer for idling
 * elevators (q->dispatch_at: the driver runs the queues then).
 */

typedef int blk_status_t;
#define BLK_STS_OK 0
#define BLK_STS_RESOURCE 1 /* the device is busy: the core requeues rq and runs again later */

struct blk_mq_tags {
	pthread_mutex_t lock;
	unsigned int nr_tags;  /* at most this many out at once */
	unsigned int nr_alloc; /* tag numbers made: 0 to nr_alloc - 1; nr_tags at most after a shrink */
	unsigned int nr_free;
	unsigned int *free; /* a stack of free tag numbers */
};

struct blk_mq_ops {
	/*
	 * Take rq, started, for the device; called with no lock held.  Return
	 * BLK_STS_OK once the driver owns it (it ends it later with
	 * blk_mq_end_request()), or BLK_STS_RESOURCE to give it back: it waits
	 * at the head of hctx's dispatch list until the next completion on
	 * hctx or, the device being shared, any other, or until the driver
	 * runs the queue again.  Required.
	 */
	blk_status_t (*queue_rq)(struct blk_mq_hw_ctx *hctx, struct request *rq);
	/* After a batch in which queue_rq took something: hand it to the device.  Optional. */
	void (*commit_rqs)(struct blk_mq_hw_ctx *hctx);
	/*
	 * Have hctx run soon (blk_mq_run_hw_queue) on the thread that owns it,
	 * as blk_mq_run_hw_queue(hctx, true) hands it to kblockd: the core
	 * then never calls queue_rq from a thread that submits or ends a
	 * request, and a driver whose hardware queues each have a ring of
	 * their own keeps each ring to one thread.  Without it the core runs
	 * hctx itself, there and then.  Called with no lock held, or with the
	 * queue lock held from a request ended under it (__blk_end_request).
	 * Optional.
	 */
	void (*run_async)(struct blk_mq_hw_ctx *hctx);
	/*
	 * Whether the device takes a request from hctx now, asked before
	 * each one is taken from the dispatch list, the elevator or the
	 * software queues: false ends the run, and nothing is taken early
	 * to wait on hctx's dispatch list while the elevator could still
	 * choose better (Linux's get_budget, as a check: queue_rq may still
	 * answer BLK_STS_RESOURCE).  Called with the queue lock held, in the
	 * hold that would take the request: a false answer marks hctx to
	 * run at the next end, which reads the marks under the same lock, so
	 * no end is missed.  Optional: without it the core takes the next
	 * request and queue_rq decides.
	 */
	bool (*has_room)(struct blk_mq_hw_ctx *hctx);
};

/* What the driver describes: its queues and their depth. */
struct blk_mq_tag_set {
	const struct blk_mq_ops *ops;
	unsigned int nr_hw_queues;
	unsigned int queue_depth; /* driver tags per hardware queue */
	unsigned int nr_cpus;     /* software queues; 0: the CPUs configured */
	void *driver_data;
};

/* A software queue, one per CPU: where requests wait without an elevator. */
struct blk_mq_ctx {
	pthread_mutex_t lock;
	struct rq_list rq_list;
	unsigned int cpu;
	struct blk_mq_hw_ctx *hctx;
};

/* A hardware queue: its driver tags and what waits for them, run by one thread at a time. */
struct blk_mq_hw_ctx {
	pthread_mutex_t lock;
	struct rq_list dispatch; /* requeued or barrier requests: they go first */
	struct rq_list tag_wait; /* queue lock: requests waiting for a driver tag (no elevator) */
	bool running;            /* inside blk_mq_run_hw_queue */
	bool run_again;          /* asked to run while running */
	unsigned int state;      /* atomic: BLK_MQ_S_*, why it must run again */
	unsigned int queue_num;
	struct request_queue *queue;
	struct blk_mq_tags tags; /* driver tags: what may be in the device at once */
	struct blk_mq_ctx **ctxs; /* the software queues mapped here: its cpu_list */
	unsigned int nr_ctx;
	unsigned int next_ctx; /* where the next round-robin take starts */
	void *driver_data;
	/* as /sys/block/DEV/mq/N/: requests handed to queue_rq, bio merges, runs */
	unsigned long dispatched;
	unsigned long merged;
	unsigned long run;
	unsigned long busy; /* BLK_STS_RESOURCE answers */
};

/* hctx->state: set under the queue lock; RUN is cleared by whoever kicks it. */
#define BLK_MQ_S_RUN 1u /* work was put on it: kick it once the queue lock is dropped */
/* stopped with work left for lack of a driver tag: an end on it restarts it */
#define BLK_MQ_S_TAG_RESTART 2u
/* stopped with work that the device or the elevator held back: any end restarts it */
#define BLK_MQ_S_SCHED_RESTART 4u

/* The multi-queue side of a request_queue (q->mq); NULL on a 2.6 queue. */
struct blk_mq_queue {
	struct blk_mq_tag_set *set;
	struct blk_mq_hw_ctx *hctxs;
	struct blk_mq_ctx *ctxs;
	unsigned int nr_ctx;
	struct blk_mq_tags sched_tags; /* nr_requests: what an elevator may hold with the device */
	struct blk_mq_tags next_sched_tags; /* the next elevator's, while a switch is pending */
	struct rq_list tag_wait;       /* queue lock: the active epoch's, waiting for a scheduler tag */
	struct blk_mq_ctx *submit_ctx; /* the submitter's, while a bio is made into requests */
	unsigned long nr_ended;        /* queue lock: requests ended, for a busy run's re-check */
};

static inline bool queue_is_mq(const struct request_queue *q)
{
	return q->mq != NULL;
}

/* blk_mq.c */
struct request_queue *blk_mq_init_queue(struct blk_mq_tag_set *set,
					const struct blk_clock *clock, char *why, size_t whylen);
void blk_mq_free_queue(struct request_queue *q);
void blk_mq_map_queues(struct blk_mq_queue *mq);
void blk_mq_submit_bio(struct request_queue *q, struct bio *bio, unsigned int cpu);
bool __blk_mq_submit_bio(struct request_queue *q, struct bio *bio, unsigned int cpu);
bool blk_mq_end_request(struct request *rq, int error, unsigned int nr_sectors);
void blk_mq_rq_init(struct request_queue *q, struct request *rq);
void blk_mq_activate(struct request_queue *q, struct request *rq);
void blk_mq_free_rq_tags(struct request *rq);
bool blk_mq_queue_idle(struct request_queue *q);
void blk_mq_cpu_list(const struct blk_mq_hw_ctx *hctx, char *buf, size_t len);
int blk_mq_hw_sysfs_show(const struct blk_mq_hw_ctx *hctx, const char *attr, char *buf,
			 size_t len);

/* blk_mq_dispatch.c */
void blk_mq_run_hw_queue(struct blk_mq_hw_ctx *hctx);
void blk_mq_run_hw_queues(struct request_queue *q);
void blk_mq_kick_hw_queue(struct blk_mq_hw_ctx *hctx);
void blk_mq_kick_hw_queues(struct request_queue *q);
void blk_mq_mark(struct blk_mq_hw_ctx *hctx, unsigned int bits);
void blk_mq_sched_restart(struct request_queue *q, struct blk_mq_hw_ctx *hctx);
void blk_mq_kick_marked(struct request_queue *q);
void blk_mq_insert_request(struct request_queue *q, struct request *rq);

/* blk_mq_tag.c */
int blk_mq_init_tags(struct blk_mq_tags *tags, unsigned int nr_tags);
void blk_mq_free_tags(struct blk_mq_tags *tags);
int blk_mq_get_tag(struct blk_mq_tags *tags, unsigned int shallow_depth);
void blk_mq_put_tag(struct blk_mq_tags *tags, int tag);
unsigned int blk_mq_tags_in_use(struct blk_mq_tags *tags);
int blk_mq_resize_tags(struct blk_mq_tags *tags, unsigned int nr_tags);
void blk_mq_tags_swap(struct blk_mq_tags *tags, struct blk_mq_tags *with);

/* blk_mq_sched.c */
int blk_mq_elevator_init(struct request_queue *q, const char *name, char *why, size_t whylen);
int blk_mq_update_nr_requests(struct request_queue *q, unsigned int nr);
unsigned int blk_mq_nr_requests(const struct request_queue *q);
int blk_mq_elevator_switch(struct request_queue *q, const char *name, char *why, size_t whylen);
int blk_mq_sched_switch_prepare(struct request_queue *q, const struct elevator_type *t,
				char *why, size_t whylen);
void blk_mq_sched_switch_finish(struct request_queue *q);
int blk_mq_sched_init(struct request_queue *q, const struct elevator_type *t, char *why,
		      size_t whylen);
void blk_mq_sched_insert(struct blk_mq_hw_ctx *hctx, struct request *rq);
struct request *blk_mq_sched_dispatch(struct blk_mq_hw_ctx *hctx, uint64_t now);
unsigned int blk_mq_sched_depth(struct request_queue *q, const struct request *rq);
bool blk_mq_sched_single(const struct request_queue *q);
bool blk_mq_sched_has_work(struct blk_mq_hw_ctx *hctx);

#endif
