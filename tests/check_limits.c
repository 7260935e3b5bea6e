/* SPDX-License-Identifier: BSD-3-Clause */
/* check_limits.c - queue limit defaults and the rules that refuse inconsistent ones. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "fake_driver.h"

START_TEST(test_defaults_are_the_seed_articles)
{
	struct queue_limits lim;

	blk_set_default_limits(&lim);
	ck_assert_uint_eq(lim.max_sectors, 255);
	ck_assert_uint_eq(lim.max_phys_segments, 128);
	ck_assert_uint_eq(lim.max_hw_segments, 128);
	ck_assert_uint_eq(lim.max_segment_size, 65536);
	ck_assert_uint_eq(lim.seg_boundary_mask, 0xffffffffUL);
	ck_assert_uint_eq(lim.logical_block_size, 512);
	ck_assert_uint_eq(lim.dma_alignment, 511);
	ck_assert_uint_eq(lim.nr_requests, 128);
	ck_assert_uint_eq(lim.nomerges, 0);
	ck_assert_uint_eq(lim.max_discard_sectors, UINT_MAX >> 9); /* the kernel's cap */
	ck_assert_int_eq(blk_validate_limits(&lim, NULL, 0), 0);
}
END_TEST

static void refused(void (*change)(struct queue_limits *), const char *what)
{
	struct queue_limits lim;
	char why[128] = "";

	blk_set_default_limits(&lim);
	change(&lim);
	ck_assert_int_eq(blk_validate_limits(&lim, why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, what), "reason \"%s\" does not name \"%s\"", why, what);
}

static void lbs_not_pow2(struct queue_limits *l) { l->logical_block_size = 1536; }
static void lbs_too_big(struct queue_limits *l) { l->logical_block_size = 8192; }
static void lbs_too_small(struct queue_limits *l) { l->logical_block_size = 256; }
static void sectors_below_page(struct queue_limits *l) { l->max_sectors = 7; }
static void sectors_above_hw(struct queue_limits *l) { l->max_sectors = 512; }
static void segsize_below_page(struct queue_limits *l) { l->max_segment_size = 2048; }
static void boundary_small(struct queue_limits *l) { l->seg_boundary_mask = 0x7ff; }
static void boundary_not_mask(struct queue_limits *l) { l->seg_boundary_mask = 0x12fff; }
static void segsize_over_boundary(struct queue_limits *l)
{
	l->seg_boundary_mask = 0xfff;
	l->max_segment_size = 8192;
}
static void segsize_odd(struct queue_limits *l) { l->max_segment_size = 65535; }
static void no_segments(struct queue_limits *l) { l->max_phys_segments = 0; }
static void dma_not_mask(struct queue_limits *l) { l->dma_alignment = 500; }
static void no_requests(struct queue_limits *l) { l->nr_requests = 0; }
static void nomerges_3(struct queue_limits *l) { l->nomerges = 3; }
static void discard_4g(struct queue_limits *l) { l->max_discard_sectors = 1u << 23; }

START_TEST(test_inconsistent_limits_are_refused_with_the_reason)
{
	refused(lbs_not_pow2, "logical block size 1536");
	refused(lbs_too_big, "logical block size 8192");
	refused(lbs_too_small, "logical block size 256");
	refused(sectors_below_page, "below one page");
	refused(sectors_above_hw, "above max hw sectors");
	refused(segsize_below_page, "max segment size 2048");
	refused(boundary_small, "segment boundary 0x7ff");
	refused(boundary_not_mask, "segment boundary 0x12fff");
	refused(segsize_over_boundary, "above the segment boundary");
	refused(segsize_odd, "max segment size 65535 is not a multiple");
	refused(no_segments, "max segments");
	refused(dma_not_mask, "dma alignment");
	refused(no_requests, "nr requests");
	refused(nomerges_3, "nomerges 3");
	refused(discard_4g, "max discard sectors 8388608 is above 8388607");
}
END_TEST

START_TEST(test_max_sectors_keeps_whole_logical_blocks)
{
	struct queue_limits lim;

	blk_set_default_limits(&lim);
	ck_assert_uint_eq(queue_max_sectors(&lim, REQ_OP_READ), 255);
	lim.logical_block_size = 4096;
	ck_assert_uint_eq(queue_max_sectors(&lim, REQ_OP_READ), 248);
	lim.logical_block_size = 2048;
	ck_assert_uint_eq(queue_max_sectors(&lim, REQ_OP_READ), 252);
}
END_TEST

START_TEST(test_queue_takes_only_valid_limits)
{
	struct fake_disk *fd = fake_disk_new("noop");
	struct queue_limits lim = fd->q->limits;
	char why[128];

	lim.max_sectors = 1;
	ck_assert_int_eq(blk_queue_set_limits(fd->q, &lim, why, sizeof(why)), -EINVAL);
	ck_assert_uint_eq(fd->q->limits.max_sectors, 255);
	lim.max_sectors = 128;
	ck_assert_int_eq(blk_queue_set_limits(fd->q, &lim, why, sizeof(why)), 0);
	ck_assert_uint_eq(fd->q->limits.max_sectors, 128);
	fake_disk_free(fd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("limits");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_defaults_are_the_seed_articles);
	tcase_add_test(tc, test_inconsistent_limits_are_refused_with_the_reason);
	tcase_add_test(tc, test_max_sectors_keeps_whole_logical_blocks);
	tcase_add_test(tc, test_queue_takes_only_valid_limits);
	suite_add_tcase(s, tc);
	return fake_run_suite(s);
}
