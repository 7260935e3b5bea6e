/* SPDX-License-Identifier: BSD-3-Clause */
/* check_barrier.c - barrier epochs: nothing passes a barrier either way, whatever the elevator. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "fake_driver.h"

static char mem[1 << 20] __attribute__((aligned(4096)));


static void write_at(struct fake_disk *fd, struct test_bio *tb, sector_t sector, unsigned int flags)
{
	tbio_init(tb, REQ_OP_WRITE, sector, 8, mem + (sector % 128) * 4096);
	tb->bio.bi_flags = flags;
	submit_bio(fd->q, &tb->bio);
}

static void flush(struct fake_disk *fd, struct test_bio *tb)
{
	tbio_init(tb, REQ_OP_FLUSH, 0, 0, NULL);
	submit_bio(fd->q, &tb->bio);
}

/* A flush waits for what came before it, and what comes after waits for it. */
START_TEST(test_flush_drains_and_holds)
{
	struct fake_disk *fd = fake_disk_new(fake_elevator(_i));
	struct test_bio tb[5];

	write_at(fd, &tb[0], 0, 0);
	write_at(fd, &tb[1], 64, 0);
	flush(fd, &tb[2]);
	write_at(fd, &tb[3], 128, 0);
	write_at(fd, &tb[4], 8, 0); /* would merge with the first write, but not across */
	ck_assert_uint_eq(fd->nr_dispatched, 2);
	fake_complete(fd, fake_nth(fd, 1), 0, 8);
	ck_assert_uint_eq(fd->nr_dispatched, 1); /* the flush still waits */
	fake_complete(fd, fake_nth(fd, 0), 0, 8);
	ck_assert_uint_eq(fd->nr_dispatched, 1);
	ck_assert_int_eq(fake_nth(fd, 0)->cmd_op, REQ_OP_FLUSH);
	ck_assert_int_eq(tb[3].ended + tb[4].ended, 0);
	fake_complete(fd, fake_nth(fd, 0), 0, 0);
	ck_assert_int_eq(tb[2].ended, 1);
	ck_assert_uint_eq(fd->nr_dispatched, 2); /* the later writes, unmerged */
	fake_complete_all(fd);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(tb[i].ended, 1);
	ck_assert_uint_lt(tb[0].order, tb[2].order);
	ck_assert_uint_lt(tb[1].order, tb[2].order);
	ck_assert_uint_gt(tb[3].order, tb[2].order);
	ck_assert_uint_gt(tb[4].order, tb[2].order);
	fake_disk_free(fd);
}
END_TEST

/* A barrier write: a preflush after the earlier writes, then the write as FUA, alone. */
START_TEST(test_barrier_write_is_preflush_then_fua)
{
	struct fake_disk *fd = fake_disk_new(fake_elevator(_i));
	struct test_bio tb[3];

	write_at(fd, &tb[0], 0, 0);
	write_at(fd, &tb[1], 8, REQ_BARRIER);
	write_at(fd, &tb[2], 16, 0);
	ck_assert_uint_eq(fd->nr_events, 1);
	fake_complete_batch(fd);
	ck_assert_uint_eq(fd->nr_events, 2);
	ck_assert_int_eq(fd->events[1].op, REQ_OP_FLUSH);
	ck_assert(fd->events[1].flags & REQ_PREFLUSH);
	fake_complete_batch(fd);
	ck_assert_uint_eq(fd->nr_events, 3);
	ck_assert_int_eq(fd->events[2].op, REQ_OP_WRITE);
	ck_assert_uint_eq(fd->events[2].sector, 8);
	ck_assert_uint_eq(fd->events[2].nr_sectors, 8);
	ck_assert(fd->events[2].flags & REQ_FUA);
	ck_assert_int_eq(tb[2].ended, 0);
	fake_complete_batch(fd);
	ck_assert_uint_eq(fd->nr_events, 4);
	ck_assert_uint_eq(fd->events[3].sector, 16);
	fake_complete_batch(fd);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(tb[i].ended, 1);
		ck_assert_int_eq(tb[i].error, 0);
	}
	fake_disk_free(fd);
}
END_TEST

