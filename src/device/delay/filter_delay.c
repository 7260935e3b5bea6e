/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * filter_delay.c - the delay filter: every request goes down a fixed time
 * after it came, as dm-delay delays its bios: "delay:ms=50", or per
 * direction "delay:read=10,write=50" (flushes and discards take write's).
 * Held requests keep their order; what the layer below cannot take yet
 * waits here until something below ends.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/queue.h>

#include "device.h"

#define NSEC_PER_MS 1000000ull
#define DELAY_MAX_MS 3600000ull /* an hour */
#define DELAY_RETRY_NS 100000ull

struct delay_rq {
	TAILQ_ENTRY(delay_rq) link;
	struct request *rq;
	uint64_t due;
	unsigned int left; /* sectors below not yet ended: a filter above may hold the ends */
};

TAILQ_HEAD(delay_list, delay_rq);

struct delay_filter {
	uint64_t ns[2]; /* reads, the rest */
	struct delay_list held; /* in arrival order; equal delays make it due order too */
	unsigned int nr_held, nr_below;
};

enum { DELAY_MS, DELAY_READ, DELAY_WRITE, NR_DELAY_KEYS };

static const struct dev_key delay_keys[] = {
	[DELAY_MS] = { .name = "ms", .max = DELAY_MAX_MS,
		       .help = "milliseconds every request is held: read= and write= at once" },
	[DELAY_READ] = { .name = "read", .max = DELAY_MAX_MS,
			 .help = "milliseconds a read is held" },
	[DELAY_WRITE] = { .name = "write", .max = DELAY_MAX_MS,
			  .help = "milliseconds a write, flush or discard is held" },
	{ .name = NULL },
};

static int delay_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		      size_t whylen)
{
	uint64_t v[NR_DELAY_KEYS] = { UINT64_MAX, UINT64_MAX, UINT64_MAX };
	struct delay_filter *df;
	int ret = dev_parse_keys("delay", args, delay_keys, v, why, whylen);

	if (ret)
		return ret;
	if (v[DELAY_MS] == UINT64_MAX && v[DELAY_READ] == UINT64_MAX && v[DELAY_WRITE] == UINT64_MAX) {
		snprintf(why, whylen, "delay: give ms=N, or read=N and write=N (milliseconds)");
		return -EINVAL;
	}
	df = calloc(1, sizeof(*df));
	if (!df) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	for (int dir = 0; dir < 2; dir++) {
		uint64_t ms = v[dir ? DELAY_WRITE : DELAY_READ];

		if (ms == UINT64_MAX)
			ms = v[DELAY_MS] == UINT64_MAX ? 0 : v[DELAY_MS];
		df->ns[dir] = ms * NSEC_PER_MS;
	}
	TAILQ_INIT(&df->held);
	dev->priv = df;
	return 0;
}

static void delay_close(struct blk_dev *dev)
{
	free(dev->priv);
}

/* No more held and below than the queue lets out at once. */
static bool delay_can_take(struct blk_dev *dev)
{
	struct delay_filter *df = dev->priv;

	return df->nr_held + df->nr_below < dev_depth(dev);
}

/* Send down, oldest first, what is due and what the layer below takes. */
static void delay_release(struct blk_dev *dev, uint64_t now)
{
	struct delay_filter *df = dev->priv;
	struct delay_rq *d;

	while ((d = TAILQ_FIRST(&df->held)) && d->due <= now && dev_can_take(dev->lower)) {
		TAILQ_REMOVE(&df->held, d, link);
		df->nr_held--;
		df->nr_below++;
		d->left = blk_rq_sectors(d->rq);
		dev_submit(dev->lower, d->rq);
	}
	d = TAILQ_FIRST(&df->held);
	if (!d)
		dev_set_timer(dev, 0);
	else if (d->due > now)
		dev_set_timer(dev, d->due);
	else if (df->nr_below)
		dev_set_timer(dev, 0); /* due but not taken: the next end below brings it */
	else /* nothing below will end: look again in a while (an SQ full of others' SQEs) */
		dev_set_timer(dev, now + DELAY_RETRY_NS);
}

