/* SPDX-License-Identifier: BSD-3-Clause */
/* check_checkorder.c - the barrier order checker on traces built record by record. */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "checkorder.h"
#include "fake_driver.h"

#define MAX_EVENTS 128
#define US 1000u

/* Categories as the writer sets them; unsigned, as BLK_TC_ACT(BLK_TC_FUA) overflows an int. */
#define R ((uint32_t)BLK_TC_READ)
#define W ((uint32_t)BLK_TC_WRITE)
#define F ((uint32_t)BLK_TC_FLUSH)
#define FUA ((uint32_t)BLK_TC_FUA)
#define S ((uint32_t)BLK_TC_SYNC)
#define FLUSH_OP (W | F | S) /* an fsync's flush, and the preflush of a barrier write */

/* A trace being built: each record 1 us after the last, sequence numbers from 1. */
struct tb {
	struct bt_event ev[MAX_EVENTS];
	struct bt_trace t;
	struct order_report rep;
	uint32_t seq;
};

static void tb_init(struct tb *b)
{
	memset(b, 0, sizeof(*b));
	b->t.ev = b->ev;
}

static void add(struct tb *b, unsigned int act, uint32_t cat, uint64_t sector, uint32_t sectors)
{
	struct bt_event *e;

	ck_assert_uint_lt(b->t.nr, MAX_EVENTS);
	e = &b->ev[b->t.nr++];
	*e = (struct bt_event){
		.time = b->t.nr * US,
		.sector = sector,
		.bytes = sectors << 9,
		.action = act | BLK_TC_ACT(cat),
		.pid = 100,
		.sequence = ++b->seq,
	};
	if (act == __BLK_TA_QUEUE)
		e->action |= BLK_TC_ACT(BLK_TC_QUEUE);
}

#define Q(b, cat, sector, n) add(b, __BLK_TA_QUEUE, cat, sector, n)
#define D(b, cat, sector, n) add(b, __BLK_TA_ISSUE, cat, sector, n)
#define C(b, cat, sector, n) add(b, __BLK_TA_COMPLETE, cat, sector, n)
#define RQ(b, cat, sector, n) add(b, __BLK_TA_REQUEUE, cat, sector, n)

/* A flush through the queue: queued, issued and completed in turn. */
static void flush(struct tb *b)
{
	Q(b, FLUSH_OP, 0, 0);
	D(b, FLUSH_OP, 0, 0);
	C(b, FLUSH_OP, 0, 0);
}

/* A bio that goes through alone. */
static void io(struct tb *b, uint32_t cat, uint64_t sector, uint32_t n)
{
	Q(b, cat, sector, n);
	D(b, cat, sector, n);
	C(b, cat, sector, n);
}

static void assert_kept(struct tb *b, size_t bios, size_t barriers)
{
	int ret = order_check(&b->t, &b->rep);

	ck_assert_msg(ret == 0, "order_check: %d: %s", ret, b->rep.why);
	ck_assert_uint_eq(b->rep.bios, bios);
	ck_assert_uint_eq(b->rep.barriers, barriers);
}

/* Broken, with a one-line reason that holds each of the words. */
static void assert_broken(struct tb *b, const char *const *words)
{
	ck_assert_int_eq(order_check(&b->t, &b->rep), 1);
	ck_assert_ptr_null(strchr(b->rep.why, '\n'));
	for (; *words; words++)
		ck_assert_msg(strstr(b->rep.why, *words), "'%s' lacks '%s'", b->rep.why, *words);
}

START_TEST(empty_trace_keeps_order)
{
	struct tb b;

	tb_init(&b);
	assert_kept(&b, 0, 0);
	ck_assert_uint_eq(b.rep.outstanding, 0);
}
END_TEST

START_TEST(ordered_flushes_keep_order)
{
	struct tb b;

	tb_init(&b);
	io(&b, W, 100, 8);
	Q(&b, R | S, 100, 8); /* reads wait for barriers as well */
	Q(&b, W, 200, 8);
	D(&b, W, 200, 8);
	D(&b, R | S, 100, 8);
	C(&b, R | S, 100, 8);
	C(&b, W, 200, 8);
	flush(&b);
	io(&b, W, 300, 8);
	flush(&b);
	assert_kept(&b, 6, 2);
	ck_assert_uint_eq(b.rep.outstanding, 0);
}
END_TEST

/*
 * A barrier write as rqdisk carries it out: its preflush (a 0-byte flush
 * of its own, never queued) first, then the write as FUA.
 */
