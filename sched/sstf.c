/* SPDX-License-Identifier: BSD-3-Clause */
/* sstf.c - the shortest-seek-time-first elevator: the request nearest the head goes next. */
#include "rq_rbtree.h"
#include "sweep.h"

/*
 * The nearest request is one of the two around the head: the first at or
 * above it and the last below it.  A tie goes up: the head has just moved up
 * through the request before, and going on that way is what sequential
 * streams and C-LOOK do too.
 */
static struct request *sstf_dispatch_request(struct elevator_queue *e, uint64_t now_ns)
{
	struct sweep_data *sd = e->elevator_data;
	struct request *above, *below;

	(void)now_ns;
	rq_rb_around(&sd->sort_list, sd->head, &above, &below);
	if (!above || (below && sd->head - blk_rq_pos(below) < blk_rq_pos(above) - sd->head))
		return sweep_take(sd, below);
	return sweep_take(sd, above);
}

static struct elevator_type elevator_sstf = {
	.elevator_name = "sstf",
	.elevator_description = "shortest seek time first: the request nearest the head",
	.init_queue = sweep_init_queue,
	.exit_queue = sweep_exit_queue,
	.add_request = sweep_add_request,
	.dispatch_request = sstf_dispatch_request,
	.has_work = sweep_has_work,
	.requests_merged = sweep_requests_merged,
};

ELEVATOR_REGISTER(sstf, elevator_sstf)
