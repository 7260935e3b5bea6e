/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backend_null.c - the null backend, null_blk's device that does no I/O:
 * every request ends whole and without error, where its irqmode says, as
 * null_blk's does: inside submit (none), when a NOP in its place comes
 * back through the host's loop (softirq, dev_host_ops.submit_io: the
 * default, null_blk's too), or completion_nsec after it came, from the
 * layer's timer on the queue's clock (timer).  What rqdisk itself costs,
 * without a device's time.  Reads leave their memory as it was; writes
 * are dropped.  Its args, if any, name the image that gives the disk its
 * size; nothing else of it is read or written.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <unistd.h>

#include "backend_uring.h"
#include "kv.h"

/* Where a request ends, as null_blk's irqmode: its words, in its numbers' order. */
enum null_irqmode {
	NULL_IRQ_NONE,
	NULL_IRQ_SOFTIRQ,
	NULL_IRQ_TIMER,
};

static const char *const null_irqmodes[] = { "none", "softirq", "timer", NULL };

#define NULL_DEFAULT_COMPLETION_NS 10000ull /* null_blk's completion_nsec: 10 µs */
/* A device that takes longer is a hung one: the delay filter is for that. */
#define NULL_MAX_COMPLETION_NS 1000000000ull

struct null_backend {
	enum null_irqmode irqmode;
	uint64_t completion_ns;
	/* Timer mode: requests in flight, due in the order they came (one delay for all). */
	TAILQ_HEAD(, null_rq) timed;
};

/* Kept with each request. */
struct null_rq {
	struct dev_io io; /* first: a NOP's completion comes here */
	struct blk_dev *dev;
	struct request *rq;
	uint64_t due; /* timer mode */
	TAILQ_ENTRY(null_rq) link;
};

enum { NULL_KEY_IRQMODE, NULL_KEY_COMPLETION_NSEC, NR_NULL_KEYS };

static const struct dev_key null_keys[] = {
	[NULL_KEY_IRQMODE] = {
		.name = "irqmode",
		.help = "where a request ends: none (in submit), softirq (the loop's next turn, the "
			"default) or timer",
		.data = null_irqmodes,
	},
	[NULL_KEY_COMPLETION_NSEC] = {
		.name = "completion_nsec",
		.max = NULL_MAX_COMPLETION_NS,
		.help = "irqmode=timer: nanoseconds from submission to the end (default 10000)",
	},
	[NR_NULL_KEYS] = { .name = NULL },
};

struct null_walk {
	struct null_backend *nb;
	bool nsec_given;
	char *why;
	size_t whylen;
};

static int null_parse_irqmode(struct null_walk *w, const char *val, size_t vlen)
{
	for (unsigned int i = 0; null_irqmodes[i]; i++) {
		if (val && kv_key_is(val, vlen, null_irqmodes[i])) {
			w->nb->irqmode = (enum null_irqmode)i;
			return 0;
		}
	}
	snprintf(w->why, w->whylen, "null: irqmode must be none, softirq or timer, not '%.*s'",
		 (int)vlen, val ? val : "");
	return -EINVAL;
}

static int null_parse_nsec(struct null_walk *w, const char *val, size_t vlen)
{
	char num[24];
	uint64_t v;

	if (!val || vlen >= sizeof(num))
		goto bad;
	memcpy(num, val, vlen);
	num[vlen] = '\0';
	if (dev_parse_value(num, 0, NULL_MAX_COMPLETION_NS, &v))
		goto bad;
	w->nb->completion_ns = v;
	w->nsec_given = true;
	return 0;
bad:
	snprintf(w->why, w->whylen, "null: completion_nsec must be a whole number from 0 to %llu, "
		 "not '%.*s'", NULL_MAX_COMPLETION_NS, (int)vlen, val ? val : "");
	return -EINVAL;
}

static int null_parse_key(void *opaque, const char *key, size_t klen, const char *val, size_t vlen)
{
	struct null_walk *w = opaque;

	if (kv_key_is(key, klen, null_keys[NULL_KEY_IRQMODE].name))
		return null_parse_irqmode(w, val, vlen);
	if (kv_key_is(key, klen, null_keys[NULL_KEY_COMPLETION_NSEC].name))
		return null_parse_nsec(w, val, vlen);
	snprintf(w->why, w->whylen, "null: no key '%.*s' (irqmode, completion_nsec)", (int)klen,
		 key);
	return -EINVAL;
}

/*
 * "[KEY=VALUE,...][ PATH]": the keys, then the image.  rqdisk gives the
 * image's path absolute, so args that begin with '/' are the path alone;
 * else the keys run to the first space, and the path, if any, follows it.
 * *path is NULL where there is none.
 */
