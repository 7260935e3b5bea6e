/* SPDX-License-Identifier: BSD-3-Clause */
/* check_merge.c - a bio joins a queued request only when every limit allows it. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "blkcg.h"
#include "fake_driver.h"

static char mem[1 << 20] __attribute__((aligned(4096)));

/* A write of sectors at sector whose memory starts at byte off of mem. */
static void submit_w(struct fake_disk *fd, struct test_bio *tb, sector_t sector,
		     unsigned int sectors, size_t off)
{
	tbio_init(tb, REQ_OP_WRITE, sector, sectors, mem + off);
	submit_bio(fd->q, &tb->bio);
}

/* Requests the fake driver got, once it is let go. */
static unsigned int dispatch_count(struct fake_disk *fd)
{
	fake_start(fd);
	return fd->nr_events;
}

static struct fake_disk *stopped_disk(const char *elv)
{
	struct fake_disk *fd = fake_disk_new(elv);

	fd->stopped = true;
	return fd;
}

static void finish(struct fake_disk *fd, struct test_bio *tb, int n)
{
	fake_complete_all(fd);
	for (int i = 0; i < n; i++) {
		ck_assert_int_eq(tb[i].ended, 1);
		ck_assert_int_eq(tb[i].error, 0);
	}
	fake_disk_free(fd);
}

START_TEST(test_back_merge_makes_one_request)
{
	struct fake_disk *fd = stopped_disk("noop");
	struct test_bio tb[3];

	submit_w(fd, &tb[0], 0, 8, 0);
	submit_w(fd, &tb[1], 8, 8, 8192);
	submit_w(fd, &tb[2], 16, 8, 65536);
	ck_assert_uint_eq(dispatch_count(fd), 1);
	ck_assert_uint_eq(fd->events[0].sector, 0);
	ck_assert_uint_eq(fd->events[0].nr_sectors, 24);
	ck_assert_uint_eq(fd->events[0].nr_segments, 3);
	ck_assert_uint_eq(fd->q->stats.merges[STAT_WRITE], 2);
	finish(fd, tb, 3);
}
END_TEST

START_TEST(test_merge_refused_at_max_sectors)
{
	struct fake_disk *fd = stopped_disk("noop");
	struct test_bio tb[2];

	submit_w(fd, &tb[0], 0, 200, 0);
	submit_w(fd, &tb[1], 200, 56, 200 * 512);
	ck_assert_uint_eq(dispatch_count(fd), 2);
	finish(fd, tb, 2);

	fd = stopped_disk("noop");
	submit_w(fd, &tb[0], 0, 200, 0);
	submit_w(fd, &tb[1], 200, 55, 200 * 512);
	ck_assert_uint_eq(dispatch_count(fd), 1);
	ck_assert_uint_eq(fd->events[0].nr_sectors, 255);
	finish(fd, tb, 2);
}
END_TEST

START_TEST(test_merge_refused_at_max_segments)
{
	struct fake_disk *fd = stopped_disk("noop");
	struct test_bio tb[3];

	fd->q->limits.max_phys_segments = 2;
	submit_w(fd, &tb[0], 0, 8, 0);
	submit_w(fd, &tb[1], 8, 8, 65536);
	submit_w(fd, &tb[2], 16, 8, 131072); /* a third segment */
	ck_assert_uint_eq(dispatch_count(fd), 2);
	ck_assert_uint_eq(fd->events[0].nr_sectors, 16);
	ck_assert_uint_eq(fd->events[0].nr_segments, 2);
	finish(fd, tb, 3);
}
END_TEST

START_TEST(test_merge_refused_at_max_hw_segments)
{
	struct fake_disk *fd = stopped_disk("noop");
	struct test_bio tb[2];

	fd->q->limits.max_hw_segments = 1;
	submit_w(fd, &tb[0], 0, 8, 0);
	submit_w(fd, &tb[1], 8, 8, 65536);
	ck_assert_uint_eq(dispatch_count(fd), 2);
	finish(fd, tb, 2);
}
END_TEST

/* Contiguous memory joins one segment only up to max_segment_size. */
START_TEST(test_merge_refused_at_max_segment_size)
{
	struct fake_disk *fd = stopped_disk("noop");
	struct test_bio tb[3];

	fd->q->limits.max_phys_segments = 1;
	fd->q->limits.max_segment_size = 4096;
	submit_w(fd, &tb[0], 0, 4, 0);
	submit_w(fd, &tb[1], 4, 4, 2048); /* contiguous: one 4096-byte segment */
	submit_w(fd, &tb[2], 8, 1, 4096); /* contiguous, but a second segment */
	ck_assert_uint_eq(dispatch_count(fd), 2);
	ck_assert_uint_eq(fd->events[0].nr_sectors, 8);
	ck_assert_uint_eq(fd->events[0].nr_segments, 1);
	finish(fd, tb, 3);
}
END_TEST

