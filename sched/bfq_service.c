/* SPDX-License-Identifier: BSD-3-Clause */
/* bfq_service.c - BFQ's service: the queue on the disk, its budget, idling for it, its expiry. */
#include <assert.h>
#include <stdint.h>

#include "bfq_impl.h"

/* ---- budgets ---- */

/* The largest budget a queue may get now (bfq_max_budget). */
int bfq_max_budget(const struct bfq_data *bfqd)
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
int bfq_serv_to_charge(const struct request *rq, const struct bfq_queue *bfqq)
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
	bfq_activate_leaf(&bfqq->entity, bfqq->class, bfqq->non_blocking_wait_rq);
	bfqq->non_blocking_wait_rq = false;
}

void bfq_del_bfqq_busy(struct bfq_data *bfqd, struct bfq_queue *bfqq, bool expiration)
{
	bfqq->busy = false;
	bfqd->busy_queues--;
	bfqd->wr_busy_queues -= bfqq->wr_coeff > 1;
	bfq_deactivate_leaf(&bfqq->entity);
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
 * raised), of more than one class, or in more than one group (the root's
 * counting as one).  Only then does another queue's service while
 * bfqq's next request is on its way break bfqq's share.
 */
static bool bfq_asymmetric_scenario(const struct bfq_data *bfqd)
{
	struct bfq_data *d = (struct bfq_data *)bfqd;
	unsigned int weight = 0, groups = 0;
	unsigned int classes = 0;

	for (struct bfq_sched_data *sd = bfq_sd_next(d, NULL); sd; sd = bfq_sd_next(d, sd)) {
		bool group_busy = false;

		for (int c = 0; c < BFQ_NR_CLASSES; c++) {
			const struct bfq_service_tree *st = &sd->st[c];
			const struct bfq_entity *en;

			TAILQ_FOREACH(en, &st->active, link) {
				const struct bfq_queue *q;
				unsigned int w;

				if (en->my_sched_data)
					continue; /* a group: its queues are counted in its own trees */
				q = entity_bfqq((struct bfq_entity *)en);
				w = en->weight / q->wr_coeff;
				if (weight && w != weight)
					return true;
				weight = w;
				classes |= 1u << c;
				group_busy = true;
			}
			if (bfqd->in_service && bfqd->in_service->entity.st == st) {
				const struct bfq_queue *q = bfqd->in_service;
				unsigned int w = q->entity.weight / q->wr_coeff;

				if (weight && w != weight)
					return true;
				weight = w;
				classes |= 1u << c;
				group_busy = true;
			}
		}
		groups += group_busy;
	}
	return groups > 1 || __builtin_popcount(classes) > 1;
}

/*
 * Would idling for bfqq's next request be worth it (bfq_better_to_idle)?
 * For the disk's throughput (idling_boosts_thr_without_issues): on a
 * rotating disk that does not queue, where the next nearby request is
 * worth the wait, and for a sequential queue on any disk but flash that
 * queues; but only for a process whose think time is short: one that
 * thinks longer than slice_idle / 2 would leave the disk idle for nothing.
 * Or for service guarantees (idling_needed_for_service_guarantees): a
 * raised queue among others, an asymmetric scenario, or bfqq alone.  A
 * disk not yet known to queue is taken for one that does not: the models'
 * rotating disk takes one request at a time.  Linux also stops idling for
 * throughput while any queue is raised, to serve the raised one sooner;
 * rqdisk keeps idling: with the peak rate counted wrong that rule made a
 * start-up under sequential readers 3.4 times slower than alone; with it
 * right the start-up tests take the same time with the rule as without,
 * and test_raised_queue_idles_longer (two raised queues) pins the idling.
 */
bool bfq_idling_boosts_thr(const struct bfq_data *bfqd, const struct bfq_queue *bfqq)
{
	bool sequential = !bfq_seeky(bfqq);

	if (!bfqq->has_short_ttime || bfqq->in_large_burst)
		return false;
	return bfq_rot_without_queueing(bfqd) ||
	       ((!blk_queue_nonrot(bfqd->queue) || bfqd->hw_tag != 1) && sequential);
}

static bool bfq_better_to_idle(const struct bfq_data *bfqd, const struct bfq_queue *bfqq)
{
	bool boosts_thr, needed_for_guarantees;

	if (bfqd->strict_guarantees)
		return true;
	if (!bfqd->slice_idle || !bfqq->sync || bfqq->class == BFQ_CLASS_IDLE)
		return false;
	boosts_thr = bfq_idling_boosts_thr(bfqd, bfqq);
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

bool bfq_budget_timeout(const struct bfq_queue *bfqq, uint64_t now)
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
		bfq_leaf_served(e, total - e->service);
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
void bfq_expire(struct bfq_data *bfqd, struct bfq_queue *bfqq, bool compensate,
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
	bfq_coop_expired(bfqq);

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
		bfq_requeue_leaf(e);
	}
	bfq_put_if_unused(bfqd, bfqq, now);
}

