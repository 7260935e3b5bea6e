/* SPDX-License-Identifier: BSD-3-Clause */
/* clock.c - the real clock and the virtual one that tests and replay advance by hand. */
#include <time.h>

#include "blkdev.h"

static uint64_t real_now(const struct blk_clock *clock)
{
	struct timespec ts;

	(void)clock;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const struct blk_clock blk_real_clock = { .now = real_now };

static uint64_t virtual_now(const struct blk_clock *clock)
{
	return clock->virtual_ns;
}

void blk_virtual_clock_init(struct blk_clock *clock, uint64_t start_ns)
{
	clock->now = virtual_now;
	clock->virtual_ns = start_ns;
}
