/* SPDX-License-Identifier: BSD-3-Clause */
/* wcache_map.c - the write cache's extent map: a tree by sector of data no two extents share. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wcache_map.h"

static int wc_cmp(const struct wc_extent *a, const struct wc_extent *b)
{
	return a->start < b->start ? -1 : a->start > b->start;
}

/* libbsd leaves __unused undefined: the attribute spelled out, as elevator.c does. */
RB_GENERATE_INTERNAL(wc_tree, wc_extent, node, wc_cmp, __attribute__((unused)) static)

void wc_map_init(struct wc_map *m)
{
	RB_INIT(&m->tree);
	TAILQ_INIT(&m->dirty);
	TAILQ_INIT(&m->clean);
	m->bytes = m->dirty_bytes = 0;
	m->vec = NULL;
	m->nr_dirty = m->vec_cap = 0;
}

/* Room in the dirty vector for n more. */
static int wc_map_reserve(struct wc_map *m, size_t n)
{
	size_t cap = m->vec_cap ? m->vec_cap : 64;
	struct wc_extent **vec;

	if (m->nr_dirty + n <= m->vec_cap)
		return 0;
	while (cap < m->nr_dirty + n)
		cap *= 2;
	vec = realloc(m->vec, cap * sizeof(*vec));
	if (!vec)
		return -ENOMEM;
	m->vec = vec;
	m->vec_cap = cap;
	return 0;
}

/* Onto the dirty list's tail (or after prev) and into the vector, reserved before. */
static void wc_dirty_add(struct wc_map *m, struct wc_extent *e, struct wc_extent *prev)
{
	if (prev)
		TAILQ_INSERT_AFTER(&m->dirty, prev, e, link);
	else
		TAILQ_INSERT_TAIL(&m->dirty, e, link);
	e->dirty_idx = m->nr_dirty;
	m->vec[m->nr_dirty++] = e;
}

/* Off both: the vector's last one takes its place. */
static void wc_dirty_del(struct wc_map *m, struct wc_extent *e)
{
	struct wc_extent *last = m->vec[--m->nr_dirty];

	TAILQ_REMOVE(&m->dirty, e, link);
	m->vec[e->dirty_idx] = last;
	last->dirty_idx = e->dirty_idx;
}

struct wc_extent *wc_extent_new(sector_t start, unsigned int nr, uint64_t now)
{
	struct wc_extent *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	if (posix_memalign((void **)&e->buf, BLK_PAGE_SIZE, (size_t)nr << SECTOR_SHIFT)) {
		free(e);
		return NULL;
	}
	e->start = start;
	e->nr = nr;
	e->dirtied_at = now;
	e->state = WC_DIRTY;
	return e;
}

static void wc_extent_free(struct wc_extent *e)
{
	free(e->buf);
	free(e);
}

static uint64_t wc_bytes(const struct wc_extent *e)
{
	return (uint64_t)e->nr << SECTOR_SHIFT;
}

void wc_map_insert(struct wc_map *m, struct wc_extent *e)
{
	RB_INSERT(wc_tree, &m->tree, e);
	wc_dirty_add(m, e, NULL);
	m->bytes += wc_bytes(e);
	m->dirty_bytes += wc_bytes(e);
}

/* Out of the list of its state, with its bytes. */
static void wc_unlist(struct wc_map *m, struct wc_extent *e)
{
	if (e->state == WC_DIRTY)
		wc_dirty_del(m, e);
	else if (e->state == WC_CLEAN)
		TAILQ_REMOVE(&m->clean, e, link);
	if (e->state != WC_CLEAN)
		m->dirty_bytes -= wc_bytes(e);
}

void wc_map_drop(struct wc_map *m, struct wc_extent *e)
{
	wc_unlist(m, e);
	RB_REMOVE(wc_tree, &m->tree, e);
	m->bytes -= wc_bytes(e);
	wc_extent_free(e);
}

