/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_filter_attrs.c - the filters' control-tree files on a virtual clock:
 * a new delay holds the requests that come after it, not those held; a bad
 * value changes nothing; the model's in_flight and held follow a request;
 * layers of one name are told apart.
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "device.h"
#include "fake_driver.h"
#include "stack_harness.h"

#define MS 1000000ull
#define T0 1000000000ull /* the fake disk's virtual clock starts here */
#define MAX_BELOW 16

/* What came out of the bottom of the stack, and when. */
struct below {
	struct request *rq[MAX_BELOW];
	uint64_t at[MAX_BELOW];
	unsigned int nr;
};

static struct below below;

static int rec_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		    size_t whylen)
{
	(void)dev;
	(void)args;
	(void)why;
	(void)whylen;
	lim->capacity = 1 << 21;
	lim->logical_block_size = 512;
	return 0;
}

/* Records the request; the test ends it. */
static void rec_submit(struct blk_dev *dev, struct request *rq)
{
	ck_assert_uint_lt(below.nr, MAX_BELOW);
	below.rq[below.nr] = rq;
	below.at[below.nr++] = dev_now(dev);
}

static const struct dev_ops rec_backend = {
	.api_version = DEV_API_VERSION,
	.name = "rec",
	.backend = true,
	.open = rec_open,
	.submit = rec_submit,
};

struct rig {
	struct fake_disk *fd;
	struct dev_stack s;
	struct test_bio tb[MAX_BELOW];
	char buf[MAX_BELOW][4096];
	unsigned int nr_bios;
};

/* The fake driver hands every request it takes to the stack, as the daemon's loop does. */
static void to_stack(struct fake_disk *fd, struct request *rq)
{
	struct rig *r = fd->priv;

	dev_submit(r->s.top, rq);
}

static void rig_init(struct rig *r, const char *const *specs, unsigned int nr)
{
	struct dev_limits lim = { 0 };
	char why[256] = "";

	memset(r, 0, sizeof(*r));
	memset(&below, 0, sizeof(below));
	r->fd = fake_disk_new("noop");
	r->fd->priv = r;
	r->fd->on_dispatch = to_stack;
	ck_assert_msg(!sh_stack_open(&r->s, r->fd->q, specs, nr, &rec_backend, NULL, &lim, why,
				      sizeof(why)),
		      "%s", why);
	blk_queue_set_pdu_size(r->fd->q, dev_stack_pdu_size(&r->s));
}

static void rig_free(struct rig *r)
{
	dev_stack_close(&r->s);
	fake_disk_free(r->fd);
}

/* A 4 KiB request at sector, now. */
static struct test_bio *submit(struct rig *r, enum req_op op, sector_t sector)
{
	struct test_bio *tb = &r->tb[r->nr_bios];

	ck_assert_uint_lt(r->nr_bios, MAX_BELOW);
	tbio_init(tb, op, sector, 8, r->buf[r->nr_bios++]);
	submit_bio(r->fd->q, &tb->bio);
	return tb;
}

/* The clock moves to at, and what is due by then runs. */
static void advance(struct rig *r, uint64_t at)
{
	r->fd->clock.virtual_ns = at;
	blk_queue_lock(r->fd->q);
	dev_stack_run_timers(&r->s, at);
	blk_queue_unlock(r->fd->q);
}

/* The backend ends the n-th request that reached it, whole and good. */
static void end_below(struct rig *r, unsigned int n)
{
	struct request *rq = below.rq[n];

	TAILQ_REMOVE(&r->fd->dispatched, rq, queuelist);
	r->fd->nr_dispatched--;
	blk_queue_lock(r->fd->q);
	dev_end(r->s.bottom, rq, 0, blk_rq_sectors(rq));
	blk_queue_unlock(r->fd->q);
}

static const struct dev_attr *attr(struct blk_dev *dev, const char *name)
{
	for (const struct dev_attr *a = dev->ops->attrs; a && a->name; a++)
		if (!strcmp(a->name, name))
			return a;
	ck_abort_msg("%s has no attr %s", dev->ops->name, name);
	return NULL;
}

