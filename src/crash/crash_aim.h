/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crash_aim.h - a run aimed at some sectors (--only RANGES, --except
 * RANGES, RANGES as @FILE): what it was given, the sectors whose writes
 * may be lost, and the lost writes of a failing state named for its line.
 */
#ifndef RQDISK_CRASH_AIM_H
#define RQDISK_CRASH_AIM_H

#include <stdbool.h>
#include <stddef.h>

#include "crash_id.h"
#include "crash_log.h"
#include "sector_ranges.h"

/* A file of ranges larger than this is refused: rqdisk-extents writes far less. */
#define AIM_FILE_MAX (64u << 20)

/* One --only or --except: what names it in the report (FILE, or the RANGES text), its sectors. */
struct crash_aim_source {
	char *label;
	struct sector_ranges r;
};

struct crash_aim {
	bool except;		       /* --except: given names the sectors kept */
	struct sector_ranges given;    /* the ranges as given (all --only's, or --except's) */
	struct sector_ranges may_lose; /* given, or its complement: the generator's aim */
	char *label;		       /* all the sources' labels, space-separated */
	struct crash_aim_source *src;  /* each option's, in the order given */
	size_t nr_src;
};

/*
 * One --only (except false) or --except ARG: RANGES, or @FILE of them.
 * 0, or -EINVAL with one line in why (it names the option and the
 * problem), -ENOMEM.  --only and --except do not go together.
 */
int crash_aim_add(struct crash_aim *a, bool except, const char *arg, char *why, size_t whylen);

/* The aim against a disk of sectors sectors: -EINVAL with one line when a range lies past it. */
int crash_aim_check(const struct crash_aim *a, uint64_t sectors, char *why, size_t whylen);

/*
 * The writes the state id loses or tears in the aimed sectors, for the
 * report, by the --only they touch: "lost in FILE: entry 12 (sectors
 * 2048-2055); torn in FILE: entry 17 (sectors 4096-4103); lost in FILE2:
 * ..."; with --except, "lost in what --except leaves of FILE: ...".
 * malloc'd; NULL when it loses none, or out of memory.
 */
char *crash_aim_lost(const struct crash_aim *a, const struct crash_log *log, const char *id);

void crash_aim_free(struct crash_aim *a);

#endif
