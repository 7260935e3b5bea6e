/* SPDX-License-Identifier: BSD-3-Clause */
/* bfq_wf2q.c - B-WF2Q+, BFQ's scheduler over its queues: virtual times, eligibility, classes. */

/*
 * After Linux's block/bfq-wf2q.c, over two levels (bfq.h).  Each class has its
 * own virtual clock, advanced by the service given divided by the sum of
 * the weights it shares (wsum).  An entity that gets busy starts at the
 * clock, or at its old finish if that is still ahead (it does not gain by
 * going idle for a moment); its finish is its start plus its budget over
 * its weight.  The next one served is, of the eligible ones (start not
 * after the clock), the one that finishes first; the clock jumps to the
 * smallest start when none is eligible.  An entity that empties with its
 * finish still ahead waits on the idle list, its weight still counted,
 * until the clock passes its finish.
 */
#include <assert.h>

#include "bfq.h"

static uint64_t bfq_delta(uint64_t service, unsigned int weight)
{
	return (service << BFQ_SERVICE_SHIFT) / (weight ? weight : 1);
}

static void bfq_calc_finish(struct bfq_entity *e, uint64_t service)
{
	e->finish = e->start + bfq_delta(service, e->weight);
}

void bfq_sched_init(struct bfq_sched_data *sd)
{
	for (int i = 0; i < BFQ_NR_CLASSES; i++) {
		TAILQ_INIT(&sd->st[i].active);
		TAILQ_INIT(&sd->st[i].idle);
		sd->st[i].vtime = 0;
		sd->st[i].wsum = 0;
	}
	sd->in_service = NULL;
}

static void bfq_active_insert(struct bfq_service_tree *st, struct bfq_entity *e)
{
	e->st = st;
	e->on_active = true;
	TAILQ_INSERT_TAIL(&st->active, e, link);
}

static void bfq_active_extract(struct bfq_entity *e)
{
	TAILQ_REMOVE(&e->st->active, e, link);
	e->on_active = false;
}

static void bfq_idle_extract(struct bfq_entity *e)
{
	TAILQ_REMOVE(&e->st->idle, e, link);
	e->on_idle = false;
}

/* Its weight no longer shares the class's service (bfq_forget_entity). */
static void bfq_wsum_drop(struct bfq_entity *e)
{
	assert(e->in_wsum && e->st->wsum >= e->weight);
	e->st->wsum -= e->weight;
	e->in_wsum = false;
}

void bfq_forget_entity(struct bfq_entity *e)
{
	if (!e->on_idle)
		return;
	bfq_idle_extract(e);
	bfq_wsum_drop(e);
}

/*
 * Idle entities whose finish the clock has passed are forgotten
 * (bfq_forget_idle).  With nothing active or in service the class is
 * quiet: the clock moves to the last idle finish and all are forgotten.
 */
static void bfq_forget_idle(struct bfq_service_tree *st, bool class_in_service)
{
	struct bfq_entity *e, *tmp;

	if (TAILQ_EMPTY(&st->active) && !class_in_service)
		TAILQ_FOREACH(e, &st->idle, link)
			if (e->finish > st->vtime)
				st->vtime = e->finish;
	TAILQ_FOREACH_SAFE(e, &st->idle, link, tmp)
		if (e->finish <= st->vtime)
			bfq_forget_entity(e);
}

/*
 * e gets busy (__bfq_activate_entity): it starts at the clock, or at its
 * finish when that is still ahead (it was on the idle list).  One that
 * emptied without blocking (non_blocking) keeps its place even when the
 * clock has passed its finish: Linux's back-shifted start.
 */
void bfq_activate_entity(struct bfq_sched_data *sd, struct bfq_entity *e, int class,
			 bool non_blocking)
{
	struct bfq_service_tree *st = &sd->st[class];
	bool backshifted = false;

	assert(!e->on_active && !e->in_service);
	if (e->on_idle && e->st != st)
		bfq_forget_entity(e); /* its class changed: a fresh start in the new one */
	if (e->on_idle) {
		bfq_idle_extract(e);
		e->start = e->finish > st->vtime ? e->finish : st->vtime;
	} else {
		backshifted = non_blocking && e->finish && st->vtime > e->finish;
		e->start = backshifted ? e->finish : st->vtime;
		e->st = st;
		st->wsum += e->weight;
		e->in_wsum = true;
	}
	bfq_calc_finish(e, (uint64_t)e->budget);
	if (backshifted && st->vtime > e->finish) {
		uint64_t d = st->vtime - e->finish;

		e->start += d;
		e->finish += d;
	}
	bfq_active_insert(st, e);
}

/* The in-service e goes back with requests left: it starts where its service took it. */
void bfq_requeue_entity(struct bfq_sched_data *sd, struct bfq_entity *e)
{
	assert(e->in_service && sd->in_service == e);
	bfq_calc_finish(e, (uint64_t)e->service);
	e->start = e->finish;
	bfq_calc_finish(e, (uint64_t)e->budget);
	e->in_service = false;
	sd->in_service = NULL;
	bfq_active_insert(e->st, e);
}

/*
 * e has nothing left (__bfq_deactivate_entity).  Served, its finish is
 * what it really received; if that is still ahead of the clock it waits
 * on the idle list, else it is forgotten.
 */
void bfq_deactivate_entity(struct bfq_sched_data *sd, struct bfq_entity *e)
{
	struct bfq_service_tree *st = e->st;

	if (e->in_service) {
		bfq_calc_finish(e, (uint64_t)e->service);
		e->in_service = false;
		sd->in_service = NULL;
	} else if (e->on_active) {
		bfq_active_extract(e);
	} else {
		return;
	}
	if (e->finish > st->vtime) {
		e->on_idle = true;
		TAILQ_INSERT_TAIL(&st->idle, e, link);
	} else {
		bfq_wsum_drop(e);
	}
}

