/* SPDX-License-Identifier: BSD-3-Clause */
/* nbd_reconnect.c - the nbd backend's server gone and back: drops, reconnection, the timer. */
#include <errno.h>
#include <inttypes.h>
#include <libnbd.h>
#include <stdio.h>

#include "nbd_impl.h"

/* Between two attempts to reach a server that went away. */
#define NBD_RETRY_NS NS_PER_S

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

void nbd_lost(struct nbd_backend *nb, const char *what)
{
	uint64_t now = dev_now(nb->dev);

	if (nb->up)
		fprintf(stderr, "rqdisk: nbd: %s: %s; requests wait up to %" PRIu64
			" s for it to come back\n", nb->uri, what, nb->timeout_ns / NS_PER_S);
	nbd_drop_all(nb, now, nb->up ? now : now + NBD_RETRY_NS);
}

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
void nbd_ready(void *arg, unsigned int revents)
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

void nbd_timer(struct blk_dev *dev, uint64_t now)
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
