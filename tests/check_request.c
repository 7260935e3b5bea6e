/* SPDX-License-Identifier: BSD-3-Clause */
/* check_request.c - completion in parts, BIO walking, queue depth and accounting. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "fake_driver.h"

static char mem[1 << 20] __attribute__((aligned(4096)));

/* One request of three bios: 8, 16 and 8 sectors, the middle one in two segments. */
static struct request *three_bio_request(struct fake_disk *fd, struct test_bio *tb)
{
	struct bio_vec mid[2] = { { mem + 65536, 4096 }, { mem + 131072, 4096 } };

	fd->stopped = true;
	tbio_init(&tb[0], REQ_OP_WRITE, 0, 8, mem);
	submit_bio(fd->q, &tb[0].bio);
	tbio_init_vecs(&tb[1], REQ_OP_WRITE, 8, mid, 2);
	submit_bio(fd->q, &tb[1].bio);
	tbio_init(&tb[2], REQ_OP_WRITE, 24, 8, mem + 196608);
	submit_bio(fd->q, &tb[2].bio);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_dispatched, 1);
	return fake_nth(fd, 0);
}

static void ended(struct test_bio *tb, int a, int b, int c)
{
	ck_assert_int_eq(tb[0].ended, a);
	ck_assert_int_eq(tb[1].ended, b);
	ck_assert_int_eq(tb[2].ended, c);
}

static void tree_of(struct elv_rb_root *tree, struct request *r, int n)
{
	elv_rb_init(tree);
	for (int i = 0; i < n; i++)
		elv_rb_add(tree, &r[i]);
}

/* The elevators' sort order: by sector, and distinct requests at one sector are never equal. */
START_TEST(test_sector_order_tells_every_request_apart)
{
	struct request r[3] = { { .hard_sector = 16 }, { .hard_sector = 8 }, { .hard_sector = 16 } };
	struct elv_rb_root tree;
	struct request *a, *b;

	tree_of(&tree, r, 3);
	ck_assert_ptr_eq(elv_rb_first(&tree), &r[1]);
	a = elv_rb_next(&r[1]);
	b = elv_rb_next(a);
	ck_assert(a != b && (a == &r[0] || a == &r[2]) && (b == &r[0] || b == &r[2]));
	ck_assert_ptr_null(elv_rb_next(b));
	ck_assert_ptr_eq(elv_rb_last(&tree), b);
	ck_assert_ptr_eq(elv_rb_prev(b), a);
	ck_assert_ptr_eq(elv_rb_prev(a), &r[1]);
	ck_assert_ptr_null(elv_rb_prev(&r[1]));
}
END_TEST

/* The elevators' tree searches look at sectors alone, ties and ends included. */
START_TEST(test_tree_searches_by_sector)
{
	struct request r[5] = { { .hard_sector = 32 }, { .hard_sector = 8 }, { .hard_sector = 16 },
				{ .hard_sector = 8 }, { .hard_sector = 8 } };
	struct elv_rb_root tree, empty;
	struct request *first8, *last8;

	tree_of(&tree, r, 5);
	first8 = elv_rb_first(&tree);
	last8 = elv_rb_prev(&r[2]);
	ck_assert_ptr_ne(first8, last8);
	ck_assert_uint_eq(blk_rq_pos(last8), 8);

	ck_assert_ptr_eq(elv_rb_find(&tree, 16), &r[2]);
	ck_assert_uint_eq(blk_rq_pos(elv_rb_find(&tree, 8)), 8);
	ck_assert_ptr_null(elv_rb_find(&tree, 9));

	ck_assert_ptr_eq(elv_rb_ceiling(&tree, 0), first8);
	ck_assert_ptr_eq(elv_rb_ceiling(&tree, 8), first8);
	ck_assert_ptr_eq(elv_rb_ceiling(&tree, 9), &r[2]);
	ck_assert_ptr_eq(elv_rb_ceiling(&tree, 32), &r[0]);
	ck_assert_ptr_null(elv_rb_ceiling(&tree, 33));

	ck_assert_ptr_null(elv_rb_below(&tree, 8));
	ck_assert_ptr_eq(elv_rb_below(&tree, 9), last8);
	ck_assert_ptr_eq(elv_rb_below(&tree, 32), &r[2]);
	ck_assert_ptr_eq(elv_rb_below(&tree, 100), &r[0]);
	elv_rb_init(&empty);
	ck_assert_ptr_null(elv_rb_ceiling(&empty, 0));
	ck_assert_ptr_null(elv_rb_below(&empty, 100));
	ck_assert_ptr_null(elv_rb_find(&empty, 0));
	ck_assert_ptr_null(elv_rb_first(&empty));
	ck_assert_ptr_null(elv_rb_last(&empty));
}
END_TEST

