/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backend_rbd.c - the rbd backend: a Ceph RBD image (or a snapshot of one,
 * read-only) as the disk, through librbd.  The cluster is reached before
 * the loop runs; then each request becomes one asynchronous librbd call.
 * librbd completes them on its own threads, where it only queues the
 * completion and signals an eventfd (rbd_set_image_notification); the loop
 * polls that eventfd through the host's watch and ends the requests on its
 * own thread, from rbd_poll_io_events.
 */
#include <errno.h>
#include <inttypes.h>
#include <rbd/librbd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backend_rbd.h"
#include "rbd_spec.h"

/* librbd calls in flight beyond which no request is taken. */
#define RBD_MAX_IN_FLIGHT 64
/* Completions taken from librbd at once. */
#define RBD_POLL_BATCH 32
/*
 * How long reaching the monitors may take before the open fails, in
 * seconds, where neither the ceph.conf nor the spec says: an unreachable
 * cluster is an error, not a hang.
 */
#define RBD_CONNECT_TIMEOUT "10"
#define RBD_MON_OP_TIMEOUT "30"
/* an OSD that does not answer fails the request (ETIMEDOUT, given up as EIO) */
#define RBD_OSD_OP_TIMEOUT "30"
#define RBD_DEFAULT_CONF "/etc/ceph/ceph.conf"

struct rbd_backend;

/* POOL[/NAMESPACE]/IMAGE[@SNAP], as errors and device/stack name it. */
static int rbd_name(const struct rbd_spec *sp, char *buf, size_t len)
{
	return snprintf(buf, len, "%s/%s%s%s%s%s", sp->pool, sp->ns ? sp->ns : "",
			sp->ns ? "/" : "", sp->image, sp->snap ? "@" : "",
			sp->snap ? sp->snap : "");
}

/* Kept with each request. */
struct rbd_rq {
	struct rbd_backend *rb;
	struct request *rq;
	TAILQ_ENTRY(rbd_rq) link; /* on the list ended from the timer */
	int error;                /* -errno */
	struct iovec *read_iov;   /* a read's memory: librbd fills it at completion */
	bool flush_after;         /* FUA: librbd has none, a flush once the write is done */
};

TAILQ_HEAD(rbd_rq_list, rbd_rq);

struct rbd_backend {
	struct blk_dev *dev;
	struct rbd_spec spec;
	rados_t cluster;
	rados_ioctx_t io;
	rbd_image_t image;
	int efd; /* librbd signals completions here */
	bool watched;
	bool read_only;           /* a snapshot */
	unsigned int in_flight;   /* librbd calls out */
	uint64_t object_size;     /* bytes */
	struct iovec *iov;        /* a request's memory, mapped at submit */
	struct rbd_rq_list done;  /* refused at submit: ended from the timer */
};

/* The call for r's request, or its flush after a FUA write; 0 or -errno from librbd. */
static int rbd_issue(struct rbd_rq *r, bool flush)
{
	struct rbd_backend *rb = r->rb;
	struct request *rq = r->rq;
	uint64_t off = (uint64_t)blk_rq_pos(rq) << SECTOR_SHIFT;
	uint64_t len = (uint64_t)blk_rq_sectors(rq) << SECTOR_SHIFT;
	rbd_completion_t c;
	int ret, n;

	/* no callback: librbd queues the completion for rbd_poll_io_events and signals efd */
	ret = rbd_aio_create_completion(r, NULL, &c);
	if (ret < 0)
		return ret;
	switch (flush ? REQ_OP_FLUSH : rq->cmd_op) {
	case REQ_OP_READ:
		/* librbd keeps the iovec array until the read completes: the request's own copy */
		n = dev_map_sg(rb->dev, rq, rb->iov);
		r->read_iov = malloc(n * sizeof(*r->read_iov));
		if (!r->read_iov) {
			ret = -ENOMEM;
			break;
		}
		memcpy(r->read_iov, rb->iov, n * sizeof(*r->read_iov));
		ret = rbd_aio_readv(rb->image, r->read_iov, n, off, c);
		break;
	case REQ_OP_WRITE:
		n = dev_map_sg(rb->dev, rq, rb->iov);
		ret = rbd_aio_writev(rb->image, rb->iov, n, off, c);
		break;
	case REQ_OP_FLUSH:
		ret = rbd_aio_flush(rb->image, c);
		break;
	case REQ_OP_DISCARD:
		/*
		 * A discarded range reads back as zeros (rqdisk(8)), which
		 * rbd_aio_discard does not promise: it skips what is below
		 * rbd_discard_granularity_bytes.  Write-zeroes removes the
		 * objects the range covers whole and zeroes the rest.
		 */
	case REQ_OP_WRITE_ZEROES:
		ret = rbd_aio_write_zeroes(rb->image, off, len, c, 0, 0);
		break;
	default:
		ret = -EOPNOTSUPP;
		break;
	}
	if (ret < 0) {
		rbd_aio_release(c);
		return ret;
	}
	rb->in_flight++;
	return 0;
}

