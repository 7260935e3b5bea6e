/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * filter_fault.c - the fault filter: errors by rule, bad sectors, flakey
 * intervals, dropped writes, corrupted bytes and extra latency, as
 * dm-flakey, dm-dust, dm-delay, null_blk's badblocks and nbdkit's error
 * filter inject them: "fault:error=read,prob=10000,seed=1".  Every request
 * ends from the timer or from below, never inside submit; a request that
 * fails after a good prefix goes down whole, and its prefix is passed up
 * as done before the rest fails.  Rules change at run time through the
 * control tree's fault/ (rules, enable, badblocks, sectors, stats).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "fault_impl.h"

/* Start the rules over: counts, random sequences and flakey's cycle. */
static void fault_restart(struct fault_filter *ff, uint64_t now)
{
	ff->rng_err = ff->r.seed;
	ff->rng_spike = ff->r.seed ^ 0x5bd1e995ull;
	ff->rng_corrupt = ff->r.seed ^ 0xc2b2ae35ull;
	ff->matched = ff->fired = 0;
	ff->epoch = now;
	ff->was_down = -1;
}

/* Keys with nothing to act on over a device with no data (lim->no_data) and no files. */
static int fault_check_no_data(const struct fault_rules *r, char *why, size_t whylen)
{
	if (r->drop_writes || r->corrupt_bio_byte || r->random_read_corrupt ||
	    r->random_write_corrupt || r->error_file) {
		snprintf(why, whylen,
			 "fault: drop_writes, corruption and error_file need data and "
			 "files, which the device below has not");
		return -EINVAL;
	}
	return 0;
}

static int fault_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		      size_t whylen)
{
	struct fault_filter *ff = calloc(1, sizeof(*ff));
	int ret;

	if (!ff) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	fault_rules_init(&ff->r);
	ff->bb.max = FAULT_MAX_BAD_RANGES;
	ff->capacity = lim->capacity;
	ff->no_data = lim->no_data;
	ret = fault_rules_parse(&ff->r, &ff->bb, args, lim->capacity, why, whylen);
	if (!ret && ff->no_data)
		ret = fault_check_no_data(&ff->r, why, whylen);
	/* no queue: a stack only checked and described (rqdisk-replay): no watcher, no clock */
	if (!ret && dev_has_queue(dev)) {
		ret = fault_watch_set(ff, ff->r.error_file);
		if (ret)
			snprintf(why, whylen, "fault: no watcher for error_file: %s",
				 strerror(-ret));
	}
	if (ret) {
		fault_rules_free(&ff->r);
		sector_ranges_free(&ff->bb);
		free(ff);
		return ret;
	}
	TAILQ_INIT(&ff->held);
	fault_restart(ff, dev_has_queue(dev) ? dev_now(dev) : 0);
	dev->priv = ff;
	return 0;
}

static void fault_close(struct blk_dev *dev)
{
	struct fault_filter *ff = dev->priv;

	if (!ff)
		return;
	fault_watch_stop(ff);
	fault_rules_free(&ff->r);
	sector_ranges_free(&ff->bb);
	free(ff);
	dev->priv = NULL;
}

static int fault_describe(const struct blk_dev *dev, char *buf, size_t len)
{
	const struct fault_filter *ff = dev->priv;

	return fault_rules_format(&ff->r, buf, len);
}

static int fault_show_rules(struct blk_dev *dev, char *buf, size_t len)
{
	int n = fault_describe(dev, buf, len);

	if (n >= 0 && (size_t)n + 1 < len) {
		buf[n++] = '\n';
		buf[n] = 0;
	}
	return n;
}

/*
 * New rules, over the ones in force (keys not given keep their values):
 * all or nothing.  The rules start over: the error rule's counts, the
 * random sequences from the seed, flakey's cycle from now.
 */