static int null_parse_args(struct null_backend *nb, const char *args, const char **path,
			   char *why, size_t whylen)
{
	struct null_walk w = { .nb = nb, .why = why, .whylen = whylen };
	char keys[DEV_SPEC_MAX];
	const char *space;
	size_t len;
	int ret;

	nb->irqmode = NULL_IRQ_SOFTIRQ;
	nb->completion_ns = NULL_DEFAULT_COMPLETION_NS;
	*path = args && *args ? args : NULL;
	if (!args || !*args || *args == '/')
		return 0;
	space = strchr(args, ' ');
	len = space ? (size_t)(space - args) : strlen(args);
	*path = space && space[1] ? space + 1 : NULL;
	if (len >= sizeof(keys)) {
		snprintf(why, whylen, "null: keys longer than %d bytes", DEV_SPEC_MAX - 1);
		return -EINVAL;
	}
	memcpy(keys, args, len);
	keys[len] = '\0';
	ret = kv_walk(keys, null_parse_key, &w);
	if (ret)
		return ret;
	if (w.nsec_given && nb->irqmode != NULL_IRQ_TIMER) {
		snprintf(why, whylen, "null: completion_nsec is for irqmode=timer alone");
		return -EINVAL;
	}
	return 0;
}

int null_check_keys(const char *keys, char *why, size_t whylen)
{
	struct null_backend nb;
	const char *path;

	if (*keys == '/' || strchr(keys, ' ')) {
		snprintf(why, whylen, "null: '%s' is not KEY=VALUE,...", keys);
		return -EINVAL;
	}
	return null_parse_args(&nb, keys, &path, why, whylen);
}

/* The image that gives the disk its size: nothing of it is read, but its user may read it. */
static int null_check_image(const char *path, struct dev_limits *lim, char *why, size_t whylen)
{
	struct stat st;
	int fd, ret = file_image_size(path, lim, &st, why, whylen);

	if (ret)
		return ret;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(why, whylen, "image %s: %s", path, strerror(errno));
		return ret;
	}
	close(fd);
	return 0;
}

static int null_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		     size_t whylen)
{
	const struct dev_host_ops *ops = dev->stack->host_ops;
	struct null_backend *nb = calloc(1, sizeof(*nb));
	const char *path;
	int ret;

	if (!nb) {
		snprintf(why, whylen, "null: out of memory");
		return -ENOMEM;
	}
	TAILQ_INIT(&nb->timed);
	ret = null_parse_args(nb, args, &path, why, whylen);
	if (!ret && nb->irqmode == NULL_IRQ_SOFTIRQ && (!ops || !ops->io_room || !ops->submit_io)) {
		snprintf(why, whylen, "null: this host cannot carry out I/O (irqmode=softirq)");
		ret = -EINVAL;
	}
	if (!ret && path)
		ret = null_check_image(path, lim, why, whylen);
	if (ret) {
		free(nb);
		return ret;
	}
	dev->priv = nb;
	lim->discard = lim->write_zeroes = true; /* dropped, as writes are */
	lim->has_cache = false;
	return 0;
}

static void null_close(struct blk_dev *dev)
{
	free(dev->priv);
	dev->priv = NULL;
}

static bool null_can_take(struct blk_dev *dev)
{
	const struct null_backend *nb = dev->priv;

	/* the other modes hold nothing of the host's: the queue's depth bounds them */
	if (nb->irqmode != NULL_IRQ_SOFTIRQ)
		return true;
	return dev->stack->host_ops->io_room(dev->stack->host, 1);
}

static void null_end(struct null_rq *n)
{
	dev_end(n->dev, n->rq, 0, blk_rq_sectors(n->rq));
}

static void null_complete(struct dev_io *io, int res)
{
	struct null_rq *n = (struct null_rq *)io;

	dev_end(n->dev, n->rq, res < 0 ? res : 0, blk_rq_sectors(n->rq));
}

/* Timer mode: end what is due, oldest first, and wait for the next. */
static void null_timer(struct blk_dev *dev, uint64_t now)
{
	struct null_backend *nb = dev->priv;
	struct null_rq *n;

	while ((n = TAILQ_FIRST(&nb->timed)) && n->due <= now) {
		TAILQ_REMOVE(&nb->timed, n, link);
		null_end(n);
	}
	/* an end above may have sent more down, and set the timer for them */
	n = TAILQ_FIRST(&nb->timed);
	dev_set_timer(dev, n ? n->due : 0);
}

static void null_submit(struct blk_dev *dev, struct request *rq)
{
	struct null_backend *nb = dev->priv;
	struct null_rq *n = dev_rq_pdu(dev, rq); /* zeroed: io's other fields too */

	n->dev = dev;
	n->rq = rq;
	switch (nb->irqmode) {
	case NULL_IRQ_NONE:
		null_end(n);
		return;
	case NULL_IRQ_SOFTIRQ:
		n->io.done = null_complete;
		n->io.op = DEV_IO_NOP;
		dev->stack->host_ops->submit_io(dev->stack->host, &n->io);
		return;
	case NULL_IRQ_TIMER:
		/* one delay for all, on a clock that never goes back: the list stays in due order */
		n->due = dev_now(dev) + nb->completion_ns;
		n->due += !n->due; /* a timer at 0 is none */
		TAILQ_INSERT_TAIL(&nb->timed, n, link);
		if (!dev->timer_at)
			dev_set_timer(dev, n->due);
		return;
	}
}

BACKEND_REGISTER(null,
	.description = "no I/O: each request ends at once or after completion_nsec, as null_blk "
		       "(--null)",
	.keys = null_keys,
	.rq_pdu_size = sizeof(struct null_rq),
	.open = null_open,
	.close = null_close,
	.can_take = null_can_take,
	.submit = null_submit,
	.timer = null_timer);
