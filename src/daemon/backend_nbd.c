/*
 * backend_nbd.c - the nbd backend: an NBD server's export as the disk.
 * libnbd connects before the loop runs; then each request becomes
 * asynchronous commands (one per piece of its memory the server takes at
 * once), libnbd's socket is polled in the loop through the host's watch,
 * and the commands' completion callbacks, run on the loop's thread from
 * nbd_aio_notify_read/_write, end the request: no thread, no hand-off.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <libnbd.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "backend_nbd.h"
#include "blkdev.h"

/* Commands in flight beyond which no request is taken. */
#define NBD_MAX_IN_FLIGHT 64
/* A preferred block size above this is no physical block size (the protocol's 32 MiB). */
#define NBD_MAX_PREFERRED (32u << 20)
/* Discard and zeroing go out in commands of at most this much. */
#define NBD_RANGE_CHUNK (1u << 30)

struct nbd_backend;

/* Kept with each request. */
struct nbd_rq {
	struct nbd_backend *nb;
	struct request *rq;
	TAILQ_ENTRY(nbd_rq) link; /* on the list ended from the timer */
	unsigned int pending;     /* commands out */
	int error;                /* the first command's failure, -errno */
	bool issuing;             /* submit is still issuing its commands */
	bool flush_after;         /* FUA on a server without it: a flush once the data is there */
};

TAILQ_HEAD(nbd_rq_list, nbd_rq);

struct nbd_backend {
	struct blk_dev *dev;
	struct nbd_handle *h;
	int fd;           /* libnbd's socket, watched while the connection lives */
	bool watched;
	unsigned int events; /* what the watch polls for */
	bool dead;           /* the connection is gone: every request fails */
	bool read_only;
	bool can_flush, can_fua;
	uint64_t max_io; /* bytes a read or write command carries at most */
	struct iovec *iov; /* a request's memory, mapped at submit */
	struct nbd_rq_list done; /* requests to end from the timer */
};

static void nbd_lost(struct nbd_backend *nb)
{
	const struct dev_host_ops *ops = nb->dev->stack->host_ops;

	if (nb->dead)
		return;
	nb->dead = true;
	fprintf(stderr, "rqdisk: nbd: connection lost: %s\n", nbd_get_error());
	if (nb->watched)
		ops->unwatch_fd(nb->dev->stack->host, nb->fd);
	nb->watched = false;
}

/* Poll for what libnbd waits for: input always (a hang-up), output while it has bytes to send. */
static void nbd_update_events(struct nbd_backend *nb)
{
	const struct dev_host_ops *ops = nb->dev->stack->host_ops;
	unsigned int events = POLLIN;

	if (!nb->watched)
		return;
	if (nbd_aio_get_direction(nb->h) & LIBNBD_AIO_DIRECTION_WRITE)
		events |= POLLOUT;
	if (events != nb->events)
		ops->set_fd_events(nb->dev->stack->host, nb->fd, events);
	nb->events = events;
}

/*
 * A command of r's is over.  libnbd holds the handle's lock here, and
 * ending a request runs the queue, which issues commands: the request
 * only goes on the done list, ended once libnbd has returned.
 */
static int nbd_cmd_done(void *user_data, int *error)
{
	struct nbd_rq *r = user_data;

	if (*error && !r->error)
		r->error = -*error;
	if (!--r->pending && !r->issuing) /* submit, still issuing, puts it there itself */
		TAILQ_INSERT_TAIL(&r->nb->done, r, link);
	return 1; /* libnbd retires the command */
}

static int64_t nbd_issue_flush(struct nbd_rq *r)
{
	nbd_completion_callback cb = { .callback = nbd_cmd_done, .user_data = r };

	return nbd_aio_flush(r->nb->h, cb, 0);
}

