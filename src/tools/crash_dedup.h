/*
 * crash_dedup.h - crash states that are byte-identical and have passed the
 * same marks, found from their extent maps without reading data: the first
 * of each class is checked, the others are folded into it and take its
 * verdict.
 *
 * A state's canonical form is its map resolved over the whole image: the
 * rising list of pieces (start, end, source), where the source is a byte
 * offset into the log (an entry's data), or zeros (a discard), and bytes
 * no piece covers are BASE's; pieces that continue each other (the next
 * byte of the same source) are one.  Two states whose forms are equal
 * read the same bytes from the same sources: a dropped or torn write that
 * a later write of the state overwrites whole leaves the form of the
 * state without it.  Data that happens to be equal in two entries, or
 * equal to BASE, is not looked at, so such states are not folded.
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

/* A canonical form hashed to 128 bits (equal keys are taken for equal forms); the marks passed. */
struct dedup_key {
	uint64_t h[2];
	uint64_t pieces;
	uint64_t marks;
};

/* The key of the state spec names; *durable is the caller's layer, advanced to spec's flush. */
int dedup_key_of(const struct crash_log *log, const struct crash_spec *spec,
		 struct ovl_layer **durable, struct dedup_key *key);

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
	struct ovl_layer *durable; /* its own: the run's states are built apart from this */
	struct dedup_reps reps;
	uint64_t nr_reps, nr_folded;
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
