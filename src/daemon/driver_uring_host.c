/* SPDX-License-Identifier: BSD-3-Clause */
/* driver_uring_host.c - what the stack asks of the loop: I/O on the thread's ring, watched fds. */
#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <syslog.h>

#include "driver_uring_impl.h"

/* dev_host_ops.io_room: lock held; the calling thread's ring. */
static bool uring_io_room(void *host, unsigned int need)
{
	return uring_self ? uring_hwq_room(uring_self, need) : uring_sq_room(host, need);
}

/* dev_host_ops.submit_io: an SQE for what io describes, after uring_io_room() said yes. */
static void uring_submit_io(void *host, struct dev_io *io)
{
	struct uring_driver *d = host;
	struct io_uring_sqe *sqe = io_uring_get_sqe(uring_self ? &uring_self->ring : &d->ring);

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
 * Lock held: the watches changed.  The loop's thread arms them now on its
 * ring; a hardware queue's thread (a backend's submit on mq) has the loop
 * do it, since that ring is the loop's alone.
 */
static void uring_watches_changed(struct uring_driver *d)
{
	if (uring_self)
		uring_mq_watches_changed(d);
	else
		uring_arm_fd_watches(d);
}

/*
 * Lock held: poll every watched fd that has no poll out, and take back the
 * polls of unwatched ones (and of ones that want other events now); one
 * without SQ room waits a turn.
 */
void uring_arm_fd_watches(struct uring_driver *d)
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
	uring_watches_changed(d);
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
	bool changed = false;

	LIST_FOREACH(w, &d->fd_watches, link) {
		if (w->fd == fd && !w->removed && w->events != events) {
			w->events = events;
			changed = true;
		}
	}
	if (changed && uring_self) /* the loop's thread arms them in its turn */
		uring_mq_watches_changed(d);
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
		uring_watches_changed(d);
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

/* dev_host_ops.nr_io_queues: a ring per hardware queue (mq), or the loop's one. */
static unsigned int uring_nr_io_queues(void *host)
{
	struct uring_driver *d = host;

	return d->nr_hwqs ? d->nr_hwqs : 1;
}

/* dev_host_ops.io_queue: the calling thread's hardware queue; the loop's thread is 0's. */
static unsigned int uring_io_queue(void *host)
{
	int n = uring_driver_thread_queue(host);

	return n < 0 ? 0 : (unsigned int)n;
}

const struct dev_host_ops uring_host_ops = {
	.watch_fd = uring_watch_fd,
	.unwatch_fd = uring_unwatch_fd,
	.watch_fd_events = uring_watch_fd_events,
	.set_fd_events = uring_set_fd_events,
	.lost_writes = uring_lost_writes,
	.io_room = uring_io_room,
	.submit_io = uring_submit_io,
	.set_io_kick = uring_set_io_kick,
	.nr_io_queues = uring_nr_io_queues,
	.io_queue = uring_io_queue,
};