/* Taking requests out leaves the rest in order; each knows whether it is in a tree. */
START_TEST(test_tree_add_and_del)
{
	struct request r[4] = { { .hard_sector = 24 }, { .hard_sector = 8 }, { .hard_sector = 16 },
				{ .hard_sector = 0 } };
	struct elv_rb_root tree;

	tree_of(&tree, r, 4);
	ck_assert_ptr_eq(r[2].rb_tree, &tree);
	elv_rb_del(&tree, &r[2]);
	ck_assert_ptr_null(r[2].rb_tree);
	ck_assert_ptr_eq(elv_rb_next(&r[1]), &r[0]);
	ck_assert_ptr_eq(elv_rb_ceiling(&tree, 9), &r[0]);
	elv_rb_del(&tree, &r[3]);
	ck_assert_ptr_eq(elv_rb_first(&tree), &r[1]);
	elv_rb_del(&tree, &r[0]);
	ck_assert_ptr_eq(elv_rb_last(&tree), &r[1]);
	ck_assert(!elv_rb_empty(&tree));
	elv_rb_del(&tree, &r[1]);
	ck_assert(elv_rb_empty(&tree));
}
END_TEST

/*
 * The core's re-sort after a front merge: a request whose start moved below
 * another's goes before it in its tree.  One in no tree is left alone.
 */
START_TEST(test_tree_reposition_after_front_merge)
{
	struct request r[3] = { { .hard_sector = 0 }, { .hard_sector = 95 }, { .hard_sector = 100 } };
	struct request loose = { .hard_sector = 7 };
	struct elv_rb_root tree;

	tree_of(&tree, r, 3);
	r[2].hard_sector = 92;
	elv_rb_reposition(&r[2]);
	ck_assert_ptr_eq(elv_rb_next(&r[0]), &r[2]);
	ck_assert_ptr_eq(elv_rb_next(&r[2]), &r[1]);
	ck_assert_ptr_eq(elv_rb_last(&tree), &r[1]);
	ck_assert_ptr_eq(elv_rb_ceiling(&tree, 1), &r[2]);
	elv_rb_reposition(&loose);
	ck_assert_ptr_null(loose.rb_tree);
}
END_TEST

/*
 * A merged request keeps the earlier deadline, and the FIFO place that goes
 * with it: right after next, which the elevator takes out next.  A later
 * one changes nothing.
 */
START_TEST(test_fifo_merge_keeps_the_earlier_deadline)
{
	struct request a = { .fifo_time = 10 }, b = { .fifo_time = 20 }, c = { .fifo_time = 30 };
	struct elv_fifo fifo = TAILQ_HEAD_INITIALIZER(fifo);

	TAILQ_INSERT_TAIL(&fifo, &a, queuelist);
	TAILQ_INSERT_TAIL(&fifo, &b, queuelist);
	TAILQ_INSERT_TAIL(&fifo, &c, queuelist);
	elv_fifo_merge(&fifo, &c, &a); /* a joins c */
	ck_assert_uint_eq(c.fifo_time, 10);
	TAILQ_REMOVE(&fifo, &a, queuelist);
	ck_assert_ptr_eq(TAILQ_FIRST(&fifo), &c);
	ck_assert_ptr_eq(TAILQ_NEXT(&c, queuelist), &b);
	ck_assert_ptr_null(TAILQ_NEXT(&b, queuelist));

	elv_fifo_merge(&fifo, &c, &b); /* b joins c: c's deadline is the earlier */
	ck_assert_uint_eq(c.fifo_time, 10);
	ck_assert_ptr_eq(TAILQ_FIRST(&fifo), &c);
	ck_assert_ptr_eq(TAILQ_NEXT(&c, queuelist), &b);
}
END_TEST

