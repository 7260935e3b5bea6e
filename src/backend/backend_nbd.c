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

#include "backend_nbd.h"
#include "nbd_conn.h"
#include "nbd_export.h"
#include "nbd_lost.h"

/* Commands in flight on one connection beyond which no request is taken. */
#define NBD_MAX_IN_FLIGHT 64
/* Discard and zeroing go out in commands of at most this much. */
#define NBD_RANGE_CHUNK (1u << 30)
#define NS_PER_S ((uint64_t)1000000000)
/* Between two attempts to reach a server that went away. */
#define NBD_RETRY_NS NS_PER_S
/* A socket's send buffer holds at most this much, whatever max_hw_sectors_kb says. */
#define NBD_MAX_SNDBUF (32u << 20)

struct nbd_backend;

/* Kept with each request. */
struct nbd_rq {
	struct nbd_backend *nb;
	struct request *rq;
	TAILQ_ENTRY(nbd_rq) link; /* on the done list or the held one */
	TAILQ_ENTRY(nbd_rq) out;  /* on outstanding, from submit to end */
	uint64_t deadline;        /* it ends by then, done or EIO */
	struct nbd_lost_mark flush_covers; /* its flush, once answered, covers the writes acked then */
	unsigned int lost_sample; /* the losses reported when it came (nbd_lost_sample) */
	unsigned int pending;     /* commands out */
	unsigned int conn;        /* the connection its data went on */
	int error;                /* the first command's failure, -errno */
	bool issuing;             /* submit is still issuing its commands */
	bool flush_after;         /* FUA on a server without it: a flush once the data is there */
	bool lost;                /* a command died with its connection: to send again */
	bool on_done, held;
};

TAILQ_HEAD(nbd_rq_list, nbd_rq);

struct nbd_backend {
	struct blk_dev *dev;
	char *uri;
	uint64_t timeout_ns;
	unsigned int nr_conns, next_conn;
	struct nbd_conn conns[NBD_MAX_CONNECTIONS];
	bool up;             /* every connection is UP */
	bool need_drop;      /* a command found its connection dead */
	uint64_t down_since; /* the server went away then; 0 while up */
	uint64_t retry_at;   /* the next attempt to reconnect, 0: none due */
	struct nbd_export ex; /* what the export said of itself */
	struct nbd_lost lost; /* writes a drop may have lost, for the flushes to report */
	struct iovec *iov;   /* a request's memory, mapped at submit */
	struct nbd_rq_list done;        /* to end, outside libnbd */
	struct nbd_rq_list held;        /* waiting for the server to come back */
	struct nbd_rq_list outstanding; /* every request taken and not ended */
};

static void nbd_to_done(struct nbd_backend *nb, struct nbd_rq *r)
{
	r->on_done = true;
	TAILQ_INSERT_TAIL(&nb->done, r, link);
}

/*
 * A command of r's is over.  libnbd holds the handle's lock here, and
 * ending a request runs the queue, which issues commands: the request
 * only goes on the done list, ended once libnbd has returned.  ENOTCONN
 * is libnbd failing the commands of a connection that died.
 */
static int nbd_cmd_done(void *user_data, int *error)
{
	struct nbd_rq *r = user_data;

	if (*error == ENOTCONN) {
		r->lost = true;
		r->nb->need_drop = true; /* found dead inside an nbd_aio_* call: no poll says so */
	} else if (*error && !r->error)
		r->error = -*error;
	if (!--r->pending && !r->issuing) /* submit, still issuing, puts it there itself */
		nbd_to_done(r->nb, r);
	return 1; /* libnbd retires the command */
}

/*
 * A flush command of r's is over: answered with success, it covers the
 * writes acknowledged before it went.
 */
static int nbd_flush_done(void *user_data, int *error)
{
	struct nbd_rq *r = user_data;

	if (!*error)
		nbd_lost_flushed(&r->nb->lost, r->flush_covers);
	return nbd_cmd_done(user_data, error);
}

