/* SPDX-License-Identifier: BSD-3-Clause */
/* fault_io.c - the fault filter's rules at work on I/O: errors, bad sectors, flakey, delays. */
#include <errno.h>
#include <stdatomic.h>
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

/*
 * A write clears the bad sectors it writes (the drive remapped them): once
 * the other rules have had their say, only those before the sectors that
 * fail, and none of a write that fails whole or is dropped, which reaches
 * no sector.
 */
static void fault_remap(struct blk_dev *dev, struct fault_rq *p, sector_t pos)
{
	struct fault_filter *ff = dev->priv;

	if (!ff->bb.nr || ff->r.sticky || !fault_is_write(p->rq->cmd_op) || p->act != FA_PASS ||
	    !p->fail_at || fault_bb_first(&ff->bb, pos, p->fail_at) == p->fail_at)
		return;
	if (!fault_bb_clear(&ff->bb, pos, pos + p->fail_at)) {
		ff->st.cleared_badblocks++;
		dev_trace_msg(dev, "bad sectors in %llu+%u cleared by a write",
			      (unsigned long long)pos, p->fail_at);
	}
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
		if (pos >= end || pos + p->total <= r->start)
			return;
		at = r->start > pos ? (unsigned int)(r->start - pos) : 0;
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

/* corrupt_bio_byte: the Nth byte of each bio, within the first bytes of the request. */
static void fault_corrupt_bios(const struct fault_rules *r, struct request *rq, uint64_t bytes)
{
	uint64_t at = 0, n = r->corrupt_bio_byte - 1;
	struct bio *bio;

	rq_for_each_bio(bio, rq)
	{
		if (n < bio->bi_size && at + n < bytes)
			fault_poke(rq, at + n, (int)r->corrupt_value, 0);
		at += bio->bi_size;
	}
}

/* One byte of the first bytes, at random, changed to another value. */
static void fault_corrupt_random(struct fault_filter *ff, struct request *rq, uint64_t bytes)
{
	uint64_t x = fault_rand(&ff->rng_corrupt);

	if (bytes)
		fault_poke(rq, (x >> 8) % bytes, -1, (unsigned int)(x & 0xff) | 1);
}

/* While flakey is down: what dm-flakey does with its features, or every request fails. */
static void fault_flakey(struct blk_dev *dev, struct fault_rq *p)
{
	struct fault_filter *ff = dev->priv;
	const struct fault_rules *r = &ff->r;
	enum req_op op = p->rq->cmd_op;
	bool any = r->error_reads || r->error_writes || r->drop_writes || r->corrupt_bio_byte ||
		   r->random_read_corrupt || r->random_write_corrupt;
	uint64_t bytes = (uint64_t)p->total << SECTOR_SHIFT;

	if (!any || (r->error_reads && op == REQ_OP_READ) ||
	    (r->error_writes && fault_is_write(op))) {
		if (fault_fail(p, 0, EIO))
			ff->st.flakey_errors++;
		return;
	}
	if (p->fails)
		return; /* failing already: nothing of it is written or read */
	if (r->drop_writes && fault_is_write(op)) {
		p->act = FA_DROP;
		ff->st.dropped_writes++;
		dev_dropped_write(dev);
		return;
	}
	if (op == REQ_OP_WRITE) {
		bool byte = r->corrupt_bio_byte && (r->corrupt_on & FAULT_OP(REQ_OP_WRITE));
		bool rnd = fault_chance(&ff->rng_corrupt, r->random_write_corrupt);

		if (byte)
			fault_corrupt_bios(r, p->rq, bytes);
		if (rnd)
			fault_corrupt_random(ff, p->rq, bytes);
		ff->st.corrupted += byte || rnd;
	} else if (op == REQ_OP_READ) {
		p->corrupt_byte = r->corrupt_bio_byte && (r->corrupt_on & FAULT_OP(REQ_OP_READ));
		p->corrupt_random = fault_chance(&ff->rng_corrupt, r->random_read_corrupt);
	}
}

static uint64_t fault_delay(struct fault_filter *ff, enum req_op op)
{
	uint64_t ms = op == REQ_OP_READ ? ff->r.delay_read_ms : ff->r.delay_write_ms;

	if (ms)
		ff->st.delayed++;
	if (ff->r.spike_ms && fault_chance(&ff->rng_spike, ff->r.spike_prob)) {
		ms += ff->r.spike_ms;
		ff->st.spikes++;
	}
	return ms * NSEC_PER_MS;
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
	p->total = p->fail_at = blk_rq_sectors(rq);
	p->act = FA_PASS;
	fault_badblocks(dev, p, pos);
	fault_error_rule(dev, p, pos);
	if (fault_down(dev, now))
		fault_flakey(dev, p);
	if (p->fails && p->fail_at == 0)
		p->act = FA_FAIL;
	fault_remap(dev, p, pos);
	p->due = now + fault_delay(ff, rq->cmd_op);
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
		fault_corrupt_bios(&ff->r, p->rq, bytes);
	if (p->corrupt_random)
		fault_corrupt_random(ff, p->rq, bytes);
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
