/* SPDX-License-Identifier: BSD-3-Clause */
/* check_noop.c - the noop elevator: first in, first out, with only the core's merges. */
#include <check.h>
#include <stdlib.h>

#include "elv_harness.h"

/*
 * noop_add_request, noop_dispatch: neither sector nor direction changes the
 * order, reads get no preference.
 */
START_TEST(test_fifo_order)
{
	static const sector_t sectors[] = { 50, 10, 70, 30, 90, 20 };
	struct fake_disk *fd = elv_stopped_disk("noop");
	struct test_bio tb[6];

	for (unsigned int i = 0; i < 6; i++)
		elv_submit(fd, &tb[i], i % 2 ? REQ_OP_WRITE : REQ_OP_READ, sectors[i], 1);
	ck_assert_uint_eq(fd->nr_events, 0);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 6);
	for (unsigned int i = 0; i < 6; i++)
		elv_assert_dispatched_op(fd, i, i % 2 ? REQ_OP_WRITE : REQ_OP_READ, sectors[i], 1);
	elv_finish(fd, tb, 6);
}
END_TEST

/* noop_dispatch: dispatched one at a time, a later arrival still waits its turn. */
START_TEST(test_fifo_order_one_at_a_time)
{
	struct fake_disk *fd = fake_disk_new("noop");
	struct test_bio tb[4];

	fd->q->limits.nr_requests = 1;
	elv_submit(fd, &tb[0], REQ_OP_READ, 300, 1);
	elv_submit(fd, &tb[1], REQ_OP_READ, 200, 1);
	elv_submit(fd, &tb[2], REQ_OP_READ, 400, 1);
	elv_submit(fd, &tb[3], REQ_OP_READ, 100, 1);
	ck_assert_uint_eq(fd->nr_events, 1);
	for (unsigned int i = 1; i < 4; i++) {
		fake_complete(fd, fake_nth(fd, 0), 0, 1);
		ck_assert_uint_eq(fd->nr_events, i + 1);
	}
	elv_assert_dispatched_op(fd, 0, REQ_OP_READ, 300, 1);
	elv_assert_dispatched_op(fd, 1, REQ_OP_READ, 200, 1);
	elv_assert_dispatched_op(fd, 2, REQ_OP_READ, 400, 1);
	elv_assert_dispatched_op(fd, 3, REQ_OP_READ, 100, 1);
	elv_finish(fd, tb, 4);
}
END_TEST

/* elv_merge (the core's): a contiguous bio right after a queued request joins it (last_merge). */
START_TEST(test_back_merge)
{
	struct fake_disk *fd = elv_stopped_disk("noop");
	struct test_bio tb[2];

	elv_submit(fd, &tb[0], REQ_OP_WRITE, 100, 8);
	elv_submit(fd, &tb[1], REQ_OP_WRITE, 108, 8);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 1);
	elv_assert_dispatched_op(fd, 0, REQ_OP_WRITE, 100, 16);
	elv_finish(fd, tb, 2);
	ck_assert_uint_lt(tb[0].order, tb[1].order);
}
END_TEST

/*
 * The same when the last-merge cache points at another request (U): the
 * core finds A by its end sector.
 */
START_TEST(test_back_merge_by_end_sector)
{
	struct fake_disk *fd = elv_stopped_disk("noop");
	struct test_bio tb[3];

	elv_submit(fd, &tb[0], REQ_OP_READ, 100, 8);
	elv_submit(fd, &tb[1], REQ_OP_READ, 500, 8);
	elv_submit(fd, &tb[2], REQ_OP_READ, 108, 8);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 2);
	elv_assert_dispatched_op(fd, 0, REQ_OP_READ, 100, 16);
	elv_assert_dispatched_op(fd, 1, REQ_OP_READ, 500, 8);
	ck_assert_uint_eq(fd->q->stats.merges[STAT_READ], 1);
	elv_finish(fd, tb, 3);
	ck_assert_uint_lt(tb[0].order, tb[2].order);
}
END_TEST

/*
 * noop has no elevator_merge_fn, so no front-merge lookup: a bio ending where A starts becomes a
 * request of its own, queued last, once the cache points elsewhere (U).
 */
START_TEST(test_no_front_merge)
{
	struct fake_disk *fd = elv_stopped_disk("noop");
	struct test_bio tb[3];

	elv_submit(fd, &tb[0], REQ_OP_READ, 100, 8);
	elv_submit(fd, &tb[1], REQ_OP_READ, 500, 8);
	elv_submit(fd, &tb[2], REQ_OP_READ, 92, 8);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 3);
	elv_assert_dispatched_op(fd, 0, REQ_OP_READ, 100, 8);
	elv_assert_dispatched_op(fd, 1, REQ_OP_READ, 500, 8);
	elv_assert_dispatched_op(fd, 2, REQ_OP_READ, 92, 8);
	ck_assert_uint_eq(fd->q->stats.merges[STAT_READ], 0);
	elv_finish(fd, tb, 3);
}
END_TEST

