/* SPDX-License-Identifier: BSD-3-Clause */
/* driver_uring_mq.c - multi-queue on the io_uring loop: a thread and a ring per hardware queue. */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "blk_mq.h"
#include "driver_uring_impl.h"

/*
 * The hardware queue whose thread this is, or NULL (the loop's thread):
 * the host ops put a layer's I/O on the ring of the thread that runs the
 * layer, with no hand-off per I/O.
 */
__thread struct uring_hwq *uring_self;

/* At exit, the turns a thread takes to send its last answers: a CQ reaped each time. */
#define URING_HWQ_LAST_TURNS 16

/*
 * A multi-queue queue's request_fn, lock held: the core runs it where the
 * 2.6 queue would dispatch (a bio submitted, a layer's kick, an elevator's
 * timer).  A bio submitted through blk_mq's own path (submit_ctx set)
 * kicks only the hardware queues it put work on, which it marked: waking
 * every thread for each bio would be a hand-off per I/O to threads with
 * nothing to do.  Anything else asks every hardware queue to run, by its
 * thread (run_async only wakes it), as blk_mq_run_hw_queue(hctx, true)
 * defers to kblockd.
 */
void uring_mq_request_fn(struct request_queue *q)
{
	if (q->mq->submit_ctx)
		blk_mq_kick_marked(q); /* run_async: the queue lock may be held */
	else
		blk_mq_kick_hw_queues(q);
}

/* Write an eventfd: a count of 1 more. */
static void uring_eventfd_kick(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) != sizeof(one))
		abort(); /* an eventfd takes a write of 1 until its count is near 2^64 */
}

/*
 * blk_mq_ops.run_async: any thread, any lock held or none.  The thread's
 * own asks are seen before it sleeps; another's writes its eventfd once
 * until it has run.
 */
static void uring_mq_run_async(struct blk_mq_hw_ctx *hctx)
{
	struct uring_hwq *h = hctx->driver_data;

	if (__atomic_exchange_n(&h->pending, true, __ATOMIC_ACQ_REL) || uring_self == h)
		return;
	uring_eventfd_kick(h->efd);
}

/*
 * blk_mq_ops.queue_rq, on hctx's thread, no lock held: the stack takes rq
 * under the queue lock, as on the 2.6 queue (its layers keep state), or
 * it is busy and rq waits at the head of hctx's dispatch list until a
 * request ends.  Its I/O goes on this thread's ring (uring_self).
 */
static blk_status_t uring_mq_queue_rq(struct blk_mq_hw_ctx *hctx, struct request *rq)
{
	struct request_queue *q = hctx->queue;
	struct uring_driver *d = q->queuedata;
	blk_status_t ret = BLK_STS_OK;

	blk_queue_lock(q);
	if (dev_can_take(d->stack.top))
		dev_submit(d->stack.top, rq);
	else
		ret = BLK_STS_RESOURCE;
	blk_queue_unlock(q);
	return ret;
}

/*
 * blk_mq_ops.has_room, queue lock held: whether the stack takes a request
 * now, so that the core leaves the next one with the elevator, free to
 * choose better, rather than take it to come back busy.  Another hardware
 * queue's thread may fill the room between this and queue_rq, which then
 * answers BLK_STS_RESOURCE.
 */
static bool uring_mq_has_room(struct blk_mq_hw_ctx *hctx)
{
	struct uring_driver *d = hctx->queue->queuedata;

	return dev_can_take(d->stack.top); /* the queue lock is held */
}

/* blk_mq_ops.commit_rqs: the batch's SQEs go out in one submission. */
static void uring_mq_commit_rqs(struct blk_mq_hw_ctx *hctx)
{
	struct uring_hwq *h = hctx->driver_data;
	int ret = io_uring_submit(&h->ring);

	if (ret < 0 && ret != -EAGAIN && ret != -EBUSY && ret != -EINTR)
		fprintf(stderr, "rqdisk: io_uring_submit: %s\n", strerror(-ret));
}

const struct blk_mq_ops uring_mq_ops = {
	.queue_rq = uring_mq_queue_rq,
	.commit_rqs = uring_mq_commit_rqs,
	.run_async = uring_mq_run_async,
	.has_room = uring_mq_has_room,
};

