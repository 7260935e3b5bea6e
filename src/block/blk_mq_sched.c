/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * blk_mq_sched.c - elevators on a multi-queue queue: the multi-queue hooks
 * of version 4, or the core's adapter onto an elevator's 2.6 hooks (one
 * instance, any hardware queue dispatching, under the queue lock), and the
 * scheduler tags that bound what an elevator holds.  Every hook is called
 * with the queue lock held (blk_mq.h), so merges, which the core does in
 * the queue-wide hash, never race a dispatch.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "blk_mq.h"

static bool elv_has_mq_ops(const struct elevator_type *t)
{
	return t->mq_ops.insert_requests || t->mq_ops.dispatch_request || t->mq_ops.has_work;
}

/* One instance for every hardware queue: the adapter's way, or an elevator that asks for it. */
bool blk_mq_sched_single(const struct request_queue *q)
{
	const struct elevator_type *t = q->elevator->type;

	return !elv_has_mq_ops(t) || (t->elevator_features & ELEVATOR_F_MQ_SINGLE_QUEUE);
}

#define SCHED_REFUSE(...)                            \
	do {                                         \
		snprintf(why, whylen, __VA_ARGS__);  \
		return -EINVAL;                      \
	} while (0)

/* What a multi-queue queue refuses of an elevator the loader took. */
static int blk_mq_sched_check(const struct elevator_type *t, char *why, size_t whylen)
{
	if (t->api_version < ELV_API_VERSION)
		SCHED_REFUSE("elevator %s speaks API version %d, which has no multi-queue hooks: "
			     "a multi-queue queue needs version %d", t->elevator_name,
			     t->api_version, ELV_API_VERSION);
	if (elv_has_mq_ops(t) && !(t->mq_ops.insert_requests && t->mq_ops.dispatch_request &&
				   t->mq_ops.has_work))
		SCHED_REFUSE("elevator %s has some of the multi-queue hooks insert_requests, "
			     "dispatch_request and has_work, not all three", t->elevator_name);
	return 0;
}

/*
 * Queue lock held, or no bio yet: t (NULL: none) set up as the next
 * elevator, with its scheduler tags, nr_requests of them (the queue's
 * limit now); nothing is dispatched until blk_mq_sched_switch_finish().
 */
static int blk_mq_sched_setup(struct request_queue *q, const struct elevator_type *t,
			      char *why, size_t whylen)
{
	struct blk_mq_queue *mq = q->mq;

	if (t && blk_mq_sched_check(t, why, whylen))
		return -EINVAL;
	if (blk_mq_init_tags(&mq->next_sched_tags, t ? q->limits.nr_requests : 0)) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	q->next_elevator = t ? elevator_alloc(q, t) : NULL;
	if (t && !q->next_elevator) {
		blk_mq_free_tags(&mq->next_sched_tags);
		snprintf(why, whylen, "elevator %s: cannot set it up", t->elevator_name);
		return -ENOMEM;
	}
	q->switch_pending = true;
	return 0;
}

/* Queue lock held, a switch pending: t's setup, for elevator_switch(). */
int blk_mq_sched_switch_prepare(struct request_queue *q, const struct elevator_type *t,
				char *why, size_t whylen)
{
	return blk_mq_sched_setup(q, t, why, whylen);
}

/* Queue lock held, nothing in flight: rq goes back to being a request that waits for a tag. */
static void blk_mq_sched_untag(struct request_queue *q, struct request *rq)
{
	blk_mq_put_tag(&rq->mq_hctx->tags, rq->tag);
	blk_mq_put_tag(&q->mq->sched_tags, rq->internal_tag);
	rq->tag = rq->internal_tag = -1;
	rq->rq_flags &= ~(RQF_ELVPRIV | RQF_SORTED);
}

/*
 * Queue lock held, nothing in flight: every request of the active epoch
 * that waits anywhere (a dispatch list, the elevator or the software
 * queues, a tag wait list), in that order, off its list and its tags.
 * The old elevator, told it drains, hands out all it holds.
 */
static void blk_mq_sched_collect(struct request_queue *q, struct rq_list *moved)
{
	struct blk_mq_queue *mq = q->mq;
	uint64_t now = blk_clock_now(q->clock);
	struct request *rq;

	for (unsigned int i = 0; i < mq->set->nr_hw_queues; i++) {
		pthread_mutex_lock(&mq->hctxs[i].lock);
		TAILQ_CONCAT(moved, &mq->hctxs[i].dispatch, queuelist);
		pthread_mutex_unlock(&mq->hctxs[i].lock);
	}
	if (q->elevator) {
		q->elevator->draining = true;
		for (unsigned int i = 0; i < mq->set->nr_hw_queues; i++)
			while ((rq = blk_mq_sched_dispatch(&mq->hctxs[i], now)))
				TAILQ_INSERT_TAIL(moved, rq, queuelist);
	}
	for (unsigned int cpu = 0; cpu < mq->nr_ctx; cpu++) {
		pthread_mutex_lock(&mq->ctxs[cpu].lock);
		TAILQ_CONCAT(moved, &mq->ctxs[cpu].rq_list, queuelist);
		pthread_mutex_unlock(&mq->ctxs[cpu].lock);
	}
	TAILQ_CONCAT(moved, &mq->tag_wait, queuelist);
	for (unsigned int i = 0; i < mq->set->nr_hw_queues; i++)
		TAILQ_CONCAT(moved, &mq->hctxs[i].tag_wait, queuelist);
	TAILQ_FOREACH(rq, moved, queuelist)
		blk_mq_sched_untag(q, rq);
}

