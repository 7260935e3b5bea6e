/* SPDX-License-Identifier: BSD-3-Clause */
/* check_device.c - the device stack on a virtual clock: model and delay filters over a backend. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "device.h"
#include "model.h"
#include "stack_harness.h"

#define MS 1000000ull
#define START_NS SH_START_NS
#define CAPACITY (2ull * 1024 * 1024) /* 1 GiB in sectors */
#define MAX_BIOS 32

/* A queue with noop over the stack of specs (top first) over backend. */
static void setup(struct stack_harness *h, const char *const *specs, unsigned int nr,
		  const struct dev_ops *backend)
{
	sh_setup(h, specs, nr, backend, CAPACITY, MAX_BIOS);
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

static struct disk_model *model(const char *spec)
{
	struct disk_model *m;
	char why[256] = "";

	ck_assert_msg(disk_model_new(spec, CAPACITY, &m, why, sizeof(why)) == 0, "%s", why);
	return m;
}

static uint64_t serve(struct disk_model *m, sector_t sector, unsigned int n, uint64_t now)
{
	struct model_io io = { .op = REQ_OP_READ, .sector = sector, .nr_sectors = n };

	return disk_model_service(m, &io, now);
}

/*
 * The queue seeks as the stack says (blk_queue_nonrot, what elevators ask):
 * a rotating model's, flash's, or the sim backend's word alone.
 */
START_TEST(queue_rotates_as_the_stack_says)
{
	const char *specs[] = { "model:hdd", "model:ssd", "delay:ms=1" };
	const bool nonrot[] = { false, true, true };
	struct stack_harness h;

	for (unsigned int s = 0; s < 3; s++) {
		setup(&h, &specs[s], 1, &dev_sim_ops);
		ck_assert_msg(blk_queue_nonrot(h.q) == nonrot[s], "%s: nonrot %d", specs[s],
			      blk_queue_nonrot(h.q));
		ck_assert_int_eq(blk_queue_nonrot(h.q), !h.stack.limits.rotational);
		sh_teardown(&h);
	}
}
END_TEST

/* One at a time: each goes down when the one before ends, and ends at the model's time. */
START_TEST(model_ends_at_the_models_time)
{
	const char *specs[][1] = { { "model:hdd" }, { "model:ssd:depth=1" } };
	struct stack_harness h;

	for (unsigned int s = 0; s < 2; s++) {
		struct disk_model *m = model(specs[s][0] + strlen("model:"));
		uint64_t now = START_NS;

		setup(&h, specs[s], 1, &dev_sim_ops);
		issue_reads(&h, 8);
		sh_run(&h);
		for (unsigned int i = 0; i < 8; i++) {
			now = serve(m, (sector_t)i * 100000, 8, now);
			ck_assert_msg(h.ended_at[i] == now, "%s: read %u ended at %llu, not %llu",
				      specs[s][0], i, (unsigned long long)h.ended_at[i],
				      (unsigned long long)now);
			ck_assert_int_eq(h.error[i], 0);
		}
		ck_assert_uint_eq(h.max_below, 1);
		ck_assert_uint_eq(dev_sim_stats(h.stack.bottom)->requests, 8);
		disk_model_free(m);
		sh_teardown(&h);
	}
}
END_TEST

/* Many at once up to the depth, never more; each no earlier than the model's time. */
START_TEST(model_keeps_its_depth_below)
{
	const char *spec = "model:ssd:channels=2,depth=4";
	struct stack_harness h;

	setup(&h, &spec, 1, &dev_sim_ops);
	issue_reads(&h, 16);
	ck_assert_uint_eq(h.max_below, 4); /* the first four went down at once */
	sh_run(&h);
	ck_assert_uint_eq(h.max_below, 4);
	for (unsigned int i = 1; i < 16; i++)
		ck_assert_uint_ge(h.ended_at[i], h.ended_at[i - 1]);
	ck_assert_uint_gt(h.ended_at[15], h.ended_at[0]);
	ck_assert_uint_eq(dev_sim_stats(h.stack.bottom)->requests, 16);
	sh_teardown(&h);
}
END_TEST

/*
 * A model of depth 1 over a 100 ms delay holds its one slot through each
 * delay: the delays add up.  The delay over the model delays all eight at
 * once; then the model serves them one by one.
 */
START_TEST(filter_order_matters)
{
	const char *model_delay[] = { "model:ssd:depth=1", "delay:ms=100" };
	const char *delay_model[] = { "delay:ms=100", "model:ssd:depth=1" };
	struct disk_model *m = model("ssd:depth=1");
	struct stack_harness h;
	uint64_t now = START_NS;

	setup(&h, model_delay, 2, &dev_sim_ops);
	issue_reads(&h, 8);
	sh_run(&h);
	for (unsigned int i = 0; i < 8; i++) {
		uint64_t at = serve(m, (sector_t)i * 100000, 8, now);

		now = at > now + 100 * MS ? at : now + 100 * MS;
		ck_assert_uint_eq(h.ended_at[i], now);
	}
	ck_assert_uint_eq(h.ended_at[7], START_NS + 800 * MS); /* the service is under 100 ms */
	ck_assert_uint_eq(h.max_below, 1);
	sh_teardown(&h);
	disk_model_free(m);

	m = model("ssd:depth=1");
	now = START_NS + 100 * MS;
	setup(&h, delay_model, 2, &dev_sim_ops);
	issue_reads(&h, 8);
	ck_assert_uint_eq(h.max_below, 8); /* all held in the delay */
	sh_run(&h);
	for (unsigned int i = 0; i < 8; i++) {
		now = serve(m, (sector_t)i * 100000, 8, now);
		ck_assert_uint_eq(h.ended_at[i], now);
	}
	ck_assert_uint_lt(h.ended_at[7], START_NS + 110 * MS); /* not 800 */
	sh_teardown(&h);
	disk_model_free(m);
}
END_TEST

/* before, every filter's name from the registry joined by ", ", then after. */
static const char *every_filter(const char *before, const char *after)
{
	static char text[256];
	size_t used = (size_t)snprintf(text, sizeof(text), "%s", before);

	for (const char *const *n = dev_filter_names(); *n && used < sizeof(text); n++)
		used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%s",
					 n == dev_filter_names() ? "" : ", ", *n);
	if (used < sizeof(text))
		snprintf(text + used, sizeof(text) - used, "%s", after);
	return text;
}

