/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * filter_write_cache.c - the write-cache filter: a disk's volatile write
 * cache, and a power switch that loses it ("write-cache:size=64,expire=0").
 * A write ends once its data is in the cache; the cache writes back in an
 * order of its own, seeded, and a flush ends only once what it covers is
 * durable below.  A power cut (power/cut) drops what is not durable, all
 * of it or a seeded part; after power/restore the layer below holds one
 * state a crash could have left.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "device.h"
#include "wcache_map.h"

#define NSEC_PER_MS 1000000ull
#define WC_RETRY_NS 100000ull /* blocked with nothing of ours below: look again */

/* Defaults: 64 MiB, written back after 30 s as Linux's dirty_expire_centisecs, 4 below. */
#define WC_DEF_SIZE_MIB 64
#define WC_DEF_EXPIRE_MS 30000
#define WC_DEF_SEED 1
#define WC_DEF_DEPTH 4

enum wc_kind {
	WC_RQ_NEW,       /* from above, not yet looked at (the pdu is zeroed at submit) */
	WC_RQ_PENDING,   /* from above, waiting in the FIFO */
	WC_RQ_READ,      /* a read below: the cache's data goes over it at its end */
	WC_RQ_THROUGH,   /* a write the cache does not keep (FUA, discard, zeroes), below */
	WC_RQ_FLUSH,     /* a flush below, after the writebacks it covers */
	WC_RQ_WRITEBACK, /* the cache's own, never passed up */
};

/* What the filter keeps with each request. */
struct wc_rq {
	TAILQ_ENTRY(wc_rq) link; /* the FIFO, or the list of what is below */
	struct request *rq;
	enum wc_kind kind;
	sector_t start, end; /* its range as it came: its position moves as it ends */
	unsigned int left;   /* sectors below not yet ended */
	int error;
	bool superseded;       /* a write through: it carved older dirty data away unwritten */
	bool hit;              /* a read given some of the cache's data */
	struct wc_extent *ext; /* a writeback's */
};

TAILQ_HEAD(wc_rq_list, wc_rq);

enum wc_power { WC_ON, WC_CUTTING, WC_OFF };

struct wc_stats {
	uint64_t written_back, dropped, torn; /* bytes */
	uint64_t read_hits;                   /* reads given data of the cache's */
};

struct wc_filter {
	uint64_t size;      /* bytes */
	uint64_t expire_ns; /* 0: never by age */
	uint64_t seed;
	unsigned int depth;  /* writebacks below at once */
	unsigned int atomic; /* bytes a torn write keeps whole */
	uint64_t rng, cut_rng;
	struct wc_map map;
	struct wc_rq_list fifo;    /* from above, in arrival order */
	struct wc_rq_list reads;   /* below */
	struct wc_rq_list through; /* below */
	unsigned int nr_fifo, nr_wb, nr_flush;
	bool need_room;  /* the FIFO's head waits for writeback to free room */
	bool need_flush; /* the FIFO's head is a flush waiting for writeback */
	int wb_error;    /* a writeback failed: the next flush says so */
	enum wc_power power;
	struct wc_stats stats;
};

enum { WC_SIZE, WC_EXPIRE, WC_SEED, WC_DEPTH, WC_ATOMIC, NR_WC_KEYS };

static const struct dev_key wc_keys[] = {
	[WC_SIZE] = { "size", 1, 65536 },           /* MiB */
	[WC_EXPIRE] = { "expire", 0, 86400000 },    /* ms, a day */
	[WC_SEED] = { "seed", 0, UINT64_MAX },
	[WC_DEPTH] = { "depth", 1, 1024 },
	[WC_ATOMIC] = { "atomic", 512, 1u << 20 },  /* bytes */
	{ NULL, 0, 0 },
};

/* splitmix64: one stream per seed, the same on every machine. */
static uint64_t wc_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static bool wc_over_sim(const struct blk_dev *dev)
{
	const struct dev_stack *s = dev->stack;

	/* by name: the sim backend is src/backend's library, linked after this one */
	return !strcmp(s->layers[s->nr_layers - 1].ops->name, "sim");
}

