/* sstf.c - the shortest-seek-time-first elevator: the request nearest the head goes next. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "elevator.h"

RB_HEAD(sstf_sort, request);

struct sstf_data {
	struct sstf_sort sort_list;
	sector_t head; /* where the last dispatched request ended; 0 before the first */
};

ELV_RB_GENERATE(sstf_sort, elv_rq_sector_cmp)

static int sstf_init_queue(struct elevator_queue *e)
{
	struct sstf_data *sd = calloc(1, sizeof(*sd));

	if (!sd)
		return -ENOMEM;
	RB_INIT(&sd->sort_list);
	e->elevator_data = sd;
	return 0;
}

static void sstf_exit_queue(struct elevator_queue *e)
{
	struct sstf_data *sd = e->elevator_data;

	assert(RB_EMPTY(&sd->sort_list));
	free(sd);
}

static void sstf_add_request(struct elevator_queue *e, struct request *rq)
{
	struct sstf_data *sd = e->elevator_data;

	RB_INSERT(sstf_sort, &sd->sort_list, rq);
}

/*
 * The nearest request is one of the two around the head: the first at or
 * above it and the last below it.  A tie goes up: the head has just moved up
 * through the request before, and going on that way is what sequential
 * streams and C-LOOK do too.
 */
static struct request *sstf_dispatch_request(struct elevator_queue *e, uint64_t now_ns)
{
	struct sstf_data *sd = e->elevator_data;
	struct request *above = elv_rb_ceiling(RB_ROOT(&sd->sort_list), sd->head);
	struct request *below = above ? RB_PREV(sstf_sort, &sd->sort_list, above)
				      : RB_MAX(sstf_sort, &sd->sort_list);
	struct request *rq = above;

	(void)now_ns;
	if (!above || (below && sd->head - blk_rq_pos(below) < blk_rq_pos(above) - sd->head))
		rq = below;
	if (!rq)
		return NULL;
	RB_REMOVE(sstf_sort, &sd->sort_list, rq);
	sd->head = blk_rq_end_sector(rq);
	return rq;
}

static bool sstf_has_work(const struct elevator_queue *e)
{
	const struct sstf_data *sd = e->elevator_data;

	return !RB_EMPTY(&sd->sort_list);
}

/* A front merge moved rq's start: put it back in sector order. */
static void sstf_request_merged(struct elevator_queue *e, struct request *rq, enum elv_merge type)
{
	struct sstf_data *sd = e->elevator_data;

	if (type != ELEVATOR_FRONT_MERGE)
		return;
	RB_REMOVE(sstf_sort, &sd->sort_list, rq);
	RB_INSERT(sstf_sort, &sd->sort_list, rq);
}

static void sstf_requests_merged(struct elevator_queue *e, struct request *rq,
				 struct request *next)
{
	struct sstf_data *sd = e->elevator_data;

	(void)rq;
	RB_REMOVE(sstf_sort, &sd->sort_list, next);
}

static struct elevator_type elevator_sstf = {
	.elevator_name = "sstf",
	.init_queue = sstf_init_queue,
	.exit_queue = sstf_exit_queue,
	.add_request = sstf_add_request,
	.dispatch_request = sstf_dispatch_request,
	.has_work = sstf_has_work,
	.request_merged = sstf_request_merged,
	.requests_merged = sstf_requests_merged,
};

ELEVATOR_REGISTER(sstf, elevator_sstf)
