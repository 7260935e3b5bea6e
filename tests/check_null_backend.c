/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_null_backend.c - the null backend's completion modes, null_blk's
 * irqmode and completion_nsec, on a virtual clock: where and when each
 * request ends, and the keys it refuses.
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "backend_uring.h"
#include "stack_harness.h"

#define US 1000ull
#define MS 1000000ull
#define CAPACITY (2ull * 1024 * 1024) /* 1 GiB in sectors */
#define MAX_BIOS 16

/* A queue with noop right over the null backend opened from args. */
static void setup(struct stack_harness *h, const char *args)
{
	char why[256] = "";

	ck_assert_msg(!sh_open_args(h, NULL, 0, &dev_null_ops, args, CAPACITY, MAX_BIOS, why,
				    sizeof(why)),
		      "%s: %s", args, why);
	blk_queue_set_pdu_size(h->q, dev_stack_pdu_size(&h->stack));
	ck_assert_int_eq(elevator_init(h->q, "noop"), 0);
}

/* nr reads of 8 sectors, far apart (no merge), issued at once. */
static void issue_reads(struct stack_harness *h, unsigned int nr)
{
	blk_queue_lock(h->q);
	blk_plug_device(h->q);
	for (unsigned int i = 0; i < nr; i++)
		sh_queue_bio(h, REQ_OP_READ, 0, (sector_t)i * 100000, 8, 0);
	__blk_unplug(h->q);
	blk_queue_unlock(h->q);
}

/* irqmode=none: each request ends in the call that submits it, with no timer or host I/O. */
START_TEST(none_ends_inside_submit)
{
	struct stack_harness h;

	setup(&h, "irqmode=none");
	h.may_end_in_submit = true;
	sh_submit(&h, REQ_OP_WRITE, 0, 0, 8, 1);
	sh_submit(&h, REQ_OP_READ, 0, 800, 8, 0);
	sh_submit(&h, REQ_OP_FLUSH, 0, 0, 0, 0);
	ck_assert_uint_eq(h.ended_in_submit, 3);
	ck_assert_uint_eq(h.nr_ended, 3);
	ck_assert_uint_eq(h.nr_io, 0);
	ck_assert_uint_eq(dev_stack_next_timer(&h.stack), 0);
	for (unsigned int i = 0; i < 3; i++) {
		ck_assert_uint_eq(h.ended_at[i], SH_START_NS);
		ck_assert_int_eq(h.error[i], 0);
	}
	sh_teardown(&h);
}
END_TEST

/*
 * irqmode=softirq: nothing ends inside submit; each request ends at the
 * host's next turn of its loop, through the NOP it was given, at no time.
 */
START_TEST(softirq_ends_at_the_hosts_next_turn)
{
	struct stack_harness h;

	setup(&h, _i ? "irqmode=softirq" : NULL); /* the default: as before the keys */
	issue_reads(&h, 3);
	sh_kick(&h);
	ck_assert_uint_eq(h.nr_ended, 0);
	ck_assert_uint_eq(h.nr_io, 3);
	ck_assert_uint_eq(h.max_below, 3);
	sh_host_turn(&h);
	ck_assert_uint_eq(h.nr_ended, 3);
	for (unsigned int i = 0; i < 3; i++) {
		ck_assert_uint_eq(h.ended_at[i], SH_START_NS);
		ck_assert_uint_eq(h.order[i], i + 1);
		ck_assert_int_eq(h.error[i], 0);
	}
	ck_assert_uint_eq(h.ended_in_submit, 0);
	sh_teardown(&h);
}
END_TEST

/*
 * irqmode=timer: each request ends completion_nsec after it came, not a
 * nanosecond sooner, several in flight at once, in the order they are due.
 */
