/* clook.c - the C-LOOK elevator: sweeps up from the head, then jumps back to the lowest. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "elevator.h"

RB_HEAD(clook_sort, request);

struct clook_data {
	struct clook_sort sort_list;
	sector_t head; /* where the last dispatched request ended; 0 before the first */
};

ELV_RB_GENERATE(clook_sort, elv_rq_sector_cmp)

static int clook_init_queue(struct elevator_queue *e)
{
	struct clook_data *cd = calloc(1, sizeof(*cd));

	if (!cd)
		return -ENOMEM;
	RB_INIT(&cd->sort_list);
	e->elevator_data = cd;
	return 0;
}

static void clook_exit_queue(struct elevator_queue *e)
{
	struct clook_data *cd = e->elevator_data;

	assert(RB_EMPTY(&cd->sort_list));
	free(cd);
}

static void clook_add_request(struct elevator_queue *e, struct request *rq)
{
	struct clook_data *cd = e->elevator_data;

	RB_INSERT(clook_sort, &cd->sort_list, rq);
}

/*
 * The sweep goes on upward from the head; with nothing at or above it, the
 * head jumps back to the lowest request and sweeps up again.  A request
 * behind the head, however near, waits for the next sweep.
 */
static struct request *clook_dispatch_request(struct elevator_queue *e, uint64_t now_ns)
{
	struct clook_data *cd = e->elevator_data;
	struct request *rq = elv_rb_ceiling(RB_ROOT(&cd->sort_list), cd->head);

	(void)now_ns;
	if (!rq)
		rq = RB_MIN(clook_sort, &cd->sort_list);
	if (!rq)
		return NULL;
	RB_REMOVE(clook_sort, &cd->sort_list, rq);
	cd->head = blk_rq_end_sector(rq);
	return rq;
}

static bool clook_has_work(const struct elevator_queue *e)
{
	const struct clook_data *cd = e->elevator_data;

	return !RB_EMPTY(&cd->sort_list);
}

/* A front merge moved rq's start: put it back in sector order. */
static void clook_request_merged(struct elevator_queue *e, struct request *rq,
				 enum elv_merge type)
{
	struct clook_data *cd = e->elevator_data;

	if (type != ELEVATOR_FRONT_MERGE)
		return;
	RB_REMOVE(clook_sort, &cd->sort_list, rq);
	RB_INSERT(clook_sort, &cd->sort_list, rq);
}

static void clook_requests_merged(struct elevator_queue *e, struct request *rq,
				  struct request *next)
{
	struct clook_data *cd = e->elevator_data;

	(void)rq;
	RB_REMOVE(clook_sort, &cd->sort_list, next);
}

static struct elevator_type elevator_clook = {
	.elevator_name = "clook",
	.init_queue = clook_init_queue,
	.exit_queue = clook_exit_queue,
	.add_request = clook_add_request,
	.dispatch_request = clook_dispatch_request,
	.has_work = clook_has_work,
	.request_merged = clook_request_merged,
	.requests_merged = clook_requests_merged,
};

ELEVATOR_REGISTER(clook, elevator_clook)
