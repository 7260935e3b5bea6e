/* check_deadline.c - the deadline elevator: sorted batches, FIFO expiry, reads first, merges. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "fake_driver.h"
#include "tunable_test.h"

/* Every bio here is at most 8 sectors; they may all share this memory. */
static char buf[4096] __attribute__((aligned(4096)));

#define MS NSEC_PER_MSEC

static struct fake_disk *stopped_disk(void)
{
	struct fake_disk *fd = fake_disk_new("deadline");

	fd->stopped = true;
	return fd;
}

static void submit(struct fake_disk *fd, struct test_bio *tb, enum req_op op, sector_t sector,
		   unsigned int sectors)
{
	tbio_init(tb, op, sector, sectors, buf);
	submit_bio(fd->q, &tb->bio);
}

/* One-sector reads, gaps between them, so that none merges with another. */
static void submit_reads(struct fake_disk *fd, struct test_bio *tb, const sector_t *sectors,
			 unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		submit(fd, &tb[i], REQ_OP_READ, sectors[i], 1);
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

static void assert_order(const struct fake_disk *fd, const sector_t *want, unsigned int n)
{
	ck_assert_uint_eq(fd->nr_events, n);
	for (unsigned int i = 0; i < n; i++)
		ck_assert_msg(fd->events[i].sector == want[i],
			      "dispatch %u went to sector %llu, expected %llu", i,
			      (unsigned long long)fd->events[i].sector,
			      (unsigned long long)want[i]);
}

/*
 * The driver holds one request at a time: completing it lets the elevator
 * choose the next, at the virtual time of the completion.
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
 * A batch starts at the oldest request and goes up in sector order; once
 * nothing is above it, the next batch starts again at the oldest left.
 */
START_TEST(test_batch_ascending_sectors)
{
	static const sector_t in[] = { 50, 10, 70, 30, 90, 60 };
	static const sector_t out[] = { 50, 60, 70, 90, 10, 30 };
	struct fake_disk *fd = stopped_disk();
	struct test_bio tb[6];

	submit_reads(fd, tb, in, 6);
	ck_assert_uint_eq(fd->nr_events, 0);
	fake_start(fd);
	assert_order(fd, out, 6);
	finish(fd, tb, 6);
}
END_TEST

/* Requests arriving mid-batch join it if they lie ahead; one behind waits. */
START_TEST(test_batch_continues_upward)
{
	static const sector_t first[] = { 100, 200, 300 };
	struct fake_disk *fd = stopped_disk();
	struct test_bio tb[5];

	fd->q->limits.nr_requests = 1;
	submit_reads(fd, tb, first, 3);
	fake_start(fd);
	assert_dispatched(fd, 0, 100, 1);
	submit(fd, &tb[3], REQ_OP_READ, 50, 1);
	submit(fd, &tb[4], REQ_OP_READ, 250, 1);
	ck_assert_uint_eq(fd->nr_events, 1);

	complete_one(fd);
	assert_dispatched(fd, 1, 200, 1);
	complete_one(fd);
	assert_dispatched(fd, 2, 250, 1);
	complete_one(fd);
	assert_dispatched(fd, 3, 300, 1);
	complete_one(fd);
	assert_dispatched(fd, 4, 50, 1);
	finish(fd, tb, 5);
}
END_TEST

/*
 * 40 reads going up and one write: two read batches of fifo_batch (16) may
 * pass the write (writes_starved 2), then the write goes, then the rest.
 */
START_TEST(test_batch_limit_reevaluates_direction)
{
	struct fake_disk *fd = stopped_disk();
	struct test_bio tb[41];

	for (unsigned int i = 0; i < 40; i++)
		submit(fd, &tb[i], REQ_OP_READ, 10 * i, 1);
	submit(fd, &tb[40], REQ_OP_WRITE, 10000, 1);
	fake_start(fd);

	ck_assert_uint_eq(fd->nr_events, 41);
	for (unsigned int i = 0; i < 32; i++)
		assert_dispatched(fd, i, 10 * i, 1);
	ck_assert_int_eq(fd->events[32].op, REQ_OP_WRITE);
	assert_dispatched(fd, 32, 10000, 1);
	for (unsigned int i = 33; i < 41; i++)
		assert_dispatched(fd, i, 10 * (i - 1), 1);
	finish(fd, tb, 41);
}
END_TEST

/* X at 500 is the oldest, L at 0 the next, then above more going up from 510. */
static void submit_x_l_and_above(struct fake_disk *fd, struct test_bio *tb, enum req_op op,
				 unsigned int above)
{
	submit(fd, &tb[0], op, 500, 1);
	submit(fd, &tb[1], op, 0, 1);
	for (unsigned int i = 0; i < above; i++)
		submit(fd, &tb[2 + i], op, 510 + 10 * i, 1);
}

/*
 * With L expired before the start, the batch from X still runs its 16
 * requests in sector order; only the next batch starts from L.
 */
START_TEST(test_batch_limit_then_fifo_head)
{
	struct fake_disk *fd = stopped_disk();
	struct test_bio tb[22];

	submit_x_l_and_above(fd, tb, REQ_OP_READ, 20);
	fd->clock.virtual_ns += 501 * MS;
	fake_start(fd);

	ck_assert_uint_eq(fd->nr_events, 22);
	assert_dispatched(fd, 0, 500, 1);
	for (unsigned int i = 1; i < 16; i++)
		assert_dispatched(fd, i, 500 + 10 * i, 1);
	assert_dispatched(fd, 16, 0, 1);
	for (unsigned int i = 17; i < 22; i++)
		assert_dispatched(fd, i, 500 + 10 * (i - 1), 1);
	finish(fd, tb, 22);
}
END_TEST

/* A smaller fifo_batch ends the batch sooner. */
START_TEST(test_fifo_batch_tunable_honoured)
{
	struct fake_disk *fd = stopped_disk();
	struct test_bio tb[8];

	tunable_store_ok(fd, "fifo_batch", "4");
	submit_x_l_and_above(fd, tb, REQ_OP_READ, 6);
	fd->clock.virtual_ns += 501 * MS;
	fake_start(fd);

	ck_assert_uint_eq(fd->nr_events, 8);
	assert_dispatched(fd, 0, 500, 1);
	assert_dispatched(fd, 1, 510, 1);
	assert_dispatched(fd, 2, 520, 1);
	assert_dispatched(fd, 3, 530, 1);
	assert_dispatched(fd, 4, 0, 1);
	assert_dispatched(fd, 5, 540, 1);
	finish(fd, tb, 8);
}
END_TEST

/*
 * One request at a time, moving the clock: at a batch boundary L (oldest,
 * lowest) is passed by while younger than read_expire; once it has waited
 * longer it starts the next batch, but does not cut the running one short.
 */
START_TEST(test_read_fifo_expiry)
{
	struct fake_disk *fd = stopped_disk();
	uint64_t t0 = fd->clock.virtual_ns;
	struct test_bio tb[42];
	unsigned int i;

	fd->q->limits.nr_requests = 1;
	submit_x_l_and_above(fd, tb, REQ_OP_READ, 40);
	fake_start(fd);
	assert_dispatched(fd, 0, 500, 1);

	/* First boundary, after 16: L not yet expired, the run goes on upward. */
	for (i = 1; i < 16; i++) {
		complete_one(fd);
		assert_dispatched(fd, i, 500 + 10 * i, 1);
	}
	fd->clock.virtual_ns = t0 + 499 * MS;
	complete_one(fd);
	assert_dispatched(fd, 16, 660, 1);

	/* Expired now, but a batch is not cut short for it. */
	fd->clock.virtual_ns = t0 + 501 * MS;
	for (i = 17; i < 32; i++) {
		complete_one(fd);
		assert_dispatched(fd, i, 500 + 10 * i, 1);
	}

	/* Second boundary: the next batch starts at the FIFO head, L. */
	complete_one(fd);
	assert_dispatched(fd, 32, 0, 1);
	for (i = 33; i < 42; i++) {
		complete_one(fd);
		assert_dispatched(fd, i, 500 + 10 * (i - 1), 1);
	}
	finish(fd, tb, 42);
}
END_TEST

/*
 * Where L lands when the requests have waited wait_ms before the driver
 * starts: 16 (the second batch starts at L) once L's direction expired, 21
 * (last, the sector-ordered run goes on) before.  expire_ms, unless NULL, is
 * stored first as that direction's tunable.
 */
static unsigned int expired_pos(enum req_op op, uint64_t wait_ms, const char *expire_ms)
{
	struct fake_disk *fd = stopped_disk();
	struct test_bio tb[22];
	unsigned int pos;

	if (expire_ms)
		tunable_store_ok(fd, op == REQ_OP_READ ? "read_expire" : "write_expire", expire_ms);
	submit_x_l_and_above(fd, tb, op, 20);
	fd->clock.virtual_ns += wait_ms * MS;
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 22);
	for (pos = 0; pos < 22 && fd->events[pos].sector != 0; pos++)
		;
	finish(fd, tb, 22);
	return pos;
}