/* The next queue B-WF2Q+ picks gets the disk and a budget timeout (__bfq_set_in_service_queue). */
static struct bfq_queue *bfq_set_in_service_queue(struct bfq_data *bfqd, uint64_t now)
{
	struct bfq_entity *e = bfq_get_next_leaf(&bfqd->sd, now);
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

	/* a seeky queue's next request is as far as another's: wait only a little for it */
	if (bfq_seeky(bfqq) && bfqq->wr_coeff == 1 && !bfq_asymmetric_scenario(bfqd) &&
	    sl > BFQ_MIN_TT_MS * NSEC_PER_MSEC)
		sl = BFQ_MIN_TT_MS * NSEC_PER_MSEC;
	else if (bfqq->wr_coeff > 1 && sl < BFQ_WR_MIN_IDLE_SLICE_MS * NSEC_PER_MSEC)
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
	/* idling for it, or for its requests out: another queue's may go meanwhile */
	if (bfqq->wait_request || (bfqq->dispatched && bfq_better_to_idle(bfqd, bfqq)))
		return bfq_inject_queue(bfqd, bfqq, now);
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
	bfq_leaf_served(&bfqq->entity, charge);
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
	if (bfqq == bfqd->in_service && bfqd->wait_dispatch) {
		bfqd->wait_dispatch = false;
		bfqd->waited_rq = rq;
	}
	bfq_remove_request(bfqd, rq, now);
	bfqq->dispatched++;
	if (!bfqd->rq_in_driver++)
		bfqd->rate_last = now;
	if (bfqq != bfqd->in_service) {
		/* injected: an emptied queue leaves, its budget and service void */
		if (!bfqq->queued) {
			bfq_del_bfqq_busy(bfqd, bfqq, false);
			bfqq->entity.budget = bfqq->entity.service = 0;
		}
		return rq;
	}
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
	struct bfq_entity *en;
	struct request *rq;

	for (struct bfq_sched_data *sd = bfq_sd_next(bfqd, NULL); sd && (!bfqq || !bfqq->queued);
	     sd = bfq_sd_next(bfqd, sd))
		for (int c = 0; (!bfqq || !bfqq->queued) && c < BFQ_NR_CLASSES; c++)
			TAILQ_FOREACH(en, &sd->st[c].active, link)
				if (!en->my_sched_data) {
					bfqq = entity_bfqq(en);
					break;
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

struct request *bfq_dispatch_request(struct elevator_queue *e, uint64_t now)
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

bool bfq_has_work(const struct elevator_queue *e)
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
void bfq_idle_busy_switch(struct bfq_data *bfqd, struct bfq_queue *bfqq, uint64_t now)
{
	struct bfq_queue *in = bfqd->in_service;
	bool interactive = !bfqq->in_large_burst &&
			   (bfqq->just_created ||
			    now > bfqq->budget_timeout + BFQ_WR_MIN_IDLE_TIME_MS * NSEC_PER_MSEC);
	bool soft_rt = !interactive && !bfqq->in_large_burst && !bfqq->dispatched &&
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

/* Sectors done per unit of busy time, over at least a second and 32 requests (peak rate). */
static void bfq_update_peak_rate(struct bfq_data *bfqd, const struct request *rq, uint64_t now)
{
	uint64_t rate;

	bfqd->rate_busy_ns += now - bfqd->rate_last;
	bfqd->rate_last = now;
	/* what was issued: by now the completion has counted the request down to 0 */
	bfqd->rate_sectors += rq->issue_nr_sectors;
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
void bfq_completed(struct elevator_queue *e, struct request *rq)
{
	struct bfq_data *bfqd = e->elevator_data;
	struct bfq_queue *bfqq = rq_bfqq(rq);
	uint64_t now = blk_clock_now(e->clock);

	assert(bfqq->dispatched && bfqd->rq_in_driver);
	bfq_update_hw_tag(bfqd);
	if (rq == bfqd->waited_rq)
		bfq_update_inject_limit(bfqd, bfqq, now);
	bfqd->last_completed_rq_bfqq = bfqq;
	bfqd->last_completion = now;
	bfqq->dispatched--;
	bfqd->rq_in_driver--;
	bfqq->ttime_last_end = now;
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
