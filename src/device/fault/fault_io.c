/* SPDX-License-Identifier: BSD-3-Clause */
/* fault_io.c - the fault filter's rules at work on I/O: errors, bad sectors, flakey, delays. */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "fault_impl.h"

/* splitmix64: small, seedable, the same sequence everywhere. */
static uint64_t fault_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static bool fault_chance(uint64_t *s, uint32_t ppm)
{
	if (ppm >= FAULT_PPM)
		return true;
	return ppm && fault_rand(s) % FAULT_PPM < ppm;
}

bool fault_can_take(struct blk_dev *dev)
{
	struct fault_filter *ff = dev->priv;

	return ff->nr_held + ff->nr_below < dev_depth(dev) &&
	       (ff->nr_held || dev_can_take(dev->lower));
}

static bool fault_is_write(enum req_op op)
{
	return op == REQ_OP_WRITE || op == REQ_OP_WRITE_ZEROES || op == REQ_OP_DISCARD;
}

/* The request fails from sector at on, with err, unless something fails it earlier. */
static bool fault_fail(struct fault_rq *p, unsigned int at, int err)
{
	if (p->fails && at >= p->fail_at)
		return false;
	p->fails = true;
	p->fail_at = at;
	p->err = -err;
	return true;
}

/* Reads fail at a bad sector, and writes too when sticky (others clear them: fault_remap). */
static void fault_badblocks(struct blk_dev *dev, struct fault_rq *p, sector_t pos)
{
	struct fault_filter *ff = dev->priv;
	enum req_op op = p->rq->cmd_op;
	unsigned int at;

	if (!ff->bb.nr || !p->total || (op != REQ_OP_READ && !fault_is_write(op)))
		return;
	if (op != REQ_OP_READ && !ff->r.sticky)
		return;
	at = fault_bb_first(&ff->bb, pos, p->total);
	if (at < p->total && fault_fail(p, at, EIO)) {
		ff->st.badblock_errors++;
		dev_trace_msg(dev, "bad sector %llu: EIO", (unsigned long long)(pos + at));
	}
}

/* Sectors [pos, pos + n) written: the bad ones among them are good again. */
static void fault_remap_range(struct blk_dev *dev, sector_t pos, unsigned int n)
{
	struct fault_filter *ff = dev->priv;

	if (!n || fault_bb_first(&ff->bb, pos, n) == n)
		return;
	if (!sector_ranges_clear(&ff->bb, pos, pos + n)) {
		ff->st.cleared_badblocks++;
		dev_trace_msg(dev, "bad sectors in %llu+%u cleared by a write",
			      (unsigned long long)pos, n);
	}
}

/*
 * A write clears the bad sectors it writes (the drive remapped them): once
 * the other rules have had their say, only those before the sectors that
 * fail, and none of a write that fails whole or is dropped, which reaches
 * no sector; of one dropped in part, those outside the aim.
 */
static void fault_remap(struct blk_dev *dev, struct fault_rq *p, sector_t pos)
{
	struct fault_filter *ff = dev->priv;
	const struct sector_ranges *a = &ff->r.sectors;

	if (!ff->bb.nr || ff->r.sticky || !fault_is_write(p->rq->cmd_op))
		return;
	if (p->act == FA_PASS)
		fault_remap_range(dev, pos, p->fail_at);
	for (unsigned int off = 0; p->act == FA_PART && off < p->total;) {
		unsigned int clear = fault_bb_first(a, pos + off, p->total - off);

		fault_remap_range(dev, pos + off, clear);
		off += clear;
		off += fault_bb_first_clear(a, pos + off, p->total - off);
	}
}

/*
 * Whether the rules touch [pos, pos + n): at the offset of its first aimed
 * sector in *at.  Not aimed: every request, from its first sector; aimed:
 * those that reach an aimed sector, never a flush (no sectors).
 */