/*
 * mq, lock held, in the loop's turn: the loop owns the timers (the stack's
 * and an elevator's wake-up; the hardware queues' threads wake it through
 * its eventfd when one must be armed earlier) and keeps a read of that
 * eventfd out.  While it waits for requests to end (input blocked, or
 * draining at the end), a thread that ends one wakes it too.  An end
 * between the loop's last hold and this one came while serve looked,
 * unlocked, with end_wake not yet set: nobody woke the loop for it, and
 * the turn must not wait (true) but look again.
 */
bool uring_mq_turn(struct uring_driver *d, enum uring_serve st)
{
	struct io_uring_sqe *sqe;
	bool ended_unseen;

	uring_arm_timer(d);
	d->timer_wake = false;
	d->watch_wake = false; /* the turn arms the fd watches next */
	d->end_wake = st == URING_SERVE_BLOCKED || st == URING_SERVE_DONE;
	ended_unseen = d->end_wake && d->q->mq->nr_ended != d->ended_seen;
	if (!d->wake_armed && uring_sq_room(d, 1)) {
		sqe = io_uring_get_sqe(&d->ring);
		io_uring_prep_read(sqe, d->wake_fd, &d->wake_buf, sizeof(d->wake_buf), 0);
		io_uring_sqe_set_data64(sqe, UD_WAKE);
		d->wake_armed = true;
	}
	return ended_unseen;
}

/* mq, lock held, the loop's reap done: serve, next, sees every end until now. */
void uring_mq_reaped(struct uring_driver *d)
{
	d->ended_seen = d->q->mq->nr_ended;
}

/*
 * Lock held, on a hardware queue's thread: the fd watches changed (a
 * backend's submit wants its socket polled for output too, a watch came
 * or went).  Only the loop's thread arms them, on its ring: it is woken
 * once until its next turn.
 */
void uring_mq_watches_changed(struct uring_driver *d)
{
	if (d->watch_wake)
		return;
	d->watch_wake = true;
	uring_eventfd_kick(d->wake_fd);
}

/*
 * Lock held, on a hardware queue's thread after it ran or reaped: wake the
 * loop if the stack's timers or an elevator's wake-up now want an earlier
 * timer than the loop has armed, or if requests ended while the loop
 * waits for one to.
 */
static void uring_hwq_notify(struct uring_hwq *h, unsigned long *ended)
{
	struct uring_driver *d = h->d;
	uint64_t at;
	bool wake = false;

	if (!d->timer_wake) {
		at = uring_wake_time(d);
		if (at && (!d->timer_at || at < d->timer_at))
			wake = d->timer_wake = true;
	}
	if (d->end_wake && d->q->mq->nr_ended != *ended) {
		d->end_wake = false;
		wake = true;
	}
	*ended = d->q->mq->nr_ended;
	if (wake)
		uring_eventfd_kick(d->wake_fd);
}

/* Lock held: the thread's CQEs, the backend's continuations. */
static void uring_hwq_reap(struct uring_hwq *h)
{
	struct io_uring_cqe *cqe;
	unsigned int head, seen = 0;

	io_uring_for_each_cqe(&h->ring, head, cqe) {
		uint64_t ud = cqe->user_data;

		seen++;
		if (ud == UD_WAKE) {
			h->efd_armed = false;
			continue;
		}
		if (ud & UD_WATCH_TAG) { /* the watcher's (FUSE's ring): served once the lock is dropped */
			h->d->watch->complete(h->d->watch->arg, (void *)(uintptr_t)(ud & ~UD_WATCH_TAG),
					      cqe->res);
			__atomic_store_n(&h->watch_pending, true, __ATOMIC_RELEASE);
			continue;
		}
		assert(ud >= UD_RESERVED_END && !(ud & 3));
		((struct dev_io *)(uintptr_t)ud)->done((struct dev_io *)(uintptr_t)ud, cqe->res);
	}
	io_uring_cq_advance(&h->ring, seen);
	if (seen && h->d->kick)
		h->d->kick(h->d->kick_arg);
}