/* A failed preflush fails its write, which never reaches the disk. */
START_TEST(test_failed_preflush_fails_the_barrier_write)
{
	struct fake_disk *fd = fake_disk_new(fake_elevator(_i));
	struct test_bio tb[2];

	write_at(fd, &tb[0], 8, REQ_BARRIER);
	write_at(fd, &tb[1], 16, 0);
	ck_assert_uint_eq(fd->nr_events, 1);
	fake_complete(fd, fake_nth(fd, 0), -EIO, 0);
	ck_assert_int_eq(tb[0].ended, 1);
	ck_assert_int_eq(tb[0].error, -EIO);
	ck_assert_uint_eq(fd->nr_events, 2);
	ck_assert_uint_eq(fd->events[1].sector, 16); /* the barrier write was skipped */
	fake_complete_batch(fd);
	ck_assert_int_eq(tb[1].ended, 1);
	ck_assert_int_eq(tb[1].error, 0);
	fake_disk_free(fd);
}
END_TEST

/* A barrier write larger than the limits goes out in pieces, all in its epoch. */
START_TEST(test_split_barrier_write_keeps_its_epoch)
{
	struct fake_disk *fd = fake_disk_new(fake_elevator(_i));
	struct test_bio tb[2];

	tbio_init(&tb[0], REQ_OP_WRITE, 0, 1024, mem);
	tb[0].bio.bi_flags = REQ_BARRIER;
	submit_bio(fd->q, &tb[0].bio);
	write_at(fd, &tb[1], 2048, 0);
	fake_complete_batch(fd); /* the preflush */
	ck_assert_uint_eq(fd->nr_dispatched, 5); /* 4 x 255 + 4, together */
	for (unsigned int i = 1; i < fd->nr_events; i++)
		ck_assert(fd->events[i].flags & REQ_FUA);
	fake_complete(fd, fake_nth(fd, 0), 0, 255);
	ck_assert_uint_eq(fd->nr_dispatched, 4);
	ck_assert_int_eq(tb[1].ended, 0);
	fake_complete_batch(fd);
	ck_assert_int_eq(tb[0].ended, 1);
	fake_complete_batch(fd);
	ck_assert_int_eq(tb[1].ended, 1);
	ck_assert_uint_gt(tb[1].order, tb[0].order);
	fake_disk_free(fd);
}
END_TEST

/* The elevator holds one epoch: a later read cannot jump a barrier by sorting. */
START_TEST(test_elevator_sees_only_the_current_epoch)
{
	struct fake_disk *fd = fake_disk_new(fake_elevator(_i));
	struct test_bio tb[4];

	fd->stopped = true;
	write_at(fd, &tb[0], 512, 0);
	flush(fd, &tb[1]);
	tbio_init(&tb[2], REQ_OP_READ, 0, 8, mem + 65536);
	submit_bio(fd->q, &tb[2].bio);
	if (fd->q->elevator)
		ck_assert_uint_eq(fd->q->epoch_count, 1);
	fake_start(fd);
	for (int round = 0; round < 3; round++)
		fake_complete_all(fd);
	ck_assert_uint_eq(fd->nr_events, 3);
	ck_assert_uint_eq(fd->events[0].sector, 512);
	ck_assert_int_eq(fd->events[1].op, REQ_OP_FLUSH);
	ck_assert_uint_eq(fd->events[2].sector, 0);
	fake_disk_free(fd);
}
END_TEST

/* Bypass: no merging, FIFO order, and still the barrier. */
START_TEST(test_bypass_does_not_merge)
{
	struct fake_disk *fd = fake_disk_new("none");
	struct test_bio tb[3];

	fd->stopped = true;
	write_at(fd, &tb[0], 8, 0);
	write_at(fd, &tb[1], 16, 0);
	write_at(fd, &tb[2], 0, 0);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 3);
	ck_assert_uint_eq(fd->events[0].sector, 8);
	ck_assert_uint_eq(fd->events[1].sector, 16);
	ck_assert_uint_eq(fd->events[2].sector, 0);
	fake_complete_all(fd);
	fake_disk_free(fd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("barrier");
	TCase *tc = tcase_create("core");
	int n = fake_nr_elevators(); /* every elevator, from the registry */

	tcase_add_loop_test(tc, test_flush_drains_and_holds, 0, n);
	tcase_add_loop_test(tc, test_barrier_write_is_preflush_then_fua, 0, n);
	tcase_add_loop_test(tc, test_failed_preflush_fails_the_barrier_write, 0, n);
	tcase_add_loop_test(tc, test_split_barrier_write_keeps_its_epoch, 0, n);
	tcase_add_loop_test(tc, test_elevator_sees_only_the_current_epoch, 0, n);
	tcase_add_test(tc, test_bypass_does_not_merge);
	suite_add_tcase(s, tc);
	return fake_run_suite(s);
}
