/* SPDX-License-Identifier: BSD-3-Clause */
/* fake_mq.h - a multi-queue driver for unit tests: takes requests per hardware queue, completes on command. */
#ifndef RQDISK_FAKE_MQ_H
#define RQDISK_FAKE_MQ_H

#include <check.h>

#include "blk_mq.h"

#define FAKE_MQ_MAX_HW 4
#define FAKE_MQ_MAX_EVENTS 65536

/* What queue_rq saw, in order. */
struct fake_mq_event {
	unsigned int hctx;
	enum req_op op;
	unsigned int flags;
	sector_t sector;
	unsigned int nr_sectors;
	uint64_t epoch;
};

struct fake_mq_hw {
	struct rq_list out;    /* taken by queue_rq, not yet ended */
	unsigned int nr_out;
	unsigned int max_out;  /* the most ever out at once */
	bool busy;             /* answer BLK_STS_RESOURCE */
	unsigned int nr_busy;  /* how often it did */
	unsigned int nr_commits;
	unsigned int kicked;   /* run_async calls not yet followed by a run (fake_mq_run_kicked) */
	bool no_room;          /* has_room (fake_mq_opts.has_room) answers false */
	unsigned int nr_room_asked;
};

struct fake_mq {
	struct request_queue *q;
	struct blk_mq_tag_set set;
	struct blk_clock clock;
	/* Everything below; never held across a call into the queue. */
	pthread_mutex_t lock;
	struct fake_mq_hw hw[FAKE_MQ_MAX_HW];
	unsigned int nr_out;     /* on every hardware queue */
	unsigned int nr_writes_out;
	unsigned int flush_passed; /* flushes handed over while a write was out */
	struct fake_mq_event events[FAKE_MQ_MAX_EVENTS];
	unsigned int nr_events;
	/* a test's checks, called in queue_rq without the lock */
	void (*on_dispatch)(struct fake_mq *fm, unsigned int hctx, struct request *rq);
	void *priv;
	/*
	 * The elevator, a copy of the one asked for whose hooks count what it
	 * holds (under the queue lock, where the core calls them).
	 */
	struct elevator_type counted;
	const struct elevator_type *orig;
	unsigned int elv_held;
	unsigned int max_queued; /* the most ever held by the elevator and the driver together */
};

struct fake_mq_opts {
	const char *elevator; /* NULL: none */
	unsigned int nr_hw_queues;
	unsigned int queue_depth;
	unsigned int nr_requests; /* 0: the default */
	unsigned int nr_cpus;     /* 0: one per hardware queue */
	bool real_clock;
	bool run_async; /* the driver runs its queues itself when kicked (blk_mq_ops.run_async) */
	bool has_room;  /* the driver says whether it takes more (blk_mq_ops.has_room) */
};

struct fake_mq *fake_mq_new(const struct fake_mq_opts *o);
/* The reason the queue refused elevator, or NULL when it took it (and the queue is freed). */
const char *fake_mq_refusal(const char *elevator, char *why, size_t whylen);
void fake_mq_free(struct fake_mq *fm);
/* Take the first request out on hw off the driver's list (to end it whole), or NULL. */
struct request *fake_mq_take_first(struct fake_mq *fm, unsigned int hw);
/* The nth request out on hardware queue hw (from 0), or NULL. */
struct request *fake_mq_nth(struct fake_mq *fm, unsigned int hw, unsigned int n);
/* End nr_sectors of rq, out on hw, with error; asserts what blk_mq_end_request says is left. */
void fake_mq_complete(struct fake_mq *fm, unsigned int hw, struct request *rq, int error,
		      unsigned int nr_sectors);
/* End the first request out on hw whole; false if none is. */
bool fake_mq_complete_first(struct fake_mq *fm, unsigned int hw);
/* End everything, through idle waits (the virtual clock moved to each wake-up). */
void fake_mq_drain(struct fake_mq *fm);
/* Nothing out, work queued: move the clock to the elevator's wake-up and run every queue. */
void fake_mq_wake(struct fake_mq *fm);
/* Run each hardware queue that was kicked, as its own thread would. */
void fake_mq_run_kicked(struct fake_mq *fm);
/* Busy or not; not busy runs hw again. */
void fake_mq_set_busy(struct fake_mq *fm, unsigned int hw, bool busy);
/* Room or not, as has_room answers; room runs hw again. */
void fake_mq_set_room(struct fake_mq *fm, unsigned int hw, bool room);
void fake_mq_submit(struct fake_mq *fm, struct bio *bio, unsigned int cpu);

#endif