/*
 * A read of the thread's eventfd out on its ring: run_async's wake-up.  A
 * full SQ is submitted first to make room: its completions need not wake
 * the thread (the watcher's FUSE fetches wait for the next FUSE request),
 * so without the read a kick from another thread could wait for ever.
 * Room is lacking after that only while the kernel holds completions
 * back (its CQ overflowed), which the wait then returns at once.
 */
static void uring_hwq_arm(struct uring_hwq *h)
{
	struct io_uring_sqe *sqe;

	if (h->efd_armed || !uring_hwq_room(h, 1))
		return;
	sqe = io_uring_get_sqe(&h->ring);
	io_uring_prep_read(sqe, h->efd, &h->efd_buf, sizeof(h->efd_buf), 0);
	io_uring_sqe_set_data64(sqe, UD_WAKE);
	h->efd_armed = true;
}

/* No lock held: the watcher's part of this thread's turn (FUSE requests taken and answered). */
static void uring_hwq_serve(struct uring_hwq *h)
{
	const struct uring_watch *w = h->d->watch;

	if (__atomic_exchange_n(&h->watch_pending, false, __ATOMIC_ACQ_REL) && w->serve_queue)
		w->serve_queue(w->arg, h->hctx->queue_num);
}

/* Work waits on this thread: its turn must not sleep. */
static bool uring_hwq_busy(struct uring_hwq *h)
{
	return __atomic_load_n(&h->pending, __ATOMIC_ACQUIRE) ||
	       __atomic_load_n(&h->watch_pending, __ATOMIC_ACQUIRE);
}

/*
 * No work waits on this thread: submit and wait.  First look at the ring
 * for up to --poll-usec whatever is in flight, or, with nothing queued or
 * in flight on the whole queue, for the watch's idle poll time if longer,
 * as the 2.6 queue's loop does (uring_poll_idle): the next request of a
 * client at queue depth 1 comes sooner than a sleeping CPU wakes.  The
 * idle poll waits while another hardware queue is busy: a thread with
 * nothing of its own to do would spin on a CPU the busy one needs.  A
 * kick from another thread ends the look too (its eventfd's read
 * completes, or the flag).
 */
static int uring_hwq_wait(struct uring_hwq *h)
{
	const struct uring_watch *w = h->d->watch;
	unsigned int us = w->poll_us;
	uint64_t end;
	int ret;

	if (w->idle_poll_us > us && blk_queue_idle_unlocked(h->d->q))
		us = w->idle_poll_us;
	if (!us)
		return io_uring_submit_and_wait(&h->ring, 1);
	ret = io_uring_submit(&h->ring);
	if (ret < 0)
		return ret;
	/* the real clock even under a virtual one: this spends real CPU time */
	end = blk_clock_now(&blk_real_clock) + us * 1000ull;
	do {
		if (io_uring_get_events(&h->ring) < 0)
			break;
	} while (!io_uring_cq_ready(&h->ring) && !uring_hwq_busy(h) &&
		 blk_clock_now(&blk_real_clock) < end);
	if (io_uring_cq_ready(&h->ring) || uring_hwq_busy(h))
		return 0;
	return io_uring_submit_and_wait(&h->ring, 1);
}

/*
 * The loop has stopped and the queue is idle: answers still to be sent
 * (the watcher's) go out.  One that found no room (the kernel refused the
 * SQ while its CQ had overflowed) asked for another turn: the CQ is
 * reaped and it is sent again, a bounded number of times, since nothing
 * else will run this ring.
 */
static void uring_hwq_last_answers(struct uring_hwq *h)
{
	struct io_uring_cqe *cqe;

	__atomic_store_n(&h->watch_pending, true, __ATOMIC_RELEASE);
	for (unsigned int turn = 0; turn < URING_HWQ_LAST_TURNS; turn++) {
		if (!__atomic_load_n(&h->watch_pending, __ATOMIC_ACQUIRE))
			break;
		uring_hwq_serve(h);
		io_uring_submit(&h->ring);
		if (!io_uring_peek_cqe(&h->ring, &cqe)) {
			blk_queue_lock(h->d->q);
			uring_hwq_reap(h);
			blk_queue_unlock(h->d->q);
		}
	}
}

