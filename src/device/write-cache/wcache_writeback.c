/* SPDX-License-Identifier: BSD-3-Clause */
/* wcache_writeback.c - the write cache's writeback: which dirty extent goes, when; the timer. */
#include <errno.h>
#include <sys/queue.h>

#include "wcache_impl.h"

#define WC_RETRY_NS 100000ull /* blocked with nothing of ours below: look again */

/* Whether e may go down now: no write through below overlaps it. */
bool wc_may_write(const struct wc_filter *wc, const struct wc_extent *e)
{
	return !wc_list_overlaps(&wc->through, e->start, wc_end(e));
}

bool wc_start_writeback(struct blk_dev *dev, struct wc_extent *e)
{
	struct wc_filter *wc = dev->priv;
	struct request *rq = dev_alloc_request(dev, REQ_OP_WRITE, 0, e->start, e->buf,
					       e->nr << SECTOR_SHIFT);
	struct wc_rq *w;

	if (!rq)
		return false;
	w = dev_rq_pdu(dev, rq);
	*w = (struct wc_rq){ .rq = rq, .kind = WC_RQ_WRITEBACK, .start = e->start,
			     .end = wc_end(e), .left = e->nr, .ext = e };
	wc_map_set_state(&wc->map, e, WC_WRITEBACK);
	wc->nr_wb++;
	dev_submit(dev->lower, rq);
	return true;
}

/*
 * Power off: everything from above ends with -EIO, a flush only once the
 * cut's writebacks have all landed (at exit the daemon waits on it, and
 * must not leave one below).
 */
static void wc_fail(struct blk_dev *dev)
{
	struct wc_filter *wc = dev->priv;
	struct wc_rq *w, *next;

	for (w = TAILQ_FIRST(&wc->fifo); w; w = next) {
		next = TAILQ_NEXT(w, link);
		if (w->rq->cmd_op == REQ_OP_FLUSH && (wc->nr_wb || wc->power == WC_CUTTING))
			continue;
		wc_fifo_remove(wc, w);
		dev_end(dev, w->rq, -EIO, blk_rq_sectors(w->rq));
	}
}

static bool wc_expired(const struct wc_filter *wc, const struct wc_extent *e, uint64_t now)
{
	return wc->expire_ns && now - e->dirtied_at >= wc->expire_ns;
}

#define WC_PICK_TRIES 8

/*
 * Any dirty extent, at random: a few draws from the vector, then (writes
 * through below in the way of each) a count of those that may go.
 */
static struct wc_extent *wc_pick_any(struct wc_filter *wc)
{
	size_t n = wc->map.nr_dirty, ok = 0, pick;
	struct wc_extent *e;

	for (int i = 0; i < WC_PICK_TRIES; i++) {
		e = wc_map_dirty_at(&wc->map, wc_rand(&wc->rng) % n);
		if (wc_may_write(wc, e))
			return e;
	}
	for (size_t i = 0; i < n; i++)
		ok += wc_may_write(wc, wc_map_dirty_at(&wc->map, i));
	if (!ok)
		return NULL;
	pick = wc_rand(&wc->rng) % ok;
	for (size_t i = 0; i < n; i++) {
		e = wc_map_dirty_at(&wc->map, i);
		if (wc_may_write(wc, e) && !pick--)
			return e;
	}
	return NULL;
}

/* An expired one, at random among them: they lead the dirty list, oldest first. */
static struct wc_extent *wc_pick_expired(struct wc_filter *wc, uint64_t now)
{
	struct wc_extent *e;
	uint64_t n = 0, pick;

	for (e = TAILQ_FIRST(&wc->map.dirty); e && wc_expired(wc, e, now); e = TAILQ_NEXT(e, link))
		n += wc_may_write(wc, e);
	if (!n)
		return NULL;
	pick = wc_rand(&wc->rng) % n;
	for (e = TAILQ_FIRST(&wc->map.dirty); e && wc_expired(wc, e, now); e = TAILQ_NEXT(e, link))
		if (wc_may_write(wc, e) && !pick--)
			return e;
	return NULL;
}

