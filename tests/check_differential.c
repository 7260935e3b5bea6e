/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_differential.c - the crash lab checked against the reference disk
 * (diff_stack.h): seeded random sequences through the real stack, and the
 * regression cases kept from every disagreement found.  RQDISK_DIFF_SEEDS=N
 * runs N more seeds, RQDISK_DIFF_FEATURES=0x3ff with every feature (DF_*);
 * a disagreement is shrunk to one whose reason holds RQDISK_DIFF_SHRINK_MATCH.
 *
 * A case marked known fails on the code as it is, for a defect named in
 * its comment: it is reported as expected to fail until fixed, and as
 * passing once it does.  Its ".known = false" makes it required (and its
 * feature in DIFF_FEATURES_REQUIRED, diff_stack.h, lets the random seeds use it).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff_stack.h"
#include "ref_disk.h"

#define CASE_OPS(a) .ops = a, .nr = sizeof(a) / sizeof(a[0])
#define NR_SEEDS 12
#define SEED_OPS 40

struct known_case {
	struct diff_case c;
	bool known; /* fails until its defect is fixed */
};

/* A write, then logging turned on: log-writes:enable=0 must leave a gap from the start, or
 * the log of [enabled, B, FLUSH, end] replays without the flushed write A and looks whole. */
static struct diff_op ops_enable_off_at_open[] = {
	{ DK_WRITE, 0, 3 }, { DK_WAIT, 0, 0 },	{ DK_ON, 0, 0 },   { DK_WRITE, 8, 3 },
	{ DK_WAIT, 0, 0 },  { DK_FLUSH, 0, 0 }, { DK_WAIT, 0, 0 }, { DK_QMARK, 0, 0 },
};

/* The log's file fills up: the log must say it stopped (cut short), not read as whole. */
static struct diff_op ops_log_file_full[] = {
	{ DK_WRITE, 0, 3 },   { DK_FLUSH, 0, 0 },  { DK_WAIT, 0, 0 },
	{ DK_LOGFAIL, 0, 0 }, { DK_WRITE, 8, 3 },  { DK_WAIT, 0, 0 },
	{ DK_FLUSH, 0, 0 },   { DK_WAIT, 0, 0 },   { DK_QMARK, 0, 0 },
};

/* A power cut of the write cache above the log loses a write that never reached the log; a
 * later flush makes the next one durable, in the log and in the model. */
static struct diff_op ops_power_cut_under_log[] = {
	{ DK_WRITE, 0, 7 },  { DK_WAIT, 0, 0 },	 { DK_CUT, 0, 0 },  { DK_WRITE, 16, 3 },
	{ DK_FLUSH, 0, 0 },  { DK_WAIT, 0, 0 },	 { DK_QMARK, 0, 0 },
};

/* --torn with atomic=4096 must tear a write of sectors 2-13 at the unit boundary 8, not
 * at 2+8 inside the unit 8-15. */
static struct diff_op ops_torn_unaligned_unit[] = {
	{ DK_WRITE, 2, 11 },
	{ DK_WAIT, 0, 0 },
	{ DK_QMARK, 0, 0 },
};

/* write-cache:atomic=4096 above the log: a write of sectors 70-79 cached, one of 78-91 carves
 * it; the two parts of the unit 72-79 went down apart, so a crash between them left the unit
 * holding the first write without its sectors 78-79, a unit the disk wrote whole torn.  The
 * newer write's extent now takes 72-77 over: the unit goes down in one writeback. */
static struct diff_op ops_wcache_carve_tears_unit[] = {
	{ DK_WRITE, 70, 9 }, { DK_WRITE, 78, 13 }, { DK_FLUSH, 0, 0 },
	{ DK_WAIT, 0, 0 },   { DK_QMARK, 0, 0 },
};

/* write-cache:atomic=4096: a write of sectors 70-79 cached, then a FUA write of 78-91 that
 * cuts it inside the unit 72-79 goes through (the older write lands whole first now); then a
 * write of 16-31 cut inside the unit 24-31 by one of 26-28, whose two parts of that unit went
 * down apart (this part failed before the fix): the unit goes down in one writeback now. */