START_TEST(barrier_write_with_preflush_keeps_order)
{
	struct tb b;

	tb_init(&b);
	io(&b, W, 0, 8);
	Q(&b, W | F | S, 100, 8);
	add(&b, __BLK_TA_GETRQ, FLUSH_OP, 0, 0);
	add(&b, __BLK_TA_INSERT, FLUSH_OP, 0, 0);
	D(&b, FLUSH_OP, 0, 0);
	C(&b, FLUSH_OP, 0, 0);
	D(&b, W | F | FUA | S, 100, 8);
	C(&b, W | F | FUA | S, 100, 8);
	io(&b, W, 200, 8);
	assert_kept(&b, 3, 1);
}
END_TEST

/*
 * A barrier write whose data completes before its preflush does: the
 * barrier is not complete until both are, so a write issued in between
 * breaks the order.
 */
START_TEST(barrier_write_waits_for_its_preflush_too)
{
	static const char *const words[] = { "Q #5", "barrier Q #1", "D #6", NULL };
	static const char *const unissued[] = { "Q #4", "barrier Q #1", "D #5", NULL };
	struct tb b;

	tb_init(&b);
	Q(&b, W | F | S, 100, 8);       /* #1 */
	D(&b, FLUSH_OP, 0, 0);          /* its preflush */
	D(&b, W | F | FUA | S, 100, 8);
	C(&b, W | F | FUA | S, 100, 8); /* #4: the data done, the preflush not */
	Q(&b, W, 200, 8);               /* #5 */
	D(&b, W, 200, 8);               /* #6 */
	C(&b, FLUSH_OP, 0, 0);
	assert_broken(&b, words);

	/* and the same when the preflush has not even been issued yet */
	tb_init(&b);
	Q(&b, W | F | S, 100, 8);
	D(&b, W | F | FUA | S, 100, 8);
	C(&b, W | F | FUA | S, 100, 8);
	Q(&b, W, 200, 8);
	D(&b, W, 200, 8);
	assert_broken(&b, unissued);
}
END_TEST

/* The write queued before the flush completes only after the flush was issued. */
START_TEST(write_before_flush_completing_late_breaks_order)
{
	static const char *const words[] = { "barrier Q #3", "D #4", "Q #1", "W 100+8", NULL };
	struct tb b;

	tb_init(&b);
	Q(&b, W, 100, 8);        /* #1 */
	D(&b, W, 100, 8);        /* #2 */
	Q(&b, FLUSH_OP, 0, 0);   /* #3 */
	D(&b, FLUSH_OP, 0, 0);   /* #4: too early */
	C(&b, W, 100, 8);
	C(&b, FLUSH_OP, 0, 0);
	assert_broken(&b, words);
}
END_TEST

/* A write queued before the barrier and not even issued when the barrier is. */
START_TEST(write_before_flush_issued_late_breaks_order)
{
	static const char *const words[] = { "barrier Q #2", "D #3", "Q #1", "W 100+8", NULL };
	struct tb b;

	tb_init(&b);
	Q(&b, W, 100, 8);
	Q(&b, FLUSH_OP, 0, 0);
	D(&b, FLUSH_OP, 0, 0);
	C(&b, FLUSH_OP, 0, 0);
	D(&b, W, 100, 8);
	C(&b, W, 100, 8);
	assert_broken(&b, words);
}
END_TEST

/* Queued after the barrier, issued while it was in flight. */
START_TEST(write_after_flush_issued_early_breaks_order)
{
	static const char *const words[] = { "Q #3", "W 100+8", "barrier Q #1", "D #4", NULL };
	struct tb b;

	tb_init(&b);
	Q(&b, FLUSH_OP, 0, 0);   /* #1 */
	D(&b, FLUSH_OP, 0, 0);   /* #2 */
	Q(&b, W, 100, 8);        /* #3 */
	D(&b, W, 100, 8);        /* #4: before the flush completed */
	C(&b, FLUSH_OP, 0, 0);
	C(&b, W, 100, 8);
	assert_broken(&b, words);
}
END_TEST

/* Queued after the barrier and issued before the barrier itself was. */
START_TEST(write_after_flush_overtaking_it_breaks_order)
{
	static const char *const words[] = { "Q #2", "barrier Q #1", "D #3", NULL };
	struct tb b;

	tb_init(&b);
	Q(&b, FLUSH_OP, 0, 0);
	Q(&b, W, 100, 8);
	D(&b, W, 100, 8);
	C(&b, W, 100, 8);
	D(&b, FLUSH_OP, 0, 0);
	C(&b, FLUSH_OP, 0, 0);
	assert_broken(&b, words);
}
END_TEST

