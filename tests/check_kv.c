/* SPDX-License-Identifier: BSD-3-Clause */
/* check_kv.c - the "KEY=VALUE,..." walk that spec parsers share, and what one makes of it. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "device.h"
#include "fake_driver.h"
#include "kv.h"

/* What the walk handed over, "[KEY=VALUE]" each, "[KEY]" for an item with no '='. */
struct seen {
	char text[256];
	size_t used;
	unsigned int nr, stop_at;
};

static int record(void *opaque, const char *key, size_t klen, const char *val, size_t vlen)
{
	struct seen *s = opaque;

	if (val)
		s->used += (size_t)snprintf(s->text + s->used, sizeof(s->text) - s->used,
					    "[%.*s=%.*s]", (int)klen, key, (int)vlen, val);
	else
		s->used += (size_t)snprintf(s->text + s->used, sizeof(s->text) - s->used, "[%.*s]",
					    (int)klen, key);
	ck_assert_uint_lt(s->used, sizeof(s->text));
	return ++s->nr == s->stop_at ? -EINVAL : 0;
}

static const char *walk(const char *spec, int *ret)
{
	static struct seen s;

	memset(&s, 0, sizeof(s));
	*ret = kv_walk(spec, record, &s);
	return s.text;
}

START_TEST(an_empty_spec_has_no_items)
{
	int ret = -1;

	ck_assert_str_eq(walk(NULL, &ret), "");
	ck_assert_int_eq(ret, 0);
	ck_assert_str_eq(walk("", &ret), "");
	ck_assert_int_eq(ret, 0);
}
END_TEST

START_TEST(items_in_order)
{
	int ret = -1;

	ck_assert_str_eq(walk("a=1,bb=22,c=3", &ret), "[a=1][bb=22][c=3]");
	ck_assert_int_eq(ret, 0);
	/* only the first '=' splits: a value may hold more */
	ck_assert_str_eq(walk("path=/x=y", &ret), "[path=/x=y]");
}
END_TEST

START_TEST(an_item_without_equals_has_no_value)
{
	int ret = -1;

	ck_assert_str_eq(walk("a", &ret), "[a]");
	ck_assert_str_eq(walk("a=1,b,c=3", &ret), "[a=1][b][c=3]");
	ck_assert_int_eq(ret, 0);
}
END_TEST

START_TEST(empty_keys_and_values_are_handed_over)
{
	int ret = -1;

	ck_assert_str_eq(walk("=1", &ret), "[=1]");
	ck_assert_int_eq(ret, 0);
	/* an empty value, not none: "[a=]", where "a" alone is "[a]" */
	ck_assert_str_eq(walk("a=", &ret), "[a=]");
	ck_assert_str_eq(walk("=", &ret), "[=]");
}
END_TEST

START_TEST(a_trailing_comma_ends_the_spec)
{
	int ret = -1;

	ck_assert_str_eq(walk("a=1,", &ret), "[a=1]");
	ck_assert_int_eq(ret, 0);
	/* but an empty item before it, or a leading one, is an empty key */
	ck_assert_str_eq(walk("a=1,,", &ret), "[a=1][]");
	ck_assert_str_eq(walk(",a=1", &ret), "[][a=1]");
	ck_assert_str_eq(walk(",", &ret), "[]");
}
END_TEST

START_TEST(repeated_keys_are_each_handed_over)
{
	int ret = -1;

	ck_assert_str_eq(walk("a=1,a=2", &ret), "[a=1][a=2]");
	ck_assert_int_eq(ret, 0);
}
END_TEST

START_TEST(the_first_refusal_stops_the_walk)
{
	struct seen s = { .stop_at = 2 };

	ck_assert_int_eq(kv_walk("a=1,b=2,c=3", record, &s), -EINVAL);
	ck_assert_str_eq(s.text, "[a=1][b=2]");
}
END_TEST

START_TEST(key_names_match_whole)
{
	ck_assert(kv_key_is("seed=1", 4, "seed"));
	ck_assert(!kv_key_is("seed=1", 3, "seed"));
	ck_assert(!kv_key_is("seeds=1", 5, "seed"));
	ck_assert(!kv_key_is("", 0, "seed"));
}
END_TEST

/* What dev_parse_keys, a caller, makes of the items the walk hands it. */
static const struct dev_key keys[] = {
	{ .name = "depth", .min = 1, .max = 64 },
	{ .name = "ms", .max = 1000 },
	{ .name = NULL },
};

START_TEST(a_layer_refuses_in_one_line)
{
	uint64_t vals[2] = { 0 };
	char why[128];

	ck_assert_int_eq(dev_parse_keys("x", "depth=4,ms=7", keys, vals, why, sizeof(why)), 0);
	ck_assert_uint_eq(vals[0], 4);
	ck_assert_uint_eq(vals[1], 7);
	/* repeated: the last wins */
	ck_assert_int_eq(dev_parse_keys("x", "depth=4,depth=9,", keys, vals, why, sizeof(why)), 0);
	ck_assert_uint_eq(vals[0], 9);
	ck_assert_int_eq(dev_parse_keys("x", "depth", keys, vals, why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "x: depth must be a whole number from 1 to 64, not ''");
	ck_assert_int_eq(dev_parse_keys("x", "depth=", keys, vals, why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "x: depth must be a whole number from 1 to 64, not ''");
	ck_assert_int_eq(dev_parse_keys("x", "ms=1,,", keys, vals, why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "x: no key ''");
	ck_assert_int_eq(dev_parse_keys("x", "=3", keys, vals, why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "x: no key ''");
	ck_assert_int_eq(dev_parse_keys("x", "deep=3", keys, vals, why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "x: no key 'deep'");
	ck_assert_int_eq(dev_parse_keys("x", NULL, keys, vals, why, sizeof(why)), 0);
}
END_TEST

static Suite *kv_suite(void)
{
	Suite *s = suite_create("kv");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, an_empty_spec_has_no_items);
	tcase_add_test(tc, items_in_order);
	tcase_add_test(tc, an_item_without_equals_has_no_value);
	tcase_add_test(tc, empty_keys_and_values_are_handed_over);
	tcase_add_test(tc, a_trailing_comma_ends_the_spec);
	tcase_add_test(tc, repeated_keys_are_each_handed_over);
	tcase_add_test(tc, the_first_refusal_stops_the_walk);
	tcase_add_test(tc, key_names_match_whole);
	tcase_add_test(tc, a_layer_refuses_in_one_line);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fake_run_suite(kv_suite());
}
