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

enum { LW_FILE, LW_BASE, LW_ENABLE, LW_ORDER, NR_LW_KEYS };

static const struct dev_key lw_keys[] = {
	[LW_FILE] = { .name = "file", .help = "the log to write, in dm-log-writes' format" },
	[LW_BASE] = { .name = "base", .help = "where to copy the disk as it is when the log starts" },
	[LW_ENABLE] = { .name = "enable", .help = "1 to log from the start (the default), 0 not yet" },
	[LW_ORDER] = { .name = "order",
		       .help = "the file that orders the entries of several disks' logs (rqdisk --disk)" },
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
			 "log-writes: no key '%.*s' (there are: file, base, enable, order)", (int)klen,
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
	if (a->val[LW_ORDER] && (!strcmp(a->val[LW_ORDER], a->val[LW_FILE]) ||
				 (a->val[LW_BASE] && !strcmp(a->val[LW_ORDER], a->val[LW_BASE])))) {
		snprintf(why, whylen, "log-writes: order= is the log or its base");
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
	for (int k = LW_FILE; k < NR_LW_KEYS; k++) {
		if (k != LW_ENABLE && a->val[k] && lw_same_file(a->val[k], image)) {
			snprintf(why, whylen, "log-writes: %s=%s is the image itself", lw_keys[k].name,
				 a->val[k]);
			return -EINVAL;
		}
	}
	if (a->val[LW_BASE] && lw_same_file(a->val[LW_BASE], a->val[LW_FILE])) {
		snprintf(why, whylen, "log-writes: file= and base= are the same file");
		return -EINVAL;
	}
	if (a->val[LW_ORDER] && lw_same_file(a->val[LW_ORDER], a->val[LW_FILE])) {
		snprintf(why, whylen, "log-writes: file= and order= are the same file");
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
	if (lw->order)
		lw_order_put(lw->order, true); /* a failed open: the disk never served */
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
	lw->disk = s->disk;
	if (a->val[LW_ORDER]) {
		lw->order = lw_order_get(a->val[LW_ORDER], lw->disk, why, whylen);
		if (!lw->order) {
			ret = -EINVAL;
			goto fail;
		}
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
	if (lw->order && lw_order_put(lw->order, s->aborted) && !s->aborted) {
		lw_say(lw, "log-writes: the order %s is not whole on disk", lw_order_path(lw->order));
		s->close_error = -EIO;
	}
	lw->order = NULL;
	/* the disk never served: what the filter made goes, as after a failed open */
	if (s->aborted && lw->made_log)
		unlink(lw->path);
	if (s->aborted && lw->made_base)
		unlink(lw->base);
	lw_destroy(lw);
	dev->priv = NULL;
}

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
