/* SPDX-License-Identifier: BSD-3-Clause */
/* log_writes_io.c - the log-writes filter's I/O: what each request below logs, and when. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "log_writes_impl.h"

bool lw_can_take(struct blk_dev *dev)
{
	struct lw_filter *lw = dev->priv;
	bool room;

	pthread_mutex_lock(&lw->lock);
	room = lw->queued + lw->held_bytes <= LW_QUEUE_MAX;
	if (!room)
		lw->starved = true;
	pthread_mutex_unlock(&lw->lock);
	return room && dev_can_take(dev->lower);
}

/*
 * b completed now: into the log, or held while a flush is in flight (the
 * flush's FLUSH entry must come first: it does not cover b).
 */
static void lw_place(struct lw_filter *lw, struct lw_block *b)
{
	bool fua;

	b->seq = lw->completed++;
	if (!TAILQ_EMPTY(&lw->flushes)) {
		TAILQ_INSERT_TAIL(&lw->held, b, link);
		lw->held_bytes += b->len;
		return;
	}
	fua = lw_flags(b) & LOG_FUA_FLAG;
	lw_log(lw, b); /* b is the writer's from here on */
	if (fua)
		lw_log_super(lw); /* durable now: a log cut short holds it */
}

static void lw_partial_del(struct lw_filter *lw, struct lw_rq *p)
{
	if (!p->partial)
		return;
	TAILQ_REMOVE(&lw->partial, p, plink);
	p->partial = false;
}

/* An entry like b's (its flags, data or zeros or none) for nr sectors from sector. */
static struct lw_block *lw_like(struct lw_filter *lw, const struct lw_block *b, sector_t sector,
				unsigned int nr)
{
	uint64_t shift = lw->ss >> SECTOR_SHIFT, flags = lw_flags(b);
	bool data = !b->zeros && !(flags & LOG_DISCARD_FLAG);
	struct lw_block *n = lw_block_new(lw, sector / shift, nr / shift, flags, 0,
					  data ? nr / shift : 0);

	if (n && b->zeros)
		n->zeros = (uint64_t)nr << SECTOR_SHIFT;
	return n;
}

/*
 * A flush is issued while p's write has ended only a part below: that part
 * reached the disk, and went up, before the flush was issued, so the flush
 * covers it.  It becomes an entry of its own, completed now (ahead of the
 * flush's FLUSH entry); the rest stays the write's entry, from there on.
 */
static void lw_seal_part(struct lw_filter *lw, struct lw_rq *p)
{
	unsigned int shift = lw->ss >> SECTOR_SHIFT, sealed = p->good / shift * shift;
	struct lw_block *part, *rest;

	if (!sealed)
		return;
	part = lw_like(lw, p->blk, p->start, sealed);
	rest = lw_like(lw, p->blk, p->start + sealed, p->total - sealed);
	if (!part || !rest) {
		free(part);
		free(rest);
		lw_out_of_memory(lw);
		return;
	}
	if (part->len > lw->ss) { /* a write's data: what ended of it, split */
		memcpy(part->data + lw->ss, p->blk->data + lw->ss, (size_t)sealed << SECTOR_SHIFT);
		memcpy(rest->data + lw->ss, p->blk->data + lw->ss + ((size_t)sealed << SECTOR_SHIFT),
		       (size_t)(p->good - sealed) << SECTOR_SHIFT);
	}
	free(p->blk);
	p->blk = rest;
	p->start += sealed;
	p->total -= sealed;
	p->done -= sealed;
	p->good -= sealed;
	lw_place(lw, part);
}

/* Every write ended in part so far: its part is the flush's, about to be issued. */
static void lw_seal_parts(struct lw_filter *lw)
{
	struct lw_rq *p, *next;

	for (p = TAILQ_FIRST(&lw->partial); p; p = next) {
		next = TAILQ_NEXT(p, plink);
		lw_seal_part(lw, p);
		if (!p->blk || p->good < (lw->ss >> SECTOR_SHIFT)) /* nothing more to seal */
			lw_partial_del(lw, p);
	}
}

