/* SPDX-License-Identifier: BSD-3-Clause */
/* check_cli.c - the command line: every refusal is one line that names the problem. */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fake_driver.h"

enum { OPT_CSV = 256 };

static const struct option longopts[] = {
	{ "elevator", required_argument, NULL, 'e' },
	{ "max-sectors", required_argument, NULL, 's' },
	{ "max-segments", required_argument, NULL, 'g' },
	{ "csv", no_argument, NULL, OPT_CSV },
	{ "quiet", no_argument, NULL, 'q' },
	{ NULL, 0, NULL, 0 },
};

static FILE *err;

/* What stderr got since the last call. */
static const char *stderr_text(void)
{
	static char text[512];
	size_t n;

	fflush(stderr);
	rewind(err);
	n = fread(text, 1, sizeof(text) - 1, err);
	text[n] = '\0';
	ck_assert_int_eq(ftruncate(fileno(err), 0), 0);
	rewind(err);
	return text;
}

static void capture_stderr(void)
{
	err = tmpfile();
	ck_assert_ptr_nonnull(err);
	ck_assert_int_ne(dup2(fileno(err), STDERR_FILENO), -1);
}

/* Every option of args in turn, as the programs take them: up to the first refusal. */
static int parse(const char *const *args)
{
	char *argv[8];
	int argc = 0, opt, last = -1;

	argv[argc++] = (char *)"prog";
	for (; *args; args++)
		argv[argc++] = (char *)*args;
	argv[argc] = NULL;
	optind = 0; /* a fresh scan */
	while (last != '?' && (opt = cli_getopt("prog", argc, argv, ":e:qV", longopts)) != -1)
		last = opt;
	return last;
}

static void refused(const char *const *args, const char *line)
{
	char want[256];

	ck_assert_int_eq(parse(args), '?');
	snprintf(want, sizeof(want), "prog: %s; try 'prog --help'\n", line);
	ck_assert_str_eq(stderr_text(), want);
}

START_TEST(bad_options_are_refused_in_one_line_that_names_them)
{
	capture_stderr();
	refused((const char *[]){ "--bogus", NULL }, "unrecognized option '--bogus'");
	refused((const char *[]){ "--bogus=1", NULL }, "unrecognized option '--bogus=1'");
	refused((const char *[]){ "--max-se=3", NULL }, "option '--max-se' is ambiguous");
	refused((const char *[]){ "-qx", NULL }, "invalid option -- 'x'");
	refused((const char *[]){ "-xq", NULL }, "invalid option -- 'x'");
	refused((const char *[]){ "--elevator", NULL }, "option '--elevator' requires an argument");
	refused((const char *[]){ "--elev", NULL }, "option '--elev' requires an argument");
	refused((const char *[]){ "-qe", NULL }, "option requires an argument -- 'e'");
	refused((const char *[]){ "--quiet=1", NULL }, "option '--quiet' doesn't allow an argument");
	refused((const char *[]){ "--csv=yes", NULL }, "option '--csv' doesn't allow an argument");
}
END_TEST

START_TEST(good_options_pass_through_silently)
{
	capture_stderr();
	ck_assert_int_eq(parse((const char *[]){ "--csv", NULL }), OPT_CSV);
	ck_assert_int_eq(parse((const char *[]){ "--max-sectors=8", NULL }), 's');
	ck_assert_int_eq(parse((const char *[]){ "--elev", "x", NULL }), 'e');
	ck_assert_int_eq(parse((const char *[]){ "-qV", NULL }), 'V');
	ck_assert_str_eq(stderr_text(), "");
}
END_TEST

START_TEST(usage_errors_carry_the_hint_on_the_same_line)
{
	capture_stderr();
	cli_usage_error("prog", "a TRACE is needed", NULL);
	ck_assert_str_eq(stderr_text(), "prog: a TRACE is needed; try 'prog --help'\n");
	cli_usage_error("prog", "only one TRACE at a time, not", "b");
	ck_assert_str_eq(stderr_text(), "prog: only one TRACE at a time, not b; try 'prog --help'\n");
}
END_TEST

