/* seek_test.c - the textbook head-scheduling example and the checks the seek elevators' tests share. */
#include <check.h>
#include <stdlib.h>

#include "seek_test.h"

/* Every bio here is at most 16 sectors; they may all share this memory. */
static char buf[16 * SECTOR_SIZE] __attribute__((aligned(4096)));

const sector_t textbook[NR_TEXTBOOK] = { 98, 183, 37, 122, 14, 124, 65, 67 };

struct fake_disk *stopped_disk(const char *elevator)
{
	struct fake_disk *fd = fake_disk_new(elevator);

	fd->stopped = true;
	return fd;
}

void submit(struct fake_disk *fd, struct test_bio *tb, enum req_op op, sector_t sector,
		   unsigned int sectors)
{
	tbio_init(tb, op, sector, sectors, buf);
	submit_bio(fd->q, &tb->bio);
}

void assert_dispatched(const struct fake_disk *fd, unsigned int i, sector_t sector,
			      unsigned int nr_sectors)
{
	ck_assert_uint_gt(fd->nr_events, i);
	ck_assert_msg(fd->events[i].sector == sector,
		      "dispatch %u went to sector %llu, expected %llu", i,
		      (unsigned long long)fd->events[i].sector, (unsigned long long)sector);
	ck_assert_uint_eq(fd->events[i].nr_sectors, nr_sectors);
}

/* Dispatches from..from+n-1 went to want[0..n-1], one sector each. */
void assert_order_from(const struct fake_disk *fd, unsigned int from, const sector_t *want,
			      unsigned int n)
{
	ck_assert_uint_eq(fd->nr_events, from + n);
	for (unsigned int i = 0; i < n; i++)
		assert_dispatched(fd, from + i, want[i], 1);
}

/* Sectors the head crossed from head through dispatches from on: each seek is |start - head|. */
sector_t head_movement(const struct fake_disk *fd, unsigned int from, sector_t head)
{
	sector_t moved = 0;

	for (unsigned int i = from; i < fd->nr_events; i++) {
		sector_t s = fd->events[i].sector;

		moved += s > head ? s - head : head - s;
		head = s + fd->events[i].nr_sectors;
	}
	return moved;
}

/*
 * The driver holds one request at a time: completing it lets the elevator
 * choose the next from what is queued then.
 */
void complete_one(struct fake_disk *fd)
{
	struct request *rq = fake_nth(fd, 0);

	ck_assert_ptr_nonnull(rq);
	ck_assert_uint_eq(fd->nr_dispatched, 1);
	fake_complete(fd, rq, 0, blk_rq_sectors(rq));
}

void finish(struct fake_disk *fd, struct test_bio *tb, unsigned int n)
{
	fake_complete_all(fd);
	for (unsigned int i = 0; i < n; i++) {
		ck_assert_int_eq(tb[i].ended, 1);
		ck_assert_int_eq(tb[i].error, 0);
	}
	fake_disk_free(fd);
}

/*
 * The textbook queue, cylinder c at sector c * scale, as one-sector reads.
 * The head is put at TEXTBOOK_HEAD * scale by a one-sector read just below
 * it, dispatched first: the head is where the last request ended.  The rest
 * is queued while that read is out, then served one at a time
 * (nr_requests 1) or, with the driver stopped until the read completes,
 * all in one run of the driver.  tb has NR_TEXTBOOK + 1 entries.
 */
struct fake_disk *run_textbook(const char *elevator, struct test_bio *tb, sector_t scale,
			       bool one_at_a_time)
{
	struct fake_disk *fd = fake_disk_new(elevator);

	if (one_at_a_time)
		fd->q->limits.nr_requests = 1;
	submit(fd, &tb[0], REQ_OP_READ, TEXTBOOK_HEAD * scale - 1, 1);
	ck_assert_uint_eq(fd->nr_events, 1);
	fd->stopped = !one_at_a_time;
	for (unsigned int i = 0; i < NR_TEXTBOOK; i++)
		submit(fd, &tb[i + 1], REQ_OP_READ, textbook[i] * scale, 1);
	ck_assert_uint_eq(fd->nr_events, 1);
	if (one_at_a_time) {
		for (unsigned int i = 1; i <= NR_TEXTBOOK; i++) {
			complete_one(fd);
			ck_assert_uint_eq(fd->nr_events, i + 1);
		}
	} else {
		complete_one(fd);
		ck_assert_uint_eq(fd->nr_events, 1);
		fake_start(fd);
	}
	return fd;
}

/* ---- merges, the same for every elevator that keeps one sector-sorted tree ---- */

/* Set before the tests run; Check's forked children inherit it. */
static const char *merge_elevator;

/* The core's back merge: 108 joins 100 (found by its end sector); dispatched once. */
START_TEST(test_back_merge_dispatched_once)
{
	struct fake_disk *fd = stopped_disk(merge_elevator);
	struct test_bio tb[3];

	submit(fd, &tb[0], REQ_OP_READ, 100, 8);
	submit(fd, &tb[1], REQ_OP_READ, 50, 8);
	submit(fd, &tb[2], REQ_OP_READ, 108, 8);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 2);
	assert_dispatched(fd, 0, 50, 8);
	assert_dispatched(fd, 1, 100, 16);
	ck_assert_uint_eq(fd->q->stats.merges[STAT_READ], 1);
	finish(fd, tb, 3);
	ck_assert_uint_lt(tb[0].order, tb[2].order);
}
END_TEST

/* A bio filling the gap joins 100 and 116 into one request: 116 leaves the tree. */
START_TEST(test_gap_fill_merges_two_requests)
{
	struct fake_disk *fd = stopped_disk(merge_elevator);
	struct test_bio tb[4];

	submit(fd, &tb[0], REQ_OP_READ, 100, 8);
	submit(fd, &tb[1], REQ_OP_READ, 116, 8);
	submit(fd, &tb[2], REQ_OP_READ, 500, 8);
	submit(fd, &tb[3], REQ_OP_READ, 108, 8);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 2);
	assert_dispatched(fd, 0, 100, 24);
	assert_dispatched(fd, 1, 500, 8);
	ck_assert_uint_eq(fd->q->stats.merges[STAT_READ], 2);
	finish(fd, tb, 4);
	ck_assert_uint_lt(tb[0].order, tb[3].order);
	ck_assert_uint_lt(tb[3].order, tb[1].order);
}
END_TEST

/*
 * A front merge through the core's last-merge cache moves A from 100 down
 * to 84, below B at 90 (the reads overlap; that is allowed): A must be put
 * back in sector order, or a head at 0 would find B first.
 */
START_TEST(test_front_merge_repositions)
{
	struct fake_disk *fd = stopped_disk(merge_elevator);
	struct test_bio tb[3];

	submit(fd, &tb[0], REQ_OP_READ, 90, 1);  /* B */
	submit(fd, &tb[1], REQ_OP_READ, 100, 8); /* A */
	submit(fd, &tb[2], REQ_OP_READ, 84, 16);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 2);
	assert_dispatched(fd, 0, 84, 24);
	assert_dispatched(fd, 1, 90, 1);
	ck_assert_uint_eq(fd->q->stats.merges[STAT_READ], 1);
	finish(fd, tb, 3);
	ck_assert_uint_lt(tb[2].order, tb[1].order);
}
END_TEST

TCase *seek_merge_tests(const char *elevator)
{
	TCase *merge = tcase_create("merge");

	merge_elevator = elevator;
	tcase_add_test(merge, test_back_merge_dispatched_once);
	tcase_add_test(merge, test_gap_fill_merges_two_requests);
	tcase_add_test(merge, test_front_merge_repositions);
	return merge;
}