/*
 * A hardware queue's thread: run the queue when asked (queue_rq under the
 * queue lock puts each request's I/O on this ring), submit, sleep on the
 * ring, end what completed under the queue lock, then serve the watcher
 * (the FUSE requests of this queue's CPUs, which come on this ring).  No
 * lock is held across the wait.
 */
static void *uring_hwq_main(void *arg)
{
	struct uring_hwq *h = arg;
	struct request_queue *q = h->d->q;
	struct io_uring_cqe *cqe;
	unsigned long ended = 0;
	int ret;

	uring_self = h;
	/* the installed liburing may lack io_uring_enable_rings(): the system call */
	if (h->disabled && syscall(__NR_io_uring_register, h->ring.ring_fd,
				   IORING_REGISTER_ENABLE_RINGS, NULL, 0) < 0) {
		fprintf(stderr, "rqdisk: hardware queue %u: enabling its ring: %s\n",
			h->hctx->queue_num, strerror(errno));
		abort(); /* the kernel took the flags a moment ago */
	}
	while (!__atomic_load_n(&h->stop, __ATOMIC_ACQUIRE)) {
		if (__atomic_exchange_n(&h->pending, false, __ATOMIC_ACQ_REL))
			blk_mq_run_hw_queue(h->hctx);
		uring_hwq_arm(h);
		blk_queue_lock(q);
		uring_hwq_notify(h, &ended);
		blk_queue_unlock(q);
		if (uring_hwq_busy(h))
			ret = io_uring_submit(&h->ring);
		else
			ret = uring_hwq_wait(h);
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY)
			fprintf(stderr, "rqdisk: io_uring_submit_and_wait: %s\n", strerror(-ret));
		if (!io_uring_peek_cqe(&h->ring, &cqe)) {
			blk_queue_lock(q);
			uring_hwq_reap(h);
			blk_queue_unlock(q);
		}
		uring_hwq_serve(h);
	}
	uring_hwq_last_answers(h);
	return NULL;
}

/* The threads end; what they leave is the queue's, which is idle. */
void uring_hwqs_join(struct uring_driver *d)
{
	for (unsigned int i = 0; i < d->nr_hwqs; i++) {
		struct uring_hwq *h = &d->hwqs[i];

		if (!h->started)
			continue;
		__atomic_store_n(&h->stop, true, __ATOMIC_RELEASE);
		uring_eventfd_kick(h->efd);
		pthread_join(h->thread, NULL);
		h->started = false;
		h->stop = false;
	}
}

void uring_hwqs_stop(struct uring_driver *d)
{
	uring_hwqs_join(d);
	for (unsigned int i = 0; i < d->nr_hwqs; i++) {
		struct uring_hwq *h = &d->hwqs[i];

		if (h->ring.ring_fd >= 0)
			io_uring_queue_exit(&h->ring);
		if (h->efd >= 0)
			close(h->efd);
	}
	free(d->hwqs);
	d->hwqs = NULL;
	d->nr_hwqs = 0;
	if (d->wake_fd >= 0)
		close(d->wake_fd);
	d->wake_fd = -1;
}

/*
 * As the loop's ring (uring_queue_init): one issuer, completion work run
 * when the thread waits.  Made disabled, so that the thread that enables
 * it (uring_hwq_main) is its one issuer; kernels before 6.1 refuse the
 * flags and get an ordinary ring.
 */
static int uring_hwq_ring_init(struct uring_hwq *h, unsigned int entries)
{
	unsigned int deferred = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
				IORING_SETUP_TASKRUN_FLAG | IORING_SETUP_R_DISABLED;
	unsigned int big = h->d->big_sqe ? IORING_SETUP_SQE128 : 0; /* FUSE's commands */
	int ret = io_uring_queue_init(entries, &h->ring, deferred | big);

	h->disabled = !ret;
	if (ret == -EINVAL)
		ret = io_uring_queue_init(entries, &h->ring, big);
	return ret;
}

/*
 * The thread takes no signal: a termination signal must reach the loop's
 * thread, which lets them in only while it sleeps (uring_watch.waitmask).
 */