/* Contiguous memory across a boundary is two segments. */
START_TEST(test_merge_refused_across_segment_boundary)
{
	struct fake_disk *fd = stopped_disk("noop");
	struct test_bio tb[2];

	fd->q->limits.max_phys_segments = 1;
	fd->q->limits.max_segment_size = 4096;
	fd->q->limits.seg_boundary_mask = 0xfff;
	submit_w(fd, &tb[0], 0, 2, 4096 - 1024);
	submit_w(fd, &tb[1], 2, 2, 4096); /* next page: crosses the boundary */
	ck_assert_uint_eq(dispatch_count(fd), 2);
	finish(fd, tb, 2);

	fd = stopped_disk("noop");
	fd->q->limits.max_phys_segments = 1;
	fd->q->limits.max_segment_size = 4096;
	fd->q->limits.seg_boundary_mask = 0xfff;
	submit_w(fd, &tb[0], 0, 2, 0);
	submit_w(fd, &tb[1], 2, 2, 1024); /* same page */
	ck_assert_uint_eq(dispatch_count(fd), 1);
	finish(fd, tb, 2);
}
END_TEST

START_TEST(test_logical_block_size_refuses_partial_blocks)
{
	struct fake_disk *fd = fake_disk_new("noop");
	struct test_bio tb[2];

	fd->q->limits.logical_block_size = 4096;
	submit_w(fd, &tb[0], 0, 4, 0); /* half a block */
	ck_assert_int_eq(tb[0].ended, 1);
	ck_assert_int_eq(tb[0].error, -EINVAL);
	submit_w(fd, &tb[1], 4, 8, 0); /* a block, misplaced */
	ck_assert_int_eq(tb[1].ended, 1);
	ck_assert_int_eq(tb[1].error, -EINVAL);
	ck_assert_uint_eq(fd->nr_events, 0);
	fake_disk_free(fd);
}
END_TEST

START_TEST(test_nomerges)
{
	struct fake_disk *fd = stopped_disk("noop");
	struct test_bio tb[3];

	fd->q->limits.nomerges = BLK_MERGES_NONE;
	submit_w(fd, &tb[0], 0, 8, 0);
	submit_w(fd, &tb[1], 8, 8, 4096);
	ck_assert_uint_eq(dispatch_count(fd), 2);
	finish(fd, tb, 2);

	/* one-hit: the last-merge cache still merges... */
	fd = stopped_disk("noop");
	fd->q->limits.nomerges = BLK_MERGES_ONE_HIT;
	submit_w(fd, &tb[0], 0, 8, 0);
	submit_w(fd, &tb[1], 8, 8, 4096);
	ck_assert_uint_eq(dispatch_count(fd), 1);
	finish(fd, tb, 2);

	/* ...but nothing is looked up beyond it */
	fd = stopped_disk("noop");
	fd->q->limits.nomerges = BLK_MERGES_ONE_HIT;
	submit_w(fd, &tb[0], 0, 8, 0);
	submit_w(fd, &tb[1], 100, 8, 65536);
	submit_w(fd, &tb[2], 8, 8, 4096);
	ck_assert_uint_eq(dispatch_count(fd), 3);
	finish(fd, tb, 3);

	fd = stopped_disk("noop");
	submit_w(fd, &tb[0], 0, 8, 0);
	submit_w(fd, &tb[1], 100, 8, 65536);
	submit_w(fd, &tb[2], 8, 8, 4096);
	ck_assert_uint_eq(dispatch_count(fd), 2);
	finish(fd, tb, 3);
}
END_TEST

static unsigned int veto_calls;

static bool veto_all(struct request_queue *q, const struct request *rq, const struct bio *bio)
{
	veto_calls++;
	return false;
}

START_TEST(test_merge_bvec_veto)
{
	struct fake_disk *fd = stopped_disk("noop");
	struct test_bio tb[2];

	fd->q->merge_bvec_fn = veto_all;
	submit_w(fd, &tb[0], 0, 8, 0);
	submit_w(fd, &tb[1], 8, 8, 4096);
	ck_assert_uint_gt(veto_calls, 0);
	ck_assert_uint_eq(dispatch_count(fd), 2);
	finish(fd, tb, 2);
}
END_TEST

START_TEST(test_discard_never_merges_with_write)
{
	struct fake_disk *fd = stopped_disk("noop");
	struct test_bio tb[3];

	submit_w(fd, &tb[0], 0, 8, 0);
	tbio_init(&tb[1], REQ_OP_DISCARD, 8, 8, NULL);
	submit_bio(fd->q, &tb[1].bio);
	tbio_init(&tb[2], REQ_OP_DISCARD, 16, 8, NULL);
	submit_bio(fd->q, &tb[2].bio);
	ck_assert_uint_eq(dispatch_count(fd), 2);
	ck_assert_int_eq(fd->events[1].op, REQ_OP_DISCARD);
	ck_assert_uint_eq(fd->events[1].nr_sectors, 16);
	finish(fd, tb, 3);
}
END_TEST