/* One command of r's on connection c; false (r->error set) when libnbd refused it. */
static bool nbd_issue(struct nbd_rq *r, struct nbd_handle *h, enum req_op op, void *buf,
		      uint64_t len, uint64_t off, uint32_t flags)
{
	nbd_completion_callback cb = { .callback = nbd_cmd_done, .user_data = r };
	int64_t ret = -1;

	/* counted first: libnbd runs cb inside the call when it finds the connection dead */
	r->pending++;
	switch (op) {
	case REQ_OP_READ:
		ret = nbd_aio_pread(h, buf, len, off, cb, 0);
		break;
	case REQ_OP_WRITE:
		ret = nbd_aio_pwrite(h, buf, len, off, cb, flags);
		break;
	case REQ_OP_DISCARD:
		ret = nbd_aio_trim(h, len, off, cb, flags);
		break;
	case REQ_OP_WRITE_ZEROES:
		ret = nbd_aio_zero(h, len, off, cb, flags);
		break;
	case REQ_OP_FLUSH:
		r->flush_covers = nbd_lost_flush_covers(&r->nb->lost);
		cb.callback = nbd_flush_done;
		ret = nbd_aio_flush(h, cb, 0);
		break;
	}
	if (ret >= 0)
		return true;
	r->pending--; /* refused: cb does not run */
	if (nbd_aio_is_dead(h) || nbd_aio_is_closed(h)) {
		r->lost = true; /* sent again once the server is back */
		r->nb->need_drop = true;
	} else {
		r->error = -(nbd_get_errno() ? nbd_get_errno() : EIO);
	}
	return false;
}

/* A read or write: a command per piece of memory, none above what the server takes. */
static void nbd_issue_rw(struct nbd_backend *nb, struct nbd_rq *r, struct nbd_handle *h,
			 uint32_t flags)
{
	struct request *rq = r->rq;
	uint64_t off = (uint64_t)blk_rq_pos(rq) << SECTOR_SHIFT;
	int n = dev_map_sg(nb->dev, rq, nb->iov);

	for (int i = 0; i < n; i++) {
		char *base = nb->iov[i].iov_base;
		size_t left = nb->iov[i].iov_len;

		while (left) {
			size_t len = left < nb->ex.max_io ? left : nb->ex.max_io;

			if (!nbd_issue(r, h, rq->cmd_op, base, len, off, flags))
				return;
			base += len;
			off += len;
			left -= len;
		}
	}
}

/* A discard or zeroing: commands over the range, in chunks. */
static void nbd_issue_range(struct nbd_rq *r, struct nbd_handle *h, uint32_t flags)
{
	struct request *rq = r->rq;
	uint64_t off = (uint64_t)blk_rq_pos(rq) << SECTOR_SHIFT;
	uint64_t left = (uint64_t)blk_rq_sectors(rq) << SECTOR_SHIFT;

	while (left) {
		uint64_t len = left < NBD_RANGE_CHUNK ? left : NBD_RANGE_CHUNK;

		if (!nbd_issue(r, h, rq->cmd_op, NULL, len, off, flags))
			return;
		off += len;
		left -= len;
	}
}

/*
 * Send r on the connections, which are up: its data on the next one in
 * turn, a flush on every one (multi-conn's consistency: what any of them
 * wrote is durable once each has flushed).
 */
static void nbd_issue_request(struct nbd_backend *nb, struct nbd_rq *r)
{
	struct request *rq = r->rq;
	bool fua = rq->cmd_flags & REQ_FUA;
	uint32_t flags = fua && nb->ex.can_fua ? LIBNBD_CMD_FLAG_FUA : 0;

	r->issuing = true;
	r->flush_after = fua && !nb->ex.can_fua && nb->ex.can_flush;
	r->conn = nb->next_conn++ % nb->nr_conns;
	if (rq->cmd_op == REQ_OP_FLUSH) {
		for (unsigned int i = 0; i < nb->nr_conns && nb->ex.can_flush; i++) {
			if (!nbd_issue(r, nb->conns[i].h, REQ_OP_FLUSH, NULL, 0, 0, 0))
				break;
		}
	} else if (op_has_data(rq->cmd_op)) {
		nbd_issue_rw(nb, r, nb->conns[r->conn].h, flags);
	} else {
		nbd_issue_range(r, nb->conns[r->conn].h, flags);
	}
	r->issuing = false;
	if (!r->pending) /* refused, or nothing cached to flush */
		nbd_to_done(nb, r);
}

