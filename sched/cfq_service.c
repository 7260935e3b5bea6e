/* SPDX-License-Identifier: BSD-3-Clause */
/* cfq_service.c - CFQ's service: the round robin, the active queue's slice, idling, preemption. */
#include "cfq_impl.h"

/* Served before: real time, then best effort, then idle (2.6.23's cfq_service_tree_add). */
static int cfq_class_rank(const struct cfq_queue *cfqq)
{
	return cfq_class_rt(cfqq) ? 0 : cfq_class_idle(cfqq) ? 2 : 1;
}

/* Onto the round robin at the tail of its class, or at its head when front. */
static void cfq_rr_insert(struct cfq_data *cfqd, struct cfq_queue *cfqq, bool front)
{
	int rank = cfq_class_rank(cfqq);
	struct cfq_queue *pos;

	TAILQ_FOREACH(pos, &cfqd->rr_list, rr)
		if (cfq_class_rank(pos) > rank || (front && cfq_class_rank(pos) == rank))
			break;
	if (pos)
		TAILQ_INSERT_BEFORE(pos, cfqq, rr);
	else
		TAILQ_INSERT_TAIL(&cfqd->rr_list, cfqq, rr);
}

void cfq_add_rr(struct cfq_data *cfqd, struct cfq_queue *cfqq)
{
	struct cfq_group *g = cfqq->group;

	/* a group getting busy does not get back the time it was idle (cfq_group_service_tree_add) */
	if (!g->busy++ && (!cfqd->active || cfqd->active->group != g) &&
	    g->vdisktime < cfqd->min_vdisktime)
		g->vdisktime = cfqd->min_vdisktime;
	cfqq->on_rr = true;
	cfqd->busy_queues++;
	cfq_rr_insert(cfqd, cfqq, false);
}

void cfq_del_rr(struct cfq_data *cfqd, struct cfq_queue *cfqq)
{
	cfqq->on_rr = false;
	cfqq->group->busy--;
	cfqd->busy_queues--;
	TAILQ_REMOVE(&cfqd->rr_list, cfqq, rr);
}

/*
 * The queue to serve next: the head of the round robin, unless it is of
 * the idle class and another queue's request completed less than
 * CFQ_IDLE_GRACE_MS ago (2.6.23's cfq_get_next_queue; the caller asks to
 * be run again when the grace ends, as cfq_idle_class_timer did).
 */
static struct cfq_queue *cfq_get_next_queue(struct cfq_data *cfqd, uint64_t now)
{
	struct cfq_queue *cfqq = TAILQ_FIRST(&cfqd->rr_list), *pos;

	/* the group that used least time for its weight first (cfq_get_next_cfqg) */
	TAILQ_FOREACH(pos, &cfqd->rr_list, rr)
		if (pos->group->vdisktime < cfqq->group->vdisktime)
			cfqq = pos;
	if (cfqq && cfqq->group->vdisktime > cfqd->min_vdisktime)
		cfqd->min_vdisktime = cfqq->group->vdisktime;

	if (cfqq && cfq_class_idle(cfqq) && now < cfqd->idle_class_after)
		return NULL;
	return cfqq;
}

/* A new slice for the next queue, if any. */
static struct cfq_queue *cfq_set_active_queue(struct cfq_data *cfqd, uint64_t now)
{
	struct cfq_queue *cfqq = cfq_get_next_queue(cfqd, now);

	cfqd->active = cfqq;
	cfqd->active_since = now;
	cfqd->dispatch_slice = 0;
	if (cfqq) {
		cfqq->slice_new = true;
		cfqq->fifo_expired = false;
	}
	return cfqq;
}

/* The active queue's slice is over: to the back of the round robin, or gone when idle. */
static void cfq_slice_expired(struct cfq_data *cfqd, struct cfq_queue *cfqq)
{
	cfq_group_served(cfqd, cfqq);
	cfqd->active = NULL;
	cfqd->idle_until = 0;
	if (cfqq->on_rr) {
		TAILQ_REMOVE(&cfqd->rr_list, cfqq, rr);
		cfq_rr_insert(cfqd, cfqq, false);
	}
	cfq_put_if_unused(cfqd, cfqq);
}

/* cfqq takes the disk from the active queue now, and goes first in its class. */
static void cfq_preempt_queue(struct cfq_data *cfqd, struct cfq_queue *cfqq)
{
	cfq_slice_expired(cfqd, cfqd->active);
	TAILQ_REMOVE(&cfqd->rr_list, cfqq, rr);
	cfq_rr_insert(cfqd, cfqq, true);
}

/* A slice runs from its first completion: the disk finishing others' work is not charged. */
static bool cfq_slice_used(const struct cfq_queue *cfqq, uint64_t now)
{
	return !cfqq->slice_new && now >= cfqq->slice_end;
}

/*
 * Whether cfqq's new request rq takes the disk from the active queue, as
 * 2.6.23's cfq_should_preempt: when the active slice is over, never for
 * an idle-class queue, always from an idle-class one, and a sync request
 * from an async queue.
 */
static bool cfq_should_preempt(const struct cfq_data *cfqd, const struct cfq_queue *cfqq,
			       const struct request *rq, uint64_t now)
{
	const struct cfq_queue *active = cfqd->active;

	if (cfq_slice_used(active, now))
		return true;
	if (cfq_class_idle(cfqq))
		return false;
	if (cfq_class_idle(active))
		return true;
	return rq_is_sync(rq) && !active->sync;
}

/*
 * What rq means for another queue owning the disk: it may preempt it, and
 * an async request from the process being idled for says its next sync
 * request is not coming soon.
 */
