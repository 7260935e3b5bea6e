/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backend_nbd.c - the nbd backend: an NBD server's export as the disk.
 * Its connections (nbd_conn.c) connect before the loop runs, the export
 * says what the disk is (nbd_export.c); then each
 * request becomes asynchronous commands (one per piece of its memory the
 * server takes at once) on one connection, round robin, a flush on every
 * one; libnbd's sockets are polled in the loop through the host's watch,
 * and the commands' completion callbacks, run on the loop's thread, end
 * the request: no thread, no hand-off.
 *
 * A server that goes away (its socket closes, or a command has no reply
 * within the timeout) is reconnected from the loop, without blocking it;
 * meanwhile requests wait, and are sent again on the new connections.
 * Every request ends within the timeout of its coming here: done, or EIO.
 * Writes already answered that no flush covered may have gone with the
 * server: counted and said (dev_lost_writes), and the next flush fails
 * with EIO (nbd_lost.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <libnbd.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "nbd_impl.h"

/* A socket's send buffer holds at most this much, whatever max_hw_sectors_kb says. */
#define NBD_MAX_SNDBUF (32u << 20)

/*
 * A server that does not say its connections see each other's writes
 * (multi-conn) gets one: requests spread over several would not be
 * consistent.
 */
static int nbd_connect_more(struct nbd_backend *nb, char *why, size_t whylen)
{
	unsigned int timeout_ms = (unsigned int)(nb->timeout_ns / 1000000);

	if (nb->nr_conns > 1 && nbd_can_multi_conn(nb->conns[0].h) != 1) {
		fprintf(stderr,
			"rqdisk: nbd: %s: the server does not advertise multi-conn: one "
			"connection, not %u\n",
			nb->uri, nb->nr_conns);
		nb->nr_conns = 1;
	}
	for (unsigned int i = 1; i < nb->nr_conns; i++) {
		int ret = nbd_conn_connect_wait(&nb->conns[i], nb->uri, timeout_ms, why, whylen);

		if (ret)
			return ret;
		if (nbd_get_size(nb->conns[i].h) != nb->ex.size) {
			snprintf(why, whylen, "nbd: %s: connection %u found another export", nb->uri,
				 i + 1);
			return -EIO;
		}
	}
	return 0;
}

/* What follows the URI; rqdisk sets them from --nbd-timeout and --connections. */
static const struct dev_key nbd_keys[] = {
	{ .name = "timeout", .min = 1, .max = NBD_MAX_TIMEOUT,
	  .help = "seconds a request waits for the server before it fails (--nbd-timeout)" },
	{ .name = "connections", .min = 1, .max = NBD_MAX_CONNECTIONS,
	  .help = "connections to a server that offers multi-conn (--connections)" },
	{ .name = NULL },
};

/* "URI[ timeout=SECONDS,connections=N]": what rqdisk opens the backend with. */
static int nbd_parse_args(struct nbd_backend *nb, const char *args, char *why, size_t whylen)
{
	uint64_t vals[] = { NBD_DEFAULT_TIMEOUT, 1 };
	const char *space;
	int ret;

	if (!args || !*args) {
		snprintf(why, whylen, "nbd: no URI given");
		return -EINVAL;
	}
	space = strchr(args, ' ');
	nb->uri = space ? strndup(args, (size_t)(space - args)) : strdup(args);
	if (!nb->uri) {
		snprintf(why, whylen, "nbd: out of memory");
		return -ENOMEM;
	}
	ret = space ? dev_parse_keys("nbd", space + 1, nbd_keys, vals, why, whylen) : 0;
	nb->timeout_ns = vals[0] * NS_PER_S;
	nb->nr_conns = (unsigned int)vals[1];
	return ret;
}

static void nbd_free(struct nbd_backend *nb)
{
	for (unsigned int i = 0; i < NBD_MAX_CONNECTIONS; i++) {
		if (nb->conns[i].h)
			nbd_conn_drop(&nb->conns[i], nb->dev);
	}
	free(nb->uri);
	free(nb->iov);
	free(nb);
}

/* Room in a socket for the largest write and its header (28 bytes), up to 32 MiB. */
static unsigned int nbd_sndbuf(unsigned int max_hw_sectors)
{
	uint64_t bytes = ((uint64_t)max_hw_sectors << SECTOR_SHIFT) + 28;

	return bytes < NBD_MAX_SNDBUF ? (unsigned int)bytes : NBD_MAX_SNDBUF;
}

/* Connect before the loop runs, each connection waiting at most the timeout. */
static int nbd_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		    size_t whylen)
{
	struct nbd_backend *nb = calloc(1, sizeof(*nb));
	int ret = -ENOMEM;

	if (!nb || !(nb->iov = calloc(dev_max_segments(dev), sizeof(*nb->iov)))) {
		snprintf(why, whylen, "nbd: out of memory");
		goto fail;
	}
	nb->dev = dev;
	TAILQ_INIT(&nb->done);
	TAILQ_INIT(&nb->held);
	TAILQ_INIT(&nb->outstanding);
	for (unsigned int i = 0; i < NBD_MAX_CONNECTIONS; i++) {
		nb->conns[i].owner = nb;
		nb->conns[i].sndbuf = nbd_sndbuf(dev_max_hw_sectors(dev));
	}
	if (!dev->stack->host_ops->watch_fd_events) {
		snprintf(why, whylen, "nbd: the host cannot poll a socket for output");
		ret = -EOPNOTSUPP;
		goto fail;
	}
	ret = nbd_parse_args(nb, args, why, whylen);
	if (!ret)
		ret = nbd_conn_connect_wait(&nb->conns[0], nb->uri,
					    (unsigned int)(nb->timeout_ns / 1000000), why, whylen);
	if (!ret)
		ret = nbd_export_limits(&nb->ex, nb->conns[0].h, lim, why, whylen);
	if (!ret)
		ret = nbd_connect_more(nb, why, whylen);
	for (unsigned int i = 0; !ret && i < nb->nr_conns; i++) {
		ret = nbd_conn_watch(&nb->conns[i], dev, nbd_ready, &nb->conns[i]);
		if (ret)
			snprintf(why, whylen, "nbd: cannot watch the socket: %s", strerror(-ret));
	}
	if (ret)
		goto fail;
	nb->up = true;
	dev->priv = nb;
	return 0;
fail:
	if (nb)
		nbd_free(nb);
	return ret;
}

