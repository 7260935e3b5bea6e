/* SPDX-License-Identifier: BSD-3-Clause */
/* crash_overlay.c - a crash state served from BASE, an extent map into the log, and a COW map. */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crash_overlay.h"

#define COPY_CHUNK (1u << 20)

static int extent_cmp(const struct ovl_extent *a, const struct ovl_extent *b)
{
	return a->start < b->start ? -1 : a->start > b->start;
}
RB_GENERATE_INTERNAL(ovl_extents, ovl_extent, node, extent_cmp, __attribute__((unused)) static)

static int cow_cmp(const struct ovl_cow *a, const struct ovl_cow *b)
{
	return a->blk < b->blk ? -1 : a->blk > b->blk;
}
RB_GENERATE_INTERNAL(ovl_cows, ovl_cow, node, cow_cmp, __attribute__((unused)) static)

/* The first extent that ends after off, or NULL. */
static struct ovl_extent *extent_from(struct ovl_extents *t, uint64_t off)
{
	struct ovl_extent key = { .start = off }, *x = RB_NFIND(ovl_extents, t, &key), *prev;

	prev = x ? RB_PREV(ovl_extents, t, x) : RB_MAX(ovl_extents, t);
	return prev && prev->end > off ? prev : x;
}

/* [start, end) now reads src: what it covered of other extents is cut away. */
static int extent_put(struct ovl_extents *t, size_t *nr, uint64_t start, uint64_t end,
		      const uint8_t *src)
{
	struct ovl_extent *x = extent_from(t, start), *next, *n;

	for (; x && x->start < end; x = next) {
		next = RB_NEXT(ovl_extents, t, x);
		if (x->start < start && x->end > end) {
			/* the new range falls inside x: x's tail becomes an extent of its own */
			n = malloc(sizeof(*n));
			if (!n)
				return -ENOMEM;
			n->start = end;
			n->end = x->end;
			n->src = x->src ? x->src + (end - x->start) : NULL;
			x->end = start;
			RB_INSERT(ovl_extents, t, n);
			++*nr;
			break;
		} else if (x->start < start) {
			x->end = start;
		} else if (x->end > end) {
			/* the start moves right but stays before the next extent: order holds */
			x->src = x->src ? x->src + (end - x->start) : NULL;
			x->start = end;
		} else {
			RB_REMOVE(ovl_extents, t, x);
			--*nr;
			free(x);
		}
	}
	n = malloc(sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->start = start;
	n->end = end;
	n->src = src;
	RB_INSERT(ovl_extents, t, n);
	++*nr;
	return 0;
}

static void extents_free(struct ovl_extents *t)
{
	struct ovl_extent *x, *xn;

	RB_FOREACH_SAFE(x, ovl_extents, t, xn) {
		RB_REMOVE(ovl_extents, t, x);
		free(x);
	}
}

void ovl_layer_put(struct ovl_layer *l)
{
	if (l && atomic_fetch_sub(&l->refs, 1) == 1) {
		extents_free(&l->extents);
		free(l);
	}
}

/* A copy of prev (or nothing) with entries [prev->upto, upto) applied. */
static struct ovl_layer *layer_build(struct ovl_layer *prev, const struct crash_log *log,
				     size_t upto)
{
	struct ovl_layer *l = calloc(1, sizeof(*l));
	struct ovl_extent *x;
	size_t from = prev ? prev->upto : 0;
	int ret = 0;

	if (!l)
		return NULL;
	RB_INIT(&l->extents);
	atomic_init(&l->refs, 1);
	if (prev) {
		/* in order, each past the last: extent_put only ever appends */
		RB_FOREACH(x, ovl_extents, &prev->extents) {
			ret = extent_put(&l->extents, &l->nr_extents, x->start, x->end, x->src);
			if (ret)
				break;
		}
	}
	for (size_t i = from; i < upto && !ret; i++) {
		const struct crash_entry *e = &log->e[i];

		if (crash_entry_changes(e))
			ret = extent_put(&l->extents, &l->nr_extents, e->off, e->off + e->len,
					 e->data);
	}
	l->upto = upto;
	if (ret) {
		ovl_layer_put(l);
		return NULL;
	}
	return l;
}

int ovl_layer_advance(struct ovl_layer **cur, const struct crash_log *log, size_t pos)
{
	long lf = crash_log_last_flush(log, pos);
	size_t upto = lf < 0 ? 0 : (size_t)lf;
	struct ovl_layer *prev = *cur, *l;

	if (prev && prev->upto == upto)
		return 0;
	/* states come in log order; one that goes back starts afresh */
	l = layer_build(prev && prev->upto < upto ? prev : NULL, log, upto);
	if (!l)
		return -ENOMEM;
	ovl_layer_put(prev);
	*cur = l;
	return 0;
}

static bool dropped(const struct crash_spec *spec, size_t *next_drop, size_t i)
{
	while (*next_drop < spec->nr_drop && spec->drop[*next_drop] < i)
		++*next_drop;
	return *next_drop < spec->nr_drop && spec->drop[*next_drop] == i;
}

int ovl_build(struct ovl *o, const struct crash_log *log, const struct crash_spec *spec,
	      int base_fd, uint64_t size, struct ovl_layer *durable)
{
	size_t d = 0, from = 0;
	int ret = 0;
	long lf;

	memset(o, 0, sizeof(*o));
	RB_INIT(&o->extents);
	RB_INIT(&o->cows);
	o->base_fd = base_fd;
	o->size = size;
	o->cow_calloc = calloc;
	pthread_rwlock_init(&o->lock, NULL);
	lf = crash_log_last_flush(log, spec->pos);
	/* what the state may drop or tear lies from its last flush on: the layer stops before */
	if (durable && durable->upto <= (lf < 0 ? 0 : (size_t)lf)) {
		atomic_fetch_add(&durable->refs, 1);
		o->durable = durable;
		from = durable->upto;
	}
	for (size_t i = from; i < spec->pos && !ret; i++) {
		const struct crash_entry *e = &log->e[i];
		uint64_t len = e->len;

		if (!crash_entry_changes(e) || dropped(spec, &d, i))
			continue;
		if ((long)i == spec->torn_e && spec->torn_bytes < len)
			len = spec->torn_bytes;
		ret = extent_put(&o->extents, &o->nr_extents, e->off, e->off + len, e->data);
	}
	if (ret)
		ovl_free(o);
	return ret;
}

void ovl_free(struct ovl *o)
{
	struct ovl_cow *c, *cn;

	extents_free(&o->extents);
	ovl_layer_put(o->durable);
	o->durable = NULL;
	RB_FOREACH_SAFE(c, ovl_cows, &o->cows, cn) {
		RB_REMOVE(ovl_cows, &o->cows, c);
		free(c->data);
		free(c);
	}
	pthread_rwlock_destroy(&o->lock);
}

static ssize_t base_read(struct ovl *o, uint8_t *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(o->base_fd, buf + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n) {
			/* BASE shrank under us: what is missing reads as zeros */
			memset(buf + done, 0, len - done);
			break;
		}
		done += (size_t)n;
	}
	return 0;
}