/* A barrier write's data still in flight when a later write is issued. */
START_TEST(write_after_barrier_write_breaks_order)
{
	static const char *const words[] = { "Q #5", "W 200+8", "barrier Q #1", "D #6", NULL };
	struct tb b;

	tb_init(&b);
	Q(&b, W | F | S, 100, 8);      /* #1 */
	D(&b, FLUSH_OP, 0, 0);         /* its preflush */
	C(&b, FLUSH_OP, 0, 0);
	D(&b, W | F | FUA | S, 100, 8); /* #4: the data, in flight */
	Q(&b, W, 200, 8);              /* #5 */
	D(&b, W, 200, 8);              /* #6 */
	C(&b, W | F | FUA | S, 100, 8);
	assert_broken(&b, words);
}
END_TEST

/*
 * One bio split in two, its halves issued and completed out of order: it
 * is done only when both are, and the barrier after it may go then.
 */
START_TEST(split_bio_is_matched_in_parts)
{
	struct tb b;

	tb_init(&b);
	Q(&b, W, 0, 16);
	add(&b, __BLK_TA_SPLIT, W, 0, 8);
	D(&b, W, 8, 8);
	D(&b, W, 0, 8);
	C(&b, W, 0, 8);
	C(&b, W, 8, 8);
	flush(&b);
	assert_kept(&b, 2, 1);
}
END_TEST

START_TEST(split_bio_half_done_holds_the_barrier)
{
	static const char *const words[] = { "barrier Q #5", "D #6", "Q #1", "W 0+16", NULL };
	struct tb b;

	tb_init(&b);
	Q(&b, W, 0, 16);
	D(&b, W, 0, 8);
	D(&b, W, 8, 8);
	C(&b, W, 0, 8);
	Q(&b, FLUSH_OP, 0, 0);
	D(&b, FLUSH_OP, 0, 0);
	C(&b, W, 8, 8);
	C(&b, FLUSH_OP, 0, 0);
	assert_broken(&b, words);
}
END_TEST

/* Back and front merges: one request, one D and one C, over three bios. */
START_TEST(merged_bios_are_matched_by_one_request)
{
	struct tb b;

	tb_init(&b);
	Q(&b, W, 8, 8);
	Q(&b, W, 16, 8);
	add(&b, __BLK_TA_BACKMERGE, W, 16, 8);
	Q(&b, W, 0, 8);
	add(&b, __BLK_TA_FRONTMERGE, W, 0, 8);
	D(&b, W, 0, 24);
	C(&b, W, 0, 24);
	flush(&b);
	Q(&b, W, 24, 8);
	D(&b, W, 24, 8);
	C(&b, W, 24, 8);
	assert_kept(&b, 5, 1);
	ck_assert_uint_eq(b.rep.outstanding, 0);
}
END_TEST

/* Two writes to the same sectors: the first D and C go to the older one. */
START_TEST(same_sectors_match_oldest_first)
{
	static const char *const words[] = { "barrier Q #5", "Q #2", NULL };
	struct tb b;

	tb_init(&b);
	Q(&b, W, 0, 8); /* #1 */
	Q(&b, W, 0, 8); /* #2 */
	D(&b, W, 0, 8);
	C(&b, W, 0, 8);
	Q(&b, FLUSH_OP, 0, 0); /* #5 */
	D(&b, FLUSH_OP, 0, 0);
	assert_broken(&b, words);
}
END_TEST

START_TEST(issue_of_something_never_queued)
{
	static const char *const words[] = { "D #2", "issue of something never queued", "100+8",
					     NULL };
	struct tb b;

	tb_init(&b);
	Q(&b, R | S, 100, 8);
	D(&b, W, 100, 8); /* the sectors were queued, but as a read */
	assert_broken(&b, words);
}
END_TEST

START_TEST(completion_of_something_never_queued)
{
	static const char *const words[] = { "C #3", "completion of something never queued",
					     "sectors 8+8", NULL };
	struct tb b;

	tb_init(&b);
	Q(&b, W, 0, 8);
	D(&b, W, 0, 8);
	C(&b, W, 0, 16); /* 8+8 were never queued */
	assert_broken(&b, words);
}
END_TEST

START_TEST(flush_never_queued)
{
	static const char *const issue[] = { "D #1", "issue of a flush never queued", NULL };
	static const char *const done[] = { "C #4", "completion of a flush never queued", NULL };
	struct tb b;

	tb_init(&b);
	D(&b, FLUSH_OP, 0, 0);
	assert_broken(&b, issue);

	tb_init(&b);
	flush(&b);
	C(&b, FLUSH_OP, 0, 0);
	assert_broken(&b, done);
}
END_TEST