/* What the control tree shows for the attr, read under the lock as it reads it. */
static const char *show(struct rig *r, struct blk_dev *dev, const char *name)
{
	static char text[64];
	int n;

	blk_queue_lock(r->fd->q);
	n = attr(dev, name)->show(dev, text, sizeof(text));
	blk_queue_unlock(r->fd->q);
	ck_assert_int_gt(n, 0);
	ck_assert_int_lt(n, (int)sizeof(text));
	return text;
}

static int store(struct rig *r, struct blk_dev *dev, const char *name, const char *val)
{
	int ret;

	blk_queue_lock(r->fd->q);
	ret = attr(dev, name)->store(dev, val);
	blk_queue_unlock(r->fd->q);
	return ret;
}

/* Below: nr requests so far, the last of them at at (0: whenever). */
static void assert_below(unsigned int nr, uint64_t at)
{
	ck_assert_uint_eq(below.nr, nr);
	if (nr && at)
		ck_assert_uint_eq(below.at[nr - 1], at);
}

START_TEST(delay_read_ms_times_the_reads_that_come_after)
{
	static const char *const specs[] = { "delay:ms=100" };
	struct rig r;
	struct blk_dev *delay;

	rig_init(&r, specs, 1);
	delay = r.s.top;
	ck_assert_str_eq(show(&r, delay, "read_ms"), "100\n");
	ck_assert_str_eq(show(&r, delay, "write_ms"), "100\n");

	ck_assert_int_eq(store(&r, delay, "read_ms", "10"), 0);
	ck_assert_str_eq(show(&r, delay, "read_ms"), "10\n");
	ck_assert_str_eq(show(&r, delay, "write_ms"), "100\n");
	submit(&r, REQ_OP_READ, 0);
	advance(&r, T0 + 9 * MS);
	assert_below(0, 0);
	advance(&r, T0 + 10 * MS);
	assert_below(1, T0 + 10 * MS);
	end_below(&r, 0);

	/* a write keeps write_ms */
	submit(&r, REQ_OP_WRITE, 1000);
	advance(&r, T0 + 109 * MS);
	assert_below(1, 0);
	advance(&r, T0 + 110 * MS);
	assert_below(2, T0 + 110 * MS);
	end_below(&r, 1);

	/* held under 50 ms; a change to 0 leaves it its time, and one after it waits its turn */
	ck_assert_int_eq(store(&r, delay, "read_ms", "50"), 0);
	submit(&r, REQ_OP_READ, 2000);
	advance(&r, T0 + 120 * MS);
	ck_assert_int_eq(store(&r, delay, "read_ms", "0"), 0);
	submit(&r, REQ_OP_READ, 3000);
	advance(&r, T0 + 159 * MS);
	assert_below(2, 0);
	advance(&r, T0 + 160 * MS);
	assert_below(4, T0 + 160 * MS);
	ck_assert_uint_eq(blk_rq_pos(below.rq[2]), 2000);
	ck_assert_uint_eq(blk_rq_pos(below.rq[3]), 3000);
	end_below(&r, 2);
	end_below(&r, 3);

	/* read_ms 0: down at the next run of the timers, at once */
	submit(&r, REQ_OP_READ, 4000);
	advance(&r, T0 + 160 * MS);
	assert_below(5, T0 + 160 * MS);
	end_below(&r, 4);
	for (unsigned int i = 0; i < r.nr_bios; i++)
		ck_assert_int_eq(r.tb[i].ended, 1);
	rig_free(&r);
}
END_TEST

