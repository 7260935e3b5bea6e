/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_loader.c - elevators from shared objects: the example and a test
 * elevator load and run, broken ones are refused with the reason why.
 *
 * The modules are libtool modules of this build, in $top_builddir/tests/.libs.
 */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_driver.h"
#include "fake_mq.h"

#define MS NSEC_PER_MSEC

static char buf[4096] __attribute__((aligned(4096)));

static const char *top_builddir(void)
{
	const char *top = getenv("top_builddir");

	return top ? top : ".";
}

/* The path of module NAME.so built by this tree. */
static const char *module(const char *name)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/tests/.libs/%s.so", top_builddir(), name);
	return path;
}

static void read8(struct fake_disk *fd, struct test_bio *tb, sector_t sector)
{
	tbio_init(tb, REQ_OP_READ, sector, 8, buf);
	submit_bio(fd->q, &tb->bio);
}

static void assert_order(const struct fake_disk *fd, const sector_t *sectors, unsigned int n)
{
	ck_assert_uint_eq(fd->nr_events, n);
	for (unsigned int i = 0; i < n; i++)
		ck_assert_msg(fd->events[i].sector == sectors[i], "dispatch %u: sector %llu, not %llu",
			      i, (unsigned long long)fd->events[i].sector,
			      (unsigned long long)sectors[i]);
}

static int do_switch(struct fake_disk *fd, const char *name)
{
	char why[256] = "";
	int ret;

	blk_queue_lock(fd->q);
	ret = elevator_switch(fd->q, name, why, sizeof(why));
	blk_queue_unlock(fd->q);
	ck_assert_msg(!ret, "switch to %s: %s", name, why);
	return ret;
}

static const char *running(const struct fake_disk *fd)
{
	return fd->q->elevator ? fd->q->elevator->type->elevator_name : "none";
}

/* Refused: NULL, and a reason that contains each of the strings given. */
static void assert_refused(const char *name, const char *expect1, const char *expect2)
{
	char why[512] = "";
	const struct elevator_type *t = elevator_load(module(name), why, sizeof(why));

	ck_assert_msg(!t, "%s was loaded", name);
	ck_assert_msg(strstr(why, expect1), "%s: reason '%s' lacks '%s'", name, why, expect1);
	if (expect2)
		ck_assert_msg(strstr(why, expect2), "%s: reason '%s' lacks '%s'", name, why,
			      expect2);
	ck_assert_msg(!strchr(why, '\n'), "%s: the reason is not one line: %s", name, why);
	/* and the same through elevator_get(), which takes any name with a slash */
	why[0] = '\0';
	ck_assert_ptr_null(elevator_get(module(name), why, sizeof(why)));
	ck_assert_msg(strstr(why, expect1), "%s: reason '%s' lacks '%s'", name, why, expect1);
	ck_assert_ptr_null(elevator_find("broken"));
}

START_TEST(test_example_loads)
{
	char why[256] = "";
	const struct elevator_type *t = elevator_load(module("lifo"), why, sizeof(why));
	const char *const *n;

	ck_assert_msg(t, "%s", why);
	ck_assert_str_eq(t->elevator_name, "lifo");
	ck_assert_int_eq(t->api_version, ELV_API_VERSION);
	ck_assert_uint_eq(t->size, sizeof(struct elevator_type));
	ck_assert_ptr_eq(elevator_load(module("lifo"), why, sizeof(why)), t);
	ck_assert_ptr_eq(elevator_get(module("lifo"), why, sizeof(why)), t);
	ck_assert_ptr_eq(elevator_get("lifo", why, sizeof(why)), t);
	ck_assert_ptr_eq(elevator_find("lifo"), t);
	for (n = elevator_names(); *n && strcmp(*n, "lifo"); n++)
		;
	ck_assert_msg(*n, "lifo is not among the elevator names");
}
END_TEST

/* The same file by another path string: its name is taken by then. */
START_TEST(test_second_copy_is_refused)
{
	char why[256] = "", other[PATH_MAX + 32];

	ck_assert_ptr_nonnull(elevator_load(module("lifo"), why, sizeof(why)));
	snprintf(other, sizeof(other), "%s/tests/.libs/./lifo.so", top_builddir());
	ck_assert_ptr_null(elevator_load(other, why, sizeof(why)));
	ck_assert_msg(strstr(why, "the name lifo is taken"), "%s", why);
}
END_TEST

