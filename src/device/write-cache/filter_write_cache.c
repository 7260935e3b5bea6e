/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * filter_write_cache.c - the write-cache filter: a disk's volatile write
 * cache, and a power switch that loses it ("write-cache:size=64,expire=0").
 * A write ends once its data is in the cache; the cache writes back in an
 * order of its own, seeded, and a flush ends only once what it covers is
 * durable below.  A power cut (power/cut) drops what is not durable, all
 * of it or a seeded part; after power/restore the layer below holds one
 * state a crash could have left.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "wcache_impl.h"

#define NSEC_PER_MS 1000000ull

/* Defaults: 64 MiB, written back after 30 s as Linux's dirty_expire_centisecs, 4 below. */
#define WC_DEF_SIZE_MIB 64
#define WC_DEF_EXPIRE_MS 30000
#define WC_DEF_SEED 1
#define WC_DEF_DEPTH 4

enum { WC_SIZE, WC_EXPIRE, WC_SEED, WC_DEPTH, WC_ATOMIC, NR_WC_KEYS };

static const struct dev_key wc_keys[] = {
	[WC_SIZE] = { .name = "size", .min = 1, .max = 65536,
		      .help = "the cache in MiB (default 64)" },
	[WC_EXPIRE] = { .name = "expire", .max = 86400000, /* a day */
			.help = "milliseconds before dirty data is written back, 0 never by age" },
	[WC_SEED] = { .name = "seed", .max = UINT64_MAX,
		      .help = "the seed of the writeback order and of a cut's choices" },
	[WC_DEPTH] = { .name = "depth", .min = 1, .max = 1024,
		       .help = "writebacks below at once (default 4)" },
	[WC_ATOMIC] = { .name = "atomic", .min = 512, .max = 1u << 20,
			.help = "bytes of the disk's atomic unit, what a torn cut keeps whole" },
	{ .name = NULL },
};

/* splitmix64: one stream per seed, the same on every machine. */
uint64_t wc_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int wc_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		   size_t whylen)
{
	uint64_t v[NR_WC_KEYS] = { WC_DEF_SIZE_MIB, WC_DEF_EXPIRE_MS, WC_DEF_SEED, WC_DEF_DEPTH, 0 };
	unsigned int lbs = lim->logical_block_size ? lim->logical_block_size : SECTOR_SIZE;
	struct wc_filter *wc;
	int ret = dev_parse_keys("write-cache", args, wc_keys, v, why, whylen);

	if (ret)
		return ret;
	if (lim->no_data) {
		snprintf(why, whylen, "write-cache: the device below moves no data: nothing to cache");
		return -EINVAL;
	}
	if (v[WC_ATOMIC] && v[WC_ATOMIC] % lbs) {
		snprintf(why, whylen, "write-cache: atomic must be a multiple of the block size, %u",
			 lbs);
		return -EINVAL;
	}
	wc = calloc(1, sizeof(*wc));
	if (!wc) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	wc->size = v[WC_SIZE] << 20;
	wc->expire_ns = v[WC_EXPIRE] * NSEC_PER_MS;
	wc->seed = wc->rng = v[WC_SEED];
	wc->cut_rng = v[WC_SEED] ^ 0x5eed5eed5eed5eedull; /* a stream of its own */
	wc->depth = (unsigned int)v[WC_DEPTH];
	wc->atomic = v[WC_ATOMIC] ? (unsigned int)v[WC_ATOMIC] : lbs;
	wc_map_init(&wc->map);
	TAILQ_INIT(&wc->fifo);
	TAILQ_INIT(&wc->reads);
	TAILQ_INIT(&wc->through);
	lim->has_cache = true;
	lim->power_cuts = true; /* power/cut */
	dev->priv = wc;
	return 0;
}

static void wc_close(struct blk_dev *dev)
{
	struct wc_filter *wc = dev->priv;

	wc_map_clear(&wc->map);
	free(wc);
}

int wc_describe(const struct blk_dev *dev, char *buf, size_t len)
{
	const struct wc_filter *wc = dev->priv;

	return snprintf(buf, len, "size=%llu expire=%llu seed=%llu depth=%u atomic=%u",
			(unsigned long long)(wc->size >> 20),
			(unsigned long long)(wc->expire_ns / NSEC_PER_MS),
			(unsigned long long)wc->seed, wc->depth, wc->atomic);
}

DEV_REGISTER(write_cache, "write-cache",
	.description = "a volatile write cache that a power cut empties",
	.keys = wc_keys,
	.rq_pdu_size = sizeof(struct wc_rq),
	.open = wc_open,
	.close = wc_close,
	.can_take = wc_can_take,
	.submit = wc_submit,
	.end = wc_end_rq,
	.timer = wc_timer,
	.describe = wc_describe,
	.attrs = wc_attrs,
	.ctl_dir = "power");