START_TEST(test_read_expire_default)
{
	ck_assert_uint_eq(expired_pos(REQ_OP_READ, 499, NULL), 21);
	ck_assert_uint_eq(expired_pos(REQ_OP_READ, 501, NULL), 16);
}
END_TEST

START_TEST(test_write_expire_default)
{
	ck_assert_uint_eq(expired_pos(REQ_OP_WRITE, 4999, NULL), 21);
	ck_assert_uint_eq(expired_pos(REQ_OP_WRITE, 5001, NULL), 16);
}
END_TEST

/* The expires are stored in milliseconds. */
START_TEST(test_expire_tunables_in_ms)
{
	ck_assert_uint_eq(expired_pos(REQ_OP_READ, 99, "100"), 21);
	ck_assert_uint_eq(expired_pos(REQ_OP_READ, 101, "100"), 16);
	ck_assert_uint_eq(expired_pos(REQ_OP_WRITE, 999, "1000"), 21);
	ck_assert_uint_eq(expired_pos(REQ_OP_WRITE, 1001, "1000"), 16);
	ck_assert_uint_eq(expired_pos(REQ_OP_WRITE, 5001, "10000"), 21);
}
END_TEST

/*
 * Writes went in first, yet reads go first; after writes_starved (2) read
 * batches a write batch runs.  Sectors go down so each batch is one request.
 */
