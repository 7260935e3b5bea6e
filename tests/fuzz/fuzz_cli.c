/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_cli.c - fuzz target: cli_number and parse_size on any string.  What
 * they accept must be what cli.h promises, digit for digit: an unsigned
 * decimal or 0x hex number in range; a decimal size with K, M, G or T
 * (and i, iB or B) that fits in 64 bits.
 */
#include <ctype.h>
#include <limits.h>
#include <string.h>

#include "cli.h"
#include "fuzz.h"

#define MAX_TEXT 64

static FILE *devnull, *real_stderr;

/* The refusals' lines on stderr are not what is fuzzed: hide them, but not a broken property. */
static void quiet(bool on)
{
	stderr = on && devnull ? devnull : real_stderr;
}

/* The reference: digits in base, or false past max. */
static bool digits_value(const char *s, size_t n, unsigned int base, uint64_t max, uint64_t *v)
{
	*v = 0;
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++) {
		int c = tolower((unsigned char)s[i]);
		unsigned int d =
		    isdigit(c) ? (unsigned int)(c - '0') : (unsigned int)(c - 'a' + 10);

		if (!isxdigit(c) || d >= base || *v > (max - d) / base)
			return false;
		*v = *v * base + d;
	}
	return true;
}

static void check_number(const char *s, unsigned long min, unsigned long max)
{
	bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	const char *digits = hex ? s + 2 : s;
	unsigned long v;
	uint64_t want;
	bool valid = digits_value(digits, strlen(digits), hex ? 16 : 10, ULONG_MAX, &want) &&
		     want >= min && want <= max;
	int ret;

	quiet(true);
	ret = cli_number("fuzz", "--n", s, min, max, &v);
	quiet(false);
	FUZZ_ASSERT(!ret == valid);
	FUZZ_ASSERT(v == (valid ? want : 0));
}

static unsigned int size_shift(const char *suffix, size_t *len)
{
	static const char units[] = "kmgt";
	const char *u = *suffix ? strchr(units, tolower((unsigned char)*suffix)) : NULL;

	*len = 0;
	if (!u)
		return 0;
	*len = 1;
	if (!strcmp(suffix + 1, "i") || !strcmp(suffix + 1, "B"))
		*len = 2;
	else if (!strcmp(suffix + 1, "iB"))
		*len = 3;
	return 10 * (unsigned int)(u - units + 1);
}

static void check_size(const char *s)
{
	size_t nr_digits = strspn(s, "0123456789"), suffix_len;
	unsigned int shift = size_shift(s + nr_digits, &suffix_len);
	uint64_t v = 0, want;
	bool valid;

	if (!strcmp(s + nr_digits, "B"))
		suffix_len = 1; /* bytes said outright */
	valid = s[nr_digits + suffix_len] == '\0' &&
		digits_value(s, nr_digits, 10, UINT64_MAX >> shift, &want);
	FUZZ_ASSERT(!parse_size(s, &v) == valid);
	if (valid)
		FUZZ_ASSERT(v == want << shift);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size, MAX_TEXT);

	if (!real_stderr) {
		real_stderr = stderr;
		devnull = fopen("/dev/null", "w");
	}
	check_number(s, 0, ULONG_MAX);
	check_number(s, 1, 65536);
	check_size(s);
	free(s);
	return 0;
}