/* End what is done, outside libnbd: a FUA write on a server without FUA flushes first. */
static void nbd_end_done(struct nbd_backend *nb)
{
	struct nbd_rq *r;

	while ((r = TAILQ_FIRST(&nb->done))) {
		TAILQ_REMOVE(&nb->done, r, link);
		if (r->flush_after && !r->error && !nb->dead) {
			r->flush_after = false;
			if (nbd_issue_flush(r) >= 0) {
				r->pending++;
				continue;
			}
			r->error = -(nbd_get_errno() ? nbd_get_errno() : EIO);
		}
		dev_end(nb->dev, r->rq, r->error, blk_rq_sectors(r->rq));
	}
}

/* One command of r's; false (r->error set) when libnbd refused it. */
static bool nbd_issue(struct nbd_rq *r, enum req_op op, void *buf, uint64_t len, uint64_t off,
		      uint32_t flags)
{
	struct nbd_handle *h = r->nb->h;
	nbd_completion_callback cb = { .callback = nbd_cmd_done, .user_data = r };
	int64_t ret = -1;

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
		ret = nbd_aio_flush(h, cb, 0);
		break;
	}
	if (ret >= 0) {
		r->pending++;
		return true;
	}
	r->error = -(nbd_get_errno() ? nbd_get_errno() : EIO);
	if (nbd_aio_is_dead(h) || nbd_aio_is_closed(h))
		nbd_lost(r->nb);
	return false;
}

/* A read or write: a command per piece of memory, none above what the server takes. */
static void nbd_issue_rw(struct nbd_backend *nb, struct nbd_rq *r, uint32_t flags)
{
	struct request *rq = r->rq;
	uint64_t off = (uint64_t)blk_rq_pos(rq) << SECTOR_SHIFT;
	int n = blk_rq_map_sg(rq->q, rq, nb->iov);

	for (int i = 0; i < n; i++) {
		char *base = nb->iov[i].iov_base;
		size_t left = nb->iov[i].iov_len;

		while (left) {
			size_t len = left < nb->max_io ? left : nb->max_io;

			if (!nbd_issue(r, rq->cmd_op, base, len, off, flags))
				return;
			base += len;
			off += len;
			left -= len;
		}
	}
}

/* A discard or zeroing: commands over the range, in chunks. */
static void nbd_issue_range(struct nbd_rq *r, uint32_t flags)
{
	struct request *rq = r->rq;
	uint64_t off = (uint64_t)blk_rq_pos(rq) << SECTOR_SHIFT;
	uint64_t left = (uint64_t)blk_rq_sectors(rq) << SECTOR_SHIFT;

	while (left) {
		uint64_t len = left < NBD_RANGE_CHUNK ? left : NBD_RANGE_CHUNK;

		if (!nbd_issue(r, rq->cmd_op, NULL, len, off, flags))
			return;
		off += len;
		left -= len;
	}
}

static bool nbd_can_take(struct blk_dev *dev)
{
	struct nbd_backend *nb = dev->priv;

	return nb->dead || nbd_aio_in_flight(nb->h) < NBD_MAX_IN_FLIGHT;
}

static void nbd_submit(struct blk_dev *dev, struct request *rq)
{
	struct nbd_backend *nb = dev->priv;
	struct nbd_rq *r = dev_rq_pdu(dev, rq);
	bool fua = rq->cmd_flags & REQ_FUA;
	uint32_t flags = fua && nb->can_fua ? LIBNBD_CMD_FLAG_FUA : 0;

	*r = (struct nbd_rq){ .nb = nb, .rq = rq, .issuing = true };
	r->flush_after = fua && !nb->can_fua && nb->can_flush;
	if (nb->dead)
		r->error = -EIO;
	else if (nb->read_only && rq->cmd_op != REQ_OP_READ && rq->cmd_op != REQ_OP_FLUSH)
		r->error = -EROFS;
	else if (rq->cmd_op == REQ_OP_FLUSH && !nb->can_flush)
		; /* nothing is cached there: done */
	else if (op_has_data(rq->cmd_op))
		nbd_issue_rw(nb, r, flags);
	else
		nbd_issue_range(r, flags);
	r->issuing = false;
	if (!r->pending) /* refused, done already, or nothing to do */
		TAILQ_INSERT_TAIL(&nb->done, r, link);
	/* no request ends inside submit: what is done ends from the timer */
	if (!TAILQ_EMPTY(&nb->done))
		dev_set_timer(dev, dev_now(dev));
	nbd_update_events(nb);
}

