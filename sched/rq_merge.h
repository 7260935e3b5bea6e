/* SPDX-License-Identifier: BSD-3-Clause */
/* rq_merge.h - what cfq and bfq do alike around merges: the front-merge lookup, the choice. */
#ifndef RQDISK_RQ_MERGE_H
#define RQDISK_RQ_MERGE_H

#include "elevator.h"

/*
 * A request in tree that starts where bio ends, for bio to join at its
 * front; tree is NULL when bio's queue has none (2.6's cfq_find_rq_fmerge).
 */
static inline enum elv_merge rq_find_front_merge(const struct elv_rb_root *tree,
						 const struct bio *bio, struct request **rq)
{
	*rq = tree ? elv_rb_find(tree, bio_end_sector(bio)) : NULL;
	return *rq ? ELEVATOR_FRONT_MERGE : ELEVATOR_NO_MERGE;
}

/*
 * The cost of moving the head from last to rq: its distance, times
 * back_penalty when behind.  False when further behind than back_max
 * sectors: never "near".
 */
static inline bool rq_seek_cost(const struct request *rq, sector_t last, sector_t back_max,
				sector_t back_penalty, sector_t *cost)
{
	sector_t s = blk_rq_pos(rq);

	if (s >= last)
		*cost = s - last;
	else if (last - s <= back_max)
		*cost = (last - s) * back_penalty;
	else
		return false;
	return true;
}

/*
 * Which of two requests (either may be NULL) to serve next from the head
 * at last, as 2.6's AS chose and CFQ and BFQ after it: a sync one over an
 * async one, then the cheaper seek, a tie going to the one further ahead;
 * one near over one far behind, and of two far behind the lower (one long
 * seek back, then forward from there).
 */
static inline struct request *rq_choose_req(struct request *rq1, struct request *rq2,
					    sector_t last, sector_t back_max,
					    sector_t back_penalty)
{
	sector_t d1, d2;
	bool near1, near2;

	if (!rq1 || rq1 == rq2)
		return rq2;
	if (!rq2)
		return rq1;
	if (rq_is_sync(rq1) != rq_is_sync(rq2))
		return rq_is_sync(rq1) ? rq1 : rq2;
	near1 = rq_seek_cost(rq1, last, back_max, back_penalty, &d1);
	near2 = rq_seek_cost(rq2, last, back_max, back_penalty, &d2);
	if (near1 && near2 && d1 != d2)
		return d1 < d2 ? rq1 : rq2;
	if (near1 && near2) /* a tie: the one further ahead */
		return blk_rq_pos(rq1) >= blk_rq_pos(rq2) ? rq1 : rq2;
	if (near1 != near2)
		return near1 ? rq1 : rq2;
	return blk_rq_pos(rq1) <= blk_rq_pos(rq2) ? rq1 : rq2;
}

#endif
