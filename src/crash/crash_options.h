/* SPDX-License-Identifier: BSD-3-Clause */
/* crash_options.h - rqdisk-crash's command line: what a run is asked to do. */
#ifndef RQDISK_CRASH_OPTIONS_H
#define RQDISK_CRASH_OPTIONS_H

#include <stdbool.h>

#include "crash_aim.h"
#include "crash_shard.h"
#include "crash_state.h"

#define PROG "rqdisk-crash"

enum via { VIA_AUTO, VIA_FUSE, VIA_COPY };

#define DEFAULT_TIMEOUT_S 60

struct options {
	struct crash_at at;
	struct crash_gen_opts gen;
	bool atomic_set;
	const char *state;
	const char *output;
	const char *csv;
	enum via via;
	unsigned int jobs, timeout_s;
	bool progress;
	bool loop;
	bool list, no_dedup;
	struct crash_shard shard;
	struct crash_aim aim; /* --only, --except: none given, an empty set */
	const char *base, *log;
	char **check; /* NULL: none */
};

/* Options before "--", CHECK after it.  0, 1 (exit 0) or <0 (exit 2; said). */
int parse_options(int argc, char **argv, struct options *o);
/* No CHECK where one is needed (all but --list and --state -o): said. */
bool check_missing(const struct options *o);

#endif
