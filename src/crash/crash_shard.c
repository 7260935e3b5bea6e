/* SPDX-License-Identifier: BSD-3-Clause */
/* crash_shard.c - --shard K/N: the share of a run's states one process checks, the same on every host. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "crash_log.h"
#include "crash_shard.h"

/* Decimal digits at *p (no sign, no space), at most SHARD_MAX. */
static bool take(const char **p, unsigned long *out)
{
	const char *s = *p;
	unsigned long v = 0;

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > SHARD_MAX)
			return false;
	}
	*p = s;
	*out = v;
	return true;
}

int crash_shard_parse(const char *s, struct crash_shard *sh, char *why, size_t whylen)
{
	const char *p = s;
	unsigned long k, n;

	if (!take(&p, &k) || *p++ != '/' || !take(&p, &n) || *p)
		return crash_refuse(why, whylen, "--shard takes K/N, shard K of N (N up to %u), not",
				    SHARD_MAX);
	if (!n)
		return crash_refuse(why, whylen, "--shard: N, the number of shards, is 0 in");
	if (!k)
		return crash_refuse(why, whylen, "--shard: K counts from 1, not 0, in");
	if (k > n)
		return crash_refuse(why, whylen, "--shard: K is past N in");
	sh->k = k;
	sh->n = n;
	return 0;
}

int crash_pick_next(struct crash_pick *p, struct crash_id *id, enum crash_class *cls,
		    struct dedup_rep **folded_into)
{
	struct dedup_rep *rep;
	int ret;

	for (;;) {
		ret = crash_gen_next(p->gen, id, cls);
		if (ret <= 0)
			return ret;
		p->nr_states++;
		if (!p->dedup) {
			*folded_into = NULL;
			if (crash_shard_owns(&p->shard, p->nr_checked++))
				return 1;
			crash_id_free(id);
			continue;
		}
		ret = dedup_add(p->dedup, id, &rep);
		if (ret < 0) {
			crash_id_free(id);
			return ret;
		}
		p->nr_checked += !ret;
		if (!crash_shard_owns(&p->shard, rep->ordinal)) {
			crash_id_free(id);
			continue;
		}
		*folded_into = ret ? rep : NULL;
		/* a new class is checked here: the states folded into it wait for its verdict */
		if (!ret && (ret = dedup_mine(p->dedup, rep, id))) {
			crash_id_free(id);
			return ret;
		}
		return 1;
	}
}