/* e received served sectors (bfq_bfqq_served): its class's clock moves on. */
void bfq_entity_served(struct bfq_entity *e, int served)
{
	struct bfq_service_tree *st = e->st;

	e->service += served;
	if (st->wsum)
		st->vtime += bfq_delta((uint64_t)served, (unsigned int)st->wsum);
	bfq_forget_idle(st, true);
}

/* A new weight (a prio change, weight raising): the class's sum follows. */
void bfq_entity_set_weight(struct bfq_entity *e, unsigned int weight)
{
	if (e->in_wsum)
		e->st->wsum = e->st->wsum - e->weight + weight;
	e->weight = weight;
}

/* With none eligible, the clock jumps to the smallest start (bfq_update_vtime). */
static void bfq_update_vtime(struct bfq_service_tree *st)
{
	struct bfq_entity *e;
	uint64_t min_start = UINT64_MAX;

	TAILQ_FOREACH(e, &st->active, link)
		if (e->start < min_start)
			min_start = e->start;
	if (min_start != UINT64_MAX && min_start > st->vtime) {
		st->vtime = min_start;
		bfq_forget_idle(st, false);
	}
}

/* The eligible entity that finishes first, or NULL (bfq_first_active_entity). */
static struct bfq_entity *bfq_first_active_entity(struct bfq_service_tree *st)
{
	struct bfq_entity *e, *best = NULL;

	bfq_update_vtime(st);
	TAILQ_FOREACH(e, &st->active, link)
		if (e->start <= st->vtime && (!best || e->finish < best->finish))
			best = e;
	return best;
}

/*
 * The next entity to serve, taken off its list and put in service
 * (bfq_lookup_next_entity): RT before BE before IDLE, except that the
 * idle class goes first once every BFQ_CL_IDLE_TIMEOUT if it waits.
 */
struct bfq_entity *bfq_get_next_entity(struct bfq_sched_data *sd, uint64_t now)
{
	int class = BFQ_CLASS_RT;
	struct bfq_entity *e = NULL;

	assert(!sd->in_service);
	if (now > sd->class_idle_last_service + BFQ_CL_IDLE_TIMEOUT_NS) {
		if (!TAILQ_EMPTY(&sd->st[BFQ_CLASS_IDLE].active))
			class = BFQ_CLASS_IDLE;
		sd->class_idle_last_service = now;
	}
	for (int i = 0; i < BFQ_NR_CLASSES && !e; i++)
		e = bfq_first_active_entity(&sd->st[(class + i) % BFQ_NR_CLASSES]);
	if (!e)
		return NULL;
	bfq_active_extract(e);
	e->in_service = true;
	e->service = 0;
	sd->in_service = e;
	return e;
}

/* ---- two levels: a queue in its group, the group in the root ---- */

static bool bfq_sd_busy(const struct bfq_sched_data *sd)
{
	if (sd->in_service)
		return true;
	for (int c = 0; c < BFQ_NR_CLASSES; c++)
		if (!TAILQ_EMPTY(&sd->st[c].active))
			return true;
	return false;
}

/*
 * A queue got busy in its group: the group, if it had nothing, gets busy
 * in the root, with the queue's budget (bfq_activate_requeue_entity going
 * up).  Groups are served in the best-effort class.
 */
void bfq_activate_leaf(struct bfq_entity *e, int class, bool non_blocking)
{
	struct bfq_entity *g = e->parent;

	bfq_activate_entity(e->sched_data, e, class, non_blocking);
	if (g && !g->on_active && !g->in_service) {
		g->budget = e->budget;
		bfq_activate_entity(g->sched_data, g, BFQ_CLASS_BE, false);
	}
}

/*
 * After one of its queues left service or the trees: a group in service
 * with none of its queues in service goes back (requeued) if it still has
 * busy ones, and leaves otherwise; one waiting with none busy leaves.
 */
static void bfq_settle_group(struct bfq_entity *g)
{
	if (!g || g->my_sched_data->in_service)
		return;
	if (g->in_service) {
		if (bfq_sd_busy(g->my_sched_data))
			bfq_requeue_entity(g->sched_data, g);
		else
			bfq_deactivate_entity(g->sched_data, g);
	} else if (g->on_active && !bfq_sd_busy(g->my_sched_data)) {
		bfq_deactivate_entity(g->sched_data, g);
	}
}

void bfq_requeue_leaf(struct bfq_entity *e)
{
	bfq_requeue_entity(e->sched_data, e);
	bfq_settle_group(e->parent);
}

void bfq_deactivate_leaf(struct bfq_entity *e)
{
	bfq_deactivate_entity(e->sched_data, e);
	bfq_settle_group(e->parent);
}

/* Service goes to the queue and to its group (bfq_bfqq_served, for_each_entity). */
void bfq_leaf_served(struct bfq_entity *e, int served)
{
	bfq_entity_served(e, served);
	if (e->parent)
		bfq_entity_served(e->parent, served);
}

/* The next queue: the root's choice, or, if that is a group, the group's (bfq_get_next_queue). */
struct bfq_entity *bfq_get_next_leaf(struct bfq_sched_data *root, uint64_t now)
{
	struct bfq_entity *e = bfq_get_next_entity(root, now);

	if (e && e->my_sched_data) {
		struct bfq_entity *g = e;

		e = bfq_get_next_entity(g->my_sched_data, now);
		assert(e); /* a group is in the trees only while a queue of its is busy */
	}
	return e;
}
