/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crash_dedup.h - crash states that are byte-identical and have passed the
 * same marks, found from their extent maps without reading data: the first
 * of each class is checked, the others are folded into it and take its
 * verdict.
 *
 * A state's canonical form is the source of each of its bytes: a byte
 * offset into the log (an entry's data), zeros (a discard), or BASE (no
 * entry covers it).  Two states whose forms are equal read the same bytes
 * from the same sources: a dropped or torn write that a later write of
 * the state overwrites whole leaves the form of the state without it.
 * Data that happens to be equal in two entries, or equal to BASE, is not
 * looked at, so such states are not folded.  The form is compared by a
 * hash of DEDUP_LANES lanes of 61 bits that is a sum over the form's
 * ranges, so a state's is the durable layer's (taken once per layer) with
 * the state's own ranges put in: its cost is the state's own entries.
 *
 * The key is the form and the marks the state's point has passed.  A
 * checker may judge the bytes against what the application had promised
 * by then (RQDISK_CRASH_MARKS): two states with the same bytes at points
 * with different marks before them deserve different verdicts exactly
 * when a promise never reached the disk, so they are never folded.  The
 * marks before a point are a prefix of the log's marks, so their count
 * names the whole list (and the count per name) of the marks passed.
 */
#ifndef RQDISK_CRASH_DEDUP_H
#define RQDISK_CRASH_DEDUP_H

#include <stdbool.h>
#include <stdint.h>

#include <bsd/sys/tree.h>

#include "crash_log.h"
#include "crash_overlay.h"
#include "crash_report.h"
#include "crash_state.h"

#define DEDUP_LANES 4

/*
 * A canonical form's hash (equal keys are taken for equal forms), and the
 * marks passed; or, for a state no other shares the marks of, lone: a
 * number of its own and no hash.
 */
struct dedup_key {
	uint64_t h[DEDUP_LANES];
	uint64_t lone;
	uint64_t marks;
};

/* A lane of the hash: its r's powers r^(v * 256^c), 1 / (r - 1), and its phi's seed. */
struct dedup_lane {
	uint64_t pow[8][256];
	uint64_t inv_r_1;
	uint64_t seed;
};

/* The durable layer states are built on, its form's hash once taken, and the lanes. */
struct dedup_durable {
	struct ovl_layer *layer;
	bool hashed;
	size_t hashed_upto; /* the layer hashed: the one of entries [0, upto) */
	uint64_t h[DEDUP_LANES];
	bool lanes_ready;
	struct dedup_lane lane[DEDUP_LANES];
};

/* The key of the state spec names; d is the caller's layer, advanced to spec's flush. */
int dedup_key_of(const struct crash_log *log, const struct crash_spec *spec,
		 struct dedup_durable *d, struct dedup_key *key);
/* The layer's reference dropped, d emptied. */
void dedup_durable_put(struct dedup_durable *d);

struct dedup_waiting {
	char *id;
	enum crash_class cls;
};

/* The first state of a class of identical states: the one checked. */
struct dedup_rep {
	RB_ENTRY(dedup_rep) node;
	struct dedup_key key;
	uint64_t ordinal;         /* among the run's states that are checked, from 0 */
	/* for a state this process checks: its ID, its verdict once known, and who waits for it */
	char *id;
	bool done;
	enum check_result result;
	int exit;
	struct dedup_waiting *waiting;
	size_t nr_waiting;
	struct dedup_rep *next_in_flight;
};
RB_HEAD(dedup_reps, dedup_rep);

struct crash_dedup {
	const struct crash_log *log;
	struct dedup_durable durable; /* its own: the run's states are built apart from this */
	struct dedup_reps reps;
	uint64_t nr_reps, nr_folded, nr_lone;
	/* the first state of the states with run_marks marks passed; its ID while it has no key */
	struct dedup_rep *run_first;
	struct crash_id *run_first_id;
	uint64_t run_marks;
	struct dedup_rep *in_flight; /* checked here, verdict not yet known */
	struct report *report;       /* where folded states are reported; NULL: --list */
};

void dedup_init(struct crash_dedup *d, const struct crash_log *log, struct report *report);
void dedup_free(struct crash_dedup *d);

/*
 * The state id, taken in the run's order: 0 and *rep a new class it opens
 * (its ordinal the number of classes before it), or 1 and *rep the class
 * of the earlier state it is identical to.  -EINVAL (id names no state of
 * the log), -ENOMEM.
 */
int dedup_add(struct crash_dedup *d, const struct crash_id *id, struct dedup_rep **rep);
/* rep, a new class, is checked here: its verdict is awaited for the states folded into it. */
int dedup_mine(struct crash_dedup *d, struct dedup_rep *rep, const struct crash_id *id);

/*
 * id, folded into rep (checked here): reported with rep's verdict, now if
 * it is known, else once it is.  0, -ENOMEM.
 */
int dedup_fold(struct crash_dedup *d, struct dedup_rep *rep, const struct crash_id *id,
	       enum crash_class cls);

/* The report's hook: a state was checked; the states folded into it are reported. */
void dedup_checked(void *ctx, const char *id, enum check_result result, int exit);

#endif
