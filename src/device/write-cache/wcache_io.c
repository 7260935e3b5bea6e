/* SPDX-License-Identifier: BSD-3-Clause */
/* wcache_io.c - the write cache's requests: reads overlaid, writes cached or sent down, flushes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "wcache_impl.h"

/* Whether any request on list overlaps [start, end). */
bool wc_list_overlaps(const struct wc_rq_list *list, sector_t start, sector_t end)
{
	const struct wc_rq *w;

	TAILQ_FOREACH(w, list, link)
		if (w->start < end && start < w->end)
			return true;
	return false;
}

bool wc_below(const struct wc_filter *wc)
{
	return wc->nr_wb || wc->nr_flush || !TAILQ_EMPTY(&wc->reads) || !TAILQ_EMPTY(&wc->through);
}

/*
 * Power on: while the layer below takes one, the FIFO has room, and the
 * cache is not full (a full cache keeps the next request in the elevator
 * until writeback frees room).  Off: everything, to end it with -EIO.
 */
bool wc_can_take(struct blk_dev *dev)
{
	struct wc_filter *wc = dev->priv;

	if (wc->nr_fifo >= dev_depth(dev))
		return false;
	if (wc->power != WC_ON)
		return true;
	return wc->map.bytes < wc->size && dev_can_take(dev->lower);
}

/*
 * Copy between buf and rq's data from byte off after its completion
 * position on (into the request if to_rq): the first bio may have ended
 * in part, and its ended bytes are no longer the request's.
 */
static void wc_copy(struct request *rq, size_t off, char *buf, size_t len, bool to_rq)
{
	struct bio *bio;

	rq_for_each_bio(bio, rq) {
		size_t skip, avail = bio->bi_size - bio->bi_done;

		if (off >= avail) {
			off -= avail;
			continue;
		}
		skip = bio->bi_done + off;
		off = 0;
		for (unsigned short i = 0; i < bio->bi_vcnt && len; i++) {
			const struct bio_vec *bv = &bio->bi_io_vec[i];
			size_t n;

			if (skip >= bv->bv_len) {
				skip -= bv->bv_len;
				continue;
			}
			n = bv->bv_len - skip < len ? bv->bv_len - skip : len;
			if (to_rq)
				memcpy((char *)bv->bv_base + skip, buf, n);
			else
				memcpy(buf, (char *)bv->bv_base + skip, n);
			buf += n;
			len -= n;
			skip = 0;
		}
		if (!len)
			return;
	}
}

/*
 * The cache's data over the read's sectors [pos, pos + n) that just ended
 * below.  pos is the filter's count, not blk_rq_pos(): a layer above that
 * holds the parts until the whole has ended (the model) leaves the
 * request's position where it was, before the parts that ended already.
 */
static bool wc_overlay(struct wc_filter *wc, struct request *rq, sector_t pos, unsigned int n)
{
	sector_t end = pos + n;
	bool hit = false;

	for (struct wc_extent *e = wc_map_first(&wc->map, pos, end); e && e->start < end;
	     e = wc_map_next(e)) {
		sector_t s = e->start > pos ? e->start : pos;
		sector_t t = wc_end(e) < end ? wc_end(e) : end;

		wc_copy(rq, (size_t)(s - blk_rq_pos(rq)) << SECTOR_SHIFT,
			e->buf + ((size_t)(s - e->start) << SECTOR_SHIFT),
			(size_t)(t - s) << SECTOR_SHIFT, true);
		hit = true;
	}
	return hit;
}

/* Clean extents no read below overlaps any more go. */
static void wc_drop_clean(struct wc_filter *wc)
{
	struct wc_extent *e, *next;

	for (e = TAILQ_FIRST(&wc->map.clean); e; e = next) {
		next = TAILQ_NEXT(e, link);
		if (!wc_list_overlaps(&wc->reads, e->start, wc_end(e)))
			wc_map_drop(&wc->map, e);
	}
}

void wc_fifo_remove(struct wc_filter *wc, struct wc_rq *w)
{
	TAILQ_REMOVE(&wc->fifo, w, link);
	wc->nr_fifo--;
}

static void wc_send_read(struct blk_dev *dev, struct wc_rq *w)
{
	struct wc_filter *wc = dev->priv;

	w->kind = WC_RQ_READ;
	w->left = blk_rq_sectors(w->rq);
	TAILQ_INSERT_TAIL(&wc->reads, w, link);
	dev_submit(dev->lower, w->rq);
}

/*
 * Reads go down at once: the cache's data goes over theirs as they end.
 * Everything else waits its turn in the FIFO, looked at from the timer:
 * nothing ends from inside submit.
 */
void wc_submit(struct blk_dev *dev, struct request *rq)
{
	struct wc_filter *wc = dev->priv;
	struct wc_rq *w = dev_rq_pdu(dev, rq);

	w->rq = rq;
	w->start = blk_rq_pos(rq);
	w->end = blk_rq_end_sector(rq);
	w->superseded = false;
	if (rq->cmd_op == REQ_OP_READ && wc->power == WC_ON) {
		wc_send_read(dev, w);
		return;
	}
	w->kind = WC_RQ_PENDING;
	TAILQ_INSERT_TAIL(&wc->fifo, w, link);
	wc->nr_fifo++;
	dev_set_timer(dev, dev_now(dev));
}