/* Out of writeback only: an extent never becomes dirty again, so the vector needs no room. */
void wc_map_set_state(struct wc_map *m, struct wc_extent *e, enum wc_state state)
{
	wc_unlist(m, e);
	e->state = state;
	if (state != WC_CLEAN)
		m->dirty_bytes += wc_bytes(e);
	if (state == WC_CLEAN)
		TAILQ_INSERT_TAIL(&m->clean, e, link);
}

struct wc_extent *wc_map_first(struct wc_map *m, sector_t start, sector_t end)
{
	struct wc_extent key = { .start = start };
	struct wc_extent *e = RB_NFIND(wc_tree, &m->tree, &key); /* the first at or after start */
	struct wc_extent *prev = e ? RB_PREV(wc_tree, &m->tree, e) : RB_MAX(wc_tree, &m->tree);

	if (prev && wc_end(prev) > start)
		e = prev;
	return e && e->start < end ? e : NULL;
}

struct wc_extent *wc_map_next(struct wc_extent *e)
{
	return RB_NEXT(wc_tree, NULL, e);
}

bool wc_map_has(struct wc_map *m, sector_t start, sector_t end, enum wc_state state)
{
	for (struct wc_extent *e = wc_map_first(m, start, end); e && e->start < end;
	     e = wc_map_next(e))
		if (e->state == state)
			return true;
	return false;
}

void wc_map_truncate(struct wc_map *m, struct wc_extent *e, unsigned int nr)
{
	uint64_t cut = (uint64_t)(e->nr - nr) << SECTOR_SHIFT;

	m->bytes -= cut;
	if (e->state != WC_CLEAN)
		m->dirty_bytes -= cut;
	e->nr = nr;
}

/* e's first sectors up to at are gone: the rest moves to the front of its buffer, in place. */
static void wc_map_behead(struct wc_map *m, struct wc_extent *e, sector_t at)
{
	unsigned int gone = (unsigned int)(at - e->start);

	memmove(e->buf, e->buf + ((size_t)gone << SECTOR_SHIFT),
		(size_t)(e->nr - gone) << SECTOR_SHIFT);
	/* the key changes, but not its place: the sectors before at are no one's now */
	e->start = at;
	wc_map_truncate(m, e, e->nr - gone);
}

/* e holds [start, end) and more on both sides: its tail becomes an extent of its own. */
static int wc_map_split(struct wc_map *m, struct wc_extent *e, sector_t start, sector_t end)
{
	struct wc_extent *tail = wc_extent_new(end, (unsigned int)(wc_end(e) - end), e->dirtied_at);

	if (!tail)
		return -ENOMEM;
	memcpy(tail->buf, e->buf + ((size_t)(end - e->start) << SECTOR_SHIFT),
	       (size_t)tail->nr << SECTOR_SHIFT);
	tail->state = e->state;
	wc_map_truncate(m, e, (unsigned int)(start - e->start));
	RB_INSERT(wc_tree, &m->tree, tail);
	m->bytes += wc_bytes(tail);
	if (tail->state != WC_CLEAN)
		m->dirty_bytes += wc_bytes(tail);
	if (tail->state == WC_DIRTY) /* beside e: as old as it */
		wc_dirty_add(m, tail, e);
	else
		TAILQ_INSERT_AFTER(&m->clean, e, tail, link);
	return 0;
}

int wc_map_carve(struct wc_map *m, sector_t start, sector_t end)
{
	struct wc_extent *e = wc_map_first(m, start, end), *next;

	if (wc_map_reserve(m, 2)) /* a split's tail, and the extent that comes in */
		return -ENOMEM;
	if (e && e->start < start && wc_end(e) > end)
		return wc_map_split(m, e, start, end);
	for (; e && e->start < end; e = next) {
		next = wc_map_next(e);
		if (e->start < start)
			wc_map_truncate(m, e, (unsigned int)(start - e->start));
		else if (wc_end(e) > end)
			wc_map_behead(m, e, end);
		else
			wc_map_drop(m, e);
	}
	return 0;
}

void wc_map_clear(struct wc_map *m)
{
	struct wc_extent *e;

	while ((e = RB_MIN(wc_tree, &m->tree)))
		wc_map_drop(m, e);
	free(m->vec);
	m->vec = NULL;
	m->vec_cap = 0;
}
