/* SPDX-License-Identifier: BSD-3-Clause */
/* stats.c - per-queue I/O accounting, shown as /sys/block/<dev>/stat shows it. */
#include <inttypes.h>
#include <stdio.h>

#include "blk_types.h"
#include "stats.h"

enum stat_group rq_stat_group(const struct request *rq)
{
	switch (rq->cmd_op) {
	case REQ_OP_READ:
		return STAT_READ;
	case REQ_OP_DISCARD:
		return STAT_DISCARD;
	case REQ_OP_FLUSH:
		return STAT_FLUSH;
	default:
		return STAT_WRITE;
	}
}

static unsigned int in_flight_total(const struct disk_stats *st)
{
	return st->in_flight[0] + st->in_flight[1];
}

/* io_ticks grows only while something is in flight, as the kernel's does. */
static void update_io_ticks(struct disk_stats *st, uint64_t now)
{
	if (in_flight_total(st) && now > st->stamp_ns)
		st->io_ticks_ns += now - st->stamp_ns;
	st->stamp_ns = now;
}

void blk_account_io_start(struct disk_stats *st, const struct request *rq, uint64_t now)
{
	update_io_ticks(st, now);
	st->in_flight[rq_data_dir(rq)]++;
}

void blk_account_io_merge(struct disk_stats *st, const struct request *rq)
{
	st->merges[rq_stat_group(rq)]++;
}

void blk_account_io_sectors(struct disk_stats *st, const struct request *rq, unsigned int sectors)
{
	if (rq->cmd_op != REQ_OP_FLUSH)
		st->sectors[rq_stat_group(rq)] += sectors;
}

void blk_account_io_done(struct disk_stats *st, const struct request *rq, uint64_t now)
{
	enum stat_group g = rq_stat_group(rq);

	update_io_ticks(st, now);
	st->in_flight[rq_data_dir(rq)]--;
	st->ios[g]++;
	st->nsecs[g] += now - rq->start_time_ns;
}

static uint64_t ms(uint64_t ns)
{
	return ns / 1000000;
}

int blk_stat_format(const struct disk_stats *s, uint64_t now, char *buf, size_t len)
{
	uint64_t io_ticks = s->io_ticks_ns;
	uint64_t in_queue = 0;

	if (in_flight_total(s) && now > s->stamp_ns)
		io_ticks += now - s->stamp_ns;
	for (int g = 0; g < NR_STAT_GROUPS; g++)
		in_queue += s->nsecs[g];
	return snprintf(buf, len,
			"%8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " "
			"%8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " "
			"%8u %8" PRIu64 " %8" PRIu64 " "
			"%8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " "
			"%8" PRIu64 " %8" PRIu64 "\n",
			s->ios[STAT_READ], s->merges[STAT_READ], s->sectors[STAT_READ],
			ms(s->nsecs[STAT_READ]), s->ios[STAT_WRITE], s->merges[STAT_WRITE],
			s->sectors[STAT_WRITE], ms(s->nsecs[STAT_WRITE]), in_flight_total(s),
			ms(io_ticks), ms(in_queue), s->ios[STAT_DISCARD], s->merges[STAT_DISCARD],
			s->sectors[STAT_DISCARD], ms(s->nsecs[STAT_DISCARD]), s->ios[STAT_FLUSH],
			ms(s->nsecs[STAT_FLUSH]));
}
