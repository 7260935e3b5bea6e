/* SPDX-License-Identifier: BSD-3-Clause */
/* cfq_impl.h - what CFQ's files share: its queues, groups and histories, the calls between them. */
#ifndef RQDISK_CFQ_IMPL_H
#define RQDISK_CFQ_IMPL_H

#include "elevator.h"
#include "elv_cgroup.h"

/* Defaults of 2.6 cfq-iosched, in milliseconds where 2.6 had jiffies. */
#define CFQ_QUANTUM 8                /* active queue's requests out while others wait */
#define CFQ_FIFO_EXPIRE_SYNC_MS 125  /* a sync request waits at most this long... */
#define CFQ_FIFO_EXPIRE_ASYNC_MS 250 /* ...and an async one this long, when they can */
#define CFQ_BACK_SEEK_MAX_KIB 16384  /* how far behind the head a request is still near */
#define CFQ_BACK_SEEK_PENALTY 2      /* a backward seek costs as much as this many forward */
#define CFQ_SLICE_SYNC_MS 100        /* a sync queue's time slice */
#define CFQ_SLICE_ASYNC_MS 40        /* the async queue's time slice */
#define CFQ_SLICE_ASYNC_RQ 2         /* base of the async queue's requests per slice */
#define CFQ_SLICE_IDLE_MS 8          /* how long to wait for a process's next sync request */
#define CFQ_SLICE_SCALE 5	     /* a level is worth this fraction of the base slice */
#define CFQ_IDLE_GRACE_MS 100	     /* the disk is idle for the idle class after this long */
#define CFQ_IDLE_MAX_OUT_ALONE 4     /* an idle queue's requests out when it is alone */

#define CFQ_HASH_BITS 6
#define CFQ_WEIGHT_DEFAULT 100 /* io.weight's: 1..10000 */
#define CFQ_WEIGHT_MAX 10000

/*
 * A process's history (2.6's cfq_io_context): its think time, a moving
 * average of the time from its last completion to its next sync request,
 * each sample weighing 1/8, capped at 2 * slice_idle and meaningful once
 * the samples weigh more than CFQ_TTIME_VALID_SAMPLES; and which of its
 * last 32 requests jumped more than CFQQ_SEEK_THR sectors.  More than
 * CFQQ_SEEKY_COUNT such seeks make it seeky, and a seeky process with
 * fewer than CFQQ_DEEP_QUEUED requests queued at once is not idled for;
 * neither is one whose think time is longer than slice_idle.  The history
 * outlives the queue, as the io context did; at most CFQ_MAX_CIC are kept.
 */
#define CFQ_TTIME_VALID_SAMPLES 80
#define CFQQ_SEEK_THR 800
#define CFQQ_SECT_THR_NONROT 32 /* on flash a request this small is a seek, wherever it lies */
#define CFQQ_SEEKY_COUNT 4 /* 32 / 8 */
#define CFQQ_DEEP_QUEUED 4
#define CFQ_MAX_CIC 1024

/*
 * Whether the disk queues (cfq_update_hw_tag): at each completion under
 * load (more than CFQ_HW_QUEUE_MIN requests queued or in the driver), the
 * deepest the driver has held is a sample; after CFQ_HW_TAG_SAMPLES of
 * them the disk queues if it held CFQ_HW_QUEUE_MIN at once.  Until then it
 * is taken to queue, as Linux starts (hw_tag -1).
 */
#define CFQ_HW_QUEUE_MIN 5
#define CFQ_HW_TAG_SAMPLES 50

struct cfq_io_context {
	LIST_ENTRY(cfq_io_context) hash;
	TAILQ_ENTRY(cfq_io_context) lru; /* least recently used first */
	pid_t pid;
	uint64_t last_end_request; /* ns */
	uint64_t ttime_total, ttime_mean;
	unsigned int ttime_samples;
	uint32_t seek_history; /* bit 0: the latest request was a seek */
	sector_t last_request_pos;
	bool idle_window; /* its queue is idled for when it runs dry */
	bool deep;	  /* it had CFQQ_DEEP_QUEUED queued: seeks or not, worth idling */
};

