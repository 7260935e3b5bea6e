/* driver_uring.h - the io_uring driver: dispatched requests become SQEs on the backing file. */
#ifndef RQDISK_DRIVER_URING_H
#define RQDISK_DRIVER_URING_H

#include <stddef.h>

#include "blkdev.h"
#include "model.h"

struct uring_driver;

/*
 * Drive q from the file fd with a ring of entries SQEs (0: one per request
 * the queue lets out at once).  q->limits must be final.  Sets q->queuedata
 * and q->request_fn.  Returns NULL with errno set and a one-line reason in
 * why (errno ENOSYS or EPERM: this kernel or this process has no io_uring).
 */
struct uring_driver *uring_driver_new(struct request_queue *q, int fd, unsigned int entries,
				      char *why, size_t whylen);

/*
 * Time completions by m (NULL: none): each request ends no earlier than the
 * model says the device would end it, and no more than the model's depth
 * are in flight.  Call before starting; the caller keeps m.
 */
void uring_driver_set_model(struct uring_driver *d, struct disk_model *m);

/* Start the completion thread.  Returns 0 or -errno. */
int uring_driver_start(struct uring_driver *d);

/* Stop and join the completion thread.  Call once the queue is idle. */
void uring_driver_stop(struct uring_driver *d);

/* Stops the thread if still running, tears down the ring, detaches from the queue. */
void uring_driver_free(struct uring_driver *d);

#endif