START_TEST(bad_filter_specs_say_why)
{
	char why[256] = "";

	sh_assert_refused("delay:x=1", "delay: no key 'x'");
	sh_assert_refused("delay:ms=abc",
		       "delay: ms must be a whole number from 0 to 3600000, not 'abc'");
	sh_assert_refused("delay:ms=3600001", "delay: ms must be a whole number");
	sh_assert_refused("delay:read=-1", "delay: read must be a whole number");
	sh_assert_refused("delay:ms", "delay: ms must be a whole number");
	sh_assert_refused("delay", "delay: give ms=N, or read=N and write=N");
	sh_assert_refused("delay:", "delay: give ms=N");
	sh_assert_refused("nosuch", every_filter("no filter 'nosuch' (there are: ", ")"));
	sh_assert_refused("nosuch:ms=1", every_filter("no filter 'nosuch' (there are: ", ")"));
	sh_assert_refused("model:tape", "model: 'tape' is not none, hdd or ssd");
	sh_assert_refused("model:none", "'none' is no model");
	ck_assert_int_eq(dev_check_filter("delay:ms=0", why, sizeof(why)), 0);
	ck_assert_int_eq(dev_check_filter("delay:read=1,write=2", why, sizeof(why)), 0);
	ck_assert_int_eq(dev_check_filter("model:hdd:rpm=5400", why, sizeof(why)), 0);
}
END_TEST

/* A backend that ends the first half of each request, then fails the rest with EIO. */
struct halves {
	TAILQ_HEAD(, halves_rq) fifo;
	unsigned int taken;
	unsigned int sectors; /* of the last request taken */
};

/* What the second half ends with: -EIO, or 0 for a request that ends whole in two pieces. */
static int halves_second_error = -EIO;

struct halves_rq {
	TAILQ_ENTRY(halves_rq) link;
	struct request *rq;
};

static int halves_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		       size_t whylen)
{
	struct halves *hv = calloc(1, sizeof(*hv));

	ck_assert_ptr_nonnull(hv);
	TAILQ_INIT(&hv->fifo);
	lim->logical_block_size = SECTOR_SIZE;
	dev->priv = hv;
	return 0;
}

static void halves_close(struct blk_dev *dev)
{
	free(dev->priv);
}

static void halves_submit(struct blk_dev *dev, struct request *rq)
{
	struct halves *hv = dev->priv;
	struct halves_rq *p = dev_rq_pdu(dev, rq);

	hv->taken++;
	hv->sectors = blk_rq_sectors(rq);
	p->rq = rq;
	TAILQ_INSERT_TAIL(&hv->fifo, p, link);
	dev_set_timer(dev, dev_now(dev));
}

static void halves_timer(struct blk_dev *dev, uint64_t now)
{
	struct halves *hv = dev->priv;
	struct halves_rq *p;

	while ((p = TAILQ_FIRST(&hv->fifo))) {
		struct request *rq = p->rq;
		unsigned int n = blk_rq_sectors(rq);

		TAILQ_REMOVE(&hv->fifo, p, link);
		dev_end(dev, rq, 0, n / 2);
		dev_end(dev, rq, halves_second_error, n - n / 2);
	}
}