START_TEST(timer_ends_each_completion_nsec_after_submission)
{
	struct stack_harness h;
	const uint64_t t0 = SH_START_NS;

	setup(&h, "irqmode=timer,completion_nsec=1000000");
	issue_reads(&h, 3); /* 0, 1, 2 at t0 */
	sh_run_until(&h, t0 + 300 * US);
	sh_submit(&h, REQ_OP_WRITE, 0, 500000, 8, 1); /* 3 at t0 + 0.3 ms */
	sh_run_until(&h, t0 + 500 * US);
	sh_submit(&h, REQ_OP_READ, 0, 700000, 8, 0); /* 4 at t0 + 0.5 ms */
	ck_assert_uint_eq(h.max_below, 5);
	sh_run_until(&h, t0 + MS - 1);
	ck_assert_uint_eq(h.nr_ended, 0);
	ck_assert_uint_eq(h.nr_io, 0); /* no host I/O: the timer alone */
	sh_run(&h);
	for (unsigned int i = 0; i < 3; i++) {
		ck_assert_uint_eq(h.ended_at[i], t0 + MS);
		ck_assert_uint_le(h.order[i], 3);
	}
	ck_assert_uint_eq(h.ended_at[3], t0 + 1300 * US);
	ck_assert_uint_eq(h.order[3], 4);
	ck_assert_uint_eq(h.ended_at[4], t0 + 1500 * US);
	ck_assert_uint_eq(h.order[4], 5);
	ck_assert_uint_eq(h.ended_in_submit, 0);
	for (unsigned int i = 0; i < 5; i++)
		ck_assert_int_eq(h.error[i], 0);
	sh_teardown(&h);
}
END_TEST

/* completion_nsec defaults to null_blk's 10 µs, and 0 ends at the next timer run. */
START_TEST(timer_defaults_to_ten_microseconds)
{
	struct stack_harness h;

	setup(&h, _i ? "irqmode=timer,completion_nsec=0" : "irqmode=timer");
	issue_reads(&h, 1);
	ck_assert_uint_eq(h.max_below, 1); /* submitted, */
	ck_assert_uint_eq(h.nr_ended, 0);  /* not ended */
	sh_run(&h);
	ck_assert_uint_eq(h.ended_at[0], SH_START_NS + (_i ? 0 : 10 * US));
	ck_assert_uint_eq(h.ended_in_submit, 0);
	sh_teardown(&h);
}
END_TEST

/*
 * irqmode=none under a filter: a request that ends inside the filter's
 * own dev_submit to the backend still ends once, whole, without error.
 * Every filter the registry has that opens with no keys, bare, then these
 * that need keys, or time, to hold requests.
 */
static const char *const keyed_filters[] = { "model:ssd", "delay:ms=1", "write-cache:expire=0" };
#define NR_KEYED (sizeof(keyed_filters) / sizeof(keyed_filters[0]))

static unsigned int nr_filters(void)
{
	unsigned int n = 0;

	for (const struct dev_ops *const *f = dev_filter_list(); *f; f++)
		n++;
	return n;
}

START_TEST(none_under_each_filter)
{
	unsigned int nr = nr_filters(), i = (unsigned int)_i;
	const char *spec = i < nr ? dev_filter_list()[i]->name : keyed_filters[i - nr];
	struct stack_harness h;
	char why[256] = "";

	if (i < nr && dev_check_filter(spec, why, sizeof(why)))
		return; /* it needs keys: one of keyed_filters, or a file */
	ck_assert_msg(!sh_open_args(&h, &spec, 1, &dev_null_ops, "irqmode=none", CAPACITY,
				    MAX_BIOS, why, sizeof(why)),
		      "%s: %s", spec, why);
	blk_queue_set_pdu_size(h.q, dev_stack_pdu_size(&h.stack));
	ck_assert_int_eq(elevator_init(h.q, "noop"), 0);
	h.may_end_in_submit = true;
	for (unsigned int k = 0; k < 4; k++)
		sh_submit(&h, REQ_OP_WRITE, 0, (sector_t)k * 1000, 8, (int)k);
	sh_submit(&h, REQ_OP_WRITE, REQ_FUA, 8000, 8, 9);
	sh_submit(&h, REQ_OP_READ, 0, 0, 16, 0);
	sh_submit(&h, REQ_OP_FLUSH, 0, 0, 0, 0);
	sh_submit(&h, REQ_OP_DISCARD, 0, 9000, 8, 0);
	sh_run(&h);
	for (unsigned int k = 0; k < h.nr_bios; k++)
		ck_assert_msg(!h.error[k], "%s: bio %u ended with %d", spec, k, h.error[k]);
	ck_assert_uint_eq(h.nr_ended, h.nr_bios);
	sh_teardown(&h);
}
END_TEST

