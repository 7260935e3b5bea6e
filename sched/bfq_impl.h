/* SPDX-License-Identifier: BSD-3-Clause */
/* bfq_impl.h - what BFQ's files share: its queues, its per-disk data, the calls between them. */
#ifndef RQDISK_BFQ_IMPL_H
#define RQDISK_BFQ_IMPL_H

#include <limits.h>

#include "bfq.h"
#include "elv_cgroup.h"

/* Linux's defaults, milliseconds where it has jiffies or nanoseconds. */
#define BFQ_FIFO_EXPIRE_SYNC_MS 125
#define BFQ_FIFO_EXPIRE_ASYNC_MS 250
#define BFQ_BACK_MAX_KIB 16384
#define BFQ_BACK_PENALTY 2
#define BFQ_SLICE_IDLE_MS 8
#define BFQ_TIMEOUT_MS 125
#define BFQ_DEFAULT_MAX_BUDGET 16384 /* sectors */
#define BFQ_STATS_MIN_BUDGETS 194    /* budgets before the estimated maximum is trusted */
#define BFQ_ASYNC_CHARGE_FACTOR 3
#define BFQ_WR_COEFF 30
#define BFQ_SOFTRT_WEIGHT_FACTOR 100
#define BFQ_WR_RT_MAX_TIME_MS 300
#define BFQ_WR_MIN_IDLE_TIME_MS 2000
#define BFQ_WR_MAX_SOFTRT_RATE 7000  /* sectors per second */
#define BFQ_WR_MIN_IDLE_SLICE_MS 20  /* a raised queue idles at least this long */
#define BFQ_MAX_SERVICE_FROM_WR 120000 /* sectors: interactive raising ends after this */
#define BFQ_SOFTRT_SLACK_MS 4        /* Linux's 4 jiffies at HZ=1000 */

/*
 * Interactive raising lasts ref_duration * ref_rate / peak_rate, in 3..25 s:
 * the reference disk's pair, a rotating one's or flash's (Linux's ref_rate
 * and ref_wr_duration).
 */
#define BFQ_WR_REF_DURATION_MS 7000
#define BFQ_REF_RATE 14000 /* sectors per microsecond << BFQ_RATE_SHIFT */
#define BFQ_WR_REF_DURATION_NONROT_MS 2500
#define BFQ_REF_RATE_NONROT 33000
#define BFQ_WR_MIN_DURATION_MS 3000
#define BFQ_WR_MAX_DURATION_MS 25000
#define BFQ_RATE_SHIFT 16
#define BFQ_RATE_MIN_SAMPLES 32
#define BFQ_RATE_REF_INTERVAL_NS 1000000000ull

/*
 * Think time and seekiness (bfq_update_io_thinktime, bfq_update_io_seektime):
 * a request further than BFQQ_SEEK_THR sectors from the queue's last one is
 * a seek (on flash, only a request of fewer than BFQQ_SECT_THR_NONROT
 * sectors), and a queue with more than BFQQ_SEEKY_COUNT seeks in its last 32
 * requests is seeky; it is idled for no longer than BFQ_MIN_TT_MS.  The
 * think time is a moving average over samples weighted 7/8 each, meaningful
 * once their weight passes BFQ_TTIME_VALID_SAMPLES (bfq_sample_valid).
 */
#define BFQQ_SEEK_THR 800
#define BFQQ_SECT_THR_NONROT 32 /* on flash only a jump of fewer sectors is a seek */
#define BFQQ_SEEKY_COUNT 19
#define BFQ_MIN_TT_MS 2
#define BFQ_TTIME_VALID_SAMPLES 80

/*
 * Bursts (bfq_handle_burst): sync queues created within BFQ_BURST_INTERVAL_MS
 * of the last one join a burst; the BFQ_LARGE_BURST_THRESH-th makes it large,
 * and its queues, and every later one while the burst goes on, are neither
 * raised nor idled for the throughput.  Processes started together (a make
 * -j, a service start-up) are not the interactive ones raising is for.
 */
#define BFQ_BURST_INTERVAL_MS 180
#define BFQ_LARGE_BURST_THRESH 8

/*
 * Injection (bfq_inject.c): the service time of the in-service queue's
 * request is sampled at most every BFQ_INJECT_SAMPLE_MS after the limit
 * last fell; the limit is forgotten every BFQ_INJECT_RESET_MS.  A queue
 * that got a request within BFQ_WAKER_WINDOW_MS of another's completion
 * BFQ_WAKER_DETECTIONS times in a row has that one as its waker.
 */
#define BFQ_INJECT_SAMPLE_MS 10
#define BFQ_INJECT_RESET_MS 1000
#define BFQ_WAKER_WINDOW_MS 4
#define BFQ_WAKER_DETECTIONS 3

