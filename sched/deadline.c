/*
 * deadline.c - the deadline elevator, after Linux mq-deadline: requests are
 * served in sector order in batches, a FIFO per direction bounds how long
 * one may wait, and reads go first without starving writes.
 */
#include <assert.h>
#include <limits.h>
#include <stdlib.h>

#include "elevator.h"

/* Defaults of mq-deadline. */
#define DD_READ_EXPIRE_MS 500    /* a read waits at most this long... */
#define DD_WRITE_EXPIRE_MS 5000  /* ...and a write this long, when they can */
#define DD_WRITES_STARVED 2      /* read batches that may pass waiting writes */
#define DD_FIFO_BATCH 16         /* requests in one sector-ordered batch */
#define DD_FRONT_MERGES 1

enum { DD_READ, DD_WRITE };

struct deadline_data {
	struct elv_rb_root sort_list[2];
	struct elv_fifo fifo_list[2];
	struct request *next_rq[2]; /* the batch goes on from here */
	unsigned int batching;      /* requests in the current batch */
	unsigned int starved;       /* read batches run while writes waited */

	uint64_t fifo_expire[2]; /* ns */
	int fifo_batch;
	int writes_starved;
	int front_merges;
};

static int dd_init_queue(struct elevator_queue *e)
{
	struct deadline_data *dd = calloc(1, sizeof(*dd));

	if (!dd)
		return -1;
	for (int dir = DD_READ; dir <= DD_WRITE; dir++) {
		elv_rb_init(&dd->sort_list[dir]);
		TAILQ_INIT(&dd->fifo_list[dir]);
	}
	dd->fifo_expire[DD_READ] = DD_READ_EXPIRE_MS * NSEC_PER_MSEC;
	dd->fifo_expire[DD_WRITE] = DD_WRITE_EXPIRE_MS * NSEC_PER_MSEC;
	dd->fifo_batch = DD_FIFO_BATCH;
	dd->writes_starved = DD_WRITES_STARVED;
	dd->front_merges = DD_FRONT_MERGES;
	e->elevator_data = dd;
	return 0;
}

static void dd_exit_queue(struct elevator_queue *e)
{
	struct deadline_data *dd = e->elevator_data;

	assert(TAILQ_EMPTY(&dd->fifo_list[DD_READ]) && TAILQ_EMPTY(&dd->fifo_list[DD_WRITE]));
	free(dd);
}

static void dd_add_request(struct elevator_queue *e, struct request *rq)
{
	struct deadline_data *dd = e->elevator_data;
	int dir = rq_data_dir(rq);

	elv_rb_add(&dd->sort_list[dir], rq);
	rq->fifo_time = blk_clock_now(e->clock) + dd->fifo_expire[dir];
	TAILQ_INSERT_TAIL(&dd->fifo_list[dir], rq, queuelist);
}

static void dd_remove_request(struct deadline_data *dd, struct request *rq)
{
	int dir = rq_data_dir(rq);

	if (dd->next_rq[dir] == rq)
		dd->next_rq[dir] = elv_rb_next(rq);
	elv_rb_del(&dd->sort_list[dir], rq);
	TAILQ_REMOVE(&dd->fifo_list[dir], rq, queuelist);
}

/* The batch continues in this direction only, from the request after rq. */
static void dd_move_request(struct deadline_data *dd, struct request *rq)
{
	int dir = rq_data_dir(rq);

	dd->next_rq[DD_READ] = dd->next_rq[DD_WRITE] = NULL;
	dd->next_rq[dir] = elv_rb_next(rq);
	dd_remove_request(dd, rq);
}

static bool dd_fifo_expired(const struct deadline_data *dd, int dir, uint64_t now)
{
	const struct request *rq = TAILQ_FIRST(&dd->fifo_list[dir]);

	return rq && now >= rq->fifo_time;
}

