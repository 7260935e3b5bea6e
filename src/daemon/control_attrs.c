/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * control_attrs.c - the control tree's fixed attributes, shaped like
 * /sys/block/<dev>/: queue limits, the scheduler, the disk statistics,
 * the trace, the device stack and the FUSE transport, each with its show
 * and, where it may be written, its store and the bounds it keeps.
 * A show makes the text of a file as it is opened; a store is handed one
 * value and refuses a bad one with -EINVAL, leaving the old one.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk_mq.h"
#include "blktrace.h"
#include "control_impl.h"

static int show_stat(struct rqdisk *d, char *buf, size_t len)
{
	return blk_stat_format(&d->q->stats, blk_clock_now(d->q->clock), buf, len);
}

static int show_inflight(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%8u %8u\n", d->q->stats.in_flight[0], d->q->stats.in_flight[1]);
}

static int show_size(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%" PRIu64 "\n", d->size >> SECTOR_SHIFT);
}

static int show_ro(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%d\n", d->read_only);
}

/* "noop [deadline] cfq ...": every elevator, the running one in brackets. */
static int show_scheduler(struct rqdisk *d, char *buf, size_t len)
{
	const char *cur = d->q->elevator ? d->q->elevator->type->elevator_name : "none";
	const char *const *names = elevator_names();
	size_t used = 0;

	for (; *names && used < len; names++)
		used += (size_t)snprintf(buf + used, len - used, strcmp(*names, cur) ? "%s " : "[%s] ",
					 *names);
	if (used && used <= len)
		buf[used - 1] = '\n';
	return (int)used;
}

/*
 * Answered once the new elevator runs, as a write to sysfs returns: at
 * once, or (ctl_write parks the request) from the completion path when
 * the last request the old one gave out ends.  Nothing waits here: the
 * loop goes on serving.  A switch written while one is pending is refused
 * with EBUSY.
 */
static int store_scheduler(struct rqdisk *d, const char *buf)
{
	char why[256];
	int ret = elevator_switch(d->q, buf, why, sizeof(why));

	/*
	 * The lock is held (ctl_write): blk_mq_elevator_switch's work, whose
	 * kick of the hardware queues only asks the loop to run them.
	 */
	if (queue_is_mq(d->q))
		blk_mq_kick_hw_queues(d->q);
	return ret;
}

static int parse_ulong(const char *buf, unsigned long min, unsigned long max, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(buf, &end, 10);
	return *buf == '-' || errno || end == buf || *end || *v < min || *v > max ? -EINVAL : 0;
}

static int show_max_sectors_kb(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%u\n", d->q->limits.max_sectors / 2);
}

/* Within the hardware limit, and checked as a whole like the command line's. */
static int store_max_sectors_kb(struct rqdisk *d, const char *buf)
{
	struct queue_limits lim = d->q->limits;
	unsigned long kb;

	if (parse_ulong(buf, BLK_PAGE_SIZE / 1024, lim.max_hw_sectors / 2, &kb))
		return -EINVAL;
	lim.max_sectors = (unsigned int)kb * 2;
	return blk_queue_set_limits(d->q, &lim, NULL, 0);
}

static int show_max_hw_sectors_kb(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%u\n", d->q->limits.max_hw_sectors / 2);
}

static int show_max_segments(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%u\n", queue_max_segments(&d->q->limits));
}

static int show_max_segment_size(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%u\n", d->q->limits.max_segment_size);
}

static int show_block_size(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%u\n", d->q->limits.logical_block_size);
}

static int show_physical_block_size(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%u\n", queue_physical_block_size(&d->q->limits));
}

static int show_optimal_io_size(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%u\n", d->q->limits.io_opt);
}

/* 0: the device takes none, as sysfs shows it. */
static int show_discard_max_bytes(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%llu\n",
			(unsigned long long)queue_max_sectors(&d->q->limits, REQ_OP_DISCARD)
				<< SECTOR_SHIFT);
}