static const struct dev_ops halves_ops = {
	.api_version = DEV_API_VERSION,
	.name = "halves",
	.backend = true,
	.rq_pdu_size = sizeof(struct halves_rq),
	.open = halves_open,
	.close = halves_close,
	.submit = halves_submit,
	.timer = halves_timer,
};

/*
 * Three bios of 8 sectors make one request of 24; the backend ends 12 good,
 * then fails 12.  Through the model, the queue sees the first bio done, the
 * second (4 good, 4 not) and the third failed, all at the model's time.
 */
START_TEST(error_after_a_good_prefix_through_the_model)
{
	const char *spec = "model:hdd";
	struct disk_model *m = model("hdd");
	struct stack_harness h;
	uint64_t at;

	setup(&h, &spec, 1, &halves_ops);
	blk_queue_lock(h.q);
	blk_plug_device(h.q);
	for (unsigned int i = 0; i < 3; i++)
		sh_queue_bio(&h, REQ_OP_READ, 0, 800 + i * 8, 8, 0);
	__blk_unplug(h.q);
	blk_queue_unlock(h.q);
	sh_run(&h);
	at = serve(m, 800, 24, START_NS);
	ck_assert_uint_eq(((struct halves *)h.stack.bottom->priv)->taken, 1);
	ck_assert_uint_eq(((struct halves *)h.stack.bottom->priv)->sectors, 24);
	ck_assert_int_eq(h.error[0], 0);
	ck_assert_int_eq(h.error[1], -EIO);
	ck_assert_int_eq(h.error[2], -EIO);
	for (unsigned int i = 0; i < 3; i++)
		ck_assert_uint_eq(h.ended_at[i], at);
	ck_assert_uint_eq(h.bio[1].bi_done, 8 << SECTOR_SHIFT);
	sh_teardown(&h);
	disk_model_free(m);
}
END_TEST

/*
 * A request that ends below in two good pieces, under the model: the
 * model holds both until its time, and the delay between them must count
 * the request gone at the second piece, not when the queue has seen it
 * all.  Two requests at a time, eight in turn: a delay that lost count
 * would take no more after the first two.
 */
START_TEST(delay_counts_a_request_ended_in_pieces)
{
	const char *specs[] = { "model:ssd:depth=8", "delay:ms=1" };
	struct stack_harness h;

	halves_second_error = 0;
	setup(&h, specs, 2, &halves_ops);
	h.q->limits.nr_requests = 2;
	issue_reads(&h, 8);
	sh_run(&h);
	for (unsigned int i = 0; i < 8; i++)
		ck_assert_int_eq(h.error[i], 0);
	ck_assert_uint_eq(((struct halves *)h.stack.bottom->priv)->taken, 8);
	ck_assert_uint_le(h.max_below, 2);
	sh_teardown(&h);
	halves_second_error = -EIO;
}
END_TEST

/*
 * A ends below early and waits for its model time; the host wakes late,
 * and B's end reaches the model before A's timer has run.  B is due, but
 * A's time comes first: A still ends first.
 */
START_TEST(model_ends_in_its_order_when_the_host_wakes_late)
{
	const char *spec = "model:ssd:read_us=1000,depth=4";
	struct stack_harness h;
	uint64_t at_a;

	setup(&h, &spec, 1, &sh_hand_ops);
	issue_reads(&h, 2);
	ck_assert_uint_eq(sh_hand.nr, 2);
	blk_queue_lock(h.q);
	dev_end(h.stack.bottom, sh_hand.below[0], 0, 8);
	at_a = dev_stack_next_timer(&h.stack);
	ck_assert_uint_gt(at_a, START_NS);
	h.clock.virtual_ns = at_a + 50 * MS;
	dev_end(h.stack.bottom, sh_hand.below[1], 0, 8);
	dev_stack_run_timers(&h.stack, h.clock.virtual_ns);
	blk_queue_unlock(h.q);
	ck_assert_uint_eq(h.order[0], 1);
	ck_assert_uint_eq(h.order[1], 2);
	sh_teardown(&h);
}
END_TEST

/*
 * The delay is over but the layer below cannot take the request, and
 * nothing is below to end and make room: the delay looks again later.
 */
