/* SPDX-License-Identifier: BSD-3-Clause */
/* driver_uring.h - the daemon's io_uring loop, the request queue's driver: it runs the device stack. */
#ifndef RQDISK_DRIVER_URING_H
#define RQDISK_DRIVER_URING_H

#include <signal.h>
#include <stddef.h>

#include "device.h"

struct uring_driver;
struct io_uring_sqe;
struct blk_mq_ops;
struct request_queue; /* the driver's queue: the backends on the loop see only the stack */

/*
 * uring_driver_new() flags.  Whatever they are, only uring_driver_run(), in
 * the thread that made the driver, drives it: the kernel may then keep
 * completion work until that thread waits, instead of interrupting it for
 * each one (DEFER_TASKRUN, Linux 6.1).
 *
 * URING_DRIVER_SQE128: SQEs of 128 bytes, for the commands of the watched
 * file that carry more than an I/O does (FUSE over io_uring).
 */
#define URING_DRIVER_SQE128 (1u << 1)

/*
 * URING_DRIVER_SYSLOG: the daemon runs detached, its stderr goes nowhere:
 * the stack's layers say what must be seen in syslog too (dev_stack.syslog).
 */
#define URING_DRIVER_SYSLOG (1u << 2)

/* How the file backend opens the image (dev_stack.read_only, .direct). */
#define URING_DRIVER_READ_ONLY (1u << 3)
#define URING_DRIVER_DIRECT (1u << 4)

/*
 * Drive q with a ring of entries SQEs (0: one per request the queue lets
 * out at once) over a stack of backend alone, opened with args (the file
 * backend's: the image's path).  It is also the backend the driver goes
 * back to when uring_driver_set_stack() fails, and the one
 * uring_driver_set_filters() puts filters over.  NULL: no stack until
 * uring_driver_set_stack() gives one, and none again after it fails.  A
 * request leaves the elevator only when the stack can take it.  q->limits
 * must be final but for what the stack raises.  Sets q->queuedata and
 * q->request_fn.  Returns NULL with errno set and a
 * one-line reason in why (errno ENOSYS or EPERM: this kernel or this
 * process has no io_uring).
 */
struct uring_driver *uring_driver_new(struct request_queue *q, unsigned int entries,
				      unsigned int flags, const struct dev_ops *backend,
				      const char *args, char *why, size_t whylen);

/*
 * Put filters, "NAME[:ARGS]" top first, over the driver's own backend, on
 * a disk of capacity sectors (0: the size the backend finds).  Before the
 * loop runs, with no request made yet.  On an error (why says it) the
 * backend is left alone.
 */
int uring_driver_set_filters(struct uring_driver *d, const char *const *filters, unsigned int nr,
			     sector_t capacity, char *why, size_t whylen);

/*
 * The same over another backend (NULL: the driver's own, with its args),
 * opened with args: the file and null backends submit their I/O to the
 * loop through the stack's host_ops (submit_io); one that is not
 * io_uring-native polls its fd or eventfd there (watch_fd), and its
 * callbacks run on the loop's thread.
 */
int uring_driver_set_stack(struct uring_driver *d, const char *const *filters, unsigned int nr,
			   const struct dev_ops *backend, const char *args, sector_t capacity,
			   char *why, size_t whylen);

/*
 * A multi-queue queue's driver (blk_mq_tag_set.ops): a queue made with
 * these ops and given to uring_driver_new() gets a thread and an io_uring
 * ring per hardware queue (made there, ended by uring_driver_free()).
 * run_async wakes the queue's thread; queue_rq, on it, hands the request
 * to the stack under the queue lock, and its I/O goes on that thread's
 * ring, whose completions end it on the same thread.  The loop's thread
 * keeps the timers (the stack's, an elevator's wake-up).
 */
extern const struct blk_mq_ops uring_mq_ops;

/* The stack, for the control tree's device/stack. */
const struct dev_stack *uring_driver_stack(const struct uring_driver *d);

/* Before uring_driver_set_stack: the disk's number in its daemon (dev_stack.disk). */
void uring_driver_set_disk(struct uring_driver *d, unsigned int disk);

/*
 * The daemon's event loop, run in the thread that made the driver: one wait
 * covers the ring's completions and a file to serve (the FUSE device), and
 * whatever one wake-up reads goes out in one submission.  While it runs,
 * only its thread may submit bios.  Completions are reaped here alone.
 */
