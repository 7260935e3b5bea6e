/* SPDX-License-Identifier: BSD-3-Clause */
/* lock_stats.h - the queue lock's wait and hold times and the elevator's time per request. */
#ifndef RQDISK_LOCK_STATS_H
#define RQDISK_LOCK_STATS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rqdisk/elevator.h> /* struct blk_clock */

/*
 * A histogram of nanoseconds: each power of two split in 2^BLK_HIST_SUB_BITS
 * buckets, so a percentile read from it is within 1/8 (12.5%) of the value
 * over the whole range, as HdrHistogram's, at a fixed size; values below
 * 2^BLK_HIST_SUB_BITS have a bucket each.
 */
#define BLK_HIST_SUB_BITS 3
#define BLK_HIST_SUB (1u << BLK_HIST_SUB_BITS)
#define BLK_HIST_BUCKETS ((64 - BLK_HIST_SUB_BITS + 1) * BLK_HIST_SUB)

struct blk_hist {
	uint64_t count;
	uint64_t sum;
	uint64_t min;
	uint64_t max;
	uint64_t buckets[BLK_HIST_BUCKETS];
};

unsigned int blk_hist_bucket(uint64_t v);
uint64_t blk_hist_bucket_upper(unsigned int idx);
void blk_hist_add(struct blk_hist *h, uint64_t v);
/* The value pct% of the samples are at or below (its bucket's top, within max); 0: none. */
uint64_t blk_hist_percentile(const struct blk_hist *h, unsigned int pct);

/*
 * The queue lock's statistics, kept in the queue and updated under that
 * lock itself: the wait is known just after the lock is taken and the hold
 * just before it is let go, so no atomics and nothing per thread.  Off by
 * default: blk_queue_lock then costs one predictable branch more.
 */
struct blk_lock_stats {
	/* the real clock whatever the queue's (a replay's would read 0); tests set theirs */
	const struct blk_clock *clock;
	bool enabled; /* written under the lock, read before it is taken: atomic */
	bool timing;  /* lock held: this acquisition is timed, held since held_since */
	uint64_t held_since;
	/*
	 * What a time measured between two reads of clock carries of the reads
	 * themselves: their least difference, back to back, found as the
	 * statistics are switched on and taken off every time measured.
	 */
	uint64_t clock_cost;
	struct blk_lock_counts {
		struct blk_hist wait;	/* ns from asking for the lock to holding it (0: free) */
		struct blk_hist hold;	/* ns from holding it to letting it go */
		struct blk_hist elv_rq; /* ns inside the elevator's hooks, per request ended */
		uint64_t elv_ns;	/* ns inside the hooks, all told (with no request too) */
		uint64_t elv_calls;	/* hook calls timed */
		uint64_t contentions;	/* acquisitions that found the lock taken */
	} c;
};

#define BLK_ELV_UNTIMED UINT64_MAX

void blk_lock_stats_init(struct blk_lock_stats *s);
static inline bool blk_lock_stats_enabled(const struct blk_lock_stats *s)
{
	return __atomic_load_n(&s->enabled, __ATOMIC_RELAXED);
}
/* Lock held: on (the clock's cost measured again) or off from the next acquisition on. */
void blk_lock_stats_set_enabled(struct blk_lock_stats *s, bool on);
/* Lock held: every count back to zero (the acquisition being timed goes on). */
void blk_lock_stats_reset(struct blk_lock_stats *s);
/* Lock held: the counts as key=value lines (elevator: the running one's name); length or -errno */
int blk_lock_stats_format(const struct blk_lock_stats *s, const char *elevator, char *buf,
			  size_t len);

/* blk_queue_lock's and blk_queue_unlock's way while statistics are on (queue.c). */
void blk_lock_timed(struct blk_lock_stats *s, pthread_mutex_t *lock);
void blk_lock_timed_release(struct blk_lock_stats *s);

/* Lock held: now, when this acquisition is timed, else BLK_ELV_UNTIMED; before a hook call. */
static inline uint64_t blk_elv_time_start(const struct blk_lock_stats *s)
{
	return __builtin_expect(s->timing, 0) ? blk_clock_now(s->clock) : BLK_ELV_UNTIMED;
}

void __blk_elv_time_end(struct blk_lock_stats *s, uint64_t t0, uint64_t *rq_ns);

/* Lock held: after the hook call begun at t0, its time goes to *rq_ns (the request's) if any. */
static inline void blk_elv_time_end(struct blk_lock_stats *s, uint64_t t0, uint64_t *rq_ns)
{
	if (__builtin_expect(t0 != BLK_ELV_UNTIMED, 0))
		__blk_elv_time_end(s, t0, rq_ns);
}

/* Lock held: a request that went through the elevator has ended, after rq_ns in its hooks. */
static inline void blk_elv_time_request(struct blk_lock_stats *s, uint64_t rq_ns)
{
	if (__builtin_expect(s->timing, 0))
		blk_hist_add(&s->c.elv_rq, rq_ns);
}

#endif