/*
 * The core's last-merge cache may still front-merge, into the request it
 * merged into last; nothing ends where that request starts, so there is
 * no second merge to attempt (this used to dereference NULL).
 */
START_TEST(test_front_merge_via_cache)
{
	struct fake_disk *fd = elv_stopped_disk("noop");
	struct test_bio tb[3];

	elv_submit(fd, &tb[0], REQ_OP_READ, 100, 8);
	elv_submit(fd, &tb[1], REQ_OP_READ, 108, 8);
	elv_submit(fd, &tb[2], REQ_OP_READ, 92, 8);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 1);
	elv_assert_dispatched_op(fd, 0, REQ_OP_READ, 92, 24);
	elv_finish(fd, tb, 3);
	ck_assert_uint_lt(tb[2].order, tb[0].order);
	ck_assert_uint_lt(tb[0].order, tb[1].order);
}
END_TEST

/*
 * A bio filling the gap between A and B back-merges into A, and A then
 * swallows B: one request, its bios in sector order, at A's FIFO place
 * (attempt_back_merge, then noop_merged_requests drops B).
 */
START_TEST(test_gap_fill_joins_requests)
{
	struct fake_disk *fd = elv_stopped_disk("noop");
	struct test_bio tb[5];

	elv_submit(fd, &tb[0], REQ_OP_WRITE, 20, 1);  /* before A in the FIFO */
	elv_submit(fd, &tb[1], REQ_OP_WRITE, 100, 8); /* A */
	elv_submit(fd, &tb[2], REQ_OP_WRITE, 116, 8); /* B */
	elv_submit(fd, &tb[3], REQ_OP_WRITE, 500, 8); /* U */
	elv_submit(fd, &tb[4], REQ_OP_WRITE, 108, 8); /* the gap */
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 3);
	elv_assert_dispatched_op(fd, 0, REQ_OP_WRITE, 20, 1);
	elv_assert_dispatched_op(fd, 1, REQ_OP_WRITE, 100, 24);
	elv_assert_dispatched_op(fd, 2, REQ_OP_WRITE, 500, 8);
	ck_assert_uint_eq(fd->events[1].nr_segments, 3);
	elv_finish(fd, tb, 5);
	ck_assert_uint_lt(tb[1].order, tb[4].order);
	ck_assert_uint_lt(tb[4].order, tb[2].order);
}
END_TEST

/*
 * On purpose unlike 2.6.23: the core finds the request to join by its
 * sector for every elevator, where 2.6.23's noop offered only its FIFO
 * neighbours (noop_latter_request), so that A and B, queued with U between
 * them, stayed apart there.  Here they join.
 */
START_TEST(test_gap_fill_joins_requests_apart_in_fifo)
{
	struct fake_disk *fd = elv_stopped_disk("noop");
	struct test_bio tb[4];

	elv_submit(fd, &tb[0], REQ_OP_WRITE, 100, 8); /* A */
	elv_submit(fd, &tb[1], REQ_OP_WRITE, 500, 8); /* U */
	elv_submit(fd, &tb[2], REQ_OP_WRITE, 116, 8); /* B */
	elv_submit(fd, &tb[3], REQ_OP_WRITE, 108, 8); /* the gap */
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 2);
	elv_assert_dispatched_op(fd, 0, REQ_OP_WRITE, 100, 24);
	elv_assert_dispatched_op(fd, 1, REQ_OP_WRITE, 500, 8);
	elv_finish(fd, tb, 4);
}
END_TEST

static Suite *noop_suite(void)
{
	Suite *s = suite_create("noop");
	TCase *order = tcase_create("order");
	TCase *merge = tcase_create("merge");

	tcase_add_test(order, test_fifo_order);
	tcase_add_test(order, test_fifo_order_one_at_a_time);
	suite_add_tcase(s, order);

	tcase_add_test(merge, test_back_merge);
	tcase_add_test(merge, test_back_merge_by_end_sector);
	tcase_add_test(merge, test_no_front_merge);
	tcase_add_test(merge, test_front_merge_via_cache);
	tcase_add_test(merge, test_gap_fill_joins_requests);
	tcase_add_test(merge, test_gap_fill_joins_requests_apart_in_fifo);
	suite_add_tcase(s, merge);
	return s;
}

int main(void)
{
	return fake_run_suite(noop_suite());
}
