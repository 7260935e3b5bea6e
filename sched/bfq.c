/* SPDX-License-Identifier: BSD-3-Clause */
/* bfq.c - Budget Fair Queueing: per-process queues served in sector budgets, idling, raising. */

/*
 * After Linux's block/bfq-iosched.c, without groups.  Each process
 * (rq->pid) has a queue for its sync requests; async requests share one
 * queue per priority class and level, as Linux's async queues do.  The
 * queue in service owns the disk until its budget (in sectors) is used
 * up, its budget timeout passes, or it has nothing more and idling for
 * its next request did not pay off; the budget it gets next is fed back
 * from why it stopped.  Which queue goes next is B-WF2Q+'s choice
 * (bfq_wf2q.c), by weight: from the ioprio level, or set per process
 * through the weights tunable as cgroup io.bfq.weight would.  With
 * low_latency a process that starts doing I/O, or comes back after two
 * seconds, is weight-raised for a while (interactive), and one whose
 * requests arrive no faster than a soft real-time rate is raised harder
 * for a short time.
 *
 * Left out, as rqdisk has neither the process history nor the hardware
 * queueing they serve: queue merging of cooperating processes, burst
 * detection, request injection while idling, seeky/think-time detection
 * (every sync queue idles, as cfq.c's do), hw_tag detection and depth
 * limits.  rqdisk(7) bfq lists every difference.
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfq.h"
#include "rq_merge.h"
#include "rq_rbtree.h"

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

/* Interactive raising lasts ref_duration * ref_rate / peak_rate, in 3..25 s (rotational pair). */
#define BFQ_WR_REF_DURATION_MS 7000
#define BFQ_REF_RATE 14000 /* sectors per microsecond << BFQ_RATE_SHIFT */
#define BFQ_WR_MIN_DURATION_MS 3000
#define BFQ_WR_MAX_DURATION_MS 25000
#define BFQ_RATE_SHIFT 16
#define BFQ_RATE_MIN_SAMPLES 32
#define BFQ_RATE_REF_INTERVAL_NS 1000000000ull

/* The largest max_budget: four times it still fits an int, as budgets are ints. */
#define BFQ_MAX_BUDGET_LIMIT (INT_MAX / 8)

#define BFQ_HASH_BITS 6
#define BFQ_MAX_UNUSED 1024 /* sync queues kept for their history after their last request */
#define BFQ_MAX_WEIGHTS 4096

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

static struct bfq_queue *rq_bfqq(const struct request *rq)
{
	return rq->elv_priv[0];
}

static struct bfq_queue *entity_bfqq(struct bfq_entity *e)
{
	return (struct bfq_queue *)((char *)e - offsetof(struct bfq_queue, entity));
}

static unsigned int bfq_hash_key(pid_t pid)
{
	return ((uint32_t)pid * 0x9e3779b9u) >> (32 - BFQ_HASH_BITS);
}

/* IOPRIO classes (RT 1, BE 2, IDLE 3) as service-tree indexes. */
static int bfq_class_of(unsigned short ioprio)
{
	return ioprio_class(ioprio) - IOPRIO_CLASS_RT;
}

/* The idle class has one level, Linux's lowest. */
static int bfq_level_of(unsigned short ioprio)
{
	return bfq_class_of(ioprio) == BFQ_CLASS_IDLE ? IOPRIO_NR_LEVELS - 1 : ioprio_level(ioprio);
}

static bool bfq_bio_sync(const struct bio *bio)
{
	return bio->bi_op == REQ_OP_READ || (bio->bi_flags & (REQ_SYNC | REQ_FUA));
}

/* ---- per-process weights (cgroup io.bfq.weight) ---- */

static struct bfq_weight *bfq_weight_find(const struct bfq_data *bfqd, pid_t pid)
{
	for (unsigned int i = 0; i < bfqd->nr_weights; i++)
		if (bfqd->weights[i].pid == pid)
			return &bfqd->weights[i];
	return NULL;
}

/* The weight the queue is served with when not raised: its process's, or its level's. */
static unsigned int bfq_orig_weight(const struct bfq_data *bfqd, const struct bfq_queue *bfqq)
{
	const struct bfq_weight *w = bfqq->sync ? bfq_weight_find(bfqd, bfqq->pid) : NULL;

	return w ? w->weight : bfq_ioprio_to_weight(bfqq->level);
}

static void bfq_update_weight(const struct bfq_data *bfqd, struct bfq_queue *bfqq)
{
	bfq_entity_set_weight(&bfqq->entity, bfq_orig_weight(bfqd, bfqq) * bfqq->wr_coeff);
}

/* ---- budgets ---- */

/* The largest budget a queue may get now (bfq_max_budget). */
static int bfq_max_budget(const struct bfq_data *bfqd)
{
	if (bfqd->user_max_budget)
		return bfqd->user_max_budget;
	if (bfqd->budgets_assigned < BFQ_STATS_MIN_BUDGETS || !bfqd->auto_max_budget)
		return BFQ_DEFAULT_MAX_BUDGET;
	return bfqd->auto_max_budget;
}

/* The smallest budget feedback may shrink one to (bfq_min_budget). */
static int bfq_min_budget(const struct bfq_data *bfqd)
{
	int min = bfq_max_budget(bfqd) / 32;

	return min > 0 ? min : 1;
}

/* Async requests cost more than they take (bfq_serv_to_charge), unless raised. */
static int bfq_serv_to_charge(const struct request *rq, const struct bfq_queue *bfqq)
{
	int sectors = (int)blk_rq_sectors(rq);

	if (bfqq->sync || bfqq->wr_coeff > 1)
		return sectors;
	return sectors * BFQ_ASYNC_CHARGE_FACTOR;
}

static int bfq_budget_left(const struct bfq_queue *bfqq)
{
	return bfqq->entity.budget - bfqq->entity.service;
}

/* ---- weight raising ---- */

static uint64_t bfq_wr_duration(const struct bfq_data *bfqd)
{
	uint64_t ms = BFQ_WR_REF_DURATION_MS;

	if (bfqd->peak_rate)
		ms = (uint64_t)BFQ_WR_REF_DURATION_MS * BFQ_REF_RATE / bfqd->peak_rate;
	if (ms < BFQ_WR_MIN_DURATION_MS)
		ms = BFQ_WR_MIN_DURATION_MS;
	if (ms > BFQ_WR_MAX_DURATION_MS)
		ms = BFQ_WR_MAX_DURATION_MS;
	return ms * NSEC_PER_MSEC;
}