static int show_write_zeroes_max_bytes(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%llu\n",
			(unsigned long long)queue_max_sectors(&d->q->limits, REQ_OP_WRITE_ZEROES)
				<< SECTOR_SHIFT);
}

static int show_nr_requests(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%u\n",
			queue_is_mq(d->q) ? blk_mq_nr_requests(d->q) : d->q->limits.nr_requests);
}

/*
 * Down to one, up to what the driver was set up to carry.  On a
 * multi-queue queue the tags follow: the elevator's scheduler tags, or
 * without one each hardware queue's driver tags, up to --hw-queue-depth
 * (blk_mq_update_nr_requests; EBUSY while an elevator switch waits).
 * Either way the elevator is told its new depth.
 */
static int store_nr_requests(struct rqdisk *d, const char *buf)
{
	unsigned long v;

	if (parse_ulong(buf, 1, d->max_nr_requests, &v))
		return -EINVAL;
	if (queue_is_mq(d->q))
		return blk_mq_update_nr_requests(d->q, (unsigned int)v);
	blk_queue_update_nr_requests(d->q, (unsigned int)v);
	return 0;
}

static int show_nomerges(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%u\n", d->q->limits.nomerges);
}

static int store_nomerges(struct rqdisk *d, const char *buf)
{
	unsigned long v;

	if (parse_ulong(buf, BLK_MERGES_ALL, BLK_MERGES_NONE, &v))
		return -EINVAL;
	d->q->limits.nomerges = (unsigned int)v;
	return 0;
}

/* What the stack's limits say: a model's, or the device's below it. */
static int show_rotational(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%d\n", d->stack && d->stack->limits.rotational);
}

/*
 * Not in sysfs: "null" for a null device, then the timing model and all
 * its parameters; "none" for neither.
 */
static int show_model(struct rqdisk *d, char *buf, size_t len)
{
	const struct disk_model *model = d->stack ? d->stack->limits.model : NULL;
	int n = 0, m;

	if (d->null_device)
		n = snprintf(buf, len, model ? "null " : "null");
	else if (!model)
		n = snprintf(buf, len, "none");
	if (model && n >= 0 && (size_t)n < len) {
		m = disk_model_describe(model, buf + n, len - (size_t)n);
		n = m < 0 ? m : n + m;
	}
	if (n < 0 || (size_t)n + 1 >= len)
		return n;
	return n + snprintf(buf + n, len - (size_t)n, "\n");
}

/* Not in sysfs: the layers below the queue, nearest first, as "model:hdd ... -> file". */
static int show_device_stack(struct rqdisk *d, char *buf, size_t len)
{
	int n = d->stack ? dev_stack_describe(d->stack, buf, len) : snprintf(buf, len, "none");

	if (n < 0 || (size_t)n + 1 >= len)
		return n;
	return n + snprintf(buf + n, len - (size_t)n, "\n");
}

/*
 * Not in sysfs: the writes the device lost after it had acknowledged
 * them (an NBD server gone with writes no flush covered): the losses,
 * each of which failed the next fsync of every open file, the writes
 * and their sectors, all told.
 */
static int show_device_lost_writes(struct rqdisk *d, char *buf, size_t len)
{
	static const struct dev_lost none;
	const struct dev_lost *l = d->stack ? &d->stack->lost : &none;

	return snprintf(buf, len, "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n", l->events, l->writes,
			l->sectors);
}

/*
 * "write back" when writes are durable only after a flush: always over an
 * image (the page cache, the host disk's cache, a sparse file's
 * allocation), and over a write-cache filter; "write through" over a
 * backend with nothing to lose (null).
 */
static int show_write_cache(struct rqdisk *d, char *buf, size_t len)
{
	bool cache = d->stack && d->stack->limits.has_cache;

	return snprintf(buf, len, "%s\n", cache ? "write back" : "write through");
}

static int show_trace_name(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%s\n", d->q->blk_trace_name ? d->q->blk_trace_name : "");
}

