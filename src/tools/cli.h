/* cli.h - what rqdisk's three programs share on the command line: bad usage
 * refused in one line that names the problem, and numbers and sizes read strictly. */
#ifndef RQDISK_CLI_H
#define RQDISK_CLI_H

#include <getopt.h>
#include <stdint.h>

/*
 * getopt_long(), but a bad option is refused here, in one line on stderr
 * ("PROG: unrecognized option '--x'; try 'PROG --help'"), and '?' returned.
 * shortopts must start with ':' (after any '+'), so that a missing argument
 * is told apart from an unknown option.
 */
int cli_getopt(const char *prog, int argc, char **argv, const char *shortopts,
	       const struct option *longopts);

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
