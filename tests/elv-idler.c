/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * elv-idler.c - a test elevator that idles: first in, first out, but a
 * request waits "idle" ms after it was added before it may go, the wait
 * asked for with elv_schedule_dispatch(), which the host must export to
 * elevators it loads.  While the core drains it (e->draining), it hands
 * everything out at once, as every elevator must.
 */
#include <assert.h>
#include <limits.h>
#include <stdlib.h>

#include <rqdisk/elevator.h>

#define IDLER_IDLE_MS 10 /* how long each request is held back */

TAILQ_HEAD(idler_list, request);

struct idler_data {
	struct idler_list queue;
	uint64_t idle_ns;
};

static int idler_init_queue(struct elevator_queue *e)
{
	struct idler_data *id = malloc(sizeof(*id));

	if (!id)
		return -1;
	TAILQ_INIT(&id->queue);
	id->idle_ns = IDLER_IDLE_MS * NSEC_PER_MSEC;
	e->elevator_data = id;
	return 0;
}

static void idler_exit_queue(struct elevator_queue *e)
{
	struct idler_data *id = e->elevator_data;

	assert(TAILQ_EMPTY(&id->queue));
	free(id);
}

static void idler_add_request(struct elevator_queue *e, struct request *rq)
{
	struct idler_data *id = e->elevator_data;

	rq->fifo_time = blk_clock_now(e->clock) + id->idle_ns;
	TAILQ_INSERT_TAIL(&id->queue, rq, queuelist);
}

static struct request *idler_dispatch_request(struct elevator_queue *e, uint64_t now_ns)
{
	struct idler_data *id = e->elevator_data;
	struct request *rq = TAILQ_FIRST(&id->queue);

	if (!rq)
		return NULL;
	if (!e->draining && now_ns < rq->fifo_time) {
		elv_schedule_dispatch(e, rq->fifo_time);
		return NULL;
	}
	TAILQ_REMOVE(&id->queue, rq, queuelist);
	return rq;
}

static bool idler_has_work(const struct elevator_queue *e)
{
	const struct idler_data *id = e->elevator_data;

	return !TAILQ_EMPTY(&id->queue);
}

ELV_TUNABLE(idler, idle, struct idler_data, idle_ns, 0, 1000, NSEC_PER_MSEC);

static const struct elv_tunable idler_tunables[] = {
	ELV_ATTR(idler, idle),
	{ 0 },
};

static struct elevator_type elevator_idler = {
	.elevator_name = "idler",
	.init_queue = idler_init_queue,
	.exit_queue = idler_exit_queue,
	.add_request = idler_add_request,
	.dispatch_request = idler_dispatch_request,
	.has_work = idler_has_work,
	.tunables = idler_tunables,
};

ELEVATOR_REGISTER(idler, elevator_idler)
