/* SPDX-License-Identifier: BSD-3-Clause */
/* stats.h - disk statistics in the order of /sys/block/<dev>/stat. */
#ifndef RQDISK_STATS_H
#define RQDISK_STATS_H

#include <stddef.h>
#include <stdint.h>

enum stat_group {
	STAT_READ,
	STAT_WRITE,
	STAT_DISCARD,
	STAT_FLUSH,
	NR_STAT_GROUPS
};

struct disk_stats {
	uint64_t ios[NR_STAT_GROUPS];
	uint64_t merges[NR_STAT_GROUPS];
	uint64_t sectors[NR_STAT_GROUPS];
	uint64_t nsecs[NR_STAT_GROUPS];
	unsigned int in_flight[2]; /* reads, and everything else */
	uint64_t io_ticks_ns;      /* time with anything in flight */
	uint64_t stamp_ns;         /* when io_ticks was last brought up to date */
};

struct request;

enum stat_group rq_stat_group(const struct request *rq);
void blk_account_io_start(struct disk_stats *st, const struct request *rq, uint64_t now);
void blk_account_io_merge(struct disk_stats *st, const struct request *rq);
void blk_account_io_sectors(struct disk_stats *st, const struct request *rq, unsigned int sectors);
void blk_account_io_done(struct disk_stats *st, const struct request *rq, uint64_t now);
int blk_stat_format(const struct disk_stats *st, uint64_t now, char *buf, size_t len);

#endif
