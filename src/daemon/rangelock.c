/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rangelock.c - byte ranges that writers hold one at a time.  A
 * read-modify-write must not interleave with another write to the same
 * blocks, or the bytes the other write put there are lost.  Waiters are
 * granted in arrival order and never block a thread: the caller is told
 * later, through granted().  The owner serialises calls (the queue lock).
 */
#include "rangelock.h"

void range_lock_init(struct range_lock *rl)
{
	TAILQ_INIT(&rl->held);
	TAILQ_INIT(&rl->waiting);
}

static bool overlaps(const struct range_waiter *a, const struct range_waiter *b)
{
	return a->start < b->end && b->start < a->end;
}

/* Whether w overlaps a held range, or a waiting one queued before stop. */
static bool blocked(const struct range_lock *rl, const struct range_waiter *w,
		    const struct range_waiter *stop)
{
	const struct range_waiter *o;

	TAILQ_FOREACH(o, &rl->held, link)
		if (overlaps(o, w))
			return true;
	TAILQ_FOREACH(o, &rl->waiting, link) {
		if (o == stop)
			break;
		if (overlaps(o, w))
			return true;
	}
	return false;
}

/* True: w is held now.  False: w waits, and granted(w) is called when it is held. */
bool range_lock_acquire(struct range_lock *rl, struct range_waiter *w)
{
	if (blocked(rl, w, NULL)) {
		TAILQ_INSERT_TAIL(&rl->waiting, w, link);
		return false;
	}
	TAILQ_INSERT_TAIL(&rl->held, w, link);
	return true;
}

/* granted() may release ranges in turn, so the scan starts over after each grant. */
void range_lock_release(struct range_lock *rl, struct range_waiter *w)
{
	struct range_waiter *o;

	TAILQ_REMOVE(&rl->held, w, link);
again:
	TAILQ_FOREACH(o, &rl->waiting, link) {
		if (blocked(rl, o, o))
			continue;
		TAILQ_REMOVE(&rl->waiting, o, link);
		TAILQ_INSERT_TAIL(&rl->held, o, link);
		o->granted(o);
		goto again;
	}
}
