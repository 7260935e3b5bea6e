/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nbd_conn.c - one libnbd connection: connected through libnbd's
 * asynchronous state machine, so that no wait is longer than its deadline
 * (before the loop runs) and none blocks the loop (a reconnection).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "nbd_conn.h"

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* What libnbd waits for on its socket, as poll events. */
static unsigned int nbd_conn_wanted(struct nbd_handle *h)
{
	unsigned int dir = nbd_aio_get_direction(h);
	unsigned int events = (dir & LIBNBD_AIO_DIRECTION_READ ? POLLIN : 0) |
			      (dir & LIBNBD_AIO_DIRECTION_WRITE ? POLLOUT : 0);

	return events ? events : POLLIN; /* a hang-up comes whatever is polled */
}

/*
 * Hand libnbd what came, each only in a state that waits for it (a
 * connect in progress waits to write): false once the connection is
 * dead or closed.  A hang-up or error is for whichever way it waits.
 */
static bool nbd_conn_pump(struct nbd_handle *h, unsigned int revents)
{
	unsigned int failed = revents & (POLLHUP | POLLERR) ? POLLIN | POLLOUT : 0;
	int ret = 0;

	revents |= failed;
	if ((revents & POLLIN) && (nbd_aio_get_direction(h) & LIBNBD_AIO_DIRECTION_READ))
		ret = nbd_aio_notify_read(h);
	if (!ret && (revents & POLLOUT) &&
	    (nbd_aio_get_direction(h) & LIBNBD_AIO_DIRECTION_WRITE))
		ret = nbd_aio_notify_write(h);
	return !ret && !nbd_aio_is_dead(h) && !nbd_aio_is_closed(h);
}

/* Drive h until done(h, arg) is true, the connection dies, or deadline (ms) passes. */
static int nbd_conn_wait(struct nbd_handle *h, bool (*done)(struct nbd_handle *h, void *arg),
			 void *arg, uint64_t deadline)
{
	while (!done(h, arg)) {
		struct pollfd pfd = { .fd = nbd_aio_get_fd(h), .events = 0 };
		uint64_t now = mono_ms();
		int n;

		if (pfd.fd < 0 || nbd_aio_is_dead(h) || nbd_aio_is_closed(h))
			return -EIO;
		if (now >= deadline)
			return -ETIMEDOUT;
		pfd.events = (short)nbd_conn_wanted(h);
		n = poll(&pfd, 1, (int)(deadline - now));
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0 && !nbd_conn_pump(h, (unsigned int)pfd.revents))
			return -EIO;
	}
	return 0;
}

static bool nbd_conn_not_connecting(struct nbd_handle *h, void *arg)
{
	(void)arg;
	return !nbd_aio_is_connecting(h);
}

static bool nbd_conn_closed(struct nbd_handle *h, void *arg)
{
	(void)arg;
	return nbd_aio_is_closed(h);
}

int nbd_conn_connect_wait(struct nbd_conn *c, const char *uri, unsigned int timeout_ms, char *why,
			  size_t whylen)
{
	int ret = nbd_conn_connect_start(c, uri);

	if (ret) {
		snprintf(why, whylen, "nbd: %s: %s", uri,
			 nbd_get_error() ? nbd_get_error() : strerror(-ret));
		return ret;
	}
	ret = nbd_conn_wait(c->h, nbd_conn_not_connecting, NULL, mono_ms() + timeout_ms);
	if (!ret && !nbd_aio_is_ready(c->h))
		ret = -EIO;
	if (ret == -ETIMEDOUT)
		snprintf(why, whylen, "nbd: %s: the server did not answer within %u s", uri,
			 timeout_ms / 1000);
	else if (ret)
		snprintf(why, whylen, "nbd: %s: %s", uri,
			 nbd_get_error() ? nbd_get_error() : strerror(-ret));
	if (ret) {
		nbd_close(c->h);
		c->h = NULL;
		c->state = NBD_CONN_DOWN;
		return ret;
	}
	c->state = NBD_CONN_UP;
	return 0;
}

/*
 * A Unix socket takes 208 KiB (net.core.wmem_default) before a send waits
 * and never grows it, so a 1 MiB write went out in five sends, each
 * waiting for the server to read the last: sequential writes ran at 0.75x
 * of nbdfuse's four connections.  Room for the largest request lets it go
 * in one (the kernel doubles the figure for its own bookkeeping).  Root
 * may pass net.core.wmem_max; where it cannot, the most it allows.  TCP
 * sizes its buffers itself, and setting one would stop that.
 */