static struct diff_op ops_wcache_units_through_and_split[] = {
	{ DK_WRITE, 70, 9 },  { DK_FUA, 78, 13 },  { DK_WAIT, 0, 0 },  { DK_QMARK, 0, 0 },
	{ DK_WRITE, 16, 15 }, { DK_WRITE, 26, 2 }, { DK_FLUSH, 0, 0 }, { DK_WAIT, 0, 0 },
	{ DK_QMARK, 0, 0 },
};

/* write-cache:atomic=4096, a torn power cut: a cached write of sectors 2-12 kept one unit
 * counted from its start, 2-9, and tore the disk's unit 8-15; it keeps 2-7 (unit 0) now. */
static struct diff_op ops_wcache_torn_cut_unaligned[] = {
	{ DK_WRITE, 2, 10 }, { DK_WAIT, 0, 0 }, { DK_CUT, 2, 0 }, { DK_WAIT, 0, 0 },
};

/* A write of sectors 20-29 cached; a FUA write of 15-22 goes through and the cache drops the
 * older data of 20-22 it supersedes; the FUA write fails after 15-20: 21-22 hold neither write
 * (zeros).  The next flush succeeded and called the first write durable there; now the failed
 * write through fails the next flush, as a failed writeback does. */
static struct diff_op ops_wcache_failed_write_through[] = {
	{ DK_WRITE, 20, 9 }, { DK_FUA, 15, 7 }, { DK_FAIL, 0, 6 }, { DK_FLUSH, 0, 0 },
	{ DK_WAIT, 0, 0 },
};

/* A write ends in two parts around a flush submitted meanwhile: the queue holds the flush
 * until the write is whole, so the flush covers it, in the log and in the model. */
static struct diff_op ops_part_then_flush[] = {
	{ DK_WRITE, 0, 7 }, { DK_PART, 0, 3 }, { DK_FLUSH, 0, 0 }, { DK_END, 0, 0 },
	{ DK_WAIT, 0, 0 },  { DK_QMARK, 0, 0 },
};

/* Two writes merged into one request (behind a flush); its first bio ends, then a flush
 * is submitted: the log must order that flush after the whole request, as the queue does. */
static struct diff_op ops_part_of_merged_then_flush[] = {
	{ DK_WRITE, 0, 3 }, { DK_FLUSH, 0, 0 },	  { DK_WRITE, 0, 0x83 }, { DK_WRITE, 0, 0x83 },
	{ DK_END, 0, 0 },   { DK_END, 0, 0 },	  { DK_PART, 0, 4 },	 { DK_FLUSH, 0, 0 },
	{ DK_END, 0, 0 },   { DK_WAIT, 0, 0 },	  { DK_QMARK, 0, 0 },
};

/* A write that fails after its first sectors, then a flush: the good part is durable. */
static struct diff_op ops_fail_then_flush[] = {
	{ DK_WRITE, 4, 7 }, { DK_FAIL, 0, 3 }, { DK_FLUSH, 0, 0 }, { DK_WAIT, 0, 0 },
	{ DK_QMARK, 0, 0 }, { DK_WRITE, 4, 1 }, { DK_WAIT, 0, 0 },
};

/* Logging off and on around writes in flight: the gap marks keep the crash states honest. */
static struct diff_op ops_toggle_in_flight[] = {
	{ DK_WRITE, 0, 3 }, { DK_OFF, 0, 0 }, { DK_WRITE, 8, 3 }, { DK_ON, 0, 0 },
	{ DK_END, 1, 0 },   { DK_END, 0, 0 }, { DK_FLUSH, 0, 0 }, { DK_WAIT, 0, 0 },
	{ DK_QMARK, 0, 0 },
};

/* Over the file backend, the kernel ending requests: batches of writes, FUA, discards, zeroes
 * and flushes at once, marks in flight and at rest, logging off and on. */