static void bfq_set_wr_coeff(struct bfq_data *bfqd, struct bfq_queue *bfqq, unsigned int coeff)
{
	if (bfqq->busy)
		bfqd->wr_busy_queues += (coeff > 1) - (bfqq->wr_coeff > 1);
	bfqq->wr_coeff = coeff;
	bfq_update_weight(bfqd, bfqq);
}

static void bfq_end_wr(struct bfq_data *bfqd, struct bfq_queue *bfqq, uint64_t now)
{
	bfq_set_wr_coeff(bfqd, bfqq, 1);
	bfqq->wr_cur_max_time = 0;
	bfqq->last_wr_start_finish = now;
}

/* Raising ends when its time is up, or an interactive one got its fill (bfq_update_wr_data). */
static void bfq_update_wr_data(struct bfq_data *bfqd, struct bfq_queue *bfqq, uint64_t now)
{
	bool rt = bfqq->wr_cur_max_time == BFQ_WR_RT_MAX_TIME_MS * NSEC_PER_MSEC;

	if (bfqq->wr_coeff == 1)
		return;
	if (now > bfqq->last_wr_start_finish + bfqq->wr_cur_max_time ||
	    (!rt && bfqq->service_from_wr > BFQ_MAX_SERVICE_FROM_WR))
		bfq_end_wr(bfqd, bfqq, now);
}

/* When the queue may next be deemed soft real-time (bfq_bfqq_softrt_next_start). */
static uint64_t bfq_softrt_next_start(const struct bfq_data *bfqd, const struct bfq_queue *bfqq,
				      uint64_t now)
{
	uint64_t ns_per_sector = 1000000000ull / BFQ_WR_MAX_SOFTRT_RATE;
	uint64_t by_rate = bfqq->last_idle_bklogged + bfqq->service_from_backlogged * ns_per_sector;
	uint64_t by_idle = now + bfqd->slice_idle + BFQ_SOFTRT_SLACK_MS * NSEC_PER_MSEC;
	uint64_t next = bfqq->soft_rt_next_start;

	if (next == UINT64_MAX || next < by_rate)
		next = by_rate;
	return next > by_idle ? next : by_idle;
}

/*
 * The queue got its first request after being empty: raise it if it
 * looks interactive (new, or empty for bfq_wr_min_idle_time) or soft
 * real-time (bfq_update_bfqq_wr_on_rq_arrival).  Sync queues only.
 */
static void bfq_wr_on_arrival(struct bfq_data *bfqd, struct bfq_queue *bfqq, bool interactive,
			      bool soft_rt, uint64_t now)
{
	if (!bfqd->low_latency || !bfqq->sync)
		return;
	if (interactive) {
		bfq_set_wr_coeff(bfqd, bfqq, BFQ_WR_COEFF);
		bfqq->wr_cur_max_time = bfq_wr_duration(bfqd);
	} else if (soft_rt) {
		bfq_set_wr_coeff(bfqd, bfqq, BFQ_WR_COEFF * BFQ_SOFTRT_WEIGHT_FACTOR);
		bfqq->wr_cur_max_time = BFQ_WR_RT_MAX_TIME_MS * NSEC_PER_MSEC;
	} else {
		return;
	}
	bfqq->last_wr_start_finish = now;
	bfqq->service_from_wr = 0;
}

/* ---- queues ---- */

static void bfq_queue_init(struct bfq_data *bfqd, struct bfq_queue *bfqq, pid_t pid, bool sync,
			   unsigned short ioprio)
{
	elv_rb_init(&bfqq->sort_list);
	TAILQ_INIT(&bfqq->fifo);
	bfqq->pid = pid;
	bfqq->sync = sync;
	bfqq->ioprio = ioprio;
	bfqq->class = bfq_class_of(ioprio);
	bfqq->level = bfq_level_of(ioprio);
	bfqq->just_created = true;
	bfqq->wr_coeff = 1;
	bfqq->soft_rt_next_start = UINT64_MAX; /* not soft real-time before it is measured */
	bfqq->max_budget = 2 * bfq_max_budget(bfqd) / 3;
	bfqq->entity.budget = bfqq->max_budget;
	bfqq->entity.weight = bfq_orig_weight(bfqd, bfqq);
}

static struct bfq_queue **bfq_async_slot(struct bfq_data *bfqd, unsigned short ioprio)
{
	return &bfqd->async[bfq_class_of(ioprio)][bfq_level_of(ioprio)];
}

static struct bfq_queue *bfq_find_queue(struct bfq_data *bfqd, pid_t pid, bool sync,
					unsigned short ioprio)
{
	struct bfq_queue *bfqq;

	if (!sync)
		return *bfq_async_slot(bfqd, ioprio);
	LIST_FOREACH(bfqq, &bfqd->hash[bfq_hash_key(pid)], hash)
		if (bfqq->pid == pid)
			return bfqq;
	return NULL;
}

static void bfq_free_queue(struct bfq_data *bfqd, struct bfq_queue *bfqq)
{
	assert(!bfqq->queued && !bfqq->dispatched && !bfqq->busy && bfqq != bfqd->in_service);
	bfq_forget_entity(&bfqq->entity);
	if (bfqq->on_lru) {
		TAILQ_REMOVE(&bfqd->lru, bfqq, lru);
		bfqd->nr_lru--;
	}
	if (bfqq->sync)
		LIST_REMOVE(bfqq, hash);
	else
		*bfq_async_slot(bfqd, bfqq->ioprio) = NULL;
	free(bfqq);
}

/*
 * A sync queue with nothing queued, out or in service is kept a while: its
 * history (when it emptied, its budget, its raising) is what Linux keeps
 * for a process's lifetime.  Past bfq_wr_min_idle_time it is gone, and a
 * new one is deemed interactive, just as the old one would have been.
 */
static void bfq_put_if_unused(struct bfq_data *bfqd, struct bfq_queue *bfqq, uint64_t now)
{
	if (bfqq == &bfqd->oom_queue || !bfqq->sync || bfqq->busy || bfqq->queued ||
	    bfqq->dispatched || bfqq == bfqd->in_service || bfqq->on_lru)
		return;
	if (!bfqq->budget_timeout || bfqq->budget_timeout > now)
		bfqq->budget_timeout = now; /* it emptied with requests out: from the last one */
	bfqq->on_lru = true;
	TAILQ_INSERT_TAIL(&bfqd->lru, bfqq, lru);
	bfqd->nr_lru++;
}