static bool fault_aimed(const struct fault_filter *ff, sector_t pos, unsigned int n,
			unsigned int *at)
{
	*at = 0;
	if (!ff->r.sectors.nr)
		return true;
	if (!n)
		return false;
	*at = fault_bb_first(&ff->r.sectors, pos, n);
	return *at < n;
}

/* The error rule: whether it is on now, and whether this request matches it. */
static void fault_error_rule(struct blk_dev *dev, struct fault_rq *p, sector_t pos)
{
	struct fault_filter *ff = dev->priv;
	const struct fault_rules *r = &ff->r;
	sector_t end = r->end ? r->end : ff->capacity;
	unsigned int at = 0;

	if (!r->ops || !r->enable || !(r->ops & FAULT_OP(p->rq->cmd_op)))
		return;
	if (r->error_file && (!ff->w || !atomic_load(&ff->w->exists)))
		return;
	if (p->total) {
		sector_t lo = pos > r->start ? pos : r->start;
		sector_t hi = pos + p->total < end ? pos + p->total : end;

		if (lo >= hi || !fault_aimed(ff, lo, (unsigned int)(hi - lo), &at))
			return;
		at += (unsigned int)(lo - pos);
	} else if (!fault_aimed(ff, pos, 0, &at)) {
		return;
	}
	if (++ff->matched % r->interval)
		return;
	if (!fault_chance(&ff->rng_err, r->prob))
		return;
	if (r->times && ff->fired >= r->times)
		return;
	if (fault_fail(p, at, r->err)) { /* times counts what the rule fails, not a bad sector */
		ff->fired++;
		ff->st.errors++;
		dev_trace_msg(dev, "error %s at %llu", fault_errno_name(r->err),
			      (unsigned long long)(pos + at));
	}
}

static bool fault_down(struct blk_dev *dev, uint64_t now)
{
	struct fault_filter *ff = dev->priv;
	uint64_t up = ff->r.up_ms * NSEC_PER_MS, period = up + ff->r.down_ms * NSEC_PER_MS;
	bool down = ff->r.down_ms && (now - ff->epoch) % period >= up;

	if ((int)down != ff->was_down) {
		if (ff->was_down >= 0)
			dev_trace_msg(dev, "flakey %s", down ? "down" : "up");
		ff->was_down = down;
	}
	return down;
}

/* Set the byte at off of the request's data (from its first bio) to v, or xor it with x. */
static void fault_poke(struct request *rq, uint64_t off, int v, unsigned int x)
{
	struct bio *bio;

	rq_for_each_bio(bio, rq)
	{
		for (unsigned short i = 0; i < bio->bi_vcnt; i++) {
			struct bio_vec *bv = &bio->bi_io_vec[i];
			unsigned char *b = bv->bv_base;

			if (off < bv->bv_len) {
				b[off] = v >= 0 ? (unsigned char)v : (unsigned char)(b[off] ^ x);
				return;
			}
			off -= bv->bv_len;
		}
	}
}

/* Whether the byte at off of the request lies in an aimed sector (every byte when not aimed). */
static bool fault_byte_aimed(const struct fault_filter *ff, sector_t pos, uint64_t off)
{
	unsigned int at;

	return fault_aimed(ff, pos + (off >> SECTOR_SHIFT), 1, &at);
}

/* corrupt_bio_byte: the Nth byte of each bio, within the first bytes of the request, if aimed. */
static void fault_corrupt_bios(const struct fault_filter *ff, struct fault_rq *p, uint64_t bytes)
{
	struct request *rq = p->rq;
	const struct fault_rules *r = &ff->r;
	uint64_t at = 0, n = r->corrupt_bio_byte - 1;
	struct bio *bio;

	rq_for_each_bio(bio, rq)
	{
		if (n < bio->bi_size && at + n < bytes && fault_byte_aimed(ff, p->pos, at + n))
			fault_poke(rq, at + n, (int)r->corrupt_value, 0);
		at += bio->bi_size;
	}
}