static void delay_submit(struct blk_dev *dev, struct request *rq)
{
	struct delay_filter *df = dev->priv;
	struct delay_rq *d = dev_rq_pdu(dev, rq);
	uint64_t now = dev_now(dev);

	d->rq = rq;
	d->due = now + df->ns[rq->cmd_op != REQ_OP_READ];
	TAILQ_INSERT_TAIL(&df->held, d, link);
	df->nr_held++;
	if (!dev->timer_at || d->due < dev->timer_at)
		dev_set_timer(dev, d->due);
}

static void delay_timer(struct blk_dev *dev, uint64_t now)
{
	delay_release(dev, now);
}

static void delay_end(struct blk_dev *dev, struct request *rq, int error, unsigned int nr_sectors)
{
	struct delay_filter *df = dev->priv;
	struct delay_rq *d = dev_rq_pdu(dev, rq);
	bool last;

	d->left -= nr_sectors < d->left ? nr_sectors : d->left;
	last = !d->left;

	if (last)
		df->nr_below--;
	dev_end(dev, rq, error, nr_sectors);
	if (last && TAILQ_FIRST(&df->held))
		delay_release(dev, dev_now(dev));
}

static int delay_describe(const struct blk_dev *dev, char *buf, size_t len)
{
	const struct delay_filter *df = dev->priv;

	return snprintf(buf, len, "read=%llu write=%llu", (unsigned long long)(df->ns[0] / NSEC_PER_MS),
			(unsigned long long)(df->ns[1] / NSEC_PER_MS));
}

static int delay_show_ms(const struct blk_dev *dev, int dir, char *buf, size_t len)
{
	const struct delay_filter *df = dev->priv;

	return snprintf(buf, len, "%llu\n", (unsigned long long)(df->ns[dir] / NSEC_PER_MS));
}

/*
 * A new delay for one direction, from the control tree: requests that come
 * after it wait the new time; those held keep the time they came with.  A
 * change is noted in the trace, so a trace says which delay its requests saw.
 */
static int delay_store_ms(struct blk_dev *dev, int dir, const char *buf)
{
	struct delay_filter *df = dev->priv;
	uint64_t ms, old = df->ns[dir] / NSEC_PER_MS;

	if (dev_parse_value(buf, 0, DELAY_MAX_MS, &ms))
		return -EINVAL;
	df->ns[dir] = ms * NSEC_PER_MS;
	if (ms != old)
		dev_trace_msg(dev, "%s %llu -> %llu", dir ? "write_ms" : "read_ms",
			      (unsigned long long)old, (unsigned long long)ms);
	return 0;
}

static int delay_show_read_ms(struct blk_dev *dev, char *buf, size_t len)
{
	return delay_show_ms(dev, 0, buf, len);
}

static int delay_store_read_ms(struct blk_dev *dev, const char *buf)
{
	return delay_store_ms(dev, 0, buf);
}

static int delay_show_write_ms(struct blk_dev *dev, char *buf, size_t len)
{
	return delay_show_ms(dev, 1, buf, len);
}

static int delay_store_write_ms(struct blk_dev *dev, const char *buf)
{
	return delay_store_ms(dev, 1, buf);
}

/* device/delay/: the two delays, milliseconds, as the spec's read= and write= (ms= is both). */
static const struct dev_attr delay_attrs[] = {
	{ "read_ms", delay_show_read_ms, delay_store_read_ms },
	{ "write_ms", delay_show_write_ms, delay_store_write_ms },
	{ NULL, NULL, NULL },
};

DEV_REGISTER(delay, "delay",
	.description = "holds each request a while before it goes down, as dm-delay",
	.keys = delay_keys,
	.rq_pdu_size = sizeof(struct delay_rq),
	.open = delay_open,
	.close = delay_close,
	.can_take = delay_can_take,
	.submit = delay_submit,
	.end = delay_end,
	.timer = delay_timer,
	.describe = delay_describe,
	.attrs = delay_attrs);