static void bfq_reap_unused(struct bfq_data *bfqd, uint64_t now)
{
	struct bfq_queue *bfqq;

	while ((bfqq = TAILQ_FIRST(&bfqd->lru)) &&
	       (bfqd->nr_lru > BFQ_MAX_UNUSED ||
		now > bfqq->budget_timeout + BFQ_WR_MIN_IDLE_TIME_MS * NSEC_PER_MSEC))
		bfq_free_queue(bfqd, bfqq);
}

/* The queue rq belongs in, made on demand. */
static struct bfq_queue *bfq_get_queue(struct bfq_data *bfqd, const struct request *rq)
{
	bool sync = rq_is_sync(rq);
	struct bfq_queue *bfqq = bfq_find_queue(bfqd, rq->pid, sync, rq->ioprio);

	if (bfqq) {
		if (bfqq->on_lru) {
			TAILQ_REMOVE(&bfqd->lru, bfqq, lru);
			bfqd->nr_lru--;
			bfqq->on_lru = false;
		}
		if (sync)
			bfqq->ioprio = rq->ioprio; /* a prio change shows at its next activation */
		return bfqq;
	}
	bfqq = calloc(1, sizeof(*bfqq));
	if (!bfqq)
		return &bfqd->oom_queue;
	bfq_queue_init(bfqd, bfqq, sync ? rq->pid : 0, sync, rq->ioprio);
	if (sync)
		LIST_INSERT_HEAD(&bfqd->hash[bfq_hash_key(rq->pid)], bfqq, hash);
	else
		*bfq_async_slot(bfqd, rq->ioprio) = bfqq;
	return bfqq;
}

static int bfq_init_queue(struct elevator_queue *e)
{
	struct bfq_data *bfqd = calloc(1, sizeof(*bfqd));

	if (!bfqd)
		return -ENOMEM;
	for (int i = 0; i < 1 << BFQ_HASH_BITS; i++)
		LIST_INIT(&bfqd->hash[i]);
	TAILQ_INIT(&bfqd->lru);
	bfq_sched_init(&bfqd->sd);
	bfqd->sd.class_idle_last_service = blk_clock_now(e->clock);
	bfqd->fifo_expire[BFQ_SYNC] = BFQ_FIFO_EXPIRE_SYNC_MS * NSEC_PER_MSEC;
	bfqd->fifo_expire[BFQ_ASYNC] = BFQ_FIFO_EXPIRE_ASYNC_MS * NSEC_PER_MSEC;
	bfqd->back_max = BFQ_BACK_MAX_KIB;
	bfqd->back_penalty = BFQ_BACK_PENALTY;
	bfqd->slice_idle = BFQ_SLICE_IDLE_MS * NSEC_PER_MSEC;
	bfqd->timeout = BFQ_TIMEOUT_MS * NSEC_PER_MSEC;
	bfqd->low_latency = 1;
	bfqd->hw_tag = -1;
	bfq_queue_init(bfqd, &bfqd->oom_queue, 0, false, IOPRIO_DEFAULT);
	e->elevator_data = bfqd;
	return 0;
}

static void bfq_exit_queue(struct elevator_queue *e)
{
	struct bfq_data *bfqd = e->elevator_data;
	struct bfq_queue *bfqq;

	assert(!bfqd->queued && !bfqd->rq_in_driver);
	if (bfqd->in_service) {
		bfqq = bfqd->in_service;
		bfqd->in_service = NULL;
		bfq_deactivate_entity(&bfqd->sd, &bfqq->entity);
		bfqq->busy = false;
	}
	for (int i = 0; i < 1 << BFQ_HASH_BITS; i++)
		while ((bfqq = LIST_FIRST(&bfqd->hash[i])))
			bfq_free_queue(bfqd, bfqq);
	for (int c = 0; c < BFQ_NR_CLASSES; c++)
		for (int l = 0; l < IOPRIO_NR_LEVELS; l++)
			if (bfqd->async[c][l])
				bfq_free_queue(bfqd, bfqd->async[c][l]);
	free(bfqd->weights);
	free(bfqd);
}

/* ---- request order within a queue ---- */

/* Which of two requests to serve next from the head (bfq_choose_req, from AS and CFQ). */
static struct request *bfq_choose_req(const struct bfq_data *bfqd, struct request *rq1,
				      struct request *rq2)
{
	/* back_max is in KiB: twice as many sectors */
	return rq_choose_req(rq1, rq2, bfqd->last_position, (sector_t)bfqd->back_max * 2,
			     (sector_t)bfqd->back_penalty);
}

/*
 * The FIFO head, if it expired, is the next to go, but the FIFO is looked
 * at only once a budget (bfq_check_fifo): a queue is not turned into a
 * FIFO by a backlog that is old all through.
 */
static struct request *bfq_check_fifo(struct bfq_queue *bfqq, const struct request *last,
				      uint64_t now)
{
	struct request *rq = TAILQ_FIRST(&bfqq->fifo);

	if (bfqq->fifo_expire)
		return NULL;
	bfqq->fifo_expire = true;
	if (!rq || rq == last || now < rq->fifo_time)
		return NULL;
	return rq;
}

/* The request to go after rq, which is leaving (bfq_find_next_rq). */
static struct request *bfq_find_next_rq(const struct bfq_data *bfqd, struct bfq_queue *bfqq,
					struct request *rq, uint64_t now)
{
	struct request *next = bfq_check_fifo(bfqq, rq, now);

	if (next)
		return next;
	return bfq_choose_req(bfqd, rq_rb_next_wrap(&bfqq->sort_list, rq), elv_rb_prev(rq));
}

static void bfq_remove_request(struct bfq_data *bfqd, struct request *rq, uint64_t now)
{
	struct bfq_queue *bfqq = rq_bfqq(rq);

	if (bfqq->next_rq == rq)
		bfqq->next_rq = bfq_find_next_rq(bfqd, bfqq, rq, now);
	elv_rb_del(&bfqq->sort_list, rq);
	TAILQ_REMOVE(&bfqq->fifo, rq, queuelist);
	bfqq->queued--;
	bfqd->queued--;
}

/* ---- busy, in service, expired ---- */