/* Newest first: 0, 100, 200, 300 reach the driver as 300, 200, 100, 0. */
START_TEST(test_example_dispatches_last_in_first_out)
{
	struct fake_disk *fd = fake_disk_new(module("lifo"));
	static const sector_t lifo[] = { 300, 200, 100, 0 };
	struct test_bio tb[4];

	ck_assert_str_eq(running(fd), "lifo");
	fd->stopped = true;
	for (int i = 0; i < 4; i++)
		read8(fd, &tb[i], (sector_t)i * 100);
	fake_start(fd);
	assert_order(fd, lifo, 4);
	fake_complete_all(fd);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(tb[i].ended, 1);
	fake_disk_free(fd);
}
END_TEST

/* A request that has waited expire ms goes ahead of newer ones. */
START_TEST(test_example_expired_request_goes_first)
{
	struct fake_disk *fd = fake_disk_new(module("lifo"));
	static const sector_t order[] = { 0, 100, 300, 200 };
	struct test_bio tb[4];

	fd->stopped = true;
	read8(fd, &tb[0], 0);
	read8(fd, &tb[1], 100);
	fd->clock.virtual_ns += 1000 * MS; /* the default expire: both are due now */
	read8(fd, &tb[2], 200);
	read8(fd, &tb[3], 300);
	fake_start(fd);
	assert_order(fd, order, 4);
	fake_complete_all(fd);
	fake_disk_free(fd);
}
END_TEST

/* expire round-trips in ms, bounds are the core's, and 0 makes lifo a fifo. */
START_TEST(test_example_tunable)
{
	struct fake_disk *fd = fake_disk_new(module("lifo"));
	static const char *const bad[] = { "-1", "2147483648", "", "ten", "5ms" };
	static const sector_t fifo[] = { 0, 100, 200 };
	struct elevator_queue *e = fd->q->elevator;
	struct test_bio tb[3];
	long long v;

	ck_assert_int_eq(elv_tunable_show(e, "expire", &v), 0);
	ck_assert_int_eq(v, 1000);
	ck_assert_int_eq(elv_tunable_store(e, "expire", "250\n"), 0);
	ck_assert_int_eq(elv_tunable_show(e, "expire", &v), 0);
	ck_assert_int_eq(v, 250);
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(elv_tunable_store(e, "expire", bad[i]) == -EINVAL, "took '%s'",
			      bad[i]);
		ck_assert_int_eq(elv_tunable_show(e, "expire", &v), 0);
		ck_assert_int_eq(v, 250);
	}
	ck_assert_int_eq(elv_tunable_store(e, "expire", "2147483647"), 0);
	ck_assert_int_eq(elv_tunable_show(e, "expire", &v), 0);
	ck_assert_int_eq(v, 2147483647);
	ck_assert_int_eq(elv_tunable_store(e, "no_such_tunable", "1"), -ENOENT);
	ck_assert_int_eq(elv_tunable_show(e, "no_such_tunable", &v), -ENOENT);

	ck_assert_int_eq(elv_tunable_store(e, "expire", "0"), 0);
	fd->stopped = true;
	for (int i = 0; i < 3; i++)
		read8(fd, &tb[i], (sector_t)i * 100);
	fake_start(fd);
	assert_order(fd, fifo, 3);
	fake_complete_all(fd);
	fake_disk_free(fd);
}
END_TEST

/* Switching to a path loads it; queued requests move to it and it orders them. */
START_TEST(test_switch_to_a_path)
{
	struct fake_disk *fd = fake_disk_new("noop");
	static const sector_t lifo[] = { 300, 200, 100, 0 };
	struct test_bio tb[4];

	fd->stopped = true;
	for (int i = 0; i < 4; i++)
		read8(fd, &tb[i], (sector_t)i * 100);
	do_switch(fd, module("lifo"));
	ck_assert_str_eq(running(fd), "lifo");
	do_switch(fd, "lifo"); /* by name now, and already running */
	fake_start(fd);
	assert_order(fd, lifo, 4);
	fake_complete_all(fd);
	do_switch(fd, "deadline");
	ck_assert_str_eq(running(fd), "deadline");
	fake_disk_free(fd);
}
END_TEST

/*
 * Every core function rqdisk-elevator(3) offers an elevator is in the
 * program's dynamic symbols (src/elevator.syms), as a plugin's dlopen
 * with RTLD_NOW needs it.
 */
