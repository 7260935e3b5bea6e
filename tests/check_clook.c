/* SPDX-License-Identifier: BSD-3-Clause */
/* check_clook.c - the C-LOOK elevator: upward sweeps, a jump back to the lowest, merges. */
#include <check.h>
#include <stdlib.h>

#include "elv_harness.h"

#define ELEVATOR "clook"

/*
 * From 53 the sweep goes up to 183, then the head jumps back to 14, the
 * lowest, and sweeps up again to 37 (it never turns back the way LOOK
 * does, which would take 37 before 14).  The jump back counts as a seek
 * like any other: 12 + 1 + 30 + 23 + 1 + 58 + 170 + 22 = 317 sectors.
 */
static const sector_t clook_sectors[] = { 65, 67, 98, 122, 124, 183, 14, 37 };

START_TEST(test_textbook_one_at_a_time)
{
	struct test_bio tb[NR_TEXTBOOK + 1];
	struct fake_disk *fd = run_textbook(ELEVATOR, tb, 1, true);

	elv_assert_dispatched(fd, 0, 52, 1);
	elv_assert_order_from(fd, 1, clook_sectors, NR_TEXTBOOK);
	ck_assert_uint_eq(elv_head_movement(fd, 1, TEXTBOOK_HEAD), 317);
	elv_finish(fd, tb, NR_TEXTBOOK + 1);
}
END_TEST

/* All queued before the driver starts: the head still moves with each dispatch. */
START_TEST(test_textbook_whole_queue)
{
	struct test_bio tb[NR_TEXTBOOK + 1];
	struct fake_disk *fd = run_textbook(ELEVATOR, tb, 1, false);

	elv_assert_dispatched(fd, 0, 52, 1);
	elv_assert_order_from(fd, 1, clook_sectors, NR_TEXTBOOK);
	ck_assert_uint_eq(elv_head_movement(fd, 1, TEXTBOOK_HEAD), 317);
	elv_finish(fd, tb, NR_TEXTBOOK + 1);
}
END_TEST

/* With nothing dispatched yet the head is at 0: one sweep up from the lowest. */
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
 * Requests that arrive while another is out join the sweep if they lie at
 * or above the head, and wait for the next sweep if they lie behind it,
 * however near: 90 arrives 11 behind the head (SSTF would take it next) and
 * waits for the wrap; 120 likewise; 200 and, after the wrap, 95 join the
 * sweep under way; 91 starts right at the head and goes next; 10, behind
 * the head again, waits for the sweep after.
 */
START_TEST(test_arrivals_during_service)
{
	static const sector_t out[] = { 100, 150, 200, 300, 20, 90, 91, 95, 120, 10 };
	struct fake_disk *fd = fake_disk_new(ELEVATOR);
	struct test_bio tb[10];

	fd->q->limits.nr_requests = 1;
	elv_submit(fd, &tb[0], REQ_OP_READ, 100, 1);
	elv_submit(fd, &tb[1], REQ_OP_READ, 300, 1);
	elv_submit(fd, &tb[2], REQ_OP_READ, 20, 1);
	/* during 100, the head at 101 */
	elv_submit(fd, &tb[3], REQ_OP_READ, 90, 1);
	elv_submit(fd, &tb[4], REQ_OP_READ, 150, 1);
	elv_complete_one(fd);
	elv_assert_dispatched(fd, 1, 150, 1);
	/* during 150, the head at 151 */
	elv_submit(fd, &tb[5], REQ_OP_READ, 120, 1);
	elv_submit(fd, &tb[6], REQ_OP_READ, 200, 1);
	elv_complete_one(fd);
	elv_assert_dispatched(fd, 2, 200, 1);
	elv_complete_one(fd);
	elv_assert_dispatched(fd, 3, 300, 1);
	elv_complete_one(fd);
	elv_assert_dispatched(fd, 4, 20, 1);
	/* during 20, after the wrap, the head at 21 */
	elv_submit(fd, &tb[7], REQ_OP_READ, 10, 1);
	elv_submit(fd, &tb[8], REQ_OP_READ, 95, 1);
	elv_complete_one(fd);
	elv_assert_dispatched(fd, 5, 90, 1);
	/* during 90, the head at 91: not mergeable with 90, which is out */
	elv_submit(fd, &tb[9], REQ_OP_READ, 91, 1);
	for (unsigned int i = 6; i < 10; i++)
		elv_complete_one(fd);
	elv_assert_order_from(fd, 0, out, 10);
	elv_finish(fd, tb, 10);
}
END_TEST

static Suite *clook_suite(void)
{
	Suite *s = suite_create("clook");
	TCase *order = tcase_create("order");

	tcase_add_test(order, test_textbook_one_at_a_time);
	tcase_add_test(order, test_textbook_whole_queue);
	tcase_add_test(order, test_head_starts_at_zero);
	tcase_add_test(order, test_arrivals_during_service);
	suite_add_tcase(s, order);

	suite_add_tcase(s, seek_merge_tests(ELEVATOR));
	return s;
}

int main(void)
{
	return fake_run_suite(clook_suite());
}