/* An absolute path (in the background the daemon runs in /), and not while tracing. */
static int store_trace_name(struct rqdisk *d, const char *buf)
{
	if (buf[0] != '/')
		return -EINVAL;
	if (d->q->blk_trace)
		return -EBUSY;
	return blk_trace_set_name(d->q, buf);
}

static int show_trace_enable(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%d\n", d->q->blk_trace != NULL);
}

/* 1 starts a trace to trace/name (the file truncated); 0 stops it, the file whole. */
static int store_trace_enable(struct rqdisk *d, const char *buf)
{
	unsigned long v;

	if (parse_ulong(buf, 0, 1, &v) || (v && !d->q->blk_trace_name))
		return -EINVAL;
	if (!v)
		return __blk_trace_remove(d->q);
	if (d->q->blk_trace)
		return 0;
	return __blk_trace_setup(d->q, d->q->blk_trace_name, NULL, 0);
}

static int show_trace_cgroup(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%d\n", d->q->blk_trace_cgroup);
}

/*
 * 1: each record of a process in a cgroup (v2) other than the root carries
 * the cgroup's id, as Linux's blk_cgroup trace option has it; at once,
 * tracing or not.
 */
static int store_trace_cgroup(struct rqdisk *d, const char *buf)
{
	unsigned long v;

	if (parse_ulong(buf, 0, 1, &v))
		return -EINVAL;
	d->q->blk_trace_cgroup = v;
	return 0;
}

/* Not in sysfs: how FUSE requests reach the daemon, "uring" or "dev" (/dev/fuse). */
static int show_fuse_transport(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%s\n", d->fuse_on_ring ? "uring" : "dev");
}

/* The ring's entries a CPU queue: the requests of one CPU the daemon can hold; 0 without one */
static int show_fuse_ring_depth(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%u\n", d->fuse_ring_depth);
}

/* Not in sysfs but as null_blk's queue_mode: "rq" (the 2.6 queue) or "mq". */
static int show_queue_mode(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%s\n", queue_is_mq(d->q) ? "mq" : "rq");
}

/* The hardware queues: one (request_fn) on the 2.6 queue. */
static int show_nr_hw_queues(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%u\n", queue_is_mq(d->q) ? d->q->mq->set->nr_hw_queues : 1);
}

/*
 * Not in sysfs but as /proc/lock_stat: the queue lock's acquisitions, wait
 * and hold times, and the time inside the elevator's hooks per request,
 * "key=value" lines (lock_stats.h).
 */
static int show_lock_stats(struct rqdisk *d, char *buf, size_t len)
{
	const char *elv = d->q->elevator ? d->q->elevator->type->elevator_name : "none";

	return blk_lock_stats_format(&d->q->lock_stats, elv, buf, len);
}

/* 0 resets the counts, as /proc/lock_stat takes; nothing else. */
static int store_lock_stats(struct rqdisk *d, const char *buf)
{
	if (strcmp(buf, "0"))
		return -EINVAL;
	blk_lock_stats_reset(&d->q->lock_stats);
	return 0;
}

static int show_lock_stats_enable(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%d\n", blk_lock_stats_enabled(&d->q->lock_stats));
}

/* 1 times the queue lock and the elevator from the next acquisition on; 0 stops, counts kept. */
static int store_lock_stats_enable(struct rqdisk *d, const char *buf)
{
	unsigned long v;

	if (parse_ulong(buf, 0, 1, &v))
		return -EINVAL;
	blk_lock_stats_set_enabled(&d->q->lock_stats, v);
	return 0;
}

