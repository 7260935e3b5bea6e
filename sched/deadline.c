/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * deadline.c - the deadline elevator, after Linux mq-deadline: requests are
 * served in sector order in batches, a FIFO per direction bounds how long
 * one may wait, reads go first without starving writes, and the I/O
 * priority classes (real time, best effort, idle) are served in that order,
 * a lower one once it has waited prio_aging_expire.
 *
 * How it differs from the kernel's, on purpose:
 * - A batch goes on from the request after the last one dispatched (2.6's
 *   and mq-deadline's next_rq up to Linux 6.2), and a batch after one of the
 *   other direction starts at the FIFO head.  Since 6.3 mq-deadline looks up
 *   the first request at or above the last position instead (latest_pos):
 *   it picks up a request queued below the old next one, and resumes a
 *   direction's sweep after the other direction's batch.  Neither changes
 *   when a FIFO is looked at.
 * - A batch ends after fifo_batch requests, contiguous or not, as in
 *   mq-deadline; 2.6.23's deadline also ended it at the first request that
 *   did not start where the last one ended (last_sector), so that on random
 *   I/O it looked at the FIFO before nearly every request.
 * - A request expires at its deadline (mq-deadline's time_after_eq), not a
 *   tick later (2.6.23's time_after).
 * - The look for an aged request of a lower class changes nothing unless it
 *   dispatches one: the kernel's __dd_dispatch_request counts a starved
 *   write batch and restarts the batch count even when the request it would
 *   pick turns out too young.
 * - async_depth limits scheduler tags, which only a multi-queue queue has;
 *   on a 2.6 queue it is kept and shown, and changes nothing.
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "elevator.h"
#include "ioprio.h"

/* Defaults of mq-deadline. */
#define DD_READ_EXPIRE_MS 500    /* a read waits at most this long... */
#define DD_WRITE_EXPIRE_MS 5000  /* ...and a write this long, when they can */
#define DD_WRITES_STARVED 2      /* read batches that may pass waiting writes */
#define DD_FIFO_BATCH 16         /* requests in one sector-ordered batch */
#define DD_FRONT_MERGES 1
#define DD_PRIO_AGING_EXPIRE_MS 10000 /* a lower class waits at most this long for a higher */

enum { DD_READ, DD_WRITE };

/* The priority classes, served in this order. */
enum dd_prio { DD_RT_PRIO, DD_BE_PRIO, DD_IDLE_PRIO, DD_PRIO_COUNT };

/* One class's requests: sorted and in arrival order, per direction. */
struct dd_per_prio {
	struct elv_rb_root sort_list[2];
	struct elv_fifo fifo_list[2];
	struct request *next_rq[2]; /* the class's batch goes on from here */
	/* Queued or in flight: inserted - completed (a merged-away request counts as completed). */
	unsigned int inserted, completed;
};

struct deadline_data {
	struct dd_per_prio per_prio[DD_PRIO_COUNT];
	unsigned int batching; /* requests in the current batch, whatever their class */
	unsigned int starved;  /* read batches run while writes waited */

	uint64_t fifo_expire[2]; /* ns */
	int fifo_batch;
	int writes_starved;
	int front_merges;
	uint64_t prio_aging_expire; /* ns */
	/* Scheduler tags in use beyond which an async request or a write waits: 1..nr_requests. */
	unsigned int async_depth;
};

/* What the batch rules would dispatch next from one class, before anything changes. */
struct dd_pick {
	struct request *rq;
	bool new_batch;
	unsigned int starved; /* dd->starved once rq goes */
};

static enum dd_prio dd_prio_of(unsigned short ioprio)
{
	switch (ioprio_class(ioprio)) {
	case IOPRIO_CLASS_RT:
		return DD_RT_PRIO;
	case IOPRIO_CLASS_IDLE:
		return DD_IDLE_PRIO;
	default:
		return DD_BE_PRIO;
	}
}

static struct dd_per_prio *dd_per_prio_of(struct deadline_data *dd, const struct request *rq)
{
	return &dd->per_prio[dd_prio_of(rq->ioprio)];
}

static int dd_init_queue(struct elevator_queue *e)
{
	struct deadline_data *dd = calloc(1, sizeof(*dd));

	if (!dd)
		return -1;
	for (int prio = 0; prio < DD_PRIO_COUNT; prio++) {
		for (int dir = DD_READ; dir <= DD_WRITE; dir++) {
			elv_rb_init(&dd->per_prio[prio].sort_list[dir]);
			TAILQ_INIT(&dd->per_prio[prio].fifo_list[dir]);
		}
	}
	dd->fifo_expire[DD_READ] = DD_READ_EXPIRE_MS * NSEC_PER_MSEC;
	dd->fifo_expire[DD_WRITE] = DD_WRITE_EXPIRE_MS * NSEC_PER_MSEC;
	dd->fifo_batch = DD_FIFO_BATCH;
	dd->writes_starved = DD_WRITES_STARVED;
	dd->front_merges = DD_FRONT_MERGES;
	dd->prio_aging_expire = DD_PRIO_AGING_EXPIRE_MS * NSEC_PER_MSEC;
	/* the full depth, as dd_depth_updated since Linux 6.10: nothing is held back until set */
	dd->async_depth = e->nr_requests ? e->nr_requests : 1;
	e->elevator_data = dd;
	return 0;
}

/* dd_depth_updated (Linux 6.10 on): the full new depth, whatever async_depth was set to. */
static void dd_depth_updated(struct elevator_queue *e)
{
	struct deadline_data *dd = e->elevator_data;

	dd->async_depth = e->nr_requests;
}

static bool dd_prio_empty(const struct dd_per_prio *pp)
{
	return TAILQ_EMPTY(&pp->fifo_list[DD_READ]) && TAILQ_EMPTY(&pp->fifo_list[DD_WRITE]);
}

static void dd_exit_queue(struct elevator_queue *e)
{
	struct deadline_data *dd = e->elevator_data;

	for (int prio = 0; prio < DD_PRIO_COUNT; prio++)
		assert(dd_prio_empty(&dd->per_prio[prio]));
	free(dd);
}

static void dd_add_request(struct elevator_queue *e, struct request *rq)
{
	struct deadline_data *dd = e->elevator_data;
	struct dd_per_prio *pp = dd_per_prio_of(dd, rq);
	int dir = rq_data_dir(rq);

	elv_rb_add(&pp->sort_list[dir], rq);
	rq->fifo_time = blk_clock_now(e->clock) + dd->fifo_expire[dir];
	TAILQ_INSERT_TAIL(&pp->fifo_list[dir], rq, queuelist);
	pp->inserted++;
}

static void dd_remove_request(struct dd_per_prio *pp, struct request *rq)
{
	int dir = rq_data_dir(rq);

	if (pp->next_rq[dir] == rq)
		pp->next_rq[dir] = elv_rb_next(rq);
	elv_rb_del(&pp->sort_list[dir], rq);
	TAILQ_REMOVE(&pp->fifo_list[dir], rq, queuelist);
}

/* The class's batch continues in this direction only, from the request after rq. */
static void dd_move_request(struct dd_per_prio *pp, struct request *rq)
{
	int dir = rq_data_dir(rq);

	pp->next_rq[DD_READ] = pp->next_rq[DD_WRITE] = NULL;
	pp->next_rq[dir] = elv_rb_next(rq);
	dd_remove_request(pp, rq);
}

static bool dd_fifo_expired(const struct dd_per_prio *pp, int dir, uint64_t now)
{
	const struct request *rq = TAILQ_FIRST(&pp->fifo_list[dir]);

	return rq && now >= rq->fifo_time;
}

/*
 * Which direction a new batch of this class serves: reads, unless writes
 * waited through writes_starved read batches.  *starved is the count after.
 */
static int dd_choose_dir(const struct deadline_data *dd, const struct dd_per_prio *pp,
			 unsigned int *starved)
{
	bool reads = !TAILQ_EMPTY(&pp->fifo_list[DD_READ]);
	bool writes = !TAILQ_EMPTY(&pp->fifo_list[DD_WRITE]);

	*starved = dd->starved;
	if (reads && !writes)
		return DD_READ;
	if (reads && dd->starved < (unsigned int)dd->writes_starved) {
		*starved = dd->starved + 1;
		return DD_READ;
	}
	*starved = 0;
	return DD_WRITE;
}

/*
 * The batch rules, for one class: go on with the batch while it has a
 * next request and fewer than fifo_batch went; else choose a direction
 * and start from its FIFO head if that expired or nothing lies ahead,
 * from the next in sector order if not.
 */
static bool dd_pick(const struct deadline_data *dd, const struct dd_per_prio *pp, uint64_t now,
		    struct dd_pick *p)
{
	struct request *rq = pp->next_rq[DD_READ] ? pp->next_rq[DD_READ] : pp->next_rq[DD_WRITE];
	int dir;

	p->starved = dd->starved;
	p->new_batch = !rq || dd->batching >= (unsigned int)dd->fifo_batch;
	if (p->new_batch) {
		if (dd_prio_empty(pp))
			return false;
		dir = dd_choose_dir(dd, pp, &p->starved);
		rq = pp->next_rq[dir];
		if (!rq || dd_fifo_expired(pp, dir, now))
			rq = TAILQ_FIRST(&pp->fifo_list[dir]);
	}
	p->rq = rq;
	return true;
}

static struct request *dd_dispatch_pick(struct deadline_data *dd, struct dd_per_prio *pp,
					const struct dd_pick *p)
{
	if (p->new_batch)
		dd->batching = 0;
	dd->starved = p->starved;
	dd->batching++;
	dd_move_request(pp, p->rq);
	return p->rq;
}

/* The kernel's started_after(): rq was queued after time, by its FIFO deadline. */
static bool dd_started_after(const struct deadline_data *dd, const struct request *rq,
			     uint64_t time)
{
	uint64_t expire = dd->fifo_expire[rq_data_dir(rq)];

	return time > UINT64_MAX - expire || rq->fifo_time > time + expire;
}

static unsigned int dd_queued(const struct deadline_data *dd, enum dd_prio prio)
{
	return dd->per_prio[prio].inserted - dd->per_prio[prio].completed;
}

/*
 * With more than one class queued or in flight, a lower class's request
 * that has waited prio_aging_expire goes first, if the batch rules would
 * pick it.  A look that finds none changes nothing.
 */
static struct request *dd_dispatch_aged(struct deadline_data *dd, uint64_t now)
{
	int classes = 0;
	struct dd_pick p;

	if (now < dd->prio_aging_expire)
		return NULL; /* nothing has waited that long */
	for (int prio = 0; prio < DD_PRIO_COUNT; prio++)
		classes += dd_queued(dd, prio) != 0;
	if (classes < 2)
		return NULL;
	for (int prio = DD_BE_PRIO; prio < DD_PRIO_COUNT; prio++) {
		struct dd_per_prio *pp = &dd->per_prio[prio];

		if (dd_pick(dd, pp, now, &p) &&
		    !dd_started_after(dd, p.rq, now - dd->prio_aging_expire))
			return dd_dispatch_pick(dd, pp, &p);
	}
	return NULL;
}

/*
 * Aged requests first; then the highest class with work, and nothing of a
 * lower class while a higher one has requests queued or in flight.  A
 * draining elevator hands out everything, in flight or not.
 */
static struct request *dd_dispatch_request(struct elevator_queue *e, uint64_t now)
{
	struct deadline_data *dd = e->elevator_data;
	struct request *rq = dd_dispatch_aged(dd, now);
	struct dd_pick p;

	if (rq)
		return rq;
	for (int prio = 0; prio < DD_PRIO_COUNT; prio++) {
		struct dd_per_prio *pp = &dd->per_prio[prio];

		if (dd_pick(dd, pp, now, &p))
			return dd_dispatch_pick(dd, pp, &p);
		if (dd_queued(dd, prio) && !e->draining)
			return NULL;
	}
	return NULL;
}

static bool dd_has_work(const struct elevator_queue *e)
{
	const struct deadline_data *dd = e->elevator_data;

	for (int prio = 0; prio < DD_PRIO_COUNT; prio++)
		if (!dd_prio_empty(&dd->per_prio[prio]))
			return true;
	return false;
}

static void dd_completed(struct elevator_queue *e, struct request *rq)
{
	struct deadline_data *dd = e->elevator_data;

	dd_per_prio_of(dd, rq)->completed++;
}

/* Front merges: a queued request that starts where the bio ends. */
static enum elv_merge dd_find_merge(struct elevator_queue *e, const struct bio *bio,
				    struct request **rq)
{
	struct deadline_data *dd = e->elevator_data;
	struct dd_per_prio *pp = &dd->per_prio[dd_prio_of(bio->bi_ioprio)];
	int dir = op_is_write(bio->bi_op);

	if (!dd->front_merges)
		return ELEVATOR_NO_MERGE;
	*rq = elv_rb_find(&pp->sort_list[dir], bio_end_sector(bio));
	return *rq ? ELEVATOR_FRONT_MERGE : ELEVATOR_NO_MERGE;
}

/*
 * next joins rq (the core merges only within one class): rq keeps the
 * earlier of the two deadlines and its FIFO place; next will never
 * complete, so it counts as completed now.
 */
static void dd_requests_merged(struct elevator_queue *e, struct request *rq,
			       struct request *next)
{
	struct deadline_data *dd = e->elevator_data;
	struct dd_per_prio *pp = dd_per_prio_of(dd, next);

	elv_fifo_merge(&pp->fifo_list[rq_data_dir(rq)], rq, next);
	dd_remove_request(pp, next);
	pp->completed++;
}

/*
 * mq-deadline's dd_limit_depth: a sync read is never held back; any other
 * request (writes, sync ones too, discards, zeroing) takes a scheduler tag
 * only while fewer than async_depth are in use.  A flush or barrier
 * request is not limited: Linux's core never asks for one (it goes to
 * the dispatch list, as rqdisk's does).
 */
static void dd_limit_depth(struct elevator_queue *e, enum req_op op, struct blk_mq_alloc_data *data)
{
	const struct deadline_data *dd = e->elevator_data;

	if (op == REQ_OP_READ || op == REQ_OP_FLUSH ||
	    (data->cmd_flags & (REQ_FUA | REQ_PREFLUSH | REQ_BARRIER)))
		return;
	data->shallow_depth = dd->async_depth < data->nr_tags ? dd->async_depth : data->nr_tags;
}

static int dd_async_depth_show(const struct elevator_queue *e, char *buf, size_t len)
{
	const struct deadline_data *dd = e->elevator_data;

	return snprintf(buf, len, "%u\n", dd->async_depth);
}

/*
 * A number from 1 to nr_requests (the scheduler tags there are), parsed as
 * the core parses a number tunable; anything else is -EINVAL, the value
 * kept.  A text tunable only because its bound is the queue's.
 */
static int dd_async_depth_store(struct elevator_queue *e, const char *buf)
{
	struct deadline_data *dd = e->elevator_data;
	char *end;
	long long v;

	errno = 0;
	v = strtoll(buf, &end, 10);
	while (*end == '\n' || *end == ' ')
		end++;
	if (errno || end == buf || *end || v < 1 || v > (long long)e->nr_requests)
		return -EINVAL;
	dd->async_depth = (unsigned int)v;
	return 0;
}

ELV_TUNABLE(dd, read_expire, struct deadline_data, fifo_expire[DD_READ], 0, INT_MAX, NSEC_PER_MSEC);
ELV_TUNABLE(dd, write_expire, struct deadline_data, fifo_expire[DD_WRITE], 0, INT_MAX, NSEC_PER_MSEC);
ELV_TUNABLE(dd, writes_starved, struct deadline_data, writes_starved, 0, INT_MAX, 1);
ELV_TUNABLE(dd, fifo_batch, struct deadline_data, fifo_batch, 0, INT_MAX, 1);
ELV_TUNABLE(dd, front_merges, struct deadline_data, front_merges, 0, 1, 1);
ELV_TUNABLE(dd, prio_aging_expire, struct deadline_data, prio_aging_expire, 0, INT_MAX,
	    NSEC_PER_MSEC);

static const struct elv_tunable dd_tunables[] = {
	ELV_ATTR(dd, read_expire),
	ELV_ATTR(dd, write_expire),
	ELV_ATTR(dd, writes_starved),
	ELV_ATTR(dd, fifo_batch),
	ELV_ATTR(dd, front_merges),
	ELV_ATTR(dd, prio_aging_expire),
	ELV_TEXT_ATTR(dd, async_depth),
	{ 0 },
};

static struct elevator_type elevator_deadline = {
	.elevator_name = "deadline",
	.elevator_description = "sorted by sector, with a deadline per request (the default)",
	.elevator_alias = "mq-deadline",
	.init_queue = dd_init_queue,
	.exit_queue = dd_exit_queue,
	.add_request = dd_add_request,
	.dispatch_request = dd_dispatch_request,
	.has_work = dd_has_work,
	.find_merge = dd_find_merge,
	.requests_merged = dd_requests_merged,
	.completed = dd_completed,
	.tunables = dd_tunables,
	/* limit_depth alone: the core's adapter runs the rest, one instance for the queue */
	.mq_ops = {
		.limit_depth = dd_limit_depth,
	},
	.depth_updated = dd_depth_updated,
};

ELEVATOR_REGISTER(deadline, elevator_deadline)
