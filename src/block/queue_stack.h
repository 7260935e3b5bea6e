/* SPDX-License-Identifier: BSD-3-Clause */
/* queue_stack.h - the request queue as the host of a device stack: what the layers ask of it. */
#ifndef RQDISK_QUEUE_STACK_H
#define RQDISK_QUEUE_STACK_H

#include <stddef.h>

#include "device.h"

struct request_queue;

/*
 * Make q the queue above s: the layers' calls up (dev_now, dev_depth,
 * dev_kick, dev_end from the top ...) reach q.  Before dev_stack_open(),
 * since a layer may ask at open (the file backend sizes its slots by the
 * queue's depth and segments).
 */
void blk_stack_set_queue(struct dev_stack *s, struct request_queue *q);

/*
 * After dev_stack_open(), make q's limits follow lim, what the stack
 * imposes: a larger logical block size, its physical block size, io_opt
 * and max_sectors, and a limit of 0 for the discards or write-zeroes it
 * does not take.  0, or -errno with a one-line reason in why (q as it was;
 * the host then closes the stack as one whose start failed).
 */
int blk_queue_stack_limits(struct request_queue *q, const struct dev_limits *lim, char *why,
			   size_t whylen);

#endif