static void bfq_add_bfqq_busy(struct bfq_data *bfqd, struct bfq_queue *bfqq)
{
	if (bfqq->sync) { /* a prio change takes effect now (__bfq_entity_update_weight_prio) */
		bfqq->class = bfq_class_of(bfqq->ioprio);
		bfqq->level = bfq_level_of(bfqq->ioprio);
	}
	bfq_update_weight(bfqd, bfqq);
	bfqq->busy = true;
	bfqd->busy_queues++;
	bfqd->wr_busy_queues += bfqq->wr_coeff > 1;
	bfq_activate_entity(&bfqd->sd, &bfqq->entity, bfqq->class, bfqq->non_blocking_wait_rq);
	bfqq->non_blocking_wait_rq = false;
}

static void bfq_del_bfqq_busy(struct bfq_data *bfqd, struct bfq_queue *bfqq, bool expiration)
{
	bfqq->busy = false;
	bfqd->busy_queues--;
	bfqd->wr_busy_queues -= bfqq->wr_coeff > 1;
	bfq_deactivate_entity(&bfqd->sd, &bfqq->entity);
	if (!expiration)
		bfq_forget_entity(&bfqq->entity);
}

/*
 * Whether the disk queues (bfq_update_hw_tag), judged at each completion
 * over BFQ_HW_QUEUE_SAMPLES moments when enough was outstanding for it to:
 * more than BFQ_HW_QUEUE_THRESHOLD requests in it at once at any of them.
 */
#define BFQ_HW_QUEUE_THRESHOLD 3
#define BFQ_HW_QUEUE_SAMPLES 32

static void bfq_update_hw_tag(struct bfq_data *bfqd)
{
	const struct bfq_queue *in = bfqd->in_service;

	if (bfqd->rq_in_driver > bfqd->max_rq_in_driver)
		bfqd->max_rq_in_driver = bfqd->rq_in_driver;
	if (bfqd->hw_tag == 1 || bfqd->rq_in_driver + bfqd->queued <= BFQ_HW_QUEUE_THRESHOLD)
		return;
	/* an in-service queue that idles with little out says nothing of the disk */
	if (in && in->sync && in->dispatched + in->queued < BFQ_HW_QUEUE_THRESHOLD &&
	    bfqd->rq_in_driver < BFQ_HW_QUEUE_THRESHOLD)
		return;
	if (bfqd->hw_tag_samples++ < BFQ_HW_QUEUE_SAMPLES)
		return;
	bfqd->hw_tag = bfqd->max_rq_in_driver > BFQ_HW_QUEUE_THRESHOLD;
	bfqd->max_rq_in_driver = 0;
	bfqd->hw_tag_samples = 0;
}

/*
 * bfq_asymmetric_scenario: busy queues of different weights (as set, not
 * raised) or of more than one class.  Only then does another queue's
 * service while bfqq's next request is on its way break bfqq's share.
 */
static bool bfq_asymmetric_scenario(const struct bfq_data *bfqd)
{
	unsigned int weight = 0;
	int classes = 0;

	for (int c = 0; c < BFQ_NR_CLASSES; c++) {
		const struct bfq_service_tree *st = &bfqd->sd.st[c];
		const struct bfq_entity *en;
		bool busy = false;

		TAILQ_FOREACH(en, &st->active, link) {
			const struct bfq_queue *q = entity_bfqq((struct bfq_entity *)en);
			unsigned int w = en->weight / q->wr_coeff;

			if (weight && w != weight)
				return true;
			weight = w;
			busy = true;
		}
		if (bfqd->in_service && bfqd->in_service->entity.st == st) {
			const struct bfq_queue *q = bfqd->in_service;
			unsigned int w = q->entity.weight / q->wr_coeff;

			if (weight && w != weight)
				return true;
			weight = w;
			busy = true;
		}
		classes += busy;
	}
	return classes > 1;
}

/*
 * Would idling for bfqq's next request be worth it (bfq_better_to_idle)?
 * For the disk's throughput (idling_boosts_thr_without_issues) on a disk
 * that does not queue, where the next nearby request is worth the wait;
 * or for service guarantees (idling_needed_for_service_guarantees): a
 * raised queue among others, an asymmetric scenario, or bfqq alone.
 * Every sync queue is taken for sequential and I/O bound (no think-time
 * or seek detection here), and a disk not yet known to queue for one that
 * does not: the models' rotating disk takes one request at a time.
 * Linux also stops idling for throughput while any queue is raised, to
 * serve the raised one sooner; without Linux's injection and preemption
 * details that made a start-up under sequential readers 2.4 times slower
 * here (test_startup_latency_under_sequential_readers), so rqdisk keeps it.
 */
static bool bfq_better_to_idle(const struct bfq_data *bfqd, const struct bfq_queue *bfqq)
{
	bool boosts_thr, needed_for_guarantees;

	if (bfqd->strict_guarantees)
		return true;
	if (!bfqd->slice_idle || !bfqq->sync || bfqq->class == BFQ_CLASS_IDLE)
		return false;
	boosts_thr = bfqd->hw_tag != 1;
	needed_for_guarantees =
		(bfqq->wr_coeff > 1 && (bfqd->wr_busy_queues < bfqd->busy_queues ||
					bfqd->rq_in_driver >= bfqq->dispatched + 4)) ||
		bfqd->busy_queues == 1 || bfq_asymmetric_scenario(bfqd);
	return boosts_thr || needed_for_guarantees;
}

static bool bfq_must_idle(const struct bfq_data *bfqd, const struct bfq_queue *bfqq)
{
	return !bfqq->queued && bfq_better_to_idle(bfqd, bfqq);
}

static bool bfq_budget_timeout(const struct bfq_queue *bfqq, uint64_t now)
{
	return now >= bfqq->budget_timeout;
}

/* Linux's bfq_may_expire_for_budg_timeout: not while idling with most of the budget used. */
static bool bfq_may_expire_for_budg_timeout(const struct bfq_queue *bfqq, uint64_t now)
{
	return (!bfqq->wait_request || bfq_budget_left(bfqq) >= bfqq->entity.budget / 3) &&
	       bfq_budget_timeout(bfqq, now);
}

/*
 * Whether the queue used its time badly (bfq_bfqq_is_slow), and how long
 * it had, in ms: to its idling start when the idle timer ended it.
 */
static bool bfq_is_slow(const struct bfq_data *bfqd, const struct bfq_queue *bfqq,
			bool compensate, uint64_t now, uint64_t *delta_ms)
{
	uint64_t end = compensate ? bfqd->last_idling_start : now;
	uint64_t delta = end > bfqd->last_budget_start ? end - bfqd->last_budget_start : 0;

	if (!bfqq->sync)
		return false;
	if (delta < 1000000) {
		*delta_ms = bfqd->slice_idle / NSEC_PER_MSEC;
		return false;
	}
	*delta_ms = delta / NSEC_PER_MSEC;
	return delta > 20 * NSEC_PER_MSEC && bfqq->entity.service < bfq_max_budget(bfqd) / 2;
}