/* A FUA write the server has answered, whose flush (the server has no FUA) is still to go. */
static bool nbd_flush_owed(const struct nbd_rq *r)
{
	return r->flush_after && !r->error;
}

static void nbd_hold(struct nbd_backend *nb, struct nbd_rq *r)
{
	r->pending = 0;
	r->error = 0;
	r->lost = false;
	r->held = true;
	TAILQ_INSERT_TAIL(&nb->held, r, link);
}

/*
 * The server is gone (or hung): every connection is closed at once, its
 * commands lost with it, and every request not yet answered waits to be
 * sent again on the connections to come.
 */
static void nbd_drop_all(struct nbd_backend *nb, uint64_t now, uint64_t retry_at)
{
	struct nbd_lost_mark lost;
	struct nbd_rq *r;

	for (unsigned int i = 0; i < nb->nr_conns; i++)
		nbd_conn_drop(&nb->conns[i], nb->dev);
	if (nbd_lost_drop(&nb->lost, &lost))
		dev_lost_writes(nb->dev, lost.writes, lost.sectors,
				"nbd: %s: %" PRIu64 " write%s (%" PRIu64 " sectors) no flush covered "
				"may be lost with the connection: the next fsync of every file open "
				"on the disk fails with EIO",
				nb->uri, lost.writes, lost.writes == 1 ? "" : "s", lost.sectors);
	TAILQ_FOREACH(r, &nb->outstanding, out) {
		/* a FUA write still owes its flush: not durable, so sent again, flush and all */
		if (r->held || (r->on_done && !r->lost && !nbd_flush_owed(r)))
			continue; /* waiting already, or answered */
		if (r->on_done) {
			TAILQ_REMOVE(&nb->done, r, link);
			r->on_done = false;
		}
		nbd_hold(nb, r);
	}
	nb->up = false;
	nb->need_drop = false;
	if (!nb->down_since)
		nb->down_since = now;
	nb->retry_at = retry_at;
}

static void nbd_lost(struct nbd_backend *nb, const char *what)
{
	uint64_t now = dev_now(nb->dev);

	if (nb->up)
		fprintf(stderr, "rqdisk: nbd: %s: %s; requests wait up to %" PRIu64
			" s for it to come back\n", nb->uri, what, nb->timeout_ns / NS_PER_S);
	nbd_drop_all(nb, now, nb->up ? now : now + NBD_RETRY_NS);
}

/* A flush, or a FUA write (an O_DSYNC write, after which the kernel's fsync reports too). */
static bool nbd_reports_loss(const struct request *rq)
{
	return rq->cmd_op == REQ_OP_FLUSH || (rq->cmd_flags & REQ_FUA);
}

/*
 * End r to the queue.  A write acknowledged waits for a flush, where the
 * server has a cache (a FUA write is durable already); a flush or FUA
 * write reports a loss that came since it did.
 */
static void nbd_end(struct nbd_backend *nb, struct nbd_rq *r)
{
	struct request *rq = r->rq;

	TAILQ_REMOVE(&nb->outstanding, r, out);
	if (nbd_reports_loss(rq))
		r->error = nbd_lost_report(&nb->lost, r->lost_sample, r->error);
	else if (!r->error && rq->cmd_op != REQ_OP_READ && nb->ex.can_flush)
		nbd_lost_acked(&nb->lost, blk_rq_sectors(rq));
	dev_end(nb->dev, rq, r->error, blk_rq_sectors(rq));
}

/* End what is done, outside libnbd: a FUA write on a server without FUA flushes first. */
static void nbd_end_done(struct nbd_backend *nb)
{
	struct nbd_rq *r;

	while ((r = TAILQ_FIRST(&nb->done))) {
		if (nb->need_drop) { /* a lost request waits for the next connection: not failed */
			nbd_lost(nb, "connection lost");
			continue;
		}
		TAILQ_REMOVE(&nb->done, r, link);
		r->on_done = false;
		if (r->lost && !r->error)
			r->error = -EIO;
		if (nbd_flush_owed(r) && !nb->up) { /* the connection went after the reply */
			nbd_hold(nb, r);
			continue;
		}
		if (nbd_flush_owed(r)) {
			r->flush_after = false;
			if (nbd_issue(r, nb->conns[r->conn].h, REQ_OP_FLUSH, NULL, 0, 0, 0))
				continue;
			if (r->lost) { /* held, write and flush, once the drop comes */
				r->flush_after = true;
				nbd_to_done(nb, r);
				continue;
			}
			if (!r->error)
				r->error = -EIO;
		}
		nbd_end(nb, r);
	}
}