START_TEST(delay_retries_when_below_refuses_with_nothing_there)
{
	const char *spec = "delay:ms=1";
	struct stack_harness h;
	uint64_t at;

	setup(&h, &spec, 1, &sh_hand_ops);
	sh_hand.refuse = true;
	issue_reads(&h, 1);
	at = dev_stack_next_timer(&h.stack);
	ck_assert_uint_eq(at, START_NS + MS);
	h.clock.virtual_ns = at;
	blk_queue_lock(h.q);
	dev_stack_run_timers(&h.stack, at);
	blk_queue_unlock(h.q);
	ck_assert_uint_eq(sh_hand.nr, 0);
	sh_hand.refuse = false;
	at = dev_stack_next_timer(&h.stack);
	ck_assert_uint_gt(at, h.clock.virtual_ns);
	h.clock.virtual_ns = at;
	blk_queue_lock(h.q);
	dev_stack_run_timers(&h.stack, at);
	ck_assert_uint_eq(sh_hand.nr, 1);
	dev_end(h.stack.bottom, sh_hand.below[0], 0, 8);
	blk_queue_unlock(h.q);
	ck_assert_uint_eq(h.nr_ended, 1);
	sh_teardown(&h);
}
END_TEST

/* device/stack's text cut to any length: always NUL-ended, the full length returned. */
START_TEST(stack_described_into_any_buffer)
{
	const char *specs[] = { "delay:ms=5", "model:ssd" };
	char full[512], cut[512];
	struct stack_harness h;
	int n;

	setup(&h, specs, 2, &dev_sim_ops);
	n = dev_stack_describe(&h.stack, full, sizeof(full));
	ck_assert_int_eq(n, (int)strlen(full));
	ck_assert_msg(!strncmp(full, "delay:read=5 write=5 -> model:ssd ", 34), "%s", full);
	for (size_t len = 1; len <= (size_t)n; len++) {
		memset(cut, 'x', sizeof(cut));
		ck_assert_int_eq(dev_stack_describe(&h.stack, cut, len), n);
		ck_assert_uint_eq(strlen(cut), len - 1);
		ck_assert(!strncmp(cut, full, len - 1));
	}
	sh_teardown(&h);
}
END_TEST

/* A backend that ends the request it took n-th at timed_end[n]. */
static uint64_t timed_end[MAX_BIOS];

struct timed {
	struct request *rq[MAX_BIOS];
	uint64_t at[MAX_BIOS];
	unsigned int taken;
};

static int timed_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		      size_t whylen)
{
	dev->priv = calloc(1, sizeof(struct timed));
	ck_assert_ptr_nonnull(dev->priv);
	lim->logical_block_size = SECTOR_SIZE;
	return 0;
}

static void timed_close(struct blk_dev *dev)
{
	free(dev->priv);
}

static void timed_next(struct blk_dev *dev)
{
	struct timed *td = dev->priv;
	uint64_t next = 0;

	for (unsigned int i = 0; i < td->taken; i++)
		if (td->rq[i] && (!next || td->at[i] < next))
			next = td->at[i];
	dev_set_timer(dev, next);
}

static void timed_submit(struct blk_dev *dev, struct request *rq)
{
	struct timed *td = dev->priv;

	ck_assert_uint_lt(td->taken, MAX_BIOS);
	td->rq[td->taken] = rq;
	td->at[td->taken] = timed_end[td->taken];
	td->taken++;
	timed_next(dev);
}

static void timed_timer(struct blk_dev *dev, uint64_t now)
{
	struct timed *td = dev->priv;

	for (unsigned int i = 0; i < td->taken; i++) {
		struct request *rq = td->rq[i];

		if (rq && td->at[i] <= now) {
			td->rq[i] = NULL;
			dev_end(dev, rq, 0, blk_rq_sectors(rq));
		}
	}
	timed_next(dev);
}

static const struct dev_ops timed_ops = {
	.api_version = DEV_API_VERSION,
	.name = "timed",
	.backend = true,
	.open = timed_open,
	.close = timed_close,
	.submit = timed_submit,
	.timer = timed_timer,
};

/*
 * Timers run bottom up: at one time, what ends below reaches the model
 * before the model's own timer passes up what it held, so that the model
 * passes them up in its own time order.  B's model time is before A's, but
 * B ends below only at A's time, while A waits in the model for it.
 */
START_TEST(timers_run_bottom_up)
{
	const char *spec = "model:ssd:channels=2,depth=2";
	struct disk_model *m = model("ssd:channels=2,depth=2");
	uint64_t at_a = serve(m, 0, 64, START_NS), at_b = serve(m, 100000, 8, START_NS);
	struct stack_harness h;
	unsigned int a, b;

	ck_assert_uint_lt(at_b, at_a); /* the model serves the small one sooner */
	timed_end[0] = START_NS; /* A: at once, then held by the model */
	timed_end[1] = at_a;     /* B: late, when A's time comes */
	setup(&h, &spec, 1, &timed_ops);
	blk_queue_lock(h.q);
	blk_plug_device(h.q);
	a = sh_queue_bio(&h, REQ_OP_READ, 0, 0, 64, 0);
	b = sh_queue_bio(&h, REQ_OP_READ, 0, 100000, 8, 0);
	__blk_unplug(h.q);
	blk_queue_unlock(h.q);
	sh_run(&h);
	ck_assert_uint_eq(h.ended_at[a], at_a);
	ck_assert_uint_eq(h.ended_at[b], at_a);
	ck_assert_msg(h.order[b] < h.order[a], "A (model time %llu) ended before B (%llu)",
		      (unsigned long long)at_a, (unsigned long long)at_b);
	sh_teardown(&h);
	disk_model_free(m);
}
END_TEST