START_TEST(test_helpers_are_exported)
{
	static const char *const helpers[] = {
		"elv_schedule_dispatch", "elv_fifo_merge", "elv_rb_add", "elv_rb_del",
		"elv_rb_first", "elv_rb_last", "elv_rb_next", "elv_rb_prev",
		"elv_rb_find", "elv_rb_ceiling", "elv_rb_below",
	};

	for (size_t i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++)
		ck_assert_msg(dlsym(RTLD_DEFAULT, helpers[i]), "%s is not exported to elevators",
			      helpers[i]);
}
END_TEST

/*
 * An elevator built outside the tree keeps its requests in the core's
 * sorted tree: it loads (every elv_rb function it calls resolves), sweeps
 * up in sector order, and after a front merge moves R1 (at 100) below R2
 * (at 95) the core has re-sorted it there: the sweep from Q takes R1 first.
 * The gap between Q and R1 closed, the two become one.
 */
START_TEST(test_plugin_uses_the_sorted_tree)
{
	static const sector_t sweep[] = { 100, 200, 300 };
	static const sector_t resorted[] = { 0, 92, 95 };
	struct fake_disk *fd = fake_disk_new(module("sorted"));
	struct test_bio tb[6];

	ck_assert_str_eq(running(fd), "sorted");
	fd->stopped = true;
	read8(fd, &tb[0], 300);
	read8(fd, &tb[1], 100);
	read8(fd, &tb[2], 200);
	fake_start(fd);
	assert_order(fd, sweep, 3);
	fake_complete_all(fd);

	fd->nr_events = 0;
	fd->stopped = true;
	read8(fd, &tb[0], 0);   /* Q: the sweep starts over from the lowest */
	read8(fd, &tb[1], 95);  /* R2 */
	read8(fd, &tb[2], 100); /* R1 */
	read8(fd, &tb[3], 92);  /* joins R1's front */
	ck_assert_uint_eq(fd->q->stats.merges[STAT_READ], 1);
	fake_start(fd);
	assert_order(fd, resorted, 3);
	ck_assert_uint_eq(fd->events[1].nr_sectors, 16);
	fake_complete_all(fd);

	fd->stopped = true;
	read8(fd, &tb[4], 400);
	read8(fd, &tb[5], 416);
	read8(fd, &tb[0], 408); /* closes the gap: one request of 24 sectors */
	fake_start(fd);
	ck_assert_uint_eq(fd->nr_events, 4);
	ck_assert_uint_eq(fd->events[3].sector, 400);
	ck_assert_uint_eq(fd->events[3].nr_sectors, 24);
	fake_complete_all(fd);
	fake_disk_free(fd);
}
END_TEST

/*
 * An elevator may call elv_schedule_dispatch(): the program that loads it
 * exports it.  And while draining, an elevator that idles hands all out.
 */
START_TEST(test_plugin_idles_with_elv_schedule_dispatch)
{
	struct fake_disk *fd = fake_disk_new(module("idler"));
	static const sector_t fifo[] = { 0, 100, 200 };
	uint64_t t0 = fd->clock.virtual_ns;
	struct test_bio tb[3];

	ck_assert_str_eq(running(fd), "idler");
	read8(fd, &tb[0], 0);
	ck_assert_uint_eq(fd->nr_events, 0);
	ck_assert_uint_eq(fd->q->dispatch_at, t0 + 10 * MS);
	fd->clock.virtual_ns = t0 + 10 * MS;
	blk_run_queue(fd->q);
	ck_assert_uint_eq(fd->nr_events, 1);
	fake_complete_all(fd);

	read8(fd, &tb[1], 100);
	read8(fd, &tb[2], 200);
	ck_assert_uint_eq(fd->nr_events, 1);
	do_switch(fd, "noop"); /* drains the idler: nothing is held back */
	ck_assert_str_eq(running(fd), "noop");
	blk_run_queue(fd->q); /* what the idler's wake-up would do */
	assert_order(fd, fifo, 3);
	fake_complete_all(fd);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(tb[i].ended, 1);
	fake_disk_free(fd);
}
END_TEST

START_TEST(test_other_api_version_is_refused)
{
	char theirs[64];

	snprintf(theirs, sizeof(theirs), "rqdisk speaks %d", ELV_API_VERSION);
	assert_refused("broken-version", "API version 99", theirs);
}
END_TEST

