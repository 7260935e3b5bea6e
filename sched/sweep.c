/* SPDX-License-Identifier: BSD-3-Clause */
/* sweep.c - the hooks of sstf and clook that only keep the sorted tree and the head. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "sweep.h"

int sweep_init_queue(struct elevator_queue *e)
{
	struct sweep_data *sd = calloc(1, sizeof(*sd));

	if (!sd)
		return -ENOMEM;
	elv_rb_init(&sd->sort_list);
	e->elevator_data = sd;
	return 0;
}

void sweep_exit_queue(struct elevator_queue *e)
{
	struct sweep_data *sd = e->elevator_data;

	assert(elv_rb_empty(&sd->sort_list));
	free(sd);
}

void sweep_add_request(struct elevator_queue *e, struct request *rq)
{
	struct sweep_data *sd = e->elevator_data;

	elv_rb_add(&sd->sort_list, rq);
}

bool sweep_has_work(const struct elevator_queue *e)
{
	const struct sweep_data *sd = e->elevator_data;

	return !elv_rb_empty(&sd->sort_list);
}

/* Nothing of next carries over: the order is by sector alone. */
void sweep_requests_merged(struct elevator_queue *e, struct request *rq, struct request *next)
{
	struct sweep_data *sd = e->elevator_data;

	(void)rq;
	elv_rb_del(&sd->sort_list, next);
}

struct request *sweep_take(struct sweep_data *sd, struct request *rq)
{
	if (!rq)
		return NULL;
	elv_rb_del(&sd->sort_list, rq);
	sd->head = blk_rq_end_sector(rq);
	return rq;
}
