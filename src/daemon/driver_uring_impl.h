/* SPDX-License-Identifier: BSD-3-Clause */
/* driver_uring_impl.h - what the io_uring driver's files share: its structs, their calls. */
#ifndef RQDISK_DRIVER_URING_IMPL_H
#define RQDISK_DRIVER_URING_IMPL_H

#include <liburing.h>
#include <pthread.h>

#include "blkdev.h"
#include "driver_uring.h"

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
	UD_WAKE,         /* mq: the thread's eventfd was written (a hardware queue's, the loop's) */
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

/*
 * A hardware queue's thread on a multi-queue queue: its own ring carries
 * the backend I/O of the requests it dispatches, and their completions end
 * those requests on it.  It sleeps on the ring; run_async wakes it with
 * its eventfd.
 */
struct uring_hwq {
	struct uring_driver *d;
	struct blk_mq_hw_ctx *hctx;
	struct io_uring ring; /* this thread's alone */
	pthread_t thread;
	bool started;
	bool disabled; /* made disabled: its thread enables it, and is its one issuer */
	int efd;
	uint64_t efd_buf; /* what the eventfd's read brings */
	bool efd_armed;   /* a read of it is out */
	bool pending;     /* atomic: asked to run (run_async) */
	bool watch_pending; /* atomic: the watcher's serve_queue is to run */
	bool stop;        /* atomic: the driver is going */
};

/* driver_uring_mq.c: the hardware queue whose thread this is, or NULL */
extern __thread struct uring_hwq *uring_self;

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
	void (*mq_request_fn)(struct request_queue *q); /* the core's, given back at the end */
	struct uring_hwq *hwqs; /* mq: a thread per hardware queue */
	unsigned int nr_hwqs;
	/*
	 * mq: the loop's own eventfd, written by a hardware queue's thread
	 * when the loop must arm an earlier timer (timer_wake), or when
	 * requests ended while the loop waits for one to (end_wake).  Under
	 * the queue lock.
	 */
	int wake_fd;
	uint64_t wake_buf;
	bool wake_armed;
	bool timer_wake;
	bool end_wake;
	/*
	 * mq: the queue's ends (nr_ended: every request's, those the core ends
	 * itself, as a barrier whose preflush failed, too) at the loop's last
	 * hold before serve looked.
	 */
	unsigned long ended_seen;
	bool watch_wake; /* the fd watches changed on a hardware queue's thread */
	bool timer_fired; /* the loop's timer fired this reap: the hardware queues run */
};

/* driver_uring.c: the loop */
void uring_io_set(struct io_uring_sqe *sqe, struct dev_io *io);
bool uring_sq_make_room(struct uring_driver *d, unsigned int need);
bool uring_hwq_make_room(struct uring_hwq *h, unsigned int need);
void uring_arm_timer_at(struct uring_driver *d, uint64_t at);
void uring_request_fn(struct request_queue *q);

/*
 * The next three are asked several times for every request (each
 * dev_can_take() of the stack, each run of the queue): inline, their
 * common answer costs no call.
 */

/* Lock held: room for need SQEs; a batch that filled the SQ goes out now. */
static inline bool uring_sq_room(struct uring_driver *d, unsigned int need)
{
	return io_uring_sq_space_left(&d->ring) >= need || uring_sq_make_room(d, need);
}

/* The same on a hardware queue's thread, whose ring it is. */
static inline bool uring_hwq_room(struct uring_hwq *h, unsigned int need)
{
	return io_uring_sq_space_left(&h->ring) >= need || uring_hwq_make_room(h, need);
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
static inline uint64_t uring_wake_time(const struct uring_driver *d)
{
	uint64_t at = d->q->dispatch_at;
	uint64_t dev_at = dev_stack_next_timer(&d->stack);

	if (at && d->q->in_flight && at <= blk_clock_now(d->q->clock))
		at = 0;
	return dev_at && (!at || dev_at < at) ? dev_at : at;
}

/*
 * The loop's one timer at the wake time, unless none is needed or the
 * armed one comes no later (it then fires, and the loop runs what was due).
 */
static inline void uring_arm_timer(struct uring_driver *d)
{
	uint64_t at = uring_wake_time(d);

	if (at && (!d->timer_at || d->timer_at > at))
		uring_arm_timer_at(d, at);
}

/* driver_uring_host.c: the stack's host ops */
extern const struct dev_host_ops uring_host_ops;
void uring_arm_fd_watches(struct uring_driver *d);

/* driver_uring_mq.c: the hardware queues' threads */
void uring_mq_request_fn(struct request_queue *q);
bool uring_mq_turn(struct uring_driver *d, enum uring_serve st);
void uring_mq_reaped(struct uring_driver *d);
void uring_mq_watches_changed(struct uring_driver *d);
void uring_hwqs_join(struct uring_driver *d);
void uring_hwqs_stop(struct uring_driver *d);
int uring_hwqs_start(struct uring_driver *d, unsigned int entries, char *why, size_t whylen);
void uring_hwqs_spawn(struct uring_driver *d);

#endif