START_TEST(test_reads_first_writes_not_starved)
{
	static const sector_t out[] = { 900, 800, 300, 700, 600, 200, 500, 400, 100 };
	struct fake_disk *fd = stopped_disk();
	struct test_bio tb[9];
	unsigned int n = 0;

	for (sector_t s = 300; s >= 100; s -= 100)
		submit(fd, &tb[n++], REQ_OP_WRITE, s, 1);
	for (sector_t s = 900; s >= 400; s -= 100)
		submit(fd, &tb[n++], REQ_OP_READ, s, 1);
	fake_start(fd);

	assert_order(fd, out, 9);
	for (unsigned int i = 0; i < 9; i++)
		ck_assert_int_eq(fd->events[i].op, out[i] <= 300 ? REQ_OP_WRITE : REQ_OP_READ);
	finish(fd, tb, 9);
}
END_TEST

/* writes_starved 1: with both waiting, read and write batches alternate. */
START_TEST(test_writes_starved_tunable_honoured)
{
	static const sector_t out[] = { 900, 300, 800, 200, 100 };
	struct fake_disk *fd = stopped_disk();
	struct test_bio tb[5];

	tunable_store_ok(fd, "writes_starved", "1");
	submit(fd, &tb[0], REQ_OP_WRITE, 300, 1);
	submit(fd, &tb[1], REQ_OP_WRITE, 200, 1);
	submit(fd, &tb[2], REQ_OP_WRITE, 100, 1);
	submit(fd, &tb[3], REQ_OP_READ, 900, 1);
	submit(fd, &tb[4], REQ_OP_READ, 800, 1);
	fake_start(fd);
	assert_order(fd, out, 5);
	finish(fd, tb, 5);
}
END_TEST

/*
 * A bio ending where a queued request starts joins its front.  U is queued
 * after A so that the core's last-merge cache points elsewhere: only the
 * elevator's front-merge lookup can find A.
 */
static void submit_front_merge_case(struct fake_disk *fd, struct test_bio *tb)
{
	submit(fd, &tb[0], REQ_OP_READ, 100, 8);
	submit(fd, &tb[1], REQ_OP_READ, 500, 8);
	submit(fd, &tb[2], REQ_OP_READ, 92, 8);
}