static void nbd_conn_size_sndbuf(struct nbd_conn *c)
{
	int domain = 0, size = (int)c->sndbuf, now = 0;
	socklen_t len = sizeof(domain);

	if (getsockopt(c->fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) || domain != AF_UNIX)
		return;
	len = sizeof(now);
	if (!size || getsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &now, &len) || now / 2 >= size)
		return;
	if (setsockopt(c->fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)))
		setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
}

/*
 * Local files named in the URI (tls-psk-file) stay refused: libnbd's
 * default.  A host name is looked up before this returns: give an
 * address where a reconnection must not wait for DNS.
 */
int nbd_conn_connect_start(struct nbd_conn *c, const char *uri)
{
	c->h = nbd_create();
	if (!c->h)
		return -ENOMEM;
#ifdef LIBNBD_HAVE_NBD_SET_PREAD_INITIALIZE
	/*
	 * A failed read's buffer never reaches the reader (the whole request
	 * fails): zeroing every buffer first is a memset of each 1 MiB read.
	 */
	nbd_set_pread_initialize(c->h, false);
#endif
	if (nbd_aio_connect_uri(c->h, uri) || nbd_aio_get_fd(c->h) < 0) {
		int err = nbd_get_errno();

		nbd_close(c->h);
		c->h = NULL;
		return -(err ? err : EIO);
	}
	c->fd = nbd_aio_get_fd(c->h);
	nbd_conn_size_sndbuf(c);
	c->state = NBD_CONN_CONNECTING;
	return 0;
}

int nbd_conn_watch(struct nbd_conn *c, struct blk_dev *dev,
		   void (*ready)(void *arg, unsigned int revents), void *arg)
{
	const struct dev_host_ops *ops = dev->stack->host_ops;
	int ret;

	c->events = nbd_conn_wanted(c->h);
	ret = ops->watch_fd_events(dev->stack->host, c->fd, c->events, ready, arg);
	c->watched = !ret;
	return ret;
}

void nbd_conn_update_events(struct nbd_conn *c, struct blk_dev *dev)
{
	unsigned int events;

	if (!c->watched)
		return;
	events = nbd_conn_wanted(c->h);
	if (events != c->events)
		dev->stack->host_ops->set_fd_events(dev->stack->host, c->fd, events);
	c->events = events;
}

bool nbd_conn_notify(struct nbd_conn *c, unsigned int revents)
{
	if (!nbd_conn_pump(c->h, revents))
		return false;
	if (c->state == NBD_CONN_CONNECTING && !nbd_aio_is_connecting(c->h)) {
		if (!nbd_aio_is_ready(c->h))
			return false;
		c->state = NBD_CONN_UP;
	}
	return true;
}

void nbd_conn_drop(struct nbd_conn *c, struct blk_dev *dev)
{
	if (c->watched)
		dev->stack->host_ops->unwatch_fd(dev->stack->host, c->fd);
	c->watched = false;
	if (c->h)
		nbd_close(c->h);
	c->h = NULL;
	c->state = NBD_CONN_DOWN;
}

static int nbd_conn_flush_done(void *user_data, int *error)
{
	int *result = user_data;

	*result = *error ? -*error : 1;
	return 1;
}

/* The exit flush's result: 0 while out, 1 done, -errno failed. */
static bool nbd_conn_flush_over(struct nbd_handle *h, void *arg)
{
	(void)h;
	return *(int *)arg != 0;
}

/* Flush c's export and wait for the reply until deadline: 0, or -errno. */
static int nbd_conn_flush_wait(struct nbd_conn *c, uint64_t deadline)
{
	int flushed = 0, ret;
	nbd_completion_callback cb = { .callback = nbd_conn_flush_done, .user_data = &flushed };

	if (nbd_aio_flush(c->h, cb, 0) < 0)
		return -(nbd_get_errno() ? nbd_get_errno() : EIO);
	ret = nbd_conn_wait(c->h, nbd_conn_flush_over, &flushed, deadline);
	return ret ? ret : flushed < 0 ? flushed : 0;
}

int nbd_conn_finish(struct nbd_conn *c, struct blk_dev *dev, bool flush, unsigned int timeout_ms)
{
	uint64_t deadline = mono_ms() + timeout_ms;
	int ret = 0;

	if (c->watched)
		dev->stack->host_ops->unwatch_fd(dev->stack->host, c->fd);
	c->watched = false;
	if (c->state == NBD_CONN_UP && flush)
		ret = nbd_conn_flush_wait(c, deadline);
	if (c->state == NBD_CONN_UP && !nbd_aio_disconnect(c->h, 0))
		nbd_conn_wait(c->h, nbd_conn_closed, NULL, deadline);
	nbd_conn_drop(c, dev);
	return ret;
}
