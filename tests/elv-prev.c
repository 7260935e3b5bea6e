/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * elv-prev.c - an elevator as one built against the previous API version
 * (3) would register: that version number, and a table that ends where
 * version 3's did, before the multi-queue hooks.  check_loader loads it: a
 * 2.6 queue runs it (first in, first out), a multi-queue queue refuses it.
 */
#include <stdlib.h>

#include <rqdisk/elevator.h>

struct prev_data {
	struct elv_fifo fifo;
};

static int prev_init_queue(struct elevator_queue *e)
{
	struct prev_data *pd = calloc(1, sizeof(*pd));

	if (!pd)
		return -1;
	TAILQ_INIT(&pd->fifo);
	e->elevator_data = pd;
	return 0;
}

static void prev_exit_queue(struct elevator_queue *e)
{
	free(e->elevator_data);
}

static void prev_add_request(struct elevator_queue *e, struct request *rq)
{
	struct prev_data *pd = e->elevator_data;

	TAILQ_INSERT_TAIL(&pd->fifo, rq, queuelist);
}

static struct request *prev_dispatch_request(struct elevator_queue *e, uint64_t now_ns)
{
	struct prev_data *pd = e->elevator_data;
	struct request *rq = TAILQ_FIRST(&pd->fifo);

	(void)now_ns;
	if (rq)
		TAILQ_REMOVE(&pd->fifo, rq, queuelist);
	return rq;
}

static bool prev_has_work(const struct elevator_queue *e)
{
	const struct prev_data *pd = e->elevator_data;

	return !TAILQ_EMPTY(&pd->fifo);
}

static struct elevator_type elevator_prev = {
	.elevator_name = "prev",
	.init_queue = prev_init_queue,
	.exit_queue = prev_exit_queue,
	.add_request = prev_add_request,
	.dispatch_request = prev_dispatch_request,
	.has_work = prev_has_work,
	.elevator_description = "first in, first out, built for API version 3",
};

const struct elevator_type *rqdisk_elevator_init(void);
__attribute__((visibility("default"))) const struct elevator_type *rqdisk_elevator_init(void)
{
	elevator_prev.size = offsetof(struct elevator_type, mq_ops);
	elevator_prev.api_version = ELV_API_VERSION_RQ_ONLY;
	return &elevator_prev;
}