/* Bytes of layer t, its gaps from below: the durable layer (when t is the state's own), or BASE. */
static ssize_t layer_read(struct ovl *o, struct ovl_extents *t, uint8_t *buf, size_t len,
			  uint64_t off)
{
	struct ovl_extents *below = t == &o->extents && o->durable ? &o->durable->extents : NULL;
	uint64_t end = off + len, at = off;
	struct ovl_extent *x;
	ssize_t ret;

	for (x = extent_from(t, off); at < end; x = RB_NEXT(ovl_extents, t, x)) {
		uint64_t upto = x && x->start < end ? x->start : end;

		if (upto > at) {
			ret = below ? layer_read(o, below, buf + (at - off), upto - at, at)
				    : base_read(o, buf + (at - off), upto - at, at);
			if (ret)
				return ret;
			at = upto;
		}
		if (!x || x->start >= end)
			break;
		upto = x->end < end ? x->end : end;
		if (x->src)
			memcpy(buf + (at - off), x->src + (at - x->start), upto - at);
		else
			memset(buf + (at - off), 0, upto - at);
		at = upto;
	}
	return 0;
}

/* The state below the COW map.  len is inside the image. */
static ssize_t lower_read(struct ovl *o, uint8_t *buf, size_t len, uint64_t off)
{
	return layer_read(o, &o->extents, buf, len, off);
}

static size_t clip(const struct ovl *o, size_t len, uint64_t off)
{
	if (off >= o->size)
		return 0;
	return len < o->size - off ? len : (size_t)(o->size - off);
}

ssize_t ovl_read(struct ovl *o, void *buf, size_t len, uint64_t off)
{
	struct ovl_cow key, *c;
	ssize_t ret;

	len = clip(o, len, off);
	if (!len)
		return 0;
	pthread_rwlock_rdlock(&o->lock);
	ret = lower_read(o, buf, len, off);
	key.blk = off / OVL_COW_BLOCK;
	for (c = RB_NFIND(ovl_cows, &o->cows, &key); !ret && c; c = RB_NEXT(ovl_cows, &o->cows, c)) {
		uint64_t bs = c->blk * OVL_COW_BLOCK, be = bs + OVL_COW_BLOCK;
		uint64_t from = bs > off ? bs : off, to = be < off + len ? be : off + len;

		if (from >= to)
			break;
		if (c->data)
			memcpy((uint8_t *)buf + (from - off), c->data + (from - bs), to - from);
		else
			memset((uint8_t *)buf + (from - off), 0, to - from);
	}
	pthread_rwlock_unlock(&o->lock);
	return ret ? ret : (ssize_t)len;
}