/* The index of the first range of a holding pos or after it; a->nr for none. */
static size_t fault_first_range(const struct sector_ranges *a, sector_t pos)
{
	const struct sector_range *r = sector_ranges_next(a, pos);

	return r ? (size_t)(r - a->r) : a->nr;
}

/*
 * The offset of the kth aimed byte among the first bytes of the request
 * (k below their number, fault_aimed_bytes).
 */
static uint64_t fault_aimed_byte(const struct fault_filter *ff, sector_t pos, uint64_t bytes,
				 uint64_t k)
{
	const struct sector_ranges *a = &ff->r.sectors;
	sector_t end = pos + (bytes >> SECTOR_SHIFT);

	/* from the first range reaching pos: the ones before it end before the request */
	for (size_t i = fault_first_range(a, pos); i < a->nr && a->r[i].start < end; i++) {
		sector_t s = a->r[i].start > pos ? a->r[i].start : pos;
		sector_t e = a->r[i].end < end ? a->r[i].end : end;
		uint64_t n = s < e ? (uint64_t)(e - s) << SECTOR_SHIFT : 0;

		if (k < n)
			return ((uint64_t)(s - pos) << SECTOR_SHIFT) + k;
		k -= n;
	}
	return 0; /* not reached */
}

/* How many of the first bytes of the request lie in aimed sectors. */
static uint64_t fault_aimed_bytes(const struct fault_filter *ff, sector_t pos, uint64_t bytes)
{
	const struct sector_ranges *a = &ff->r.sectors;
	sector_t end = pos + (bytes >> SECTOR_SHIFT);
	uint64_t n = 0;

	for (size_t i = fault_first_range(a, pos); i < a->nr && a->r[i].start < end; i++) {
		sector_t s = a->r[i].start > pos ? a->r[i].start : pos;
		sector_t e = a->r[i].end < end ? a->r[i].end : end;

		n += s < e ? (uint64_t)(e - s) << SECTOR_SHIFT : 0;
	}
	return n;
}

/* One byte of the first bytes (of those aimed at), at random, changed to another value. */
static void fault_corrupt_random(struct fault_filter *ff, struct fault_rq *p, uint64_t bytes)
{
	struct request *rq = p->rq;
	uint64_t x = fault_rand(&ff->rng_corrupt), n;

	if (!ff->r.sectors.nr) {
		if (bytes)
			fault_poke(rq, (x >> 8) % bytes, -1, (unsigned int)(x & 0xff) | 1);
		return;
	}
	n = fault_aimed_bytes(ff, p->pos, bytes);
	if (n)
		fault_poke(rq, fault_aimed_byte(ff, p->pos, bytes, (x >> 8) % n), -1,
			   (unsigned int)(x & 0xff) | 1);
}

/*
 * While flakey is down: what dm-flakey does with its features, or every
 * request fails; aimed, only requests that reach the aimed sectors: an
 * error from the first of them on, a write dropped in its aimed sectors
 * alone (FA_PART), corruption in aimed bytes only.
 */
