/* SPDX-License-Identifier: BSD-3-Clause */
/* sweep.h - what sstf and clook share: a sector-sorted tree, a head, and the hooks on them. */
#ifndef RQDISK_SWEEP_H
#define RQDISK_SWEEP_H

#include "elevator.h"

/* elevator_data of an elevator that chooses by the head's place alone. */
struct sweep_data {
	struct elv_rb_root sort_list;
	sector_t head; /* where the last dispatched request ended; 0 before the first */
};

int sweep_init_queue(struct elevator_queue *e);
void sweep_exit_queue(struct elevator_queue *e);
void sweep_add_request(struct elevator_queue *e, struct request *rq);
bool sweep_has_work(const struct elevator_queue *e);
void sweep_requests_merged(struct elevator_queue *e, struct request *rq, struct request *next);

/* Take the chosen rq (or NULL) out for dispatch: the head moves to its end. */
struct request *sweep_take(struct sweep_data *sd, struct request *rq);

#endif
