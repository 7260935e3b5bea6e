/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * filter_log_writes.c - the log-writes filter: every write, discard and
 * write-zeroes that completes below is recorded, data and all, in
 * dm-log-writes' on-disk format and order (log_writes.h), so that
 * xfstests' replay-log replays rqdisk's logs: "log-writes:file=LOG".
 *
 * The order is the order of completion, with each FLUSH entry after
 * exactly the writes that completed before its flush was issued: a write
 * (FUA or not) is logged when it completes, unless a flush is in flight;
 * then it is held until every flush issued before it completed has, and
 * logged after that flush's FLUSH entry.  So replaying the whole log gives
 * the image (a write logged after one it overwrote), and every entry
 * before a FLUSH is durable.  dm-log-writes holds every write until a
 * flush and logs FUA writes at once, ahead of them: a FUA write over an
 * older unflushed write then replays to the older data.  For
 * Wa,Wb,Wc,Cc,Ca,FLUSH,FUAd,Cb,CFLUSH,CFUAd the log is c,a,FLUSH,b,d.
 * A write ended only in part below when a flush is issued: the part is an
 * entry of its own ahead of the flush's FLUSH entry.  A failed flush
 * leaves a mark (LOG_WRITES_FLUSH_FAILED_MARK): what it covered may be
 * lost.  A log that stops (its file full, an I/O error, no memory) says
 * so in its block 0, in log/stats and in the stack's close.
 *
 * The ops run on the host's one thread and must not sleep: the log is
 * written by a thread of the filter's own, from buffers handed to it in
 * log order; before it writes a super block it syncs the entries that
 * block counts.  When more than LW_QUEUE_MAX bytes wait for it or for a
 * flush, can_take says no, and the writer wakes the host's loop through
 * an eventfd when it has caught up (the host runs the queue after a
 * watched fd fires, and after a flush completes).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/queue.h>
#include <unistd.h>

#include "kv.h"
#include "log_writes_impl.h"

/* -------------------------------------------------------------- entries */

/* A block of one entry and nr_blocks of data, the entry filled in, all else zero. */
static struct lw_block *lw_block_new(struct lw_filter *lw, uint64_t sector, uint64_t nr,
				     uint64_t flags, uint64_t data_len, uint64_t nr_blocks)
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

