/* SPDX-License-Identifier: BSD-3-Clause */
/* checkorder.c - rqdisk-checkorder: is the barrier order kept in a blktrace trace? */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkorder.h"
#include "cli.h"

#define PROG "rqdisk-checkorder"

/* Exit statuses, as cmp(1) and fsck have them: a verdict, or no verdict at all. */
enum {
	EXIT_ORDER_KEPT = 0,
	EXIT_ORDER_BROKEN = 1,
	EXIT_TROUBLE = 2,
};

static const struct option long_options[] = {
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " [OPTIONS] TRACE\n"
		"Check that TRACE (blktrace's TRACE.blktrace.N files, or one file TRACE)\n"
		"keeps the barrier order: every bio queued before a barrier completed\n"
		"before the barrier was issued, and none queued after it was issued\n"
		"before the barrier completed.\n"
		"\n"
		"  -q, --quiet     print nothing when the order was kept\n"
		"  -h, --help      show this help\n"
		"  -V, --version   show the version\n"
		"\n"
		"Exit status: 0 order kept, 1 order broken, 2 bad usage or unreadable trace.\n");
}

/* The trace's name, or NULL when main should exit with *status. */
static const char *parse_options(int argc, char **argv, bool *quiet, int *status)
{
	int opt;

	*status = EXIT_TROUBLE;
	while ((opt = cli_getopt(PROG, argc, argv, ":qhV", long_options)) != -1) {
		switch (opt) {
		case 'q':
			*quiet = true;
			break;
		default:
			if (cli_help_version(PROG, opt, usage))
				*status = EXIT_ORDER_KEPT;
			return NULL;
		}
	}
	return cli_one_operand(PROG, argc, argv, "TRACE");
}

/* A verdict that did not reach standard output is no verdict. */
static int verdict(int status)
{
	if (fflush(stdout) || ferror(stdout)) {
		perror(PROG ": standard output");
		return EXIT_TROUBLE;
	}
	return status;
}

int main(int argc, char **argv)
{
	struct order_report report;
	struct bt_trace t;
	bool quiet = false;
	int status = EXIT_TROUBLE;
	const char *name = parse_options(argc, argv, &quiet, &status);
	char why[512];
	int ret;

	if (!name)
		return status;
	if (bt_trace_load(name, &t, why, sizeof(why))) {
		fprintf(stderr, PROG ": %s\n", why);
		return EXIT_TROUBLE;
	}
	ret = order_check(&t, &report);
	bt_trace_free(&t);
	if (ret < 0) {
		fprintf(stderr, PROG ": %s: %s\n", name, report.why);
		return EXIT_TROUBLE;
	}
	if (ret) {
		printf(PROG ": %s: order broken: %s\n", name, report.why);
		return verdict(EXIT_ORDER_BROKEN);
	}
	if (!quiet) {
		printf(PROG ": %s: %zu bios, %zu barriers, order kept", name, report.bios,
		       report.barriers);
		if (report.outstanding)
			printf(" (%zu bios still outstanding at the end)", report.outstanding);
		putchar('\n');
	}
	return verdict(EXIT_ORDER_KEPT);
}