static void nbd_update_events(struct nbd_backend *nb)
{
	for (unsigned int i = 0; i < nb->nr_conns; i++) {
		if (nb->conns[i].state != NBD_CONN_DOWN)
			nbd_conn_update_events(&nb->conns[i], nb->dev);
	}
}

static uint64_t min_at(uint64_t a, uint64_t b)
{
	return !a ? b : !b ? a : a < b ? a : b;
}

/* The timer runs at the first of: something to end, a deadline, a reconnection due. */
static void nbd_rearm(struct nbd_backend *nb)
{
	struct nbd_rq *r = TAILQ_FIRST(&nb->outstanding);
	uint64_t at = TAILQ_EMPTY(&nb->done) ? 0 : dev_now(nb->dev);

	if (r)
		at = min_at(at, r->deadline);
	if (!nb->up) {
		at = min_at(at, nb->retry_at);
		for (unsigned int i = 0; i < nb->nr_conns; i++) {
			if (nb->conns[i].state == NBD_CONN_CONNECTING)
				at = min_at(at, nb->conns[i].deadline);
		}
	}
	dev_set_timer(nb->dev, at);
}

static bool nbd_can_take(struct blk_dev *dev)
{
	struct nbd_backend *nb = dev->priv;
	int64_t in_flight = 0;

	if (!nb->up)
		return true; /* held, or failed: nothing goes to the server */
	for (unsigned int i = 0; i < nb->nr_conns; i++)
		in_flight += nbd_aio_in_flight(nb->conns[i].h);
	return in_flight < (int64_t)NBD_MAX_IN_FLIGHT * nb->nr_conns;
}

static void nbd_submit(struct blk_dev *dev, struct request *rq)
{
	struct nbd_backend *nb = dev->priv;
	struct nbd_rq *r = dev_rq_pdu(dev, rq);
	uint64_t now = dev_now(dev);

	*r = (struct nbd_rq){ .nb = nb, .rq = rq, .deadline = now + nb->timeout_ns,
			      .lost_sample = nbd_lost_sample(&nb->lost) };
	TAILQ_INSERT_TAIL(&nb->outstanding, r, out);
	if (nb->ex.read_only && rq->cmd_op != REQ_OP_READ && rq->cmd_op != REQ_OP_FLUSH) {
		r->error = -EROFS;
		nbd_to_done(nb, r);
	} else if (nb->up) {
		nbd_issue_request(nb, r);
	} else if (now - nb->down_since >= nb->timeout_ns) {
		r->error = -EIO; /* gone longer than the timeout: fail at once */
		nbd_to_done(nb, r);
	} else {
		nbd_hold(nb, r);
	}
	/* no request ends inside submit: what is done ends from the timer */
	if (nb->need_drop)
		dev_set_timer(dev, now);
	else
		nbd_rearm(nb);
	nbd_update_events(nb);
}

static void nbd_ready(void *arg, unsigned int revents);

/* Start a new connection for each: none blocks the loop. */
static void nbd_reconnect(struct nbd_backend *nb, uint64_t now)
{
	nb->retry_at = 0;
	for (unsigned int i = 0; i < nb->nr_conns; i++) {
		struct nbd_conn *c = &nb->conns[i];

		if (nbd_conn_connect_start(c, nb->uri) ||
		    nbd_conn_watch(c, nb->dev, nbd_ready, c)) {
			nbd_drop_all(nb, now, now + NBD_RETRY_NS);
			return;
		}
		c->deadline = now + nb->timeout_ns;
	}
}

/*
 * A server back without multi-conn gets one connection, as it would have
 * at the start: several would not see each other's writes, nor would a
 * flush on one cover the others'.  No command went on the others yet.
 * One it stays, should multi-conn come back later.
 */
