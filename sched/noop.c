/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * noop.c - the noop elevator: first in, first out; the core still merges.
 * Unlike 2.6's noop, which offered the core only a request's neighbours in
 * the FIFO to join it with (noop_former_request, noop_latter_request), the
 * core here finds them by sector, as it does for every elevator.
 */
#include <stdlib.h>

#include "elevator.h"

TAILQ_HEAD(noop_list, request);

struct noop_data {
	struct noop_list queue;
};

static int noop_init_queue(struct elevator_queue *e)
{
	struct noop_data *nd = malloc(sizeof(*nd));

	if (!nd)
		return -1;
	TAILQ_INIT(&nd->queue);
	e->elevator_data = nd;
	return 0;
}

static void noop_exit_queue(struct elevator_queue *e)
{
	free(e->elevator_data);
}

static void noop_add_request(struct elevator_queue *e, struct request *rq)
{
	struct noop_data *nd = e->elevator_data;

	TAILQ_INSERT_TAIL(&nd->queue, rq, queuelist);
}

static struct request *noop_dispatch_request(struct elevator_queue *e, uint64_t now_ns)
{
	struct noop_data *nd = e->elevator_data;
	struct request *rq = TAILQ_FIRST(&nd->queue);

	(void)now_ns;
	if (rq)
		TAILQ_REMOVE(&nd->queue, rq, queuelist);
	return rq;
}

static bool noop_has_work(const struct elevator_queue *e)
{
	const struct noop_data *nd = e->elevator_data;

	return !TAILQ_EMPTY(&nd->queue);
}

static void noop_requests_merged(struct elevator_queue *e, struct request *rq,
				 struct request *next)
{
	struct noop_data *nd = e->elevator_data;

	(void)rq;
	TAILQ_REMOVE(&nd->queue, next, queuelist);
}

static struct elevator_type elevator_noop = {
	.elevator_name = "noop",
	.elevator_description = "one FIFO, merging only: for a device that orders requests itself",
	.init_queue = noop_init_queue,
	.exit_queue = noop_exit_queue,
	.add_request = noop_add_request,
	.dispatch_request = noop_dispatch_request,
	.has_work = noop_has_work,
	.requests_merged = noop_requests_merged,
};

ELEVATOR_REGISTER(noop, elevator_noop)
