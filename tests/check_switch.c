/* SPDX-License-Identifier: BSD-3-Clause */
/* check_switch.c - switching elevators at run time: nothing lost, nothing stuck, order kept. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fake_driver.h"

static char mem[1 << 20] __attribute__((aligned(4096)));

static void read_at(struct fake_disk *fd, struct test_bio *tb, sector_t sector)
{
	tbio_init(tb, REQ_OP_READ, sector, 8, mem + (sector % 256) * 4096);
	submit_bio(fd->q, &tb->bio);
}

static int do_switch(struct fake_disk *fd, const char *name)
{
	char why[256] = "";
	int ret;

	blk_queue_lock(fd->q);
	ret = elevator_switch(fd->q, name, why, sizeof(why));
	blk_queue_unlock(fd->q);
	return ret;
}

static const char *running(struct fake_disk *fd)
{
	return fd->q->elevator ? fd->q->elevator->type->elevator_name : "none";
}

/* Queued requests move to the new elevator, which then decides the order. */
START_TEST(test_queued_requests_move_to_the_new_elevator)
{
	struct fake_disk *fd = fake_disk_new("noop");
	static const sector_t order[] = { 100, 300, 0, 200 };
	struct test_bio tb[4];

	fd->stopped = true;
	for (int i = 0; i < 4; i++)
		read_at(fd, &tb[i], order[i]);
	ck_assert_int_eq(do_switch(fd, "deadline"), 0);
	ck_assert_str_eq(running(fd), "deadline");
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 4);
	/* deadline, not noop's FIFO: from the FIFO head upward in sector order, then the rest */
	ck_assert_uint_eq(fd->events[0].sector, 100);
	ck_assert_uint_eq(fd->events[1].sector, 200);
	ck_assert_uint_eq(fd->events[2].sector, 300);
	ck_assert_uint_eq(fd->events[3].sector, 0);
	fake_complete_all(fd);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(tb[i].ended, 1);
	fake_disk_free(fd);
}
END_TEST

/* Nothing is dispatched while requests the old elevator gave out are in flight. */
START_TEST(test_switch_waits_for_requests_in_flight)
{
	struct fake_disk *fd = fake_disk_new("deadline");
	struct test_bio tb[3];

	fd->q->limits.nr_requests = 1;
	read_at(fd, &tb[0], 0);
	read_at(fd, &tb[1], 100);
	read_at(fd, &tb[2], 50);
	ck_assert_uint_eq(fd->nr_dispatched, 1);
	ck_assert_int_eq(do_switch(fd, "noop"), 0);
	ck_assert_str_eq(running(fd), "deadline"); /* pending */
	ck_assert_int_eq(do_switch(fd, "none"), -EBUSY);
	fake_complete(fd, fake_nth(fd, 0), 0, 8);
	ck_assert_str_eq(running(fd), "noop");
	ck_assert_uint_eq(fd->nr_dispatched, 1);
	fake_complete_all(fd);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(tb[i].ended, 1);
	fake_disk_free(fd);
}
END_TEST

/* To "none": queued requests go to the dispatch list and merging stops. */
START_TEST(test_switch_to_none_and_back)
{
	struct fake_disk *fd = fake_disk_new("deadline");
	struct test_bio tb[5];

	fd->stopped = true;
	read_at(fd, &tb[0], 100);
	read_at(fd, &tb[1], 0);
	ck_assert_int_eq(do_switch(fd, "none"), 0);
	ck_assert_ptr_null(fd->q->elevator);
	read_at(fd, &tb[2], 8);   /* would back-merge with 0, but bypass never merges */
	read_at(fd, &tb[3], 108); /* likewise with 100 */
	ck_assert_int_eq(do_switch(fd, "deadline"), 0);
	read_at(fd, &tb[4], 200);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 5);
	for (unsigned int i = 0; i < 5; i++)
		ck_assert_uint_eq(fd->events[i].nr_sectors, 8);
	fake_complete_all(fd);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(tb[i].ended, 1);
	fake_disk_free(fd);
}
END_TEST

START_TEST(test_unknown_elevator_is_refused)
{
	struct fake_disk *fd = fake_disk_new("noop");
	char why[256] = "";

	blk_queue_lock(fd->q);
	ck_assert_int_eq(elevator_switch(fd->q, "elephant", why, sizeof(why)), -EINVAL);
	blk_queue_unlock(fd->q);
	ck_assert_msg(strstr(why, "unknown elevator 'elephant'"), "%s", why);
	ck_assert_msg(strstr(why, "deadline"), "%s", why);
	ck_assert_str_eq(running(fd), "noop");
	ck_assert_int_eq(do_switch(fd, "noop"), 0);
	ck_assert_str_eq(running(fd), "noop");
	fake_disk_free(fd);
}
END_TEST

