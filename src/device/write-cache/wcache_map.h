/* SPDX-License-Identifier: BSD-3-Clause */
/* wcache_map.h - the write cache's extents: cached data by sector, no two overlapping. */
#ifndef RQDISK_WCACHE_MAP_H
#define RQDISK_WCACHE_MAP_H

#include <bsd/sys/queue.h>
#include <bsd/sys/tree.h>
#include <stdint.h>

#include "blk_types.h"

enum wc_state {
	WC_DIRTY,     /* newer than the layer below: on the dirty list */
	WC_WRITEBACK, /* its writeback is below: its data must not change */
	WC_CLEAN,     /* written back, kept for a read below that may have missed it */
};

struct wc_extent {
	RB_ENTRY(wc_extent) node;
	TAILQ_ENTRY(wc_extent) link; /* on the dirty or the clean list, by state */
	sector_t start;
	unsigned int nr; /* sectors */
	char *buf;       /* nr sectors of data, page-aligned (O_DIRECT below) */
	uint64_t dirtied_at;
	enum wc_state state;
	size_t dirty_idx; /* its place in the map's dirty vector, while dirty */
};

RB_HEAD(wc_tree, wc_extent);
TAILQ_HEAD(wc_list, wc_extent);

struct wc_map {
	struct wc_tree tree;
	struct wc_list dirty; /* oldest first */
	struct wc_extent **vec; /* the dirty ones again, in no order: one drawn at random is O(1) */
	size_t nr_dirty, vec_cap;
	struct wc_list clean;
	uint64_t bytes;       /* of every extent */
	uint64_t dirty_bytes; /* dirty or in writeback */
};

static inline sector_t wc_end(const struct wc_extent *e)
{
	return e->start + e->nr;
}

void wc_map_init(struct wc_map *m);
/* A dirty extent of nr sectors from start, its data not yet filled in; NULL: no memory. */
struct wc_extent *wc_extent_new(sector_t start, unsigned int nr, uint64_t now);
/* Into the map and the dirty list's tail: nothing there may overlap it (wc_map_carve first). */
void wc_map_insert(struct wc_map *m, struct wc_extent *e);
/* Out of the map and its list, and freed. */
void wc_map_drop(struct wc_map *m, struct wc_extent *e);
/* A new state, and the list that goes with it. */
void wc_map_set_state(struct wc_map *m, struct wc_extent *e, enum wc_state state);
/* The first extent ending after start that begins before end, or NULL. */
struct wc_extent *wc_map_first(struct wc_map *m, sector_t start, sector_t end);
/* The next extent by sector, or NULL. */
struct wc_extent *wc_map_next(struct wc_extent *e);
/* Whether an extent in that state overlaps [start, end). */
bool wc_map_has(struct wc_map *m, sector_t start, sector_t end, enum wc_state state);
/*
 * Take [start, end) out of every extent that overlaps it: none may be in
 * writeback.  An extent cut in two gives its tail a buffer of its own.
 * Leaves room for one more dirty extent (wc_map_insert): 0, or -ENOMEM
 * with the map as it was.
 */
int wc_map_carve(struct wc_map *m, sector_t start, sector_t end);
/* The dirty extent at i of the dirty vector, i below nr_dirty. */
static inline struct wc_extent *wc_map_dirty_at(const struct wc_map *m, size_t i)
{
	return m->vec[i];
}

/* Keep only the first nr sectors of e. */
void wc_map_truncate(struct wc_map *m, struct wc_extent *e, unsigned int nr);
/* Every extent freed, and the vector. */
void wc_map_clear(struct wc_map *m);

#endif