void lw_submit(struct blk_dev *dev, struct request *rq)
{
	struct lw_filter *lw = dev->priv;
	struct lw_rq *p = dev_rq_pdu(dev, rq);

	p->start = blk_rq_pos(rq);
	p->total = blk_rq_sectors(rq);
	p->logging = lw->enabled && !lw->stopped;
	p->unlogged = false;
	p->partial = false;
	if (rq->cmd_op == REQ_OP_FLUSH && p->logging) {
		/* the flush covers what completed before it was issued, no more */
		lw_seal_parts(lw);
		p->covers = lw->completed;
		TAILQ_INSERT_TAIL(&lw->flushes, p, link);
	} else if (op_is_write(rq->cmd_op) && p->total && !lw->enabled) {
		/* it may end once logging is on again: the gap lasts until it has */
		p->unlogged = true;
		lw->unlogged++;
	}
	dev_submit(dev->lower, rq);
}

/* n sectors of the request's data from sector skip past its completion position, into dst. */
static void lw_copy_data(const struct request *rq, size_t skip, size_t n, unsigned char *dst)
{
	size_t off = skip << SECTOR_SHIFT, want = n << SECTOR_SHIFT;
	const struct bio *bio;

	rq_for_each_bio(bio, rq) {
		off += bio == rq->bio ? bio->bi_done : 0;
		for (unsigned short i = 0; i < bio->bi_vcnt && want; i++) {
			const struct bio_vec *v = &bio->bi_io_vec[i];
			size_t take;

			if (off >= v->bv_len) {
				off -= v->bv_len;
				continue;
			}
			take = v->bv_len - off < want ? v->bv_len - off : want;
			memcpy(dst, (const char *)v->bv_base + off, take);
			dst += take;
			want -= take;
			off = 0;
		}
		if (!want)
			return;
	}
}

/* A write's entry, with room for all its data, at its first good part. */
static struct lw_block *lw_write_block(struct lw_filter *lw, const struct request *rq,
				       const struct lw_rq *p)
{
	uint64_t shift = lw->ss >> SECTOR_SHIFT;
	uint64_t flags = rq->cmd_flags & REQ_FUA ? LOG_FUA_FLAG : 0;
	struct lw_block *b;

	if (rq->cmd_op == REQ_OP_DISCARD)
		return lw_block_new(lw, p->start / shift, p->total / shift,
				    flags | LOG_DISCARD_FLAG, 0, 0);
	if (rq->cmd_op == REQ_OP_WRITE_ZEROES) {
		/* a write of zeros, up to 4 GiB in one request: the zeros are the writer's */
		b = lw_block_new(lw, p->start / shift, p->total / shift, flags, 0, 0);
		if (b)
			b->zeros = (uint64_t)p->total << SECTOR_SHIFT;
		return b;
	}
	/* a write's data_len is 0, as dm-log-writes has it: the data is the blocks that follow */
	return lw_block_new(lw, p->start / shift, p->total / shift, flags, 0, p->total / shift);
}

/*
 * The write is over below (all ended, or an error ended the good part):
 * its entry goes into the log now, or is held while a flush is in flight
 * (the flush's FLUSH entry must come first: it does not cover this write).
 * An error after a good prefix: the prefix is logged, in whole blocks, as
 * what reached the disk; the failed part is not (dm-log-writes logs a
 * failed write whole; replaying one that never reached the disk would
 * make an image that never was).
 */
static void lw_write_done(struct lw_filter *lw, struct request *rq, struct lw_rq *p)
{
	struct lw_block *b = p->blk;
	uint64_t blocks = p->good / (lw->ss >> SECTOR_SHIFT);

	lw_partial_del(lw, p);
	p->blk = NULL;
	if (!b)
		return;
	if (blocks < p->total / (lw->ss >> SECTOR_SHIFT)) {
		struct log_write_entry e;

		lw->n.not_logged++;
		if (!blocks) {
			free(b);
			return;
		}
		log_write_entry_decode(b->data, &e);
		e.nr_sectors = blocks;
		log_write_entry_encode(b->data, &e);
		if (b->zeros)
			b->zeros = blocks * lw->ss;
		else if (!(lw_flags(b) & LOG_DISCARD_FLAG))
			b->len = (size_t)(1 + blocks) * lw->ss;
	}
	if (rq->cmd_op == REQ_OP_WRITE_ZEROES)
		lw->n.zeroes++;
	lw_place(lw, b);
}

/* Writes logged so far may be lost below: said once, however many tell of it at once. */
static void lw_mark_maybe_lost(struct lw_filter *lw)
{
	if (lw->lost_marked && lw->lost_marked == lw->nr_entries)
		return;
	if (!lw_log_mark(lw, LOG_WRITES_FLUSH_FAILED_MARK))
		lw->lost_marked = lw->nr_entries;
}

