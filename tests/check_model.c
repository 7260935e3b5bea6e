/* SPDX-License-Identifier: BSD-3-Clause */
/* check_model.c - the timing models: parsing, the seek curve, rotation, streaming, channels. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fake_driver.h"
#include "model.h"

#define MS 1000000ull
#define US 1000ull
#define GIB_SECTORS (2ull * 1024 * 1024)

static struct disk_model *model(const char *spec, sector_t capacity)
{
	struct disk_model *m;
	char why[256] = "";

	ck_assert_msg(disk_model_new(spec, capacity, &m, why, sizeof(why)) == 0, "%s: %s", spec,
		      why);
	ck_assert_ptr_nonnull(m);
	return m;
}

static uint64_t serve(struct disk_model *m, enum req_op op, sector_t sector, unsigned int n,
		      uint64_t now)
{
	struct model_io io = { .op = op, .flags = 0, .sector = sector, .nr_sectors = n };

	return disk_model_service(m, &io, now);
}

static void assert_refused(const char *spec, const char *reason)
{
	struct disk_model *m = (void *)1;
	char why[256] = "";

	ck_assert_int_eq(disk_model_new(spec, GIB_SECTORS, &m, why, sizeof(why)), -EINVAL);
	ck_assert_ptr_null(m);
	ck_assert_msg(strstr(why, reason), "%s: '%s' lacks '%s'", spec, why, reason);
	ck_assert_ptr_null(strchr(why, '\n'));
}

START_TEST(none_is_no_model)
{
	struct disk_model *m = (void *)1;
	char why[64];

	ck_assert_int_eq(disk_model_new("none", GIB_SECTORS, &m, why, sizeof(why)), 0);
	ck_assert_ptr_null(m);
}
END_TEST

START_TEST(bad_specs_are_refused_by_name)
{
	assert_refused("tape", "'tape' is not none, hdd or ssd");
	assert_refused("hdd:rpm=0", "rpm must be a number from 1");
	assert_refused("hdd:rpm=fast", "not 'fast'");
	assert_refused("hdd:heads=4", "no key 'heads'");
	assert_refused("hdd:rpm", "'rpm' is not KEY=VALUE");
	assert_refused("ssd:preset=hp97560", "ssd has no preset 'hp97560'");
	assert_refused("ssd:channels=0", "channels must be");
	assert_refused("ssd:depth=1e6", "depth must be");
	/* cut at 63 characters this would read as 1 */
	assert_refused("ssd:depth=1.00000000000000000000000000000000000000000000000000000000000000x",
		       "the value of 'depth' is longer than 63 characters");
}
END_TEST

START_TEST(keys_apply_in_order_after_a_preset)
{
	struct disk_model *m = model("hdd:preset=hp97560,rpm=5400,depth=4", GIB_SECTORS);
	char buf[512];

	ck_assert_uint_eq(disk_model_depth(m), 4);
	disk_model_describe(m, buf, sizeof(buf));
	ck_assert_msg(strstr(buf, "hdd cylinders=1962 rpm=5400 spt=72 seek_a=3.24"), "%s", buf);
	disk_model_free(m);
	m = model("hdd", GIB_SECTORS);
	disk_model_describe(m, buf, sizeof(buf));
	ck_assert_msg(strstr(buf, "rpm=7200") && strstr(buf, "depth=1"), "%s", buf);
	ck_assert_uint_eq(disk_model_depth(m), 1);
	disk_model_free(m);
	m = model("ssd", GIB_SECTORS);
	ck_assert_uint_eq(disk_model_depth(m), 32);
	disk_model_free(m);
}
END_TEST

/*
 * The HP 97560's curve, with the platter spun so fast (60 us a turn) that
 * rotation and transfer vanish in the tolerance.
 */
static void assert_seek(unsigned int d, double expect_ms)
{
	struct disk_model *m = model("hdd:preset=hp97560,rpm=1000000,overhead=0", 1962 * 1000);
	uint64_t t0 = serve(m, REQ_OP_READ, 0, 1, 0);
	uint64_t t1 = serve(m, REQ_OP_READ, (sector_t)d * 1000, 1, t0);
	double ms = (double)(t1 - t0) / MS;

	ck_assert_msg(ms >= expect_ms && ms <= expect_ms + 0.061, "seek %u: %.3f ms, want %.3f",
		      d, ms, expect_ms);
	disk_model_free(m);
}

START_TEST(hp97560_seek_curve)
{
	assert_seek(1, 3.24 + 0.400);
	assert_seek(100, 3.24 + 0.400 * 10);
	assert_seek(383, 3.24 + 0.400 * 19.570385);
	assert_seek(1000, 8.00 + 0.008 * 1000);
	assert_seek(1961, 8.00 + 0.008 * 1961);
}
END_TEST

static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 33;
}

/* Mean service of random 4 KiB reads, one at a time. */
static double mean_random_ms(const char *spec)
{
	struct disk_model *m = model(spec, GIB_SECTORS * 100);
	uint64_t x = 42, now = 0, total = 0;
	const unsigned int n = 20000;

	for (unsigned int i = 0; i < n; i++) {
		sector_t s = lcg(&x) % (GIB_SECTORS * 100 - 8) & ~7ull;
		uint64_t done = serve(m, REQ_OP_READ, s, 8, now);

		total += done - now;
		now = done;
	}
	disk_model_free(m);
	return (double)total / n / MS;
}

