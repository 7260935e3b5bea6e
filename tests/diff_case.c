/* SPDX-License-Identifier: BSD-3-Clause */
/* diff_case.c - the differential test's cases: from a seed or from bytes, printed, shrunk. */
#include <stdlib.h>
#include <string.h>

#include "blkdev.h"
#include "diff_stack.h"

static const char *const kind_names[NR_DK] = {
	"DK_WRITE", "DK_FUA",  "DK_DISCARD", "DK_ZEROES", "DK_FLUSH", "DK_END",
	"DK_PART",  "DK_FAIL", "DK_WAIT",    "DK_MARK",   "DK_QMARK", "DK_OFF",
	"DK_ON",    "DK_CUT",  "DK_LOGFAIL", "DK_TICK",
};

static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The feature an op needs (0: none), given the case's own features. */
static bool op_allowed(enum diff_kind k, unsigned int f)
{
	switch (k) {
	case DK_PART:
		return f & DF_ERRORS;
	case DK_FAIL: /* under the cache: see wcache_failed_write_through (check_differential.c) */
		return (f & DF_ERRORS) && (!(f & DF_WCACHE) || (f & DF_WCFAIL));
	case DK_OFF:
	case DK_ON:
		return f & DF_TOGGLE;
	case DK_CUT:
		return (f & DF_CUT) && (f & DF_WCACHE);
	case DK_LOGFAIL:
		return f & DF_LOGFAIL;
	default:
		return true;
	}
}

static const char *elevator_of(uint64_t x)
{
	const char *const *names = elevator_builtin_names();
	size_t n = 0;

	while (names[n])
		n++;
	return names[x % n];
}

/* The case's own features and settings from r, within features. */
static void settings(struct diff_case *c, uint64_t r, unsigned int features)
{
	memset(c, 0, sizeof(*c));
	c->features = features & (unsigned int)(r | DF_ERRORS | DF_TOGGLE);
	if (c->features & DF_CUT)
		c->features |= DF_WCACHE;
	snprintf(c->elevator, sizeof(c->elevator), "%s", elevator_of(r >> 8));
	c->atomic = c->features & DF_ATOMIC ? 4096 : 512;
	c->torn = r >> 16 & 1;
	c->drop = 1 + (r >> 17 & 1);
	c->wc_expire = (unsigned int)(r >> 18 & 7);
}

/* An op of kind k, a and b, or a write when the case may not do k. */
static struct diff_op make_op(const struct diff_case *c, unsigned int k, uint16_t a, uint16_t b)
{
	if (k >= NR_DK || !op_allowed((enum diff_kind)k, c->features))
		k = DK_WRITE;
	return (struct diff_op){ (uint8_t)k, a, b };
}

void diff_random(struct diff_case *c, uint64_t seed, size_t nr, unsigned int features)
{
	/* weights, in hundredths, by kind */
	static const unsigned int w[NR_DK] = { 28, 6, 4, 4, 10, 14, 5, 4, 5, 4, 6, 3, 3, 2, 1, 4 };
	uint64_t s = seed;
	unsigned int total = 0;

	settings(c, next_rand(&s), features);
	c->ops = calloc(nr ? nr : 1, sizeof(*c->ops));
	if (!c->ops)
		abort();
	for (int k = 0; k < NR_DK; k++)
		total += w[k];
	for (size_t i = 0; i < nr; i++) {
		uint64_t x = next_rand(&s);
		unsigned int pickw = (unsigned int)(x % total), k = 0;

		while (pickw >= w[k])
			pickw -= w[k++];
		c->ops[i] = make_op(c, k, (uint16_t)(x >> 16), (uint16_t)(x >> 32));
	}
	c->nr = nr;
}

void diff_decode(struct diff_case *c, const uint8_t *buf, size_t len, unsigned int features)
{
	uint64_t r = 0;
	size_t n;

	for (size_t i = 0; i < 4 && i < len; i++)
		r |= (uint64_t)buf[i] << (8 * i);
	settings(c, r, features);
	buf += len < 4 ? len : 4;
	len -= len < 4 ? len : 4;
	n = len / 3 < DIFF_MAX_OPS ? len / 3 : DIFF_MAX_OPS;
	c->ops = calloc(n ? n : 1, sizeof(*c->ops));
	if (!c->ops)
		abort();
	for (size_t i = 0; i < n; i++)
		c->ops[i] = make_op(c, buf[3 * i] % NR_DK, buf[3 * i + 1], buf[3 * i + 2]);
	c->nr = n;
}

void diff_case_free(struct diff_case *c)
{
	free(c->ops);
	c->ops = NULL;
	c->nr = 0;
}

void diff_print(FILE *f, const struct diff_case *c)
{
	fprintf(f, "static struct diff_op ops_NAME[] = {\n");
	for (size_t i = 0; i < c->nr; i++)
		fprintf(f, "\t{ %s, %u, %u },\n", kind_names[c->ops[i].kind], c->ops[i].a,
			c->ops[i].b);
	fprintf(f, "};\n/* in cases[]: */\n");
	fprintf(f, "\t{ .name = \"NAME\", .features = 0x%x, .elevator = \"%s\", .atomic = %u, "
		   ".drop = %u, .torn = %s, .wc_expire = %u, CASE_OPS(ops_NAME) },\n",
		c->features, c->elevator, c->atomic, c->drop, c->torn ? "true" : "false",
		c->wc_expire);
}

void diff_shrink(struct diff_case *c, const char *must)
{
	char why[1024];
	bool changed = true;

	for (int pass = 0; pass < 4 && changed; pass++) {
		changed = false;
		for (size_t i = c->nr; i-- > 0;) {
			struct diff_op cut = c->ops[i];

			memmove(&c->ops[i], &c->ops[i + 1], (c->nr - i - 1) * sizeof(cut));
			c->nr--;
			if (diff_run(c, why, sizeof(why)) == 1 && (!must || strstr(why, must))) {
				changed = true;
				continue;
			}
			memmove(&c->ops[i + 1], &c->ops[i], (c->nr - i) * sizeof(cut));
			c->ops[i] = cut;
			c->nr++;
		}
	}
}
