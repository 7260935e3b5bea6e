/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * blk_mq_sched.c - elevators on a multi-queue queue: the multi-queue hooks
 * of version 4, or the core's adapter onto an elevator's 2.6 hooks (one
 * instance, any hardware queue dispatching, under the queue lock), and the
 * scheduler tags that bound what an elevator holds.  Every hook is called
 * with the queue lock held (blk_mq.h), so merges, which the core does in
 * the queue-wide hash, never race a dispatch.
 */
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
 * Set up t on q, before the first bio: nr_requests scheduler tags (the
 * queue's limit now) and one instance.
 */
int blk_mq_sched_init(struct request_queue *q, const struct elevator_type *t, char *why,
		      size_t whylen)
{
	int ret = blk_mq_sched_check(t, why, whylen);

	if (ret)
		return ret;
	if (blk_mq_init_tags(&q->mq->sched_tags, q->limits.nr_requests)) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	q->elevator = elevator_alloc(q, t);
	if (!q->elevator) {
		blk_mq_free_tags(&q->mq->sched_tags);
		snprintf(why, whylen, "elevator %s: cannot set it up", t->elevator_name);
		return -ENOMEM;
	}
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

/* Queue lock held: the elevator's choice is out of merge reach from now on. */
static struct request *blk_mq_sched_taken(struct request_queue *q, struct request *rq)
{
	if (!rq)
		return NULL;
	rq->rq_flags &= ~RQF_ELVPRIV;
	elv_rqhash_del(q, rq);
	if (q->last_merge == rq)
		q->last_merge = NULL;
	return rq;
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
	return blk_mq_sched_taken(q, e->type->mq_ops.dispatch_request(e, hctx, now));
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
