/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backend_sim.c - the simulated backend of rqdisk-replay: it moves no data
 * and ends every request whole, without error, at the time it came, so
 * that the filters above alone say when a request ends.  It counts what
 * the replay reports of the device: requests, and the head's travel.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/queue.h>

#include "backend.h"

/* What the backend keeps with each request: its place in the FIFO. */
struct sim_rq {
	TAILQ_ENTRY(sim_rq) link;
	struct request *rq;
};

TAILQ_HEAD(sim_list, sim_rq);

struct sim_backend {
	struct sim_list fifo; /* taken, not yet ended: in submission order */
	unsigned int nr;
	sector_t head; /* where the last data request ended */
	struct dev_sim_stats stats;
};

static int sim_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		    size_t whylen)
{
	struct sim_backend *sb;

	if (args && *args) {
		snprintf(why, whylen, "sim: takes no arguments, not '%s'", args);
		return -EINVAL;
	}
	if (!lim->capacity) {
		snprintf(why, whylen, "sim: a disk of no sectors");
		return -EINVAL;
	}
	sb = calloc(1, sizeof(*sb));
	if (!sb) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	if (!lim->logical_block_size)
		lim->logical_block_size = SECTOR_SIZE;
	lim->discard = lim->write_zeroes = true; /* a trace replays whatever it holds */
	lim->no_data = true;                     /* a trace has none, and nothing is kept */
	TAILQ_INIT(&sb->fifo);
	dev->priv = sb;
	return 0;
}

static void sim_close(struct blk_dev *dev)
{
	free(dev->priv);
}

/* As many as the queue lets out at once: the filters above limit it further. */
static bool sim_can_take(struct blk_dev *dev)
{
	struct sim_backend *sb = dev->priv;

	return sb->nr < dev_depth(dev);
}

static uint64_t sim_add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Counted as the device sees it; ended from the timer, never from inside submit. */
static void sim_submit(struct blk_dev *dev, struct request *rq)
{
	struct sim_backend *sb = dev->priv;
	struct sim_rq *s = dev_rq_pdu(dev, rq);
	sector_t pos = blk_rq_pos(rq);
	uint64_t travel = pos > sb->head ? pos - sb->head : sb->head - pos;

	sb->stats.requests++;
	if (op_has_data(rq->cmd_op)) {
		sb->stats.seek_sectors = sim_add_sat(sb->stats.seek_sectors, travel);
		sb->head = pos + blk_rq_sectors(rq);
	}
	s->rq = rq;
	TAILQ_INSERT_TAIL(&sb->fifo, s, link);
	sb->nr++;
	dev_set_timer(dev, dev_now(dev));
}

/*
 * Oldest first, and those an end lets down meanwhile too: at one time the
 * requests end in the order they came, as one step.
 */
static void sim_timer(struct blk_dev *dev, uint64_t now)
{
	struct sim_backend *sb = dev->priv;
	struct sim_rq *s;

	while ((s = TAILQ_FIRST(&sb->fifo))) {
		struct request *rq = s->rq;

		TAILQ_REMOVE(&sb->fifo, s, link);
		sb->nr--;
		dev_end(dev, rq, 0, blk_rq_sectors(rq));
	}
	dev_set_timer(dev, 0);
}

const struct dev_sim_stats *dev_sim_stats(const struct blk_dev *dev)
{
	const struct sim_backend *sb = dev->priv;

	return &sb->stats;
}

BACKEND_REGISTER(sim,
	.description = "rqdisk-replay's device: ends each request when it comes, and counts",
	.rq_pdu_size = sizeof(struct sim_rq),
	.open = sim_open,
	.close = sim_close,
	.can_take = sim_can_take,
	.submit = sim_submit,
	.timer = sim_timer);