/*
 * Why the flush at exit leaves writes that may not be durable, into buf,
 * given what it returned: NULL if none.  A loss no flush reported yet is
 * the exit's to say, as the next flush would have.
 */
static const char *nbd_exit_loss(const struct nbd_backend *nb, int flush_error, char *buf,
				 size_t len)
{
	if (flush_error == -ETIMEDOUT)
		snprintf(buf, len, "no reply within %" PRIu64 " s", nb->timeout_ns / NS_PER_S);
	else if (flush_error)
		snprintf(buf, len, "%s", strerror(-flush_error));
	else if (!nbd_lost_untold(&nb->lost))
		return NULL;
	else if (!nb->up)
		snprintf(buf, len, "the server is gone");
	else
		snprintf(buf, len, "a connection dropped with writes no flush covered");
	return buf;
}

/*
 * The queue is idle: what the server caches is made durable, as the file
 * backend's image is synced at exit, and the connections are closed
 * cleanly; a server that does not answer holds the exit up to the timeout.
 * A flush that fails, or cannot go with writes waiting for it, is said in
 * one line and fails the close (the daemon's exit status).
 */
static void nbd_close_dev(struct blk_dev *dev)
{
	struct nbd_backend *nb = dev->priv;
	bool writable = !nb->ex.read_only && !dev->stack->aborted;
	bool flush = nb->up && nb->ex.can_flush && writable;
	unsigned int timeout_ms = (unsigned int)(nb->timeout_ns / 1000000);
	const char *why;
	char buf[128];
	int error = 0;

	for (unsigned int i = 0; i < nb->nr_conns; i++) {
		int ret = nbd_conn_finish(&nb->conns[i], dev, flush, timeout_ms);

		if (!error)
			error = ret;
	}
	why = writable ? nbd_exit_loss(nb, error, buf, sizeof(buf)) : NULL;
	if (why) {
		fprintf(stderr, "rqdisk: nbd: %s: the last flush failed: %s; writes since the last "
				"flush may be lost\n", nb->uri, why);
		dev->stack->close_error = -EIO;
	}
	nbd_free(nb);
}

static int nbd_describe(const struct blk_dev *dev, char *buf, size_t len)
{
	const struct nbd_backend *nb = dev->priv;

	return snprintf(buf, len, "%s timeout=%" PRIu64 ",connections=%u", nb->uri,
			nb->timeout_ns / NS_PER_S, nb->nr_conns);
}

BACKEND_REGISTER(nbd,
	.description = "an NBD server's export, through libnbd: nbd://, nbd+unix://",
	.keys = nbd_keys,
	.rq_pdu_size = sizeof(struct nbd_rq),
	.open = nbd_open,
	.close = nbd_close_dev,
	.can_take = nbd_can_take,
	.submit = nbd_submit,
	.timer = nbd_timer,
	.describe = nbd_describe);