static void nbd_recheck_multi_conn(struct nbd_backend *nb)
{
	if (nb->nr_conns == 1 || nbd_can_multi_conn(nb->conns[0].h) == 1)
		return;
	fprintf(stderr, "rqdisk: nbd: %s: the server came back without multi-conn: one "
			"connection, not %u\n", nb->uri, nb->nr_conns);
	for (unsigned int i = 1; i < nb->nr_conns; i++)
		nbd_conn_drop(&nb->conns[i], nb->dev);
	nb->nr_conns = 1;
}

/*
 * Every connection is up again: the held requests go out, in their
 * order.  The export must be the same (nbd_export_same); flush and FUA
 * are taken as the server now says, multi-conn only if still there.
 */
static void nbd_back_up(struct nbd_backend *nb)
{
	struct nbd_rq *r;

	for (unsigned int i = 0; i < nb->nr_conns; i++) {
		if (nb->conns[i].state != NBD_CONN_UP)
			return;
		if (!nbd_export_same(&nb->ex, nb->conns[i].h, nb->uri)) {
			nbd_drop_all(nb, dev_now(nb->dev), dev_now(nb->dev) + NBD_RETRY_NS);
			return;
		}
	}
	nbd_recheck_multi_conn(nb);
	nbd_export_flags(&nb->ex, nb->conns[0].h);
	nb->up = true;
	nb->down_since = 0;
	fprintf(stderr, "rqdisk: nbd: %s: connected again\n", nb->uri);
	while ((r = TAILQ_FIRST(&nb->held))) {
		TAILQ_REMOVE(&nb->held, r, link);
		r->held = false;
		nbd_issue_request(nb, r);
	}
}

/* A socket is ready, on the loop's thread: replies run their callbacks. */
static void nbd_ready(void *arg, unsigned int revents)
{
	struct nbd_conn *c = arg;
	struct nbd_backend *nb = c->owner;
	enum nbd_conn_state was = c->state;

	if (was == NBD_CONN_DOWN)
		return; /* dropped: a poll that was out */
	if (!nbd_conn_notify(c, revents))
		nbd_lost(nb, was == NBD_CONN_UP ? "connection lost" : "cannot connect");
	else if (was == NBD_CONN_CONNECTING && c->state == NBD_CONN_UP)
		nbd_back_up(nb);
	if (nb->need_drop)
		nbd_lost(nb, "connection lost");
	nbd_end_done(nb);
	nbd_update_events(nb);
	nbd_rearm(nb);
}

/*
 * The first request still waiting for a reply past its deadline means the
 * server no longer answers: its connections are dropped (its requests then
 * wait with the others).  A request held past its deadline fails with EIO.
 */
static void nbd_expire(struct nbd_backend *nb, uint64_t now)
{
	struct nbd_rq *r, *next;

	TAILQ_FOREACH(r, &nb->outstanding, out) {
		if (r->deadline > now)
			break;
		if (nb->up && r->pending && !r->on_done) {
			fprintf(stderr, "rqdisk: nbd: %s: no reply within %" PRIu64
				" s: the connection is dropped\n", nb->uri, nb->timeout_ns / NS_PER_S);
			nbd_drop_all(nb, now, now);
			break;
		}
	}
	for (r = TAILQ_FIRST(&nb->held); r && r->deadline <= now; r = next) {
		next = TAILQ_NEXT(r, link);
		TAILQ_REMOVE(&nb->held, r, link);
		r->held = false;
		r->error = -EIO;
		nbd_to_done(nb, r);
	}
}

static void nbd_timer(struct blk_dev *dev, uint64_t now)
{
	struct nbd_backend *nb = dev->priv;

	if (nb->need_drop)
		nbd_lost(nb, "connection lost");
	nbd_expire(nb, now);
	for (unsigned int i = 0; !nb->up && i < nb->nr_conns; i++) {
		if (nb->conns[i].state == NBD_CONN_CONNECTING && nb->conns[i].deadline <= now) {
			nbd_drop_all(nb, now, now + NBD_RETRY_NS); /* no answer: try again later */
			break;
		}
	}
	if (!nb->up && nb->retry_at && nb->retry_at <= now)
		nbd_reconnect(nb, now);
	nbd_end_done(nb);
	nbd_update_events(nb);
	nbd_rearm(nb);
}

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