LIST_HEAD(cfq_cic_head, cfq_io_context);
TAILQ_HEAD(cfq_cic_lru, cfq_io_context);

enum { CFQ_ASYNC, CFQ_SYNC };

/* A cgroup's share of the disk (2.6.33's cfq_group). */
struct cfq_group {
	LIST_ENTRY(cfq_group) link;
	const struct blkcg *blkcg; /* its cgroup, as requests carry it (NULL: the root) */
	const char *path; /* and that cgroup's path (blkcg_path), which group_weights names */
	unsigned int weight;
	uint64_t vdisktime;	/* disk time it used, in ns times CFQ_WEIGHT_DEFAULT over weight */
	unsigned int nr_queues; /* it goes with the last (the root never) */
	unsigned int busy;	/* its queues on the round robin */
};

LIST_HEAD(cfq_group_list, cfq_group);

struct cfq_queue {
	LIST_ENTRY(cfq_queue) hash; /* sync queues, by pid */
	TAILQ_ENTRY(cfq_queue) rr;  /* on the round robin while it has requests */
	struct elv_rb_root sort_list;
	struct elv_fifo fifo;
	struct request *next_rq; /* the sector-ordered walk goes on from here */
	pid_t pid;
	unsigned short ioprio_class; /* IOPRIO_CLASS_RT, _BE or _IDLE */
	unsigned short ioprio;	     /* its level, 0 (highest) .. 7 */
	bool sync;
	bool on_rr;
	bool slice_new;    /* nothing completed this slice yet: it has not started */
	bool fifo_expired; /* an expired request already went out of order this slice */
	unsigned int queued;
	unsigned int dispatched; /* in the driver */
	uint64_t slice_end;
	struct cfq_group *group;
};

LIST_HEAD(cfq_hash_head, cfq_queue);
TAILQ_HEAD(cfq_rr, cfq_queue);

struct cfq_data {
	const struct request_queue *queue; /* whether it seeks: blk_queue_nonrot */
	struct cfq_hash_head hash[1 << CFQ_HASH_BITS];
	/* every process's async requests, by class (RT, BE, IDLE) and level */
	struct cfq_queue *async_queue[3][IOPRIO_NR_LEVELS];
	struct cfq_queue oom_queue;    /* for requests whose queue could not be allocated */
	struct cfq_rr rr_list;         /* queues with requests, in service order */
	unsigned int busy_queues;      /* on rr_list */
	struct cfq_queue *active;
	unsigned int dispatch_slice; /* requests the active queue sent this slice */
	uint64_t idle_until;         /* the active queue waits for a request until then; 0: not */
	uint64_t idle_class_after;   /* an idle-class queue may have the disk from then */
	sector_t last_position;      /* where the last dispatched request ends: the head */
	unsigned int rq_in_driver;
	unsigned int sync_flight; /* of those, from sync queues */
	unsigned int rq_queued;   /* in the elevator */
	int hw_tag;		  /* the disk queues: 1, 0, or -1 for not known yet (taken as 1) */
	unsigned int hw_tag_est_depth; /* the most the driver held at once */
	unsigned int hw_tag_samples;

	int quantum;
	uint64_t fifo_expire[2]; /* ns */
	int back_seek_max;       /* KiB */
	int back_seek_penalty;
	uint64_t slice[2]; /* ns */
	int slice_async_rq;
	uint64_t slice_idle; /* ns */

	struct cfq_cic_head cic_hash[1 << CFQ_HASH_BITS];
	struct cfq_cic_lru cic_lru;
	unsigned int nr_cic;

	const struct blk_clock *clock;
	struct cfq_group root_group;
	struct cfq_group_list groups;
	uint64_t min_vdisktime; /* the last chosen group's */
	uint64_t active_since;	/* ns: the active queue got the disk then */
	struct elv_cgroup_ops cgroup;
	struct elv_group_weights group_weights;
};

