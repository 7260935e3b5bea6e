/* SPDX-License-Identifier: BSD-3-Clause */
/* log_writes_attrs.c - the log-writes filter's control-tree files: mark, enable, entries, stats. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "log_writes_impl.h"

int lw_describe(const struct blk_dev *dev, char *buf, size_t len)
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
const struct dev_attr lw_attrs[] = {
	{ "mark", lw_show_mark, lw_store_mark },
	{ "enable", lw_show_enable, lw_store_enable },
	{ "entries", lw_show_entries, NULL },
	{ "stats", lw_show_stats, NULL },
	{ NULL, NULL, NULL },
};