START_TEST(test_partial_completion_in_uneven_parts)
{
	struct fake_disk *fd = fake_disk_new("noop");
	struct test_bio tb[3];
	struct request *rq = three_bio_request(fd, tb);

	ck_assert_uint_eq(blk_rq_sectors(rq), 32);
	ck_assert(end_that_request_first(rq, 0, 5));
	ended(tb, 0, 0, 0);
	ck_assert_uint_eq(blk_rq_pos(rq), 5);
	ck_assert(end_that_request_first(rq, 0, 5)); /* 10: the first bio is covered */
	ended(tb, 1, 0, 0);
	ck_assert(end_that_request_first(rq, 0, 15)); /* 25: and the second */
	ended(tb, 1, 1, 0);
	ck_assert_uint_lt(tb[0].order, tb[1].order);
	ck_assert_uint_eq(blk_rq_sectors(rq), 7);
	ck_assert(!end_that_request_first(rq, 0, 7)); /* nothing left */
	ended(tb, 1, 1, 1);
	ck_assert_uint_lt(tb[1].order, tb[2].order);
	TAILQ_REMOVE(&fd->dispatched, rq, queuelist);
	fd->nr_dispatched--;
	blk_queue_lock(fd->q);
	end_that_request_last(rq);
	blk_queue_unlock(fd->q);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(tb[i].error, 0);
	fake_disk_free(fd);
}
END_TEST

/* An error reaches exactly the bios whose sectors it covered. */
START_TEST(test_error_sticks_to_the_bios_it_touches)
{
	struct fake_disk *fd = fake_disk_new("noop");
	struct test_bio tb[3];
	struct request *rq = three_bio_request(fd, tb);

	ck_assert(end_that_request_first(rq, 0, 4));
	ck_assert(end_that_request_first(rq, -EIO, 6)); /* sectors 4..9 */
	ended(tb, 1, 0, 0);
	ck_assert_int_eq(tb[0].error, -EIO);
	fake_complete(fd, rq, 0, blk_rq_sectors(rq));
	ended(tb, 1, 1, 1);
	ck_assert_int_eq(tb[1].error, -EIO);
	ck_assert_int_eq(tb[2].error, 0);
	fake_disk_free(fd);
}
END_TEST

/* The driver fails the rest of a request: every bio left gets the error. */
START_TEST(test_failing_the_rest)
{
	struct fake_disk *fd = fake_disk_new("noop");
	struct test_bio tb[3];
	struct request *rq = three_bio_request(fd, tb);

	fake_complete(fd, rq, -ENOSPC, blk_rq_sectors(rq));
	ended(tb, 1, 1, 1);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(tb[i].error, -ENOSPC);
	fake_disk_free(fd);
}
END_TEST

START_TEST(test_bio_walking_moves_the_submission_position_only)
{
	struct fake_disk *fd = fake_disk_new("noop");
	struct test_bio tb[3];
	struct request *rq = three_bio_request(fd, tb);

	ck_assert_ptr_eq(rq->cbio, &tb[0].bio);
	ck_assert_uint_eq(rq->nr_cbio_sectors, 8);
	ck_assert_uint_eq(rq->nr_cbio_segments, 1);
	ck_assert(process_that_request_first(rq, 3));
	ck_assert_ptr_eq(rq->cbio, &tb[0].bio);
	ck_assert_uint_eq(rq->nr_cbio_sectors, 5);
	ck_assert_uint_eq(rq->cbio_offset, 3 * 512);
	ck_assert(process_that_request_first(rq, 5 + 9)); /* into the 2nd segment of bio 2 */
	ck_assert_ptr_eq(rq->cbio, &tb[1].bio);
	ck_assert_uint_eq(rq->cbio_idx, 1);
	ck_assert_uint_eq(rq->cbio_offset, 512);
	ck_assert_uint_eq(rq->nr_cbio_segments, 1);
	ck_assert_uint_eq(rq->nr_cbio_sectors, 7);
	ck_assert_uint_eq(rq->sector, 17);
	ck_assert_uint_eq(rq->nr_sectors, 15);
	ck_assert(process_that_request_first(rq, 7));
	ck_assert_ptr_eq(rq->cbio, &tb[2].bio);
	ck_assert_uint_eq(rq->nr_cbio_segments, 1);
	ck_assert(!process_that_request_first(rq, 8));
	ck_assert_ptr_null(rq->cbio);
	/* nothing completed */
	ended(tb, 0, 0, 0);
	ck_assert_uint_eq(blk_rq_pos(rq), 0);
	ck_assert_uint_eq(blk_rq_sectors(rq), 32);
	fake_complete_all(fd);
	ended(tb, 1, 1, 1);
	fake_disk_free(fd);
}
END_TEST

