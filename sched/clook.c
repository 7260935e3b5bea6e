/* SPDX-License-Identifier: BSD-3-Clause */
/* clook.c - the C-LOOK elevator: sweeps up from the head, then jumps back to the lowest. */
#include "rq_rbtree.h"
#include "sweep.h"

/*
 * The sweep goes on upward from the head; with nothing at or above it, the
 * head jumps back to the lowest request and sweeps up again.  A request
 * behind the head, however near, waits for the next sweep.
 */
static struct request *clook_dispatch_request(struct elevator_queue *e, uint64_t now_ns)
{
	struct sweep_data *sd = e->elevator_data;
	(void)now_ns;
	return sweep_take(sd, rq_rb_ceiling_wrap(&sd->sort_list, sd->head));
}

static struct elevator_type elevator_clook = {
	.elevator_name = "clook",
	.elevator_description = "circular LOOK: sweeps up the disk, then again from the lowest",
	.init_queue = sweep_init_queue,
	.exit_queue = sweep_exit_queue,
	.add_request = sweep_add_request,
	.dispatch_request = clook_dispatch_request,
	.has_work = sweep_has_work,
	.requests_merged = sweep_requests_merged,
};

ELEVATOR_REGISTER(clook, elevator_clook)