void cfq_rq_enqueued(struct cfq_data *cfqd, struct cfq_queue *cfqq, struct request *rq,
		     uint64_t now)
{
	struct cfq_queue *active = cfqd->active;

	if (!active || active == cfqq)
		return;
	if (cfq_should_preempt(cfqd, cfqq, rq, now))
		cfq_preempt_queue(cfqd, cfqq);
	else if (!rq_is_sync(rq) && cfqd->idle_until && active->pid == rq->pid)
		cfq_slice_expired(cfqd, active);
}

/*
 * A sync queue follows its process's priority, which its newest request
 * carries (2.6's prio_changed, seen at insert): a queue waiting its turn
 * moves to its new class.
 */
void cfq_update_prio(struct cfq_data *cfqd, struct cfq_queue *cfqq, unsigned short ioprio)
{
	struct cfq_queue probe;

	cfq_init_prio_data(&probe, ioprio);
	if (!cfqq->sync || cfqq == &cfqd->oom_queue ||
	    (probe.ioprio_class == cfqq->ioprio_class && probe.ioprio == cfqq->ioprio))
		return;
	cfqq->ioprio_class = probe.ioprio_class;
	cfqq->ioprio = probe.ioprio;
	if (cfqq->on_rr && cfqq != cfqd->active) {
		TAILQ_REMOVE(&cfqd->rr_list, cfqq, rr);
		cfq_rr_insert(cfqd, cfqq, false);
	}
}

/*
 * The slice of a queue at this level (2.6's cfq_prio_slice): the base
 * slice, a fifth of it more for each level above the normal 4, a fifth
 * less for each below: 180 ms at level 0 to 40 ms at 7 for sync queues.
 */
static uint64_t cfq_prio_slice(const struct cfq_data *cfqd, bool sync, int level)
{
	int64_t base = (int64_t)cfqd->slice[sync];

	return (uint64_t)(base + base / CFQ_SLICE_SCALE * (IOPRIO_BE_NORM - level));
}

/* An async queue's requests per slice (2.6's cfq_prio_to_maxrq): 16 at level 4. */
static unsigned long long cfq_prio_to_maxrq(const struct cfq_data *cfqd,
					    const struct cfq_queue *cfqq)
{
	unsigned long long base = (unsigned long long)cfqd->slice_async_rq;

	return 2 * (base + base * (IOPRIO_NR_LEVELS - 1 - cfqq->ioprio));
}

/*
 * The queue to dispatch from: the active one while its slice lasts and it
 * has requests; NULL while it idles or waits for its requests in the
 * driver to complete (the completion may start the idling); else the next.
 */
struct cfq_queue *cfq_select_queue(struct cfq_data *cfqd, uint64_t now)
{
	struct cfq_queue *cfqq = cfqd->active;

	if (cfqq && !cfq_slice_used(cfqq, now)) {
		if (cfqq->queued) {
			cfqd->idle_until = 0;
			return cfqq;
		}
		if (cfqd->idle_until > now)
			return NULL;
		if (cfqd->idle_until)
			cfq_idle_failed(cfqd, cfqq);
		if (!cfqd->idle_until && cfqq->dispatched && cfq_may_idle(cfqd, cfqq))
			return NULL;
	}
	if (cfqq)
		cfq_slice_expired(cfqd, cfqq);
	return cfq_set_active_queue(cfqd, now);
}

/*
 * Hold the active queue back: quantum reached while others wait, or async
 * while sync is out.  An idle-class queue's quantum is one, and alone it
 * has at most CFQ_IDLE_MAX_OUT_ALONE out (2.6's cfq_dispatch_requests).
 */
bool cfq_must_wait(const struct cfq_data *cfqd, const struct cfq_queue *cfqq)
{
	unsigned int max = cfq_class_idle(cfqq) ? 1 : (unsigned int)cfqd->quantum;

	if (cfqq->dispatched >= max && cfqd->busy_queues > 1)
		return true;
	if (cfq_class_idle(cfqq) && cfqq->dispatched >= CFQ_IDLE_MAX_OUT_ALONE)
		return true;
	return !cfqq->sync && cfqd->sync_flight;
}

/*
 * If others wait, an async queue's slice also ends on its request budget,
 * and an idle-class queue's after each request (2.6's
 * __cfq_dispatch_requests: "idle queue always expire after 1 dispatch round").
 */
void cfq_check_async_budget(struct cfq_data *cfqd, struct cfq_queue *cfqq)
{
	if (cfqd->busy_queues <= cfqq->on_rr)
		return;
	if (cfq_class_idle(cfqq) ||
	    (!cfqq->sync && cfqd->dispatch_slice >= cfq_prio_to_maxrq(cfqd, cfqq)))
		cfq_slice_expired(cfqd, cfqq);
}

/* Wait for the process's next request, as long as slice_idle and the slice allow. */
static void cfq_arm_idle(struct cfq_data *cfqd, struct cfq_queue *cfqq, uint64_t now)
{
	uint64_t until = now + cfqd->slice_idle;

	/* with requests still in the driver the disk is not idle yet */
	if (!cfq_may_idle(cfqd, cfqq) || cfqd->rq_in_driver)
		return;
	cfqd->idle_until = until < cfqq->slice_end ? until : cfqq->slice_end;
}

/* One of the active queue's requests completed: start its slice, end it, or idle. */
void cfq_active_completed(struct cfq_data *cfqd, struct cfq_queue *cfqq, uint64_t now)
{
	if (cfqq->slice_new) {
		cfqq->slice_new = false;
		cfqq->slice_end = now + cfq_prio_slice(cfqd, cfqq->sync, cfqq->ioprio);
	}
	if (cfq_slice_used(cfqq, now))
		cfq_slice_expired(cfqd, cfqq);
	else if (!cfqq->queued)
		cfq_arm_idle(cfqd, cfqq, now);
}