START_TEST(test_read_never_merges_with_write)
{
	struct fake_disk *fd = stopped_disk("noop");
	struct test_bio tb[2];

	submit_w(fd, &tb[0], 0, 8, 0);
	tbio_init(&tb[1], REQ_OP_READ, 8, 8, mem + 4096);
	submit_bio(fd->q, &tb[1].bio);
	ck_assert_uint_eq(dispatch_count(fd), 2);
	finish(fd, tb, 2);
}
END_TEST

START_TEST(test_bio_closing_a_gap_merges_the_two_requests)
{
	struct fake_disk *fd = stopped_disk("noop");
	struct test_bio tb[4];

	submit_w(fd, &tb[0], 0, 8, 0);
	submit_w(fd, &tb[1], 16, 8, 8192);
	submit_w(fd, &tb[2], 100, 8, 65536); /* moves the last-merge cache away */
	submit_w(fd, &tb[3], 8, 8, 4096);   /* back merge into [0,8) closes the gap */
	ck_assert_uint_eq(dispatch_count(fd), 2);
	ck_assert_uint_eq(fd->events[0].sector, 0);
	ck_assert_uint_eq(fd->events[0].nr_sectors, 24);
	ck_assert_uint_eq(fd->events[0].nr_segments, 1); /* all of mem[0, 12288) */
	finish(fd, tb, 4);
}
END_TEST

START_TEST(test_fua_and_flush_do_not_merge)
{
	struct fake_disk *fd = stopped_disk("noop");
	struct test_bio tb[2];

	submit_w(fd, &tb[0], 0, 8, 0);
	tbio_init(&tb[1], REQ_OP_WRITE, 8, 8, mem + 4096);
	tb[1].bio.bi_flags = REQ_FUA;
	submit_bio(fd->q, &tb[1].bio);
	ck_assert_uint_eq(dispatch_count(fd), 2);
	ck_assert_uint_eq(fd->events[1].flags & REQ_FUA, REQ_FUA);
	finish(fd, tb, 2);
}
END_TEST

/* Linux's blk_rq_merge_ok and attempt_merge: a priority never rides in another's request. */
START_TEST(test_priorities_never_merge)
{
	struct fake_disk *fd = stopped_disk("noop");
	unsigned short idle = IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 7);
	struct test_bio tb[4];

	submit_w(fd, &tb[0], 0, 8, 0);
	tbio_init(&tb[1], REQ_OP_WRITE, 8, 8, mem + 4096); /* a back merge but for its class */
	tb[1].bio.bi_ioprio = idle;
	submit_bio(fd->q, &tb[1].bio);
	submit_w(fd, &tb[2], 32, 8, 65536);
	submit_w(fd, &tb[3], 16, 16, 8192); /* closes [16,32) to tb[2]'s, not to tb[1]'s */
	ck_assert_uint_eq(dispatch_count(fd), 3);
	ck_assert_uint_eq(fd->events[0].ioprio, IOPRIO_DEFAULT);
	ck_assert_uint_eq(fd->events[0].nr_sectors, 8);
	ck_assert_uint_eq(fd->events[1].ioprio, idle);
	ck_assert_uint_eq(fd->events[1].nr_sectors, 8);
	ck_assert_uint_eq(fd->events[2].sector, 16);
	ck_assert_uint_eq(fd->events[2].nr_sectors, 24);
	finish(fd, tb, 4);
}
END_TEST

/* An idle-class request and its neighbour of another class stay two when a bio fills the gap. */
START_TEST(test_gap_filled_between_priorities_keeps_two_requests)
{
	struct fake_disk *fd = stopped_disk("noop");
	struct test_bio tb[3];

	submit_w(fd, &tb[0], 0, 8, 0);
	tbio_init(&tb[1], REQ_OP_WRITE, 16, 8, mem + 8192);
	tb[1].bio.bi_ioprio = IOPRIO_PRIO_VALUE(IOPRIO_CLASS_RT, 0);
	submit_bio(fd->q, &tb[1].bio);
	submit_w(fd, &tb[2], 8, 8, 4096); /* joins [0,8); [16,24) is real time */
	ck_assert_uint_eq(dispatch_count(fd), 2);
	ck_assert_uint_eq(fd->events[0].nr_sectors, 16);
	ck_assert_uint_eq(fd->events[1].sector, 16);
	ck_assert_uint_eq(fd->events[1].ioprio, IOPRIO_PRIO_VALUE(IOPRIO_CLASS_RT, 0));
	finish(fd, tb, 3);
}
END_TEST

