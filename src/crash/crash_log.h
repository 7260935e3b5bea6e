/* SPDX-License-Identifier: BSD-3-Clause */
/* crash_log.h - a dm-log-writes log read and checked whole: its entries, indexed as replay-log numbers them. */
#ifndef RQDISK_CRASH_LOG_H
#define RQDISK_CRASH_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crash_marks.h"
#include "log_writes.h"

/* Every flag this reader knows; any other bit refuses the log. */
#define LOG_KNOWN_FLAGS                                                                            \
	(LOG_FLUSH_FLAG | LOG_FUA_FLAG | LOG_DISCARD_FLAG | LOG_MARK_FLAG | LOG_METADATA_FLAG)

/* One entry, in bytes of the image; its data points into the log, never copied. */
struct crash_entry {
	uint64_t off, len;   /* the range written or discarded; 0, 0 for a flush or a mark */
	uint64_t flags;      /* LOG_*_FLAG */
	const uint8_t *data; /* a write's len bytes in the log, or NULL */
	const char *mark;    /* a mark's name (mark_len bytes, no NUL), or NULL */
	size_t mark_len;
};

struct crash_log {
	const uint8_t *map; /* the whole log, mapped read-only (or the caller's buffer) */
	size_t map_len;
	bool mapped;
	int fd; /* when mapped: the file, kept open to see it shrink */
	uint32_t sectorsize;
	uint64_t image_size;
	size_t nr;
	struct crash_entry *e;
	size_t *flushes, nr_flushes; /* indices of FLUSH entries, in order */
	size_t *fuas, nr_fuas;       /* of FUA entries */
	size_t *marks, nr_marks;     /* of MARK entries */
	struct crash_marks names;    /* the marks by name */
	/*
	 * The first gap: the LOG_WRITES_GAP_MARK entry, and the LOG_WRITES_GAP_END_MARK
	 * entry after it (nr when logging stayed off); or a LOG_WRITES_GAP_END_MARK
	 * with none before it (gap_off -1: logging was off from the start); or a
	 * LOG_WRITES_FLUSH_FAILED_MARK (gap_on nr: what came before may be lost).
	 * gap_off is -1 too when the log has none (gap_kind GAP_NONE).  A state
	 * past gap_off + 1 misses writes, or holds some the disk lost.
	 */
	enum crash_gap_kind { GAP_NONE, GAP_OFF, GAP_FROM_START, GAP_FLUSH_FAILED } gap_kind;
	long gap_off;
	size_t gap_on;
	/*
	 * rqdisk's record in block 0 (log_writes.h): the log ends in an end mark
	 * when whole; rq_flags LOG_RQDISK_*, rq_error the errno that stopped it.
	 */
	bool rqdisk;
	uint32_t rq_flags, rq_error;
	bool ended; /* its last entry is the end mark */
};

/* A write or a discard: an entry that changes the image. */
static inline bool crash_entry_changes(const struct crash_entry *e)
{
	return e->len && !(e->flags & LOG_MARK_FLAG);
}

/*
 * Checks and indexes the log in buf (kept by the caller while log is used)
 * for an image of image_size bytes.  0, or -EINVAL with one line in why
 * naming the entry ("entry 7: ..."), or -ENOMEM.
 */
int crash_log_parse(const uint8_t *buf, size_t len, uint64_t image_size, struct crash_log *log,
		    char *why, size_t whylen);

/* The same on a file, mapped: why starts with the path. */
int crash_log_open(const char *path, uint64_t image_size, struct crash_log *log, char *why,
		   size_t whylen);

/*
 * A log from crash_log_open still as it was read: 0, or -EIO with one line
 * in why (it starts with path) when the file was truncated since, which
 * makes what was read of it, and every state built since, untrustworthy.
 */
int crash_log_intact(const struct crash_log *log, const char *path, char *why, size_t whylen);

void crash_log_free(struct crash_log *log);
/* The one-line reason of a refusal into why; returns -EINVAL. */
int crash_refuse(char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Whether a state at pos replays a log that misses writes: it lies past a gap. */
static inline bool crash_log_past_gap(const struct crash_log *log, size_t pos)
{
	return log->gap_kind != GAP_NONE && (long)pos > log->gap_off + 1;
}

/* The first gap in a phrase ("logging was off from entry 4 to 5"), and what it costs. */
void crash_log_gap_text(const struct crash_log *log, char *buf, size_t len);
const char *crash_log_gap_loss(const struct crash_log *log); /* "writes missing" */

/*
 * A log rqdisk wrote that was cut short: logging stopped (the record says
 * so), or it lacks its end mark (its writer was killed).  Its states are
 * real, but the writes after its last entry are in none of them.
 */
static inline bool crash_log_cut(const struct crash_log *log)
{
	return log->rqdisk && ((log->rq_flags & LOG_RQDISK_STOPPED) ||
			       ((log->rq_flags & LOG_RQDISK_ENDS) && !log->ended));
}

/* Why it was cut, in a phrase ("logging stopped after entry 3: No space left on device"). */
void crash_log_cut_text(const struct crash_log *log, char *buf, size_t len);

/*
 * The log has neither marks nor FUA entries, as QEMU's blklogwrites writes
 * them (it has no marks and never sets FUA); rqdisk's and the kernel's
 * logs end with a mark.
 */
static inline bool crash_log_qemu_shaped(const struct crash_log *log)
{
	return !log->nr_marks && !log->nr_fuas;
}

/* The index of the last FLUSH entry before pos, or -1 when there is none. */
long crash_log_last_flush(const struct crash_log *log, size_t pos);

#endif
