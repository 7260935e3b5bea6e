/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * driver_uring.c - the daemon's io_uring loop: the driver of the request
 * queue.  One ring carries the device stack's I/O (the file and null
 * backends' SQEs), the timers (an elevator's wake-up, the stack's
 * filters), and the watched file (the FUSE device, or FUSE's own ring).
 * Every completion runs on the loop's thread.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <syslog.h>
#include <unistd.h>

#include "blk_mq.h"
#include "blkdev.h"
#include "driver_uring.h"
#include "queue_stack.h"

#define NSEC_PER_SEC 1000000000ull

/*
 * user_data of the SQEs that carry no request.  Every other user_data is a
 * struct dev_io (a backend's I/O, or a watched fd's poll: 4-aligned, and
 * no heap pointer is this small), or with UD_WATCH_TAG set a tag of the
 * watcher's.
 */
enum {
	UD_TIMER = 1,    /* the elevator's or the stack's wake-up (IORING_OP_TIMEOUT) */
	UD_TIMER_UPDATE, /* moving that wake-up earlier; the answer does not matter */
	UD_POLL,         /* the event loop's watched file has input */
	UD_POLL_REMOVE,  /* a backend's fd unwatched; the poll's own CQE frees it */
	UD_RESERVED_END,
};

#define UD_WATCH_TAG 2ull /* an SQE of the watcher's own: the rest is its tag */

/*
 * An fd a backend that is not io_uring-native (libnbd, librbd) has the loop
 * poll: a one-shot poll, armed again after each wake-up once ready has run.
 */
struct uring_fd_watch {
	struct dev_io op; /* first: the poll's CQE comes here */
	struct uring_driver *d;
	LIST_ENTRY(uring_fd_watch) link;
	int fd;
	void (*ready)(void *arg);                        /* watch_fd's, or */
	void (*ready_events)(void *arg, unsigned int revents); /* watch_fd_events' */
	void *arg;
	unsigned int events;       /* what the next poll is for */
	unsigned int armed_events; /* what the poll out is for */
	bool cancelling; /* the poll out is taken back: its events are no longer wanted */
	bool armed;   /* a poll SQE is out */
	bool removed; /* unwatched while armed: freed when its CQE comes */
	bool broken;  /* the poll failed (a closed fd): not armed again; ready hears it once */
};

LIST_HEAD(uring_fd_watch_list, uring_fd_watch);

struct uring_driver {
	struct io_uring ring; /* the loop thread's alone while it runs */
	struct request_queue *q;
	struct dev_stack stack; /* the device below the queue */
	sector_t capacity;
	/* the first stack's backend and its args, the one set_stack goes back to (NULL: none) */
	const struct dev_ops *backend;
	char *backend_args;
	bool read_only; /* URING_DRIVER_READ_ONLY: the stack's */
	bool direct;    /* URING_DRIVER_DIRECT: the stack's */
	void (*kick)(void *arg);  /* a backend's work after each reap (continuations) */
	void *kick_arg;
	uint64_t timer_at;  /* when the armed timer fires, 0 for none */
	struct __kernel_timespec timer_ts; /* the kernel reads it at submission */
	bool big_sqe;             /* URING_DRIVER_SQE128 */
	bool syslog;              /* URING_DRIVER_SYSLOG: the stack's too */
	pthread_t creator;        /* the one thread the ring takes SQEs from */
	/* uring_driver_run(): the loop thread submits once a wake-up, not once a request */
	bool looping;
	const struct uring_watch *watch;
	bool watch_ready; /* serve runs in the next turn */
	bool watch_input; /* the watched file may have input */
	bool poll_armed;
	struct uring_fd_watch_list fd_watches; /* a backend's fds (dev_host_ops.watch_fd) */
	struct uring_driver_stats stats;
	/*
	 * A multi-queue queue's hardware queues that asked to run (bit N:
	 * hardware queue N; blk_mq_ops.run_async, from any thread, even with
	 * the queue lock held): the loop runs them once it holds no lock.
	 */
	uint64_t mq_pending;
	void (*mq_request_fn)(struct request_queue *q); /* the core's, given back at the end */
};

static void uring_io_set(struct io_uring_sqe *sqe, struct dev_io *io)
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

/* Lock held: room for need SQEs; a batch that filled the SQ goes out now. */
static bool uring_sq_room(struct uring_driver *d, unsigned int need)
{
	if (io_uring_sq_space_left(&d->ring) < need)
		uring_submit(d);
	return io_uring_sq_space_left(&d->ring) >= need;
}

/* dev_host_ops.io_room: lock held. */
static bool uring_io_room(void *host, unsigned int need)
{
	return uring_sq_room(host, need);
}

/* dev_host_ops.submit_io: an SQE for what io describes, after uring_io_room() said yes. */
static void uring_submit_io(void *host, struct dev_io *io)
{
	struct uring_driver *d = host;
	struct io_uring_sqe *sqe = io_uring_get_sqe(&d->ring);

	assert(sqe); /* the backend looked for room first */
	switch (io->op) {
	case DEV_IO_NOP:
		io_uring_prep_nop(sqe);
		break;
	case DEV_IO_READV:
		io_uring_prep_readv(sqe, io->fd, io->iov, io->nr_iov, io->offset);
		break;
	case DEV_IO_WRITEV:
		io_uring_prep_writev2(sqe, io->fd, io->iov, io->nr_iov, io->offset, io->flags);
		break;
	case DEV_IO_FDATASYNC:
		io_uring_prep_fsync(sqe, io->fd, IORING_FSYNC_DATASYNC);
		break;
	case DEV_IO_FALLOCATE:
		io_uring_prep_fallocate(sqe, io->fd, io->flags, (off_t)io->offset, (off_t)io->len);
		break;
	}
	uring_io_set(sqe, io);
}

/* dev_host_ops.set_io_kick */
static void uring_set_io_kick(void *host, void (*kick)(void *arg), void *arg)
{
	struct uring_driver *d = host;

	d->kick = kick;
	d->kick_arg = arg;
}

/*
 * When the loop must wake with nothing else to wake it: the stack's next
 * timer (a model's completion time, a filter's delay), or the time an
 * elevator asked for.  An elevator's time already past needs none while
 * requests are in flight: their completions run the queue again.  With
 * none in flight it does: the elevator may have asked for a time that
 * passed while the queue ran (a 1 ms idle on a busy machine), and nothing
 * else would run the queue; an absolute timeout in the past fires at once.
 */
static uint64_t uring_wake_time(const struct uring_driver *d)
{
	uint64_t at = d->q->dispatch_at;
	uint64_t dev_at = dev_stack_next_timer(&d->stack);

	if (at && d->q->in_flight && at <= blk_clock_now(d->q->clock))
		at = 0;
	return dev_at && (!at || dev_at < at) ? dev_at : at;
}

/*
 * Ring timeouts are on CLOCK_MONOTONIC: the queue runs on the real clock.
 * One timer at most: an earlier time moves it, a later one waits until it
 * has fired and the loop has run what was due.
 */
static void uring_arm_timer(struct uring_driver *d)
{
	uint64_t at = uring_wake_time(d);
	struct io_uring_sqe *sqe;

	if (!at || (d->timer_at && d->timer_at <= at))
		return;
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
static void uring_request_fn(struct request_queue *q)
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

/*
 * A multi-queue queue's request_fn, lock held: the core runs it where the
 * 2.6 queue would dispatch (a bio queued, a request ended, a layer's
 * kick).  Every hardware queue is asked to run; the loop runs them once
 * the lock is dropped, as blk_mq_run_hw_queue(hctx, true) defers to kblockd.
 */
static void uring_mq_request_fn(struct request_queue *q)
{
	struct uring_driver *d = q->queuedata;

	unsigned int nr = q->mq->set->nr_hw_queues;

	__atomic_fetch_or(&d->mq_pending, nr >= 64 ? ~0ull : (1ull << nr) - 1, __ATOMIC_RELAXED);
}

/* blk_mq_ops.run_async: any thread, any lock held or none. */
static void uring_mq_run_async(struct blk_mq_hw_ctx *hctx)
{
	struct uring_driver *d = hctx->queue->queuedata;

	__atomic_fetch_or(&d->mq_pending, 1ull << hctx->queue_num, __ATOMIC_RELAXED);
}

/*
 * blk_mq_ops.queue_rq, no lock held: the stack takes rq under the queue
 * lock, as on the 2.6 queue (its layers keep state), or it is busy and rq
 * waits at the head of hctx's dispatch list until a request ends.
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

/* No lock held: run every hardware queue that asked, until none asks again. */
static void uring_mq_run(struct uring_driver *d)
{
	struct blk_mq_queue *mq = d->q->mq;
	uint64_t pending;

	if (!mq)
		return;
	while ((pending = __atomic_exchange_n(&d->mq_pending, 0, __ATOMIC_RELAXED)))
		for (unsigned int i = 0; i < mq->set->nr_hw_queues; i++)
			if (pending & (1ull << i))
				blk_mq_run_hw_queue(&mq->hctxs[i]);
}

const struct blk_mq_ops uring_mq_ops = {
	.queue_rq = uring_mq_queue_rq,
	.run_async = uring_mq_run_async,
};

/* One CQE, lock held. */
static void uring_handle(struct uring_driver *d, uint64_t ud, int res)
{
	switch (ud) {
	case UD_TIMER:
		d->timer_at = 0; /* fired (or cancelled): the queue runs after this batch */
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
	__blk_run_queue(d->q);
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
 * Lock held: poll every watched fd that has no poll out, and take back the
 * polls of unwatched ones (and of ones that want other events now); one
 * without SQ room waits a turn.
 */
static void uring_arm_fd_watches(struct uring_driver *d)
{
	struct uring_fd_watch *w;
	struct io_uring_sqe *sqe;

	LIST_FOREACH(w, &d->fd_watches, link) {
		if (w->armed && !w->cancelling && (w->removed || w->armed_events != w->events) &&
		    uring_sq_room(d, 1)) {
			/* its CQE frees the watch, or arms the poll again for the events wanted now */
			sqe = io_uring_get_sqe(&d->ring);
			io_uring_prep_poll_remove(sqe, (uint64_t)(uintptr_t)&w->op);
			io_uring_sqe_set_data64(sqe, UD_POLL_REMOVE);
			w->cancelling = true;
		}
		if (w->armed || w->removed || w->broken || !uring_sq_room(d, 1))
			continue;
		sqe = io_uring_get_sqe(&d->ring);
		io_uring_prep_poll_add(sqe, w->fd, w->events);
		uring_io_set(sqe, &w->op);
		w->armed = true;
		w->armed_events = w->events;
	}
}

/* The poll's CQE, lock held: the backend reads what its fd has, on the loop's thread. */
static void uring_fd_watch_done(struct dev_io *op, int res)
{
	struct uring_fd_watch *w = (struct uring_fd_watch *)op;
	struct uring_driver *d = w->d; /* ready may unwatch: w is gone after it */

	w->armed = false;
	w->cancelling = false;
	if (w->removed) {
		LIST_REMOVE(w, link);
		free(w);
		return;
	}
	/* an error that polling again would only repeat: the backend finds it on its fd */
	w->broken = res < 0 && res != -EINTR && res != -ECANCELED && res != -EAGAIN;
	if (w->ready_events)
		w->ready_events(w->arg, res > 0 ? (unsigned int)res : 0);
	else
		w->ready(w->arg);
	uring_arm_fd_watches(d);
}

static int uring_add_watch(struct uring_driver *d, int fd, unsigned int events,
			   void (*ready)(void *arg),
			   void (*ready_events)(void *arg, unsigned int revents), void *arg)
{
	struct uring_fd_watch *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	*w = (struct uring_fd_watch){ .op.done = uring_fd_watch_done, .d = d, .fd = fd,
				      .ready = ready, .ready_events = ready_events, .arg = arg,
				      .events = events };
	LIST_INSERT_HEAD(&d->fd_watches, w, link);
	uring_arm_fd_watches(d);
	return 0;
}

static int uring_watch_fd(void *host, int fd, void (*ready)(void *arg), void *arg)
{
	return uring_add_watch(host, fd, POLLIN, ready, NULL, arg);
}

static int uring_watch_fd_events(void *host, int fd, unsigned int events,
				 void (*ready)(void *arg, unsigned int revents), void *arg)
{
	return uring_add_watch(host, fd, events, NULL, ready, arg);
}

/* A poll out for other events is taken back when the watches are next armed. */
static void uring_set_fd_events(void *host, int fd, unsigned int events)
{
	struct uring_driver *d = host;
	struct uring_fd_watch *w;

	LIST_FOREACH(w, &d->fd_watches, link) {
		if (w->fd == fd && !w->removed)
			w->events = events;
	}
}

/*
 * An armed poll is cancelled and the watch freed with its CQE; the fd is
 * the caller's still.  The cancel waits for SQ room like any poll: a poll
 * left out on a socket that never speaks again would hold it open.
 */
static void uring_unwatch_fd(void *host, int fd)
{
	struct uring_driver *d = host;
	struct uring_fd_watch *w;

	LIST_FOREACH(w, &d->fd_watches, link) {
		if (w->fd != fd || w->removed)
			continue;
		if (!w->armed) {
			LIST_REMOVE(w, link);
			free(w);
			return;
		}
		w->removed = true;
		uring_arm_fd_watches(d);
		return;
	}
}

/*
 * Acknowledged writes lost (stderr has it already): in the system log
 * too, where a daemon in the background is heard, once per loss.
 */
static void uring_lost_writes(void *host, const char *msg)
{
	(void)host;
	/* the facility in the priority: an openlog() of the daemon's own is not undone */
	syslog(LOG_DAEMON | LOG_WARNING, "%s", msg);
}

static const struct dev_host_ops uring_host_ops = {
	.watch_fd = uring_watch_fd,
	.unwatch_fd = uring_unwatch_fd,
	.watch_fd_events = uring_watch_fd_events,
	.set_fd_events = uring_set_fd_events,
	.lost_writes = uring_lost_writes,
	.io_room = uring_io_room,
	.submit_io = uring_submit_io,
	.set_io_kick = uring_set_io_kick,
};

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
	int ret = 0;

	if (st != URING_SERVE_DONE && d->watch_ready) {
		d->watch_ready = false; /* serve may ask for the next turn itself */
		st = w->serve(w->arg);
		d->watch_input = st == URING_SERVE_MORE;
		d->watch_ready |= d->watch_input;
	}
	uring_mq_run(d);
	blk_queue_lock(d->q);
	if (d->q->mq)
		uring_arm_timer(d); /* what the hardware queues' runs set */
	if (st == URING_SERVE_DRAINED)
		uring_arm_poll(d, w->fd);
	uring_arm_fd_watches(d);
	uring_submit(d);
	blk_queue_unlock(d->q);
	/* input still waiting, or nothing left to wait for: only reap what is there */
	if (!d->watch_ready && !(st == URING_SERVE_DONE && blk_queue_idle_unlocked(d->q))) {
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
	blk_queue_unlock(d->q);
	uring_mq_run(d);
	if (st == URING_SERVE_BLOCKED)
		d->watch_ready = true; /* a CQE came: what it ended may have freed the way */
	return st;
}

void uring_driver_run(struct uring_driver *d, const struct uring_watch *w)
{
	enum uring_serve st = URING_SERVE_MORE;

	assert(pthread_equal(pthread_self(), d->creator)); /* the ring's one issuer */
	d->looping = true;
	d->watch = w;
	d->watch_ready = true; /* input may be there before the first poll */
	d->watch_input = true;
	while (st != URING_SERVE_DONE || !blk_queue_idle_unlocked(d->q))
		st = uring_turn(d, st);
	/* the last reap's answers may wait in the SQ (the watcher's SQEs): send them */
	blk_queue_lock(d->q);
	uring_submit(d);
	blk_queue_unlock(d->q);
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

/* The opcodes this driver sends, by name for the refusal. */
static const struct {
	int op;
	const char *name;
} uring_needed_ops[] = {
	{ IORING_OP_NOP, "NOP" },
	{ IORING_OP_READV, "READV" },
	{ IORING_OP_WRITEV, "WRITEV" },
	{ IORING_OP_FSYNC, "FSYNC" },
	{ IORING_OP_FALLOCATE, "FALLOCATE" },
	{ IORING_OP_TIMEOUT, "TIMEOUT" },
	{ IORING_OP_TIMEOUT_REMOVE, "TIMEOUT_REMOVE" },
};

static int uring_check_kernel(struct uring_driver *d, char *why, size_t whylen)
{
	struct io_uring_probe *p;
	int ret = 0;

	/* Timeout updates came with 5.11, as did this feature bit. */
	if (!(d->ring.features & IORING_FEAT_EXT_ARG)) {
		snprintf(why, whylen, "io_uring: timeout updates need Linux 5.11 or later");
		return -EOPNOTSUPP;
	}
	p = io_uring_get_probe_ring(&d->ring);
	if (!p) {
		snprintf(why, whylen, "io_uring: cannot probe the kernel's opcodes");
		return -EOPNOTSUPP;
	}
	for (size_t i = 0; i < sizeof(uring_needed_ops) / sizeof(uring_needed_ops[0]); i++) {
		if (!io_uring_opcode_supported(p, uring_needed_ops[i].op)) {
			snprintf(why, whylen, "io_uring: the kernel has no IORING_OP_%s",
				 uring_needed_ops[i].name);
			ret = -EOPNOTSUPP;
			break;
		}
	}
	io_uring_free_probe(p);
	return ret;
}

/*
 * A ring only the loop thread enters runs its completion work when that
 * thread waits, not as an interruption the moment each I/O ends: measured
 * 4k random writes at QD32, direct, 7% less CPU an I/O, 5% more IOPS.  The
 * task-run flag makes liburing enter the kernel for completions that are
 * due while the loop reaps without waiting.  Kernels before 6.1 refuse the
 * flags; they get an ordinary ring.
 */
static int uring_queue_init(struct uring_driver *d, unsigned int entries)
{
	unsigned int deferred = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
				IORING_SETUP_TASKRUN_FLAG;
	unsigned int big = d->big_sqe ? IORING_SETUP_SQE128 : 0;
	int ret = io_uring_queue_init(entries, &d->ring, deferred | big);

	if (ret == -EINVAL)
		ret = io_uring_queue_init(entries, &d->ring, big);
	return ret;
}

static int uring_setup_ring(struct uring_driver *d, unsigned int entries, char *why,
			    size_t whylen)
{
	int ret = uring_queue_init(d, entries);

	if (ret < 0) {
		snprintf(why, whylen, "io_uring_queue_init: %s", strerror(-ret));
		return ret;
	}
	ret = uring_check_kernel(d, why, whylen);
	if (ret < 0)
		io_uring_queue_exit(&d->ring);
	return ret;
}

/* The stack: the filters given, over the backend given (NULL: the driver's own). */
static int uring_open_stack(struct uring_driver *d, const char *const *filters, unsigned int nr,
			    const struct dev_ops *backend, const char *image, char *why,
			    size_t whylen)
{
	struct dev_limits lim = { .capacity = d->capacity,
				  .logical_block_size = d->q->limits.logical_block_size };
	int ret;

	if (!backend) {
		backend = d->backend;
		image = d->backend_args;
	}
	assert(backend); /* a driver made with none is given one with each stack */
	d->stack.host = d;
	d->stack.host_ops = &uring_host_ops;
	/* before the layers start their threads: the log's writer reads it */
	d->stack.syslog = d->syslog;
	d->stack.read_only = d->read_only;
	d->stack.direct = d->direct;
	blk_stack_set_queue(&d->stack, d->q);
	ret = dev_stack_open(&d->stack, filters, nr, backend, image, &lim, why, whylen);
	if (ret)
		return ret;
	ret = blk_queue_stack_limits(d->q, &lim, why, whylen);
	if (ret) {
		d->stack.aborted = true; /* the layers take back what they made */
		dev_stack_close(&d->stack);
		return ret;
	}
	blk_queue_set_pdu_size(d->q, dev_stack_pdu_size(&d->stack));
	return 0;
}

struct uring_driver *uring_driver_new(struct request_queue *q, unsigned int entries,
				      unsigned int flags, const struct dev_ops *backend,
				      const char *args, char *why, size_t whylen)
{
	unsigned int max_segs = queue_max_segments(&q->limits);
	long iov_max = sysconf(_SC_IOV_MAX);
	struct uring_driver *d;
	int ret;

	/* one readv/writev carries a whole request */
	if (iov_max > 0 && max_segs > iov_max) {
		snprintf(why, whylen, "max segments %u is above IOV_MAX (%ld)", max_segs, iov_max);
		errno = EINVAL;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(why, whylen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	d->q = q;
	d->big_sqe = flags & URING_DRIVER_SQE128;
	d->syslog = flags & URING_DRIVER_SYSLOG;
	d->read_only = flags & URING_DRIVER_READ_ONLY;
	d->direct = flags & URING_DRIVER_DIRECT;
	d->backend = backend;
	d->creator = pthread_self();
	LIST_INIT(&d->fd_watches);
	if (args && !(d->backend_args = strdup(args))) {
		snprintf(why, whylen, "out of memory");
		free(d);
		errno = ENOMEM;
		return NULL;
	}
	ret = uring_setup_ring(d, entries ? entries : q->limits.nr_requests, why, whylen);
	if (!ret && backend) {
		ret = uring_open_stack(d, NULL, 0, NULL, NULL, why, whylen);
		if (ret)
			io_uring_queue_exit(&d->ring);
	}
	if (ret) {
		free(d->backend_args);
		free(d);
		errno = -ret;
		return NULL;
	}
	q->queuedata = d;
	d->mq_request_fn = q->request_fn;
	q->request_fn = q->mq ? uring_mq_request_fn : uring_request_fn;
	return d;
}

int uring_driver_set_stack(struct uring_driver *d, const char *const *filters, unsigned int nr,
			   const struct dev_ops *backend, const char *args, sector_t capacity,
			   char *why, size_t whylen)
{
	int ret;

	assert(!d->looping && blk_queue_idle(d->q));
	dev_stack_close(&d->stack);
	d->capacity = capacity;
	ret = uring_open_stack(d, filters, nr, backend, args, why, whylen);
	if (ret && d->backend) { /* its own backend alone again, so that the driver stays whole */
		char ignored[8];

		if (uring_open_stack(d, NULL, 0, NULL, NULL, ignored, sizeof(ignored)))
			abort(); /* it opened a moment ago; nothing but memory differs */
	}
	return ret;
}

int uring_driver_set_filters(struct uring_driver *d, const char *const *filters, unsigned int nr,
			     sector_t capacity, char *why, size_t whylen)
{
	return uring_driver_set_stack(d, filters, nr, NULL, NULL, capacity, why, whylen);
}

const struct dev_stack *uring_driver_stack(const struct uring_driver *d)
{
	return &d->stack;
}

void uring_driver_abort(struct uring_driver *d)
{
	d->stack.aborted = true;
}

int uring_driver_free(struct uring_driver *d)
{
	int ret;

	if (!d)
		return 0;
	ret = dev_stack_close(&d->stack);
	while (!LIST_EMPTY(&d->fd_watches)) { /* the ring's exit cancels their polls */
		struct uring_fd_watch *w = LIST_FIRST(&d->fd_watches);

		LIST_REMOVE(w, link);
		free(w);
	}
	io_uring_queue_exit(&d->ring); /* cancels an armed timer */
	if (d->q->queuedata == d) {
		d->q->queuedata = NULL;
		d->q->request_fn = d->q->mq ? d->mq_request_fn : NULL;
	}
	free(d->backend_args);
	free(d);
	return ret;
}