static void nbd_timer(struct blk_dev *dev, uint64_t now)
{
	nbd_end_done(dev->priv);
}

/* libnbd's socket is ready, on the loop's thread: replies run their callbacks. */
static void nbd_ready(void *arg, unsigned int revents)
{
	struct nbd_backend *nb = arg;
	int ret = 0;

	if (nb->dead)
		return;
	if (revents & (POLLIN | POLLHUP | POLLERR))
		ret = nbd_aio_notify_read(nb->h);
	if (!ret && (revents & POLLOUT) &&
	    (nbd_aio_get_direction(nb->h) & LIBNBD_AIO_DIRECTION_WRITE))
		ret = nbd_aio_notify_write(nb->h);
	/* a dead connection has failed every command in flight: they end too */
	if (ret || nbd_aio_is_dead(nb->h) || nbd_aio_is_closed(nb->h))
		nbd_lost(nb);
	nbd_end_done(nb);
	nbd_update_events(nb);
}

/*
 * What the server states about block sizes, into the queue's limits, as
 * a client aligns to them: its minimum is the logical block size (raised
 * to it, up to a page), its preferred size the physical block size and
 * io_opt, its maximum what one read or write carries (max_sectors).
 */
static int nbd_block_sizes(struct nbd_backend *nb, struct dev_limits *lim, char *why,
			   size_t whylen)
{
	int64_t min = nbd_get_block_size(nb->h, LIBNBD_SIZE_MINIMUM);
	int64_t pref = nbd_get_block_size(nb->h, LIBNBD_SIZE_PREFERRED);
	int64_t max = nbd_get_block_size(nb->h, LIBNBD_SIZE_MAXIMUM);
	unsigned int lbs = lim->logical_block_size;

	if (min > BLK_PAGE_SIZE) {
		snprintf(why, whylen,
			 "nbd: the export takes I/O in blocks of %" PRId64 " bytes, above a page",
			 min);
		return -EINVAL;
	}
	if (min > (int64_t)lbs)
		lbs = lim->logical_block_size = (unsigned int)min;
	if (pref > (int64_t)lbs && pref <= NBD_MAX_PREFERRED)
		lim->physical_block_size = lim->io_opt = (unsigned int)pref;
	nb->max_io = UINT32_MAX - (UINT32_MAX % lbs);
	if (max > 0)
		nb->max_io = (uint64_t)max - (uint64_t)max % lbs;
	if (nb->max_io < BLK_PAGE_SIZE) {
		snprintf(why, whylen, "nbd: the export's largest I/O, %" PRId64
			 " bytes, is below a page", max);
		return -EINVAL;
	}
	if (nb->max_io >> SECTOR_SHIFT < UINT_MAX)
		lim->max_sectors = (unsigned int)(nb->max_io >> SECTOR_SHIFT);
	return 0;
}