enum uring_serve {
	URING_SERVE_DRAINED, /* the file had no more input: poll it */
	URING_SERVE_MORE,    /* a batch served, input may remain: come back */
	URING_SERVE_DONE,    /* the file is finished with: drain the queue and return */
	URING_SERVE_BLOCKED, /* input waits for a request to end: serve after the next CQE */
};

struct uring_watch {
	int fd;                               /* polled for input */
	enum uring_serve (*serve)(void *arg); /* reads what fd has; queue lock not held */
	void *arg;
	sigset_t *waitmask; /* the signal mask while the loop sleeps, or NULL */
	/* the CQE of an SQE from uring_driver_watch_sqe(), queue lock held; serve runs next */
	void (*complete)(void *arg, void *tag, int res);
	/*
	 * With the queue idle, look for input this long (µs) before sleeping:
	 * the next request of a client at queue depth 1 comes sooner than a
	 * sleeping CPU wakes.  Never while I/O is queued or in flight.  mq:
	 * each hardware queue's thread too, on its own ring.
	 */
	unsigned int idle_poll_us;
	/*
	 * mq: on hardware queue n's thread, no lock held, after complete ran
	 * there for a CQE of its ring (an SQE from uring_driver_thread_sqe()
	 * on that thread), or after uring_driver_watch_again_queue(n).  NULL:
	 * the watcher never puts SQEs on a hardware queue's ring.
	 */
	void (*serve_queue)(void *arg, unsigned int n);
	/*
	 * mq: each hardware queue's thread looks at its ring this long (µs)
	 * before any sleep, I/O in flight or not (--poll-usec), as SQPOLL's
	 * idle time: the latency of a wake-up traded for a spinning CPU.
	 */
	unsigned int poll_us;
};

/* Runs until serve says DONE and the queue is idle. */
void uring_driver_run(struct uring_driver *d, const struct uring_watch *w);

/*
 * In the loop's thread, while it runs: an SQE of the watcher's own, whose
 * CQE goes to w->complete with tag (4-aligned).  NULL if the SQ is full
 * even after submitting what it holds.  The caller fills it in.
 */
struct io_uring_sqe *uring_driver_watch_sqe(struct uring_driver *d, void *tag);

/*
 * In serve: whether the watched file may have input (its poll fired, or
 * serve last returned MORE).  Serve also runs for the watcher's own CQEs
 * and after uring_driver_watch_again(), when reading the file is wasted.
 */
bool uring_driver_watch_input(const struct uring_driver *d);

/* In the loop's thread: call serve in the next turn, with or without new input. */
void uring_driver_watch_again(struct uring_driver *d);

/*
 * The hardware queues (mq), each with a thread and a ring: their number,
 * 0 on a 2.6 queue; the one the software queue of cpu feeds; and the
 * calling thread's, or -1 for any other thread (the loop's).
 */
unsigned int uring_driver_nr_queues(const struct uring_driver *d);
unsigned int uring_driver_cpu_queue(const struct uring_driver *d, unsigned int cpu);
int uring_driver_thread_queue(const struct uring_driver *d);

/*
 * uring_driver_watch_sqe() on the calling thread's own ring: a hardware
 * queue's (its CQE goes to w->complete on that thread, then serve_queue),
 * or the loop's.  NULL if that SQ is full even after submitting it.
 */
struct io_uring_sqe *uring_driver_thread_sqe(struct uring_driver *d, void *tag);

/* Any thread: hardware queue n's thread calls w->serve_queue in its next turn. */
void uring_driver_watch_again_queue(struct uring_driver *d, unsigned int n);

/* What the driver decided, counted since it was made: tests assert on these. */
struct uring_driver_stats {
	unsigned long idle_polls;         /* idle polls started (watch->idle_poll_us) */
	unsigned long idle_poll_hits;     /* of those, ended by a completion */
	unsigned long idle_poll_timeouts; /* ended because the poll time was up */
	unsigned long sleeps;             /* waits on the ring with nothing to reap */
};

void uring_driver_get_stats(const struct uring_driver *d, struct uring_driver_stats *st);

/* The disk never served (its start failed): the stack's layers take back what they made. */
void uring_driver_abort(struct uring_driver *d);
/*
 * Call once the queue is idle: closes the stack, tears down the ring,
 * detaches from the queue.  0, or what dev_stack_close returned (-errno:
 * a layer's data may not be durable).
 */
int uring_driver_free(struct uring_driver *d);

#endif