static int uring_hwq_spawn(struct uring_hwq *h)
{
	sigset_t all, old;
	int ret;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&h->thread, NULL, uring_hwq_main, h);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

/*
 * mq: a ring and an eventfd per hardware queue, and the loop's eventfd.
 * The rings are made here and entered only by their threads, which run
 * only while the loop does (uring_driver_run): the stack is set up and
 * closed by one thread.
 */
int uring_hwqs_start(struct uring_driver *d, unsigned int entries, char *why,
		     size_t whylen)
{
	struct blk_mq_queue *mq = d->q->mq;
	int ret;

	d->wake_fd = eventfd(0, EFD_CLOEXEC);
	d->hwqs = calloc(mq->set->nr_hw_queues, sizeof(*d->hwqs));
	if (d->wake_fd < 0 || !d->hwqs) {
		snprintf(why, whylen, "hardware queues: %s", strerror(errno));
		return -errno;
	}
	d->nr_hwqs = mq->set->nr_hw_queues;
	for (unsigned int i = 0; i < d->nr_hwqs; i++) { /* what uring_hwqs_stop must not close */
		d->hwqs[i].efd = -1;
		d->hwqs[i].ring.ring_fd = -1;
	}
	for (unsigned int i = 0; i < d->nr_hwqs; i++) {
		struct uring_hwq *h = &d->hwqs[i];

		h->d = d;
		h->hctx = &mq->hctxs[i];
		h->hctx->driver_data = h;
		h->efd = eventfd(0, EFD_CLOEXEC);
		if (h->efd < 0) {
			snprintf(why, whylen, "hardware queue %u: eventfd: %s", i, strerror(errno));
			return -errno;
		}
		ret = uring_hwq_ring_init(h, entries);
		if (ret < 0) {
			h->ring.ring_fd = -1; /* what a failed init left there */
			snprintf(why, whylen, "hardware queue %u: io_uring_queue_init: %s", i,
				 strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* A thread per hardware queue, for the loop's run. */
void uring_hwqs_spawn(struct uring_driver *d)
{
	for (unsigned int i = 0; i < d->nr_hwqs; i++) {
		int ret = uring_hwq_spawn(&d->hwqs[i]);

		if (ret) {
			/* the loop cannot go on without the queue's threads */
			fprintf(stderr, "rqdisk: hardware queue %u: thread: %s\n", i, strerror(ret));
			abort();
		}
		d->hwqs[i].started = true;
	}
}

unsigned int uring_driver_nr_queues(const struct uring_driver *d)
{
	return d->nr_hwqs;
}

/* As blk_mq_map_queues() maps the software queues. */
unsigned int uring_driver_cpu_queue(const struct uring_driver *d, unsigned int cpu)
{
	const struct blk_mq_queue *mq = d->q->mq;

	return mq ? mq->ctxs[cpu % mq->nr_ctx].hctx->queue_num : 0;
}

int uring_driver_thread_queue(const struct uring_driver *d)
{
	return uring_self && uring_self->d == d ? (int)uring_self->hctx->queue_num : -1;
}

struct io_uring_sqe *uring_driver_thread_sqe(struct uring_driver *d, void *tag)
{
	struct io_uring_sqe *sqe;

	if (!uring_self || uring_self->d != d)
		return uring_driver_watch_sqe(d, tag);
	assert(!((uintptr_t)tag & 3) && (uintptr_t)tag >= UD_RESERVED_END);
	if (!uring_hwq_room(uring_self, 1))
		return NULL;
	sqe = io_uring_get_sqe(&uring_self->ring);
	memset(sqe, 0, (uring_self->ring.flags & IORING_SETUP_SQE128) ? 128 : sizeof(*sqe));
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)tag | UD_WATCH_TAG);
	return sqe;
}

/* As run_async: the thread's own ask is seen before it sleeps; another's writes its eventfd. */
void uring_driver_watch_again_queue(struct uring_driver *d, unsigned int n)
{
	struct uring_hwq *h = &d->hwqs[n];

	assert(n < d->nr_hwqs);
	if (__atomic_exchange_n(&h->watch_pending, true, __ATOMIC_ACQ_REL) || uring_self == h)
		return;
	uring_eventfd_kick(h->efd);
}
