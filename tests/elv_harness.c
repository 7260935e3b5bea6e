/* SPDX-License-Identifier: BSD-3-Clause */
/* elv_harness.c - what elevator tests share: set up a queue, feed it, drain it, check the order. */
#include <check.h>
#include <stdlib.h>

#include "elv_harness.h"

char elv_buf[ELV_BUF_SECTORS * SECTOR_SIZE] __attribute__((aligned(4096)));

/* ---- setting up ---- */

struct fake_disk *elv_disk(const char *elevator, bool stopped, unsigned int depth)
{
	struct fake_disk *fd = fake_disk_new(elevator);

	fd->stopped = stopped;
	if (depth)
		fd->q->limits.nr_requests = depth;
	return fd;
}

struct fake_disk *elv_stopped_disk(const char *elevator)
{
	return elv_disk(elevator, true, 0);
}

int elv_try_switch(struct fake_disk *fd, const char *name)
{
	char why[256] = "";
	int ret;

	blk_queue_lock(fd->q);
	ret = elevator_switch(fd->q, name, why, sizeof(why));
	blk_queue_unlock(fd->q);
	return ret;
}

void elv_switch(struct fake_disk *fd, const char *name)
{
	char why[256] = "";

	blk_queue_lock(fd->q);
	ck_assert_msg(elevator_switch(fd->q, name, why, sizeof(why)) == 0, "%s", why);
	blk_queue_unlock(fd->q);
}

/* ---- feeding ---- */

void elv_submit(struct fake_disk *fd, struct test_bio *tb, enum req_op op, sector_t sector,
		unsigned int sectors)
{
	tbio_init(tb, op, sector, sectors, elv_buf);
	submit_bio(fd->q, &tb->bio);
}

void elv_submit_from(struct fake_disk *fd, struct test_bio *tb, enum req_op op, sector_t sector,
		     unsigned int sectors, pid_t pid, unsigned short ioprio)
{
	elv_submit_cg(fd, tb, op, sector, sectors, pid, ioprio, NULL);
}

void elv_submit_cg(struct fake_disk *fd, struct test_bio *tb, enum req_op op, sector_t sector,
		   unsigned int sectors, pid_t pid, unsigned short ioprio,
		   const struct blkcg *blkcg)
{
	tbio_init(tb, op, sector, sectors, elv_buf);
	tb->bio.bi_pid = pid;
	tb->bio.bi_ioprio = ioprio;
	tb->bio.bi_blkcg = blkcg;
	submit_bio(fd->q, &tb->bio);
}

/* ---- draining ---- */

uint64_t elv_now(const struct fake_disk *fd)
{
	return fd->clock.virtual_ns;
}

void elv_complete_one(struct fake_disk *fd)
{
	struct request *rq = fake_nth(fd, 0);

	ck_assert_ptr_nonnull(rq);
	ck_assert_uint_eq(fd->nr_dispatched, 1);
	fake_complete(fd, rq, 0, blk_rq_sectors(rq));
}

static void serial_dispatch(struct fake_disk *fd, struct request *rq)
{
	(void)rq;
	fd->stopped = true;
}

void elv_start_serial(struct fake_disk *fd)
{
	fd->on_dispatch = serial_dispatch;
	fake_start(fd);
}

void elv_complete_one_after(struct fake_disk *fd, uint64_t step_ms)
{
	struct request *rq = fake_nth(fd, 0);

	ck_assert_ptr_nonnull(rq);
	ck_assert_uint_eq(fd->nr_dispatched, 1);
	fd->clock.virtual_ns += step_ms * MS;
	/* a serial driver takes the next request once this one is done */
	if (fd->on_dispatch == serial_dispatch)
		fd->stopped = false;
	fake_complete(fd, rq, 0, blk_rq_sectors(rq));
}

/* No passing assertion here: property tests wake the elevator in hot loops. */
void elv_wake(struct fake_disk *fd)
{
	if (!fd->q->dispatch_at)
		ck_abort_msg("requests wait, none is out, and no wake-up was asked for");
	if (fd->clock.virtual_ns < fd->q->dispatch_at)
		fd->clock.virtual_ns = fd->q->dispatch_at;
	blk_run_queue(fd->q);
}

