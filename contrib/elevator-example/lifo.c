/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lifo.c - an example rqdisk elevator built outside the tree: last in, first out.
 *
 * The newest request goes first, which makes a terrible disk scheduler and
 * an easy one to check: submit sectors 0, 100, 200 and they reach the
 * driver as 200, 100, 0.  So that nothing waits for ever under a steady
 * stream of new requests, one that has waited "expire" milliseconds goes
 * ahead of the newer ones.  expire 0 therefore turns lifo into fifo.
 *
 * Build it:  cc $(pkg-config --cflags rqdisk) -shared -fPIC -o lifo.so lifo.c
 * Run it:    rqdisk --elevator ./lifo.so IMAGE MOUNTPOINT
 *
 * See rqdisk-elevator(3) for every hook and the rules the core keeps for
 * an elevator: merging, barriers, limits and locking are the core's, so an
 * elevator only chooses which of its queued requests goes next.
 */
#include <assert.h>
#include <limits.h>
#include <stdlib.h>

#include <rqdisk/elevator.h>

/* A request that has waited this long goes next, however many came after it. */
#define LIFO_EXPIRE_MS 1000

TAILQ_HEAD(lifo_list, request);

/* One per queue, in e->elevator_data. */
struct lifo_data {
	struct lifo_list queue; /* newest at the head, oldest at the tail */
	uint64_t expire_ns;     /* the tunable, kept in nanoseconds */
};

/* Required: called when the elevator starts on a queue. */
static int lifo_init_queue(struct elevator_queue *e)
{
	struct lifo_data *ld = malloc(sizeof(*ld));

	if (!ld)
		return -1;
	TAILQ_INIT(&ld->queue);
	ld->expire_ns = LIFO_EXPIRE_MS * NSEC_PER_MSEC;
	e->elevator_data = ld;
	return 0;
}

/* Required: the core has taken every request back before calling this. */
static void lifo_exit_queue(struct elevator_queue *e)
{
	struct lifo_data *ld = e->elevator_data;

	assert(TAILQ_EMPTY(&ld->queue));
	free(ld);
}

/*
 * Required: a new request.  rq->queuelist and rq->fifo_time are the
 * elevator's to use while the request is queued here.
 */
static void lifo_add_request(struct elevator_queue *e, struct request *rq)
{
	struct lifo_data *ld = e->elevator_data;

	rq->fifo_time = blk_clock_now(e->clock) + ld->expire_ns;
	TAILQ_INSERT_HEAD(&ld->queue, rq, queuelist);
}

/*
 * Required: the request to run next, taken off our list, or NULL.  lifo
 * never holds work back, so it has nothing special to do when the core
 * sets e->draining to empty it (an elevator that idles must stop then).
 */
static struct request *lifo_dispatch_request(struct elevator_queue *e, uint64_t now_ns)
{
	struct lifo_data *ld = e->elevator_data;
	struct request *rq = TAILQ_LAST(&ld->queue, lifo_list);

	/* the oldest if it has waited long enough, else the newest */
	if (rq && rq->fifo_time > now_ns)
		rq = TAILQ_FIRST(&ld->queue);
	if (rq)
		TAILQ_REMOVE(&ld->queue, rq, queuelist);
	return rq;
}

/* Required. */
static bool lifo_has_work(const struct elevator_queue *e)
{
	const struct lifo_data *ld = e->elevator_data;

	return !TAILQ_EMPTY(&ld->queue);
}

/*
 * Optional: the core merged next into rq (a bio closed the gap between
 * them) and is about to free next: forget it.  Without this hook the core
 * never merges two queued requests.  rq keeps its place.
 */
static void lifo_requests_merged(struct elevator_queue *e, struct request *rq,
				 struct request *next)
{
	struct lifo_data *ld = e->elevator_data;

	(void)rq;
	TAILQ_REMOVE(&ld->queue, next, queuelist);
}

/*
 * The tunable queue/iosched/expire: shown and set in milliseconds, kept in
 * nanoseconds.  The core parses the value and refuses one out of
 * [0, INT_MAX]; a new value applies to requests added from then on.
 */
ELV_TUNABLE(lifo, expire, struct lifo_data, expire_ns, 0, INT_MAX, NSEC_PER_MSEC);

static const struct elv_tunable lifo_tunables[] = {
	ELV_ATTR(lifo, expire),
	{ 0 },
};

/* Fields left out are NULL: optional hooks the core does without. */
static struct elevator_type elevator_lifo = {
	.elevator_name = "lifo",
	.elevator_description = "last in, first out",
	.init_queue = lifo_init_queue,
	.exit_queue = lifo_exit_queue,
	.add_request = lifo_add_request,
	.dispatch_request = lifo_dispatch_request,
	.has_work = lifo_has_work,
	.requests_merged = lifo_requests_merged,
	.tunables = lifo_tunables,
};

/* Fills in the size and API version, and exports rqdisk_elevator_init(). */
ELEVATOR_REGISTER(lifo, elevator_lifo)