START_TEST(test_requests_in_flight_up_to_nr_requests)
{
	struct fake_disk *fd = fake_disk_new("noop");
	struct test_bio tb[10];

	fd->q->limits.nr_requests = 4;
	for (int i = 0; i < 10; i++) {
		tbio_init(&tb[i], REQ_OP_READ, (sector_t)i * 100, 8, mem + i * 4096);
		submit_bio(fd->q, &tb[i].bio);
	}
	ck_assert_uint_eq(fd->nr_dispatched, 4);
	ck_assert_uint_eq(fd->q->in_flight, 4);
	fake_complete(fd, fake_nth(fd, 2), 0, 8);
	ck_assert_uint_eq(fd->nr_dispatched, 4);
	ck_assert_uint_eq(fd->nr_events, 5);
	fake_complete_all(fd);
	for (int i = 0; i < 10; i++)
		ck_assert_int_eq(tb[i].ended, 1);
	fake_disk_free(fd);
}
END_TEST

/* The driver gives the first request it holds back to the queue, and takes no more. */
static void requeue_first(struct fake_disk *fd)
{
	struct request *rq = fake_nth(fd, 0);

	TAILQ_REMOVE(&fd->dispatched, rq, queuelist);
	fd->nr_dispatched--;
	fd->stopped = true;
	blk_queue_lock(fd->q);
	blk_requeue_request(fd->q, rq);
	blk_queue_unlock(fd->q);
}

/* A request the driver gives back goes first again. */
START_TEST(test_requeued_request_goes_first)
{
	struct fake_disk *fd = fake_disk_new("noop");
	struct test_bio tb[2];

	fd->q->limits.nr_requests = 1;
	tbio_init(&tb[0], REQ_OP_READ, 0, 8, mem);
	submit_bio(fd->q, &tb[0].bio);
	tbio_init(&tb[1], REQ_OP_READ, 100, 8, mem + 4096);
	submit_bio(fd->q, &tb[1].bio);
	requeue_first(fd);
	ck_assert_uint_eq(fd->q->in_flight, 0);
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 2);
	ck_assert_uint_eq(fd->events[1].sector, 0);
	fake_complete_all(fd);
	ck_assert_int_eq(tb[0].ended, 1);
	ck_assert_int_eq(tb[1].ended, 1);
	fake_disk_free(fd);
}
END_TEST

/* An elevator that leaves a mark in elv_priv and looks for it when the request completes. */
struct stamp_data {
	struct elv_fifo list;
	unsigned int completed, intact;
};

static int stamp_init(struct elevator_queue *e)
{
	struct stamp_data *sd = calloc(1, sizeof(*sd));

	if (!sd)
		return -1;
	TAILQ_INIT(&sd->list);
	e->elevator_data = sd;
	return 0;
}

static void stamp_exit(struct elevator_queue *e)
{
	free(e->elevator_data);
}

static void stamp_add(struct elevator_queue *e, struct request *rq)
{
	struct stamp_data *sd = e->elevator_data;

	rq->elv_priv[0] = rq;
	rq->elv_priv[1] = sd;
	TAILQ_INSERT_TAIL(&sd->list, rq, queuelist);
}

static struct request *stamp_dispatch(struct elevator_queue *e, uint64_t now)
{
	struct stamp_data *sd = e->elevator_data;
	struct request *rq = TAILQ_FIRST(&sd->list);

	(void)now;
	if (rq)
		TAILQ_REMOVE(&sd->list, rq, queuelist);
	return rq;
}

static bool stamp_has_work(const struct elevator_queue *e)
{
	const struct stamp_data *sd = e->elevator_data;

	return !TAILQ_EMPTY(&sd->list);
}

static void stamp_completed(struct elevator_queue *e, struct request *rq)
{
	struct stamp_data *sd = e->elevator_data;

	sd->completed++;
	sd->intact += rq->elv_priv[0] == rq && rq->elv_priv[1] == sd;
}

static const struct elevator_type stamp_type = {
	.size = sizeof(struct elevator_type),
	.api_version = ELV_API_VERSION,
	.elevator_name = "stamp",
	.init_queue = stamp_init,
	.exit_queue = stamp_exit,
	.add_request = stamp_add,
	.dispatch_request = stamp_dispatch,
	.has_work = stamp_has_work,
	.completed = stamp_completed,
};

/*
 * elv_priv is the elevator's until its completed hook returns (cfq and as
 * find a request's queue or process there): dispatch, a requeue and a
 * completion in parts leave it as the elevator set it.
 */
