/* driver_uring.h - the io_uring driver: dispatched requests become SQEs on the backing file. */
#ifndef RQDISK_DRIVER_URING_H
#define RQDISK_DRIVER_URING_H

#include <signal.h>
#include <stddef.h>

#include "blkdev.h"
#include "model.h"

struct uring_driver;

/*
 * uring_driver_new() flags.  URING_DRIVER_LOOP: only uring_driver_run(), in
 * the thread that made the driver, will drive it; never the completion
 * thread.  The kernel may then keep completion work until that thread
 * waits, instead of interrupting it for each one (DEFER_TASKRUN, Linux 6.1).
 */
#define URING_DRIVER_LOOP (1u << 0)
/*
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
 * the queue lets out at once).  q->limits must be final.  Sets q->queuedata
 * and q->request_fn.  Returns NULL with errno set and a one-line reason in
 * why (errno ENOSYS or EPERM: this kernel or this process has no io_uring).
 */
struct uring_driver *uring_driver_new(struct request_queue *q, int fd, unsigned int entries,
				      unsigned int flags, char *why, size_t whylen);

/*
 * Time completions by m (NULL: none): each request ends no earlier than the
 * model says the device would end it, and no more than the model's depth
 * are in flight.  Call before starting; the caller keeps m.
 */
void uring_driver_set_model(struct uring_driver *d, struct disk_model *m);

/*
 * The daemon's event loop, run in the calling thread in place of the
 * completion thread: one wait covers the ring's completions and a file to
 * serve (the FUSE device), and whatever one wake-up reads goes out in one
 * submission.  While it runs, only its thread may submit bios.
 */
enum uring_serve {
	URING_SERVE_DRAINED, /* the file had no more input: poll it */
	URING_SERVE_MORE,    /* a batch served, input may remain: come back */
	URING_SERVE_DONE,    /* the file is finished with: drain the queue and return */
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

/* Start the completion thread.  Returns 0 or -errno (-EINVAL for a URING_DRIVER_LOOP driver). */
int uring_driver_start(struct uring_driver *d);

/* Stop and join the completion thread.  Call once the queue is idle. */
void uring_driver_stop(struct uring_driver *d);

/* Stops the thread if still running, tears down the ring, detaches from the queue. */
void uring_driver_free(struct uring_driver *d);

#endif