/* The disk's atomic unit, in sectors: aligned from sector 0. */
static sector_t wc_unit(const struct wc_filter *wc)
{
	return wc->atomic >> SECTOR_SHIFT;
}

/*
 * The range a write of [*start, *end) is cached as.  An older dirty extent
 * it cuts inside an atomic unit gives it the rest of that unit's data: a
 * unit's dirty data stays in one extent, written back in one request, as
 * the disk writes a unit whole (two parts written apart, a crash between
 * them leaves the older write in that unit without the part the newer one
 * superseded).  The older one is cut at the unit's boundary instead.
 */
static void wc_grow(struct wc_filter *wc, sector_t *start, sector_t *end)
{
	sector_t unit = wc_unit(wc), s = *start, t = *end;
	struct wc_extent *e = wc_map_first(&wc->map, s, s + 1);

	if (e && e->state == WC_DIRTY && e->start < s)
		*start = e->start > s - s % unit ? e->start : s - s % unit;
	e = wc_map_first(&wc->map, t - 1, t);
	if (e && e->state == WC_DIRTY && wc_end(e) > t) {
		sector_t up = t % unit ? t + unit - t % unit : t;

		*end = wc_end(e) < up ? wc_end(e) : up;
	}
}

/* The cached data of [from, to) into n's buffer: what a grown write takes over. */
static void wc_take_over(struct wc_filter *wc, struct wc_extent *n, sector_t from, sector_t to)
{
	for (struct wc_extent *e = wc_map_first(&wc->map, from, to); e && e->start < to;
	     e = wc_map_next(e)) {
		sector_t s = e->start > from ? e->start : from;
		sector_t t = wc_end(e) < to ? wc_end(e) : to;

		memcpy(n->buf + ((size_t)(s - n->start) << SECTOR_SHIFT),
		       e->buf + ((size_t)(s - e->start) << SECTOR_SHIFT),
		       (size_t)(t - s) << SECTOR_SHIFT);
	}
}

/* A write into the cache, and ended: false if it must wait (or go through: *through). */
static bool wc_cache_write(struct blk_dev *dev, struct wc_rq *w, uint64_t now, bool *through)
{
	struct wc_filter *wc = dev->priv;
	unsigned int nr = blk_rq_sectors(w->rq);
	uint64_t bytes = (uint64_t)nr << SECTOR_SHIFT;
	sector_t start = w->start, end = w->end;
	struct wc_extent *e;

	if (bytes > wc->size || (w->rq->cmd_flags & REQ_FUA)) {
		*through = true;
		return false;
	}
	/* data in writeback is the device's: the newer write waits for it to land */
	if (wc_map_has(&wc->map, w->start, w->end, WC_WRITEBACK))
		return false;
	if (wc->map.bytes + bytes > wc->size) {
		wc->need_room = true;
		return false;
	}
	wc_grow(wc, &start, &end);
	e = wc_extent_new(start, (unsigned int)(end - start), now);
	if (e) {
		wc_take_over(wc, e, start, w->start);
		wc_take_over(wc, e, w->end, end);
	}
	if (!e || wc_map_carve(&wc->map, start, end)) {
		if (e) {
			free(e->buf);
			free(e);
		}
		*through = true; /* no memory to cache it: it is written through */
		return false;
	}
	wc_copy(w->rq, 0, e->buf + ((size_t)(w->start - start) << SECTOR_SHIFT), bytes, false);
	wc_map_insert(&wc->map, e);
	wc_fifo_remove(wc, w);
	dev_end(dev, w->rq, 0, nr);
	return true;
}

/*
 * An older dirty extent a write through would cut inside an atomic unit
 * (the through write begins or ends inside the unit, the extent goes on
 * past it) is written back first, whole, the part the write supersedes
 * too, and the write waits for it to land: carved, its part of that unit
 * would land on its own, without the rest, or after the write through.
 * false: one is in the way.
 */
static bool wc_edges_clear(struct blk_dev *dev, const struct wc_rq *w)
{
	struct wc_filter *wc = dev->priv;
	sector_t unit = wc_unit(wc);
	struct wc_extent *e = NULL, *x;

	if (w->start % unit && (x = wc_map_first(&wc->map, w->start, w->start + 1)) &&
	    x->state == WC_DIRTY && x->start < w->start)
		e = x;
	else if (w->end % unit && (x = wc_map_first(&wc->map, w->end - 1, w->end)) &&
		 x->state == WC_DIRTY && wc_end(x) > w->end)
		e = x;
	if (!e)
		return true;
	if (wc->nr_wb < wc->depth && wc_may_write(wc, e) && dev_can_take(dev->lower))
		wc_start_writeback(dev, e);
	return false;
}

