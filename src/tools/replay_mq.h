/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replay_mq.h - the replay's multi-queue driver: a tag set whose hardware
 * queues hand requests to the device stack, each run in turn, on the
 * replay's one thread, in an order fixed by the input alone.
 */
#ifndef RQDISK_REPLAY_MQ_H
#define RQDISK_REPLAY_MQ_H

#include "blk_mq.h"
#include "device.h"

#define REPLAY_MAX_HW_QUEUES 64       /* as rqdisk's --hw-queues */
#define REPLAY_DEF_HW_QUEUE_DEPTH 64  /* driver tags per hardware queue, as rqdisk's */
#define REPLAY_MAX_HW_QUEUE_DEPTH 4096 /* as rqdisk's --hw-queue-depth */

struct replay_mq {
	struct blk_mq_tag_set set;
	struct dev_stack *stack;
	/*
	 * The hardware queues asked to run (blk_mq_ops.run_async), each once,
	 * in the order first asked: what a thread per hardware queue would
	 * do, made one order.
	 */
	unsigned int order[REPLAY_MAX_HW_QUEUES];
	bool pending[REPLAY_MAX_HW_QUEUES];
	unsigned int head, nr_pending;
	bool ran; /* the queue's request_fn ran (replay_mq_take_ran) */
};

/*
 * A multi-queue queue of nr_hw hardware queues of depth tags each over
 * stack (opened later, before the first bio), on clock, with no elevator
 * yet.  CPU n's software queue feeds hardware queue n mod nr_hw: one
 * software queue per hardware queue.  NULL with a one-line reason in why.
 */
struct request_queue *replay_mq_init(struct replay_mq *m, struct dev_stack *stack,
				     unsigned int nr_hw, unsigned int depth,
				     const struct blk_clock *clock, char *why, size_t whylen);

/* The queue lock held: bio from cpu into its software queue; its hardware queue asked to run. */
void replay_mq_submit(struct request_queue *q, struct bio *bio, unsigned int cpu);

/*
 * No lock held: run the hardware queues asked to, first asked first,
 * while the device takes more (a queue not run stays asked, ahead of
 * those asked later).
 */
void replay_mq_run(struct request_queue *q);

/*
 * The queue lock held: whether the queue's request_fn ran since last
 * asked, as a plugged 2.6 queue runs it once enough is queued (its unplug
 * threshold): the batch's submitter then runs the hardware queues at
 * once, as the 2.6 queue dispatches there.
 */
bool replay_mq_take_ran(struct request_queue *q);

/*
 * 0 if the multi-queue queue runs elevator name (or "none"), else -errno
 * with its one-line reason in why: checked up front, before any replay.
 */
int replay_mq_check_elevator(const char *name, char *why, size_t whylen);

/* Every hardware queue asked to run (an elevator's wake-up). */
void replay_mq_kick_all(struct request_queue *q);

#endif