/* Which direction a new batch serves: reads, unless writes starved long enough. */
static int dd_choose_dir(struct deadline_data *dd)
{
	bool reads = !TAILQ_EMPTY(&dd->fifo_list[DD_READ]);
	bool writes = !TAILQ_EMPTY(&dd->fifo_list[DD_WRITE]);

	if (reads && !(writes && dd->starved++ >= (unsigned int)dd->writes_starved))
		return DD_READ;
	dd->starved = 0;
	return DD_WRITE;
}

static struct request *dd_dispatch_request(struct elevator_queue *e, uint64_t now)
{
	struct deadline_data *dd = e->elevator_data;
	struct request *rq = dd->next_rq[DD_READ] ? dd->next_rq[DD_READ] : dd->next_rq[DD_WRITE];
	int dir;

	if (!rq || dd->batching >= (unsigned int)dd->fifo_batch) {
		if (TAILQ_EMPTY(&dd->fifo_list[DD_READ]) && TAILQ_EMPTY(&dd->fifo_list[DD_WRITE]))
			return NULL;
		dir = dd_choose_dir(dd);
		rq = dd->next_rq[dir];
		if (!rq || dd_fifo_expired(dd, dir, now))
			rq = TAILQ_FIRST(&dd->fifo_list[dir]);
		dd->batching = 0;
	}
	dd->batching++;
	dd_move_request(dd, rq);
	return rq;
}

static bool dd_has_work(const struct elevator_queue *e)
{
	const struct deadline_data *dd = e->elevator_data;

	return !TAILQ_EMPTY(&dd->fifo_list[DD_READ]) || !TAILQ_EMPTY(&dd->fifo_list[DD_WRITE]);
}

/* Front merges: a queued request that starts where the bio ends. */
static enum elv_merge dd_find_merge(struct elevator_queue *e, const struct bio *bio,
				    struct request **rq)
{
	struct deadline_data *dd = e->elevator_data;
	int dir = op_is_write(bio->bi_op);

	if (!dd->front_merges)
		return ELEVATOR_NO_MERGE;
	*rq = elv_rb_find(&dd->sort_list[dir], bio_end_sector(bio));
	return *rq ? ELEVATOR_FRONT_MERGE : ELEVATOR_NO_MERGE;
}

/* next joins rq: rq keeps the earlier of the two deadlines and its FIFO place. */
static void dd_requests_merged(struct elevator_queue *e, struct request *rq,
			       struct request *next)
{
	struct deadline_data *dd = e->elevator_data;

	elv_fifo_merge(&dd->fifo_list[rq_data_dir(rq)], rq, next);
	dd_remove_request(dd, next);
}

ELV_TUNABLE(dd, read_expire, struct deadline_data, fifo_expire[DD_READ], 0, INT_MAX, NSEC_PER_MSEC);
ELV_TUNABLE(dd, write_expire, struct deadline_data, fifo_expire[DD_WRITE], 0, INT_MAX, NSEC_PER_MSEC);
ELV_TUNABLE(dd, writes_starved, struct deadline_data, writes_starved, 0, INT_MAX, 1);
ELV_TUNABLE(dd, fifo_batch, struct deadline_data, fifo_batch, 0, INT_MAX, 1);
ELV_TUNABLE(dd, front_merges, struct deadline_data, front_merges, 0, 1, 1);

static const struct elv_tunable dd_tunables[] = {
	ELV_ATTR(dd, read_expire),
	ELV_ATTR(dd, write_expire),
	ELV_ATTR(dd, writes_starved),
	ELV_ATTR(dd, fifo_batch),
	ELV_ATTR(dd, front_merges),
	{ 0 },
};

static struct elevator_type elevator_deadline = {
	.elevator_name = "deadline",
	.elevator_alias = "mq-deadline",
	.init_queue = dd_init_queue,
	.exit_queue = dd_exit_queue,
	.add_request = dd_add_request,
	.dispatch_request = dd_dispatch_request,
	.has_work = dd_has_work,
	.find_merge = dd_find_merge,
	.requests_merged = dd_requests_merged,
	.tunables = dd_tunables,
};

ELEVATOR_REGISTER(deadline, elevator_deadline)
