/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * driver_uring.c - the daemon's io_uring loop: the driver of the request
 * queue.  One ring carries the device stack's I/O (the file and null
 * backends' SQEs), the timers (an elevator's wake-up, the stack's
 * filters), and the watched file (the FUSE device, or FUSE's own ring).
 * Every completion runs on the loop's thread.
 *
 * On a multi-queue queue each hardware queue has a thread and a ring of
 * its own besides: the thread runs its queue, the stack's I/O of what it
 * dispatched goes on its ring (the host ops pick the calling thread's
 * ring), and the completions end the requests there, under the queue lock
 * as everything of the stack.  With FUSE over io_uring each thread also
 * carries the FUSE ring entries of its CPUs (the watcher's serve_queue
 * runs on it).  The loop keeps the FUSE device, the backends' fds and the
 * timers; a hardware queue's thread wakes it through an eventfd when a
 * timer must be armed earlier.
 */

#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "driver_uring_impl.h"

#define NSEC_PER_SEC 1000000000ull

void uring_io_set(struct io_uring_sqe *sqe, struct dev_io *io)
{
	uint64_t ud = (uint64_t)(uintptr_t)io;

	assert(ud >= UD_RESERVED_END && !(ud & 3));
	io_uring_sqe_set_data64(sqe, ud);
}

static void uring_submit(struct uring_driver *d)
{
	int ret = io_uring_submit(&d->ring);

	/*
	 * EAGAIN and EBUSY leave the SQEs in the ring for the next submit,
	 * which the completions the kernel is holding back will bring.
	 */
	if (ret < 0 && ret != -EAGAIN && ret != -EBUSY && ret != -EINTR)
		fprintf(stderr, "rqdisk: io_uring_submit: %s\n", strerror(-ret));
}

/* In the loop thread, SQEs wait for the loop's one submission a wake-up. */
static bool uring_deferred(const struct uring_driver *d)
{
	return d->looping && pthread_equal(pthread_self(), d->creator);
}

/* uring_sq_room() found too little room: the batch goes out, and room is looked for again. */
bool uring_sq_make_room(struct uring_driver *d, unsigned int need)
{
	uring_submit(d);
	return io_uring_sq_space_left(&d->ring) >= need;
}

/* The same on a hardware queue's thread, whose ring it is. */
bool uring_hwq_make_room(struct uring_hwq *h, unsigned int need)
{
	int ret = io_uring_submit(&h->ring);

	if (ret < 0 && ret != -EAGAIN && ret != -EBUSY && ret != -EINTR)
		fprintf(stderr, "rqdisk: io_uring_submit: %s\n", strerror(-ret));
	return io_uring_sq_space_left(&h->ring) >= need;
}

/*
 * Ring timeouts are on CLOCK_MONOTONIC: the queue runs on the real clock.
 * One timer at most: an earlier time moves it, a later one waits until it
 * has fired and the loop has run what was due (uring_arm_timer() asks).
 */
void uring_arm_timer_at(struct uring_driver *d, uint64_t at)
{
	struct io_uring_sqe *sqe;

	if (!uring_sq_room(d, 1))
		return; /* this batch fills the SQ; its completions run the queue again */
	sqe = io_uring_get_sqe(&d->ring);
	d->timer_ts.tv_sec = (long long)(at / NSEC_PER_SEC);
	d->timer_ts.tv_nsec = (long long)(at % NSEC_PER_SEC);
	if (d->timer_at) {
		io_uring_prep_timeout_update(sqe, &d->timer_ts, UD_TIMER, IORING_TIMEOUT_ABS);
		io_uring_sqe_set_data64(sqe, UD_TIMER_UPDATE);
	} else {
		io_uring_prep_timeout(sqe, &d->timer_ts, 0, IORING_TIMEOUT_ABS);
		io_uring_sqe_set_data64(sqe, UD_TIMER);
	}
	d->timer_at = at;
}

/*
 * request_fn: lock held.  One submit per batch; in the event loop's
 * thread, one submit per wake-up, by the loop.  Look before taking: a
 * request leaves the elevator only when the stack takes it (a slot, SQ
 * room, a model's depth), so none is issued and requeued, and the
 * elevator keeps choosing among all that wait.
 */
void uring_request_fn(struct request_queue *q)
{
	struct uring_driver *d = q->queuedata;
	struct blk_dev *top = d->stack.top;
	struct request *rq;

	assert(!d->looping || uring_deferred(d)); /* the SQ is the loop thread's alone */
	while (dev_can_take(top) && (rq = blk_fetch_request(q))) {
		/*
		 * The fetch may have ended requests whose preflush failed,
		 * and their answers (FUSE over io_uring) may have taken the
		 * SQ room looked at: then back.
		 */
		if (!dev_can_take(top)) {
			blk_requeue_request(q, rq);
			break;
		}
		dev_submit(top, rq);
	}
	uring_arm_timer(d);
	if (!uring_deferred(d))
		uring_submit(d);
}

/* One CQE, lock held. */
static void uring_handle(struct uring_driver *d, uint64_t ud, int res)
{
	switch (ud) {
	case UD_TIMER:
		d->timer_at = 0; /* fired (or cancelled): the queue runs after this batch */
		d->timer_fired = true;
		return;
	case UD_WAKE:
		d->wake_armed = false; /* the read took the count: the turn reads it again */
		return;
	case UD_TIMER_UPDATE:
		return; /* ENOENT only means the timer fired first */
	case UD_POLL_REMOVE:
		return; /* ENOENT only means the poll fired first */
	case UD_POLL:
		d->poll_armed = false;
		d->watch_input = true;
		d->watch_ready = true;
		return;
	}
	if (ud & UD_WATCH_TAG) {
		d->watch->complete(d->watch->arg, (void *)(uintptr_t)(ud & ~UD_WATCH_TAG), res);
		d->watch_ready = true;
		return;
	}
	assert(ud >= UD_RESERVED_END && !(ud & 3));
	((struct dev_io *)(uintptr_t)ud)->done((struct dev_io *)(uintptr_t)ud, res);
}

/*
 * Every CQE there is, lock held; then the backend's continuations, the
 * stack's timers that are due, and the queue (an elevator's timed dispatch).
 */
static void uring_reap(struct uring_driver *d)
{
	struct io_uring_cqe *cqe;
	unsigned int head, seen = 0;

	io_uring_for_each_cqe(&d->ring, head, cqe) {
		uring_handle(d, cqe->user_data, cqe->res);
		seen++;
	}
	io_uring_cq_advance(&d->ring, seen);
	if (d->kick)
		d->kick(d->kick_arg);
	/* no clock read a reap for a stack with no timer set (no filter: never) */
	if (dev_stack_next_timer(&d->stack))
		dev_stack_run_timers(&d->stack, blk_clock_now(d->q->clock));
	/* mq: what ended kicked the hardware queues; an elevator's time needs a kick */
	if (!d->q->mq || d->timer_fired)
		__blk_run_queue(d->q);
	d->timer_fired = false;
}

/* Lock held: wake the loop when the watched file has input (poll checks it at once). */
static void uring_arm_poll(struct uring_driver *d, int fd)
{
	struct io_uring_sqe *sqe;

	if (d->poll_armed || !uring_sq_room(d, 1))
		return; /* an SQ full of this loop's own SQEs: their completions bring the next turn */
	sqe = io_uring_get_sqe(&d->ring);
	io_uring_prep_poll_add(sqe, fd, POLLIN);
	io_uring_sqe_set_data64(sqe, UD_POLL);
	d->poll_armed = true;
}

/*
 * The queue is idle and the next input is due: run the ring's deferred
 * work and look for a completion until one comes or the watch's idle poll
 * time has passed.  The wait that follows returns at once if one came.
 */
static void uring_poll_idle(struct uring_driver *d)
{
	uint64_t end;

	if (!d->watch->idle_poll_us || !blk_queue_idle_unlocked(d->q))
		return;
	d->stats.idle_polls++;
	/* the real clock even under a virtual one: this spends real CPU time */
	end = blk_clock_now(&blk_real_clock) + d->watch->idle_poll_us * 1000ull;
	do {
		if (io_uring_get_events(&d->ring) < 0)
			return;
	} while (!io_uring_cq_ready(&d->ring) && blk_clock_now(&blk_real_clock) < end);
	if (io_uring_cq_ready(&d->ring))
		d->stats.idle_poll_hits++;
	else
		d->stats.idle_poll_timeouts++;
}

/* One turn: serve the watched file if it has input, submit, then wait or reap. */
static enum uring_serve uring_turn(struct uring_driver *d, enum uring_serve st)
{
	const struct uring_watch *w = d->watch;
	struct io_uring_cqe *cqe;
	bool look_again = false; /* mq: a request ended that serve may not have seen */
	int ret = 0;

	if (st != URING_SERVE_DONE && d->watch_ready) {
		d->watch_ready = false; /* serve may ask for the next turn itself */
		st = w->serve(w->arg);
		d->watch_input = st == URING_SERVE_MORE;
		d->watch_ready |= d->watch_input;
	}
	blk_queue_lock(d->q);
	if (d->q->mq)
		look_again = uring_mq_turn(d, st);
	if (st == URING_SERVE_DRAINED)
		uring_arm_poll(d, w->fd);
	uring_arm_fd_watches(d);
	uring_submit(d);
	blk_queue_unlock(d->q);
	/* input still waiting, or nothing left to wait for: only reap what is there */
	if (!d->watch_ready && !look_again &&
	    !(st == URING_SERVE_DONE && blk_queue_idle_unlocked(d->q))) {
		uring_poll_idle(d);
		if (!io_uring_cq_ready(&d->ring))
			d->stats.sleeps++;
		ret = io_uring_wait_cqes(&d->ring, &cqe, 1, NULL, w->waitmask);
	}
	if (ret == -EINTR)
		d->watch_ready = st != URING_SERVE_DONE; /* a signal: serve looks at the session */
	else if (ret < 0)
		fprintf(stderr, "rqdisk: io_uring_wait_cqes: %s\n", strerror(-ret));
	blk_queue_lock(d->q);
	uring_reap(d);
	if (d->q->mq)
		uring_mq_reaped(d);
	blk_queue_unlock(d->q);
	if (st == URING_SERVE_BLOCKED)
		d->watch_ready = true; /* a CQE came: what it ended may have freed the way */
	return st;
}

void uring_driver_run(struct uring_driver *d, const struct uring_watch *w)
{
	enum uring_serve st = URING_SERVE_MORE;

	assert(pthread_equal(pthread_self(), d->creator)); /* the ring's one issuer */
	d->looping = true;
	d->watch = w; /* before the hardware queues' threads, which serve it too */
	uring_hwqs_spawn(d);
	d->watch_ready = true; /* input may be there before the first poll */
	d->watch_input = true;
	while (st != URING_SERVE_DONE || !blk_queue_idle_unlocked(d->q))
		st = uring_turn(d, st);
	/* the last reap's answers may wait in the SQ (the watcher's SQEs): send them */
	blk_queue_lock(d->q);
	uring_submit(d);
	blk_queue_unlock(d->q);
	uring_hwqs_join(d); /* the queue is idle: nothing of theirs is in flight */
	d->looping = false;
}

struct io_uring_sqe *uring_driver_watch_sqe(struct uring_driver *d, void *tag)
{
	struct io_uring_sqe *sqe;

	assert(uring_deferred(d)); /* only the loop thread touches the SQ while it runs */
	assert(!((uintptr_t)tag & 3) && (uintptr_t)tag >= UD_RESERVED_END);
	if (!uring_sq_room(d, 1))
		return NULL;
	sqe = io_uring_get_sqe(&d->ring);
	memset(sqe, 0, (d->ring.flags & IORING_SETUP_SQE128) ? 128 : sizeof(*sqe));
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)tag | UD_WATCH_TAG);
	return sqe;
}

void uring_driver_get_stats(const struct uring_driver *d, struct uring_driver_stats *st)
{
	*st = d->stats;
}

bool uring_driver_watch_input(const struct uring_driver *d)
{
	return d->watch_input;
}

void uring_driver_watch_again(struct uring_driver *d)
{
	assert(uring_deferred(d));
	d->watch_ready = true;
}
