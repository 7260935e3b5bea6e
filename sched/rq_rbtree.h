/* SPDX-License-Identifier: BSD-3-Clause */
/* rq_rbtree.h - the walks of a sector-sorted tree that several elevators make alike. */
#ifndef RQDISK_RQ_RBTREE_H
#define RQDISK_RQ_RBTREE_H

#include "elevator.h"

/*
 * The request after rq in root, or the lowest when rq is the highest: a
 * one-way sweep's next stop past rq.  NULL when rq is alone in root.
 */
static inline struct request *rq_rb_next_wrap(const struct elv_rb_root *root,
					      const struct request *rq)
{
	struct request *next = elv_rb_next(rq);

	if (!next) {
		next = elv_rb_first(root);
		if (next == rq)
			next = NULL;
	}
	return next;
}

/* The first request at or above sector, or the lowest: where a one-way sweep from there goes. */
static inline struct request *rq_rb_ceiling_wrap(const struct elv_rb_root *root, sector_t sector)
{
	struct request *rq = elv_rb_ceiling(root, sector);

	return rq ? rq : elv_rb_first(root);
}

/* The two requests around sector: the first at or above it and the last below it, or NULL. */
static inline void rq_rb_around(const struct elv_rb_root *root, sector_t sector,
				struct request **ahead, struct request **behind)
{
	*ahead = elv_rb_ceiling(root, sector);
	*behind = elv_rb_below(root, sector);
}

#endif