void elv_serve_serially(struct fake_disk *fd, uint64_t step_ms)
{
	for (unsigned int guard = 0; !blk_queue_idle(fd->q); guard++) {
		ck_assert_uint_lt(guard, 100000);
		if (fd->nr_dispatched)
			elv_complete_one_after(fd, step_ms);
		else
			elv_wake(fd);
	}
}

void elv_drain_stepped(struct fake_disk *fd, uint64_t step_ns)
{
	while (!blk_queue_idle(fd->q)) {
		if (!fd->nr_dispatched) {
			elv_wake(fd);
			continue;
		}
		fd->clock.virtual_ns += step_ns;
		fake_complete(fd, fake_nth(fd, 0), 0, blk_rq_sectors(fake_nth(fd, 0)));
	}
}

void elv_drain(struct fake_disk *fd)
{
	fd->stopped = false;
	blk_run_queue(fd->q);
	for (unsigned int guard = 0; !blk_queue_idle(fd->q); guard++) {
		ck_assert_uint_lt(guard, 100000);
		if (fd->nr_dispatched)
			fake_complete_all(fd);
		else
			elv_wake(fd);
	}
}

void elv_assert_ended(const struct test_bio *tb, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		ck_assert_int_eq(tb[i].ended, 1);
		ck_assert_int_eq(tb[i].error, 0);
	}
}

void elv_finish(struct fake_disk *fd, struct test_bio *tb, unsigned int n)
{
	fake_complete_all(fd);
	elv_assert_ended(tb, n);
	fake_disk_free(fd);
}

void elv_finish_drained(struct fake_disk *fd, struct test_bio *tb, unsigned int n)
{
	elv_drain(fd);
	elv_assert_ended(tb, n);
	fake_disk_free(fd);
}

/* ---- the order the driver saw ---- */

void elv_assert_dispatched(const struct fake_disk *fd, unsigned int i, sector_t sector,
			   unsigned int nr_sectors)
{
	ck_assert_uint_gt(fd->nr_events, i);
	ck_assert_msg(fd->events[i].sector == sector,
		      "dispatch %u went to sector %llu, expected %llu", i,
		      (unsigned long long)fd->events[i].sector, (unsigned long long)sector);
	ck_assert_uint_eq(fd->events[i].nr_sectors, nr_sectors);
}

void elv_assert_dispatched_op(const struct fake_disk *fd, unsigned int i, enum req_op op,
			      sector_t sector, unsigned int nr_sectors)
{
	elv_assert_dispatched(fd, i, sector, nr_sectors);
	ck_assert_int_eq(fd->events[i].op, op);
}

void elv_assert_event(const struct fake_disk *fd, unsigned int i, pid_t pid, sector_t sector)
{
	ck_assert_uint_gt(fd->nr_events, i);
	ck_assert_msg(fd->events[i].pid == pid && fd->events[i].sector == sector,
		      "dispatch %u: pid %d sector %llu, expected pid %d sector %llu", i,
		      (int)fd->events[i].pid, (unsigned long long)fd->events[i].sector, (int)pid,
		      (unsigned long long)sector);
}

void elv_assert_order(const struct fake_disk *fd, const sector_t *want, unsigned int n)
{
	ck_assert_uint_eq(fd->nr_events, n);
	for (unsigned int i = 0; i < n; i++)
		ck_assert_msg(fd->events[i].sector == want[i],
			      "dispatch %u went to sector %llu, expected %llu", i,
			      (unsigned long long)fd->events[i].sector,
			      (unsigned long long)want[i]);
}

void elv_assert_order_from(const struct fake_disk *fd, unsigned int from, const sector_t *want,
			   unsigned int n)
{
	ck_assert_uint_eq(fd->nr_events, from + n);
	for (unsigned int i = 0; i < n; i++)
		elv_assert_dispatched(fd, from + i, want[i], 1);
}

/* Each seek is |start - head|; the head then stands where the request ended. */
sector_t elv_head_movement(const struct fake_disk *fd, unsigned int from, sector_t head)
{
	sector_t moved = 0;

	for (unsigned int i = from; i < fd->nr_events; i++) {
		sector_t s = fd->events[i].sector;

		moved += s > head ? s - head : head - s;
		head = s + fd->events[i].nr_sectors;
	}
	return moved;
}