/* Charge a slow queue for its time, not its sectors (bfq_bfqq_charge_time). */
static void bfq_charge_time(struct bfq_data *bfqd, struct bfq_queue *bfqq, uint64_t time_ms)
{
	struct bfq_entity *e = &bfqq->entity;
	uint64_t timeout_ms = bfqd->timeout / NSEC_PER_MSEC ? bfqd->timeout / NSEC_PER_MSEC : 1;
	uint64_t bounded = time_ms < timeout_ms ? time_ms : timeout_ms;
	int for_time = (int)((uint64_t)bfq_max_budget(bfqd) * bounded / timeout_ms);
	int total = for_time > e->service ? for_time : e->service;

	if (total > e->budget)
		e->budget = total;
	if (total > e->service)
		bfq_entity_served(e, total - e->service);
}

/* The budget after this expiry, from why it expired (__bfq_bfqq_recalc_budget). */
static void bfq_recalc_budget(struct bfq_data *bfqd, struct bfq_queue *bfqq,
			      enum bfqq_expiration reason)
{
	int min_budget = bfq_min_budget(bfqd), max = bfq_max_budget(bfqd);
	int budget = bfqq->wr_coeff == 1 ? bfqq->max_budget : 2 * min_budget;

	if (bfqq->sync && bfqq->wr_coeff == 1) {
		switch (reason) {
		case BFQQE_TOO_IDLE:
			if (bfqq->dispatched) /* the disk was slow, not the process */
				budget = budget * 2 < max ? budget * 2 : max;
			else if (budget > 5 * min_budget)
				budget -= 4 * min_budget;
			else
				budget = min_budget;
			break;
		case BFQQE_BUDGET_TIMEOUT:
			budget = budget * 2 < max ? budget * 2 : max;
			break;
		case BFQQE_BUDGET_EXHAUSTED:
			budget = budget * 4 < max ? budget * 4 : max;
			break;
		case BFQQE_NO_MORE_REQUESTS:
			budget = bfqq->entity.service;
			if (budget < min_budget)
				budget = min_budget;
			break;
		default:
			return;
		}
	} else if (!bfqq->sync) {
		budget = max;
	}
	bfqq->max_budget = budget;
	if (bfqd->budgets_assigned >= BFQ_STATS_MIN_BUDGETS && !bfqd->user_max_budget &&
	    bfqq->max_budget > max)
		bfqq->max_budget = max;
	if (bfqq->next_rq) {
		int charge = bfq_serv_to_charge(bfqq->next_rq, bfqq);

		bfqq->entity.budget = bfqq->max_budget > charge ? bfqq->max_budget : charge;
	}
}

/* bfqq stops being served (bfq_bfqq_expire), for reason. */
static void bfq_expire(struct bfq_data *bfqd, struct bfq_queue *bfqq, bool compensate,
		       enum bfqq_expiration reason, uint64_t now)
{
	struct bfq_entity *e = &bfqq->entity;
	uint64_t delta_ms = 0;
	bool slow = bfq_is_slow(bfqd, bfqq, compensate, now, &delta_ms);

	assert(bfqq == bfqd->in_service);
	if (bfqq->wr_coeff == 1 &&
	    (slow || (reason == BFQQE_BUDGET_TIMEOUT && bfq_budget_left(bfqq) >= e->budget / 3)))
		bfq_charge_time(bfqd, bfqq, delta_ms);
	if (bfqd->low_latency && bfqq->wr_coeff == 1)
		bfqq->last_wr_start_finish = now;
	if (bfqd->low_latency && !bfqq->queued) {
		if (!bfqq->dispatched)
			bfqq->soft_rt_next_start = bfq_softrt_next_start(bfqd, bfqq, now);
		else
			bfqq->softrt_update = true;
	}
	bfq_recalc_budget(bfqd, bfqq, reason);

	bfqd->in_service = NULL;
	bfqd->idle_until = 0;
	bfqq->wait_request = false;
	if (!bfqq->queued) {
		if (!bfqq->dispatched)
			bfqq->budget_timeout = now; /* when it emptied, for weight raising */
		bfq_del_bfqq_busy(bfqd, bfqq, true);
		bfqq->non_blocking_wait_rq =
			reason != BFQQE_BUDGET_TIMEOUT && reason != BFQQE_BUDGET_EXHAUSTED;
	} else {
		bfq_requeue_entity(&bfqd->sd, e);
	}
	bfq_put_if_unused(bfqd, bfqq, now);
}

/* The next queue B-WF2Q+ picks gets the disk and a budget timeout (__bfq_set_in_service_queue). */
static struct bfq_queue *bfq_set_in_service_queue(struct bfq_data *bfqd, uint64_t now)
{
	struct bfq_entity *e = bfq_get_next_entity(&bfqd->sd, now);
	struct bfq_queue *bfqq;
	uint64_t coeff = 1;

	if (!e)
		return NULL;
	bfqq = entity_bfqq(e);
	bfqd->in_service = bfqq;
	bfqd->budgets_assigned = (bfqd->budgets_assigned * 7 + 256) / 8;
	bfqq->fifo_expire = false;
	bfqq->wait_request = false;
	/* a raised queue (not soft real-time) has its raising's share of time too */
	if (bfqq->wr_coeff > 1 && bfqq->wr_cur_max_time != BFQ_WR_RT_MAX_TIME_MS * NSEC_PER_MSEC)
		coeff = bfqq->wr_coeff;
	bfqq->budget_timeout = now + bfqd->timeout * coeff;
	bfqd->last_budget_start = now;
	return bfqq;
}

/* Wait for the in-service queue's next request (bfq_arm_slice_timer). */
static void bfq_arm_slice_timer(struct bfq_data *bfqd, struct bfq_queue *bfqq, uint64_t now)
{
	uint64_t sl = bfqd->slice_idle;

	if (bfqq->wr_coeff > 1 && sl < BFQ_WR_MIN_IDLE_SLICE_MS * NSEC_PER_MSEC)
		sl = BFQ_WR_MIN_IDLE_SLICE_MS * NSEC_PER_MSEC;
	bfqq->wait_request = true;
	bfqd->last_idling_start = now;
	bfqd->idle_until = now + (sl ? sl : 1);
}