/*
 * An elevator built for the previous version (3): loaded, and a 2.6 queue
 * runs it, nr_requests written too; a multi-queue queue refuses it in one
 * line naming both versions.
 */
START_TEST(test_previous_version_runs_on_rq_refused_on_mq)
{
	char why[512] = "", theirs[64];
	const struct elevator_type *t = elevator_load(module("prev"), why, sizeof(why));
	static const sector_t fifo[] = { 300, 0, 200 };
	struct fake_disk *fd;
	struct test_bio tb[3];

	ck_assert_msg(t, "a version 3 elevator was refused: %s", why);
	ck_assert_int_eq(t->api_version, ELV_API_VERSION_RQ_ONLY);
	ck_assert_ptr_null(t->mq_ops.insert_requests);
	ck_assert_ptr_null(t->depth_updated); /* past the table it was built with */
	fd = fake_disk_new("prev");
	fd->stopped = true;
	/* a new depth reaches it without the hook it never had */
	blk_queue_lock(fd->q);
	blk_queue_update_nr_requests(fd->q, 7);
	blk_queue_unlock(fd->q);
	ck_assert_uint_eq(fd->q->elevator->nr_requests, 7);
	for (int i = 0; i < 3; i++)
		read8(fd, &tb[i], fifo[i]);
	fake_start(fd);
	assert_order(fd, fifo, 3);
	fake_complete_all(fd);
	fake_disk_free(fd);

	ck_assert_ptr_nonnull(fake_mq_refusal("prev", why, sizeof(why)));
	snprintf(theirs, sizeof(theirs), "needs version %d", ELV_API_VERSION);
	ck_assert_msg(strstr(why, "prev speaks API version 3"), "%s", why);
	ck_assert_msg(strstr(why, theirs), "%s", why);
	ck_assert_msg(!strchr(why, '\n'), "not one line: %s", why);
	/* the built-in elevators, version 4 with 2.6 hooks only, run through the adapter */
	ck_assert_ptr_null(fake_mq_refusal("deadline", why, sizeof(why)));
	/* and a switch to it is refused the same way, the queue keeping its elevator */
	{
		struct fake_mq_opts o = { .elevator = "noop", .nr_hw_queues = 1, .queue_depth = 1 };
		struct fake_mq *fm = fake_mq_new(&o);

		why[0] = '\0';
		ck_assert_int_eq(blk_mq_elevator_switch(fm->q, module("prev"), why, sizeof(why)),
				 -EINVAL);
		ck_assert_msg(strstr(why, "prev speaks API version 3"), "%s", why);
		ck_assert(!fm->q->switch_pending);
		ck_assert_str_eq(fm->q->elevator->type->elevator_name, "noop");
		fake_mq_free(fm);
	}
}
END_TEST

/*
 * The multi-queue hooks, per hardware queue: each hctx dispatches only what
 * was inserted for it, in order; writes find half the scheduler tags.
 */
START_TEST(test_mq_hooks_per_hardware_queue)
{
	struct fake_mq_opts o = { .elevator = module("mqfifo"), .nr_hw_queues = 2,
				  .queue_depth = 1, .nr_requests = 4, .nr_cpus = 2 };
	static const sector_t on0[] = { 0, 200, 100 }, on1[] = { 1100, 1000 };
	struct fake_mq *fm = fake_mq_new(&o);
	struct test_bio tb[9];
	unsigned int n0 = 0, n1 = 0;

	ck_assert_ptr_nonnull(fm->q->elevator->type->mq_ops.insert_requests);
	for (unsigned int i = 0; i < 3; i++) {
		tbio_init(&tb[i], REQ_OP_READ, on0[i], 8, buf);
		blk_mq_submit_bio(fm->q, &tb[i].bio, 0);
	}
	for (unsigned int i = 0; i < 2; i++) {
		tbio_init(&tb[3 + i], REQ_OP_READ, on1[i], 8, buf);
		blk_mq_submit_bio(fm->q, &tb[3 + i].bio, 1);
	}
	fake_mq_drain(fm);
	ck_assert_uint_eq(fm->nr_events, 5);
	for (unsigned int i = 0; i < fm->nr_events; i++) {
		const struct fake_mq_event *ev = &fm->events[i];

		if (ev->hctx == 0)
			ck_assert_uint_eq(ev->sector, on0[n0++]);
		else
			ck_assert_uint_eq(ev->sector, on1[n1++]);
	}
	for (unsigned int i = 0; i < 5; i++)
		ck_assert_int_eq(tb[i].ended, 1);

	/* the device busy: four writes wait, and hold only 2 of the 4 scheduler tags */
	fake_mq_set_busy(fm, 0, true);
	for (unsigned int i = 5; i < 9; i++) {
		tbio_init(&tb[i], REQ_OP_WRITE, 100 * i, 8, buf);
		blk_mq_submit_bio(fm->q, &tb[i].bio, 0);
	}
	ck_assert_uint_eq(blk_mq_tags_in_use(&fm->q->mq->sched_tags), 2);
	fake_mq_set_busy(fm, 0, false);
	fake_mq_drain(fm);
	for (unsigned int i = 5; i < 9; i++)
		ck_assert_int_eq(tb[i].ended, 1);
	fake_mq_free(fm);
}
END_TEST

