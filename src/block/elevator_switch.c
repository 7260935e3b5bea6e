/* SPDX-License-Identifier: BSD-3-Clause */
/* elevator_switch.c - switching elevators: the new one set up, the old one drained into it. */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "blk_mq.h"

/*
 * Lock held.  Everything the old elevator holds goes to the new one (or,
 * for "none", to the dispatch list) in the order the old would have
 * dispatched it.
 */
static void elevator_move(struct request_queue *q, struct elevator_queue *old,
			  struct elevator_queue *new)
{
	uint64_t now = blk_clock_now(q->clock);
	struct request *rq;

	if (!old)
		return; /* bypassed requests already wait in the dispatch list */
	old->draining = true;
	while (old->type->has_work(old) && (rq = old->type->dispatch_request(old, now))) {
		rq->rq_flags &= ~RQF_ELVPRIV;
		if (new) {
			rq->rq_flags |= RQF_ELVPRIV | RQF_SORTED;
			new->type->add_request(new, rq);
		} else {
			elv_rqhash_del(q, rq);
			rq->rq_flags &= ~RQF_SORTED;
			TAILQ_INSERT_TAIL(&q->queue_head, rq, queuelist);
		}
	}
	assert(!old->type->has_work(old));
}

/*
 * Lock held, both queue kinds: the pending elevator becomes the queue's
 * (the caller has taken the old one and switch_done first).
 */
void elevator_switch_install(struct request_queue *q)
{
	q->elevator = q->next_elevator;
	q->next_elevator = NULL;
	q->switch_pending = false;
	q->elevator_gen++;
	q->last_merge = NULL;
	q->switch_done = NULL;
}

static void elevator_switch_finish(struct request_queue *q)
{
	struct elevator_queue *old = q->elevator;
	void (*done)(struct request_queue *q, void *arg) = q->switch_done;

	elevator_move(q, old, q->next_elevator);
	elevator_switch_install(q);
	if (old)
		elevator_exit(old);
	if (done)
		done(q, q->switch_arg);
}

/*
 * Lock held.  The new elevator is set up before the old one goes.  The
 * switch happens at once when nothing is in flight, else when the last
 * request in flight ends (an elevator must never hear of a request it did
 * not see); meanwhile nothing is dispatched.  Returns 0 with the switch
 * done or still pending (q->switch_pending): nothing here waits, so the
 * caller may set q->switch_done to hear of the end.  A second switch while
 * one is pending is refused with -EBUSY.
 */
int elevator_switch(struct request_queue *q, const char *name, char *why, size_t whylen)
{
	const struct elevator_type *t = NULL;
	struct elevator_queue *e = NULL;

	if (q->switch_pending) {
		snprintf(why, whylen, "a switch is already under way");
		return -EBUSY;
	}
	if (strcmp(name, "none") && !(t = elevator_get(name, why, whylen)))
		return -EINVAL;
	if ((q->elevator ? q->elevator->type : NULL) == t)
		return 0;
	if (q->mq) { /* the caller kicks the hardware queues once it drops the lock */
		int ret = blk_mq_sched_switch_prepare(q, t, why, whylen);

		if (!ret)
			blk_elevator_switch_check(q);
		return ret;
	}
	if (t && !(e = elevator_alloc(q, t))) {
		snprintf(why, whylen, "elevator %s: cannot set it up", name);
		return -ENOMEM;
	}
	q->next_elevator = e;
	q->switch_pending = true;
	blk_elevator_switch_check(q);
	if (!q->switch_pending)
		__blk_run_queue(q); /* the moved requests need not wait for the next I/O */
	return 0;
}

/* Lock held: finish a pending switch once nothing is in flight. */
void blk_elevator_switch_check(struct request_queue *q)
{
	if (q->switch_pending && !q->in_flight && q->mq)
		blk_mq_sched_switch_finish(q);
	else if (q->switch_pending && !q->in_flight)
		elevator_switch_finish(q);
}