/*
 * A flush completed: the writes it covers that are still held go into the
 * log, then its FLUSH entry, then what no flush still in flight covers.
 * A failed flush made nothing durable, and may have lost what it covered
 * (a server that lost its cache as its connection dropped fails the
 * flushes after): no FLUSH entry, but a mark, so that a later flush's
 * FLUSH entry does not call those writes durable unsaid.
 */
static void lw_flush_done(struct lw_filter *lw, struct lw_rq *p, int error)
{
	struct lw_block *b = NULL;

	TAILQ_REMOVE(&lw->flushes, p, link);
	lw_log_held_before(lw, p->covers);
	if (!error) {
		b = lw_block_new(lw, 0, 0, LOG_FLUSH_FLAG, 0, 0);
		if (b)
			lw_log(lw, b);
		else
			lw_out_of_memory(lw);
	} else {
		lw_mark_maybe_lost(lw);
	}
	lw_log_released(lw);
	lw_log_super(lw);
}

/*
 * The last write submitted with logging off has ended: if logging is on
 * again, the gap ends here, after every write it may have missed.
 */
static void lw_unlogged_done(struct lw_filter *lw, struct lw_rq *p)
{
	p->unlogged = false;
	if (--lw->unlogged || !lw->owe_enabled)
		return;
	lw->owe_enabled = false;
	lw_log_mark(lw, LOG_WRITES_GAP_END_MARK);
}

/*
 * The data is copied here, as each part ends below and before it goes up:
 * the queue may give the memory back once the part is ended above.
 */
void lw_end(struct blk_dev *dev, struct request *rq, int error, unsigned int nr_sectors)
{
	struct lw_filter *lw = dev->priv;
	struct lw_rq *p = dev_rq_pdu(dev, rq);
	unsigned int n = nr_sectors < p->total - p->done ? nr_sectors : p->total - p->done;
	bool log = p->logging && lw->enabled && !lw->stopped;

	/*
	 * A layer below lost writes it had ended (a server gone with writes no
	 * flush covered): whoever hears of it first (a flush, a FUA write, a
	 * write), the log says so before any later FLUSH entry can call them
	 * durable, as after a failed flush.
	 */
	if (log && lw_losses_below(dev) != lw->lost_seen) {
		lw->lost_seen = lw_losses_below(dev);
		lw_mark_maybe_lost(lw);
	}
	if (rq->cmd_op == REQ_OP_FLUSH) {
		if (p->logging && log)
			lw_flush_done(lw, p, error);
		else if (p->logging) /* turned off since: what it covered is logged already */
			TAILQ_REMOVE(&lw->flushes, p, link);
		dev_end(dev, rq, error, nr_sectors);
		return;
	}
	if (rq->cmd_op == REQ_OP_READ) {
		dev_end(dev, rq, error, nr_sectors);
		return;
	}
	if (!log) {
		lw_partial_del(lw, p);
		free(p->blk); /* logging stopped or turned off while it was below */
		p->blk = NULL;
		p->done += n;
		if (!p->unlogged && !lw->stopped && !error && p->done < p->total) {
			p->unlogged = true; /* the rest may end with logging on again */
			lw->unlogged++;
		}
		goto out;
	}
	if (error && p->good == p->done && !p->blk && n)
		lw->n.not_logged++; /* failed from its first sector: nothing to log */
	if (!error && p->good == p->done && n) {
		if (!p->blk && !p->done)
			p->blk = lw_write_block(lw, rq, p);
		if (!p->blk && !p->done)
			lw_out_of_memory(lw);
		else if (p->blk && rq->cmd_op == REQ_OP_WRITE) /* zeroes: the writer's */
			lw_copy_data(rq, p->start + p->done - blk_rq_pos(rq), n,
				     p->blk->data + lw->ss + ((size_t)p->done << SECTOR_SHIFT));
		p->good += n;
	}
	p->done += n;
	if (p->blk && (error || p->done == p->total)) {
		lw_write_done(lw, rq, p);
	} else if (p->blk && !p->partial && p->good >= (lw->ss >> SECTOR_SHIFT)) {
		TAILQ_INSERT_TAIL(&lw->partial, p, plink); /* a flush issued now covers the part */
		p->partial = true;
	}
out:
	if (p->unlogged && (error || p->done == p->total))
		lw_unlogged_done(lw, p);
	dev_end(dev, rq, error, nr_sectors);
}
