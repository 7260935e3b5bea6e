/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_differential.c - the differential test of the crash lab
 * (tests/diff_stack.h) on a case decoded from the fuzzer's bytes: the
 * real stack, its log and rqdisk-crash's states against the reference
 * disk.  A disagreement aborts, with the check and the case printed to
 * keep as a regression case in tests/check_differential.c.
 * RQDISK_DIFF_FEATURES=0x3ff lets the case use every feature, the ones of
 * defects not yet fixed too.
 */
#include <stdlib.h>

#include "diff_stack.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *f = getenv("RQDISK_DIFF_FEATURES");
	unsigned int features = DIFF_FEATURES_REQUIRED;
	struct diff_case c;
	char why[1024];
	int ret;

	if (f && *f)
		features = (unsigned int)strtoul(f, NULL, 0);
	diff_decode(&c, data, size, features);
	ret = diff_run(&c, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "fuzz-differential: %s\n", why);
		diff_print(stderr, &c);
	}
	diff_case_free(&c);
	FUZZ_ASSERT(ret == 0);
	return 0;
}