static uint64_t lw_flags(const struct lw_block *b)
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
static uint64_t lw_losses_below(const struct blk_dev *dev)
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
static void lw_out_of_memory(struct lw_filter *lw)
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
static void lw_log_super(struct lw_filter *lw)
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
static void lw_log(struct lw_filter *lw, struct lw_block *b)
{
	uint64_t flags = lw_flags(b);

	if (!lw_emit(lw, b))
		return;
	lw->nr_entries++;
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
static int lw_log_mark(struct lw_filter *lw, const char *name)
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
static void lw_log_held_before(struct lw_filter *lw, uint64_t seq)
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
static void lw_log_released(struct lw_filter *lw)
{
	const struct lw_rq *oldest = TAILQ_FIRST(&lw->flushes);

	lw_log_held_before(lw, oldest ? oldest->covers : UINT64_MAX);
}

/* Every completed write not yet logged (the stack idle, or logging turned off). */
static void lw_log_pending(struct lw_filter *lw)
{
	lw_log_held_before(lw, UINT64_MAX);
}

/* ------------------------------------------------------------------ open */

enum { LW_FILE, LW_BASE, LW_ENABLE, NR_LW_KEYS };

static const struct dev_key lw_keys[] = {
	[LW_FILE] = { .name = "file", .help = "the log to write, in dm-log-writes' format" },
	[LW_BASE] = { .name = "base", .help = "where to copy the disk as it is when the log starts" },
	[LW_ENABLE] = { .name = "enable", .help = "1 to log from the start (the default), 0 not yet" },
	{ .name = NULL },
};

struct lw_args {
	char *val[NR_LW_KEYS];
	bool enabled;
};

struct lw_parse_walk {
	struct lw_args *a;
	char *why;
	size_t whylen;
};

static void lw_args_free(struct lw_args *a)
{
	for (int i = 0; i < NR_LW_KEYS; i++)
		free(a->val[i]);
}

/* One key of the spec: its value kept (the last one given wins). */
static int lw_parse_key(void *opaque, const char *key, size_t klen, const char *val, size_t vlen)
{
	struct lw_parse_walk *w = opaque;
	struct lw_args *a = w->a;
	int k;

	for (k = 0; k < NR_LW_KEYS; k++)
		if (kv_key_is(key, klen, lw_keys[k].name))
			break;
	if (k == NR_LW_KEYS) {
		snprintf(w->why, w->whylen,
			 "log-writes: no key '%.*s' (there are: file, base, enable)", (int)klen,
			 key);
		return -EINVAL;
	}
	if (!val || !vlen) {
		snprintf(w->why, w->whylen, "log-writes: %s= needs a value", lw_keys[k].name);
		return -EINVAL;
	}
	free(a->val[k]);
	a->val[k] = strndup(val, vlen);
	if (!a->val[k]) {
		snprintf(w->why, w->whylen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* "file=LOG[,base=PATH][,enable=0|1]": every key checked before anything is made. */
static int lw_parse(const char *args, struct lw_args *a, char *why, size_t whylen)
{
	struct lw_parse_walk w = { a, why, whylen };
	int ret;

	memset(a, 0, sizeof(*a));
	a->enabled = true;
	ret = kv_walk(args, lw_parse_key, &w);
	if (ret)
		return ret;
	if (!a->val[LW_FILE]) {
		snprintf(why, whylen, "log-writes: give file=LOG, the file to log to");
		return -EINVAL;
	}
	if (a->val[LW_BASE] && !strcmp(a->val[LW_BASE], a->val[LW_FILE])) {
		snprintf(why, whylen, "log-writes: file= and base= are the same file");
		return -EINVAL;
	}
	if (a->val[LW_ENABLE]) {
		if (strcmp(a->val[LW_ENABLE], "0") && strcmp(a->val[LW_ENABLE], "1")) {
			snprintf(why, whylen, "log-writes: enable must be 0 or 1, not '%s'",
				 a->val[LW_ENABLE]);
			return -EINVAL;
		}
		a->enabled = a->val[LW_ENABLE][0] == '1';
	}
	return 0;
}

/* The checks that need the stack below: nothing is made if one fails. */
static int lw_check_stack(struct blk_dev *dev, const struct lw_args *a, const char *image,
			  struct dev_limits *lim, char *why, size_t whylen)
{
	if (!dev->stack->host_ops || !dev->stack->host_ops->watch_fd) {
		snprintf(why, whylen, "log-writes: this host cannot watch the writer's eventfd");
		return -EINVAL;
	}
	/* image is what the limits say holds the sectors: an NBD URI or RBD spec is none */
	if (a->val[LW_BASE] && !image) {
		snprintf(why, whylen,
			 "log-writes: base= needs an image file: the device below has none to copy");
		return -EINVAL;
	}
	if (lim->power_cuts) {
		snprintf(why, whylen,
			 "log-writes: a power cut below it loses writes the log keeps as written: "
			 "put log-writes below the cache that loses them (write-cache)");
		return -EINVAL;
	}
	for (int k = LW_FILE; k <= LW_BASE; k++) {
		if (a->val[k] && lw_same_file(a->val[k], image)) {
			snprintf(why, whylen, "log-writes: %s=%s is the image itself", lw_keys[k].name,
				 a->val[k]);
			return -EINVAL;
		}
	}
	if (a->val[LW_BASE] && lw_same_file(a->val[LW_BASE], a->val[LW_FILE])) {
		snprintf(why, whylen, "log-writes: file= and base= are the same file");
		return -EINVAL;
	}
	if (lim->logical_block_size < SECTOR_SIZE ||
	    lim->logical_block_size & (lim->logical_block_size - 1)) {
		snprintf(why, whylen, "log-writes: logical block size %u is no power of two",
			 lim->logical_block_size);
		return -EINVAL;
	}
	return 0;
}

static void lw_destroy(struct lw_filter *lw)
{
	if (lw->writer_running) {
		pthread_mutex_lock(&lw->lock);
		lw->quit = true;
		pthread_cond_signal(&lw->wake);
		pthread_mutex_unlock(&lw->lock);
		pthread_join(lw->writer, NULL);
	}
	lw_free_list(&lw->queue);
	lw_free_list(&lw->held);
	free(lw->stop_blk);
	pthread_mutex_destroy(&lw->lock);
	pthread_cond_destroy(&lw->wake);
	if (lw->efd >= 0)
		close(lw->efd);
	if (lw->fd >= 0)
		close(lw->fd);
	free(lw->path);
	free(lw->base);
	free(lw);
}

/* The files, the writer and the watch, after every check passed: undone (unlinked) on failure. */
static int lw_start(struct lw_filter *lw, const struct lw_args *a, const char *image, char *why,
		    size_t whylen)
{
	const struct dev_stack *s = lw->dev->stack;
	bool made_log = false, made_base = false;
	sigset_t all, old;
	int basefd = -1, ret;

	ret = lw_create("file", a->val[LW_FILE], &lw->path, &made_log, why, whylen);
	if (ret < 0)
		return ret;
	lw->fd = ret;
	if (a->val[LW_BASE]) {
		ret = lw_create("base", a->val[LW_BASE], &lw->base, &made_base, why, whylen);
		if (ret < 0)
			goto fail;
		basefd = ret;
		ret = lw_copy_image(image, basefd, why, whylen);
		if (!ret && fsync(basefd)) {
			ret = -errno;
			snprintf(why, whylen, "log-writes: base: %s", strerror(errno));
		}
		close(basefd);
		if (ret)
			goto fail;
	}
	lw->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (lw->efd < 0) {
		ret = -errno;
		snprintf(why, whylen, "log-writes: eventfd: %s", strerror(errno));
		goto fail;
	}
	/* signals are the loop's (SIGTERM ends the session): none for the writer */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&lw->writer, NULL, lw_writer, lw);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		snprintf(why, whylen, "log-writes: starting the writer: %s", strerror(-ret));
		goto fail;
	}
	lw->writer_running = true;
	ret = s->host_ops->watch_fd(s->host, lw->efd, lw_ready, lw);
	if (ret) {
		snprintf(why, whylen, "log-writes: watching the eventfd: %s", strerror(-ret));
		goto fail;
	}
	lw_log_super(lw); /* an empty log, readable from now on */
	/* off from the start: what completes until it is on is missing, as after log/enable 0 */
	if (!lw->enabled)
		lw_log_mark(lw, LOG_WRITES_GAP_MARK);
	lw->made_log = made_log;
	lw->made_base = made_base;
	return 0;
fail:
	if (made_log)
		unlink(lw->path);
	if (made_base)
		unlink(lw->base);
	return ret;
}

static int lw_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		   size_t whylen)
{
	const char *image = lim->image_file;
	struct lw_filter *lw;
	struct lw_args a;
	int ret = lw_parse(args, &a, why, whylen);

	if (!ret && lim->no_data) {
		snprintf(why, whylen, "log-writes: the device below has no data to log");
		ret = -EINVAL;
	}
	/* no queue: the spec is only checked (dev_check_filter, rqdisk-replay); nothing is made */
	if (!ret && dev_has_queue(dev))
		ret = lw_check_stack(dev, &a, image, lim, why, whylen);
	if (ret || !dev_has_queue(dev)) {
		lw_args_free(&a);
		return ret;
	}
	lw = calloc(1, sizeof(*lw));
	if (!lw) {
		lw_args_free(&a);
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	lw->dev = dev;
	lw->fd = lw->efd = -1;
	lw->ss = lim->logical_block_size;
	lw->enabled = a.enabled;
	lw->lost_seen = lw_losses_below(dev);
	lw->next_off = lw->ss; /* block 0 is the super block */
	lw->n.bytes = lw->ss;
	TAILQ_INIT(&lw->held);
	TAILQ_INIT(&lw->flushes);
	TAILQ_INIT(&lw->partial);
	TAILQ_INIT(&lw->queue);
	pthread_mutex_init(&lw->lock, NULL);
	pthread_cond_init(&lw->wake, NULL);
	lw->stop_blk = calloc(1, sizeof(*lw->stop_blk) + lw->ss);
	ret = lw->stop_blk ? lw_start(lw, &a, image, why, whylen) : -ENOMEM;
	if (ret == -ENOMEM && !lw->stop_blk)
		snprintf(why, whylen, "out of memory");
	lw_args_free(&a);
	if (ret) {
		lw_destroy(lw);
		return ret;
	}
	dev->priv = lw;
	return 0;
}

/* The stack is idle: the held writes, the end mark, the super block; then all on disk. */
static void lw_close(struct blk_dev *dev)
{
	struct lw_filter *lw = dev->priv;
	struct dev_stack *s = dev->stack;

	if (!lw)
		return;
	if (!s->aborted) {
		lw_log_pending(lw);
		lw_log_mark(lw, LOG_WRITES_END_MARK);
	}
	pthread_mutex_lock(&lw->lock);
	lw->quit = true;
	pthread_cond_signal(&lw->wake);
	pthread_mutex_unlock(&lw->lock);
	pthread_join(lw->writer, NULL);
	lw->writer_running = false;
	/* a log that misses writes the disk took: the host's exit status says so */
	if (!s->aborted && !lw->error && !lw->stopped && fsync(lw->fd)) {
		lw_say(lw, "log-writes: syncing %s: %s", lw->path, strerror(errno));
		s->close_error = -EIO;
	} else if (!s->aborted && (lw->error || lw->stopped)) {
		lw_say(lw, "log-writes: the log %s stopped (%s): writes after its last entry are "
			   "not in it", lw->path, strerror(lw->error ? lw->error : lw->stop_error));
		s->close_error = -EIO;
	}
	s->host_ops->unwatch_fd(s->host, lw->efd);
	/* the disk never served: what the filter made goes, as after a failed open */
	if (s->aborted && lw->made_log)
		unlink(lw->path);
	if (s->aborted && lw->made_base)
		unlink(lw->base);
	lw_destroy(lw);
	dev->priv = NULL;
}

/* ---------------------------------------------------------------- the I/O */

static bool lw_can_take(struct blk_dev *dev)
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

static void lw_submit(struct blk_dev *dev, struct request *rq)
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
static void lw_end(struct blk_dev *dev, struct request *rq, int error, unsigned int nr_sectors)
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

/* ------------------------------------------------------- the control tree */

static int lw_describe(const struct blk_dev *dev, char *buf, size_t len)
{
	const struct lw_filter *lw = dev->priv;

	if (!lw) /* a spec only checked */
		return snprintf(buf, len, "%s", dev->args ? dev->args : "");
	return snprintf(buf, len, "file=%s%s%s enable=%d", lw->path, lw->base ? " base=" : "",
			lw->base ? lw->base : "", lw->enabled);
}

static int lw_show_mark(struct blk_dev *dev, char *buf, size_t len)
{
	const struct lw_filter *lw = dev->priv;

	return snprintf(buf, len, "%s\n", lw->last_mark);
}

/*
 * The names the log's reader takes as the log's own word: that it ended
 * whole, that logging was off, that a flush failed.  Set from outside they
 * would make a killed daemon's log read as whole, or hide a gap.
 */
static bool lw_mark_reserved(const char *name)
{
	return !strcmp(name, LOG_WRITES_END_MARK) || !strncmp(name, "rqdisk-", 7);
}

static int lw_store_mark(struct blk_dev *dev, const char *buf)
{
	struct lw_filter *lw = dev->priv;
	bool stopped;

	if (lw_mark_reserved(buf))
		return -EPERM;
	pthread_mutex_lock(&lw->lock); /* the writer sets error */
	stopped = lw->stopped || lw->error;
	pthread_mutex_unlock(&lw->lock);
	if (stopped)
		return -EIO;
	return lw_log_mark(lw, buf);
}

static int lw_show_enable(struct blk_dev *dev, char *buf, size_t len)
{
	const struct lw_filter *lw = dev->priv;

	return snprintf(buf, len, "%d\n", lw->enabled);
}

/*
 * Off: what completed is logged first, then a mark that says a gap
 * begins; what completes after is not logged.  On: a mark that says it
 * ended, once every write submitted while it was off has ended (a write
 * that ends after the mark would be missing where the log looks whole).
 * A reader of the log knows where writes are missing.
 */
static int lw_store_enable(struct blk_dev *dev, const char *buf)
{
	struct lw_filter *lw = dev->priv;
	uint64_t v;

	if (dev_parse_value(buf, 0, 1, &v))
		return -EINVAL;
	if (v == lw->enabled)
		return 0;
	lw->enabled = v;
	if (!v && lw->owe_enabled) { /* the gap never ended: it goes on */
		lw->owe_enabled = false;
	} else if (!v) {
		lw_log_pending(lw);
		lw_log_mark(lw, LOG_WRITES_GAP_MARK);
	} else if (lw->unlogged) {
		lw->owe_enabled = true;
	} else {
		lw_log_mark(lw, LOG_WRITES_GAP_END_MARK);
	}
	return 0;
}

static int lw_show_entries(struct blk_dev *dev, char *buf, size_t len)
{
	const struct lw_filter *lw = dev->priv;

	return snprintf(buf, len, "%llu\n", (unsigned long long)lw->nr_entries);
}

static int lw_show_stats(struct blk_dev *dev, char *buf, size_t len)
{
	struct lw_filter *lw = dev->priv;
	uint64_t queued;
	int error;

	pthread_mutex_lock(&lw->lock);
	queued = lw->queued;
	error = lw->error ? lw->error : lw->stop_error;
	pthread_mutex_unlock(&lw->lock);
	return snprintf(buf, len,
			"entries %llu\nwrites %llu\nfua %llu\ndiscards %llu\nzeroes %llu\n"
			"flushes %llu\nmarks %llu\nbytes %llu\nheld_bytes %llu\n"
			"pending_bytes %llu\nnot_logged %llu\nstopped %d\nerror %s\n",
			(unsigned long long)lw->nr_entries, (unsigned long long)lw->n.writes,
			(unsigned long long)lw->n.fua, (unsigned long long)lw->n.discards,
			(unsigned long long)lw->n.zeroes, (unsigned long long)lw->n.flushes,
			(unsigned long long)lw->n.marks, (unsigned long long)lw->n.bytes,
			(unsigned long long)lw->held_bytes, (unsigned long long)queued,
			(unsigned long long)lw->n.not_logged, lw->stopped || error,
			error ? strerror(error) : "none");
}

/* device/log-writes/, and log/ at the top of the tree. */
static const struct dev_attr lw_attrs[] = {
	{ "mark", lw_show_mark, lw_store_mark },
	{ "enable", lw_show_enable, lw_store_enable },
	{ "entries", lw_show_entries, NULL },
	{ "stats", lw_show_stats, NULL },
	{ NULL, NULL, NULL },
};

DEV_REGISTER(log_writes, "log-writes",
	.description = "logs every write, flush and FUA write in dm-log-writes' format",
	.keys = lw_keys,
	.rq_pdu_size = sizeof(struct lw_rq),
	.open = lw_open,
	.close = lw_close,
	.can_take = lw_can_take,
	.submit = lw_submit,
	.end = lw_end,
	.describe = lw_describe,
	.attrs = lw_attrs,
	.ctl_dir = "log");