static int nbd_limits(struct nbd_backend *nb, struct dev_limits *lim, char *why, size_t whylen)
{
	int64_t size = nbd_get_size(nb->h);
	unsigned int lbs;
	int ret;

	if (size < 0) {
		snprintf(why, whylen, "nbd: %s", nbd_get_error());
		return -EIO;
	}
	ret = nbd_block_sizes(nb, lim, why, whylen);
	if (ret)
		return ret;
	lbs = lim->logical_block_size;
	if (!size || size % lbs) {
		snprintf(why, whylen,
			 "nbd: the export's size %" PRId64
			 " is not a non-zero multiple of the logical block size %u",
			 size, lbs);
		return -EINVAL;
	}
	lim->capacity = (sector_t)(size >> SECTOR_SHIFT);
	nb->read_only = nbd_is_read_only(nb->h) == 1;
	nb->can_flush = nbd_can_flush(nb->h) == 1;
	nb->can_fua = nbd_can_fua(nb->h) == 1;
	lim->read_only = nb->read_only;
	lim->has_cache = nb->can_flush;
	/* what the export does not take, the queue refuses before it comes here */
	lim->discard = !nb->read_only && nbd_can_trim(nb->h) == 1;
	lim->write_zeroes = !nb->read_only && nbd_can_zero(nb->h) == 1;
	lim->rotational = false;
	return 0;
}

static void nbd_free(struct nbd_backend *nb)
{
	if (nb->h)
		nbd_close(nb->h);
	free(nb->iov);
	free(nb);
}

/*
 * Connect to the URI before the loop runs, blocking, and learn the export.
 * Local files named in the URI (tls-psk-file) stay refused: libnbd's default.
 */
static int nbd_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		    size_t whylen)
{
	const struct dev_host_ops *ops = dev->stack->host_ops;
	struct request_queue *q = dev->stack->q;
	struct nbd_backend *nb = calloc(1, sizeof(*nb));
	int ret = -ENOMEM;

	if (!nb || !(nb->iov = calloc(queue_max_segments(&q->limits), sizeof(*nb->iov))) ||
	    !(nb->h = nbd_create())) {
		snprintf(why, whylen, "nbd: out of memory");
		goto fail;
	}
	nb->dev = dev;
	TAILQ_INIT(&nb->done);
	if (!ops->watch_fd_events) {
		snprintf(why, whylen, "nbd: the host cannot poll a socket for output");
		ret = -EOPNOTSUPP;
		goto fail;
	}
	if (!args || nbd_connect_uri(nb->h, args)) {
		snprintf(why, whylen, "nbd: %s: %s", args ? args : "no URI",
			 args ? nbd_get_error() : "given");
		ret = -EIO;
		goto fail;
	}
	ret = nbd_limits(nb, lim, why, whylen);
	if (ret)
		goto fail;
	nb->fd = nbd_aio_get_fd(nb->h);
	nb->events = POLLIN;
	ret = ops->watch_fd_events(dev->stack->host, nb->fd, nb->events, nbd_ready, nb);
	if (ret) {
		snprintf(why, whylen, "nbd: cannot watch the socket: %s", strerror(-ret));
		goto fail;
	}
	nb->watched = true;
	dev->priv = nb;
	return 0;
fail:
	if (nb)
		nbd_free(nb);
	return ret;
}

/*
 * The queue is idle: what the server caches is made durable, as the file
 * backend's image is synced at exit, and the connection is closed cleanly.
 */
static void nbd_close_dev(struct blk_dev *dev)
{
	struct nbd_backend *nb = dev->priv;

	if (nb->watched)
		dev->stack->host_ops->unwatch_fd(dev->stack->host, nb->fd);
	if (!nb->dead && !dev->stack->aborted) {
		if (nb->can_flush && !nb->read_only && nbd_flush(nb->h, 0))
			fprintf(stderr, "rqdisk: nbd: flush at exit: %s\n", nbd_get_error());
		nbd_shutdown(nb->h, 0);
	}
	nbd_free(nb);
}

const struct dev_ops dev_nbd_ops = {
	.api_version = DEV_API_VERSION,
	.name = "nbd",
	.backend = true,
	.rq_pdu_size = sizeof(struct nbd_rq),
	.open = nbd_open,
	.close = nbd_close_dev,
	.can_take = nbd_can_take,
	.submit = nbd_submit,
	.timer = nbd_timer,
};
