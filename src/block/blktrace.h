/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * blktrace.h - the queue traced in blktrace's binary format (struct
 * blk_io_trace, version 7, native endian), a file per "cpu", so that
 * blkparse -i NAME, btt and iowatcher read it unchanged: NAME.blktrace.0 on
 * the 2.6 queue, NAME.blktrace.N for each hardware queue N of a
 * multi-queue one, whose number is the records' cpu.
 */
#ifndef RQDISK_BLKTRACE_H
#define RQDISK_BLKTRACE_H

#include <linux/blktrace_api.h>

#include "blkdev.h"

struct blk_trace;

/*
 * Start tracing q into its files NAME.blktrace.N: each made new, or,
 * where it is the file q's last trace made for N (a restart), truncated;
 * anything else there is refused (-EEXIST; -ELOOP for a symlink), and then
 * none is made or truncated.  Record times count from now on
 * q->clock.  Returns 0, or -errno with a one-line reason in why (-EBUSY
 * when q is already traced).  blk_trace_setup takes the queue lock,
 * __blk_trace_setup expects it held.
 */
int blk_trace_setup(struct request_queue *q, const char *name, char *why, size_t whylen);
int __blk_trace_setup(struct request_queue *q, const char *name, char *why, size_t whylen);

/*
 * Stop tracing q: everything recorded is on the files when this returns.
 * Returns 0, or -errno when the file could not be written whole.  Nothing
 * to stop is not an error.  The __ form expects the queue lock held.
 */
int blk_trace_remove(struct request_queue *q);
int __blk_trace_remove(struct request_queue *q);

/* Stop tracing q and let go of the last trace's files: the queue is going. */
void blk_trace_cleanup(struct request_queue *q);

/*
 * Remember NAME as q->blk_trace_name, where the next trace goes (the
 * control tree's); the stopped trace's files are let go: no restart of it.
 */
int blk_trace_set_name(struct request_queue *q, const char *name);

/*
 * The hooks, queue lock held; they cost one test when tracing is off.
 * what is a BLK_TA_* action; the category bits (read/write/flush/FUA/sync/
 * discard) come from the bio or request itself.  A request's record has its
 * position now, a completion (BLK_TA_COMPLETE) the whole range it was issued
 * with and its error; a split's, the first part with the sector where the
 * rest starts.  Records name device 240,0 and, as cpu, 0 on the 2.6 queue;
 * on a multi-queue one a bio's the submitter's hardware queue, a request's
 * the one it is on (the one that dispatched it, from D on).  The first
 * record of a pid follows a BLK_TN_PROCESS note with its name, in the same
 * file; message notes go to file 0.
 */
void __blk_add_trace_bio(struct request_queue *q, const struct bio *bio, uint32_t what);
void __blk_add_trace_rq(struct request_queue *q, const struct request *rq, uint32_t what);
/*
 * A message note (BLK_TN_MESSAGE): text, up to 127 bytes, as blkparse
 * shows it.  Lock held; nothing while not tracing.
 */
void blk_add_trace_msg(struct request_queue *q, const char *text);
void __blk_add_trace_split(struct request_queue *q, const struct bio *bio, sector_t at);

static inline void blk_add_trace_bio(struct request_queue *q, const struct bio *bio,
				     uint32_t what)
{
	if (q->blk_trace)
		__blk_add_trace_bio(q, bio, what);
}

static inline void blk_add_trace_rq(struct request_queue *q, const struct request *rq,
				    uint32_t what)
{
	if (q->blk_trace)
		__blk_add_trace_rq(q, rq, what);
}

static inline void blk_add_trace_split(struct request_queue *q, const struct bio *bio,
				       sector_t at)
{
	if (q->blk_trace)
		__blk_add_trace_split(q, bio, at);
}

#endif
