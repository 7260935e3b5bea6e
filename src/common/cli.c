/* SPDX-License-Identifier: BSD-3-Clause */
/* cli.c - one-line refusals of bad usage, and strict numbers, for every program. */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_usage_error(const char *prog, const char *what, const char *arg)
{
	/* an empty argument is shown as '', not as nothing */
	fprintf(stderr, "%s: %s%s%s; try '%s --help'\n", prog, what, arg ? " " : "",
		arg ? (*arg ? arg : "''") : "", prog);
}

bool cli_help_version(const char *prog, int opt, void (*usage)(FILE *f))
{
	if (opt == 'h')
		usage(stdout);
	else if (opt == 'V')
		printf("%s %s\n", prog, PACKAGE_VERSION);
	return opt == 'h' || opt == 'V';
}

const char *cli_one_operand(const char *prog, int argc, char **argv, const char *what)
{
	char text[64];

	if (argc - optind == 1)
		return argv[optind];
	if (argc <= optind)
		snprintf(text, sizeof(text), "a %s is needed", what);
	else
		snprintf(text, sizeof(text), "only one %s at a time, not", what);
	cli_usage_error(prog, text, argc <= optind ? NULL : argv[optind + 1]);
	return NULL;
}

/* How many long options the abbreviation in "--abbr[=value]" could stand for. */
static int long_matches(const char *arg, const struct option *longopts)
{
	size_t len = strcspn(arg + 2, "=");
	int n = 0;

	for (const struct option *o = longopts; o->name; o++)
		n += !strncmp(o->name, arg + 2, len);
	return n;
}

static const char *long_name(int val, const struct option *longopts)
{
	for (const struct option *o = longopts; o->name; o++)
		if (o->val == val && o->has_arg == no_argument)
			return o->name;
	return NULL;
}

/*
 * getopt leaves only optopt and optind behind: a long option always takes
 * its whole word, so argv[optind - 1] is it; a short one may sit inside a
 * cluster ("-rx"), so only optopt names it.
 */
static void refuse_option(const char *prog, int opt, char **argv, const char *shortopts,
			  const struct option *longopts)
{
	const char *word = argv[optind - 1];
	const char *name = long_name(optopt, longopts);
	char what[160];

	if (opt == ':' && !strncmp(word, "--", 2))
		snprintf(what, sizeof(what), "option '%s' requires an argument", word);
	else if (opt == ':')
		snprintf(what, sizeof(what), "option requires an argument -- '%c'", optopt);
	else if (!optopt && long_matches(word, longopts) > 1)
		snprintf(what, sizeof(what), "option '%.*s' is ambiguous",
			 (int)strcspn(word, "="), word);
	else if (!optopt)
		snprintf(what, sizeof(what), "unrecognized option '%s'", word);
	else if (name && (optopt > 255 || strchr(shortopts, optopt)))
		snprintf(what, sizeof(what), "option '--%s' doesn't allow an argument", name);
	else
		snprintf(what, sizeof(what), "invalid option -- '%c'", optopt);
	cli_usage_error(prog, what, NULL);
}

int cli_getopt(const char *prog, int argc, char **argv, const char *shortopts,
	       const struct option *longopts)
{
	int opt;

	/* The leading ':' also keeps getopt's own message, a second line, unsaid. */
	assert(shortopts[*shortopts == '+'] == ':');
	opt = getopt_long(argc, argv, shortopts, longopts, NULL);
	if (opt == '?' || opt == ':') {
		refuse_option(prog, opt, argv, shortopts, longopts);
		return '?';
	}
	return opt;
}

/*
 * strtoul alone would take " 7", "+7" and " -1" (as ULONG_MAX), read "010"
 * as octal, and in base 16 skip a second 0x ("0x0x10"): the string must be
 * digits alone, in base 10 or after one 0x.
 */
int cli_number(const char *prog, const char *opt, const char *s, unsigned long min,
	       unsigned long max, unsigned long *out)
{
	bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	const char *digits = hex ? s + 2 : s;
	size_t n = strspn(digits, hex ? "0123456789abcdefABCDEF" : "0123456789");

	errno = 0;
	*out = n && !digits[n] ? strtoul(digits, NULL, hex ? 16 : 10) : 0;
	if (!n || digits[n] || errno || *out < min || *out > max) {
		fprintf(stderr, "%s: %s: '%s' is not a number from %lu to %lu\n", prog, opt, s,
			min, max);
		*out = 0;
		return -EINVAL;
	}
	return 0;
}

int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned int shift = 0;

	if (!isdigit((unsigned char)*s)) /* strtoull would skip a space and take a sign */
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'T': case 't': shift += 10; /* fall through */
	case 'G': case 'g': shift += 10; /* fall through */
	case 'M': case 'm': shift += 10; /* fall through */
	case 'K': case 'k': shift += 10; end++; break;
	default: break;
	}
	if (shift && *end == 'i') /* KiB, Ki */
		end += end[1] == 'B' ? 2 : 1;
	else if (*end == 'B') /* KB, or B alone */
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

#define USAGE_WIDTH 80

/* The words of text after column *col, wrapped under the option's text at USAGE_WIDTH. */
static void usage_words(FILE *f, int indent, int *col, const char *text)
{
	while (*text) {
		int len = (int)strcspn(text, " ");

		if (*col + 1 + len > USAGE_WIDTH)
			*col = fprintf(f, "\n%*s%.*s", indent, "", len, text) - 1;
		else
			*col += fprintf(f, " %.*s", len, text);
		text += len + (text[len] == ' ');
	}
}

void cli_usage_list(FILE *f, int indent, int col, const char *first, const char *const *names,
		    const char *skip, const char *last)
{
	char word[64];

	usage_words(f, indent, &col, first);
	for (; *names; names++) {
		if (skip && !strcmp(*names, skip))
			continue;
		snprintf(word, sizeof(word), "%s,", *names);
		usage_words(f, indent, &col, word);
	}
	usage_words(f, indent, &col, last);
	fprintf(f, "\n");
}