static int wc_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		   size_t whylen)
{
	uint64_t v[NR_WC_KEYS] = { WC_DEF_SIZE_MIB, WC_DEF_EXPIRE_MS, WC_DEF_SEED, WC_DEF_DEPTH, 0 };
	unsigned int lbs = lim->logical_block_size ? lim->logical_block_size : SECTOR_SIZE;
	struct wc_filter *wc;
	int ret = dev_parse_keys("write-cache", args, wc_keys, v, why, whylen);

	if (ret)
		return ret;
	if (wc_over_sim(dev)) {
		snprintf(why, whylen, "write-cache: the sim backend moves no data: nothing to cache");
		return -EINVAL;
	}
	if (v[WC_ATOMIC] && v[WC_ATOMIC] % lbs) {
		snprintf(why, whylen, "write-cache: atomic must be a multiple of the block size, %u",
			 lbs);
		return -EINVAL;
	}
	wc = calloc(1, sizeof(*wc));
	if (!wc) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	wc->size = v[WC_SIZE] << 20;
	wc->expire_ns = v[WC_EXPIRE] * NSEC_PER_MS;
	wc->seed = wc->rng = v[WC_SEED];
	wc->cut_rng = v[WC_SEED] ^ 0x5eed5eed5eed5eedull; /* a stream of its own */
	wc->depth = (unsigned int)v[WC_DEPTH];
	wc->atomic = v[WC_ATOMIC] ? (unsigned int)v[WC_ATOMIC] : lbs;
	wc_map_init(&wc->map);
	TAILQ_INIT(&wc->fifo);
	TAILQ_INIT(&wc->reads);
	TAILQ_INIT(&wc->through);
	lim->has_cache = true;
	dev->priv = wc;
	return 0;
}

static void wc_close(struct blk_dev *dev)
{
	struct wc_filter *wc = dev->priv;

	wc_map_clear(&wc->map);
	free(wc);
}

/* Whether any request on list overlaps [start, end). */
static bool wc_list_overlaps(const struct wc_rq_list *list, sector_t start, sector_t end)
{
	const struct wc_rq *w;

	TAILQ_FOREACH(w, list, link)
		if (w->start < end && start < w->end)
			return true;
	return false;
}

static bool wc_below(const struct wc_filter *wc)
{
	return wc->nr_wb || wc->nr_flush || !TAILQ_EMPTY(&wc->reads) || !TAILQ_EMPTY(&wc->through);
}

/*
 * Power on: while the layer below takes one, the FIFO has room, and the
 * cache is not full (a full cache keeps the next request in the elevator
 * until writeback frees room).  Off: everything, to end it with -EIO.
 */
static bool wc_can_take(struct blk_dev *dev)
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

static void wc_fifo_remove(struct wc_filter *wc, struct wc_rq *w)
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
static void wc_submit(struct blk_dev *dev, struct request *rq)
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

/* Whether e may go down now: no write through below overlaps it. */
static bool wc_may_write(const struct wc_filter *wc, const struct wc_extent *e)
{
	return !wc_list_overlaps(&wc->through, e->start, wc_end(e));
}