/* The COW block blk, made from what the state holds there when the write covers only part. */
static struct ovl_cow *cow_get(struct ovl *o, uint64_t blk, bool whole, bool zeros)
{
	struct ovl_cow key = { .blk = blk }, *c = RB_FIND(ovl_cows, &o->cows, &key);
	uint64_t bs = blk * OVL_COW_BLOCK;

	if (!c) {
		/*
		 * Made whole before it goes in the map: a node without its data
		 * would read as zeros where the state holds something else.
		 */
		c = o->cow_calloc(1, sizeof(*c));
		if (!c)
			return NULL;
		c->blk = blk;
		if (!(whole && zeros)) {
			c->data = o->cow_calloc(1, OVL_COW_BLOCK);
			if (!c->data ||
			    (!whole && lower_read(o, c->data, clip(o, OVL_COW_BLOCK, bs), bs))) {
				free(c->data);
				free(c);
				return NULL;
			}
		}
		RB_INSERT(ovl_cows, &o->cows, c);
		o->nr_cows++;
		return c;
	}
	if (whole && zeros) {
		free(c->data);
		c->data = NULL;
	} else if (!c->data) {
		c->data = o->cow_calloc(1, OVL_COW_BLOCK);
	}
	return c->data || zeros ? c : NULL;
}

ssize_t ovl_write(struct ovl *o, const void *buf, size_t len, uint64_t off)
{
	uint64_t at, end;
	ssize_t ret = 0;

	if (off > o->size || len > o->size - off)
		return -ENOSPC;
	end = off + len;
	pthread_rwlock_wrlock(&o->lock);
	for (at = off; at < end;) {
		uint64_t blk = at / OVL_COW_BLOCK, bs = blk * OVL_COW_BLOCK;
		uint64_t to = bs + OVL_COW_BLOCK < end ? bs + OVL_COW_BLOCK : end;
		bool whole = at == bs && (to == bs + OVL_COW_BLOCK || to == o->size);
		struct ovl_cow *c = cow_get(o, blk, whole, !buf);

		if (!c) {
			ret = -ENOMEM;
			break;
		}
		if (buf)
			memcpy(c->data + (at - bs), (const uint8_t *)buf + (at - off), to - at);
		else if (c->data)
			memset(c->data + (at - bs), 0, to - at);
		at = to;
	}
	pthread_rwlock_unlock(&o->lock);
	return ret ? ret : (ssize_t)len;
}

static int write_all(int fd, const uint8_t *buf, size_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* BASE into fd: copy_file_range (a reflink where the file system shares blocks), else read and write. */
static int copy_base(struct ovl *o, int fd)
{
	loff_t in = 0, out = 0;
	uint8_t *buf = NULL;
	uint64_t at;
	int ret = 0;

	while ((uint64_t)in < o->size) {
		ssize_t n = copy_file_range(o->base_fd, &in, fd, &out, o->size - (uint64_t)in, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
	}
	/* no copy_file_range here (or it stopped short): by hand */
	if ((uint64_t)in < o->size && !(buf = malloc(COPY_CHUNK)))
		return -ENOMEM;
	for (at = (uint64_t)in; at < o->size && !ret; at += COPY_CHUNK) {
		size_t len = clip(o, COPY_CHUNK, at);

		ret = (int)base_read(o, buf, len, at);
		if (!ret)
			ret = write_all(fd, buf, len, at);
	}
	free(buf);
	return ret;
}

static int write_zeros(int fd, uint64_t off, uint64_t len)
{
	static const uint8_t zeros[1 << 16];
	int ret = 0;

	if (!fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len))
		return 0;
	for (uint64_t at = off; at < off + len && !ret; at += sizeof(zeros)) {
		uint64_t n = off + len - at < sizeof(zeros) ? off + len - at : sizeof(zeros);

		ret = write_all(fd, zeros, n, at);
	}
	return ret;
}

static int extents_write(struct ovl_extents *t, int fd)
{
	struct ovl_extent *x;
	int ret = 0;

	RB_FOREACH(x, ovl_extents, t) {
		ret = x->src ? write_all(fd, x->src, x->end - x->start, x->start)
			     : write_zeros(fd, x->start, x->end - x->start);
		if (ret)
			break;
	}
	return ret;
}

int ovl_write_image(struct ovl *o, int fd)
{
	struct ovl_cow *c;
	int ret;

	if (ftruncate(fd, 0) || ftruncate(fd, (off_t)o->size))
		return -errno;
	ret = copy_base(o, fd);
	if (!ret && o->durable)
		ret = extents_write(&o->durable->extents, fd);
	if (!ret)
		ret = extents_write(&o->extents, fd);
	RB_FOREACH(c, ovl_cows, &o->cows) {
		size_t len = clip(o, OVL_COW_BLOCK, c->blk * OVL_COW_BLOCK);

		if (ret)
			break;
		ret = c->data ? write_all(fd, c->data, len, c->blk * OVL_COW_BLOCK)
			      : write_zeros(fd, c->blk * OVL_COW_BLOCK, len);
	}
	return ret;
}