/*
 * Cooperating queues (bfq_coop.c): a queue whose next request lies within
 * BFQQ_CLOSE_THR sectors of where the disk is, or of another busy queue's
 * next request, is merged into that queue, but only in the first
 * BFQ_MERGE_TIME_LIMIT_MS of its I/O (bfq_too_late_for_merging).  A queue
 * made within the burst interval of the one made before it is merged into
 * that one once BFQ_LATE_STABLE_MERGING_MS have passed, if idling for it
 * would not pay (stable merging); the one made before is the last made
 * unless that is older than BFQ_ACTIVATION_STABLE_MERGING_MS.
 */
#define BFQQ_CLOSE_THR 8192
#define BFQ_MERGE_TIME_LIMIT_MS 100
#define BFQ_ACTIVATION_STABLE_MERGING_MS 600
#define BFQ_LATE_STABLE_MERGING_MS 600

/* The largest max_budget: four times it still fits an int, as budgets are ints. */
#define BFQ_MAX_BUDGET_LIMIT (INT_MAX / 8)

#define BFQ_HASH_BITS 6
#define BFQ_MAX_UNUSED 1024 /* sync queues kept for their history after their last request */
#define BFQ_MAX_WEIGHTS 4096

/*
 * Groups (bfq_group.c): a request's cgroup (v2) is its queue's group,
 * whose weight is the cgroup's io.bfq.weight ("default N"), or
 * BFQ_GROUP_DEFAULT_WEIGHT, unless the group_weights tunable sets one.
 */
#define BFQ_GROUP_DEFAULT_WEIGHT 100

struct bfq_group {
	struct bfq_entity entity; /* in the root's trees */
	struct bfq_sched_data sd; /* its queues' */
	LIST_ENTRY(bfq_group) link;
	unsigned int nr_queues; /* queues in it; it goes with the last */
	const struct blkcg *blkcg; /* its cgroup, as requests carry it */
	const char *path; /* and that cgroup's path (blkcg_path), which group_weights names */
};

LIST_HEAD(bfq_group_list, bfq_group);

enum bfqq_expiration {
	BFQQE_TOO_IDLE,
	BFQQE_BUDGET_TIMEOUT,
	BFQQE_BUDGET_EXHAUSTED,
	BFQQE_NO_MORE_REQUESTS,
	BFQQE_PREEMPTED,
};

enum { BFQ_ASYNC, BFQ_SYNC };

struct bfq_queue {
	struct bfq_entity entity;
	LIST_ENTRY(bfq_queue) hash;   /* sync queues, by pid */
	TAILQ_ENTRY(bfq_queue) lru;   /* kept after their last request, oldest first */
	struct elv_rb_root sort_list;
	struct elv_fifo fifo;
	struct request *next_rq;
	pid_t pid;
	bool sync, busy, on_lru, just_created;
	bool wait_request;  /* in service, empty, the idle timer running */
	bool fifo_expire;   /* an expired request already went out of order this budget */
	bool non_blocking_wait_rq;
	bool softrt_update; /* work out soft_rt_next_start when the last request completes */
	int class, level;
	unsigned short ioprio; /* the latest request's: applied when the queue gets busy */
	unsigned int queued, dispatched;
	int max_budget;
	uint64_t budget_timeout; /* ns; once the queue empties, when it did */
	unsigned int wr_coeff;
	uint64_t last_wr_start_finish, wr_cur_max_time;
	uint64_t soft_rt_next_start, last_idle_bklogged;
	uint64_t service_from_backlogged, service_from_wr;
	uint64_t ttime_last_end; /* ns: its last request completed then; UINT64_MAX: none yet */
	uint64_t ttime_total, ttime_mean; /* ns, fixed point as Linux's bfq_ttime */
	unsigned int ttime_samples;
	bool has_short_ttime;	/* its think time is at most slice_idle / 2 */
	uint32_t seek_history;	/* bit 0: the latest request was a seek, bit 1 the one before */
	sector_t last_request_pos; /* the end of its latest request */
	bool in_large_burst;	   /* created in a large burst */
	bool in_burst_list;	   /* in bfqd->burst_list, the current burst not yet large */
	unsigned int inject_limit; /* others' requests out at once while it is idled for */
	uint64_t last_serv_time_ns; /* base: a request's service on an empty disk; 0: none */
	uint64_t decrease_time;	    /* ns: the limit last fell or was reset */
	struct bfq_queue *waker;    /* its I/O waits for that queue's */
	struct bfq_queue *tentative_waker;
	unsigned int num_waker_detections;
	uint64_t waker_detection_started;
	/* cooperation: the process's requests go to *merged, which serves nr_merged such */
	struct bfq_queue *merged;
	unsigned int nr_merged;
	bool coop;	     /* shared: other processes' requests come here */
	bool split_coop;     /* shared and seeky at its last expiry: split at the next request */
	bool stably_merged;  /* merged by stable merging: never split */
	struct bfq_queue *stable_merge_bfqq; /* a stable merge into that one is planned */
	uint64_t creation_time, first_io_time, split_time; /* ns; first_io_time 0: none yet */
	struct bfq_group *group; /* NULL: the root */
};

