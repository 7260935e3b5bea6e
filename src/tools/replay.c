/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replay.c - the replay engine: the trace's bios go through the real queue
 * and elevator; what they dispatch goes down the device stack (the model
 * and other filters over a simulated backend), whose timers end it, on a
 * virtual clock.  One thread, no FUSE, no io_uring: every run of the same
 * input takes the same steps.  The queue is the 2.6 one, or the
 * multi-queue one with its hardware queues run in turn (replay_mq.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "queue_stack.h"
#include "replay.h"
#include "replay_mq.h"

#define REPLAY_START_NS 1000000000ull /* the clock's origin: 0 means "no time" to the core */
#define NEVER UINT64_MAX
/*
 * The clock stops here: a trace's time past it is taken as it, as the model
 * filter takes its own, so that the clock never wraps and every elevator's
 * "now + expire" still fits above it.
 */
#define REPLAY_CLOCK_MAX (1ull << 63)
#define PROGRESS_EVERY 65536

struct replay_bio {
	struct bio bio;
	struct bio_vec vec;
	struct replay_state *st;
	uint64_t submitted;
};

struct replay_state {
	const struct replay_trace *t;
	const struct replay_config *cfg;
	struct replay_result *res;
	struct request_queue *q;
	struct replay_mq mq; /* cfg->hw_queues: the multi-queue driver */
	struct blk_clock clock;
	struct dev_stack stack; /* the filters over the simulated backend */
	char model_spec[DEV_SPEC_MAX]; /* "model:" and cfg->model */
	struct replay_bio *bios;
	void *buf; /* every data bio points here: no data moves, only sectors */
	size_t next; /* the next I/O of the trace to submit */
	size_t outstanding; /* bios submitted, not yet ended */
};

static uint64_t replay_now(const struct replay_state *st)
{
	return st->clock.virtual_ns;
}

/* A time on the clock: at most REPLAY_CLOCK_MAX. */
static uint64_t clock_time(uint64_t ns)
{
	return ns < REPLAY_CLOCK_MAX ? ns : REPLAY_CLOCK_MAX;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* request_fn: the device takes what the queue lets out, as long as its top takes more. */
static void replay_request_fn(struct request_queue *q)
{
	struct replay_state *st = q->queuedata;
	struct request *rq;

	while (dev_can_take(st->stack.top) && (rq = blk_fetch_request(q)))
		dev_submit(st->stack.top, rq);
}

static int replay_lat_add(struct replay_lat *lat, uint64_t ns)
{
	if (lat->nr == lat->alloc) {
		size_t n = lat->alloc ? 2 * lat->alloc : 1024;
		uint64_t *p = realloc(lat->ns, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		lat->ns = p;
		lat->alloc = n;
	}
	lat->ns[lat->nr++] = ns;
	return 0;
}

static void replay_end_io(struct bio *bio, int error)
{
	struct replay_bio *rb = bio->bi_private;
	struct replay_state *st = rb->st;
	uint64_t now = replay_now(st);

	st->outstanding--;
	st->res->end_ns = now;
	if (error) { /* refused or failed: no latency to speak of */
		st->res->errors++;
		return;
	}
	if (!op_has_data(bio->bi_op))
		return;
	st->res->bytes += bio->bi_size;
	if (replay_lat_add(&st->res->lat[bio->bi_op == REQ_OP_WRITE], now - rb->submitted))
		abort(); /* out of memory in a single-threaded tool: nothing to save */
}

static void replay_submit_one(struct replay_state *st)
{
	const struct replay_io *io = &st->t->ios[st->next];
	struct replay_bio *rb = &st->bios[st->next++];
	unsigned int size = io->nr_sectors << SECTOR_SHIFT;

	rb->vec = (struct bio_vec){ st->buf, size };
	bio_init(&rb->bio, io->op, io->sector, size, &rb->vec, op_has_data(io->op) ? 1 : 0);
	rb->bio.bi_flags = io->flags;
	rb->bio.bi_pid = io->pid;
	rb->bio.bi_blkcg = io->blkcg;
	rb->bio.bi_end_io = replay_end_io;
	rb->bio.bi_private = rb;
	rb->st = st;
	rb->submitted = replay_now(st);
	if (io->op == REQ_OP_FLUSH || (io->flags & REQ_BARRIER))
		st->res->barriers++;
	if (!st->res->start_ns)
		st->res->start_ns = rb->submitted;
	st->outstanding++;
	if (st->cfg->hw_queues)
		replay_mq_submit(st->q, &rb->bio, io->cpu);
	else
		__submit_bio(st->q, &rb->bio);
}

/*
 * When the next I/O of the trace is due, NEVER if it must wait for
 * completions.  A time before now (a trace that goes back) is due now.
 */
static uint64_t replay_next_submit(const struct replay_state *st)
{
	if (st->next == st->t->nr)
		return NEVER;
	if (st->cfg->depth)
		return st->outstanding < st->cfg->depth ? replay_now(st) : NEVER;
	return clock_time(add_sat(REPLAY_START_NS, st->t->ios[st->next].time));
}

/*
 * Everything due by now goes in as one plugged batch, so that it can
 * merge; on a multi-queue queue the hardware queues run once it is in.
 */
static void replay_submit_due(struct replay_state *st)
{
	uint64_t now = replay_now(st);

	blk_queue_lock(st->q);
	blk_plug_device(st->q);
	if (st->cfg->hw_queues)
		replay_mq_take_ran(st->q);
	while (replay_next_submit(st) <= now) {
		replay_submit_one(st);
		/* past the unplug threshold the 2.6 queue dispatches here: the hctxs run too */
		if (st->cfg->hw_queues && replay_mq_take_ran(st->q)) {
			blk_queue_unlock(st->q);
			replay_mq_run(st->q);
			blk_queue_lock(st->q);
		}
	}
	__blk_unplug(st->q);
	blk_queue_unlock(st->q);
}

/* The queue runs: the 2.6 one's request_fn, or every hardware queue. */
static void replay_run_queue(struct replay_state *st)
{
	if (st->cfg->hw_queues)
		replay_mq_kick_all(st->q);
	else
		blk_run_queue(st->q);
}

/*
 * Run the device's timers due by now, again while one is (what a timer
 * lets down ends at this time too): one completion step, as the queue
 * sees it.  True if something reached the queue, which then runs once.
 */
static bool replay_device_due(struct replay_state *st)
{
	uint64_t now = replay_now(st), ended = st->stack.ended, at;

	blk_queue_lock(st->q);
	while ((at = dev_stack_next_timer(&st->stack)) && at <= now)
		dev_stack_run_timers(&st->stack, now);
	blk_queue_unlock(st->q);
	return st->stack.ended != ended;
}

/* The elevator's wake-up, when it is idling for a request it expects. */
static uint64_t replay_next_timer(const struct replay_state *st)
{
	uint64_t at = st->q->dispatch_at;

	return at > replay_now(st) ? at : NEVER;
}

static uint64_t min3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t m = a < b ? a : b;

	return m < c ? m : c;
}

static void replay_progress(struct replay_state *st, uint64_t *steps)
{
	if (st->cfg->progress && ++*steps % PROGRESS_EVERY == 0)
		st->cfg->progress(st->cfg->progress_arg, st->next, st->t->nr);
}

/* Advance the clock from event to event until every bio has ended. */
static int replay_loop(struct replay_state *st, char *why, size_t whylen)
{
	uint64_t steps = 0;

	while (st->next < st->t->nr || st->outstanding) {
		uint64_t sub = replay_next_submit(st);
		uint64_t dev = dev_stack_next_timer(&st->stack);
		uint64_t elv = replay_next_timer(st);
		uint64_t t = min3(sub, dev ? dev : NEVER, elv);

		if (t == NEVER) {
			snprintf(why, whylen, "elevator %s stalled with %zu I/Os outstanding",
				 st->cfg->elevator, st->outstanding);
			return -EDEADLK;
		}
		if (t > replay_now(st))
			st->clock.virtual_ns = t;
		/*
		 * At one time: what ends first, then what is submitted, then
		 * the elevator's wake-up; the queue runs once per step, as a
		 * second run could change what an elevator decides.  A device
		 * step that ends nothing is no step to the queue.
		 */
		if (dev == t && replay_device_due(st))
			replay_run_queue(st);
		else if (sub == t)
			replay_submit_due(st);
		else if (elv == t)
			replay_run_queue(st);
		/* what was asked to run, while the device has room (no-op on the 2.6 queue) */
		if (st->cfg->hw_queues)
			replay_mq_run(st->q);
		replay_progress(st, &steps);
	}
	return 0;
}

/* cfg->model's filter first, then cfg->filters, over the simulated backend. */
static int replay_stack_open(struct replay_state *st, sector_t capacity, char *why, size_t whylen)
{
	const struct replay_config *cfg = st->cfg;
	const char *specs[DEV_MAX_LAYERS];
	struct dev_limits lim = { .capacity = capacity };
	unsigned int nr = 0;
	int ret;

	if (cfg->model && strcmp(cfg->model, "none")) {
		if ((size_t)snprintf(st->model_spec, sizeof(st->model_spec), "model:%s",
				     cfg->model) >= sizeof(st->model_spec)) {
			snprintf(why, whylen, "model: a spec of more than %d bytes",
				 DEV_SPEC_MAX - 7);
			return -EINVAL;
		}
		specs[nr++] = st->model_spec;
	}
	if (cfg->nr_filters > DEV_MAX_LAYERS - 1 - nr) {
		snprintf(why, whylen, "more than %d filters", DEV_MAX_LAYERS - 1);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < cfg->nr_filters; i++)
		specs[nr++] = cfg->filters[i];
	blk_stack_set_queue(&st->stack, st->q);
	ret = dev_stack_open(&st->stack, specs, nr, &dev_sim_ops, NULL, &lim, why, whylen);
	if (ret)
		return ret;
	ret = blk_queue_stack_limits(st->q, &lim, why, whylen);
	if (ret) {
		st->stack.aborted = true; /* as a failed start: the layers take back what they made */
		dev_stack_close(&st->stack);
	}
	return ret;
}

static int replay_setup(struct replay_state *st, char *why, size_t whylen)
{
	sector_t capacity = st->cfg->capacity ? st->cfg->capacity : st->t->capacity;
	int ret;

	if (capacity < st->t->capacity) {
		snprintf(why, whylen,
			 "the capacity, %llu sectors, is below the trace's extent (%llu)",
			 (unsigned long long)capacity, (unsigned long long)st->t->capacity);
		return -EINVAL;
	}
	blk_virtual_clock_init(&st->clock, REPLAY_START_NS);
	if (st->cfg->hw_queues) {
		st->q = replay_mq_init(&st->mq, &st->stack, st->cfg->hw_queues,
				       st->cfg->hw_queue_depth ? st->cfg->hw_queue_depth
							       : REPLAY_DEF_HW_QUEUE_DEPTH,
				       &st->clock, why, whylen);
		if (!st->q)
			return -EINVAL;
	} else {
		st->q = blk_init_queue(replay_request_fn, NULL, &st->clock);
	}
	st->bios = calloc(st->t->nr ? st->t->nr : 1, sizeof(*st->bios));
	if (!st->q || !st->bios ||
	    posix_memalign(&st->buf, BLK_PAGE_SIZE, st->t->max_bytes ? st->t->max_bytes : 1)) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	st->q->queuedata = st;
	ret = blk_queue_set_limits(st->q, &st->cfg->limits, why, whylen);
	if (ret)
		return ret;
	ret = replay_stack_open(st, capacity ? capacity : 1, why, whylen);
	if (ret)
		return ret;
	/* before the first request: each carries the stack's bytes */
	blk_queue_set_pdu_size(st->q, dev_stack_pdu_size(&st->stack));
	if (st->cfg->hw_queues)
		return blk_mq_elevator_init(st->q, st->cfg->elevator, why, whylen);
	ret = elevator_init(st->q, st->cfg->elevator);
	if (ret)
		snprintf(why, whylen, "no elevator '%s'", st->cfg->elevator);
	return ret;
}

static void replay_teardown(struct replay_state *st)
{
	/* a stalled run leaves requests behind: the process is about to exit anyway */
	if (st->q && blk_queue_idle(st->q)) {
		if (st->cfg->hw_queues)
			blk_mq_free_queue(st->q);
		else
			blk_cleanup_queue(st->q);
	}
	dev_stack_close(&st->stack);
	free(st->bios);
	free(st->buf);
}

/* Each hardware queue's requests handed to the device (its mq/N/dispatched). */
static int replay_hw_dispatched(const struct replay_state *st, struct replay_result *res)
{
	unsigned int nr = st->cfg->hw_queues;

	if (!nr)
		return 0;
	res->hw_dispatched = calloc(nr, sizeof(*res->hw_dispatched));
	if (!res->hw_dispatched)
		return -ENOMEM;
	res->nr_hw_queues = nr;
	for (unsigned int i = 0; i < nr; i++)
		res->hw_dispatched[i] = st->q->mq->hctxs[i].dispatched;
	return 0;
}

int replay_run(const struct replay_trace *t, const struct replay_config *cfg,
	       struct replay_result *res, char *why, size_t whylen)
{
	struct replay_state st = { .t = t, .cfg = cfg, .res = res };
	int ret;

	memset(res, 0, sizeof(*res));
	ret = replay_setup(&st, why, whylen);
	if (!ret)
		ret = replay_loop(&st, why, whylen);
	if (!ret) {
		const struct dev_sim_stats *sim = dev_sim_stats(st.stack.bottom);

		res->requests = sim->requests;
		res->seek_sectors = sim->seek_sectors;
		res->merges = 0;
		for (int g = 0; g < NR_STAT_GROUPS; g++)
			res->merges += st.q->stats.merges[g];
		ret = replay_hw_dispatched(&st, res);
		if (ret)
			snprintf(why, whylen, "out of memory");
	}
	replay_teardown(&st);
	return ret;
}

void replay_result_free(struct replay_result *res)
{
	free(res->lat[0].ns);
	free(res->lat[1].ns);
	free(res->hw_dispatched);
	memset(res, 0, sizeof(*res));
}
