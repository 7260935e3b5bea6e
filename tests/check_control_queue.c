/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_control_queue.c - the control tree's queue files that tell what
 * the device is, rotational and model: they show what the stack's limits
 * say, a backend's word or a model filter's over it, not what a layer of
 * some name holds.
 */
#include <check.h>
#include <string.h>

#include "control_impl.h"
#include "device.h"
#include "fake_driver.h"

#define CAPACITY (1u << 21)

/* What the backend says of itself: it seeks or not. */
static bool says_rotational;

static int says_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		     size_t whylen)
{
	lim->logical_block_size = 512;
	lim->rotational = says_rotational;
	return 0;
}

static void says_submit(struct blk_dev *dev, struct request *rq)
{
	ck_abort_msg("the control tree's shows send no request");
}

static const struct dev_ops says_ops = {
	.api_version = DEV_API_VERSION,
	.name = "says",
	.backend = true,
	.open = says_open,
	.submit = says_submit,
};

/* What queue/NAME shows of d. */
static const char *show(struct rqdisk *d, const char *name)
{
	static char buf[512];

	for (size_t i = 0; i < ctl_nr_nodes; i++) {
		const struct ctl_node *n = &ctl_nodes[i];

		if (n->parent != CTL_QUEUE || strcmp(n->name, name))
			continue;
		ck_assert_ptr_nonnull(n->show);
		buf[0] = 0;
		ck_assert_int_gt(n->show(d, buf, sizeof(buf)), 0);
		return buf;
	}
	ck_abort_msg("no queue/%s", name);
	return NULL;
}

/* The stack of spec (NULL: none) over the backend, as the daemon's d->stack. */
static void open_stack(struct dev_stack *s, const char *spec, bool rotational)
{
	struct dev_limits lim = { .capacity = CAPACITY };
	char why[256] = "";

	says_rotational = rotational;
	memset(s, 0, sizeof(*s));
	ck_assert_msg(!dev_stack_open(s, &spec, spec ? 1 : 0, &says_ops, NULL, &lim, why,
				      sizeof(why)),
		      "%s", why);
}

/*
 * queue/rotational follows the backend's word with no model above it, and
 * a model's over it either way; queue/model names the model or none.
 */
START_TEST(rotational_and_model_come_from_the_limits)
{
	struct rqdisk d = { 0 };
	struct dev_stack s;

	ck_assert_str_eq(show(&d, "rotational"), "0\n");
	ck_assert_str_eq(show(&d, "model"), "none\n");
	d.stack = &s;

	open_stack(&s, NULL, true);
	ck_assert_str_eq(show(&d, "rotational"), "1\n");
	ck_assert_str_eq(show(&d, "model"), "none\n");
	dev_stack_close(&s);

	open_stack(&s, NULL, false);
	ck_assert_str_eq(show(&d, "rotational"), "0\n");
	dev_stack_close(&s);

	open_stack(&s, "model:ssd", true);
	ck_assert_str_eq(show(&d, "rotational"), "0\n");
	ck_assert_msg(!strncmp(show(&d, "model"), "ssd ", 4), "queue/model: %s", show(&d, "model"));
	dev_stack_close(&s);

	open_stack(&s, "model:hdd:rpm=5400", false);
	ck_assert_str_eq(show(&d, "rotational"), "1\n");
	ck_assert_msg(!strncmp(show(&d, "model"), "hdd ", 4) && strstr(show(&d, "model"), "rpm=5400"),
		      "queue/model: %s", show(&d, "model"));
	d.null_device = true;
	ck_assert_msg(!strncmp(show(&d, "model"), "null hdd ", 9), "queue/model: %s",
		      show(&d, "model"));
	dev_stack_close(&s);
}
END_TEST

static Suite *control_queue_suite(void)
{
	Suite *s = suite_create("control_queue");
	TCase *tc = tcase_create("limits");

	tcase_add_test(tc, rotational_and_model_come_from_the_limits);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fake_run_suite(control_queue_suite());
}