/* A backend that takes the ops its limits say, ending each at once, and counts them by op. */
static struct dev_limits picky_says;
static unsigned int picky_taken[REQ_OP_NR];

static int picky_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		      size_t whylen)
{
	lim->logical_block_size = picky_says.logical_block_size ? picky_says.logical_block_size
								: SECTOR_SIZE;
	lim->discard = picky_says.discard;
	lim->write_zeroes = picky_says.write_zeroes;
	lim->physical_block_size = picky_says.physical_block_size;
	lim->io_opt = picky_says.io_opt;
	lim->max_sectors = picky_says.max_sectors;
	memset(picky_taken, 0, sizeof(picky_taken));
	return 0;
}

static struct request *picky_held[MAX_BIOS];
static unsigned int picky_nr_held;

static void picky_submit(struct blk_dev *dev, struct request *rq)
{
	picky_taken[rq->cmd_op]++;
	ck_assert_uint_lt(picky_nr_held, MAX_BIOS);
	picky_held[picky_nr_held++] = rq;
	dev_set_timer(dev, dev_now(dev)); /* never ended inside submit */
}

static void picky_timer(struct blk_dev *dev, uint64_t now)
{
	while (picky_nr_held) {
		struct request *rq = picky_held[--picky_nr_held];

		dev_end(dev, rq, 0, blk_rq_sectors(rq));
	}
}

static const struct dev_ops picky_ops = {
	.api_version = DEV_API_VERSION,
	.name = "picky",
	.backend = true,
	.open = picky_open,
	.submit = picky_submit,
	.timer = picky_timer,
};

static void discard_and_zeroes(struct stack_harness *h, unsigned int *d, unsigned int *z)
{
	blk_queue_lock(h->q);
	*d = sh_queue_bio(h, REQ_OP_DISCARD, 0, 0, 64, 0);
	*z = sh_queue_bio(h, REQ_OP_WRITE_ZEROES, 0, 1000, 64, 0);
	blk_queue_unlock(h->q);
	blk_run_queue(h->q);
	sh_run(h);
}

/*
 * The stack's limits are the queue's: a backend that takes no discard (or
 * no write-zeroes) gives a limit of 0, and the queue ends such a bio with
 * EOPNOTSUPP before any layer sees it; what it takes goes down.
 */
START_TEST(ops_the_stack_does_not_take_are_refused_by_the_queue)
{
	const char *spec = "delay:read=0";
	struct stack_harness h;
	unsigned int d, z;

	picky_says = (struct dev_limits){ .write_zeroes = true };
	setup(&h, &spec, 1, &picky_ops);
	ck_assert_uint_eq(h.q->limits.max_discard_sectors, 0);
	ck_assert_uint_ne(h.q->limits.max_write_zeroes_sectors, 0);
	discard_and_zeroes(&h, &d, &z);
	ck_assert_int_eq(h.error[d], -EOPNOTSUPP);
	ck_assert_int_eq(h.error[z], 0);
	ck_assert_uint_eq(picky_taken[REQ_OP_DISCARD], 0);
	ck_assert_uint_eq(picky_taken[REQ_OP_WRITE_ZEROES], 1);
	sh_teardown(&h);

	picky_says = (struct dev_limits){ .discard = true };
	setup(&h, NULL, 0, &picky_ops);
	ck_assert_uint_eq(h.q->limits.max_write_zeroes_sectors, 0);
	discard_and_zeroes(&h, &d, &z);
	ck_assert_int_eq(h.error[d], 0);
	ck_assert_int_eq(h.error[z], -EOPNOTSUPP);
	ck_assert_uint_eq(picky_taken[REQ_OP_DISCARD], 1);
	ck_assert_uint_eq(picky_taken[REQ_OP_WRITE_ZEROES], 0);
	sh_teardown(&h);
}
END_TEST

/*
 * A backend's block sizes and largest I/O become the queue's limits: the
 * logical block size raised, the physical one and io_opt as said, and a
 * read of 1 MiB split into requests of at most its max_sectors.  A limit
 * the queue cannot keep fails the stack's open with the reason.
 */