static struct diff_op ops_file_backend[] = {
	{ DK_WRITE, 0, 7 },   { DK_WRITE, 8, 0x83 }, { DK_FUA, 20, 3 },	 { DK_FLUSH, 0, 0 },
	{ DK_MARK, 0, 0 },    { DK_DISCARD, 2, 1 },  { DK_ZEROES, 30, 5 }, { DK_WAIT, 0, 0 },
	{ DK_QMARK, 0, 0 },   { DK_WRITE, 40, 9 },   { DK_OFF, 0, 0 },	 { DK_WRITE, 60, 3 },
	{ DK_ON, 0, 0 },      { DK_WRITE, 70, 3 },   { DK_FLUSH, 0, 0 },	 { DK_WRITE, 0, 2 },
	{ DK_QMARK, 0, 0 },
};

/* Power cuts of every kind, FUA writes and flushes around them: what the backend holds after
 * each is a state the model allows at the cut (4), and so is the disk at the end (0). */
static struct diff_op ops_power_cuts[] = {
	{ DK_WRITE, 0, 15 }, { DK_FUA, 4, 3 },	 { DK_WRITE, 20, 9 },  { DK_CUT, 1, 0 },
	{ DK_WRITE, 2, 5 },  { DK_FLUSH, 0, 0 }, { DK_WRITE, 30, 15 }, { DK_FUA, 33, 2 },
	{ DK_WRITE, 40, 7 }, { DK_CUT, 2, 0 },	 { DK_WRITE, 50, 15 }, { DK_WRITE, 66, 15 },
	{ DK_FUA, 60, 8 },   { DK_CUT, 0, 0 },	 { DK_WRITE, 80, 9 },  { DK_WAIT, 0, 0 },
};

static const struct known_case cases[] = {
	{ .c = { .name = "enable_off_at_open", .features = DF_OFF_OPEN | DF_TOGGLE, .atomic = 512,
	    .drop = 2, CASE_OPS(ops_enable_off_at_open) } },
	{ .c = { .name = "log_file_full", .features = DF_LOGFAIL, .atomic = 512, .drop = 2,
	    CASE_OPS(ops_log_file_full) } },
	{ .c = { .name = "power_cut_over_log", .features = DF_WCACHE | DF_CUT, .atomic = 512,
	    .drop = 2, CASE_OPS(ops_power_cut_under_log) } },
	{ .c = { .name = "torn_unaligned_unit", .features = DF_ATOMIC, .atomic = 4096, .drop = 1,
	    .torn = true, CASE_OPS(ops_torn_unaligned_unit) } },
	{ .c = { .name = "wcache_carve_tears_unit", .features = DF_WCACHE | DF_ATOMIC,
	    .atomic = 4096, .drop = 1, .wc_atomic = true, CASE_OPS(ops_wcache_carve_tears_unit) },
	  .known = false },
	{ .c = { .name = "wcache_units_through_and_split", .features = DF_WCACHE | DF_ATOMIC,
	    .atomic = 4096, .drop = 1, .wc_atomic = true,
	    CASE_OPS(ops_wcache_units_through_and_split) } },
	{ .c = { .name = "wcache_torn_cut_unaligned", .features = DF_WCACHE | DF_CUT | DF_ATOMIC,
	    .atomic = 4096, .drop = 1, .wc_atomic = true, .disk_only = true, .wc_expire = 1,
	    CASE_OPS(ops_wcache_torn_cut_unaligned) } },
	{ .c = { .name = "wcache_failed_write_through",
	    .features = DF_WCACHE | DF_ERRORS | DF_WCFAIL, .atomic = 512, .drop = 1,
	    CASE_OPS(ops_wcache_failed_write_through) } },
	{ .c = { .name = "part_then_flush", .features = DF_ERRORS, .atomic = 512, .drop = 2,
	    CASE_OPS(ops_part_then_flush) } },
	{ .c = { .name = "part_of_merged_then_flush", .features = DF_ERRORS | DF_MERGES,
	    .atomic = 512, .drop = 2, CASE_OPS(ops_part_of_merged_then_flush) } },
	{ .c = { .name = "file_backend", .features = DF_FILE | DF_TOGGLE, .elevator = "bfq",
	    .atomic = 512, .drop = 2, CASE_OPS(ops_file_backend) } },
	{ .c = { .name = "file_backend_write_cache", .features = DF_FILE | DF_WCACHE | DF_MERGES,
	    .elevator = "kyber", .atomic = 512, .drop = 2, CASE_OPS(ops_file_backend) } },
	{ .c = { .name = "power_cuts_over_log", .features = DF_WCACHE | DF_CUT, .atomic = 512,
	    .drop = 2, CASE_OPS(ops_power_cuts) } },
	{ .c = { .name = "power_cuts_disk_only", .features = DF_WCACHE | DF_CUT, .atomic = 512,
	    .drop = 2, .disk_only = true, CASE_OPS(ops_power_cuts) } },
	{ .c = { .name = "fail_then_flush", .features = DF_ERRORS, .atomic = 512, .drop = 2,
	    CASE_OPS(ops_fail_then_flush) } },
	{ .c = { .name = "toggle_in_flight", .features = DF_TOGGLE, .elevator = "deadline",
	    .atomic = 512, .drop = 2, CASE_OPS(ops_toggle_in_flight) } },
};