START_TEST(numbers_are_whole_and_in_range)
{
	/* strtoul alone took the space, the sign and " -1" (as ULONG_MAX), and read 08 as octal */
	static const char *const bad[] = { "", "-1", "12a", "0", "101", "0x",
					   "99999999999999999999", " 7", "+5", " -1", "\t7",
					   "0x-5", "0x 5", "0x0x10", "0X0x1", "5 ", "1e2", "0b1" };
	unsigned long v;

	capture_stderr();
	ck_assert_int_eq(cli_number("prog", "--n", "1", 1, 100, &v), 0);
	ck_assert_uint_eq(v, 1);
	ck_assert_int_eq(cli_number("prog", "--n", "0x64", 1, 100, &v), 0);
	ck_assert_uint_eq(v, 100);
	ck_assert_int_eq(cli_number("prog", "--n", "010", 1, 100, &v), 0);
	ck_assert_uint_eq(v, 10);
	ck_assert_int_eq(cli_number("prog", "--n", "08", 1, 100, &v), 0);
	ck_assert_uint_eq(v, 8);
	ck_assert_int_eq(cli_number("prog", "--n", "0X1f", 1, 100, &v), 0);
	ck_assert_uint_eq(v, 31);
	ck_assert_str_eq(stderr_text(), "");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[128];

		ck_assert_int_ne(cli_number("prog", "--n", bad[i], 1, 100, &v), 0);
		ck_assert_uint_eq(v, 0);
		snprintf(want, sizeof(want), "prog: --n: '%s' is not a number from 1 to 100\n",
			 bad[i]);
		ck_assert_str_eq(stderr_text(), want);
	}
}
END_TEST

START_TEST(sizes_take_binary_suffixes)
{
	static const char *const bad[] = { "", "-1", "12Q", "1KX", "16777216T", "M", " -1",
					   " 1", "+1", "5i", "5iB", "1KiBB",
					   "18446744073709551616" };
	uint64_t v;

	ck_assert_int_eq(parse_size("4096", &v), 0);
	ck_assert_uint_eq(v, 4096);
	ck_assert_int_eq(parse_size("64M", &v), 0);
	ck_assert_uint_eq(v, 64ull << 20);
	ck_assert_int_eq(parse_size("2g", &v), 0);
	ck_assert_uint_eq(v, 2ull << 30);
	ck_assert_int_eq(parse_size("1KiB", &v), 0);
	ck_assert_uint_eq(v, 1024);
	ck_assert_int_eq(parse_size("3TB", &v), 0);
	ck_assert_uint_eq(v, 3ull << 40);
	ck_assert_int_eq(parse_size("512B", &v), 0);
	ck_assert_uint_eq(v, 512);
	ck_assert_int_eq(parse_size("0016Ki", &v), 0);
	ck_assert_uint_eq(v, 16384);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(parse_size(bad[i], &v) != 0, "'%s' taken as a size", bad[i]);
}
END_TEST

/* One operand after the options: argv[optind], or the refusal every program writes. */
START_TEST(one_operand_or_a_refusal)
{
	char *none[] = { (char *)"prog", NULL };
	char *one[] = { (char *)"prog", (char *)"t.blktrace", NULL };
	char *two[] = { (char *)"prog", (char *)"a", (char *)"b", NULL };

	capture_stderr();
	optind = 1;
	ck_assert_str_eq(cli_one_operand("prog", 2, one, "TRACE"), "t.blktrace");
	ck_assert_str_eq(stderr_text(), "");
	ck_assert_ptr_null(cli_one_operand("prog", 1, none, "TRACE"));
	ck_assert_str_eq(stderr_text(), "prog: a TRACE is needed; try 'prog --help'\n");
	ck_assert_ptr_null(cli_one_operand("prog", 3, two, "TRACE"));
	ck_assert_str_eq(stderr_text(), "prog: only one TRACE at a time, not b; try 'prog --help'\n");
}
END_TEST

static void usage_line(FILE *f)
{
	fprintf(f, "Usage: prog\n");
}

START_TEST(help_and_version_are_taken_alike)
{
	ck_assert(cli_help_version("prog", 'h', usage_line));
	ck_assert(cli_help_version("prog", 'V', usage_line));
	ck_assert(!cli_help_version("prog", 'q', usage_line));
	ck_assert(!cli_help_version("prog", '?', usage_line));
}
END_TEST

static Suite *cli_suite(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, bad_options_are_refused_in_one_line_that_names_them);
	tcase_add_test(tc, good_options_pass_through_silently);
	tcase_add_test(tc, usage_errors_carry_the_hint_on_the_same_line);
	tcase_add_test(tc, numbers_are_whole_and_in_range);
	tcase_add_test(tc, sizes_take_binary_suffixes);
	tcase_add_test(tc, one_operand_or_a_refusal);
	tcase_add_test(tc, help_and_version_are_taken_alike);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fake_run_suite(cli_suite());
}