/*
 * The queue to dispatch from now, or NULL: idling, or waiting for the
 * in-service queue's requests out to complete (bfq_select_queue).  The
 * idle timer is checked here: its expiry is Linux's bfq_idle_slice_timer.
 */
static struct bfq_queue *bfq_select_queue(struct bfq_data *bfqd, uint64_t now)
{
	struct bfq_queue *bfqq = bfqd->in_service;
	enum bfqq_expiration reason = BFQQE_BUDGET_TIMEOUT;
	bool compensate = false;

	if (!bfqq)
		goto new_queue;
	if (bfqq->wait_request && now >= bfqd->idle_until && !bfqq->queued) {
		compensate = true;
		reason = bfq_budget_timeout(bfqq, now) ? BFQQE_BUDGET_TIMEOUT : BFQQE_TOO_IDLE;
		goto expire;
	}
	if (bfq_may_expire_for_budg_timeout(bfqq, now) && !bfq_must_idle(bfqd, bfqq))
		goto expire;
check_queue:
	if (bfqq->next_rq) {
		if (bfq_serv_to_charge(bfqq->next_rq, bfqq) > bfq_budget_left(bfqq)) {
			reason = BFQQE_BUDGET_EXHAUSTED;
			goto expire;
		}
		bfqq->wait_request = false;
		bfqd->idle_until = 0;
		return bfqq;
	}
	if (bfqq->wait_request || (bfqq->dispatched && bfq_better_to_idle(bfqd, bfqq)))
		return NULL;
	reason = BFQQE_NO_MORE_REQUESTS;
expire:
	bfq_expire(bfqd, bfqq, compensate, reason, now);
	compensate = false;
new_queue:
	bfqq = bfq_set_in_service_queue(bfqd, now);
	if (bfqq)
		goto check_queue;
	return NULL;
}

static void bfq_served(struct bfq_queue *bfqq, int charge)
{
	bfq_entity_served(&bfqq->entity, charge);
	bfqq->service_from_backlogged += (uint64_t)charge;
	if (bfqq->wr_coeff > 1)
		bfqq->service_from_wr += (uint64_t)charge;
}

/* Out to the driver (bfq_dispatch_rq_from_bfqq): charged, removed, maybe the raising ends. */
static struct request *bfq_dispatch_rq_from_bfqq(struct bfq_data *bfqd, struct bfq_queue *bfqq,
						 uint64_t now)
{
	struct request *rq = bfqq->next_rq;

	bfq_served(bfqq, bfq_serv_to_charge(rq, bfqq));
	bfqd->last_position = blk_rq_end_sector(rq);
	bfq_remove_request(bfqd, rq, now);
	bfqq->dispatched++;
	if (!bfqd->rq_in_driver++)
		bfqd->rate_last = now;
	bfq_update_wr_data(bfqd, bfqq, now);
	/* the idle class gets one request at a time while others wait */
	if (bfqd->busy_queues > 1 && bfqq->class == BFQ_CLASS_IDLE)
		bfq_expire(bfqd, bfqq, false, BFQQE_BUDGET_EXHAUSTED, now);
	return rq;
}

/* The core is switching elevators: everything goes, the in-service queue's first. */
static struct request *bfq_drain_request(struct bfq_data *bfqd, uint64_t now)
{
	struct bfq_queue *bfqq = bfqd->in_service;
	struct bfq_service_tree *st;
	struct request *rq;

	for (int c = 0; (!bfqq || !bfqq->queued) && c < BFQ_NR_CLASSES; c++) {
		st = &bfqd->sd.st[c];
		if (!TAILQ_EMPTY(&st->active))
			bfqq = entity_bfqq(TAILQ_FIRST(&st->active));
	}
	if (!bfqq || !bfqq->queued)
		return NULL;
	rq = bfqq->next_rq;
	bfqd->last_position = blk_rq_end_sector(rq);
	bfq_remove_request(bfqd, rq, now);
	if (!bfqq->queued && bfqq != bfqd->in_service)
		bfq_del_bfqq_busy(bfqd, bfqq, false);
	bfq_put_if_unused(bfqd, bfqq, now);
	return rq;
}

static struct request *bfq_dispatch_request(struct elevator_queue *e, uint64_t now)
{
	struct bfq_data *bfqd = e->elevator_data;
	struct bfq_queue *bfqq;

	if (e->draining)
		return bfq_drain_request(bfqd, now);
	if (!bfqd->queued)
		return NULL;
	/* one request at a time, so the disk cannot reorder what was chosen */
	if (bfqd->strict_guarantees && bfqd->rq_in_driver)
		return NULL;
	bfqq = bfq_select_queue(bfqd, now);
	if (!bfqq) {
		if (bfqd->idle_until)
			elv_schedule_dispatch(e, bfqd->idle_until);
		return NULL;
	}
	return bfq_dispatch_rq_from_bfqq(bfqd, bfqq, now);
}

static bool bfq_has_work(const struct elevator_queue *e)
{
	const struct bfq_data *bfqd = e->elevator_data;

	return bfqd->queued > 0;
}

/*
 * bfqq goes from empty to busy (bfq_bfqq_handle_idle_busy_switch): maybe
 * raised, then in B-WF2Q+; it takes the disk from the in-service queue
 * if it is raised above it, of a higher class or weight, or the
 * in-service queue would not idle anyway.
 */
static void bfq_idle_busy_switch(struct bfq_data *bfqd, struct bfq_queue *bfqq, uint64_t now)
{
	struct bfq_queue *in = bfqd->in_service;
	bool interactive = bfqq->just_created ||
			   now > bfqq->budget_timeout + BFQ_WR_MIN_IDLE_TIME_MS * NSEC_PER_MSEC;
	bool soft_rt = !interactive && !bfqq->dispatched &&
		       bfqq->soft_rt_next_start != UINT64_MAX && now >= bfqq->soft_rt_next_start;
	int charge = bfq_serv_to_charge(bfqq->next_rq, bfqq);

	bfqq->just_created = false;
	bfq_update_wr_data(bfqd, bfqq, now);
	bfq_wr_on_arrival(bfqd, bfqq, interactive, soft_rt, now);
	if (bfqq->wr_coeff > 1 && bfqq->max_budget > 2 * bfq_min_budget(bfqd))
		bfqq->max_budget = 2 * bfq_min_budget(bfqd);
	bfqq->entity.budget = bfqq->max_budget > charge ? bfqq->max_budget : charge;
	bfqq->last_idle_bklogged = now;
	bfqq->service_from_backlogged = 0;
	bfq_add_bfqq_busy(bfqd, bfqq);

	if (!in || in == bfqq)
		return;
	if ((bfqq->wr_coeff > 1 && bfqq->wr_coeff > in->wr_coeff) || bfqq->class < in->class ||
	    (bfqq->class == in->class && bfqq->entity.weight > in->entity.weight) ||
	    !bfq_better_to_idle(bfqd, in))
		bfq_expire(bfqd, in, false, BFQQE_PREEMPTED, now);
}

