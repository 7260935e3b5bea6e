/* SPDX-License-Identifier: BSD-3-Clause */
/* blkdev.h - the request queue: what the frontend, the drivers and the tests call. */
#ifndef RQDISK_BLKDEV_H
#define RQDISK_BLKDEV_H

#include <pthread.h>
#include <sys/uio.h>

#include "elevator.h"
#include "lock_stats.h"
#include "queue_limits.h"
#include "stats.h"

/* rq_flags */
#define RQF_STARTED (1u << 0)   /* handed to the driver */
#define RQF_HASHED (1u << 1)    /* in the back-merge hash */
#define RQF_ELVPRIV (1u << 2)   /* in the elevator */
#define RQF_HELD (1u << 3)      /* waiting in the core for its barrier epoch */
#define RQF_BARRIER (1u << 4)   /* runs alone, in the core's order */
#define RQF_SORTED (1u << 5)    /* went through the elevator */

/* The driver: called with the queue lock held whenever requests may be ready. */
typedef void(request_fn_proc)(struct request_queue *q);

/* Says whether bio may join rq; false vetoes the merge (merge_bvec_fn's role). */
typedef bool(merge_bvec_fn)(struct request_queue *q, const struct request *rq,
			    const struct bio *bio);

#define ELV_HASH_BITS 6
LIST_HEAD(rq_hash_head, request);
TAILQ_HEAD(rq_list, request);

struct blk_trace;
struct blk_mq_queue;

struct request_queue {
	pthread_mutex_t *queue_lock;
	pthread_mutex_t __queue_lock; /* used when the creator passes none */
	request_fn_proc *request_fn;
	void *queuedata; /* the driver's */
	const struct blk_clock *clock;
	struct queue_limits limits;
	merge_bvec_fn *merge_bvec_fn;

	struct elevator_queue *elevator; /* NULL: bypass, bios go straight to the driver */
	struct elevator_queue *next_elevator; /* set up, waiting for in-flight to drain */
	bool switch_pending;
	/*
	 * Lock held: a pending switch is done, called once from the path that
	 * ended the last request in flight.  Set by whoever asked for the
	 * switch, after elevator_switch() left it pending; cleared before the
	 * call.  The control tree answers the write to queue/scheduler here.
	 */
	void (*switch_done)(struct request_queue *q, void *arg);
	void *switch_arg;
	uint64_t elevator_gen; /* elevators set up so far: names one instance for the control tree */
	struct request *last_merge;
	struct rq_hash_head hash_start[1 << ELV_HASH_BITS]; /* mergeable requests by start */
	struct rq_hash_head hash_end[1 << ELV_HASH_BITS];   /* and by end sector */

	struct rq_list queue_head; /* ready for the driver, in order */
	struct rq_list hold;       /* later barrier epochs, in submission order */
	uint64_t submit_epoch;     /* the epoch a new request joins */
	uint64_t active_epoch;     /* the epoch being served */
	unsigned int epoch_count;  /* requests of the active epoch not yet ended */
	int preflush_error;        /* a failed preflush fails its barrier write */

	unsigned int in_flight;
	unsigned int nr_queued;
	bool plugged;
	unsigned int unplug_thresh;
	bool running;   /* inside request_fn */
	bool run_again; /* asked to run while running */
	uint64_t dispatch_at; /* an elevator's wake-up time, 0 for none */
	bool dying;

	struct blk_trace *blk_trace; /* NULL: not tracing (blktrace.h) */
	char *blk_trace_name;        /* where the control tree's next trace goes, or NULL */
	int blk_trace_last;          /* the stopped trace's file, held for a restart, or -1 */
	int *blk_trace_last_hw;      /* mq: its files of hardware queues 1.. (blktrace.c) */
	bool blk_trace_cgroup;       /* records name their cgroup (Linux's blk_cgroup option) */
	struct disk_stats stats;
	unsigned long bounced; /* bios copied through a bounce buffer */
	unsigned long split;   /* bios split to fit the limits */
	size_t rq_pdu_size;    /* bytes after each request for the device below (blk_rq_pdu) */
	uint64_t rq_seq;       /* requests made so far: the next one's seq */
	struct blk_mq_queue *mq; /* multi-queue mode (blk_mq.h); NULL: the 2.6 queue */
	struct blk_lock_stats lock_stats; /* the queue lock's and the elevator's times, when on */
};

/*
 * The bytes after a request that the device below keeps with it, as
 * blk-mq's cmd_size: set with blk_queue_set_pdu_size() before the first request.
 */
static inline void *blk_rq_pdu(const struct request *rq)
{
	return (void *)((const char *)rq + sizeof(*rq));
}

/* queue.c */
struct request_queue *blk_init_queue(request_fn_proc *fn, pthread_mutex_t *lock,
				     const struct blk_clock *clock);
void blk_cleanup_queue(struct request_queue *q);
int blk_queue_set_limits(struct request_queue *q, const struct queue_limits *lim,
			 char *why, size_t whylen);
