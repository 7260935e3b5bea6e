/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lock_stats.c - the queue lock's statistics, as the kernel's lock_stat:
 * acquisitions, the wait for the lock and the time it is held, and the
 * time spent inside the elevator's hooks for each request, each as a
 * histogram p50 and p99 are read from.  The cost of an elevator that
 * serializes on the queue lock can so be read directly.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "blkdev.h"

unsigned int blk_hist_bucket(uint64_t v)
{
	unsigned int e;

	if (v < BLK_HIST_SUB)
		return (unsigned int)v;
	e = 63u - (unsigned int)__builtin_clzll(v); /* >= BLK_HIST_SUB_BITS */
	return (e - BLK_HIST_SUB_BITS + 1) * BLK_HIST_SUB +
	       (unsigned int)((v >> (e - BLK_HIST_SUB_BITS)) & (BLK_HIST_SUB - 1));
}

/* The largest value that falls in bucket idx. */
uint64_t blk_hist_bucket_upper(unsigned int idx)
{
	unsigned int e, m;
	uint64_t width;

	if (idx < BLK_HIST_SUB)
		return idx;
	e = idx / BLK_HIST_SUB + BLK_HIST_SUB_BITS - 1;
	m = idx % BLK_HIST_SUB;
	width = 1ull << (e - BLK_HIST_SUB_BITS);
	return ((uint64_t)(BLK_HIST_SUB + m) << (e - BLK_HIST_SUB_BITS)) + (width - 1);
}

void blk_hist_add(struct blk_hist *h, uint64_t v)
{
	if (!h->count || v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->count++;
	h->sum += v;
	h->buckets[blk_hist_bucket(v)]++;
}

uint64_t blk_hist_percentile(const struct blk_hist *h, unsigned int pct)
{
	uint64_t rank, seen = 0;
	unsigned int i;

	if (!h->count)
		return 0;
	if (pct > 100)
		pct = 100;
	/* the least value with pct% of the samples at or below it: rank ceil(n * pct / 100) */
	rank = (h->count * pct + 99) / 100;
	if (!rank)
		rank = 1;
	for (i = 0; i < BLK_HIST_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen >= rank)
			break;
	}
	if (i == BLK_HIST_BUCKETS)
		return h->max;
	if (blk_hist_bucket_upper(i) > h->max)
		return h->max;
	return blk_hist_bucket_upper(i) < h->min ? h->min : blk_hist_bucket_upper(i);
}

void blk_lock_stats_init(struct blk_lock_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->clock = &blk_real_clock;
}

/* The least difference of two back-to-back reads of clock. */
static uint64_t clock_cost(const struct blk_clock *clock)
{
	uint64_t least = UINT64_MAX;

	for (int i = 0; i < 32; i++) {
		uint64_t a = blk_clock_now(clock), b = blk_clock_now(clock);

		if (b - a < least)
			least = b - a;
	}
	return least;
}

/* ns measured between two reads, less what reading the clock took. */
static uint64_t less_cost(const struct blk_lock_stats *s, uint64_t ns)
{
	return ns > s->clock_cost ? ns - s->clock_cost : 0;
}

static uint64_t elapsed(const struct blk_lock_stats *s, uint64_t since)
{
	return less_cost(s, blk_clock_now(s->clock) - since);
}

void blk_lock_stats_set_enabled(struct blk_lock_stats *s, bool on)
{
	if (on && !blk_lock_stats_enabled(s))
		s->clock_cost = clock_cost(s->clock);
	__atomic_store_n(&s->enabled, on, __ATOMIC_RELAXED);
}

void blk_lock_stats_reset(struct blk_lock_stats *s)
{
	memset(&s->c, 0, sizeof(s->c));
}

/*
 * Taking the lock with statistics on: the wait is known, and written, once
 * it is held.  A lock that is free is taken with no wait and one clock
 * read; only a contended one is timed from the attempt, as lock_stat's
 * waittime counts contentions alone.
 */
void blk_lock_timed(struct blk_lock_stats *s, pthread_mutex_t *lock)
{
	uint64_t asked, held;

	if (!pthread_mutex_trylock(lock)) {
		held = blk_clock_now(s->clock);
		blk_hist_add(&s->c.wait, 0);
	} else {
		asked = blk_clock_now(s->clock);
		pthread_mutex_lock(lock);
		held = blk_clock_now(s->clock);
		s->c.contentions++;
		blk_hist_add(&s->c.wait, less_cost(s, held - asked));
	}
	s->held_since = held;
	s->timing = true;
}

/* Lock still held, about to be let go: the hold ends. */
void blk_lock_timed_release(struct blk_lock_stats *s)
{
	blk_hist_add(&s->c.hold, elapsed(s, s->held_since));
	s->timing = false;
}

void __blk_elv_time_end(struct blk_lock_stats *s, uint64_t t0, uint64_t *rq_ns)
{
	uint64_t ns = elapsed(s, t0);

	s->c.elv_ns += ns;
	s->c.elv_calls++;
	if (rq_ns)
		*rq_ns += ns;
}

static int hist_format(const struct blk_hist *h, const char *name, char *buf, size_t len)
{
	return snprintf(buf, len,
			"%s_ns_p50=%" PRIu64 "\n%s_ns_p99=%" PRIu64 "\n%s_ns_max=%" PRIu64
			"\n%s_ns_total=%" PRIu64 "\n",
			name, blk_hist_percentile(h, 50), name, blk_hist_percentile(h, 99), name,
			h->max, name, h->sum);
}

/* Appends what fmt's snprintf made at *used; false once buf is full or on an error. */
static bool put(int n, size_t *used, size_t len)
{
	if (n < 0 || (size_t)n >= len - *used)
		return false;
	*used += (size_t)n;
	return true;
}

int blk_lock_stats_format(const struct blk_lock_stats *s, const char *elevator, char *buf,
			  size_t len)
{
	const struct blk_lock_counts *c = &s->c;
	uint64_t per_rq = c->elv_rq.count ? c->elv_ns / c->elv_rq.count : 0;
	size_t used = 0;

	if (!len)
		return -ENOSPC;
	if (!put(snprintf(buf, len,
			  "enabled=%d\nacquisitions=%" PRIu64 "\ncontentions=%" PRIu64 "\n",
			  blk_lock_stats_enabled(s), c->wait.count, c->contentions),
		 &used, len) ||
	    !put(hist_format(&c->wait, "wait", buf + used, len - used), &used, len) ||
	    !put(hist_format(&c->hold, "hold", buf + used, len - used), &used, len) ||
	    !put(snprintf(buf + used, len - used,
			  "elevator=%s\nelevator_requests=%" PRIu64 "\nelevator_calls=%" PRIu64
			  "\nelevator_ns_total=%" PRIu64 "\nelevator_ns_per_request=%" PRIu64 "\n",
			  elevator, c->elv_rq.count, c->elv_calls, c->elv_ns, per_rq),
		 &used, len) ||
	    !put(hist_format(&c->elv_rq, "elevator_rq", buf + used, len - used), &used, len))
		return -ENOSPC;
	return (int)used;
}
