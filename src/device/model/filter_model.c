/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * filter_model.c - the model filter: a request ends no earlier than a timing
 * model says the device would end it, and no more than the model's depth
 * are below at once; the rest wait in the elevator.  Its argument is a
 * model spec, as --model takes it: "model:hdd:rpm=5400" is "--model hdd:rpm=5400".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "device.h"
#include "model.h"

/* Past this the time is taken as it: no sum on a clock can then wrap. */
#define MODEL_TIME_MAX (1ull << 63)

/* What the filter keeps with each request. */
struct model_rq {
	uint64_t at;  /* when the modelled device ends it */
	uint64_t seq; /* submission order: ties end in it */
	unsigned int total; /* sectors at submission */
	unsigned int left;  /* not yet ended below */
	unsigned int moved; /* ended below without error, before any error */
	int error;
};

struct model_held {
	uint64_t at, seq;
	struct request *rq;
};

struct model_filter {
	struct disk_model *model;
	unsigned int depth;
	unsigned int in_flight; /* submitted, not yet passed up */
	uint64_t seq;
	struct model_held *heap; /* ended below, waiting for their time: a min-heap on (at, seq) */
	unsigned int nr_held;
};

static bool held_before(const struct model_held *a, const struct model_held *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static void held_swap(struct model_held *a, struct model_held *b)
{
	struct model_held t = *a;

	*a = *b;
	*b = t;
}

static void held_push(struct model_filter *mf, struct model_held h)
{
	unsigned int i = mf->nr_held++;

	mf->heap[i] = h;
	while (i && held_before(&mf->heap[i], &mf->heap[(i - 1) / 2])) {
		held_swap(&mf->heap[i], &mf->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
}

static struct request *held_pop(struct model_filter *mf)
{
	struct request *rq = mf->heap[0].rq;
	unsigned int i = 0;

	mf->heap[0] = mf->heap[--mf->nr_held];
	for (;;) {
		unsigned int l = 2 * i + 1, r = l + 1, m = i;

		if (l < mf->nr_held && held_before(&mf->heap[l], &mf->heap[m]))
			m = l;
		if (r < mf->nr_held && held_before(&mf->heap[r], &mf->heap[m]))
			m = r;
		if (m == i)
			return rq;
		held_swap(&mf->heap[i], &mf->heap[m]);
		i = m;
	}
}

static int model_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		      size_t whylen)
{
	struct model_filter *mf = calloc(1, sizeof(*mf));
	int ret;

	if (!mf) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	if (!args || !*args) {
		free(mf);
		snprintf(why, whylen, "model: give one: hdd[:KEY=V,...] or ssd[:KEY=V,...]");
		return -EINVAL;
	}
	ret = disk_model_new(args, lim->capacity, &mf->model, why, whylen);
	if (!ret && !mf->model) {
		snprintf(why, whylen, "model: 'none' is no model: leave the filter out");
		ret = -EINVAL;
	}
	if (ret) {
		free(mf);
		return ret;
	}
	mf->depth = disk_model_depth(mf->model);
	mf->heap = calloc(mf->depth, sizeof(*mf->heap));
	if (!mf->heap) {
		disk_model_free(mf->model);
		free(mf);
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	/* the model is the device the queue sees: it seeks or not, whatever is below */
	lim->rotational = disk_model_rotational(mf->model);
	lim->model = mf->model;
	dev->priv = mf;
	return 0;
}

static void model_close(struct blk_dev *dev)
{
	struct model_filter *mf = dev->priv;

	disk_model_free(mf->model);
	free(mf->heap);
	free(mf);
}

static bool model_can_take(struct blk_dev *dev)
{
	struct model_filter *mf = dev->priv;

	return mf->in_flight < mf->depth && dev_can_take(dev->lower);
}

/* The device takes rq now: the model says when it ends, and the request goes on down. */
static void model_submit(struct blk_dev *dev, struct request *rq)
{
	struct model_filter *mf = dev->priv;
	struct model_rq *p = dev_rq_pdu(dev, rq);
	struct model_io io = {
		.op = rq->cmd_op,
		.flags = rq->cmd_flags,
		.sector = blk_rq_pos(rq),
		.nr_sectors = blk_rq_sectors(rq),
	};
	uint64_t at = disk_model_service(mf->model, &io, dev_now(dev));

	p->at = at < MODEL_TIME_MAX ? at : MODEL_TIME_MAX;
	p->seq = mf->seq++;
	p->total = p->left = blk_rq_sectors(rq);
	mf->in_flight++;
	dev_submit(dev->lower, rq);
}

/* Its time has come: the good prefix as done, then the error for the rest. */
static void model_pass_up(struct blk_dev *dev, struct request *rq)
{
	struct model_filter *mf = dev->priv;
	struct model_rq *p = dev_rq_pdu(dev, rq);
	unsigned int total = p->total, moved = p->moved;
	int error = p->error;

	mf->in_flight--; /* free before the queue runs again from the end */
	if (error && moved)
		dev_end(dev, rq, 0, moved);
	dev_end(dev, rq, error, error ? total - moved : total);
}

static void model_timer(struct blk_dev *dev, uint64_t now);

/* No sector ends above before the device would have ended the request. */
static void model_end(struct blk_dev *dev, struct request *rq, int error, unsigned int nr_sectors)
{
	struct model_filter *mf = dev->priv;
	struct model_rq *p = dev_rq_pdu(dev, rq);

	p->left -= nr_sectors < p->left ? nr_sectors : p->left;
	if (error && !p->error)
		p->error = error;
	else if (!p->error)
		p->moved += nr_sectors;
	if (p->left)
		return;
	held_push(mf, (struct model_held){ p->at, p->seq, rq });
	/*
	 * Due already: it goes up now, but after any held one the model ends
	 * first, which a host that woke late has not timed out yet.
	 */
	if (mf->heap[0].at <= dev_now(dev))
		model_timer(dev, dev_now(dev));
	else
		dev_set_timer(dev, mf->heap[0].at);
}

static void model_timer(struct blk_dev *dev, uint64_t now)
{
	struct model_filter *mf = dev->priv;

	while (mf->nr_held && mf->heap[0].at <= now)
		model_pass_up(dev, held_pop(mf));
	dev_set_timer(dev, mf->nr_held ? mf->heap[0].at : 0);
}

static int model_describe(const struct blk_dev *dev, char *buf, size_t len)
{
	const struct model_filter *mf = dev->priv;

	return disk_model_describe(mf->model, buf, len);
}

/* Requests below it now: taken, not yet ended below.  With held, never more than depth. */
static int model_show_in_flight(struct blk_dev *dev, char *buf, size_t len)
{
	const struct model_filter *mf = dev->priv;

	return snprintf(buf, len, "%u\n", mf->in_flight - mf->nr_held);
}

/* Ended below, waiting for the time the model gave them. */
static int model_show_held(struct blk_dev *dev, char *buf, size_t len)
{
	const struct model_filter *mf = dev->priv;

	return snprintf(buf, len, "%u\n", mf->nr_held);
}

/* device/model/: what the modelled device holds now, read-only. */
static const struct dev_attr model_attrs[] = {
	{ "in_flight", model_show_in_flight, NULL },
	{ "held", model_show_held, NULL },
	{ NULL, NULL, NULL },
};

DEV_REGISTER(model, "model",
	.description = "times each request as a disk would, hdd or ssd, on the queue's clock",
	.keys = model_types,
	.rq_pdu_size = sizeof(struct model_rq),
	.open = model_open,
	.close = model_close,
	.can_take = model_can_take,
	.submit = model_submit,
	.end = model_end,
	.timer = model_timer,
	.describe = model_describe,
	.attrs = model_attrs);
