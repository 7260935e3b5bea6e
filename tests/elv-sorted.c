/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * elv-sorted.c - a test elevator built on the core's sorted tree, as an
 * elevator outside the tree would: one upward sweep from the head, then
 * back to the lowest (C-LOOK), front merges found with elv_rb_find(), and
 * merged requests keeping the earlier deadline with elv_fifo_merge().  The
 * host must export every one of those functions for it to load.
 */
#include <assert.h>
#include <stdlib.h>

#include <rqdisk/elevator.h>

struct sorted_data {
	struct elv_rb_root tree;
	struct elv_fifo fifo; /* only for elv_fifo_merge: the order is the tree's */
	sector_t head;
};

static int sorted_init_queue(struct elevator_queue *e)
{
	struct sorted_data *sd = calloc(1, sizeof(*sd));

	if (!sd)
		return -1;
	elv_rb_init(&sd->tree);
	TAILQ_INIT(&sd->fifo);
	e->elevator_data = sd;
	return 0;
}

static void sorted_exit_queue(struct elevator_queue *e)
{
	struct sorted_data *sd = e->elevator_data;

	assert(elv_rb_empty(&sd->tree) && TAILQ_EMPTY(&sd->fifo));
	free(sd);
}

static void sorted_add_request(struct elevator_queue *e, struct request *rq)
{
	struct sorted_data *sd = e->elevator_data;

	elv_rb_add(&sd->tree, rq);
	rq->fifo_time = blk_clock_now(e->clock);
	TAILQ_INSERT_TAIL(&sd->fifo, rq, queuelist);
}

static void sorted_remove(struct sorted_data *sd, struct request *rq)
{
	elv_rb_del(&sd->tree, rq);
	TAILQ_REMOVE(&sd->fifo, rq, queuelist);
}

static struct request *sorted_dispatch_request(struct elevator_queue *e, uint64_t now_ns)
{
	struct sorted_data *sd = e->elevator_data;
	struct request *rq = elv_rb_ceiling(&sd->tree, sd->head);

	(void)now_ns;
	if (!rq)
		rq = elv_rb_first(&sd->tree);
	if (!rq)
		return NULL;
	sorted_remove(sd, rq);
	sd->head = blk_rq_end_sector(rq);
	return rq;
}

static bool sorted_has_work(const struct elevator_queue *e)
{
	const struct sorted_data *sd = e->elevator_data;

	return !elv_rb_empty(&sd->tree);
}

static enum elv_merge sorted_find_merge(struct elevator_queue *e, const struct bio *bio,
					struct request **rq)
{
	struct sorted_data *sd = e->elevator_data;

	*rq = elv_rb_find(&sd->tree, bio_end_sector(bio));
	return *rq ? ELEVATOR_FRONT_MERGE : ELEVATOR_NO_MERGE;
}

static void sorted_requests_merged(struct elevator_queue *e, struct request *rq,
				   struct request *next)
{
	struct sorted_data *sd = e->elevator_data;

	elv_fifo_merge(&sd->fifo, rq, next);
	sorted_remove(sd, next);
}

static struct elevator_type elevator_sorted = {
	.elevator_name = "sorted",
	.init_queue = sorted_init_queue,
	.exit_queue = sorted_exit_queue,
	.add_request = sorted_add_request,
	.dispatch_request = sorted_dispatch_request,
	.has_work = sorted_has_work,
	.find_merge = sorted_find_merge,
	.requests_merged = sorted_requests_merged,
};

ELEVATOR_REGISTER(sorted, elevator_sorted)
