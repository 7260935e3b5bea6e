/* SPDX-License-Identifier: BSD-3-Clause */
/* nbd_conn.h - one libnbd connection: connected with a deadline, polled in the loop. */
#ifndef RQDISK_NBD_CONN_H
#define RQDISK_NBD_CONN_H

#include <libnbd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device.h"

enum nbd_conn_state {
	NBD_CONN_DOWN,       /* no handle */
	NBD_CONN_CONNECTING, /* a handle negotiating, watched in the loop */
	NBD_CONN_UP,         /* ready for commands */
};

struct nbd_conn {
	void *owner; /* the backend's */
	struct nbd_handle *h;
	int fd;
	bool watched;
	unsigned int events; /* what the watch polls for */
	enum nbd_conn_state state;
	uint64_t deadline; /* connecting: given up at this time */
	unsigned int sndbuf; /* bytes the socket takes before a send waits: the largest request */
};

/*
 * Connect to uri before the loop runs, waiting at most timeout_ms for the
 * server to answer: a server that accepts and never speaks does not hang
 * the start.  0, or -errno with a one-line reason in why.
 */
int nbd_conn_connect_wait(struct nbd_conn *c, const char *uri, unsigned int timeout_ms, char *why,
			  size_t whylen);
/* Start connecting from the loop, without blocking: CONNECTING, or -errno (still DOWN). */
int nbd_conn_connect_start(struct nbd_conn *c, const char *uri);
/* Poll c's socket in the host's loop for what libnbd waits for; ready gets arg. */
int nbd_conn_watch(struct nbd_conn *c, struct blk_dev *dev,
		   void (*ready)(void *arg, unsigned int revents), void *arg);
/* Poll for output too while libnbd has bytes to send. */
void nbd_conn_update_events(struct nbd_conn *c, struct blk_dev *dev);
/*
 * The socket is ready: libnbd reads and writes what it can, running
 * completion callbacks.  A connecting one may become UP.  false: the
 * connection is dead (its commands' callbacks have run with ENOTCONN).
 */
bool nbd_conn_notify(struct nbd_conn *c, unsigned int revents);
/* Close at once: commands in flight are lost, their callbacks never run. */
void nbd_conn_drop(struct nbd_conn *c, struct blk_dev *dev);
/*
 * At exit: flush what the server caches (flush true), say goodbye, close,
 * waiting at most timeout_ms in all.  0, or why the flush did not
 * succeed: -ETIMEDOUT (no reply), the server's error, or that of a
 * connection found dead.
 */
int nbd_conn_finish(struct nbd_conn *c, struct blk_dev *dev, bool flush, unsigned int timeout_ms);

#endif
