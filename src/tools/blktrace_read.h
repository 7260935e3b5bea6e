/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * blktrace_read.h - reading blktrace binary traces back (rqdisk's own, or
 * the kernel's): every NAME.blktrace.N file of a trace, merged into one
 * array in time order, in host byte order whatever endianness wrote it.
 */
#ifndef RQDISK_BLKTRACE_READ_H
#define RQDISK_BLKTRACE_READ_H

#include <linux/blktrace_api.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One record. */
struct bt_event {
	uint64_t time;     /* ns since the trace started */
	uint64_t sector;
	uint32_t bytes;
	uint32_t action;   /* BLK_TA_* with the BLK_TC_ACT() category bits; never __BLK_TA_CGROUP:
			    * the reader takes the cgroup id off the pdu, into cgroup_id */
	uint32_t pid;
	uint32_t sequence;
	uint32_t cpu;
	uint16_t error;
	uint64_t split_at; /* BLK_TA_SPLIT: the sector where the second part starts */
	char comm[16];     /* BLK_TN_PROCESS: the process name, NUL-terminated */
	uint64_t cgroup_id; /* a __BLK_TA_CGROUP record's cgroup (its kernfs id), else 0 */
};

struct bt_trace {
	struct bt_event *ev; /* ordered by time, then cpu, then sequence */
	size_t nr;
};

/*
 * Load the trace NAME: the files NAME.blktrace.N that exist (every N, gaps
 * allowed), or NAME itself when there are none.  Each file may be in
 * either byte order.  Returns 0, or -errno with a one-line reason in why
 * (no such trace, bad magic, unknown version, truncated record: a record's
 * reason names the file and the record's byte offset).  An empty file is a
 * trace of no records.
 */
int bt_trace_load(const char *name, struct bt_trace *t, char *why, size_t whylen);
void bt_trace_free(struct bt_trace *t);

/* The action without its category bits (__BLK_TA_QUEUE, ...). */
static inline unsigned int bt_act(const struct bt_event *e)
{
	return e->action & 0xffff;
}

/* Whether the record carries category cat (BLK_TC_FLUSH, BLK_TC_FUA, ...). */
static inline bool bt_cat(const struct bt_event *e, unsigned int cat)
{
	return ((e->action >> BLK_TC_SHIFT) & cat) != 0;
}

static inline bool bt_is_notify(const struct bt_event *e)
{
	return bt_cat(e, BLK_TC_NOTIFY);
}

#endif