static int fault_store_rules(struct blk_dev *dev, const char *buf)
{
	struct fault_filter *ff = dev->priv;
	struct fault_rules r;
	struct sector_ranges bb;
	char why[256];
	int ret;

	if (fault_rules_copy(&r, &ff->r))
		return -ENOMEM;
	if (sector_ranges_copy(&bb, &ff->bb)) {
		fault_rules_free(&r);
		return -ENOMEM;
	}
	ret = fault_rules_parse(&r, &bb, buf, ff->capacity, why, sizeof(why));
	if (!ret && ff->no_data)
		ret = fault_check_no_data(&r, why, sizeof(why));
	if (!ret && (!r.error_file != !ff->r.error_file ||
		     (r.error_file && strcmp(r.error_file, ff->r.error_file))))
		ret = fault_watch_set(ff, r.error_file);
	if (ret) {
		fault_rules_free(&r);
		sector_ranges_free(&bb);
		return ret == -ENOMEM ? ret : -EINVAL;
	}
	fault_rules_free(&ff->r);
	sector_ranges_free(&ff->bb);
	ff->r = r;
	ff->bb = bb;
	fault_restart(ff, dev_now(dev));
	dev_trace_msg(dev, "rules %s", buf);
	return 0;
}

static int fault_show_enable(struct blk_dev *dev, char *buf, size_t len)
{
	struct fault_filter *ff = dev->priv;

	return snprintf(buf, len, "%d\n", ff->r.enable);
}

/* On or off, the counts kept (dm-dust's enable and disable). */
static int fault_store_enable(struct blk_dev *dev, const char *buf)
{
	struct fault_filter *ff = dev->priv;
	uint64_t v;

	if (dev_parse_value(buf, 0, 1, &v))
		return -EINVAL;
	if (ff->r.enable != (bool)v)
		dev_trace_msg(dev, "enable %llu", (unsigned long long)v);
	ff->r.enable = v;
	return 0;
}

static int fault_show_badblocks(struct blk_dev *dev, char *buf, size_t len)
{
	struct fault_filter *ff = dev->priv;

	return fault_bb_show(&ff->bb, buf, len);
}

static int fault_store_badblocks(struct blk_dev *dev, const char *buf)
{
	struct fault_filter *ff = dev->priv;
	int ret = fault_bb_command(&ff->bb, buf, ff->capacity);

	if (ret)
		return ret == -ENOMEM ? ret : -EINVAL;
	dev_trace_msg(dev, "badblocks %s", buf);
	return 0;
}

/* The sectors the rules aim at, one range a line (none: the whole disk); set by fault/rules. */
static int fault_show_sectors(struct blk_dev *dev, char *buf, size_t len)
{
	struct fault_filter *ff = dev->priv;

	return fault_bb_show(&ff->r.sectors, buf, len);
}

static int fault_show_stats(struct blk_dev *dev, char *buf, size_t len)
{
	struct fault_filter *ff = dev->priv;
	const struct fault_stats *s = &ff->st;

	return snprintf(buf, len,
			"errors %llu\nbadblock_errors %llu\nflakey_errors %llu\n"
			"dropped_writes %llu\ncorrupted %llu\ndelayed %llu\nspikes %llu\n"
			"cleared_badblocks %llu\n",
			(unsigned long long)s->errors, (unsigned long long)s->badblock_errors,
			(unsigned long long)s->flakey_errors, (unsigned long long)s->dropped_writes,
			(unsigned long long)s->corrupted, (unsigned long long)s->delayed,
			(unsigned long long)s->spikes, (unsigned long long)s->cleared_badblocks);
}

/*
 * fault/ (and device/fault/): the rules, the error rule's switch, the bad
 * sectors, the sectors the rules aim at, the counts.
 */
static const struct dev_attr fault_attrs[] = {
    {"badblocks", fault_show_badblocks, fault_store_badblocks},
    {"enable", fault_show_enable, fault_store_enable},
    {"rules", fault_show_rules, fault_store_rules},
    {"sectors", fault_show_sectors, NULL},
    {"stats", fault_show_stats, NULL},
    {NULL, NULL, NULL},
};

DEV_REGISTER(fault, "fault",
    .description = "fails, drops, corrupts or delays requests by rules, as dm-flakey and dm-dust",
    .keys = fault_keys,
    .rq_pdu_size = sizeof(struct fault_rq),
    .open = fault_open,
    .close = fault_close,
    .can_take = fault_can_take,
    .submit = fault_submit,
    .end = fault_end,
    .timer = fault_timer,
    .describe = fault_describe,
    .attrs = fault_attrs,
    .ctl_dir = "fault");