LIST_HEAD(bfq_hash_head, bfq_queue);
TAILQ_HEAD(bfq_lru, bfq_queue);

struct bfq_weight {
	pid_t pid;
	unsigned int weight;
};

struct bfq_data {
	struct bfq_sched_data sd;
	struct bfq_hash_head hash[1 << BFQ_HASH_BITS];
	struct bfq_queue *async[BFQ_NR_CLASSES][IOPRIO_NR_LEVELS];
	struct bfq_queue oom_queue; /* for requests whose queue could not be allocated */
	struct bfq_lru lru;
	unsigned int nr_lru;
	struct bfq_queue *in_service;
	unsigned int busy_queues, wr_busy_queues, queued, rq_in_driver;
	const struct request_queue *queue; /* whether it seeks: blk_queue_nonrot */
	int hw_tag; /* the disk queues requests: -1 not known yet, 0 no, 1 yes */
	unsigned int max_rq_in_driver, hw_tag_samples;
	sector_t last_position;
	uint64_t idle_until; /* the idle timer: when it fires, 0 when not armed */
	uint64_t last_budget_start, last_idling_start;
	int budgets_assigned;
	int auto_max_budget; /* peak rate times timeout_sync, once measured */
	uint64_t peak_rate;  /* sectors per microsecond << BFQ_RATE_SHIFT; 0: none yet */
	uint64_t rate_busy_ns, rate_last, rate_sectors;
	unsigned int rate_samples;
	struct bfq_weight *weights;
	unsigned int nr_weights;
	/* the current burst: its queues until it is large, when the last joined */
	struct bfq_queue *burst_list[BFQ_LARGE_BURST_THRESH];
	unsigned int burst_size;
	bool large_burst;
	uint64_t last_ins_in_burst;
	/* injection: the in-service queue's request whose service time is sampled */
	struct request *waited_rq;
	bool wait_dispatch; /* the next request it dispatches is waited_rq */
	bool rqs_injected;  /* others' requests went out while it was sampled */
	uint64_t last_empty_occupied_ns;
	struct bfq_queue *last_completed_rq_bfqq;
	uint64_t last_completion;
	struct bfq_queue *last_bfqq_created; /* for stable merging */
	struct bfq_group_list groups;
	struct elv_cgroup_ops cgroup;
	struct elv_group_weights group_weights; /* the tunable */

	/* tunables */
	uint64_t fifo_expire[2]; /* ns */
	int back_max;            /* KiB */
	int back_penalty;
	uint64_t slice_idle; /* ns */
	int user_max_budget; /* sectors, 0: auto */
	uint64_t timeout;    /* ns */
	int strict_guarantees;
	int low_latency;
};

/* Flash that queues (nonrot_with_queueing): idling and merging gain it nothing. */
static inline bool bfq_nonrot_with_queueing(const struct bfq_data *bfqd)
{
	return blk_queue_nonrot(bfqd->queue) && bfqd->hw_tag == 1;
}

/* A rotating disk not seen to queue (rot_without_queueing): taken so until it is seen to. */
static inline bool bfq_rot_without_queueing(const struct bfq_data *bfqd)
{
	return !blk_queue_nonrot(bfqd->queue) && bfqd->hw_tag != 1;
}

/* More than BFQQ_SEEKY_COUNT of the last 32 requests were seeks (BFQQ_SEEKY). */
static inline bool bfq_seeky(const struct bfq_queue *bfqq)
{
	return __builtin_popcount(bfqq->seek_history) > BFQQ_SEEKY_COUNT;
}

static inline struct bfq_queue *rq_bfqq(const struct request *rq)
{
	return rq->elv_priv[0];
}

static inline struct bfq_queue *entity_bfqq(struct bfq_entity *e)
{
	return (struct bfq_queue *)((char *)e - offsetof(struct bfq_queue, entity));
}

/* IOPRIO classes (RT 1, BE 2, IDLE 3) as service-tree indexes. */
static inline int bfq_class_of(unsigned short ioprio)
{
	return ioprio_class(ioprio) - IOPRIO_CLASS_RT;
}

/* The idle class has one level, Linux's lowest. */
static inline int bfq_level_of(unsigned short ioprio)
{
	return bfq_class_of(ioprio) == BFQ_CLASS_IDLE ? IOPRIO_NR_LEVELS - 1 : ioprio_level(ioprio);
}

