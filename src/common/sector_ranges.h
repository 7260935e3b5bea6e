/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sector_ranges.h - a set of disk sectors as sorted disjoint ranges, read
 * and written in the fault filter's badblocks syntax (S-E/S-E/S, inclusive,
 * in 512-byte sectors): what rqdisk-extents prints and rqdisk-crash's
 * --only and --except take.
 */
#ifndef RQDISK_SECTOR_RANGES_H
#define RQDISK_SECTOR_RANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Sectors past this are refused: their byte offsets must fit 64 bits. */
#define SECTOR_RANGES_LIMIT (1ULL << 54)
/* More ranges than this in one set are refused (a file of input is untrusted). */
#define SECTOR_RANGES_MAX 1000000u

/* Sectors [start, end). */
struct sector_range {
	uint64_t start, end;
};

struct sector_ranges {
	struct sector_range *r;
	size_t nr, cap;
	/* The most ranges it may hold, 0: SECTOR_RANGES_MAX (an I/O path may want fewer). */
	size_t max;
};

/* Adds [start, end), merging with the ranges it overlaps or touches: 0, -ENOMEM, -ENOSPC. */
int sector_ranges_add(struct sector_ranges *s, uint64_t start, uint64_t end);

/* Removes [start, end), splitting a range it falls inside: 0, -ENOMEM, -ENOSPC (s unchanged). */
int sector_ranges_clear(struct sector_ranges *s, uint64_t start, uint64_t end);

/* A deep copy of from, its max too, into to (overwritten, not freed): 0, -ENOMEM. */
int sector_ranges_copy(struct sector_ranges *to, const struct sector_ranges *from);

/*
 * Adds the ranges of text (len bytes, no NUL needed): S-E or S, joined by
 * '/', or one or more per line (whitespace and newlines also join them, as
 * a file of them or fault/badblocks lists them).  0, or -EINVAL with one
 * line in why naming what is wrong, or -ENOMEM.  Nothing is added on error.
 */
int sector_ranges_parse(struct sector_ranges *s, const char *text, size_t len, char *why,
			size_t whylen);

/* The first range holding sector x or after it, NULL for none: O(log n), for an I/O path. */
const struct sector_range *sector_ranges_next(const struct sector_ranges *s, uint64_t x);

/* Whether any sector of [start, end) is in the set. */
bool sector_ranges_touch(const struct sector_ranges *s, uint64_t start, uint64_t end);

/* The sectors of [0, end) not in s, into out (emptied first): 0, -ENOMEM, -ENOSPC. */
int sector_ranges_complement(const struct sector_ranges *s, uint64_t end,
			     struct sector_ranges *out);

/* Prints s as S-E/S-E/S (a lone sector as S) and a newline; nothing for an empty set. */
int sector_ranges_print(const struct sector_ranges *s, FILE *f);

/* Empties s and frees its ranges; its max stays. */
void sector_ranges_free(struct sector_ranges *s);

#endif
