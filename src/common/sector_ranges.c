/* SPDX-License-Identifier: BSD-3-Clause */
/* sector_ranges.c - sets of sectors as sorted disjoint ranges, in the badblocks syntax. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sector_ranges.h"

/* The first range that ends at or after sector x (one that ends at x touches it). */
static size_t find(const struct sector_ranges *s, uint64_t x)
{
	size_t lo = 0, hi = s->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->r[mid].end < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The most ranges s may hold. */
static size_t limit(const struct sector_ranges *s)
{
	return s->max && s->max < SECTOR_RANGES_MAX ? s->max : SECTOR_RANGES_MAX;
}

/* Room for one more range. */
static int grow(struct sector_ranges *s)
{
	size_t cap = s->cap ? s->cap * 2 : 16;
	struct sector_range *r;

	if (s->nr >= limit(s))
		return -ENOSPC;
	if (s->nr < s->cap)
		return 0;
	r = realloc(s->r, cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	s->r = r;
	s->cap = cap;
	return 0;
}

int sector_ranges_add(struct sector_ranges *s, uint64_t start, uint64_t end)
{
	size_t i = find(s, start), j = i;
	int ret;

	if (start >= end)
		return 0;
	while (j < s->nr && s->r[j].start <= end)
		j++;
	if (j > i) { /* ranges i..j-1 overlap or touch it: one range */
		if (s->r[i].start < start)
			start = s->r[i].start;
		if (s->r[j - 1].end > end)
			end = s->r[j - 1].end;
		memmove(&s->r[i + 1], &s->r[j], (s->nr - j) * sizeof(*s->r));
		s->nr -= j - i - 1;
		s->r[i] = (struct sector_range){start, end};
		return 0;
	}
	ret = grow(s);
	if (ret)
		return ret;
	memmove(&s->r[i + 1], &s->r[i], (s->nr - i) * sizeof(*s->r));
	s->r[i] = (struct sector_range){start, end};
	s->nr++;
	return 0;
}

int sector_ranges_clear(struct sector_ranges *s, uint64_t start, uint64_t end)
{
	size_t i = find(s, start + 1);

	if (start >= end)
		return 0;
	while (i < s->nr && s->r[i].start < end) {
		struct sector_range *r = &s->r[i];

		if (r->start < start && r->end > end) { /* inside it: two ranges */
			int ret = grow(s);

			if (ret)
				return ret;
			r = &s->r[i];
			memmove(r + 1, r, (s->nr - i) * sizeof(*r));
			s->nr++;
			r[0].end = start;
			r[1].start = end;
			return 0;
		}
		if (r->start < start) {
			r->end = start;
			i++;
		} else if (r->end > end) {
			r->start = end;
			return 0;
		} else {
			memmove(r, r + 1, (s->nr - i - 1) * sizeof(*r));
			s->nr--;
		}
	}
	return 0;
}

int sector_ranges_copy(struct sector_ranges *to, const struct sector_ranges *from)
{
	*to = (struct sector_ranges){.max = from->max};
	if (!from->nr)
		return 0;
	to->r = malloc(from->nr * sizeof(*to->r));
	if (!to->r)
		return -ENOMEM;
	memcpy(to->r, from->r, from->nr * sizeof(*to->r));
	to->nr = to->cap = from->nr;
	return 0;
}

const struct sector_range *sector_ranges_next(const struct sector_ranges *s, uint64_t x)
{
	size_t i = find(s, x + 1);

	return i < s->nr ? &s->r[i] : NULL;
}

bool sector_ranges_touch(const struct sector_ranges *s, uint64_t start, uint64_t end)
{
	const struct sector_range *r = sector_ranges_next(s, start);

	return start < end && r && r->start < end;
}

static int refuse(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int refuse(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (whylen)
		vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A decimal sector number of n bytes at p, below SECTOR_RANGES_LIMIT: 0, -EINVAL. */
static int number(const char *p, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (!n || n > 20)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(p[i] - '0');
		if (v >= SECTOR_RANGES_LIMIT)
			return -EINVAL;
	}
	*out = v;
	return 0;
}

static bool is_sep(char c)
{
	return c == '/' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* One range, S-E or S, of n bytes at p: [*start, *end), or -EINVAL said in why. */
static int one_range(const char *p, size_t n, uint64_t *start, uint64_t *end, char *why,
		     size_t whylen)
{
	const char *dash = memchr(p, '-', n);
	size_t a = dash ? (size_t)(dash - p) : n;
	int show = n > 40 ? 40 : (int)n;
	uint64_t s, e;

	if (number(p, a, &s) || (dash && number(dash + 1, n - a - 1, &e)))
		return refuse(why, whylen,
			      "'%.*s%s' is not a sector range: S-E or S, decimal sectors below "
			      "2^54",
			      show, p, (size_t)show < n ? "..." : "");
	if (!dash)
		e = s;
	if (e < s)
		return refuse(why, whylen, "'%.*s' ends before it starts", show, p);
	*start = s;
	*end = e + 1;
	return 0;
}

int sector_ranges_parse(struct sector_ranges *s, const char *text, size_t len, char *why,
			size_t whylen)
{
	struct sector_ranges tmp = {.max = s->max}, all = {0};
	size_t i = 0, n;
	int ret = 0;

	while (!ret && i < len) {
		uint64_t start = 0, end = 0;

		if (text[i] == '\0') {
			ret = refuse(why, whylen, "a NUL byte where sector ranges were expected");
			break;
		}
		if (is_sep(text[i])) {
			/* a '/' joins two ranges: none before or after it is a range missing */
			if (text[i] == '/' &&
			    (!i || i + 1 == len || is_sep(text[i + 1]) || is_sep(text[i - 1])))
				ret = refuse(why, whylen, "an empty range beside a '/'");
			i++;
			continue;
		}
		for (n = 0; i + n < len && !is_sep(text[i + n]) && text[i + n]; n++)
			;
		ret = one_range(text + i, n, &start, &end, why, whylen);
		if (!ret && (ret = sector_ranges_add(&tmp, start, end)) == -ENOSPC)
			ret = refuse(why, whylen, "more than %zu sector ranges", limit(s));
		i += n;
	}
	/* into a copy: the ranges s holds and these may be too many together */
	if (!ret)
		ret = sector_ranges_copy(&all, s);
	for (size_t k = 0; !ret && k < tmp.nr; k++)
		ret = sector_ranges_add(&all, tmp.r[k].start, tmp.r[k].end);
	if (ret == -ENOSPC)
		ret = refuse(why, whylen, "more than %zu sector ranges", limit(s));
	if (!ret) {
		sector_ranges_free(s);
		*s = all;
	} else {
		sector_ranges_free(&all);
	}
	sector_ranges_free(&tmp);
	return ret;
}

int sector_ranges_complement(const struct sector_ranges *s, uint64_t end, struct sector_ranges *out)
{
	uint64_t at = 0;
	int ret = 0;

	sector_ranges_free(out);
	for (size_t i = 0; !ret && i < s->nr && s->r[i].start < end; i++) {
		ret = sector_ranges_add(out, at, s->r[i].start);
		at = s->r[i].end;
	}
	if (!ret && at < end)
		ret = sector_ranges_add(out, at, end);
	return ret;
}

int sector_ranges_print(const struct sector_ranges *s, FILE *f)
{
	for (size_t i = 0; i < s->nr; i++) {
		unsigned long long a = s->r[i].start, b = s->r[i].end - 1;

		if (fprintf(f, a == b ? "%s%llu" : "%s%llu-%llu", i ? "/" : "", a, b) < 0)
			return -EIO;
	}
	if (s->nr && fputc('\n', f) == EOF)
		return -EIO;
	return 0;
}

void sector_ranges_free(struct sector_ranges *s)
{
	free(s->r);
	*s = (struct sector_ranges){.max = s->max};
}