#define NR_CASES (sizeof(cases) / sizeof(cases[0]))

START_TEST(regression_case)
{
	const struct known_case *k = &cases[_i];
	char why[1024];
	int ret = diff_run(&k->c, why, sizeof(why));

	ck_assert_msg(ret >= 0, "%s: the run failed: %s", k->c.name, why);
	if (k->known && ret)
		fprintf(stderr, "%s: expected to fail until fixed: %s\n", k->c.name, why);
	else if (k->known)
		fprintf(stderr, "%s: passes now: make it required (.known = false)\n", k->c.name);
	else
		ck_assert_msg(!ret, "%s: %s", k->c.name, why);
}
END_TEST

/* Write-cache below log-writes is refused at open, in one line that names the fix. */
START_TEST(write_cache_below_log_refused)
{
	static struct diff_op ops[] = { { DK_WRITE, 0, 3 }, { DK_WAIT, 0, 0 } };
	const struct diff_case c = { .name = "write_cache_below_log", .features = 0, .atomic = 512,
				     .drop = 1, .wcache_below = true, CASE_OPS(ops) };
	char why[1024];

	ck_assert_int_eq(diff_run(&c, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "put log-writes below the cache"), "refused as: %s", why);
	ck_assert_msg(!strchr(why, '\n'), "not one line: %s", why);
}
END_TEST

/* One seed: on a disagreement, the case shrunk to what still disagrees, printed to keep. */
static int run_seed(uint64_t seed, unsigned int features, char *why, size_t whylen)
{
	struct diff_case c;
	char shrunk[1024];
	int ret;

	diff_random(&c, seed, SEED_OPS, features);
	ret = diff_run(&c, why, whylen);
	if (ret == 1) {
		fprintf(stderr, "seed %llu (features 0x%x) disagrees: %s\nshrunk:\n",
			(unsigned long long)seed, features, why);
		diff_shrink(&c, getenv("RQDISK_DIFF_SHRINK_MATCH"));
		diff_run(&c, shrunk, sizeof(shrunk));
		diff_print(stderr, &c);
		fprintf(stderr, "which says: %s\n", shrunk);
	}
	diff_case_free(&c);
	return ret;
}

static unsigned int features(void)
{
	const char *f = getenv("RQDISK_DIFF_FEATURES");

	return f && *f ? (unsigned int)strtoul(f, NULL, 0) : DIFF_FEATURES_REQUIRED;
}

START_TEST(random_seed)
{
	char why[1024];

	ck_assert_msg(!run_seed((uint64_t)_i + 1, features(), why, sizeof(why)), "seed %d: %s",
		      _i + 1, why);
}
END_TEST

START_TEST(more_seeds)
{
	const char *n = getenv("RQDISK_DIFF_SEEDS");
	unsigned long nr = n ? strtoul(n, NULL, 0) : 0, failed = 0, first = 0;
	char why[1024], first_why[1024] = "";

	/* every seed runs: each disagreement is printed, shrunk */
	for (unsigned long i = 0; i < nr; i++) {
		if (!run_seed(1000 + i, features(), why, sizeof(why)))
			continue;
		if (!failed++) {
			first = 1000 + i;
			snprintf(first_why, sizeof(first_why), "%s", why);
		}
	}
	ck_assert_msg(!failed, "%lu of %lu seeds disagree; the first, seed %lu: %s", failed, nr,
		      first, first_why);
}
END_TEST