/* Requests held behind a barrier reach whichever elevator runs when their epoch comes. */
START_TEST(test_switch_across_a_barrier)
{
	struct fake_disk *fd = fake_disk_new("noop");
	struct test_bio tb[4];

	read_at(fd, &tb[0], 0);
	tbio_init(&tb[1], REQ_OP_FLUSH, 0, 0, NULL);
	submit_bio(fd->q, &tb[1].bio);
	read_at(fd, &tb[2], 64);
	read_at(fd, &tb[3], 32);
	ck_assert_int_eq(do_switch(fd, "deadline"), 0);
	fake_complete_batch(fd); /* the read: the switch happens */
	ck_assert_str_eq(running(fd), "deadline");
	fake_complete_batch(fd); /* the flush */
	ck_assert_int_eq(tb[1].ended, 1);
	ck_assert_uint_eq(fd->nr_dispatched, 2);
	fake_complete_all(fd);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(tb[i].ended, 1);
	fake_disk_free(fd);
}
END_TEST

/* What switch_done saw, each time it was called. */
struct switch_seen {
	unsigned int calls;
	const char *running;
	unsigned int in_flight;
};

static void note_switch_done(struct request_queue *q, void *arg)
{
	struct switch_seen *seen = arg;

	seen->calls++;
	seen->running = q->elevator ? q->elevator->type->elevator_name : "none";
	seen->in_flight = q->in_flight;
}

/*
 * A pending switch is answered from the completion path: switch_done runs
 * once, when the last request in flight ends, with the new elevator running;
 * a second switch meanwhile is refused and does not answer the first.
 */
START_TEST(test_switch_done_runs_once_when_the_last_request_ends)
{
	struct fake_disk *fd = fake_disk_new("deadline");
	struct switch_seen seen = { 0 };
	struct test_bio tb[2];

	read_at(fd, &tb[0], 0);
	read_at(fd, &tb[1], 100);
	ck_assert_uint_eq(fd->nr_dispatched, 2);
	ck_assert_int_eq(do_switch(fd, "noop"), 0);
	ck_assert(fd->q->switch_pending);
	fd->q->switch_done = note_switch_done;
	fd->q->switch_arg = &seen;
	ck_assert_int_eq(do_switch(fd, "cfq"), -EBUSY);
	fake_complete(fd, fake_nth(fd, 0), 0, 8);
	ck_assert_uint_eq(seen.calls, 0);
	fake_complete_all(fd);
	ck_assert_uint_eq(seen.calls, 1);
	ck_assert_str_eq(seen.running, "noop");
	ck_assert_uint_eq(seen.in_flight, 0);
	ck_assert_ptr_null(fd->q->switch_done);
	read_at(fd, &tb[0], 8); /* and no call again when later requests end */
	fake_complete_all(fd);
	ck_assert_uint_eq(seen.calls, 1);
	fake_disk_free(fd);
}
END_TEST

/* Each elevator set up has a generation of its own; a switch to the one running keeps it. */
START_TEST(test_each_elevator_instance_has_its_own_generation)
{
	struct fake_disk *fd = fake_disk_new("deadline");
	uint64_t gen = fd->q->elevator_gen;

	ck_assert_int_eq(do_switch(fd, "deadline"), 0);
	ck_assert_uint_eq(fd->q->elevator_gen, gen);
	ck_assert_int_eq(do_switch(fd, "cfq"), 0);
	ck_assert_uint_ne(fd->q->elevator_gen, gen);
	gen = fd->q->elevator_gen;
	ck_assert_int_eq(do_switch(fd, "deadline"), 0);
	ck_assert_uint_ne(fd->q->elevator_gen, gen);
	fake_disk_free(fd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("switch");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_queued_requests_move_to_the_new_elevator);
	tcase_add_test(tc, test_switch_waits_for_requests_in_flight);
	tcase_add_test(tc, test_switch_to_none_and_back);
	tcase_add_test(tc, test_unknown_elevator_is_refused);
	tcase_add_test(tc, test_switch_across_a_barrier);
	tcase_add_test(tc, test_switch_done_runs_once_when_the_last_request_ends);
	tcase_add_test(tc, test_each_elevator_instance_has_its_own_generation);
	suite_add_tcase(s, tc);
	return fake_run_suite(s);
}
