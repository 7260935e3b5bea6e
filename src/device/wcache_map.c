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

static struct wc_list *wc_list_of(struct wc_map *m, enum wc_state state)
{
	return state == WC_DIRTY ? &m->dirty : state == WC_CLEAN ? &m->clean : NULL;
}

static uint64_t wc_bytes(const struct wc_extent *e)
{
	return (uint64_t)e->nr << SECTOR_SHIFT;
}

void wc_map_insert(struct wc_map *m, struct wc_extent *e)
{
	RB_INSERT(wc_tree, &m->tree, e);
	TAILQ_INSERT_TAIL(&m->dirty, e, link);
	m->bytes += wc_bytes(e);
	m->dirty_bytes += wc_bytes(e);
}

/* Out of the list of its state, with its bytes. */
static void wc_unlist(struct wc_map *m, struct wc_extent *e)
{
	struct wc_list *l = wc_list_of(m, e->state);

	if (l)
		TAILQ_REMOVE(l, e, link);
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

void wc_map_set_state(struct wc_map *m, struct wc_extent *e, enum wc_state state)
{
	struct wc_list *l = wc_list_of(m, state);

	wc_unlist(m, e);
	e->state = state;
	if (state != WC_CLEAN)
		m->dirty_bytes += wc_bytes(e);
	if (l)
		TAILQ_INSERT_TAIL(l, e, link);
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
	if (wc_list_of(m, tail->state)) /* beside e: as old as it */
		TAILQ_INSERT_AFTER(wc_list_of(m, tail->state), e, tail, link);
	return 0;
}

int wc_map_carve(struct wc_map *m, sector_t start, sector_t end)
{
	struct wc_extent *e = wc_map_first(m, start, end), *next;

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
}