/* A dirty extent to write back, seeded random among those that may go; NULL: none. */
static struct wc_extent *wc_pick(struct wc_filter *wc, bool any, uint64_t now)
{
	if (!wc->map.nr_dirty)
		return NULL;
	return any ? wc_pick_any(wc) : wc_pick_expired(wc, now);
}

/*
 * Write back, up to depth at once: anything dirty when a flush or a
 * write waits for it, when the cache is over half full, or while the
 * power goes; otherwise what has expired.  Nothing while the power is off.
 */
static void wc_writeback(struct blk_dev *dev, uint64_t now)
{
	struct wc_filter *wc = dev->priv;
	struct wc_extent *e;

	if (wc->power == WC_OFF)
		return;
	while (wc->nr_wb < wc->depth && !TAILQ_EMPTY(&wc->map.dirty) && dev_can_take(dev->lower)) {
		bool any = wc->need_flush || wc->need_room || wc->power == WC_CUTTING ||
			   wc->map.dirty_bytes * 2 > wc->size;

		e = wc_pick(wc, any, now);
		if (!e || !wc_start_writeback(dev, e))
			return;
	}
}

/* The next time the filter must look: now if there is work, an expiry, or a retry. */
static void wc_arm(struct blk_dev *dev, uint64_t now)
{
	struct wc_filter *wc = dev->priv;
	struct wc_extent *oldest = TAILQ_FIRST(&wc->map.dirty);
	uint64_t at = 0;

	if (wc->power == WC_ON && oldest && wc->expire_ns &&
	    !wc_expired(wc, oldest, now))
		at = oldest->dirtied_at + wc->expire_ns;
	/* blocked, and nothing below will end to bring the next look */
	if ((!TAILQ_EMPTY(&wc->fifo) || (oldest && wc->power != WC_OFF)) && !wc_below(wc)) {
		bool stuck = !TAILQ_EMPTY(&wc->fifo) || wc->power == WC_CUTTING ||
			     wc->map.dirty_bytes * 2 > wc->size || wc_expired(wc, oldest, now);

		if (stuck && (!at || now + WC_RETRY_NS < at))
			at = now + WC_RETRY_NS;
	}
	dev_set_timer(dev, at);
}

/* Cutting ends once what it persists has landed. */
void wc_power_settle(struct wc_filter *wc)
{
	if (wc->power == WC_CUTTING && TAILQ_EMPTY(&wc->map.dirty) && !wc->nr_wb)
		wc->power = WC_OFF;
}

void wc_timer(struct blk_dev *dev, uint64_t now)
{
	struct wc_filter *wc = dev->priv;

	if (wc->power == WC_ON) {
		wc_take(dev, now); /* first: what waits at its head says what to write back */
		wc_writeback(dev, now);
	} else {
		wc_writeback(dev, now);
		wc_power_settle(wc);
		wc_fail(dev);
	}
	wc_power_settle(wc);
	wc_arm(dev, now);
}

/* Whatever ended below may let the FIFO on: look at once, from the timer. */
void wc_look(struct blk_dev *dev)
{
	dev_set_timer(dev, dev_now(dev));
}

void wc_writeback_done(struct blk_dev *dev, struct wc_rq *w)
{
	struct wc_filter *wc = dev->priv;
	struct wc_extent *e = w->ext;

	wc->nr_wb--;
	if (w->error) {
		/* the data is lost, as a page whose writeback failed: the next flush fails */
		wc->wb_error = w->error;
		wc->stats.dropped += (uint64_t)e->nr << SECTOR_SHIFT;
		dev_trace_msg(dev, "writeback of %llu+%u failed: %d", (unsigned long long)e->start,
			      e->nr, w->error);
	} else {
		wc->stats.written_back += (uint64_t)e->nr << SECTOR_SHIFT;
	}
	/* a read below may have read the sectors before they landed: it still gets these */
	if (!w->error && wc_list_overlaps(&wc->reads, e->start, wc_end(e)))
		wc_map_set_state(&wc->map, e, WC_CLEAN);
	else
		wc_map_drop(&wc->map, e);
	dev_free_request(w->rq);
	wc_power_settle(wc);
	wc_look(dev);
}