void blk_queue_update_nr_requests(struct request_queue *q, unsigned int nr);
int elevator_init(struct request_queue *q, const char *name);
void submit_bio(struct request_queue *q, struct bio *bio);
void __submit_bio(struct request_queue *q, struct bio *bio);
struct request *blk_fetch_request(struct request_queue *q);
/* Lock held: rq goes to the driver now (issue trace, in flight, accounting). */
void blk_start_request(struct request_queue *q, struct request *rq, uint64_t now);
void blk_requeue_request(struct request_queue *q, struct request *rq);
void blk_run_queue(struct request_queue *q);
void __blk_run_queue(struct request_queue *q);
void blk_plug_device(struct request_queue *q);
void blk_unplug(struct request_queue *q);
void __blk_unplug(struct request_queue *q);
bool blk_queue_idle(struct request_queue *q);
bool blk_queue_idle_unlocked(struct request_queue *q);
void blk_queue_set_pdu_size(struct request_queue *q, size_t size);
void blk_queue_lock(struct request_queue *q);
void blk_queue_unlock(struct request_queue *q);

/* request.c */
struct request *blk_alloc_request(struct request_queue *q, struct bio *bio);
void blk_free_request(struct request *rq);
void blk_rq_bio_prep(struct request *rq, struct bio *bio);
void blk_rq_init_walk(struct request *rq);
bool process_that_request_first(struct request *rq, unsigned int nr_sectors);
bool end_that_request_first(struct request *rq, int error, unsigned int nr_sectors);
void end_that_request_last(struct request *rq);
bool __blk_end_request(struct request *rq, int error, unsigned int nr_sectors);
bool blk_end_request(struct request *rq, int error, unsigned int nr_sectors);

/* merge.c */
unsigned int blk_recount_segments(struct request_queue *q, struct bio *first, struct bio *second);
bool ll_back_merge_fn(struct request_queue *q, struct request *rq, struct bio *bio);
bool ll_front_merge_fn(struct request_queue *q, struct request *rq, struct bio *bio);
bool blk_try_merge_bio(struct request_queue *q, struct bio *bio);
int blk_rq_map_sg(struct request_queue *q, struct request *rq, struct iovec *sg);
bool rq_mergeable(const struct request *rq);
void blk_submit_split(struct request_queue *q, struct bio *bio,
		      void (*make_request)(struct request_queue *, struct bio *));

/* bio.c */
void bio_init(struct bio *bio, enum req_op op, sector_t sector, unsigned int size,
	      struct bio_vec *vecs, unsigned short vcnt);
void bio_endio(struct bio *bio, int error);
struct bio *bio_clone_range(struct bio *parent, size_t offset, unsigned int size);
void bio_chain_end_io(struct bio *child, int error);

/* bounce.c */
bool blk_bio_needs_bounce(const struct request_queue *q, const struct bio *bio);
struct bio *blk_bounce_range(struct request_queue *q, struct bio *bio, size_t offset,
			     unsigned int size);

/* flush.c */
int blk_barrier_begin(struct request_queue *q, struct bio *bio);
void blk_barrier_end(struct request_queue *q);
void blk_epoch_add(struct request_queue *q, struct request *rq);
void blk_epoch_done(struct request_queue *q, struct request *rq);

/* elevator.c */
const struct elevator_type *elevator_find(const char *name);
const struct elevator_type *elevator_load(const char *path, char *why, size_t whylen);
const struct elevator_type *elevator_get(const char *name, char *why, size_t whylen);
const char *const *elevator_builtin_names(void);
const char *const *elevator_names(void);
int elevator_switch(struct request_queue *q, const char *name, char *why, size_t whylen);
void blk_elevator_switch_check(struct request_queue *q);
void elevator_switch_install(struct request_queue *q);
struct elevator_queue *elevator_alloc(struct request_queue *q, const struct elevator_type *type);
void elevator_exit(struct elevator_queue *e);
void elv_depth_updated(struct request_queue *q);
void elv_rqhash_add(struct request_queue *q, struct request *rq);
void elv_rqhash_del(struct request_queue *q, struct request *rq);
struct request *elv_taken(struct request_queue *q, struct request *rq);
void elv_rqhash_reposition(struct request_queue *q, struct request *rq);
struct request *elv_rqhash_find_end(struct request_queue *q, sector_t end, uint64_t epoch);
struct request *elv_rqhash_find_start(struct request_queue *q, sector_t start, uint64_t epoch);
void elv_insert(struct request_queue *q, struct request *rq);
void elv_rb_reposition(struct request *rq);
struct request *elv_next_request(struct request_queue *q, uint64_t now);
int elv_tunable_store(struct elevator_queue *e, const char *name, const char *buf);
int elv_tunable_show(const struct elevator_queue *e, const char *name, long long *value);
/* A tunable's text, number or not, at most len - 1 bytes; its length or -errno. */
int elv_tunable_text(const struct elevator_queue *e, const struct elv_tunable *t, char *buf,
		     size_t len);

/* clock.c */
extern const struct blk_clock blk_real_clock;
void blk_virtual_clock_init(struct blk_clock *clock, uint64_t start_ns);

#endif
