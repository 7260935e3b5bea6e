/* SPDX-License-Identifier: BSD-3-Clause */
/* log_writes_entries.c - the log-writes filter's entries: made, put in log order, counted. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "log_writes_impl.h"

/* A block of one entry and nr_blocks of data, the entry filled in, all else zero. */
struct lw_block *lw_block_new(struct lw_filter *lw, uint64_t sector, uint64_t nr, uint64_t flags,
			      uint64_t data_len, uint64_t nr_blocks)
{
	size_t len = (size_t)(1 + nr_blocks) * lw->ss;
	struct lw_block *b = calloc(1, sizeof(*b) + len);

	if (!b)
		return NULL;
	b->len = len;
	log_write_entry_encode(b->data, &(struct log_write_entry){ .sector = sector,
								  .nr_sectors = nr,
								  .flags = flags,
								  .data_len = data_len });
	return b;
}

uint64_t lw_flags(const struct lw_block *b)
{
	struct log_write_entry e;

	log_write_entry_decode(b->data, &e);
	return e.flags;
}

/* b, block 0, to the writer after what it counts; lock held.  Its, from here on. */
static void lw_queue_super(struct lw_filter *lw, struct lw_block *b)
{
	b->len = lw->ss;
	b->off = 0;
	b->super = true;
	lw->supers++;
	TAILQ_INSERT_TAIL(&lw->queue, b, link);
	lw->queued += b->len;
	pthread_cond_signal(&lw->wake);
}

/*
 * How often the layers below lost writes they had ended: a server's
 * losses, writes dropped.  Not those above: what they lose never came here.
 */
uint64_t lw_losses_below(const struct blk_dev *dev)
{
	uint64_t n = 0;

	for (const struct blk_dev *l = dev->lower; l; l = l->lower)
		n += l->losses;
	return n;
}

/*
 * No memory for an entry: the log would miss it, so it stops here, as
 * dm-log-writes does; block 0 says so (kept for this, it needs none).
 */
void lw_out_of_memory(struct lw_filter *lw)
{
	lw->n.not_logged++;
	pthread_mutex_lock(&lw->lock);
	if (lw->stopped || lw->error) { /* said already, or the writer's error says it */
		lw->stopped = true;
		pthread_mutex_unlock(&lw->lock);
		return;
	}
	lw->stopped = true;
	lw->stop_error = ENOMEM;
	lw_super_fill(lw->stop_blk->data, lw->ss, lw->nr_entries,
		      LOG_RQDISK_ENDS | LOG_RQDISK_STOPPED, ENOMEM);
	lw_queue_super(lw, lw->stop_blk);
	lw->stop_blk = NULL;
	pthread_mutex_unlock(&lw->lock);
	lw_say(lw, "log-writes: %s: out of memory; logging stops (%llu entries logged)", lw->path,
	       (unsigned long long)lw->nr_entries);
}

/*
 * The super block with nr_entries as they are now: written after what it
 * counts.  rqdisk's record says the log ends in an end mark when whole.
 */
void lw_log_super(struct lw_filter *lw)
{
	struct lw_block *b = calloc(1, sizeof(*b) + lw->ss);

	if (!b) {
		lw_out_of_memory(lw);
		return;
	}
	lw_super_fill(b->data, lw->ss, lw->nr_entries, LOG_RQDISK_ENDS, 0);
	pthread_mutex_lock(&lw->lock);
	if (lw->error)
		lw->stopped = true;
	if (lw->stopped) {
		pthread_mutex_unlock(&lw->lock);
		free(b);
		return;
	}
	lw_queue_super(lw, b);
	pthread_mutex_unlock(&lw->lock);
}

/* One entry into the log, next in order; counted by its kind. */
void lw_log(struct lw_filter *lw, struct lw_block *b)
{
	uint64_t flags = lw_flags(b);

	if (!lw_emit(lw, b))
		return;
	lw->nr_entries++;
	if (lw->order) /* its place among the other disks' entries, at the moment it takes it */
		lw_order_note(lw->order, lw->disk);
	if (flags & LOG_MARK_FLAG)
		lw->n.marks++;
	else if (flags & LOG_FLUSH_FLAG)
		lw->n.flushes++;
	else if (flags & LOG_DISCARD_FLAG)
		lw->n.discards++;
	else
		lw->n.writes++;
	if (flags & LOG_FUA_FLAG)
		lw->n.fua++;
}

/* A mark: the name in the entry's block, right after the entry, no NUL. */
int lw_log_mark(struct lw_filter *lw, const char *name)
{
	size_t len = strlen(name);
	struct lw_block *b;

	if (!len || len >= lw->ss - sizeof(struct log_write_entry) || strchr(name, '\n'))
		return -EINVAL;
	b = lw_block_new(lw, 0, 0, LOG_MARK_FLAG, len, 0);
	if (!b) {
		lw_out_of_memory(lw);
		return -ENOMEM;
	}
	memcpy(b->data + sizeof(struct log_write_entry), name, len);
	lw_log(lw, b);
	lw_log_super(lw);
	snprintf(lw->last_mark, sizeof(lw->last_mark), "%s", name);
	dev_trace_msg(lw->dev, "mark %s", name);
	return 0;
}

/* Held writes that completed before the seq-th, in order: their place in the log is here. */
void lw_log_held_before(struct lw_filter *lw, uint64_t seq)
{
	struct lw_block *b;

	while ((b = TAILQ_FIRST(&lw->held)) && b->seq < seq) {
		TAILQ_REMOVE(&lw->held, b, link);
		lw->held_bytes -= b->len;
		lw_log(lw, b);
	}
}

/*
 * Held writes no flush in flight was issued before: none of those flushes
 * covers them, so nothing has to come between them and the log.
 */
void lw_log_released(struct lw_filter *lw)
{
	const struct lw_rq *oldest = TAILQ_FIRST(&lw->flushes);

	lw_log_held_before(lw, oldest ? oldest->covers : UINT64_MAX);
}

/* Every completed write not yet logged (the stack idle, or logging turned off). */
void lw_log_pending(struct lw_filter *lw)
{
	lw_log_held_before(lw, UINT64_MAX);
}