/* ------------------------------------------------------------ the model alone */

#define U 512u

/* An image of 4 units: unit i holds byte v[i] (0: zeros). */
static const uint8_t *img4(const uint8_t v[4])
{
	static uint8_t img[4 * U];

	for (int i = 0; i < 4; i++)
		memset(img + i * U, v[i], U);
	return img;
}

static bool allows(const struct ref_disk *m, long pt, uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	const uint8_t v[4] = { a, b, c, d };

	return rd_allowed(m, (size_t)pt, img4(v), NULL, 0);
}

static uint64_t wr(struct ref_disk *m, uint64_t unit, uint64_t n, uint8_t fill, bool fua)
{
	uint8_t buf[4 * U];

	memset(buf, fill, sizeof(buf));
	return rd_submit_write(m, unit * U, n * U, buf, fua);
}

/* A write acknowledged is volatile: present or not; a flush then makes it durable. */
START_TEST(model_flush_makes_durable)
{
	struct ref_disk m;
	uint64_t w, f;
	long before, after;

	ck_assert_int_eq(rd_init(&m, 4 * U, U, false), 0);
	w = wr(&m, 0, 2, 0xa, false);
	rd_ack(&m, w, 0, 0);
	f = rd_submit_flush(&m);
	before = rd_point(&m);
	rd_ack(&m, f, 0, 0);
	after = rd_point(&m);
	ck_assert(allows(&m, before, 0, 0, 0, 0));
	ck_assert(allows(&m, before, 0xa, 0, 0, 0)); /* each unit on its own */
	ck_assert(allows(&m, before, 0xa, 0xa, 0, 0));
	ck_assert(!allows(&m, before, 0xb, 0, 0, 0));
	ck_assert(allows(&m, after, 0xa, 0xa, 0, 0));
	ck_assert(!allows(&m, after, 0xa, 0, 0, 0));
	ck_assert(!allows(&m, after, 0, 0, 0, 0));
	rd_free(&m);
}
END_TEST

/* A flush covers what was acknowledged before it was submitted, not what came after. */
START_TEST(model_flush_covers_only_earlier)
{
	struct ref_disk m;
	uint64_t a, b, f;
	long pt;

	ck_assert_int_eq(rd_init(&m, 4 * U, U, false), 0);
	a = wr(&m, 0, 1, 0xa, false);
	rd_ack(&m, a, 0, 0);
	f = rd_submit_flush(&m);
	b = wr(&m, 1, 1, 0xb, false);
	rd_ack(&m, b, 0, 0);
	rd_ack(&m, f, 0, 0);
	pt = rd_point(&m);
	ck_assert(allows(&m, pt, 0xa, 0, 0, 0));
	ck_assert(allows(&m, pt, 0xa, 0xb, 0, 0));
	ck_assert(!allows(&m, pt, 0, 0xb, 0, 0));
	rd_free(&m);
}
END_TEST

/* FUA is durable at its end, the volatile write under it not; a later write may hide it. */
START_TEST(model_fua_and_overwrite)
{
	struct ref_disk m;
	uint64_t a, b, c;
	long pt;

	ck_assert_int_eq(rd_init(&m, 4 * U, U, false), 0);
	a = wr(&m, 0, 2, 0xa, false);
	rd_ack(&m, a, 0, 0);
	b = wr(&m, 1, 1, 0xb, true);
	rd_ack(&m, b, 0, 0);
	c = wr(&m, 1, 1, 0xc, false);
	rd_ack(&m, c, 0, 0);
	pt = rd_point(&m);
	ck_assert(allows(&m, pt, 0, 0xb, 0, 0));
	ck_assert(allows(&m, pt, 0xa, 0xc, 0, 0));
	ck_assert(!allows(&m, pt, 0xa, 0xa, 0, 0)); /* a under the durable b */
	ck_assert(!allows(&m, pt, 0, 0, 0, 0));
	rd_free(&m);
}
END_TEST