static void bfq_add_request(struct elevator_queue *e, struct request *rq)
{
	struct bfq_data *bfqd = e->elevator_data;
	uint64_t now = blk_clock_now(e->clock);
	struct bfq_queue *bfqq;

	bfq_reap_unused(bfqd, now);
	bfqq = bfq_get_queue(bfqd, rq);
	rq->elv_priv[0] = bfqq;
	elv_rb_add(&bfqq->sort_list, rq);
	rq->fifo_time = now + bfqd->fifo_expire[rq_is_sync(rq)];
	TAILQ_INSERT_TAIL(&bfqq->fifo, rq, queuelist);
	bfqq->next_rq = bfq_choose_req(bfqd, bfqq->next_rq, rq);
	bfqq->queued++;
	bfqd->queued++;
	if (!bfqq->busy)
		bfq_idle_busy_switch(bfqd, bfqq, now);
	else if (bfqq == bfqd->in_service && bfqq->wait_request &&
		 bfq_budget_timeout(bfqq, now)) /* bfq_rq_enqueued: no point waiting on */
		bfq_expire(bfqd, bfqq, false, BFQQE_BUDGET_TIMEOUT, now);
}

/* Sectors done per unit of busy time, over at least a second and 32 requests (peak rate). */
static void bfq_update_peak_rate(struct bfq_data *bfqd, const struct request *rq, uint64_t now)
{
	uint64_t rate;

	bfqd->rate_busy_ns += now - bfqd->rate_last;
	bfqd->rate_last = now;
	bfqd->rate_sectors += blk_rq_sectors(rq);
	bfqd->rate_samples++;
	if (bfqd->rate_busy_ns < BFQ_RATE_REF_INTERVAL_NS ||
	    bfqd->rate_samples < BFQ_RATE_MIN_SAMPLES)
		return;
	rate = (bfqd->rate_sectors << BFQ_RATE_SHIFT) / (bfqd->rate_busy_ns / 1000);
	bfqd->peak_rate = bfqd->peak_rate ? (7 * bfqd->peak_rate + rate) / 8 : rate;
	if (!bfqd->peak_rate)
		bfqd->peak_rate = 1;
	if (bfqd->timeout / 1000 > (UINT64_MAX >> 1) / bfqd->peak_rate)
		rate = BFQ_MAX_BUDGET_LIMIT;
	else
		rate = (bfqd->peak_rate * (bfqd->timeout / 1000)) >> BFQ_RATE_SHIFT;
	if (rate > BFQ_MAX_BUDGET_LIMIT)
		rate = BFQ_MAX_BUDGET_LIMIT;
	bfqd->auto_max_budget = rate < 32 ? 32 : (int)rate;
	bfqd->rate_busy_ns = bfqd->rate_sectors = 0;
	bfqd->rate_samples = 0;
}

/* A request completed (bfq_completed_request): the in-service queue idles, expires or goes on. */
static void bfq_completed(struct elevator_queue *e, struct request *rq)
{
	struct bfq_data *bfqd = e->elevator_data;
	struct bfq_queue *bfqq = rq_bfqq(rq);
	uint64_t now = blk_clock_now(e->clock);

	assert(bfqq->dispatched && bfqd->rq_in_driver);
	bfq_update_hw_tag(bfqd);
	bfqq->dispatched--;
	bfqd->rq_in_driver--;
	bfq_update_peak_rate(bfqd, rq, now);
	if (bfqq->softrt_update && !bfqq->dispatched && !bfqq->queued) {
		bfqq->soft_rt_next_start = bfq_softrt_next_start(bfqd, bfqq, now);
		bfqq->softrt_update = false;
	}
	if (bfqq == bfqd->in_service) {
		if (bfq_must_idle(bfqd, bfqq)) {
			if (!bfqq->dispatched && !bfqq->wait_request)
				bfq_arm_slice_timer(bfqd, bfqq, now);
		} else if (bfq_may_expire_for_budg_timeout(bfqq, now)) {
			bfq_expire(bfqd, bfqq, false, BFQQE_BUDGET_TIMEOUT, now);
		} else if (!bfqq->queued &&
			   (!bfqq->dispatched || !bfq_better_to_idle(bfqd, bfqq))) {
			bfq_expire(bfqd, bfqq, false, BFQQE_NO_MORE_REQUESTS, now);
		}
	}
	bfq_put_if_unused(bfqd, bfqq, now);
}

/* Front merges, within the queue the bio would join. */
static enum elv_merge bfq_find_merge(struct elevator_queue *e, const struct bio *bio,
				     struct request **rq)
{
	struct bfq_queue *bfqq =
		bfq_find_queue(e->elevator_data, bio->bi_pid, bfq_bio_sync(bio), bio->bi_ioprio);

	return rq_find_front_merge(bfqq ? &bfqq->sort_list : NULL, bio, rq);
}

static void bfq_request_merged(struct elevator_queue *e, struct request *rq, enum elv_merge type)
{
	struct bfq_queue *bfqq = rq_bfqq(rq);

	if (type == ELEVATOR_FRONT_MERGE)
		bfqq->next_rq = bfq_choose_req(e->elevator_data, bfqq->next_rq, rq);
}

/* next joins rq; a queue it empties leaves the scheduler unless in service (bfq_remove_request). */
static void bfq_requests_merged(struct elevator_queue *e, struct request *rq, struct request *next)
{
	struct bfq_data *bfqd = e->elevator_data;
	struct bfq_queue *bfqq = rq_bfqq(next);
	uint64_t now = blk_clock_now(e->clock);

	if (rq_bfqq(rq) == bfqq)
		elv_fifo_merge(&bfqq->fifo, rq, next);
	bfq_remove_request(bfqd, next, now);
	if (!bfqq->queued && bfqq->busy && bfqq != bfqd->in_service)
		bfq_del_bfqq_busy(bfqd, bfqq, false);
	bfq_put_if_unused(bfqd, bfqq, now);
}

/* ---- tunables ---- */