static void fault_flakey(struct blk_dev *dev, struct fault_rq *p, sector_t pos)
{
	struct fault_filter *ff = dev->priv;
	const struct fault_rules *r = &ff->r;
	enum req_op op = p->rq->cmd_op;
	bool any = r->error_reads || r->error_writes || r->drop_writes || r->corrupt_bio_byte ||
		   r->random_read_corrupt || r->random_write_corrupt;
	uint64_t bytes = (uint64_t)p->total << SECTOR_SHIFT;
	unsigned int at;

	if (!fault_aimed(ff, pos, p->total, &at))
		return;
	if (!any || (r->error_reads && op == REQ_OP_READ) ||
	    (r->error_writes && fault_is_write(op))) {
		if (fault_fail(p, at, EIO))
			ff->st.flakey_errors++;
		return;
	}
	if (p->fails)
		return; /* failing already: nothing of it is written or read */
	if (r->drop_writes && fault_is_write(op)) {
		bool part = at || fault_bb_first_clear(&r->sectors, pos, p->total) < p->total;

		/* aimed in part: its sectors outside the aim are written, as a split bio's */
		p->act = r->sectors.nr && part ? FA_PART : FA_DROP;
		ff->st.dropped_writes++;
		dev_dropped_write(dev);
		return;
	}
	if (op == REQ_OP_WRITE) {
		bool byte = r->corrupt_bio_byte && (r->corrupt_on & FAULT_OP(REQ_OP_WRITE));
		bool rnd = fault_chance(&ff->rng_corrupt, r->random_write_corrupt);

		if (byte)
			fault_corrupt_bios(ff, p, bytes);
		if (rnd)
			fault_corrupt_random(ff, p, bytes);
		ff->st.corrupted += byte || rnd;
	} else if (op == REQ_OP_READ) {
		p->corrupt_byte = r->corrupt_bio_byte && (r->corrupt_on & FAULT_OP(REQ_OP_READ));
		p->corrupt_random = fault_chance(&ff->rng_corrupt, r->random_read_corrupt);
	}
}

/* How long the request waits: aimed, only one that reaches the aimed sectors. */
static uint64_t fault_delay(struct fault_filter *ff, struct fault_rq *p, sector_t pos)
{
	enum req_op op = p->rq->cmd_op;
	uint64_t ms = op == REQ_OP_READ ? ff->r.delay_read_ms : ff->r.delay_write_ms;
	unsigned int at;

	if (!fault_aimed(ff, pos, p->total, &at))
		return 0;

	if (ms)
		ff->st.delayed++;
	if (ff->r.spike_ms && fault_chance(&ff->rng_spike, ff->r.spike_prob)) {
		ms += ff->r.spike_ms;
		ff->st.spikes++;
	}
	return ms * NSEC_PER_MS;
}

static void fault_release(struct blk_dev *dev, uint64_t now);

/* len bytes of the request's data from byte off on, into buf. */
static void fault_copy_out(struct request *rq, uint64_t off, unsigned char *buf, uint64_t len)
{
	struct bio *bio;

	rq_for_each_bio(bio, rq)
	{
		for (unsigned short i = 0; i < bio->bi_vcnt && len; i++) {
			struct bio_vec *bv = &bio->bi_io_vec[i];
			size_t n;

			if (off >= bv->bv_len) {
				off -= bv->bv_len;
				continue;
			}
			n = bv->bv_len - off < len ? bv->bv_len - off : len;
			memcpy(buf, (unsigned char *)bv->bv_base + off, n);
			buf += n;
			len -= n;
			off = 0;
		}
	}
}

/* Sectors [off, off + n) of p, a copy of their data in a request of the layer's own. */
static struct fault_rq *fault_piece(struct blk_dev *dev, struct fault_rq *p, unsigned int off,
				    unsigned int n)
{
	enum req_op op = p->rq->cmd_op;
	uint64_t bytes = (uint64_t)n << SECTOR_SHIFT;
	struct request *rq;
	struct fault_rq *q;
	void *buf = NULL;

	if (op_has_data(op)) {
		buf = malloc(bytes);
		if (!buf)
			return NULL;
		fault_copy_out(p->rq, (uint64_t)off << SECTOR_SHIFT, buf, bytes);
	}
	rq = dev_alloc_request(dev, op, p->rq->cmd_flags & (REQ_FUA | REQ_SYNC), p->pos + off, buf,
			       (unsigned int)bytes);
	if (!rq) {
		free(buf);
		return NULL;
	}
	q = dev_rq_pdu(dev, rq);
	*q = (struct fault_rq){
	    .rq = rq, .pos = p->pos + off, .total = n, .fail_at = n, .parent = p, .buf = buf};
	return q;
}

static void fault_piece_free(struct fault_rq *q)
{
	void *buf = q->buf;

	dev_free_request(q->rq); /* q with it: it lies in the request's pdu */
	free(buf);
}

