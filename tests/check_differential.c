/*
 * check_differential.c - the crash lab checked against the reference disk
 * (diff_stack.h): seeded random sequences through the real stack, and the
 * regression cases kept from every disagreement found.  RQDISK_DIFF_SEEDS=N
 * runs N more seeds, RQDISK_DIFF_FEATURES=0x1ff with every feature (DF_*);
 * a disagreement is shrunk to one whose reason holds RQDISK_DIFF_SHRINK_MATCH.
 *
 * A case marked known fails on the code as it is, for a defect named in
 * its comment: it is reported as expected to fail until fixed, and as
 * passing once it does.  Deleting its ".known = true" makes it required.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "diff_stack.h"

#define CASE_OPS(a) .ops = a, .nr = sizeof(a) / sizeof(a[0])
#define NR_SEEDS 12
#define SEED_OPS 40

struct known_case {
	struct diff_case c;
	bool known; /* fails until its defect is fixed */
};

/* A write, then logging turned on: log-writes:enable=0 left no gap mark, so the log of
 * [enabled, B, FLUSH, end] replays without the flushed write A and looks whole. */
static struct diff_op ops_enable_off_at_open[] = {
	{ DK_WRITE, 0, 3 }, { DK_WAIT, 0, 0 },	{ DK_ON, 0, 0 },   { DK_WRITE, 8, 3 },
	{ DK_WAIT, 0, 0 },  { DK_FLUSH, 0, 0 }, { DK_WAIT, 0, 0 }, { DK_QMARK, 0, 0 },
};

/* The log's file fills up: the log stops with no end mark, and reads as whole. */
static struct diff_op ops_log_file_full[] = {
	{ DK_WRITE, 0, 3 },   { DK_FLUSH, 0, 0 },  { DK_WAIT, 0, 0 },
	{ DK_LOGFAIL, 0, 0 }, { DK_WRITE, 8, 3 },  { DK_WAIT, 0, 0 },
	{ DK_FLUSH, 0, 0 },   { DK_WAIT, 0, 0 },   { DK_QMARK, 0, 0 },
};

/* The write cache loses a write under the log; the log keeps it, and a later flush calls it
 * durable. */
static struct diff_op ops_power_cut_under_log[] = {
	{ DK_WRITE, 0, 7 },  { DK_WAIT, 0, 0 },	 { DK_CUT, 0, 0 },  { DK_WRITE, 16, 3 },
	{ DK_FLUSH, 0, 0 },  { DK_WAIT, 0, 0 },	 { DK_QMARK, 0, 0 },
};

/* --torn with atomic=4096 tears a write of sectors 2-13 at 2+8, inside the unit 8-15. */
static struct diff_op ops_torn_unaligned_unit[] = {
	{ DK_WRITE, 2, 11 },
	{ DK_WAIT, 0, 0 },
	{ DK_QMARK, 0, 0 },
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

static const struct known_case cases[] = {
	{ .c = { .name = "enable_off_at_open", .features = DF_OFF_OPEN | DF_TOGGLE, .atomic = 512,
	    .drop = 2, CASE_OPS(ops_enable_off_at_open) },
	  .known = true },
	{ .c = { .name = "log_file_full", .features = DF_LOGFAIL, .atomic = 512, .drop = 2,
	    CASE_OPS(ops_log_file_full) },
	  .known = true },
	{ .c = { .name = "power_cut_under_log", .features = DF_WCACHE | DF_CUT, .atomic = 512,
	    .drop = 2, CASE_OPS(ops_power_cut_under_log) },
	  .known = true },
	{ .c = { .name = "torn_unaligned_unit", .features = DF_ATOMIC, .atomic = 4096, .drop = 1,
	    .torn = true, CASE_OPS(ops_torn_unaligned_unit) },
	  .known = true },
	{ .c = { .name = "part_then_flush", .features = DF_ERRORS, .atomic = 512, .drop = 2,
	    CASE_OPS(ops_part_then_flush) } },
	{ .c = { .name = "part_of_merged_then_flush", .features = DF_ERRORS | DF_MERGES,
	    .atomic = 512, .drop = 2, CASE_OPS(ops_part_of_merged_then_flush) } },
	{ .c = { .name = "file_backend", .features = DF_FILE | DF_TOGGLE, .elevator = "bfq",
	    .atomic = 512, .drop = 2, CASE_OPS(ops_file_backend) } },
	{ .c = { .name = "file_backend_write_cache", .features = DF_FILE | DF_WCACHE | DF_MERGES,
	    .elevator = "kyber", .atomic = 512, .drop = 2, CASE_OPS(ops_file_backend) } },
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
		fprintf(stderr, "%s: passes now: make it required (drop its .known)\n", k->c.name);
	else
		ck_assert_msg(!ret, "%s: %s", k->c.name, why);
}
END_TEST

/* One seed: on a disagreement, the case shrunk to what still disagrees, printed to keep. */
static void run_seed(uint64_t seed, unsigned int features)
{
	struct diff_case c;
	char why[1024];
	int ret;

	diff_random(&c, seed, SEED_OPS, features);
	ret = diff_run(&c, why, sizeof(why));
	if (ret == 1) {
		fprintf(stderr, "seed %llu (features 0x%x) disagrees: %s\nshrunk:\n",
			(unsigned long long)seed, features, why);
		diff_shrink(&c, getenv("RQDISK_DIFF_SHRINK_MATCH"));
		diff_run(&c, why, sizeof(why));
		diff_print(stderr, &c);
		fprintf(stderr, "which says: %s\n", why);
	}
	diff_case_free(&c);
	ck_assert_msg(ret == 0, "seed %llu: %s", (unsigned long long)seed, why);
}

static unsigned int features(void)
{
	const char *f = getenv("RQDISK_DIFF_FEATURES");

	return f && *f ? (unsigned int)strtoul(f, NULL, 0) : DIFF_FEATURES_REQUIRED;
}

START_TEST(random_seed)
{
	run_seed((uint64_t)_i + 1, features());
}
END_TEST

START_TEST(more_seeds)
{
	const char *n = getenv("RQDISK_DIFF_SEEDS");
	unsigned long nr = n ? strtoul(n, NULL, 0) : 0;

	for (unsigned long i = 0; i < nr; i++)
		run_seed(1000 + i, features());
}
END_TEST

static Suite *differential_suite(void)
{
	Suite *s = suite_create("differential");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, regression_case, 0, NR_CASES);
	tcase_add_loop_test(tc, random_seed, 0, NR_SEEDS);
	tcase_add_test(tc, more_seeds);
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
