/* SPDX-License-Identifier: BSD-3-Clause */
/* nbd_request.c - the nbd backend's requests: sent as commands, answered, ended. */
#include <errno.h>
#include <libnbd.h>

#include "nbd_impl.h"

/* Commands in flight on one connection beyond which no request is taken. */
#define NBD_MAX_IN_FLIGHT 64
/* Discard and zeroing go out in commands of at most this much. */
#define NBD_RANGE_CHUNK (1u << 30)

void nbd_to_done(struct nbd_backend *nb, struct nbd_rq *r)
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

/* Whether each of the host's queues sends on a connection of its own (nbd_pick_conn). */
static bool nbd_conn_per_queue(const struct nbd_backend *nb)
{
	const struct dev_stack *stack = nb->dev->stack;
	const struct dev_host_ops *ops = stack->host_ops;

	return nb->nr_conns > 1 && ops->nr_io_queues && ops->io_queue &&
	       ops->nr_io_queues(stack->host) > 1;
}

/* With nbd_conn_per_queue: the calling queue's connection. */
static unsigned int nbd_queue_conn(const struct nbd_backend *nb)
{
	const struct dev_stack *stack = nb->dev->stack;

	return stack->host_ops->io_queue(stack->host) % nb->nr_conns;
}

/*
 * The connection a request's data goes on.  On a multi-queue queue, the
 * submitting hardware queue's: queue i sends on connection i mod N, as
 * Linux's nbd gives each hardware queue a socket, so that the queues do
 * not take turns on one; what the loop's thread sends there (requests
 * held over a reconnection, a filter's timer) counts as queue 0's.  On
 * the 2.6 queue, the next one in turn.
 */
static unsigned int nbd_pick_conn(struct nbd_backend *nb)
{
	if (nbd_conn_per_queue(nb))
		return nbd_queue_conn(nb);
	return nb->next_conn++ % nb->nr_conns;
}

/*
 * Send r on the connections, which are up: its data on one
 * (nbd_pick_conn), a flush on every one (multi-conn's consistency: what
 * any of them wrote is durable once each has flushed).
 */
void nbd_issue_request(struct nbd_backend *nb, struct nbd_rq *r)
{
	struct request *rq = r->rq;
	bool fua = rq->cmd_flags & REQ_FUA;
	uint32_t flags = fua && nb->ex.can_fua ? LIBNBD_CMD_FLAG_FUA : 0;

	r->issuing = true;
	r->flush_after = fua && !nb->ex.can_fua && nb->ex.can_flush;
	r->conn = nbd_pick_conn(nb);
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
bool nbd_flush_owed(const struct nbd_rq *r)
{
	return r->flush_after && !r->error;
}

void nbd_hold(struct nbd_backend *nb, struct nbd_rq *r)
{
	r->pending = 0;
	r->error = 0;
	r->lost = false;
	r->held = true;
	TAILQ_INSERT_TAIL(&nb->held, r, link);
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
void nbd_end_done(struct nbd_backend *nb)
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

void nbd_update_events(struct nbd_backend *nb)
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
void nbd_rearm(struct nbd_backend *nb)
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

/*
 * Room for one more command: on the calling queue's own connection where
 * each queue has one, so that a busy queue fills its connection alone and
 * the other queues still send on theirs; else over all the connections.
 */
bool nbd_can_take(struct blk_dev *dev)
{
	struct nbd_backend *nb = dev->priv;
	int64_t in_flight = 0;

	if (!nb->up)
		return true; /* held, or failed: nothing goes to the server */
	if (nbd_conn_per_queue(nb))
		return nbd_aio_in_flight(nb->conns[nbd_queue_conn(nb)].h) < NBD_MAX_IN_FLIGHT;
	for (unsigned int i = 0; i < nb->nr_conns; i++)
		in_flight += nbd_aio_in_flight(nb->conns[i].h);
	return in_flight < (int64_t)NBD_MAX_IN_FLIGHT * nb->nr_conns;
}

void nbd_submit(struct blk_dev *dev, struct request *rq)
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
