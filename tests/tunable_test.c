/* SPDX-License-Identifier: BSD-3-Clause */
/* tunable_test.c - the checks every elevator's tunables share: defaults, range, refusals. */
#include <errno.h>
#include <stdio.h>

#include "tunable_test.h"

/* Set before the tests run; Check's forked children inherit them. */
static const char *tuned_elevator;
static const struct tunable_case *cases;
static size_t nr_cases;

void tunable_store_ok(struct fake_disk *fd, const char *name, const char *value)
{
	ck_assert_int_eq(elv_tunable_store(fd->q->elevator, name, value), 0);
}

long long tunable_show(const struct fake_disk *fd, const char *name)
{
	long long v = -1;

	ck_assert_int_eq(elv_tunable_show(fd->q->elevator, name, &v), 0);
	return v;
}

START_TEST(test_tunable_defaults)
{
	struct fake_disk *fd = fake_disk_new(tuned_elevator);

	for (size_t i = 0; i < nr_cases; i++)
		ck_assert_msg(tunable_show(fd, cases[i].name) == cases[i].def,
			      "%s is %lld, expected %lld", cases[i].name,
			      tunable_show(fd, cases[i].name), cases[i].def);
	fake_disk_free(fd);
}
END_TEST

/* Both ends of the range and the middle read back; a trailing newline (echo) is allowed. */
START_TEST(test_tunable_round_trip)
{
	struct fake_disk *fd = fake_disk_new(tuned_elevator);

	for (size_t i = 0; i < nr_cases; i++) {
		const struct tunable_case *c = &cases[i];
		const long long values[] = { c->min, c->max, c->min + (c->max - c->min) / 2 };
		char v[32];

		for (size_t j = 0; j < sizeof(values) / sizeof(values[0]); j++) {
			snprintf(v, sizeof(v), j == 2 ? "%lld\n" : "%lld", values[j]);
			tunable_store_ok(fd, c->name, v);
			ck_assert_int_eq(tunable_show(fd, c->name), values[j]);
		}
	}
	fake_disk_free(fd);
}
END_TEST

static void assert_refused(struct fake_disk *fd, const struct tunable_case *c, const char *v)
{
	ck_assert_msg(elv_tunable_store(fd->q->elevator, c->name, v) == -EINVAL,
		      "%s accepted \"%s\"", c->name, v);
	ck_assert_int_eq(tunable_show(fd, c->name), c->def);
}

/* Out of range or not a number: -EINVAL, and the value before stays. */
START_TEST(test_tunable_rejects_bad_values)
{
	static const char *const bad[] = {
		"-1", "", "abc", "12abc", "1.5", "0x10", "2147483648", "99999999999999999999999",
	};
	struct fake_disk *fd = fake_disk_new(tuned_elevator);
	char v[32];

	for (size_t i = 0; i < nr_cases; i++) {
		for (size_t j = 0; j < sizeof(bad) / sizeof(bad[0]); j++)
			assert_refused(fd, &cases[i], bad[j]);
		snprintf(v, sizeof(v), "%lld", cases[i].min - 1);
		if (cases[i].min > 0)
			assert_refused(fd, &cases[i], v);
		snprintf(v, sizeof(v), "%lld", cases[i].max + 1);
		assert_refused(fd, &cases[i], v);
	}
	ck_assert_int_eq(elv_tunable_store(fd->q->elevator, "no_such_tunable", "1"), -ENOENT);
	fake_disk_free(fd);
}
END_TEST

TCase *tunable_tests(const char *elevator, const struct tunable_case *c, size_t n)
{
	TCase *tune = tcase_create("tunables");

	tuned_elevator = elevator;
	cases = c;
	nr_cases = n;
	tcase_add_test(tune, test_tunable_defaults);
	tcase_add_test(tune, test_tunable_round_trip);
	tcase_add_test(tune, test_tunable_rejects_bad_values);
	return tune;
}
