/* SPDX-License-Identifier: BSD-3-Clause */
/* cli.h - what rqdisk's four programs share on the command line: bad usage
 * refused in one line that names the problem, and numbers and sizes read strictly. */
#ifndef RQDISK_CLI_H
#define RQDISK_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * getopt_long(), but a bad option is refused here, in one line on stderr
 * ("PROG: unrecognized option '--x'; try 'PROG --help'"), and '?' returned.
 * shortopts must start with ':' (after any '+'), so that a missing argument
 * is told apart from an unknown option.
 */
int cli_getopt(const char *prog, int argc, char **argv, const char *shortopts,
	       const struct option *longopts);

/*
 * -h and -V as every program takes them: usage(stdout), or "PROG VERSION"
 * on stdout.  True when opt was one of them: the program exits 0.
 */
bool cli_help_version(const char *prog, int opt, void (*usage)(FILE *f));

/*
 * The one operand after the options, named what ("TRACE"): argv[optind],
 * or NULL after "PROG: a WHAT is needed" or "PROG: only one WHAT at a
 * time, not ARG" (cli_usage_error).
 */
const char *cli_one_operand(const char *prog, int argc, char **argv, const char *what);

/*
 * The names of a registry in an option's text in --help, which is at
 * column col: first, then each name but skip, each followed by ',', then
 * last, wrapped at 80 columns under the option's text at column indent.
 * Built from the registries, so that a new elevator or filter is in
 * --help without anyone writing it there.
 */
void cli_usage_list(FILE *f, int indent, int col, const char *first, const char *const *names,
		    const char *skip, const char *last);

/* "PROG: WHAT[ ARG]; try 'PROG --help'" on stderr. */
void cli_usage_error(const char *prog, const char *what, const char *arg);

/* s as an unsigned number, decimal (leading zeros too) or 0x hex, nothing before
 * or after it, from min to max; else 0 and
 * "PROG: OPT: 'S' is not a number from MIN to MAX" on stderr, -EINVAL. */
int cli_number(const char *prog, const char *opt, const char *s, unsigned long min,
	       unsigned long max, unsigned long *out);

/* A decimal byte count with an optional K/M/G/T suffix (powers of 1024; Ki, KiB
 * and KB too) or B, that fits in 64 bits: 0 or -EINVAL. */
int parse_size(const char *s, uint64_t *out);

#endif
