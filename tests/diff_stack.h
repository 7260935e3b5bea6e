/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * diff_stack.h - the differential test of the crash lab: a sequence of
 * operations run through the real stack (the request queue and an
 * elevator, the write-cache filter or not, the log-writes filter, over a
 * memory backend whose requests end when the sequence says, in parts or
 * with errors), every answer the stack and rqdisk-crash's library give
 * checked against the reference disk (ref_disk.h); or (DF_FILE) over the
 * file backend on the daemon's io_uring loop, the kernel ending requests.
 * The model is fed the ops as the queue sees them; with the write cache,
 * above log-writes, the log records what reaches the medium below it
 * (its writebacks, in its order, and its flushes downward):
 *
 *   (0) the image read through the stack at the end, and the backend's,
 *       are states the model allows at the end;
 *   (1) a log with no gap replayed to its end is the backend's image,
 *       byte for byte; a log whose file filled up is cut short
 *       (crash_log_cut), and no other is;
 *   (2) every state the crash generator builds (drops, torn writes,
 *       samples, points of every kind) is one the model allows at a
 *       point it may be from: right after one of our marks, the mark's
 *       point; at the end of a whole log, the end; else one between the
 *       marks around it, where a flush (a FUA write) ended for a flush's
 *       (FUA's) state, any of them under the cache, whose flushes are
 *       its own.  Dedup folds only byte-identical states that passed the
 *       same marks, into a state the same shard checks: a checker that is
 *       a function of the bytes and RQDISK_CRASH_MARKS gives every state
 *       the same verdict with dedup, without, and in every shard; the
 *       shards of a --shard set report every state exactly once;
 *   (3) at every point rqdisk-crash covers where model and log meet
 *       exactly (a mark set while nothing was in flight, the end of a log
 *       not cut short), every state the model allows with at most --drop
 *       whole writes lost is built (unless the queue merges: then an
 *       entry is several writes; or under the cache: its entries are
 *       writebacks);
 *   (4) after a write-cache power cut the backend holds a state the model
 *       allows at the cut.
 *
 * Shared by check_differential (seeds and regression cases) and the fuzz
 * target (bytes decoded into a case).  No Check here: a disagreement is
 * returned, with the check and the state named.
 */
#ifndef RQDISK_DIFF_STACK_H
#define RQDISK_DIFF_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum diff_kind {
	DK_WRITE,   /* a sector, b sectors */
	DK_FUA,     /* the same, FUA */
	DK_DISCARD, /* a, b */
	DK_ZEROES,  /* a, b */
	DK_FLUSH,
	DK_END,     /* the backend ends the a-th request it holds (mod how many), whole */
	DK_PART,    /* ... the first b sectors of it (mod its size), the rest later */
	DK_FAIL,    /* ... a write: b sectors good, then an error */
	DK_WAIT,    /* every request ends */
	DK_MARK,    /* a mark, whatever is in flight */
	DK_QMARK,   /* every request ends, then a mark: model and log meet exactly here */
	DK_OFF,     /* log/enable 0 */
	DK_ON,      /* log/enable 1 */
	DK_CUT,     /* write-cache power cut (a % 3: all, random, torn), then restore */
	DK_LOGFAIL, /* the log's file can grow no more (as a full file system) */
	DK_TICK,    /* the clock on by a ms */
	NR_DK
};

struct diff_op {
	uint8_t kind;
	uint16_t a, b;
};

/* What a case may do; a random case uses only the features it is given. */
#define DF_ERRORS (1u << 0)   /* requests end in parts and with errors below */
#define DF_TOGGLE (1u << 1)   /* log/enable 0 and 1 while I/O runs */
#define DF_WCACHE (1u << 2)   /* the write-cache filter above log-writes */
#define DF_ATOMIC (1u << 3)   /* --torn with an atomic unit of 4 KiB, writes not aligned to it */
#define DF_OFF_OPEN (1u << 4) /* log-writes:enable=0 at open */
#define DF_LOGFAIL (1u << 5)  /* the log's file fills up */
#define DF_CUT (1u << 6)      /* power cuts of the write cache over the log */
#define DF_MERGES (1u << 7)   /* the queue merges: an entry may be several writes; no (3) */
#define DF_FILE (1u << 8)     /* the file backend on the io_uring loop: the kernel ends requests */
#define DF_WCFAIL (1u << 9)   /* with DF_WCACHE: the cache's requests below fail (DK_FAIL) */
#define DF_ALL 0x3ffu

/*
 * The features whose defects are fixed: make check's random seeds use
 * these.  A fix for one of the others adds it here (and flips its
 * regression case in check_differential.c to required).
 */
#define DIFF_FEATURES_REQUIRED DF_ALL

struct diff_case {
	const char *name;
	unsigned int features; /* what the ops may use (DF_*) */
	char elevator[16];
	uint32_t atomic;      /* the torn unit and the model's, bytes */
	unsigned int drop;    /* --drop */
	bool torn;            /* --torn */
	uint32_t wc_expire;   /* ms; with DF_WCACHE */
	bool disk_only;       /* checks (0) and (4) alone: the log is not looked at */
	bool wcache_below;    /* the write cache below log-writes: refused at open */
	bool wc_atomic;       /* write-cache:atomic=atomic, and the model holds the medium to it */
	struct diff_op *ops;
	size_t nr;
};

#define DIFF_DISK_SECTORS 96u /* small: every state is built and compared whole */
#define DIFF_MAX_OPS 160u

/* A random case of nr ops at most, from seed, using only features. */
void diff_random(struct diff_case *c, uint64_t seed, size_t nr, unsigned int features);
/* A case from any bytes (the fuzz target's input). */
void diff_decode(struct diff_case *c, const uint8_t *buf, size_t len, unsigned int features);
void diff_case_free(struct diff_case *c);
/* The case as a C initializer a regression case is kept as. */
void diff_print(FILE *f, const struct diff_case *c);

/*
 * Runs c: 0 when the stack, the log, rqdisk-crash and the model agree, 1
 * with the first disagreement in why (the check's number first), -1 when
 * the run itself could not be made (why says so).
 */
int diff_run(const struct diff_case *c, char *why, size_t whylen);

/*
 * Ops of c removed one at a time while it still disagrees (and the reason
 * holds must, unless NULL): the shortest found.
 */
void diff_shrink(struct diff_case *c, const char *must);

#endif