/*
 * A write the cache does not keep goes down once no older cached data of
 * its range can land after it or be read instead of it: none in writeback
 * there, no write through there still below, no read below there (whose
 * cached data the carve would take away), and no dirty data it would cut
 * inside an atomic unit (wc_edges_clear).  Cached data there is older and
 * superseded: it goes without being written.
 */
static bool wc_send_through(struct blk_dev *dev, struct wc_rq *w)
{
	struct wc_filter *wc = dev->priv;

	bool dirty;

	if (!wc_edges_clear(dev, w) || wc_map_has(&wc->map, w->start, w->end, WC_WRITEBACK) ||
	    wc_list_overlaps(&wc->through, w->start, w->end) ||
	    wc_list_overlaps(&wc->reads, w->start, w->end) || !dev_can_take(dev->lower))
		return false;
	dirty = wc_map_has(&wc->map, w->start, w->end, WC_DIRTY);
	if (wc_map_carve(&wc->map, w->start, w->end))
		return false;
	w->superseded = dirty;
	wc_fifo_remove(wc, w);
	w->kind = WC_RQ_THROUGH;
	w->left = blk_rq_sectors(w->rq);
	TAILQ_INSERT_TAIL(&wc->through, w, link);
	dev_submit(dev->lower, w->rq);
	return true;
}

/* A flush goes down once every write ended before it is written back. */
static bool wc_send_flush(struct blk_dev *dev, struct wc_rq *w)
{
	struct wc_filter *wc = dev->priv;

	if (!TAILQ_EMPTY(&wc->map.dirty) || wc->nr_wb) {
		wc->need_flush = true;
		return false;
	}
	if (!dev_can_take(dev->lower))
		return false;
	wc_fifo_remove(wc, w);
	w->kind = WC_RQ_FLUSH;
	w->left = 0;
	wc->nr_flush++;
	dev_submit(dev->lower, w->rq);
	return true;
}

/*
 * Discards and write-zeroes go through, as FUA writes do: the cache keeps
 * data, not holes, and they are rare; what the cache held of their range
 * is older, and goes.
 */
static bool wc_take_one(struct blk_dev *dev, struct wc_rq *w, uint64_t now)
{
	bool through = false;

	switch (w->rq->cmd_op) {
	case REQ_OP_READ:
		if (!dev_can_take(dev->lower))
			return false;
		wc_fifo_remove(dev->priv, w);
		wc_send_read(dev, w);
		return true;
	case REQ_OP_FLUSH:
		return wc_send_flush(dev, w);
	case REQ_OP_WRITE:
		if (wc_cache_write(dev, w, now, &through))
			return true;
		return through && wc_send_through(dev, w);
	case REQ_OP_DISCARD:
	case REQ_OP_WRITE_ZEROES:
		break;
	}
	return wc_send_through(dev, w);
}

/* The FIFO in order, while its head can go: a later request never passes an earlier one. */
void wc_take(struct blk_dev *dev, uint64_t now)
{
	struct wc_filter *wc = dev->priv;
	struct wc_rq *w;

	wc->need_room = wc->need_flush = false; /* the head that waits says so again */
	while ((w = TAILQ_FIRST(&wc->fifo)) && wc_take_one(dev, w, now))
		;
}

void wc_end_rq(struct blk_dev *dev, struct request *rq, int error, unsigned int nr_sectors)
{
	struct wc_filter *wc = dev->priv;
	struct wc_rq *w = dev_rq_pdu(dev, rq);
	sector_t from = w->end - w->left; /* where these sectors begin */
	bool last;

	if (error && !w->error)
		w->error = error;
	w->left -= nr_sectors < w->left ? nr_sectors : w->left;
	last = !w->left;
	switch (w->kind) {
	case WC_RQ_WRITEBACK:
		if (last)
			wc_writeback_done(dev, w);
		return;
	case WC_RQ_READ:
		if (!error && wc->power == WC_ON && nr_sectors)
			w->hit |= wc_overlay(wc, rq, from, nr_sectors);
		if (last) {
			wc->stats.read_hits += w->hit;
			TAILQ_REMOVE(&wc->reads, w, link);
		}
		break;
	case WC_RQ_THROUGH:
		/*
		 * Older dirty data of its range was carved away unwritten when it
		 * went down: where it failed, that data (ended, maybe flushed for)
		 * is on no medium now.  The next flush fails, as after a failed
		 * writeback, not only this write.  With nothing carved, the error
		 * is this write's alone.
		 */
		if (error && w->superseded)
			wc->wb_error = error;
		if (last)
			TAILQ_REMOVE(&wc->through, w, link);
		break;
	case WC_RQ_FLUSH:
		wc->nr_flush--;
		if (!error && wc->wb_error)
			error = wc->wb_error;
		wc->wb_error = 0;
		break;
	default:
		break;
	}
	if (wc->power != WC_ON)
		error = -EIO; /* the device lost power with it in its hands */
	if (last && w->kind == WC_RQ_READ)
		wc_drop_clean(wc);
	if (last)
		wc_look(dev);
	dev_end(dev, rq, error, nr_sectors);
}