/* The request's sectors end, with r->error. */
static void rbd_end(struct rbd_rq *r)
{
	free(r->read_iov);
	r->read_iov = NULL;
	dev_end(r->rb->dev, r->rq, r->error, blk_rq_sectors(r->rq));
}

static bool rbd_can_take(struct blk_dev *dev)
{
	struct rbd_backend *rb = dev->priv;

	return rb->in_flight < RBD_MAX_IN_FLIGHT;
}

static void rbd_submit(struct blk_dev *dev, struct request *rq)
{
	struct rbd_backend *rb = dev->priv;
	struct rbd_rq *r = dev_rq_pdu(dev, rq);
	bool issue = true;

	*r = (struct rbd_rq){ .rb = rb, .rq = rq };
	r->flush_after = rq->cmd_op == REQ_OP_WRITE && (rq->cmd_flags & REQ_FUA);
	if (rb->read_only && rq->cmd_op == REQ_OP_FLUSH)
		issue = false; /* a snapshot caches nothing: done */
	else if (rb->read_only && rq->cmd_op != REQ_OP_READ)
		r->error = -EROFS;
	else
		r->error = rbd_issue(r, false);
	if (r->error || !issue) {
		/* no request ends inside submit: it ends from the timer */
		TAILQ_INSERT_TAIL(&rb->done, r, link);
		dev_set_timer(dev, dev_now(dev));
	}
}

static void rbd_timer(struct blk_dev *dev, uint64_t now)
{
	struct rbd_backend *rb = dev->priv;
	struct rbd_rq *r;

	while ((r = TAILQ_FIRST(&rb->done))) {
		TAILQ_REMOVE(&rb->done, r, link);
		rbd_end(r);
	}
}

/* One call of r's came back with ret (bytes, or -errno): end it, or flush after a FUA write. */
static void rbd_call_done(struct rbd_rq *r, ssize_t ret)
{
	struct rbd_backend *rb = r->rb;

	rb->in_flight--;
	/* a cluster that did not answer in time is a disk's I/O error, as Linux's rbd ends it */
	if (ret < 0)
		r->error = ret == -ETIMEDOUT ? -EIO : (int)ret;
	if (r->flush_after && !r->error) {
		r->flush_after = false;
		r->error = rbd_issue(r, true);
		if (!r->error)
			return;
	}
	rbd_end(r);
}