START_TEST(block_sizes_and_max_sectors_come_from_the_stack)
{
	struct stack_harness h;
	struct dev_stack s = { 0 };
	struct dev_limits lim = { .capacity = CAPACITY };
	char why[256] = "";
	unsigned int r;

	picky_says = (struct dev_limits){ .logical_block_size = 4096,
					  .physical_block_size = 65536,
					  .io_opt = 65536,
					  .max_sectors = 128 };
	setup(&h, NULL, 0, &picky_ops);
	ck_assert_uint_eq(h.q->limits.logical_block_size, 4096);
	ck_assert_uint_eq(queue_physical_block_size(&h.q->limits), 65536);
	ck_assert_uint_eq(h.q->limits.io_opt, 65536);
	ck_assert_uint_eq(h.q->limits.max_hw_sectors, 128);
	ck_assert_uint_eq(h.q->limits.max_sectors, 128);
	blk_queue_lock(h.q);
	r = sh_queue_bio(&h, REQ_OP_READ, 0, 0, 2048, 0);
	blk_queue_unlock(h.q);
	blk_run_queue(h.q);
	sh_run(&h);
	ck_assert_int_eq(h.error[r], 0);
	ck_assert_uint_eq(picky_taken[REQ_OP_READ], 2048 / 128);
	sh_teardown(&h);

	picky_says = (struct dev_limits){ .max_sectors = 4 }; /* below a page */
	h.q = blk_init_queue(NULL, NULL, NULL);
	ck_assert_int_eq(sh_stack_open(&s, h.q, NULL, 0, &picky_ops, NULL, &lim, why,
					sizeof(why)),
			 -EINVAL);
	ck_assert_msg(strstr(why, "max sectors"), "why: %s", why);
	ck_assert_uint_eq(h.q->limits.max_sectors, BLK_DEF_MAX_SECTORS);
	blk_cleanup_queue(h.q);
}
END_TEST

/*
 * The stack runs under any queue its host answers for: here a host with no
 * request_queue at all, whose clock, depth and ends are counters.  What the
 * layers ask of the queue above reaches it through dev_queue_ops alone.
 */
struct bare_queue {
	uint64_t now;
	unsigned int depth;
	unsigned int nr_ends, sectors_ended;
	uint64_t last_end_at;
	bool tracing;
	char trace[128];
};

static uint64_t bare_now(void *queue)
{
	return ((struct bare_queue *)queue)->now;
}

static unsigned int bare_depth(void *queue)
{
	return ((struct bare_queue *)queue)->depth;
}

static unsigned int bare_max_segments(void *queue)
{
	return 1;
}

static unsigned int bare_max_hw_sectors(void *queue)
{
	return 8;
}

static int bare_map_sg(void *queue, struct request *rq, struct iovec *sg)
{
	ck_abort_msg("no layer of a sim stack maps memory");
	return 0;
}

static void bare_kick(void *queue)
{
}

static void bare_end_request(void *queue, struct request *rq, int error,
			     unsigned int nr_sectors)
{
	struct bare_queue *bq = queue;

	ck_assert_int_eq(error, 0);
	bq->nr_ends++;
	bq->sectors_ended += nr_sectors;
	bq->last_end_at = bq->now;
}

static struct request *bare_alloc_request(void *queue, enum req_op op, unsigned int flags,
					  sector_t sector, void *buf, unsigned int len)
{
	return NULL;
}

static bool bare_tracing(void *queue)
{
	return ((struct bare_queue *)queue)->tracing;
}

static void bare_trace_msg(void *queue, const char *text)
{
	struct bare_queue *bq = queue;

	snprintf(bq->trace, sizeof(bq->trace), "%s", text);
}

static const struct dev_queue_ops bare_queue_ops = {
	.now = bare_now,
	.depth = bare_depth,
	.max_segments = bare_max_segments,
	.max_hw_sectors = bare_max_hw_sectors,
	.map_sg = bare_map_sg,
	.kick = bare_kick,
	.end_request = bare_end_request,
	.alloc_request = bare_alloc_request,
	.tracing = bare_tracing,
	.trace_msg = bare_trace_msg,
};