/*
 * A write dropped in part: a piece for each run of its sectors outside
 * the aim, in p->unsent.  false: no memory, and no piece kept.
 */
static bool fault_split_dropped(struct blk_dev *dev, struct fault_rq *p)
{
	const struct sector_ranges *a = &((struct fault_filter *)dev->priv)->r.sectors;
	struct fault_rq **tail = &p->unsent, *q;
	unsigned int off = 0;

	while (off < p->total) {
		unsigned int clear = fault_bb_first(a, p->pos + off, p->total - off);

		if (clear) {
			q = fault_piece(dev, p, off, clear);
			if (!q)
				goto fail;
			*tail = q;
			tail = &q->next;
			p->pieces++;
		}
		off += clear;
		off += fault_bb_first_clear(a, p->pos + off, p->total - off);
	}
	return true;
fail:
	while ((q = p->unsent)) {
		p->unsent = q->next;
		fault_piece_free(q);
	}
	p->pieces = 0;
	return false;
}

/*
 * Send p's pieces down while the layer below takes them; true once all
 * are.  p leaves the held list, counted below, before its last piece
 * goes: that one may end at once.
 */
static bool fault_send_pieces(struct blk_dev *dev, struct fault_rq *p)
{
	struct fault_filter *ff = dev->priv;
	struct fault_rq *q;

	while ((q = p->unsent)) {
		if (!dev_can_take(dev->lower))
			return false;
		p->unsent = q->next;
		if (!p->unsent) {
			TAILQ_REMOVE(&ff->held, p, link);
			ff->nr_held--;
			ff->nr_below++;
		}
		dev_submit(dev->lower, q->rq);
	}
	return true;
}

/* A piece ended n sectors: p ends, as a whole, once its pieces all have (a write fails whole). */
static void fault_piece_end(struct blk_dev *dev, struct fault_rq *q, int error, unsigned int n)
{
	struct fault_filter *ff = dev->priv;
	struct fault_rq *p = q->parent;

	if (error && !p->piece_err)
		p->piece_err = error;
	q->done += n < q->total - q->done ? n : q->total - q->done;
	if (q->done < q->total)
		return;
	fault_piece_free(q);
	if (!--p->pieces && !p->unsent) {
		ff->nr_below--;
		dev_end(dev, p->rq, p->piece_err, p->total);
	}
	if (TAILQ_FIRST(&ff->held)) /* room below: what waits for it may go */
		fault_release(dev, dev_now(dev));
}

/* Into the held list, in due order (equal dues in arrival order). */
static void fault_hold(struct blk_dev *dev, struct fault_rq *p)
{
	struct fault_filter *ff = dev->priv;
	struct fault_rq *o;

	TAILQ_FOREACH_REVERSE(o, &ff->held, fault_list, link)
	if (o->due <= p->due)
		break;
	if (o)
		TAILQ_INSERT_AFTER(&ff->held, o, p, link);
	else
		TAILQ_INSERT_HEAD(&ff->held, p, link);
	ff->nr_held++;
	if (!dev->timer_at || p->due < dev->timer_at)
		dev_set_timer(dev, p->due);
}

static void fault_down_submit(struct blk_dev *dev, struct fault_rq *p)
{
	struct fault_filter *ff = dev->priv;

	ff->nr_below++;
	dev_submit(dev->lower, p->rq);
}

void fault_submit(struct blk_dev *dev, struct request *rq)
{
	struct fault_filter *ff = dev->priv;
	struct fault_rq *p = dev_rq_pdu(dev, rq);
	uint64_t now = dev_now(dev);
	sector_t pos = blk_rq_pos(rq);

	p->rq = rq;
	p->pos = pos;
	p->unsent = p->next = p->parent = NULL;
	p->pieces = 0;
	p->piece_err = 0;
	p->buf = NULL;
	p->total = p->fail_at = blk_rq_sectors(rq);
	p->act = FA_PASS;
	fault_badblocks(dev, p, pos);
	fault_error_rule(dev, p, pos);
	if (fault_down(dev, now))
		fault_flakey(dev, p, pos);
	if (p->fails && p->fail_at == 0)
		p->act = FA_FAIL;
	fault_remap(dev, p, pos);
	if (p->act == FA_PART && !fault_split_dropped(dev, p)) {
		p->act = FA_FAIL;
		p->err = -ENOMEM;
	}
	p->due = now + fault_delay(ff, p, pos);
	if (p->act == FA_PASS && p->due <= now && TAILQ_EMPTY(&ff->held))
		fault_down_submit(dev, p);
	else
		fault_hold(dev, p);
}

