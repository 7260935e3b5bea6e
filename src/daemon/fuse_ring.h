/* SPDX-License-Identifier: BSD-3-Clause */
/* fuse_ring.h - FUSE requests carried on io_uring (Linux 6.14+): the loop's ring, or each hardware queue's. */
#ifndef RQDISK_FUSE_RING_H
#define RQDISK_FUSE_RING_H

#include <stdbool.h>
#include <stddef.h>

#include "driver_uring.h"
#include "frontend.h"

struct fuse_ring;

/*
 * Whether this kernel will carry FUSE requests on io_uring: 1 yes, 0 no
 * (with the reason in why), for the refusal before anything is mounted.
 */
int fuse_ring_available(char *why, size_t whylen);

/* fuse_ring_new() flags */
/*
 * --fuse-uring=auto: a kernel that turns the ring down (no offer in its
 * INIT, EOPNOTSUPP for the entries) is no error; requests stay on
 * /dev/fuse and nothing is said.
 */
#define FUSE_RING_QUIET (1u << 0)
/* For the tests: take the kernel's INIT as offering the ring, whatever it says. */
#define FUSE_RING_ASSUME_OFFER (1u << 1)

/*
 * A ring for session se on the FUSE device fd, whose requests go to disk.
 * On a driver with hardware queues (mq) each hardware queue's thread
 * carries the entries of the CPUs mapped to it, on its own ring.
 * Installs the session's reply path; call before the first request is
 * read.  The ring carries nothing until the kernel's INIT offers it;
 * disk->fuse_on_ring says when it does.
 */
struct fuse_ring *fuse_ring_new(struct fuse_session *se, int fd, struct rqdisk *disk,
				struct uring_driver *driver, unsigned int flags);

/* A request read from the FUSE device: the INIT among them is the offer. */
void fuse_ring_saw_request(struct fuse_ring *r, const void *mem, size_t size);

/*
 * In the loop's serve: register the entries once INIT is answered, answer
 * what the kernel has handed over, and send the replies that could not
 * get an SQE.
 */
void fuse_ring_serve(struct fuse_ring *r);

/*
 * mq, on hardware queue n's thread (uring_watch.serve_queue): register its
 * entries, answer what the kernel has handed it, send the answers made for
 * it on other threads.  The 2.6 queue's loop does it all in
 * fuse_ring_serve().
 */
void fuse_ring_serve_queue(struct fuse_ring *r, unsigned int n);

/*
 * The session is over, on the loop's thread: nothing more is answered,
 * and no thread is answering once this returns (answers of requests in
 * flight still go out).  Before the queue is drained at the end.
 */
void fuse_ring_stop(struct fuse_ring *r);

/* uring_watch.complete for the ring's commands, on the thread whose ring carried them. */
void fuse_ring_complete(void *arg, void *tag, int res);

/* Whether the entries' buffers are locked in memory (mlock was permitted). */
bool fuse_ring_locked(const struct fuse_ring *r);

void fuse_ring_free(struct fuse_ring *r);

#endif