/* bfq.c: the queues */
void bfq_put_if_unused(struct bfq_data *bfqd, struct bfq_queue *bfqq, uint64_t now);
void bfq_remove_request(struct bfq_data *bfqd, struct request *rq, uint64_t now);

/* bfq_burst.c: processes started together */
void bfq_handle_burst(struct bfq_data *bfqd, struct bfq_queue *bfqq, uint64_t now);
void bfq_burst_forget(struct bfq_data *bfqd, struct bfq_queue *bfqq);

/* bfq_group.c: the processes' cgroups */
void bfq_group_attach(struct bfq_data *bfqd, struct bfq_queue *bfqq, const struct request *rq,
		      uint64_t now);
void bfq_group_detach(struct bfq_data *bfqd, struct bfq_queue *bfqq);
int bfq_group_weights_show(const struct elevator_queue *e, char *buf, size_t len);
int bfq_groups_show(const struct elevator_queue *e, char *buf, size_t len);
int bfq_group_weights_store(struct elevator_queue *e, const char *buf);
void bfq_groups_exit(struct bfq_data *bfqd);

/* All the trees queues wait in: the root's, then each group's. */
static inline struct bfq_sched_data *bfq_sd_next(struct bfq_data *bfqd, struct bfq_sched_data *sd)
{
	struct bfq_group *g;

	if (!sd)
		return &bfqd->sd;
	if (sd == &bfqd->sd)
		g = LIST_FIRST(&bfqd->groups);
	else
		g = LIST_NEXT((struct bfq_group *)((char *)sd - offsetof(struct bfq_group, sd)), link);
	return g ? &g->sd : NULL;
}

/* bfq_coop.c: cooperating processes share a queue */
void bfq_coop_created(struct bfq_data *bfqd, struct bfq_queue *bfqq, uint64_t now);
struct bfq_queue *bfq_coop_queue(struct bfq_data *bfqd, struct bfq_queue *own,
				 const struct request *rq, uint64_t now);
struct bfq_queue *bfq_coop_lookup(struct bfq_queue *own);
void bfq_coop_expired(struct bfq_queue *bfqq);
void bfq_coop_forget(struct bfq_data *bfqd, struct bfq_queue *gone);

/* bfq_inject.c: others' requests while idling */
void bfq_reset_inject_limit(struct bfq_data *bfqd, struct bfq_queue *bfqq, uint64_t now);
void bfq_inject_on_add(struct bfq_data *bfqd, struct bfq_queue *bfqq, bool was_empty,
		       uint64_t now);
void bfq_update_inject_limit(struct bfq_data *bfqd, struct bfq_queue *bfqq, uint64_t now);
struct bfq_queue *bfq_inject_queue(struct bfq_data *bfqd, struct bfq_queue *in, uint64_t now);
void bfq_waker_forget(struct bfq_data *bfqd, const struct bfq_queue *gone);

/* bfq_service.c: which queue has the disk, and for how long */
int bfq_max_budget(const struct bfq_data *bfqd);
int bfq_serv_to_charge(const struct request *rq, const struct bfq_queue *bfqq);
bool bfq_idling_boosts_thr(const struct bfq_data *bfqd, const struct bfq_queue *bfqq);
void bfq_del_bfqq_busy(struct bfq_data *bfqd, struct bfq_queue *bfqq, bool expiration);
bool bfq_budget_timeout(const struct bfq_queue *bfqq, uint64_t now);
void bfq_expire(struct bfq_data *bfqd, struct bfq_queue *bfqq, bool compensate,
		enum bfqq_expiration reason, uint64_t now);
void bfq_idle_busy_switch(struct bfq_data *bfqd, struct bfq_queue *bfqq, uint64_t now);
struct request *bfq_dispatch_request(struct elevator_queue *e, uint64_t now);
bool bfq_has_work(const struct elevator_queue *e);
void bfq_completed(struct elevator_queue *e, struct request *rq);

/* bfq_weight.c: the weights, per process and raised */
struct bfq_weight *bfq_weight_find(const struct bfq_data *bfqd, pid_t pid);
unsigned int bfq_orig_weight(const struct bfq_data *bfqd, const struct bfq_queue *bfqq);
void bfq_update_weight(const struct bfq_data *bfqd, struct bfq_queue *bfqq);
void bfq_update_wr_data(struct bfq_data *bfqd, struct bfq_queue *bfqq, uint64_t now);
uint64_t bfq_softrt_next_start(const struct bfq_data *bfqd, const struct bfq_queue *bfqq,
			       uint64_t now);
void bfq_wr_on_arrival(struct bfq_data *bfqd, struct bfq_queue *bfqq, bool interactive,
		       bool soft_rt, uint64_t now);

#endif