/* What is due: ended here (failed, dropped), or sent down while the layer below takes it. */
static void fault_release(struct blk_dev *dev, uint64_t now)
{
	struct fault_filter *ff = dev->priv;
	struct fault_rq *p;

	while ((p = TAILQ_FIRST(&ff->held)) && p->due <= now) {
		if (p->act == FA_PART) {
			if (!fault_send_pieces(dev, p))
				break;
			continue;
		}
		if (p->act == FA_PASS && !dev_can_take(dev->lower))
			break;
		TAILQ_REMOVE(&ff->held, p, link);
		ff->nr_held--;
		if (p->act == FA_PASS)
			fault_down_submit(dev, p);
		else
			dev_end(dev, p->rq, p->act == FA_FAIL ? p->err : 0, p->total);
	}
	p = TAILQ_FIRST(&ff->held);
	if (!p)
		dev_set_timer(dev, 0);
	else if (p->due > now)
		dev_set_timer(dev, p->due);
	else if (ff->nr_below)
		dev_set_timer(dev, 0); /* due but not taken: the next end below brings it */
	else
		dev_set_timer(dev, now + NSEC_PER_MS / 10);
}

void fault_timer(struct blk_dev *dev, uint64_t now)
{
	fault_release(dev, now);
}

/* A read's good sectors, corrupted as its rules say, passed up at once. */
static void fault_pass_corrupted(struct blk_dev *dev, struct fault_rq *p)
{
	struct fault_filter *ff = dev->priv;
	unsigned int good = p->held_good;
	uint64_t bytes = (uint64_t)good << SECTOR_SHIFT;

	if (p->corrupt_byte)
		fault_corrupt_bios(ff, p, bytes);
	if (p->corrupt_random)
		fault_corrupt_random(ff, p, bytes);
	ff->st.corrupted++;
	p->corrupt_byte = p->corrupt_random = false;
	p->held_good = 0;
	if (good) /* the last end of the request frees it, p with it */
		dev_end(dev, p->rq, 0, good);
}

/*
 * Sectors [from, from + n) of the request ended below with error: those
 * before fail_at go up with it, the rest with the rule's error.  A read to
 * corrupt is held until it has all ended, or fails, so that its data is
 * changed in place before anyone above sees it.
 */
void fault_end(struct blk_dev *dev, struct request *rq, int error, unsigned int n)
{
	struct fault_filter *ff = dev->priv;
	struct fault_rq *p = dev_rq_pdu(dev, rq);
	unsigned int from = p->done, good;
	bool last;

	if (p->parent) {
		fault_piece_end(dev, p, error, n);
		return;
	}
	p->done += n < p->total - p->done ? n : p->total - p->done;
	last = p->done == p->total;
	if (last)
		ff->nr_below--;
	if (p->corrupt_byte || p->corrupt_random) {
		if (!error)
			p->held_good += n;
		if (error || last)
			fault_pass_corrupted(dev, p);
		if (error)
			dev_end(dev, rq, error, n);
	} else {
		good = from < p->fail_at ? p->fail_at - from : 0;
		if (good > n)
			good = n;
		if (good || !n)
			dev_end(dev, rq, error, good);
		if (n > good)
			dev_end(dev, rq, error ? error : p->err, n - good);
	}
	if (last && TAILQ_FIRST(&ff->held))
		fault_release(dev, dev_now(dev));
}