START_TEST(delay_refuses_what_is_not_a_whole_number_in_range)
{
	static const char *const specs[] = { "delay:read=5,write=7" };
	static const char *const bad[] = {
		"", "-1", "3600001", " 5", "5 ", "+5", "0x10", "1e3", "5\n", "1,2",
		"18446744073709551616", "99999999999999999999999",
	};
	struct rig r;

	rig_init(&r, specs, 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(store(&r, r.s.top, "read_ms", bad[i]), -EINVAL);
		ck_assert_int_eq(store(&r, r.s.top, "write_ms", bad[i]), -EINVAL);
	}
	ck_assert_str_eq(show(&r, r.s.top, "read_ms"), "5\n");
	ck_assert_str_eq(show(&r, r.s.top, "write_ms"), "7\n");
	ck_assert_int_eq(store(&r, r.s.top, "write_ms", "3600000"), 0);
	ck_assert_int_eq(store(&r, r.s.top, "read_ms", "007"), 0);
	ck_assert_str_eq(show(&r, r.s.top, "read_ms"), "7\n");
	ck_assert_str_eq(show(&r, r.s.top, "write_ms"), "3600000\n");
	rig_free(&r);
}
END_TEST

/* in_flight while the request is below the model, held once it ended there early. */
START_TEST(model_in_flight_then_held)
{
	static const char *const specs[] = { "model:ssd:depth=2,read_us=1000" };
	struct test_bio *tb;
	struct rig r;

	rig_init(&r, specs, 1);
	ck_assert_str_eq(show(&r, r.s.top, "in_flight"), "0\n");
	ck_assert_str_eq(show(&r, r.s.top, "held"), "0\n");
	ck_assert_ptr_null(attr(r.s.top, "held")->store);
	ck_assert_ptr_null(attr(r.s.top, "in_flight")->store);
	tb = submit(&r, REQ_OP_READ, 0);
	submit(&r, REQ_OP_READ, 1000);
	assert_below(2, T0);
	ck_assert_str_eq(show(&r, r.s.top, "in_flight"), "2\n");
	ck_assert_str_eq(show(&r, r.s.top, "held"), "0\n");
	end_below(&r, 0);
	ck_assert_str_eq(show(&r, r.s.top, "in_flight"), "1\n");
	ck_assert_str_eq(show(&r, r.s.top, "held"), "1\n");
	ck_assert_int_eq(tb->ended, 0);
	advance(&r, T0 + 10 * MS);
	ck_assert_int_eq(tb->ended, 1);
	ck_assert_str_eq(show(&r, r.s.top, "in_flight"), "1\n");
	ck_assert_str_eq(show(&r, r.s.top, "held"), "0\n");
	end_below(&r, 1);
	ck_assert_str_eq(show(&r, r.s.top, "in_flight"), "0\n");
	ck_assert_str_eq(show(&r, r.s.top, "held"), "0\n");
	rig_free(&r);
}
END_TEST

/* NAME, then NAME.2 and so on from the queue down; the attrs reach their own layer. */
START_TEST(layers_of_one_name_are_numbered_from_the_queue)
{
	static const char *const specs[] = { "delay:ms=1", "model:ssd", "delay:ms=2",
					     "delay:ms=3" };
	static const char *const names[] = { "delay", "model", "delay.2", "delay.3", "rec" };
	char name[32];
	struct rig r;

	rig_init(&r, specs, 4);
	for (unsigned int i = 0; i < r.s.nr_layers; i++) {
		ck_assert_int_eq(dev_layer_name(&r.s.layers[i], name, sizeof(name)),
				 (int)strlen(names[i]));
		ck_assert_str_eq(name, names[i]);
	}
	ck_assert_int_eq(store(&r, &r.s.layers[3], "read_ms", "30"), 0);
	ck_assert_str_eq(show(&r, &r.s.layers[0], "read_ms"), "1\n");
	ck_assert_str_eq(show(&r, &r.s.layers[2], "read_ms"), "2\n");
	ck_assert_str_eq(show(&r, &r.s.layers[3], "read_ms"), "30\n");
	ck_assert_ptr_null(r.s.layers[4].ops->attrs);
	rig_free(&r);
}
END_TEST

static Suite *filter_attrs_suite(void)
{
	Suite *s = suite_create("filter_attrs");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, delay_read_ms_times_the_reads_that_come_after);
	tcase_add_test(tc, delay_refuses_what_is_not_a_whole_number_in_range);
	tcase_add_test(tc, model_in_flight_then_held);
	tcase_add_test(tc, layers_of_one_name_are_numbered_from_the_queue);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fake_run_suite(filter_attrs_suite());
}