/*
 * Linux's blk_cgroup_mergeable: a bio never joins a request of another
 * cgroup, at its back or its front, nor do two requests of two cgroups
 * become one when a bio of either fills the gap between them.
 */
START_TEST(test_cgroups_never_merge)
{
	struct fake_disk *fd = stopped_disk("deadline"); /* deadline offers front merges */
	struct blkcg_table cgs = { 0 };
	const struct blkcg *a = blkcg_intern(&cgs, "/a", 0), *b = blkcg_intern(&cgs, "/b", 0);
	struct test_bio tb[5];
	static const struct {
		sector_t sector;
		size_t off;
		int cg; /* 0 the root, 1 /a, 2 /b */
	} bios[5] = {
		{ 0, 0, 1 },      /* [0,8) of /a */
		{ 8, 4096, 2 },   /* a back merge onto /a's but for its cgroup */
		{ 24, 12288, 1 }, /* [24,32) of /a */
		{ 16, 8192, 1 },  /* joins [24,32) at its front, not [8,16) of /b */
		{ 40, 20480, 0 }, /* a root bio beside nothing */
	};

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_eq(blkcg_intern(&cgs, "/a", 0), a);
	ck_assert_ptr_null(blkcg_intern(&cgs, "/", 0));
	for (int i = 0; i < 5; i++) {
		tbio_init(&tb[i], REQ_OP_WRITE, bios[i].sector, 8, mem + bios[i].off);
		tb[i].bio.bi_blkcg = bios[i].cg == 1 ? a : bios[i].cg == 2 ? b : NULL;
		submit_bio(fd->q, &tb[i].bio);
	}
	ck_assert_uint_eq(dispatch_count(fd), 4);
	ck_assert_uint_eq(fd->events[0].sector, 0);
	ck_assert_uint_eq(fd->events[0].nr_sectors, 8);
	ck_assert_uint_eq(fd->events[1].sector, 8);
	ck_assert_uint_eq(fd->events[1].nr_sectors, 8);
	ck_assert_uint_eq(fd->events[2].sector, 16);
	ck_assert_uint_eq(fd->events[2].nr_sectors, 16);
	ck_assert_uint_eq(fd->events[3].sector, 40);
	finish(fd, tb, 5);
	blkcg_table_free(&cgs);
}
END_TEST

/* The same cgroup merges as before: one request, which carries the cgroup. */
START_TEST(test_one_cgroup_merges)
{
	struct fake_disk *fd = stopped_disk("noop");
	struct blkcg_table cgs = { 0 };
	const struct blkcg *a = blkcg_intern(&cgs, "/a/b", 0);
	struct test_bio tb[2];

	for (int i = 0; i < 2; i++) {
		tbio_init(&tb[i], REQ_OP_WRITE, (sector_t)i * 8, 8, mem + i * 4096);
		tb[i].bio.bi_blkcg = a;
		submit_bio(fd->q, &tb[i].bio);
	}
	ck_assert_uint_eq(dispatch_count(fd), 1);
	ck_assert_uint_eq(fd->events[0].nr_sectors, 16);
	ck_assert_str_eq(blkcg_path(blk_rq_cgroup(fake_nth(fd, 0))), "/a/b");
	ck_assert_str_eq(blkcg_path(NULL), "/");
	finish(fd, tb, 2);
	blkcg_table_free(&cgs);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("merge");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_back_merge_makes_one_request);
	tcase_add_test(tc, test_merge_refused_at_max_sectors);
	tcase_add_test(tc, test_merge_refused_at_max_segments);
	tcase_add_test(tc, test_merge_refused_at_max_hw_segments);
	tcase_add_test(tc, test_merge_refused_at_max_segment_size);
	tcase_add_test(tc, test_merge_refused_across_segment_boundary);
	tcase_add_test(tc, test_logical_block_size_refuses_partial_blocks);
	tcase_add_test(tc, test_nomerges);
	tcase_add_test(tc, test_merge_bvec_veto);
	tcase_add_test(tc, test_discard_never_merges_with_write);
	tcase_add_test(tc, test_read_never_merges_with_write);
	tcase_add_test(tc, test_bio_closing_a_gap_merges_the_two_requests);
	tcase_add_test(tc, test_fua_and_flush_do_not_merge);
	tcase_add_test(tc, test_priorities_never_merge);
	tcase_add_test(tc, test_gap_filled_between_priorities_keeps_two_requests);
	tcase_add_test(tc, test_cgroups_never_merge);
	tcase_add_test(tc, test_one_cgroup_merges);
	suite_add_tcase(s, tc);
	return fake_run_suite(s);
}
