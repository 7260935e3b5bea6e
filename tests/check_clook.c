/* check_clook.c - the C-LOOK elevator: upward sweeps, a jump back to the lowest, merges. */
#include <check.h>
#include <stdlib.h>

#include "fake_driver.h"

/* Every bio here is at most 16 sectors; they may all share this memory. */
static char buf[16 * SECTOR_SIZE] __attribute__((aligned(4096)));

/* The textbook queue (cylinders), in arrival order; the head starts at 53. */
static const sector_t textbook[] = { 98, 183, 37, 122, 14, 124, 65, 67 };
#define NR_TEXTBOOK (sizeof(textbook) / sizeof(textbook[0]))
#define TEXTBOOK_HEAD 53

static struct fake_disk *stopped_disk(void)
{
	struct fake_disk *fd = fake_disk_new("clook");

	fd->stopped = true;
	return fd;
}

static void submit(struct fake_disk *fd, struct test_bio *tb, enum req_op op, sector_t sector,
		   unsigned int sectors)
{
	tbio_init(tb, op, sector, sectors, buf);
	submit_bio(fd->q, &tb->bio);
}

static void assert_dispatched(const struct fake_disk *fd, unsigned int i, sector_t sector,
			      unsigned int nr_sectors)
{
	ck_assert_uint_gt(fd->nr_events, i);
	ck_assert_msg(fd->events[i].sector == sector,
		      "dispatch %u went to sector %llu, expected %llu", i,
		      (unsigned long long)fd->events[i].sector, (unsigned long long)sector);
	ck_assert_uint_eq(fd->events[i].nr_sectors, nr_sectors);
}

/* Dispatches from..from+n-1 went to want[0..n-1], one sector each. */
static void assert_order_from(const struct fake_disk *fd, unsigned int from, const sector_t *want,
			      unsigned int n)
{
	ck_assert_uint_eq(fd->nr_events, from + n);
	for (unsigned int i = 0; i < n; i++)
		assert_dispatched(fd, from + i, want[i], 1);
}

/* Sectors the head crossed from head through dispatches from on: each seek is |start - head|. */
static sector_t head_movement(const struct fake_disk *fd, unsigned int from, sector_t head)
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
static void complete_one(struct fake_disk *fd)
{
	struct request *rq = fake_nth(fd, 0);

	ck_assert_ptr_nonnull(rq);
	ck_assert_uint_eq(fd->nr_dispatched, 1);
	fake_complete(fd, rq, 0, blk_rq_sectors(rq));
}

static void finish(struct fake_disk *fd, struct test_bio *tb, unsigned int n)
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
static struct fake_disk *run_textbook(struct test_bio *tb, sector_t scale, bool one_at_a_time)
{
	struct fake_disk *fd = fake_disk_new("clook");

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
	struct fake_disk *fd = run_textbook(tb, 1, true);

	assert_dispatched(fd, 0, 52, 1);
	assert_order_from(fd, 1, clook_sectors, NR_TEXTBOOK);
	ck_assert_uint_eq(head_movement(fd, 1, TEXTBOOK_HEAD), 317);
	finish(fd, tb, NR_TEXTBOOK + 1);
}
END_TEST

/* All queued before the driver starts: the head still moves with each dispatch. */
START_TEST(test_textbook_whole_queue)
{
	struct test_bio tb[NR_TEXTBOOK + 1];
	struct fake_disk *fd = run_textbook(tb, 1, false);

	assert_dispatched(fd, 0, 52, 1);
	assert_order_from(fd, 1, clook_sectors, NR_TEXTBOOK);
	ck_assert_uint_eq(head_movement(fd, 1, TEXTBOOK_HEAD), 317);
	finish(fd, tb, NR_TEXTBOOK + 1);
}
END_TEST

/* With nothing dispatched yet the head is at 0: one sweep up from the lowest. */
START_TEST(test_head_starts_at_zero)
{
	static const sector_t in[] = { 500, 300, 100, 200 };
	static const sector_t out[] = { 100, 200, 300, 500 };
	struct fake_disk *fd = stopped_disk();
	struct test_bio tb[4];

	for (unsigned int i = 0; i < 4; i++)
		submit(fd, &tb[i], REQ_OP_READ, in[i], 1);
	fake_start(fd);
	assert_order_from(fd, 0, out, 4);
	finish(fd, tb, 4);
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
	struct fake_disk *fd = fake_disk_new("clook");
	struct test_bio tb[10];

	fd->q->limits.nr_requests = 1;
	submit(fd, &tb[0], REQ_OP_READ, 100, 1);
	submit(fd, &tb[1], REQ_OP_READ, 300, 1);
	submit(fd, &tb[2], REQ_OP_READ, 20, 1);
	/* during 100, the head at 101 */
	submit(fd, &tb[3], REQ_OP_READ, 90, 1);
	submit(fd, &tb[4], REQ_OP_READ, 150, 1);
	complete_one(fd);
	assert_dispatched(fd, 1, 150, 1);
	/* during 150, the head at 151 */
	submit(fd, &tb[5], REQ_OP_READ, 120, 1);
	submit(fd, &tb[6], REQ_OP_READ, 200, 1);
	complete_one(fd);
	assert_dispatched(fd, 2, 200, 1);
	complete_one(fd);
	assert_dispatched(fd, 3, 300, 1);
	complete_one(fd);
	assert_dispatched(fd, 4, 20, 1);
	/* during 20, after the wrap, the head at 21 */
	submit(fd, &tb[7], REQ_OP_READ, 10, 1);
	submit(fd, &tb[8], REQ_OP_READ, 95, 1);
	complete_one(fd);
	assert_dispatched(fd, 5, 90, 1);
	/* during 90, the head at 91: not mergeable with 90, which is out */
	submit(fd, &tb[9], REQ_OP_READ, 91, 1);
	for (unsigned int i = 6; i < 10; i++)
		complete_one(fd);
	assert_order_from(fd, 0, out, 10);
	finish(fd, tb, 10);
}
END_TEST

/* The core's back merge: 108 joins 100 (found by its end sector); dispatched once. */
START_TEST(test_back_merge_dispatched_once)
{
	struct fake_disk *fd = stopped_disk();
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
	struct fake_disk *fd = stopped_disk();
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
 * back in sector order, or the sweep from 0 would find B first.
 */
START_TEST(test_front_merge_repositions)
{
	struct fake_disk *fd = stopped_disk();
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

static Suite *clook_suite(void)
{
	Suite *s = suite_create("clook");
	TCase *order = tcase_create("order");
	TCase *merge = tcase_create("merge");

	tcase_add_test(order, test_textbook_one_at_a_time);
	tcase_add_test(order, test_textbook_whole_queue);
	tcase_add_test(order, test_head_starts_at_zero);
	tcase_add_test(order, test_arrivals_during_service);
	suite_add_tcase(s, order);

	tcase_add_test(merge, test_back_merge_dispatched_once);
	tcase_add_test(merge, test_gap_fill_merges_two_requests);
	tcase_add_test(merge, test_front_merge_repositions);
	suite_add_tcase(s, merge);
	return s;
}

int main(void)
{
	return fake_run_suite(clook_suite());
}
