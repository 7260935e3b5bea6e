/* SPDX-License-Identifier: BSD-3-Clause */
/* wcache_power.c - the write cache's power cut and restore, and its control-tree files. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/queue.h>

#include "wcache_impl.h"

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
const struct dev_attr wc_attrs[] = {
	{ "cut", wc_show_cut, wc_store_cut },
	{ "restore", wc_show_restore, wc_store_restore },
	{ "state", wc_show_state, NULL },
	{ "dirty", wc_show_dirty, NULL },
	{ "stats", wc_show_stats, NULL },
	{ NULL, NULL, NULL },
};
