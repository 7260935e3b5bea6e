/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replay.h - a trace run through the queue, an elevator and a device stack
 * (the timing model and other filters, device.h) on a virtual clock: the
 * same input gives the same numbers on every run.
 */
#ifndef RQDISK_REPLAY_H
#define RQDISK_REPLAY_H

#include <stdio.h>

#include "blkcg.h"
#include "blkdev.h"

/* One I/O of the trace, as its submitter issued it. */
struct replay_io {
	uint64_t time; /* ns from the start of the trace */
	enum req_op op;
	unsigned int flags; /* REQ_BARRIER, REQ_FUA, REQ_SYNC */
	sector_t sector;
	unsigned int nr_sectors;
	pid_t pid;
	/*
	 * The submitting CPU, whose software queue the I/O goes to on a
	 * multi-queue queue: a blktrace record's cpu; an iolog's I/O number
	 * (from 0), which names none, so that its I/Os take the hardware
	 * queues in turn.
	 */
	unsigned int cpu;
	/*
	 * Its cgroup, which its bios carry: a blktrace record's cgroup id
	 * (its Q record marked __BLK_TA_CGROUP), named "/ID"; NULL (the
	 * root) for the rest, and for every I/O of an iolog.
	 */
	const struct blkcg *blkcg;
};

/*
 * What a loaded trace keeps to, so that no sum on the virtual clock or on
 * sectors can wrap: times up to 2^62 ns (146 years, with room above for
 * every elevator's "now + expire"), and every I/O ends where a 64-bit byte
 * offset still reaches.
 */
#define REPLAY_MAX_NS (1ull << 62)
#define REPLAY_MAX_SECTOR (UINT64_MAX >> SECTOR_SHIFT)

struct replay_trace {
	struct replay_io *ios; /* in issue order */
	size_t nr;
	sector_t capacity; /* the end of the highest I/O: the disk is at least this big */
	unsigned int max_bytes; /* the largest data I/O */
	struct blkcg_table cgroups; /* what the I/Os' blkcg point at */
};

/*
 * Load a trace: blktrace's binary format (NAME.blktrace.N or one file; its
 * Q records) or a fio iolog, version 2 or 3.  0, or -errno with a one-line
 * reason in why.
 */
int replay_load(const char *name, struct replay_trace *t, char *why, size_t whylen);
int replay_load_iolog(FILE *f, const char *name, struct replay_trace *t, char *why,
		      size_t whylen);
void replay_trace_free(struct replay_trace *t);

struct replay_config {
	const char *elevator;
	/*
	 * A --model spec, "hdd:...", "ssd:...": the filter "model:SPEC", on
	 * top; NULL or "none": no model filter.
	 */
	const char *model;
	/* filter specs "NAME[:ARGS]" below it, top first (device.h): DEV_MAX_LAYERS - 1 in all */
	const char *const *filters;
	unsigned int nr_filters;
	unsigned int depth; /* 0: issue at the trace's times; else keep this many out */
	/*
	 * 0: the 2.6 queue; else the multi-queue queue with this many
	 * hardware queues (the I/O's cpu modulo it picks one), each of
	 * hw_queue_depth driver tags (0: REPLAY_DEF_HW_QUEUE_DEPTH).
	 */
	unsigned int hw_queues;
	unsigned int hw_queue_depth;
	struct queue_limits limits;
	sector_t capacity;  /* 0: the trace's */
	void (*progress)(void *arg, size_t done, size_t total);
	void *progress_arg;
};

/* Latencies of one direction, in ns, in completion order. */
struct replay_lat {
	uint64_t *ns;
	size_t nr, alloc;
};

struct replay_result {
	uint64_t requests; /* taken by the simulated disk below every filter */
	uint64_t merges;
	uint64_t bytes;    /* read and written */
	uint64_t start_ns, end_ns; /* first submission, last completion */
	uint64_t seek_sectors; /* head travel between consecutive data requests it took */
	uint64_t barriers;
	uint64_t errors; /* I/Os the queue refused (-EINVAL) or failed: not in lat */
	struct replay_lat lat[2]; /* reads, writes */
	unsigned int nr_hw_queues; /* 0 on the 2.6 queue */
	uint64_t *hw_dispatched;   /* multi-queue: each hardware queue's mq/N/dispatched */
};

int replay_run(const struct replay_trace *t, const struct replay_config *cfg,
	       struct replay_result *res, char *why, size_t whylen);
void replay_result_free(struct replay_result *res);

/* The summary of one direction's latencies, in ns. */
struct lat_summary {
	uint64_t mean, p50, p99, max;
};

int replay_lat_summary(const struct replay_lat *lat, struct lat_summary *s);
void replay_print_header(FILE *f, bool csv, unsigned int nr_hw_queues);
int replay_print_row(FILE *f, bool csv, const char *elevator, const struct replay_result *res);
void replay_print_latencies(FILE *f, const char *elevator, const struct replay_result *res);

#endif