/* Keys the null backend refuses, each in one line naming what is wrong. */
static const struct {
	const char *args, *reason;
} bad_args[] = {
	{ "irqmode=bogus", "bogus" },
	{ "irqmode=", "irqmode" },
	{ "irqmode", "irqmode" },
	{ "irqmode=timer,completion_nsec=1000000001", "1000000001" },
	{ "irqmode=timer,completion_nsec=-1", "completion_nsec" },
	{ "irqmode=timer,completion_nsec=1e6", "completion_nsec" },
	{ "completion_nsec=1000", "irqmode=timer" },
	{ "irqmode=none,completion_nsec=1000", "irqmode=timer" },
	{ "bogus=1", "bogus" },
	{ "irqmode=timer,,", "key" },
};

START_TEST(bad_keys_are_refused_in_one_line)
{
	struct stack_harness h;
	char why[256] = "";
	int ret = sh_open_args(&h, NULL, 0, &dev_null_ops, bad_args[_i].args, CAPACITY, MAX_BIOS,
			       why, sizeof(why));

	ck_assert_msg(ret == -EINVAL, "%s: opened (%d)", bad_args[_i].args, ret);
	ck_assert_msg(strstr(why, bad_args[_i].reason), "%s: '%s' lacks '%s'", bad_args[_i].args,
		      why, bad_args[_i].reason);
	ck_assert_msg(!strncmp(why, "null: ", 6), "%s: '%s' does not name the backend",
		      bad_args[_i].args, why);
	ck_assert_msg(!strchr(why, '\n'), "%s: '%s' is more than a line", bad_args[_i].args, why);
	sh_open_failed(&h);
}
END_TEST

/* The keys it takes are the keys --help-backend lists. */
START_TEST(keys_are_in_its_table)
{
	const struct dev_key *k = dev_null_ops.keys;

	ck_assert_ptr_nonnull(k);
	ck_assert_str_eq(k[0].name, "irqmode");
	ck_assert_str_eq(k[1].name, "completion_nsec");
	ck_assert_ptr_null(k[2].name);
	ck_assert_uint_eq(k[1].max, 1000000000);
	for (unsigned int i = 0; i < 2; i++)
		ck_assert(k[i].help && *k[i].help && !strchr(k[i].help, '\n'));
}
END_TEST

static Suite *null_suite(void)
{
	Suite *s = suite_create("null_backend");
	TCase *tc = tcase_create("modes");

	tcase_add_test(tc, none_ends_inside_submit);
	tcase_add_loop_test(tc, softirq_ends_at_the_hosts_next_turn, 0, 2);
	tcase_add_test(tc, timer_ends_each_completion_nsec_after_submission);
	tcase_add_loop_test(tc, timer_defaults_to_ten_microseconds, 0, 2);
	tcase_add_loop_test(tc, none_under_each_filter, 0, (int)(nr_filters() + NR_KEYED));
	tcase_add_loop_test(tc, bad_keys_are_refused_in_one_line, 0,
			    sizeof(bad_args) / sizeof(bad_args[0]));
	tcase_add_test(tc, keys_are_in_its_table);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fake_run_suite(null_suite());
}