const struct ctl_node ctl_nodes[] = {
	{ CTL_QUEUE, CTL_ROOT, "queue", NULL, NULL },
	{ CTL_STAT, CTL_ROOT, "stat", show_stat, NULL },
	{ CTL_INFLIGHT, CTL_ROOT, "inflight", show_inflight, NULL },
	{ CTL_SIZE, CTL_ROOT, "size", show_size, NULL },
	{ CTL_RO, CTL_ROOT, "ro", show_ro, NULL },
	{ CTL_IOSCHED, CTL_QUEUE, "iosched", NULL, NULL },
	{ CTL_SCHEDULER, CTL_QUEUE, "scheduler", show_scheduler, store_scheduler },
	{ CTL_MAX_SECTORS_KB, CTL_QUEUE, "max_sectors_kb", show_max_sectors_kb,
	  store_max_sectors_kb },
	{ CTL_MAX_HW_SECTORS_KB, CTL_QUEUE, "max_hw_sectors_kb", show_max_hw_sectors_kb, NULL },
	{ CTL_MAX_SEGMENTS, CTL_QUEUE, "max_segments", show_max_segments, NULL },
	{ CTL_MAX_SEGMENT_SIZE, CTL_QUEUE, "max_segment_size", show_max_segment_size, NULL },
	{ CTL_LOGICAL_BLOCK_SIZE, CTL_QUEUE, "logical_block_size", show_block_size, NULL },
	{ CTL_PHYSICAL_BLOCK_SIZE, CTL_QUEUE, "physical_block_size", show_physical_block_size,
	  NULL },
	{ CTL_OPTIMAL_IO_SIZE, CTL_QUEUE, "optimal_io_size", show_optimal_io_size, NULL },
	{ CTL_DISCARD_MAX_BYTES, CTL_QUEUE, "discard_max_bytes", show_discard_max_bytes, NULL },
	{ CTL_WRITE_ZEROES_MAX_BYTES, CTL_QUEUE, "write_zeroes_max_bytes",
	  show_write_zeroes_max_bytes, NULL },
	{ CTL_HW_SECTOR_SIZE, CTL_QUEUE, "hw_sector_size", show_block_size, NULL },
	{ CTL_NR_REQUESTS, CTL_QUEUE, "nr_requests", show_nr_requests, store_nr_requests },
	{ CTL_NOMERGES, CTL_QUEUE, "nomerges", show_nomerges, store_nomerges },
	{ CTL_ROTATIONAL, CTL_QUEUE, "rotational", show_rotational, NULL },
	{ CTL_WRITE_CACHE, CTL_QUEUE, "write_cache", show_write_cache, NULL },
	{ CTL_MODEL, CTL_QUEUE, "model", show_model, NULL },
	{ CTL_QUEUE_MODE, CTL_QUEUE, "queue_mode", show_queue_mode, NULL },
	{ CTL_NR_HW_QUEUES, CTL_QUEUE, "nr_hw_queues", show_nr_hw_queues, NULL },
	{ CTL_LOCK_STATS, CTL_QUEUE, "lock_stats", show_lock_stats, store_lock_stats },
	{ CTL_LOCK_STATS_ENABLE, CTL_QUEUE, "lock_stats_enable", show_lock_stats_enable,
	  store_lock_stats_enable },
	{ CTL_TRACE, CTL_ROOT, "trace", NULL, NULL },
	{ CTL_TRACE_NAME, CTL_TRACE, "name", show_trace_name, store_trace_name },
	{ CTL_TRACE_ENABLE, CTL_TRACE, "enable", show_trace_enable, store_trace_enable },
	{ CTL_TRACE_CGROUP, CTL_TRACE, "cgroup", show_trace_cgroup, store_trace_cgroup },
	{ CTL_DEVICE, CTL_ROOT, "device", NULL, NULL },
	{ CTL_DEVICE_STACK, CTL_DEVICE, "stack", show_device_stack, NULL },
	{ CTL_DEVICE_LOST_WRITES, CTL_DEVICE, "lost_writes", show_device_lost_writes, NULL },
	{ CTL_FUSE, CTL_ROOT, "fuse", NULL, NULL },
	{ CTL_FUSE_TRANSPORT, CTL_FUSE, "transport", show_fuse_transport, NULL },
	{ CTL_FUSE_RING_DEPTH, CTL_FUSE, "ring_depth", show_fuse_ring_depth, NULL },
};

const size_t ctl_nr_nodes = sizeof(ctl_nodes) / sizeof(ctl_nodes[0]);