/* A requeued request is issued again: its second D issues nothing new. */
START_TEST(requeue_then_issue_again)
{
	struct tb b;

	tb_init(&b);
	Q(&b, W, 0, 8);
	D(&b, W, 0, 8);
	RQ(&b, W, 0, 8);
	D(&b, W, 0, 8);
	C(&b, W, 0, 8);
	Q(&b, FLUSH_OP, 0, 0);
	D(&b, FLUSH_OP, 0, 0);
	RQ(&b, FLUSH_OP, 0, 0);
	D(&b, FLUSH_OP, 0, 0);
	C(&b, FLUSH_OP, 0, 0);
	io(&b, W, 8, 8);
	assert_kept(&b, 3, 1);
	ck_assert_uint_eq(b.rep.outstanding, 0);
}
END_TEST

/* Notes, plugs and 0-byte records that are no flush carry no order. */
START_TEST(other_records_are_ignored)
{
	struct tb b;

	tb_init(&b);
	add(&b, __BLK_TN_PROCESS, BLK_TC_NOTIFY, 0, 0);
	b.ev[0].sequence = 0;
	add(&b, __BLK_TA_PLUG, 0, 0, 0);
	Q(&b, W, 0, 8);
	add(&b, __BLK_TN_MESSAGE, BLK_TC_NOTIFY, 0, 0); /* a filter's note */
	b.ev[b.t.nr - 1].sequence = 0;
	add(&b, __BLK_TA_UNPLUG_IO, 0, 0, 0);
	add(&b, __BLK_TA_BOUNCE, W, 0, 8);
	D(&b, W, 0, 8);
	D(&b, W, 64, 0);
	C(&b, W, 0, 8);
	assert_kept(&b, 1, 0);
}
END_TEST

/* The trace may stop with I/O still out: counted, not a violation. */
START_TEST(outstanding_at_the_end_is_counted)
{
	struct tb b;

	tb_init(&b);
	io(&b, W, 0, 8);
	Q(&b, W, 8, 8);
	D(&b, W, 8, 8);
	Q(&b, R | S, 0, 8);
	assert_kept(&b, 3, 0);
	ck_assert_uint_eq(b.rep.outstanding, 2);
}
END_TEST

START_TEST(describe_names_a_record_as_blkparse_would)
{
	struct bt_event e = {
		.time = 1234567891,
		.sector = 2048,
		.bytes = 4096,
		.action = BLK_TA_ISSUE | BLK_TC_ACT(W | F | FUA | S),
		.sequence = 42,
	};
	char buf[96];

	order_describe(&e, buf, sizeof(buf));
	ck_assert_str_eq(buf, "D #42 at 1.234567891 FWFS 2048+8");
	e.action = BLK_TA_COMPLETE | BLK_TC_ACT(R | S);
	e.time = 5;
	order_describe(&e, buf, sizeof(buf));
	ck_assert_str_eq(buf, "C #42 at 0.000000005 RS 2048+8");
}
END_TEST

static Suite *checkorder_suite(void)
{
	Suite *s = suite_create("checkorder");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, empty_trace_keeps_order);
	tcase_add_test(tc, ordered_flushes_keep_order);
	tcase_add_test(tc, barrier_write_with_preflush_keeps_order);
	tcase_add_test(tc, barrier_write_waits_for_its_preflush_too);
	tcase_add_test(tc, write_before_flush_completing_late_breaks_order);
	tcase_add_test(tc, write_before_flush_issued_late_breaks_order);
	tcase_add_test(tc, write_after_flush_issued_early_breaks_order);
	tcase_add_test(tc, write_after_flush_overtaking_it_breaks_order);
	tcase_add_test(tc, write_after_barrier_write_breaks_order);
	tcase_add_test(tc, split_bio_is_matched_in_parts);
	tcase_add_test(tc, split_bio_half_done_holds_the_barrier);
	tcase_add_test(tc, merged_bios_are_matched_by_one_request);
	tcase_add_test(tc, same_sectors_match_oldest_first);
	tcase_add_test(tc, issue_of_something_never_queued);
	tcase_add_test(tc, completion_of_something_never_queued);
	tcase_add_test(tc, flush_never_queued);
	tcase_add_test(tc, requeue_then_issue_again);
	tcase_add_test(tc, other_records_are_ignored);
	tcase_add_test(tc, outstanding_at_the_end_is_counted);
	tcase_add_test(tc, describe_names_a_record_as_blkparse_would);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fake_run_suite(checkorder_suite());
}
