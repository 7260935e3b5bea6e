/* SPDX-License-Identifier: BSD-3-Clause */
/* rangelock.h - byte ranges that writers hold one at a time, granted in arrival order. */
#ifndef RQDISK_RANGELOCK_H
#define RQDISK_RANGELOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bsd/sys/queue.h>

struct range_waiter {
	TAILQ_ENTRY(range_waiter) link;
	uint64_t start, end; /* [start, end) */
	void (*granted)(struct range_waiter *w); /* called when a wait ends */
};

TAILQ_HEAD(range_list, range_waiter);

struct range_lock {
	struct range_list held;
	struct range_list waiting;
};

void range_lock_init(struct range_lock *rl);
bool range_lock_acquire(struct range_lock *rl, struct range_waiter *w);
void range_lock_release(struct range_lock *rl, struct range_waiter *w);

#endif
