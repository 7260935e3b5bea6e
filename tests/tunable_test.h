/* SPDX-License-Identifier: BSD-3-Clause */
/* tunable_test.h - the checks every elevator's tunables share: defaults, range, refusals. */
#ifndef RQDISK_TUNABLE_TEST_H
#define RQDISK_TUNABLE_TEST_H

#include <check.h>
#include <stddef.h>

#include "fake_driver.h"

struct tunable_case {
	const char *name;
	long long def, min, max;
};

void tunable_store_ok(struct fake_disk *fd, const char *name, const char *value);
long long tunable_show(const struct fake_disk *fd, const char *name);

/*
 * A "tunables" test case for the elevator: each of cases has its default,
 * reads back what was stored at both ends of its range and in between, and
 * refuses what is not a number in the range, keeping the value before.
 */
TCase *tunable_tests(const char *elevator, const struct tunable_case *cases, size_t n);

#endif
