/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crash_shard.h - a run's states split into N deterministic shares, so that
 * N processes (on as many hosts) check the run between them, and which
 * states one process reports on.
 *
 * The run's states come in one order (the generator's); the states it
 * checks are numbered in that order from 0, after byte-identical states
 * are folded (crash_dedup.h), and the i-th belongs to shard i mod N + 1.
 * A folded state belongs to the shard of the state it was folded into,
 * which reports it with that state's verdict: the N shards report every
 * state of the run exactly once, each as the whole run would.
 */
#ifndef RQDISK_CRASH_SHARD_H
#define RQDISK_CRASH_SHARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crash_dedup.h"
#include "crash_state.h"

#define SHARD_MAX 1000000u

/* --shard K/N: k from 1 to n; n 0 is the whole run. */
struct crash_shard {
	unsigned long k, n;
};

/* s as K/N: 0, or -EINVAL with what is wrong in why (the caller adds s). */
int crash_shard_parse(const char *s, struct crash_shard *sh, char *why, size_t whylen);

static inline bool crash_shard_owns(const struct crash_shard *sh, uint64_t ordinal)
{
	return !sh->n || ordinal % sh->n == sh->k - 1;
}

/* The states one process reports on: the generator's, through dedup (or not) and the shard. */
struct crash_pick {
	struct crash_gen *gen;
	struct crash_dedup *dedup; /* NULL: every state is checked (--no-dedup) */
	struct crash_shard shard;
	uint64_t nr_states;        /* of the whole run, so far */
	uint64_t nr_checked;       /* of the whole run: states not folded */
};

/*
 * The next state of this shard, in the run's order: 1, and *folded_into
 * NULL for a state to check, or the class it was folded into (checked by
 * this shard too); 0 at the end; <0 an error (-ENOMEM, or -EINVAL for a
 * state not of the log, which the generator never makes).
 */
int crash_pick_next(struct crash_pick *p, struct crash_id *id, enum crash_class *cls,
		    struct dedup_rep **folded_into);

#endif
