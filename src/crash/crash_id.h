/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crash_id.h - the IDs that name the crash states of a log, as text.
 *
 *   ID    = POINT [ "+drop:" I { "," I } ] [ "+torn:" E "@" A "/" K ]
 *   POINT = "flush:" K | "fua:" K | "mark:" NAME [ "#" K ] | "entry:" N | "end"
 *
 * NAME is the mark's bytes, each outside '!'..'~' or one of "%+#," as %XX;
 * numbers are decimal without leading zeros; drop indices strictly rise.
 */
#ifndef RQDISK_CRASH_ID_H
#define RQDISK_CRASH_ID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crash_log.h"

enum crash_point_kind { PT_FLUSH, PT_FUA, PT_MARK, PT_ENTRY, PT_END };

struct crash_id {
	enum crash_point_kind kind;
	uint64_t k;      /* flush, fua: which (from 1); mark: which of that name (1); entry: N */
	char *name;      /* a mark's name, decoded (malloc'd, NUL-ended) */
	size_t name_len;
	uint64_t *drop;  /* entries lost, strictly rising */
	size_t nr_drop;
	bool torn;
	uint64_t torn_e, torn_a, torn_k; /* entry, atomic unit in bytes, units persisted */
};

/* 0 or -EINVAL with one line in why; -ENOMEM. */
int crash_id_parse(const char *s, struct crash_id *id, char *why, size_t whylen);
/* The ID's text, malloc'd, or NULL when out of memory. */
char *crash_id_format(const struct crash_id *id);
void crash_id_free(struct crash_id *id);
int crash_id_copy(struct crash_id *dst, const struct crash_id *src);

/*
 * The marks a state at pos has passed, as RQDISK_CRASH_MARKS spells them:
 * NAME=COUNT for each name, in the order the names first appear in the
 * log, separated by single spaces, NAME spelled as in a state ID; "" when
 * none.  NULL when out of memory.
 */
char *crash_marks_text(const struct crash_log *log, size_t pos);

/* A decimal number at *p, no sign, no leading zero, at most 2^62: *p moved past it. */
bool crash_id_number(const char **p, uint64_t *out);

/* At most max bytes of s for a message, each outside '!'..'~' as '?'; out holds max + 1. */
const char *crash_printable(const char *s, size_t max, char *out);

#endif