/* The eventfd was signalled, on the loop's thread: end what librbd completed. */
static void rbd_ready(void *arg)
{
	struct rbd_backend *rb = arg;
	rbd_completion_t comps[RBD_POLL_BATCH];
	uint64_t count;
	int n;

	/* read first: a completion queued after the poll below signals again */
	if (read(rb->efd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		fprintf(stderr, "rqdisk: rbd: eventfd: %s\n", strerror(errno));
	do {
		n = rbd_poll_io_events(rb->image, comps, RBD_POLL_BATCH);
		for (int i = 0; i < n; i++) {
			struct rbd_rq *r = rbd_aio_get_arg(comps[i]);
			ssize_t ret = rbd_aio_get_return_value(comps[i]);

			rbd_aio_release(comps[i]);
			rbd_call_done(r, ret);
		}
	} while (n == RBD_POLL_BATCH);
}

/*
 * conf=, or else $CEPH_CONF or /etc/ceph/ceph.conf where there is one
 * (not Ceph's whole search, which reads ./ceph.conf and complains on
 * stderr when it finds none): mon_host may come from the spec alone.
 */
static int rbd_read_conf(rados_t cluster, const char **conf)
{
	if (!*conf)
		*conf = getenv("CEPH_CONF");
	if (!*conf && access(RBD_DEFAULT_CONF, F_OK) == 0)
		*conf = RBD_DEFAULT_CONF;
	/*
	 * With none, an empty file: librados (16.2) puts the stderr settings
	 * set before in force when it reads a file, not at rados_conf_set.
	 */
	if (!*conf)
		return rados_conf_read_file(cluster, "/dev/null");
	return rados_conf_read_file(cluster, *conf);
}

/* The cluster's client: defaults, then the ceph.conf, then the spec's options. */
static int rbd_connect(struct rbd_backend *rb, char *why, size_t whylen)
{
	const struct rbd_spec *sp = &rb->spec;
	const char *conf = sp->conf;
	char mon_host[256];
	int ret;

	ret = rados_create(&rb->cluster, sp->id);
	if (ret < 0) {
		snprintf(why, whylen, "rbd: cannot make a Ceph client%s%s: %s",
			 sp->id ? " for id " : "", sp->id ? sp->id : "", strerror(-ret));
		rb->cluster = NULL;
		return ret;
	}
	/* a ceph.conf or the spec may say otherwise: they come after */
	rados_conf_set(rb->cluster, "client_mount_timeout", RBD_CONNECT_TIMEOUT);
	rados_conf_set(rb->cluster, "rados_mon_op_timeout", RBD_MON_OP_TIMEOUT);
	rados_conf_set(rb->cluster, "rados_osd_op_timeout", RBD_OSD_OP_TIMEOUT);
	/* librados' own messages would interleave with ours: errors come back as one line */
	rados_conf_set(rb->cluster, "log_to_stderr", "false");
	rados_conf_set(rb->cluster, "err_to_stderr", "false");
	ret = rbd_read_conf(rb->cluster, &conf);
	if (ret < 0) {
		snprintf(why, whylen, "rbd: conf %s: %s", conf ? conf : "/dev/null",
			 strerror(-ret));
		return ret;
	}
	for (unsigned int i = 0; i < sp->nr_opts; i++) {
		ret = rados_conf_set(rb->cluster, sp->keys[i], sp->vals[i]);
		if (ret < 0) {
			snprintf(why, whylen, "rbd: option %s=%s: %s", sp->keys[i], sp->vals[i],
				 ret == -ENOENT ? "no such Ceph option" : strerror(-ret));
			return ret;
		}
	}
	/* else librados looks the monitors up in DNS, and says so on stderr */
	if (rados_conf_get(rb->cluster, "mon_host", mon_host, sizeof(mon_host)) < 0 || !*mon_host) {
		snprintf(why, whylen,
			 "rbd: no monitor address in %s: give conf=PATH or mon_host=ADDRESS",
			 conf ? conf : "the spec (and no " RBD_DEFAULT_CONF ")");
		return -EINVAL;
	}
	ret = rados_connect(rb->cluster);
	if (ret < 0) {
		snprintf(why, whylen, "rbd: cannot reach the Ceph cluster%s%s: %s",
			 conf ? " of " : "", conf ? conf : "",
			 ret == -ETIMEDOUT ? "no monitor answered in time" : strerror(-ret));
		return ret;
	}
	return 0;
}

static int rbd_open_image(struct rbd_backend *rb, char *why, size_t whylen)
{
	const struct rbd_spec *sp = &rb->spec;
	int ret;

	ret = rados_ioctx_create(rb->cluster, sp->pool, &rb->io);
	if (ret < 0) {
		rb->io = NULL;
		snprintf(why, whylen, "rbd: pool %s: %s", sp->pool,
			 ret == -ENOENT ? "no such pool" : strerror(-ret));
		return ret;
	}
	if (sp->ns)
		rados_ioctx_set_namespace(rb->io, sp->ns);
	/* a snapshot opens read-only: no lock, no header watch for writers */
	if (sp->snap)
		ret = rbd_open_read_only(rb->io, sp->image, &rb->image, sp->snap);
	else
		ret = rbd_open(rb->io, sp->image, &rb->image, NULL);
	if (ret < 0) {
		char name[DEV_SPEC_MAX];

		rb->image = NULL;
		rbd_name(sp, name, sizeof(name));
		snprintf(why, whylen, "rbd: image %s: %s", name,
			 ret == -ENOENT ? (sp->snap ? "no such image or snapshot" : "no such image")
					: strerror(-ret));
		return ret;
	}
	rb->read_only = sp->snap != NULL;
	return 0;
}

static int rbd_limits(struct rbd_backend *rb, struct dev_limits *lim, char *why, size_t whylen)
{
	unsigned int lbs = lim->logical_block_size;
	rbd_image_info_t info;
	int ret = rbd_stat(rb->image, &info, sizeof(info));

	if (ret < 0) {
		snprintf(why, whylen, "rbd: %s: stat: %s", rb->spec.image, strerror(-ret));
		return ret;
	}
	if (!info.size || info.size % lbs) {
		snprintf(why, whylen,
			 "rbd: the image's size %" PRIu64
			 " is not a non-zero multiple of the logical block size %u",
			 info.size, lbs);
		return -EINVAL;
	}
	rb->object_size = info.obj_size;
	lim->capacity = (sector_t)(info.size >> SECTOR_SHIFT);
	lim->read_only = rb->read_only;
	lim->discard = lim->write_zeroes = !rb->read_only;
	/* librbd's cache takes writes back once a flush came (rbd_cache_writethrough_until_flush) */
	lim->has_cache = !rb->read_only;
	lim->rotational = false;
	/* a request within one object is one RADOS operation: the object is the unit to fill */
	if (info.obj_size <= UINT32_MAX)
		lim->io_opt = (unsigned int)info.obj_size;
	return 0;
}

static void rbd_free(struct rbd_backend *rb)
{
	if (rb->image)
		rbd_close(rb->image);
	if (rb->io)
		rados_ioctx_destroy(rb->io);
	if (rb->cluster)
		rados_shutdown(rb->cluster);
	if (rb->efd >= 0)
		close(rb->efd);
	rbd_spec_free(&rb->spec);
	free(rb->iov);
	free(rb);
}

/* Completions come to an eventfd the loop watches. */
static int rbd_watch(struct rbd_backend *rb, char *why, size_t whylen)
{
	const struct dev_host_ops *ops = rb->dev->stack->host_ops;
	int ret;

	rb->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (rb->efd < 0) {
		ret = -errno;
		snprintf(why, whylen, "rbd: eventfd: %s", strerror(-ret));
		return ret;
	}
	ret = rbd_set_image_notification(rb->image, rb->efd, EVENT_TYPE_EVENTFD);
	if (ret < 0) {
		snprintf(why, whylen, "rbd: completions to an eventfd: %s", strerror(-ret));
		return ret;
	}
	ret = ops->watch_fd(rb->dev->stack->host, rb->efd, rbd_ready, rb);
	if (ret) {
		snprintf(why, whylen, "rbd: cannot watch the eventfd: %s", strerror(-ret));
		return ret;
	}
	rb->watched = true;
	return 0;
}

/* Reach the cluster before the loop runs, blocking (with a time-out), and open the image. */
static int rbd_open_dev(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
			size_t whylen)
{
	struct rbd_backend *rb = calloc(1, sizeof(*rb));
	int ret;

	if (!rb || !(rb->iov = calloc(dev_max_segments(dev), sizeof(*rb->iov)))) {
		free(rb);
		snprintf(why, whylen, "rbd: out of memory");
		return -ENOMEM;
	}
	rb->dev = dev;
	rb->efd = -1;
	TAILQ_INIT(&rb->done);
	ret = rbd_spec_parse(args, &rb->spec, why, whylen);
	if (!ret)
		ret = rbd_connect(rb, why, whylen);
	if (!ret)
		ret = rbd_open_image(rb, why, whylen);
	if (!ret)
		ret = rbd_limits(rb, lim, why, whylen);
	if (!ret)
		ret = rbd_watch(rb, why, whylen);
	if (ret) {
		rbd_free(rb);
		return ret;
	}
	dev->priv = rb;
	return 0;
}

/*
 * The queue is idle: what librbd caches goes to the cluster, then the
 * client closes cleanly.  A flush that fails is said in one line and
 * fails the close (the daemon's exit status): what librbd held may not
 * be in the cluster.
 */
static void rbd_close_dev(struct blk_dev *dev)
{
	struct rbd_backend *rb = dev->priv;

	if (rb->watched)
		dev->stack->host_ops->unwatch_fd(dev->stack->host, rb->efd);
	if (!rb->read_only && !dev->stack->aborted) {
		int ret = rbd_flush(rb->image);

		if (ret < 0) {
			fprintf(stderr, "rqdisk: rbd: flush at exit: %s; writes since the last flush "
					"may be lost\n",
				strerror(-ret));
			dev->stack->close_error = -EIO;
		}
	}
	rbd_free(rb);
}

/* rbd:POOL/IMAGE[@SNAP], without the options (a path or a key may be private). */
static int rbd_describe(const struct blk_dev *dev, char *buf, size_t len)
{
	return rbd_name(&((const struct rbd_backend *)dev->priv)->spec, buf, len);
}

static int rbd_show_object_size(struct blk_dev *dev, char *buf, size_t len)
{
	return snprintf(buf, len, "%" PRIu64 "\n", ((struct rbd_backend *)dev->priv)->object_size);
}

static const struct dev_attr rbd_attrs[] = {
	{ "object_size", rbd_show_object_size, NULL },
	{ NULL, NULL, NULL },
};

/*
 * The keys after the image that are rqdisk's, as rbd_spec.c reads them;
 * any other KEY=VALUE is a Ceph option, set on the client as it is.
 */
static const struct dev_key rbd_keys[] = {
	{ .name = "conf", .help = "the ceph.conf to read (default: Ceph's own search)" },
	{ .name = "id", .help = "the client's name, as ceph --id (default admin)" },
	{ .name = NULL },
};

BACKEND_REGISTER(rbd,
	.description = "a Ceph RBD image or snapshot, through librbd: rbd:POOL/IMAGE[@SNAP]",
	.keys = rbd_keys,
	.rq_pdu_size = sizeof(struct rbd_rq),
	.open = rbd_open_dev,
	.close = rbd_close_dev,
	.can_take = rbd_can_take,
	.submit = rbd_submit,
	.timer = rbd_timer,
	.describe = rbd_describe,
	.attrs = rbd_attrs);