START_TEST(test_front_merge)
{
	struct fake_disk *fd = stopped_disk();
	struct test_bio tb[3];

	submit_front_merge_case(fd, tb);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 2);
	assert_dispatched(fd, 0, 92, 16);
	assert_dispatched(fd, 1, 500, 8);
	ck_assert_uint_eq(fd->q->stats.merges[STAT_READ], 1);
	finish(fd, tb, 3);
	/* The front bio comes first in the request, so it ends first. */
	ck_assert_uint_lt(tb[2].order, tb[0].order);
}
END_TEST

START_TEST(test_front_merges_off)
{
	struct fake_disk *fd = stopped_disk();
	struct test_bio tb[3];

	tunable_store_ok(fd, "front_merges", "0");
	submit_front_merge_case(fd, tb);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 3);
	assert_dispatched(fd, 0, 100, 8);
	assert_dispatched(fd, 1, 500, 8);
	assert_dispatched(fd, 2, 92, 8);
	ck_assert_uint_eq(fd->q->stats.merges[STAT_READ], 0);
	finish(fd, tb, 3);
}
END_TEST

/*
 * B (oldest) and A are joined by a bio filling the gap between them: the
 * request that survives keeps B's place at the head of the FIFO, so it goes
 * before Z, which is lower but younger than B.
 */
START_TEST(test_merged_requests_keep_oldest_fifo_place)
{
	struct fake_disk *fd = stopped_disk();
	struct test_bio tb[5];

	submit(fd, &tb[0], REQ_OP_READ, 116, 8); /* B */
	fd->clock.virtual_ns += 10 * MS;
	submit(fd, &tb[1], REQ_OP_READ, 50, 8);  /* Z */
	submit(fd, &tb[2], REQ_OP_READ, 100, 8); /* A */
	submit(fd, &tb[3], REQ_OP_READ, 500, 8); /* U */
	submit(fd, &tb[4], REQ_OP_READ, 108, 8); /* the gap */
	fake_start(fd);

	ck_assert_uint_eq(fd->nr_events, 3);
	assert_dispatched(fd, 0, 100, 24);
	assert_dispatched(fd, 1, 500, 8);
	assert_dispatched(fd, 2, 50, 8);
	finish(fd, tb, 5);
	ck_assert_uint_lt(tb[2].order, tb[4].order);
	ck_assert_uint_lt(tb[4].order, tb[0].order);
}
END_TEST

static const struct tunable_case tunables[] = {
	{ "read_expire", 500, 0, INT_MAX },
	{ "write_expire", 5000, 0, INT_MAX },
	{ "writes_starved", 2, 0, INT_MAX },
	{ "fifo_batch", 16, 0, INT_MAX },
	{ "front_merges", 1, 0, 1 },
};

#define NR_TUNABLES (sizeof(tunables) / sizeof(tunables[0]))

static Suite *deadline_suite(void)
{
	Suite *s = suite_create("deadline");
	TCase *order = tcase_create("order");
	TCase *merge = tcase_create("merge");
	TCase *tune;

	tcase_add_test(order, test_batch_ascending_sectors);
	tcase_add_test(order, test_batch_continues_upward);
	tcase_add_test(order, test_batch_limit_reevaluates_direction);
	tcase_add_test(order, test_batch_limit_then_fifo_head);
	tcase_add_test(order, test_fifo_batch_tunable_honoured);
	tcase_add_test(order, test_read_fifo_expiry);
	tcase_add_test(order, test_read_expire_default);
	tcase_add_test(order, test_write_expire_default);
	tcase_add_test(order, test_reads_first_writes_not_starved);
	tcase_add_test(order, test_writes_starved_tunable_honoured);
	suite_add_tcase(s, order);

	tcase_add_test(merge, test_front_merge);
	tcase_add_test(merge, test_front_merges_off);
	tcase_add_test(merge, test_merged_requests_keep_oldest_fifo_place);
	suite_add_tcase(s, merge);

	tune = tunable_tests("deadline", tunables, NR_TUNABLES);
	tcase_add_test(tune, test_expire_tunables_in_ms);
	suite_add_tcase(s, tune);
	return s;
}

int main(void)
{
	return fake_run_suite(deadline_suite());
}
