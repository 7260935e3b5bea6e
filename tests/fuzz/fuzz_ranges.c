/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_ranges.c - fuzz target: the sector ranges of rqdisk-crash's --only
 * and --except (and what rqdisk-extents prints), on any bytes, NULs too.
 * A refusal is one line and keeps nothing; a take is sorted, disjoint and
 * apart, below the limit, prints back as itself, is its complement's
 * complement, answers "touches" and "next" as a scan of its ranges does,
 * and a copy with a probe cleared holds none of it and the rest as before.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "sector_ranges.h"

#define TEXT_MAX 8192

/* Whether [a, b) meets a range of s, by a walk of them all. */
static bool touch_by_walk(const struct sector_ranges *s, uint64_t a, uint64_t b)
{
	for (size_t i = 0; i < s->nr; i++)
		if (a < b && s->r[i].start < b && a < s->r[i].end)
			return true;
	return false;
}

/* The first range ending after x, by a walk of them all; NULL for none. */
static const struct sector_range *next_by_walk(const struct sector_ranges *s, uint64_t x)
{
	for (size_t i = 0; i < s->nr; i++)
		if (s->r[i].end > x)
			return &s->r[i];
	return NULL;
}

static bool same(const struct sector_ranges *x, const struct sector_ranges *y);

/* [a, a+n) cleared from a copy of s: gone, and its neighbours as in s. */
static void check_clear(const struct sector_ranges *s, uint64_t a, uint64_t n)
{
	struct sector_ranges c;

	FUZZ_ASSERT(!sector_ranges_copy(&c, s));
	FUZZ_ASSERT(same(&c, s));
	FUZZ_ASSERT(!sector_ranges_clear(&c, a, a + n));
	FUZZ_ASSERT(!sector_ranges_touch(&c, a, a + n));
	if (a)
		FUZZ_ASSERT(sector_ranges_touch(&c, a - 1, a) == sector_ranges_touch(s, a - 1, a));
	FUZZ_ASSERT(sector_ranges_touch(&c, a + n, a + n + 1) ==
		    sector_ranges_touch(s, a + n, a + n + 1));
	for (size_t i = 1; i < c.nr; i++)
		FUZZ_ASSERT(c.r[i - 1].end < c.r[i].start && c.r[i].start < c.r[i].end);
	sector_ranges_free(&c);
}

static bool same(const struct sector_ranges *x, const struct sector_ranges *y)
{
	return x->nr == y->nr && (!x->nr || !memcmp(x->r, y->r, x->nr * sizeof(*x->r)));
}

static void check_taken(const struct sector_ranges *s)
{
	struct sector_ranges back = {0}, c = {0}, cc = {0};
	char why[256], *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	for (size_t i = 0; i < s->nr; i++) {
		FUZZ_ASSERT(s->r[i].start < s->r[i].end && s->r[i].end <= SECTOR_RANGES_LIMIT);
		FUZZ_ASSERT(!i || s->r[i - 1].end < s->r[i].start);
	}
	FUZZ_ASSERT(f && !sector_ranges_print(s, f) && !fclose(f));
	FUZZ_ASSERT(!sector_ranges_parse(&back, text, len, why, sizeof(why)));
	FUZZ_ASSERT(same(&back, s));
	FUZZ_ASSERT(!sector_ranges_complement(s, SECTOR_RANGES_LIMIT, &c));
	FUZZ_ASSERT(!sector_ranges_complement(&c, SECTOR_RANGES_LIMIT, &cc));
	FUZZ_ASSERT(same(&cc, s));
	/* probes at and beside each edge */
	for (size_t i = 0; i < s->nr && i < 64; i++) {
		uint64_t edges[2] = {s->r[i].start, s->r[i].end};

		for (int e = 0; e < 2; e++)
			for (uint64_t a = edges[e] ? edges[e] - 1 : 0; a <= edges[e] + 1; a++)
				for (uint64_t n = 0; n < 3; n++) {
					FUZZ_ASSERT(sector_ranges_touch(s, a, a + n) ==
						    touch_by_walk(s, a, a + n));
					FUZZ_ASSERT(sector_ranges_next(s, a + n) ==
						    next_by_walk(s, a + n));
					check_clear(s, a, n);
				}
	}
	free(text);
	sector_ranges_free(&back);
	sector_ranges_free(&c);
	sector_ranges_free(&cc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sector_ranges s = {0};
	char why[256] = "";
	size_t n = size < TEXT_MAX ? size : TEXT_MAX;
	int ret = sector_ranges_parse(&s, (const char *)data, n, why, sizeof(why));

	if (ret) {
		FUZZ_ASSERT(ret == -EINVAL || ret == -ENOMEM);
		FUZZ_ASSERT(ret == -ENOMEM || (why[0] && !strchr(why, '\n')));
		FUZZ_ASSERT(!s.nr);
	} else {
		check_taken(&s);
	}
	sector_ranges_free(&s);
	return 0;
}