START_TEST(test_missing_required_hook_is_refused)
{
	assert_refused("broken-nohook", "required hook dispatch_request", NULL);
}
END_TEST

START_TEST(test_missing_entry_point_is_refused)
{
	assert_refused("broken-nosymbol", "no rqdisk_elevator_init", NULL);
}
END_TEST

/*
 * A table from before a field was added at the end: loaded, with what lies
 * past its size (a broken tunable, a description) never read: the copy has
 * neither.
 */
START_TEST(test_old_table_is_read_up_to_its_size)
{
	char why[512] = "";
	const struct elevator_type *t = elevator_load(module("old-table"), why, sizeof(why));

	ck_assert_msg(t, "a table that ends before its tunables was refused: %s", why);
	ck_assert_str_eq(t->elevator_name, "broken");
	ck_assert_ptr_null(t->tunables);
	ck_assert_ptr_null(t->elevator_description);
	ck_assert_uint_eq(t->size, sizeof(struct elevator_type));
}
END_TEST

START_TEST(test_too_small_table_is_refused)
{
	assert_refused("broken-small", "too small", NULL);
}
END_TEST

START_TEST(test_tunable_half_number_half_text_is_refused)
{
	assert_refused("broken-tunable", "tunable mixed needs get and set, or show (and store)", NULL);
}
END_TEST

START_TEST(test_name_none_is_refused)
{
	assert_refused("broken-none", "the name none is taken", NULL);
}
END_TEST

START_TEST(test_taken_alias_is_refused)
{
	assert_refused("broken-alias", "the name mq-deadline is taken", NULL);
	ck_assert_str_eq(elevator_find("mq-deadline")->elevator_name, "deadline");
}
END_TEST

START_TEST(test_missing_file_is_refused)
{
	char why[256] = "";

	ck_assert_ptr_null(elevator_get(module("no-such-elevator"), why, sizeof(why)));
	ck_assert_msg(strstr(why, "no-such-elevator.so"), "%s", why);
	ck_assert_ptr_null(elevator_get("./no-such-elevator.so", why, sizeof(why)));
	ck_assert_ptr_null(elevator_find("./no-such-elevator.so"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("loader");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_example_loads);
	tcase_add_test(tc, test_second_copy_is_refused);
	tcase_add_test(tc, test_example_dispatches_last_in_first_out);
	tcase_add_test(tc, test_example_expired_request_goes_first);
	tcase_add_test(tc, test_example_tunable);
	tcase_add_test(tc, test_switch_to_a_path);
	tcase_add_test(tc, test_plugin_idles_with_elv_schedule_dispatch);
	tcase_add_test(tc, test_helpers_are_exported);
	tcase_add_test(tc, test_plugin_uses_the_sorted_tree);
	tcase_add_test(tc, test_other_api_version_is_refused);
	tcase_add_test(tc, test_previous_version_runs_on_rq_refused_on_mq);
	tcase_add_test(tc, test_mq_hooks_per_hardware_queue);
	tcase_add_test(tc, test_missing_required_hook_is_refused);
	tcase_add_test(tc, test_missing_entry_point_is_refused);
	tcase_add_test(tc, test_too_small_table_is_refused);
	tcase_add_test(tc, test_old_table_is_read_up_to_its_size);
	tcase_add_test(tc, test_tunable_half_number_half_text_is_refused);
	tcase_add_test(tc, test_name_none_is_refused);
	tcase_add_test(tc, test_taken_alias_is_refused);
	tcase_add_test(tc, test_missing_file_is_refused);
	suite_add_tcase(s, tc);
	return fake_run_suite(s);
}