static int bfq_weights_show(const struct elevator_queue *e, char *buf, size_t len)
{
	const struct bfq_data *bfqd = e->elevator_data;
	size_t n = 0;

	if (len)
		buf[0] = '\0';
	for (unsigned int i = 0; i < bfqd->nr_weights && n < len; i++) {
		int w = snprintf(buf + n, len - n, "%d %u\n", (int)bfqd->weights[i].pid,
				 bfqd->weights[i].weight);

		if (w < 0)
			return -EINVAL;
		n += (size_t)w;
	}
	return (int)(n < len ? n : len);
}

/* A decimal number in [min, max] at *p, moving past it; false if none. */
static bool bfq_parse_num(const char **p, long long min, long long max, long long *out)
{
	long long v = 0;
	const char *s = *p;

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (*s - '0');
		if (v > max)
			return false;
	}
	if (v < min)
		return false;
	*p = s;
	*out = v;
	return true;
}

/* "PID WEIGHT": WEIGHT 1..1000 sets, 0 or "default" removes; anything else changes nothing. */
static int bfq_weights_parse(const char *buf, pid_t *pid, unsigned int *weight)
{
	const char *p = buf;
	long long v;

	if (!bfq_parse_num(&p, 1, INT_MAX, &v) || (*p != ' ' && *p != '\t'))
		return -EINVAL;
	*pid = (pid_t)v;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!strncmp(p, "default", 7)) {
		p += 7;
		v = 0;
	} else if (!bfq_parse_num(&p, 0, BFQ_MAX_WEIGHT, &v)) {
		return -EINVAL;
	}
	if (*p == '\n')
		p++;
	if (*p)
		return -EINVAL;
	*weight = (unsigned int)v;
	return 0;
}

static int bfq_weights_store(struct elevator_queue *e, const char *buf)
{
	struct bfq_data *bfqd = e->elevator_data;
	struct bfq_weight *w, *grown;
	struct bfq_queue *bfqq;
	unsigned int weight;
	pid_t pid;

	if (bfq_weights_parse(buf, &pid, &weight))
		return -EINVAL;
	w = bfq_weight_find(bfqd, pid);
	if (!weight && w) { /* the others keep their order: the file lists them as set */
		memmove(w, w + 1, (size_t)(bfqd->weights + --bfqd->nr_weights - w) * sizeof(*w));
	} else if (weight && w) {
		w->weight = weight;
	} else if (weight) {
		if (bfqd->nr_weights >= BFQ_MAX_WEIGHTS)
			return -EINVAL;
		grown = realloc(bfqd->weights, (bfqd->nr_weights + 1) * sizeof(*grown));
		if (!grown)
			return -EINVAL;
		bfqd->weights = grown;
		grown[bfqd->nr_weights++] = (struct bfq_weight){ pid, weight };
	}
	bfqq = bfq_find_queue(bfqd, pid, true, 0);
	if (bfqq)
		bfq_update_weight(bfqd, bfqq);
	return 0;
}

static long long bfq_max_budget_get(const struct elevator_queue *e)
{
	const struct bfq_data *bfqd = e->elevator_data;

	return bfqd->user_max_budget;
}

static void bfq_max_budget_set(struct elevator_queue *e, long long v)
{
	struct bfq_data *bfqd = e->elevator_data;

	bfqd->user_max_budget = (int)v;
}

/* Linux's slice_idle_us: the same idling, in microseconds. */
static long long bfq_slice_idle_us_get(const struct elevator_queue *e)
{
	const struct bfq_data *bfqd = e->elevator_data;

	return (long long)(bfqd->slice_idle / 1000);
}

static void bfq_slice_idle_us_set(struct elevator_queue *e, long long v)
{
	struct bfq_data *bfqd = e->elevator_data;

	bfqd->slice_idle = (uint64_t)v * 1000;
}

ELV_TUNABLE(bfq, fifo_expire_sync, struct bfq_data, fifo_expire[BFQ_SYNC], 1, INT_MAX,
	    NSEC_PER_MSEC);
ELV_TUNABLE(bfq, fifo_expire_async, struct bfq_data, fifo_expire[BFQ_ASYNC], 1, INT_MAX,
	    NSEC_PER_MSEC);
ELV_TUNABLE(bfq, back_seek_max, struct bfq_data, back_max, 0, INT_MAX, 1);
ELV_TUNABLE(bfq, back_seek_penalty, struct bfq_data, back_penalty, 1, INT_MAX, 1);
ELV_TUNABLE(bfq, slice_idle, struct bfq_data, slice_idle, 0, INT_MAX, NSEC_PER_MSEC);
ELV_TUNABLE(bfq, timeout_sync, struct bfq_data, timeout, 1, INT_MAX, NSEC_PER_MSEC);
ELV_TUNABLE(bfq, strict_guarantees, struct bfq_data, strict_guarantees, 0, 1, 1);
ELV_TUNABLE(bfq, low_latency, struct bfq_data, low_latency, 0, 1, 1);
enum { bfq_max_budget_min = 0, bfq_max_budget_max = BFQ_MAX_BUDGET_LIMIT };
enum { bfq_slice_idle_us_min = 0, bfq_slice_idle_us_max = INT_MAX };

static const struct elv_tunable bfq_tunables[] = {
	ELV_ATTR(bfq, fifo_expire_sync),
	ELV_ATTR(bfq, fifo_expire_async),
	ELV_ATTR(bfq, back_seek_max),
	ELV_ATTR(bfq, back_seek_penalty),
	ELV_ATTR(bfq, slice_idle),
	ELV_ATTR(bfq, slice_idle_us),
	ELV_ATTR(bfq, max_budget),
	ELV_ATTR(bfq, timeout_sync),
	ELV_ATTR(bfq, strict_guarantees),
	ELV_ATTR(bfq, low_latency),
	ELV_TEXT_ATTR(bfq, weights),
	{ 0 },
};

static struct elevator_type elevator_bfq = {
	.elevator_name = "bfq",
	.elevator_description = "budget fair queueing: a share of the sectors per process",
	.init_queue = bfq_init_queue,
	.exit_queue = bfq_exit_queue,
	.add_request = bfq_add_request,
	.dispatch_request = bfq_dispatch_request,
	.has_work = bfq_has_work,
	.find_merge = bfq_find_merge,
	.request_merged = bfq_request_merged,
	.requests_merged = bfq_requests_merged,
	.completed = bfq_completed,
	.tunables = bfq_tunables,
};

ELEVATOR_REGISTER(bfq, elevator_bfq)