static inline struct cfq_queue *rq_cfqq(const struct request *rq)
{
	return rq->elv_priv[0];
}

static inline unsigned int cfq_hash_key(pid_t pid)
{
	return ((uint32_t)pid * 0x9e3779b9u) >> (32 - CFQ_HASH_BITS);
}

static inline bool cfq_class_rt(const struct cfq_queue *cfqq)
{
	return cfqq->ioprio_class == IOPRIO_CLASS_RT;
}

static inline bool cfq_class_idle(const struct cfq_queue *cfqq)
{
	return cfqq->ioprio_class == IOPRIO_CLASS_IDLE;
}

/* cfq_queue.c: the queues */
void cfq_init_prio_data(struct cfq_queue *cfqq, unsigned short ioprio);
void cfq_queue_init(struct cfq_queue *cfqq, pid_t pid, bool sync, unsigned short ioprio);
struct cfq_queue *cfq_find_queue(struct cfq_data *cfqd, pid_t pid, bool sync,
				 unsigned short ioprio);
struct cfq_queue *cfq_get_queue(struct cfq_data *cfqd, const struct request *rq);
void cfq_free_queue(struct cfq_data *cfqd, struct cfq_queue *cfqq);
void cfq_put_if_unused(struct cfq_data *cfqd, struct cfq_queue *cfqq);
struct request *cfq_choose_req(const struct cfq_data *cfqd, struct request *rq1,
			       struct request *rq2);
void cfq_remove_request(struct cfq_data *cfqd, struct request *rq);

/* cfq_group.c: the processes' cgroups */
void cfq_group_attach(struct cfq_data *cfqd, struct cfq_queue *cfqq, const struct request *rq);
void cfq_group_detach(struct cfq_data *cfqd, struct cfq_queue *cfqq);
void cfq_group_served(struct cfq_data *cfqd, struct cfq_queue *cfqq);
int cfq_group_weights_show(const struct elevator_queue *e, char *buf, size_t len);
int cfq_groups_show(const struct elevator_queue *e, char *buf, size_t len);
int cfq_group_weights_store(struct elevator_queue *e, const char *buf);

/* cfq_iocontext.c: a process's history */
struct cfq_io_context *cfq_find_cic(const struct cfq_data *cfqd, pid_t pid);
void cfq_free_cic(struct cfq_data *cfqd, struct cfq_io_context *cic);
void cfq_update_history(struct cfq_data *cfqd, struct cfq_queue *cfqq, const struct request *rq,
			uint64_t now);
bool cfq_idle_window(const struct cfq_data *cfqd, const struct cfq_queue *cfqq);
bool cfq_may_idle(const struct cfq_data *cfqd, const struct cfq_queue *cfqq);
void cfq_update_hw_tag(struct cfq_data *cfqd);
void cfq_idle_failed(struct cfq_data *cfqd, const struct cfq_queue *cfqq);

/* cfq_service.c: which queue has the disk, and for how long */
void cfq_add_rr(struct cfq_data *cfqd, struct cfq_queue *cfqq);
void cfq_del_rr(struct cfq_data *cfqd, struct cfq_queue *cfqq);
void cfq_rq_enqueued(struct cfq_data *cfqd, struct cfq_queue *cfqq, struct request *rq,
		     uint64_t now);
void cfq_update_prio(struct cfq_data *cfqd, struct cfq_queue *cfqq, unsigned short ioprio);
struct cfq_queue *cfq_select_queue(struct cfq_data *cfqd, uint64_t now);
bool cfq_must_wait(const struct cfq_data *cfqd, const struct cfq_queue *cfqq);
void cfq_check_async_budget(struct cfq_data *cfqd, struct cfq_queue *cfqq);
void cfq_active_completed(struct cfq_data *cfqd, struct cfq_queue *cfqq, uint64_t now);

#endif
