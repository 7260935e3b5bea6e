/* SPDX-License-Identifier: BSD-3-Clause */
/* check_sstf.c - the SSTF elevator: nearest request to the head first, ties upward, merges. */
#include <check.h>
#include <stdlib.h>

#include "elv_harness.h"

#define ELEVATOR "sstf"

/*
 * The textbook answer, 65 67 37 14 98 122 124 183, counts in cylinders:
 * the head stays on the cylinder it read.  Here the head moves past the
 * sector it read, so after 67 it is at 68, where 98 (30 away) is nearer
 * than 37 (31 away), and greedy SSTF sweeps up first.  It crosses 296
 * sectors, more than the 233 the textbook order would: SSTF is greedy,
 * not optimal.
 */
static const sector_t sstf_sectors[] = { 65, 67, 98, 122, 124, 183, 37, 14 };

START_TEST(test_textbook_one_at_a_time)
{
	struct test_bio tb[NR_TEXTBOOK + 1];
	struct fake_disk *fd = run_textbook(ELEVATOR, tb, 1, true);

	elv_assert_dispatched(fd, 0, 52, 1);
	elv_assert_order_from(fd, 1, sstf_sectors, NR_TEXTBOOK);
	ck_assert_uint_eq(elv_head_movement(fd, 1, TEXTBOOK_HEAD), 296);
	elv_finish(fd, tb, NR_TEXTBOOK + 1);
}
END_TEST

/* All queued before the driver starts: the head still moves with each dispatch. */
START_TEST(test_textbook_whole_queue)
{
	struct test_bio tb[NR_TEXTBOOK + 1];
	struct fake_disk *fd = run_textbook(ELEVATOR, tb, 1, false);

	elv_assert_dispatched(fd, 0, 52, 1);
	elv_assert_order_from(fd, 1, sstf_sectors, NR_TEXTBOOK);
	ck_assert_uint_eq(elv_head_movement(fd, 1, TEXTBOOK_HEAD), 296);
	elv_finish(fd, tb, NR_TEXTBOOK + 1);
}
END_TEST

/*
 * Eight sectors a cylinder, so that moving one sector past the request read
 * no longer tips a choice: the textbook order comes out.  Seeks from 424:
 * 96, 15, 241 (296 beats 784 at 247), 185, 671, 191, 15, 471.
 */
START_TEST(test_textbook_in_cylinders)
{
	static const sector_t cylinders[] = { 65, 67, 37, 14, 98, 122, 124, 183 };
	struct test_bio tb[NR_TEXTBOOK + 1];
	sector_t want[NR_TEXTBOOK];

	for (unsigned int i = 0; i < NR_TEXTBOOK; i++)
		want[i] = cylinders[i] * 8;
	for (int pass = 0; pass < 2; pass++) {
		struct fake_disk *fd = run_textbook(ELEVATOR, tb, 8, pass == 0);

		elv_assert_dispatched(fd, 0, TEXTBOOK_HEAD * 8 - 1, 1);
		elv_assert_order_from(fd, 1, want, NR_TEXTBOOK);
		ck_assert_uint_eq(elv_head_movement(fd, 1, TEXTBOOK_HEAD * 8), 1885);
		elv_finish(fd, tb, NR_TEXTBOOK + 1);
	}
}
END_TEST

/* With nothing dispatched yet the head is at 0: the lowest request is nearest. */
START_TEST(test_head_starts_at_zero)
{
	static const sector_t in[] = { 500, 300, 100, 200 };
	static const sector_t out[] = { 100, 200, 300, 500 };
	struct fake_disk *fd = elv_stopped_disk(ELEVATOR);
	struct test_bio tb[4];

	for (unsigned int i = 0; i < 4; i++)
		elv_submit(fd, &tb[i], REQ_OP_READ, in[i], 1);
	fake_start(fd);
	elv_assert_order_from(fd, 0, out, 4);
	elv_finish(fd, tb, 4);
}
END_TEST

/*
 * The head ends at 101.  91 and 111 are equally far: the tie goes up.
 * Then from 112, 91 (21) is nearer than 140 (28), and a request starting
 * right at the head (92, after 91) is nearest of all.
 */
START_TEST(test_tie_goes_up)
{
	static const sector_t out[] = { 100, 111, 91, 92, 140 };
	struct fake_disk *fd = fake_disk_new(ELEVATOR);
	struct test_bio tb[5];

	fd->q->limits.nr_requests = 1;
	elv_submit(fd, &tb[0], REQ_OP_READ, 100, 1);
	elv_submit(fd, &tb[1], REQ_OP_READ, 140, 1);
	elv_submit(fd, &tb[2], REQ_OP_READ, 91, 1);
	elv_submit(fd, &tb[3], REQ_OP_READ, 111, 1);
	elv_complete_one(fd);
	elv_complete_one(fd);
	/* arrives while 91 is out: not mergeable with it, and right at the head */
	elv_submit(fd, &tb[4], REQ_OP_READ, 92, 1);
	elv_complete_one(fd);
	elv_complete_one(fd);
	elv_assert_order_from(fd, 0, out, 5);
	elv_finish(fd, tb, 5);
}
END_TEST

/*
 * Requests that arrive while another is out are weighed with the rest:
 * 110 arrives during 100 and goes next; 90 arrives during 110 and, at 21
 * from the head, beats 20 and 300 already waiting.
 */
START_TEST(test_arrivals_during_service)
{
	static const sector_t out[] = { 100, 110, 90, 20, 300 };
	struct fake_disk *fd = fake_disk_new(ELEVATOR);
	struct test_bio tb[5];

	fd->q->limits.nr_requests = 1;
	elv_submit(fd, &tb[0], REQ_OP_READ, 100, 1);
	elv_submit(fd, &tb[1], REQ_OP_READ, 300, 1);
	elv_submit(fd, &tb[2], REQ_OP_READ, 20, 1);
	elv_submit(fd, &tb[3], REQ_OP_READ, 110, 1);
	ck_assert_uint_eq(fd->nr_events, 1);
	elv_complete_one(fd);
	elv_assert_dispatched(fd, 1, 110, 1);
	elv_submit(fd, &tb[4], REQ_OP_READ, 90, 1);
	elv_complete_one(fd);
	elv_assert_dispatched(fd, 2, 90, 1);
	elv_complete_one(fd);
	elv_complete_one(fd);
	elv_assert_order_from(fd, 0, out, 5);
	elv_finish(fd, tb, 5);
}
END_TEST

static Suite *sstf_suite(void)
{
	Suite *s = suite_create("sstf");
	TCase *order = tcase_create("order");

	tcase_add_test(order, test_textbook_one_at_a_time);
	tcase_add_test(order, test_textbook_whole_queue);
	tcase_add_test(order, test_textbook_in_cylinders);
	tcase_add_test(order, test_head_starts_at_zero);
	tcase_add_test(order, test_tie_goes_up);
	tcase_add_test(order, test_arrivals_during_service);
	suite_add_tcase(s, order);

	suite_add_tcase(s, seek_merge_tests(ELEVATOR));
	return s;
}

int main(void)
{
	return fake_run_suite(sstf_suite());
}