unsigned int elv_pid_runs(const struct fake_disk *fd, struct elv_run *runs, unsigned int max)
{
	unsigned int n = 0;
	pid_t last = 0;

	for (unsigned int i = 0; i < fd->nr_events; i++) {
		pid_t pid = fd->events[i].pid;

		if (n && pid == last) {
			if (n <= max)
				runs[n - 1].len++;
			continue;
		}
		if (n < max)
			runs[n] = (struct elv_run){ pid, 1 };
		n++;
		last = pid;
	}
	return n;
}

void elv_assert_runs(const struct fake_disk *fd, const struct elv_run *want, unsigned int n)
{
	struct elv_run runs[64];
	unsigned int got = elv_pid_runs(fd, runs, 64);

	ck_assert_uint_le(n, 64);
	ck_assert_uint_ge(got, n);
	for (unsigned int i = 0; i < n; i++)
		ck_assert_msg(runs[i].pid == want[i].pid && runs[i].len == want[i].len,
			      "run %u: pid %d x%u, expected pid %d x%u", i, (int)runs[i].pid,
			      runs[i].len, (int)want[i].pid, want[i].len);
}

/* ---- the seek elevators: the textbook example ---- */

const sector_t textbook[NR_TEXTBOOK] = { 98, 183, 37, 122, 14, 124, 65, 67 };

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
	elv_submit(fd, &tb[0], REQ_OP_READ, TEXTBOOK_HEAD * scale - 1, 1);
	ck_assert_uint_eq(fd->nr_events, 1);
	fd->stopped = !one_at_a_time;
	for (unsigned int i = 0; i < NR_TEXTBOOK; i++)
		elv_submit(fd, &tb[i + 1], REQ_OP_READ, textbook[i] * scale, 1);
	ck_assert_uint_eq(fd->nr_events, 1);
	if (one_at_a_time) {
		for (unsigned int i = 1; i <= NR_TEXTBOOK; i++) {
			elv_complete_one(fd);
			ck_assert_uint_eq(fd->nr_events, i + 1);
		}
	} else {
		elv_complete_one(fd);
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
	struct fake_disk *fd = elv_stopped_disk(merge_elevator);
	struct test_bio tb[3];

	elv_submit(fd, &tb[0], REQ_OP_READ, 100, 8);
	elv_submit(fd, &tb[1], REQ_OP_READ, 50, 8);
	elv_submit(fd, &tb[2], REQ_OP_READ, 108, 8);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 2);
	elv_assert_dispatched(fd, 0, 50, 8);
	elv_assert_dispatched(fd, 1, 100, 16);
	ck_assert_uint_eq(fd->q->stats.merges[STAT_READ], 1);
	elv_finish(fd, tb, 3);
	ck_assert_uint_lt(tb[0].order, tb[2].order);
}
END_TEST

/* A bio filling the gap joins 100 and 116 into one request: 116 leaves the tree. */
START_TEST(test_gap_fill_merges_two_requests)
{
	struct fake_disk *fd = elv_stopped_disk(merge_elevator);
	struct test_bio tb[4];

	elv_submit(fd, &tb[0], REQ_OP_READ, 100, 8);
	elv_submit(fd, &tb[1], REQ_OP_READ, 116, 8);
	elv_submit(fd, &tb[2], REQ_OP_READ, 500, 8);
	elv_submit(fd, &tb[3], REQ_OP_READ, 108, 8);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 2);
	elv_assert_dispatched(fd, 0, 100, 24);
	elv_assert_dispatched(fd, 1, 500, 8);
	ck_assert_uint_eq(fd->q->stats.merges[STAT_READ], 2);
	elv_finish(fd, tb, 4);
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
	struct fake_disk *fd = elv_stopped_disk(merge_elevator);
	struct test_bio tb[3];

	elv_submit(fd, &tb[0], REQ_OP_READ, 90, 1);  /* B */
	elv_submit(fd, &tb[1], REQ_OP_READ, 100, 8); /* A */
	elv_submit(fd, &tb[2], REQ_OP_READ, 84, 16);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 2);
	elv_assert_dispatched(fd, 0, 84, 24);
	elv_assert_dispatched(fd, 1, 90, 1);
	ck_assert_uint_eq(fd->q->stats.merges[STAT_READ], 1);
	elv_finish(fd, tb, 3);
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