START_TEST(stack_runs_under_a_host_with_no_request_queue)
{
	struct bare_queue bq = { .now = 1000, .depth = 2 };
	struct dev_stack s = { .queue_ops = &bare_queue_ops, .queue = &bq };
	struct dev_limits lim = { .capacity = 1 << 20 };
	const char *spec = "delay:ms=5";
	struct request *rq[3];
	char why[256] = "";
	size_t size;

	ck_assert_msg(!dev_stack_open(&s, &spec, 1, &dev_sim_ops, NULL, &lim, why, sizeof(why)),
		      "%s", why);
	ck_assert(dev_has_queue(s.top));
	ck_assert_uint_eq(dev_now(s.bottom), 1000);
	ck_assert_uint_eq(dev_max_hw_sectors(s.top), 8);
	size = sizeof(struct request) + dev_stack_pdu_size(&s);
	for (unsigned int i = 0; i < 3; i++) {
		rq[i] = calloc(1, size);
		ck_assert_ptr_nonnull(rq[i]);
		rq[i]->cmd_op = REQ_OP_READ;
		rq[i]->sector = rq[i]->hard_sector = 8 * i;
		rq[i]->nr_sectors = rq[i]->hard_nr_sectors = 8;
	}
	/* the queue's depth, 2, is what the delay filter holds at most */
	ck_assert(dev_can_take(s.top));
	dev_submit(s.top, rq[0]);
	ck_assert(dev_can_take(s.top));
	dev_submit(s.top, rq[1]);
	ck_assert(!dev_can_take(s.top));
	/* held 5 ms on the host's clock, then ended to the host */
	ck_assert_uint_eq(dev_stack_next_timer(&s), 1000 + 5000000);
	bq.now = 1000 + 5000000;
	while (dev_stack_next_timer(&s) && dev_stack_next_timer(&s) <= bq.now)
		dev_stack_run_timers(&s, bq.now);
	ck_assert_uint_eq(bq.nr_ends, 2);
	ck_assert_uint_eq(bq.sectors_ended, 16);
	ck_assert_uint_eq(bq.last_end_at, 1000 + 5000000);
	ck_assert_uint_eq(s.ended, 2);
	ck_assert(dev_can_take(s.top));
	/* a note goes to the host's trace only while it traces */
	dev_trace_msg(s.top, "note %d", 1);
	ck_assert_str_eq(bq.trace, "");
	bq.tracing = true;
	dev_trace_msg(s.top, "note %d", 2);
	ck_assert_str_eq(bq.trace, "delay: note 2");
	ck_assert_int_eq(dev_stack_close(&s), 0);
	for (unsigned int i = 0; i < 3; i++)
		free(rq[i]);
}
END_TEST

/*
 * A backend that says of itself what the test puts in says_lim, beyond a
 * disk of 512-byte blocks: what a layer above learns of it is that alone.
 * The test copies its ops to give it a name.
 */
static struct dev_limits says_lim;

static int says_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		     size_t whylen)
{
	lim->logical_block_size = 512;
	lim->no_data = says_lim.no_data;
	return 0;
}

static void says_submit(struct blk_dev *dev, struct request *rq)
{
	ck_abort_msg("a stack only checked takes no request");
}

static const struct dev_ops says_ops = {
	.api_version = DEV_API_VERSION,
	.name = "says",
	.backend = true,
	.open = says_open,
	.submit = says_submit,
};

/* spec over backend, no queue above (checked, as rqdisk-replay checks --filter): its open's return. */
static int check_over(const struct dev_ops *backend, const char *spec, char *why, size_t whylen)
{
	struct dev_stack s = { 0 };
	struct dev_limits lim = { .capacity = CAPACITY };
	int ret = dev_stack_open(&s, &spec, 1, backend, NULL, &lim, why, whylen);

	if (!ret)
		dev_stack_close(&s);
	return ret;
}

/*
 * What needs the requests' data (a cache, a log, corruption, dropped
 * writes) is refused over a device whose limits say it has none, and
 * taken over one that moves data, whatever the backend is called: a
 * backend named "sim" that moves data is a device like any other.
 */
START_TEST(no_data_is_a_limit_not_a_name)
{
	static const char *const needs_data[] = {
		"write-cache",
		"log-writes:file=/nonexistent/check_device.log",
		"fault:up=1,down=1,drop_writes=1",
		"fault:corrupt_on=read,corrupt_value=7,corrupt_bio_byte=1",
	};
	static const char *const wants[] = {
		"write-cache: the device below moves no data",
		"log-writes: the device below has no data to log",
		"which the device below has not",
		"which the device below has not",
	};
	struct dev_ops named_sim = says_ops, named_other = says_ops;
	char why[256];

	named_sim.name = "sim";
	named_other.name = "mem";
	for (size_t i = 0; i < sizeof(needs_data) / sizeof(needs_data[0]); i++) {
		says_lim = (struct dev_limits){ .no_data = false };
		why[0] = 0;
		ck_assert_msg(!check_over(&named_sim, needs_data[i], why, sizeof(why)),
			      "%s over a \"sim\" that moves data: %s", needs_data[i], why);
		says_lim = (struct dev_limits){ .no_data = true };
		why[0] = 0;
		ck_assert_int_eq(check_over(&named_other, needs_data[i], why, sizeof(why)), -EINVAL);
		ck_assert_msg(strstr(why, wants[i]), "%s: '%s' lacks '%s'", needs_data[i], why,
			      wants[i]);
		ck_assert_ptr_null(strchr(why, '\n'));
	}
	/* the replay's backend says it: refused there as before */
	ck_assert_int_eq(check_over(&dev_sim_ops, needs_data[0], why, sizeof(why)), -EINVAL);
	/* and what needs no data is taken over it */
	ck_assert_msg(!check_over(&named_other, "fault:error=read,prob=5", why, sizeof(why)), "%s",
		      why);
	ck_assert_msg(!check_over(&named_other, "delay:ms=1", why, sizeof(why)), "%s", why);
}
END_TEST