START_TEST(test_elv_priv_kept_until_completed)
{
	struct fake_disk *fd = fake_disk_new("noop");
	struct stamp_data *sd;
	struct test_bio tb[3];

	elevator_exit(fd->q->elevator);
	fd->q->elevator = elevator_alloc(fd->q, &stamp_type);
	ck_assert_ptr_nonnull(fd->q->elevator);
	sd = fd->q->elevator->elevator_data;
	for (int i = 0; i < 3; i++) {
		tbio_init(&tb[i], REQ_OP_READ, 100 * (sector_t)i, 8, mem + 4096 * i);
		submit_bio(fd->q, &tb[i].bio);
	}
	ck_assert_uint_eq(fd->nr_dispatched, 3);
	requeue_first(fd);
	fake_start(fd);
	fake_complete(fd, fake_nth(fd, 0), 0, 3);
	fake_complete_all(fd);
	ck_assert_uint_eq(sd->completed, 3);
	ck_assert_uint_eq(sd->intact, 3);
	fake_disk_free(fd);
}
END_TEST

/* /sys/block/<dev>/stat counters, exact on the virtual clock. */
START_TEST(test_disk_stats_are_exact)
{
	struct fake_disk *fd = fake_disk_new("noop");
	struct test_bio tb[4];
	struct disk_stats *st = &fd->q->stats;
	char line[512];
	unsigned long long f[17];

	fd->stopped = true;
	tbio_init(&tb[0], REQ_OP_READ, 0, 8, mem);
	submit_bio(fd->q, &tb[0].bio);
	tbio_init(&tb[1], REQ_OP_READ, 8, 8, mem + 4096); /* merges */
	submit_bio(fd->q, &tb[1].bio);
	tbio_init(&tb[2], REQ_OP_WRITE, 100, 16, mem + 65536);
	submit_bio(fd->q, &tb[2].bio);
	fake_start(fd);
	fd->clock.virtual_ns += 3 * NSEC_PER_MSEC;
	ck_assert_uint_eq(st->in_flight[0] + st->in_flight[1], 2);
	fake_complete_all(fd);
	tbio_init(&tb[3], REQ_OP_FLUSH, 0, 0, NULL);
	submit_bio(fd->q, &tb[3].bio);
	fd->clock.virtual_ns += 2 * NSEC_PER_MSEC;
	fake_complete_all(fd);
	blk_stat_format(st, blk_clock_now(&fd->clock), line, sizeof(line));
	ck_assert_int_eq(sscanf(line, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu "
				      "%llu %llu %llu %llu %llu",
				&f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9],
				&f[10], &f[11], &f[12], &f[13], &f[14], &f[15], &f[16]),
			 17);
	ck_assert_uint_eq(f[0], 1);  /* reads */
	ck_assert_uint_eq(f[1], 1);  /* reads merged */
	ck_assert_uint_eq(f[2], 16); /* sectors read */
	ck_assert_uint_eq(f[3], 3);  /* ms reading */
	ck_assert_uint_eq(f[4], 1);
	ck_assert_uint_eq(f[5], 0);
	ck_assert_uint_eq(f[6], 16);
	ck_assert_uint_eq(f[7], 3);
	ck_assert_uint_eq(f[8], 0);  /* in flight */
	ck_assert_uint_eq(f[9], 5);  /* io ticks */
	ck_assert_uint_eq(f[10], 8); /* time in queue */
	ck_assert_uint_eq(f[11], 0);
	ck_assert_uint_eq(f[15], 1); /* flushes */
	ck_assert_uint_eq(f[16], 2);
	fake_disk_free(fd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("request");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_sector_order_tells_every_request_apart);
	tcase_add_test(tc, test_tree_searches_by_sector);
	tcase_add_test(tc, test_tree_add_and_del);
	tcase_add_test(tc, test_tree_reposition_after_front_merge);
	tcase_add_test(tc, test_fifo_merge_keeps_the_earlier_deadline);
	tcase_add_test(tc, test_partial_completion_in_uneven_parts);
	tcase_add_test(tc, test_error_sticks_to_the_bios_it_touches);
	tcase_add_test(tc, test_failing_the_rest);
	tcase_add_test(tc, test_bio_walking_moves_the_submission_position_only);
	tcase_add_test(tc, test_requests_in_flight_up_to_nr_requests);
	tcase_add_test(tc, test_requeued_request_goes_first);
	tcase_add_test(tc, test_disk_stats_are_exact);
	tcase_add_test(tc, test_elv_priv_kept_until_completed);
	suite_add_tcase(s, tc);
	return fake_run_suite(s);
}