/*
 * Queue lock held, nothing in flight (blk_elevator_switch_check): the
 * pending elevator takes over.  What waited is queued again, in order,
 * as it was first: a tag of the new kind, then the new elevator or the
 * software queues.  The old elevator goes once it is empty.
 */
void blk_mq_sched_switch_finish(struct request_queue *q)
{
	struct elevator_queue *old = q->elevator;
	void (*done)(struct request_queue *q, void *arg) = q->switch_done;
	struct rq_list moved = TAILQ_HEAD_INITIALIZER(moved);
	struct request *rq;

	blk_mq_sched_collect(q, &moved);
	blk_mq_tags_swap(&q->mq->sched_tags, &q->mq->next_sched_tags);
	blk_mq_free_tags(&q->mq->next_sched_tags);
	elevator_switch_install(q);
	/* nr_requests set the driver tags under none; an elevator has the tag set's depth */
	for (unsigned int i = 0; q->elevator && i < q->mq->set->nr_hw_queues; i++)
		blk_mq_resize_tags(&q->mq->hctxs[i].tags, q->mq->set->queue_depth); /* no allocation */
	if (old) {
		assert(!old->type->has_work(old) || elv_has_mq_ops(old->type));
		elevator_exit(old);
	}
	while ((rq = TAILQ_FIRST(&moved))) {
		TAILQ_REMOVE(&moved, rq, queuelist);
		blk_mq_activate(q, rq);
	}
	if (done)
		done(q, q->switch_arg);
}

/*
 * Switch q's elevator to name ("none" for none), as the 2.6 queue's
 * elevator_switch(): set up first, done once nothing is in flight
 * (nothing is dispatched meanwhile), then every hardware queue kicked.
 * Takes the queue lock.
 */
int blk_mq_elevator_switch(struct request_queue *q, const char *name, char *why, size_t whylen)
{
	int ret;

	blk_queue_lock(q);
	ret = elevator_switch(q, name, why, whylen);
	blk_queue_unlock(q);
	blk_mq_kick_hw_queues(q);
	return ret;
}

/*
 * Set up t on q, before the first bio: nr_requests scheduler tags (the
 * queue's limit now) and one instance.
 */
int blk_mq_sched_init(struct request_queue *q, const struct elevator_type *t, char *why,
		      size_t whylen)
{
	int ret = blk_mq_sched_check(t, why, whylen);

	if (ret)
		return ret;
	ret = blk_mq_sched_setup(q, t, why, whylen);
	if (ret)
		return ret;
	blk_mq_sched_switch_finish(q);
	return 0;
}

/* name (a built-in, a loaded one, or a path), or "none"/NULL for none. */
int blk_mq_elevator_init(struct request_queue *q, const char *name, char *why, size_t whylen)
{
	const struct elevator_type *t;

	if (!name || !strcmp(name, "none"))
		return 0;
	t = elevator_get(name, why, whylen);
	if (!t)
		return -EINVAL;
	return blk_mq_sched_init(q, t, why, whylen);
}

/* Queue lock held: rq (with its scheduler tag) joins the elevator. */
void blk_mq_sched_insert(struct blk_mq_hw_ctx *hctx, struct request *rq)
{
	struct elevator_queue *e = hctx->queue->elevator;
	struct elv_fifo list = TAILQ_HEAD_INITIALIZER(list);

	if (!elv_has_mq_ops(e->type)) {
		elv_insert(hctx->queue, rq);
		return;
	}
	rq->rq_flags |= RQF_ELVPRIV | RQF_SORTED;
	TAILQ_INSERT_TAIL(&list, rq, queuelist);
	e->type->mq_ops.insert_requests(e, hctx, &list, false);
}

/* Queue lock held: the elevator's next request for hctx, or NULL. */
struct request *blk_mq_sched_dispatch(struct blk_mq_hw_ctx *hctx, uint64_t now)
{
	struct request_queue *q = hctx->queue;
	struct elevator_queue *e = q->elevator;

	if (!elv_has_mq_ops(e->type))
		return elv_next_request(q, now);
	if (q->dispatch_at && now >= q->dispatch_at)
		q->dispatch_at = 0;
	if (!e->type->mq_ops.has_work(e, hctx))
		return NULL;
	return elv_taken(q, e->type->mq_ops.dispatch_request(e, hctx, now));
}

/* Queue lock held: whether the elevator holds work hctx may dispatch. */
bool blk_mq_sched_has_work(struct blk_mq_hw_ctx *hctx)
{
	struct elevator_queue *e = hctx->queue->elevator;

	if (!elv_has_mq_ops(e->type))
		return e->type->has_work(e);
	return e->type->mq_ops.has_work(e, hctx);
}

/* Queue lock held: how many scheduler tags rq may find in use and still take one (0: all). */
unsigned int blk_mq_sched_depth(struct request_queue *q, const struct request *rq)
{
	struct elevator_queue *e = q->elevator;
	struct blk_mq_alloc_data data = {
		.cmd_flags = rq->cmd_flags,
		.nr_tags = q->mq->sched_tags.nr_tags,
	};

	if (!e->type->mq_ops.limit_depth)
		return 0;
	e->type->mq_ops.limit_depth(e, rq->cmd_op, &data);
	return data.shallow_depth;
}