static bool wc_start_writeback(struct blk_dev *dev, struct wc_extent *e)
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
static void wc_take(struct blk_dev *dev, uint64_t now)
{
	struct wc_filter *wc = dev->priv;
	struct wc_rq *w;

	wc->need_room = wc->need_flush = false; /* the head that waits says so again */
	while ((w = TAILQ_FIRST(&wc->fifo)) && wc_take_one(dev, w, now))
		;
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
static void wc_power_settle(struct wc_filter *wc)
{
	if (wc->power == WC_CUTTING && TAILQ_EMPTY(&wc->map.dirty) && !wc->nr_wb)
		wc->power = WC_OFF;
}

static void wc_timer(struct blk_dev *dev, uint64_t now)
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
static void wc_look(struct blk_dev *dev)
{
	dev_set_timer(dev, dev_now(dev));
}

static void wc_writeback_done(struct blk_dev *dev, struct wc_rq *w)
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

static void wc_end_rq(struct blk_dev *dev, struct request *rq, int error,
		      unsigned int nr_sectors)
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

static int wc_describe(const struct blk_dev *dev, char *buf, size_t len)
{
	const struct wc_filter *wc = dev->priv;

	return snprintf(buf, len, "size=%llu expire=%llu seed=%llu depth=%u atomic=%u",
			(unsigned long long)(wc->size >> 20),
			(unsigned long long)(wc->expire_ns / NSEC_PER_MS),
			(unsigned long long)wc->seed, wc->depth, wc->atomic);
}

/* The disk's atomic units (aligned from sector 0, unit sectors each) that e writes into. */
static unsigned int wc_units(const struct wc_extent *e, unsigned int unit)
{
	return (unsigned int)((e->start + e->nr + unit - 1) / unit - e->start / unit);
}

/*
 * One dirty extent of more than one of the disk's atomic units, at random,
 * keeps only its first units: it tears where a unit ends, since the disk
 * writes each unit whole or not at all (a unit it starts or ends inside
 * counts whole).
 */
static void wc_tear(struct blk_dev *dev, struct wc_filter *wc)
{
	unsigned int unit = wc->atomic >> SECTOR_SHIFT;
	struct wc_extent *e;
	uint64_t n = 0, pick;
	unsigned int keep, k;

	TAILQ_FOREACH(e, &wc->map.dirty, link)
		n += wc_units(e, unit) > 1;
	if (!n)
		return;
	pick = wc_rand(&wc->cut_rng) % n;
	TAILQ_FOREACH(e, &wc->map.dirty, link)
		if (wc_units(e, unit) > 1 && !pick--)
			break;
	k = 1 + (unsigned int)(wc_rand(&wc->cut_rng) % (wc_units(e, unit) - 1));
	keep = (unsigned int)((e->start / unit + k) * unit - e->start);
	wc->stats.torn += (uint64_t)(e->nr - keep) << SECTOR_SHIFT;
	dev_trace_msg(dev, "torn %llu+%u: %u kept", (unsigned long long)e->start, e->nr, keep);
	wc_map_truncate(&wc->map, e, keep);
}

/*
 * The power goes: each dirty extent, in sector order, is dropped (all), or
 * persisted or dropped at random from the seed (random, torn).  What is
 * persisted is written back before the power is off; what is below already
 * lands as it does.
 */
static int wc_store_cut(struct blk_dev *dev, const char *buf)
{
	struct wc_filter *wc = dev->priv;
	bool all = !strcmp(buf, "all"), torn = !strcmp(buf, "torn");
	struct wc_extent *e, *next;

	if (!all && !torn && strcmp(buf, "random"))
		return -EINVAL;
	if (wc->power != WC_ON)
		return 0; /* off already */
	for (e = wc_map_first(&wc->map, 0, (sector_t)-1); e; e = next) {
		next = wc_map_next(e);
		if (e->state == WC_DIRTY && (all || wc_rand(&wc->cut_rng) & 1)) {
			wc->stats.dropped += (uint64_t)e->nr << SECTOR_SHIFT;
			wc_map_drop(&wc->map, e);
		}
	}
	if (torn)
		wc_tear(dev, wc);
	wc->power = WC_CUTTING;
	wc->need_room = wc->need_flush = false;
	dev_trace_msg(dev, "power cut: %s", buf);
	wc_power_settle(wc);
	wc_look(dev);
	dev_kick(dev);
	return 0;
}

static int wc_store_restore(struct blk_dev *dev, const char *buf)
{
	struct wc_filter *wc = dev->priv;

	if (strcmp(buf, "1"))
		return -EINVAL;
	if (wc->power == WC_CUTTING)
		return -EBUSY;
	if (wc->power == WC_OFF) {
		wc->power = WC_ON;
		dev_trace_msg(dev, "power restored");
	}
	wc_look(dev);
	dev_kick(dev);
	return 0;
}

static int wc_show_state(struct blk_dev *dev, char *buf, size_t len)
{
	static const char *const names[] = { "on", "cutting", "off" };
	struct wc_filter *wc = dev->priv;

	return snprintf(buf, len, "%s\n", names[wc->power]);
}

static int wc_show_dirty(struct blk_dev *dev, char *buf, size_t len)
{
	struct wc_filter *wc = dev->priv;

	return snprintf(buf, len, "%llu\n", (unsigned long long)wc->map.dirty_bytes);
}

static int wc_show_stats(struct blk_dev *dev, char *buf, size_t len)
{
	struct wc_filter *wc = dev->priv;

	return snprintf(buf, len, "written_back %llu\ndropped %llu\ntorn %llu\nread_hits %llu\n",
			(unsigned long long)wc->stats.written_back,
			(unsigned long long)wc->stats.dropped, (unsigned long long)wc->stats.torn,
			(unsigned long long)wc->stats.read_hits);
}

static int wc_show_cut(struct blk_dev *dev, char *buf, size_t len)
{
	(void)dev;
	return snprintf(buf, len, "all random torn\n");
}

static int wc_show_restore(struct blk_dev *dev, char *buf, size_t len)
{
	struct wc_filter *wc = dev->priv;

	return snprintf(buf, len, "%d\n", wc->power == WC_ON);
}

/* device/write-cache/, and power/ at the top of the tree. */
static const struct dev_attr wc_attrs[] = {
	{ "cut", wc_show_cut, wc_store_cut },
	{ "restore", wc_show_restore, wc_store_restore },
	{ "state", wc_show_state, NULL },
	{ "dirty", wc_show_dirty, NULL },
	{ "stats", wc_show_stats, NULL },
	{ NULL, NULL, NULL },
};

const struct dev_ops dev_write_cache_ops = {
	.api_version = DEV_API_VERSION,
	.name = "write-cache",
	.rq_pdu_size = sizeof(struct wc_rq),
	.open = wc_open,
	.close = wc_close,
	.can_take = wc_can_take,
	.submit = wc_submit,
	.end = wc_end_rq,
	.timer = wc_timer,
	.describe = wc_describe,
	.attrs = wc_attrs,
	.ctl_dir = "power",
};