START_TEST(default_hdd_averages_like_a_7200rpm_disk)
{
	double seek = mean_random_ms("hdd:rpm=1000000,overhead=0");
	double all = mean_random_ms("hdd");

	ck_assert_msg(seek > 8.0 && seek < 9.0, "average seek %.2f ms", seek);
	/* plus half a turn (4.17 ms) on average, the overhead and the transfer */
	ck_assert_msg(all - seek > 3.9 && all - seek < 4.5, "rotation %.2f ms", all - seek);
}
END_TEST

START_TEST(sequential_streams_without_positioning)
{
	struct disk_model *m = model("hdd", GIB_SECTORS);
	uint64_t t0 = serve(m, REQ_OP_READ, 5000, 256, 0);
	uint64_t t1 = serve(m, REQ_OP_READ, 5256, 256, t0);
	/* 256 of 2400 sectors a turn of 8.33 ms, plus 0.1 ms overhead */
	uint64_t expect = 100 * US + 256 * (60000000000ull / 7200) / 2400;

	ck_assert_uint_le(t1 - t0, expect + 1);
	ck_assert_uint_ge(t1 - t0, expect - 1);
	disk_model_free(m);
}
END_TEST

START_TEST(short_seeks_cost_less_than_long_ones)
{
	struct disk_model *a = model("hdd", GIB_SECTORS), *b = model("hdd", GIB_SECTORS);
	uint64_t near = 0, far = 0, now = 0;

	/* the same rotational positions, different distances: spt divides both steps */
	for (unsigned int i = 1; i <= 100; i++) {
		near += serve(a, REQ_OP_READ, (i % 2) * 2400 * 10, 8, now) - now;
		far += serve(b, REQ_OP_READ, (i % 2) * 2400 * 800, 8, now) - now;
		now += 100 * MS;
	}
	ck_assert_uint_lt(near, far);
	disk_model_free(a);
	disk_model_free(b);
}
END_TEST

START_TEST(hdd_serves_one_at_a_time)
{
	struct disk_model *m = model("hdd:depth=4", GIB_SECTORS);
	uint64_t t0 = serve(m, REQ_OP_READ, 1000, 8, 0);
	uint64_t t1 = serve(m, REQ_OP_READ, 900000, 8, 0);
	uint64_t t2 = serve(m, REQ_OP_FLUSH, 0, 0, 0);

	ck_assert_uint_gt(t1, t0 + 100 * US);
	ck_assert_uint_eq(t2, t1 + 100 * US);
	disk_model_free(m);
}
END_TEST

START_TEST(ssd_channels_work_in_parallel)
{
	/* 2 channels of 1 MB/s each: 4 KiB takes 4096 us on one */
	struct disk_model *m = model("ssd:channels=2,bandwidth=2,read_us=100,flush_us=7", 1000);
	uint64_t a = serve(m, REQ_OP_READ, 0, 8, 0);
	uint64_t b = serve(m, REQ_OP_READ, 8, 8, 0);
	uint64_t c = serve(m, REQ_OP_READ, 16, 8, 0);
	uint64_t f = serve(m, REQ_OP_FLUSH, 0, 0, 0);

	ck_assert_uint_eq(a, 100 * US + 4096 * US);
	ck_assert_uint_eq(b, a);
	ck_assert_uint_eq(c, 2 * a);
	ck_assert_uint_eq(f, c + 7 * US);
	disk_model_free(m);
}
END_TEST

START_TEST(same_input_same_times)
{
	const char *specs[] = { "hdd", "ssd" };

	for (unsigned int k = 0; k < 2; k++) {
		struct disk_model *a = model(specs[k], GIB_SECTORS), *b = model(specs[k], GIB_SECTORS);
		uint64_t x = 7, now = 0;

		for (unsigned int i = 0; i < 1000; i++) {
			sector_t s = lcg(&x) % GIB_SECTORS;
			enum req_op op = i % 3 ? REQ_OP_READ : REQ_OP_WRITE;
			uint64_t ta = serve(a, op, s, 8, now), tb = serve(b, op, s, 8, now);

			ck_assert_uint_eq(ta, tb);
			now += lcg(&x) % (2 * MS);
		}
		disk_model_free(a);
		disk_model_free(b);
	}
}
END_TEST

/* The slowest hdd takes about 1e19 ns a long seek: its times stop at UINT64_MAX, never wrap. */
START_TEST(slowest_times_never_wrap)
{
	struct disk_model *m = model("hdd:rpm=1,cylinders=1e9,seek_knee=0,seek_c=1e4,seek_e=1e4,"
				     "overhead=1e4", GIB_SECTORS);
	uint64_t done = 0;

	for (unsigned int i = 0; i < 4; i++) {
		uint64_t t = serve(m, REQ_OP_READ, i % 2 ? GIB_SECTORS - 8 : 0, 8, 0);

		ck_assert_uint_ge(t, done);
		done = t;
	}
	ck_assert_uint_eq(done, UINT64_MAX);
	disk_model_free(m);
}
END_TEST

static Suite *model_suite(void)
{
	Suite *s = suite_create("model");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, none_is_no_model);
	tcase_add_test(tc, bad_specs_are_refused_by_name);
	tcase_add_test(tc, keys_apply_in_order_after_a_preset);
	tcase_add_test(tc, hp97560_seek_curve);
	tcase_add_test(tc, default_hdd_averages_like_a_7200rpm_disk);
	tcase_add_test(tc, sequential_streams_without_positioning);
	tcase_add_test(tc, short_seeks_cost_less_than_long_ones);
	tcase_add_test(tc, hdd_serves_one_at_a_time);
	tcase_add_test(tc, ssd_channels_work_in_parallel);
	tcase_add_test(tc, same_input_same_times);
	tcase_add_test(tc, slowest_times_never_wrap);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fake_run_suite(model_suite());
}
