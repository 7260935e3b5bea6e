/* driver_uring.h - the io_uring driver: dispatched requests become SQEs on the backing file. */
#ifndef RQDISK_DRIVER_URING_H
#define RQDISK_DRIVER_URING_H

#include <signal.h>
#include <stddef.h>

#include "blkdev.h"
#include "model.h"

struct uring_driver;

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
 * URING_DRIVER_NULL: no I/O on the file.  Every request ends, whole and
 * without error, when a NOP in its place comes back, as on the kernel's
 * null_blk: what rqdisk itself costs, without a device's time.  Reads leave
 * their memory as it was; writes are dropped.
 */
#define URING_DRIVER_NULL (1u << 2)

/*
 * Drive q from the file fd with a ring of entries SQEs (0: one per request
 * the queue lets out at once).  A request leaves the elevator only when the
 * driver can take it: a free slot (no more than a model's depth) and room
 * in the SQ.  q->limits must be final.  Sets q->queuedata and
 * q->request_fn.  Returns NULL with errno set and a one-line reason in why
 * (errno ENOSYS or EPERM: this kernel or this process has no io_uring).
 */
struct uring_driver *uring_driver_new(struct request_queue *q, int fd, unsigned int entries,
				      unsigned int flags, char *why, size_t whylen);

/*
 * Time completions by m (NULL: none): each request ends no earlier than the
 * model says the device would end it, and no more than the model's depth
 * are in flight; the rest wait in the elevator.  Call before the loop runs;
 * the caller keeps m.
 */
void uring_driver_set_model(struct uring_driver *d, struct disk_model *m);

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
	 * sleeping CPU wakes.  Never while I/O is queued or in flight.
	 */
	unsigned int idle_poll_us;
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

/* What the driver decided, counted since it was made: tests assert on these. */
struct uring_driver_stats {
	unsigned long idle_polls;         /* idle polls started (watch->idle_poll_us) */
	unsigned long idle_poll_hits;     /* of those, ended by a completion */
	unsigned long idle_poll_timeouts; /* ended because the poll time was up */
	unsigned long sleeps;             /* waits on the ring with nothing to reap */
	unsigned long zero_writes;        /* write-zeroes done by writing zeros: no ZERO_RANGE */
};

void uring_driver_get_stats(const struct uring_driver *d, struct uring_driver_stats *st);

/* Call once the queue is idle: tears down the ring, detaches from the queue. */
void uring_driver_free(struct uring_driver *d);

#endif