/* An error: the good prefix is acknowledged (a flush makes it durable), the rest maybe. */
START_TEST(model_error_prefix)
{
	struct ref_disk m;
	uint64_t w, f;
	long pt;

	ck_assert_int_eq(rd_init(&m, 4 * U, U, false), 0);
	w = wr(&m, 0, 3, 0xa, false);
	rd_ack(&m, w, U, -5);
	f = rd_submit_flush(&m);
	rd_ack(&m, f, 0, 0);
	pt = rd_point(&m);
	ck_assert(allows(&m, pt, 0xa, 0, 0, 0));
	ck_assert(allows(&m, pt, 0xa, 0xa, 0, 0));
	ck_assert(allows(&m, pt, 0xa, 0, 0xa, 0));
	ck_assert(!allows(&m, pt, 0, 0xa, 0xa, 0));
	rd_free(&m);
}
END_TEST

/* A unit of two sectors is never torn; a power cut makes the volatile maybe, for good. */
START_TEST(model_atomic_unit_and_cut)
{
	struct ref_disk m;
	uint64_t w, f;
	long pt;

	ck_assert_int_eq(rd_init(&m, 4 * U, 2 * U, false), 0);
	w = wr(&m, 1, 2, 0xa, false); /* sectors 1-2: half of each unit */
	rd_ack(&m, w, 0, 0);
	pt = rd_point(&m);
	ck_assert(allows(&m, pt, 0, 0xa, 0, 0));
	ck_assert(allows(&m, pt, 0, 0, 0xa, 0));
	ck_assert(allows(&m, pt, 0, 0xa, 0xa, 0));
	ck_assert(!allows(&m, pt, 0xa, 0xa, 0, 0)); /* sector 0 was never written */
	rd_power_cut(&m);
	f = rd_submit_flush(&m);
	rd_ack(&m, f, 0, 0);
	pt = rd_point(&m);
	ck_assert(allows(&m, pt, 0, 0, 0, 0));
	ck_assert(allows(&m, pt, 0, 0xa, 0xa, 0));
	rd_free(&m);
	/* a unit holding half of a write, the other half old, is torn */
	ck_assert_int_eq(rd_init(&m, 4 * U, 4 * U, false), 0);
	w = wr(&m, 0, 2, 0xa, false);
	rd_ack(&m, w, 0, 0);
	pt = rd_point(&m);
	ck_assert(allows(&m, pt, 0xa, 0xa, 0, 0));
	ck_assert(!allows(&m, pt, 0xa, 0, 0, 0));
	rd_free(&m);
}
END_TEST

/* The enumeration: the image with nothing lost first, then every single loss (max_drop 1). */
static int count_images(void *arg, const uint8_t *img)
{
	(void)img;
	++*(unsigned int *)arg;
	return 0;
}

START_TEST(model_enumerate)
{
	struct ref_disk m;
	unsigned int n = 0;
	long pt;

	ck_assert_int_eq(rd_init(&m, 4 * U, U, false), 0);
	for (uint8_t i = 0; i < 3; i++)
		rd_ack(&m, wr(&m, i, 1, (uint8_t)(0xa + i), false), 0, 0);
	pt = rd_point(&m);
	rd_enumerate(&m, (size_t)pt, 1, count_images, &n);
	ck_assert_uint_eq(n, 4);
	n = 0;
	rd_enumerate(&m, (size_t)pt, 3, count_images, &n);
	ck_assert_uint_eq(n, 8);
	rd_free(&m);
}
END_TEST

static Suite *differential_suite(void)
{
	Suite *s = suite_create("differential");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, regression_case, 0, NR_CASES);
	tcase_add_test(tc, write_cache_below_log_refused);
	tcase_add_loop_test(tc, random_seed, 0, NR_SEEDS);
	tcase_add_test(tc, more_seeds);
	suite_add_tcase(s, tc);
	tc = tcase_create("model");
	tcase_add_test(tc, model_flush_makes_durable);
	tcase_add_test(tc, model_flush_covers_only_earlier);
	tcase_add_test(tc, model_fua_and_overwrite);
	tcase_add_test(tc, model_error_prefix);
	tcase_add_test(tc, model_atomic_unit_and_cut);
	tcase_add_test(tc, model_enumerate);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(differential_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