/*
 * The loader's rule for a table built elsewhere (dev_ops_copy): another
 * version or a size that ends before the required ops is refused in one
 * line naming the table; an older table is copied up to its size, and
 * what lies past it (fields added since) reads as absent.
 */
START_TEST(ops_tables_are_copied_up_to_their_size)
{
	const struct dev_ops *delay = dev_find_filter("delay", 5);
	struct dev_ops ops = *delay, out;
	char why[256] = "";

	ck_assert_int_eq(dev_ops_copy(&out, &ops, "the x module", why, sizeof(why)), 0);
	ck_assert_ptr_eq(out.keys, delay->keys);
	ck_assert_str_eq(out.description, delay->description);

	/* built before description and keys were added: they are not its */
	ops.size = (unsigned int)offsetof(struct dev_ops, description);
	memset(&out, 0x5a, sizeof(out));
	ck_assert_int_eq(dev_ops_copy(&out, &ops, "the x module", why, sizeof(why)), 0);
	ck_assert_ptr_null(out.description);
	ck_assert_ptr_null(out.keys);
	ck_assert_ptr_eq(out.submit, delay->submit);
	ck_assert_str_eq(out.ctl_dir ? out.ctl_dir : "", "");
	ck_assert_uint_eq(out.size, sizeof(struct dev_ops));

	ops.size = (unsigned int)offsetof(struct dev_ops, submit); /* no submit: refused */
	ck_assert_int_eq(dev_ops_copy(&out, &ops, "the x module", why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, "the x module: its ops table is too small"), "%s", why);
	ops.size = 0; /* a table from before DEV_REGISTER filled the size */
	ck_assert_int_eq(dev_ops_copy(&out, &ops, "the x module", why, sizeof(why)), -EINVAL);

	ops = *delay;
	ops.api_version = DEV_API_VERSION + 1;
	ck_assert_int_eq(dev_ops_copy(&out, &ops, "the x module", why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, "the x module is built for device API"), "%s", why);
	ck_assert(!strchr(why, '\n'));
}
END_TEST

/* Every built-in filter registers as DEV_REGISTER makes it: version, size, a description. */
START_TEST(every_filter_is_registered_whole)
{
	unsigned int n = 0;

	for (const struct dev_ops *const *f = dev_filter_list(); *f; f++, n++) {
		ck_assert_int_eq((*f)->api_version, DEV_API_VERSION);
		ck_assert_uint_eq((*f)->size, sizeof(struct dev_ops));
		ck_assert_msg((*f)->description && *(*f)->description, "%s: no description",
			      (*f)->name);
		ck_assert_msg((*f)->keys && (*f)->keys->name, "%s: no keys", (*f)->name);
		for (const struct dev_key *k = (*f)->keys; k->name; k++)
			ck_assert_msg(k->help && *k->help, "%s: key %s has no help", (*f)->name,
				      k->name);
		ck_assert_ptr_eq(dev_find_filter((*f)->name, strlen((*f)->name)), *f);
		ck_assert_str_eq(dev_filter_names()[n], (*f)->name);
	}
	ck_assert_uint_gt(n, 0);
	ck_assert_ptr_null(dev_filter_names()[n]);
}
END_TEST

static Suite *device_suite(void)
{
	Suite *s = suite_create("device");
	TCase *tc = tcase_create("stack");

	tcase_add_test(tc, queue_rotates_as_the_stack_says);
	tcase_add_test(tc, model_ends_at_the_models_time);
	tcase_add_test(tc, model_keeps_its_depth_below);
	tcase_add_test(tc, filter_order_matters);
	tcase_add_test(tc, bad_filter_specs_say_why);
	tcase_add_test(tc, error_after_a_good_prefix_through_the_model);
	tcase_add_test(tc, delay_counts_a_request_ended_in_pieces);
	tcase_add_test(tc, model_ends_in_its_order_when_the_host_wakes_late);
	tcase_add_test(tc, delay_retries_when_below_refuses_with_nothing_there);
	tcase_add_test(tc, stack_described_into_any_buffer);
	tcase_add_test(tc, timers_run_bottom_up);
	tcase_add_test(tc, ops_the_stack_does_not_take_are_refused_by_the_queue);
	tcase_add_test(tc, block_sizes_and_max_sectors_come_from_the_stack);
	tcase_add_test(tc, stack_runs_under_a_host_with_no_request_queue);
	tcase_add_test(tc, no_data_is_a_limit_not_a_name);
	tcase_add_test(tc, ops_tables_are_copied_up_to_their_size);
	tcase_add_test(tc, every_filter_is_registered_whole);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fake_run_suite(device_suite());
}
