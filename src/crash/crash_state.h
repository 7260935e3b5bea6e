/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crash_state.h - the crash states of a log: points in it, the subsets of the
 * volatile writes lost or torn there; crash_id.h names each state.
 */
#ifndef RQDISK_CRASH_STATE_H
#define RQDISK_CRASH_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crash_id.h"
#include "crash_log.h"
#include "sector_ranges.h"

/* A state's class, as the report counts them. */
enum crash_class { CLASS_PREFIX, CLASS_DROP, CLASS_TORN, CLASS_SAMPLE, NR_CLASSES };

extern const char *const crash_class_names[NR_CLASSES];

/* What a state is, resolved against its log: the overlay is built from this. */
struct crash_spec {
	size_t pos;            /* entries [0, pos) are applied ... */
	const uint64_t *drop;  /* ... but these (rising) */
	size_t nr_drop;
	long torn_e;           /* -1, or the entry of which only torn_bytes persisted */
	uint64_t torn_bytes;
};

/* The state the ID names in log: 0, or -EINVAL with one line in why (it names the ID). */
int crash_resolve(const struct crash_log *log, const struct crash_id *id, struct crash_spec *spec,
		  char *why, size_t whylen);

/* The entries lost at pos: writes and discards after the last flush, FUA ones aside. */
size_t crash_volatile(const struct crash_log *log, size_t pos, size_t *out);

/* --at: which points. */
#define AT_FLUSH (1u << 0)
#define AT_FUA (1u << 1)
struct crash_at {
	unsigned int kinds;
	char **marks; /* --at mark:NAME, decoded */
	size_t *mark_lens;
	size_t nr_marks;
	uint64_t every; /* --at N, or 0 */
	bool flush_by_default; /* AT_FLUSH because no --at was given */
};

struct crash_point {
	enum crash_point_kind kind;
	uint64_t k;
	size_t pos;
	const char *name; /* into the log */
	size_t name_len;
};

/*
 * Every point at asks for matches something in log: 0, or -EINVAL with one
 * line in why naming the --at that matches nothing, so that no run checks
 * only the end and reads as an all-clear.  -ENOMEM.
 */
int crash_at_check(const struct crash_log *log, const struct crash_at *at, char *why,
		   size_t whylen);

/* The points, in log order, one per position: 0, -ENOMEM. */
int crash_points(const struct crash_log *log, const struct crash_at *at, struct crash_point **out,
		 size_t *nr);

/* The disk's atomic units of a bytes that entry e writes into, a unit partly written whole. */
uint64_t crash_torn_units(const struct crash_entry *e, uint64_t a);

/* The torn lengths tried for a write of n atomic units: 1, n/2, n-1 (distinct, 0 < k < n). */
size_t crash_torn_ks(uint64_t n, uint64_t ks[3]);

struct crash_gen_opts {
	unsigned int drop;     /* --drop K */
	unsigned int sample;   /* --sample N */
	uint64_t seed;
	bool torn;
	uint32_t atomic;       /* bytes */
	bool past_gaps;        /* also the points past a gap in the log */
	/*
	 * --only (--except: its complement): only the volatile writes that
	 * touch these sectors may be lost or torn, or NULL for any.  The
	 * states are the unaimed run's whose lost and torn writes all touch
	 * them, bar --sample's random draws, which are drawn among those
	 * writes alone.
	 */
	const struct sector_ranges *aim;
};

/* Whether entry e writes or discards any sector of aim (512-byte sectors of the image). */
bool crash_entry_aimed(const struct crash_entry *e, const struct sector_ranges *aim);

/* The states of a log, one at a time. */
struct crash_gen {
	const struct crash_log *log;
	struct crash_gen_opts o;
	struct crash_point *pts;
	size_t nr_pts, pt;
	size_t nr_skipped;       /* points past a gap, not made (past_gaps unset) */
	int phase;
	size_t *vol, nr_vol;
	size_t comb[64], comb_k; /* drop: the current subset, as indices into vol */
	size_t torn_w, torn_i;   /* torn: the write (index into vol) and which k */
	unsigned int drawn, tries;
	uint64_t rng;
	uint64_t *seen;          /* sample: subsets drawn at this point, as bitmaps */
	size_t seen_words, nr_seen;
};

int crash_gen_init(struct crash_gen *g, const struct crash_log *log, const struct crash_at *at,
		   const struct crash_gen_opts *o);
/* The next state's ID and class: 1, 0 when there are no more, -ENOMEM. */
int crash_gen_next(struct crash_gen *g, struct crash_id *id, enum crash_class *cls);
/* How many states the generator will make, at most (saturating), for progress. */
uint64_t crash_gen_total(const struct crash_gen *g);
void crash_gen_free(struct crash_gen *g);

#endif
