/* SPDX-License-Identifier: BSD-3-Clause */
/* check_rbd_spec.c - the rbd backend's IMAGE spec: QEMU's rbd: grammar, and one-line refusals. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fake_driver.h"
#include "rbd_spec.h"

static char why[256];

START_TEST(pool_and_image)
{
	struct rbd_spec sp;

	ck_assert_int_eq(rbd_spec_parse("rqdisk/disk", &sp, why, sizeof(why)), 0);
	ck_assert_str_eq(sp.pool, "rqdisk");
	ck_assert_str_eq(sp.image, "disk");
	ck_assert_ptr_null(sp.ns);
	ck_assert_ptr_null(sp.snap);
	ck_assert_ptr_null(sp.conf);
	ck_assert_ptr_null(sp.id);
	ck_assert_uint_eq(sp.nr_opts, 0);
	rbd_spec_free(&sp);
}
END_TEST

START_TEST(namespace_snapshot_and_options)
{
	struct rbd_spec sp;

	ck_assert_int_eq(rbd_spec_parse("p/ns/img@snap1:conf=/etc/c.conf,id=client7:"
					"mon_host=127.0.0.1\\:3300:keyring=/k",
					&sp, why, sizeof(why)),
			 0);
	ck_assert_str_eq(sp.pool, "p");
	ck_assert_str_eq(sp.ns, "ns");
	ck_assert_str_eq(sp.image, "img");
	ck_assert_str_eq(sp.snap, "snap1");
	ck_assert_str_eq(sp.conf, "/etc/c.conf");
	ck_assert_str_eq(sp.id, "client7");
	ck_assert_uint_eq(sp.nr_opts, 2);
	ck_assert_str_eq(sp.keys[0], "mon_host");
	ck_assert_str_eq(sp.vals[0], "127.0.0.1:3300");
	ck_assert_str_eq(sp.keys[1], "keyring");
	ck_assert_str_eq(sp.vals[1], "/k");
	rbd_spec_free(&sp);
}
END_TEST

/* A backslash takes the next character as it is, in names and values alike. */
START_TEST(escapes)
{
	struct rbd_spec sp;

	ck_assert_int_eq(rbd_spec_parse("my\\/pool/a\\@b\\:c\\\\d:conf=/x\\,y", &sp, why,
					sizeof(why)),
			 0);
	ck_assert_str_eq(sp.pool, "my/pool");
	ck_assert_str_eq(sp.image, "a@b:c\\d");
	ck_assert_ptr_null(sp.snap);
	ck_assert_str_eq(sp.conf, "/x,y");
	rbd_spec_free(&sp);
}
END_TEST

/* Each refusal names what is wrong, on one line, and keeps nothing. */
START_TEST(bad_specs_are_refused)
{
	static const struct {
		const char *spec, *says;
	} bad[] = {
		{ "", "POOL/IMAGE" },
		{ "disk", "POOL/IMAGE expected" },
		{ "/disk", "empty" },
		{ "pool/", "empty" },
		{ "pool//disk", "empty" },
		{ "a/b/c/d", "more than POOL/NAMESPACE/IMAGE" },
		{ "pool/disk@", "snapshot" },
		{ "pool/disk@s@t", "snapshot" },
		{ "pool/disk@s/t", "snapshot" },
		{ "pool/disk:", "KEY=VALUE" },
		{ "pool/disk:conf", "KEY=VALUE" },
		{ "pool/disk:=x", "KEY=VALUE" },
		{ "pool/disk:conf=", "no value" },
		{ "pool/disk:conf=a:conf=b", "given twice" },
		{ "pool/disk:id=a,id=b", "given twice" },
		{ "pool/disk:mon/host=x", "not a Ceph option name" },
		{ "pool/disk\\", "stray" },
		{ "pool/disk:conf=x\\", "stray" },
		{ "pool/di\nsk", "control character" },
		{ "pool/disk:a=1:b=2:c=3:d=4:e=5:f=6:g=7:h=8:i=9:j=10:k=11:l=12:m=13:n=14:"
		  "o=15:p=16:q=17",
		  "more than 16 options" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct rbd_spec sp;

		why[0] = 0;
		ck_assert_msg(rbd_spec_parse(bad[i].spec, &sp, why, sizeof(why)) == -EINVAL,
			      "'%s' taken", bad[i].spec);
		ck_assert_msg(strstr(why, bad[i].says), "'%s': '%s' does not say '%s'",
			      bad[i].spec, why, bad[i].says);
		ck_assert_msg(!strchr(why, '\n'), "'%s': more than one line", bad[i].spec);
		ck_assert_ptr_null(sp.buf);
	}
	ck_assert_int_eq(rbd_spec_parse(NULL, &(struct rbd_spec){ 0 }, why, sizeof(why)), -EINVAL);
}
END_TEST

/*
 * A refused token is cut where it went wrong: the message names what came
 * before, and nothing past it (the parse buffer's unwritten bytes).
 */
START_TEST(a_bad_token_is_named_as_far_as_it_went)
{
	static const struct {
		const char *spec, *why;
	} bad[] = {
		{ "pool\\", "rbd: pool: a stray '\\' or a control character" },
		{ "pool/di\x01sk", "rbd: pool: a stray '\\' or a control character" },
		{ "pool/disk:abcdefgh\x01", "rbd: option abcdefgh: a stray '\\' or a control character" },
		{ "pool/disk:ab\\", "rbd: option ab: a stray '\\' or a control character" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct rbd_spec sp;

		ck_assert_int_eq(rbd_spec_parse(bad[i].spec, &sp, why, sizeof(why)), -EINVAL);
		ck_assert_str_eq(why, bad[i].why);
	}
}
END_TEST

START_TEST(only_the_rbd_prefix_names_an_rbd_image)
{
	ck_assert(rbd_is_spec("rbd:p/i"));
	ck_assert(!rbd_is_spec("./rbd:p/i"));
	ck_assert(!rbd_is_spec("rbd"));
	ck_assert(!rbd_is_spec("nbd://host/x"));
}
END_TEST

static Suite *rbd_spec_suite(void)
{
	Suite *s = suite_create("rbd_spec");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, pool_and_image);
	tcase_add_test(tc, namespace_snapshot_and_options);
	tcase_add_test(tc, escapes);
	tcase_add_test(tc, bad_specs_are_refused);
	tcase_add_test(tc, a_bad_token_is_named_as_far_as_it_went);
	tcase_add_test(tc, only_the_rbd_prefix_names_an_rbd_image);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fake_run_suite(rbd_spec_suite());
}
