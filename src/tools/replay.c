/*
 * replay.c - the replay engine: the trace's bios go through the real queue
 * and elevator; a driver hands what they dispatch to the timing model and
 * completes it when the model says, on a virtual clock.  One thread, no
 * FUSE, no io_uring: every run of the same input takes the same steps.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "replay.h"

#define REPLAY_START_NS 1000000000ull /* the clock's origin: 0 means "no time" to the core */
#define NEVER UINT64_MAX
/*
 * The clock stops here: a model's time past it is taken as it, so that the
 * clock never wraps and every elevator's "now + expire" still fits above it.
 */
#define REPLAY_CLOCK_MAX (1ull << 63)
#define PROGRESS_EVERY 65536

/* A request at the device, until the model's completion time. */
struct replay_done {
	uint64_t at;
	uint64_t seq; /* dispatch order breaks ties: no two runs differ */
	struct request *rq;
};

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
	struct blk_clock clock;
	struct disk_model *model;
	unsigned int device_depth;
	struct replay_done *heap; /* min-heap on (at, seq) */
	size_t heap_nr;
	uint64_t dispatched;
	sector_t head; /* where the last data request ended */
	struct replay_bio *bios;
	void *buf; /* every data bio points here: no data moves, only sectors */
	size_t next; /* the next I/O of the trace to submit */
	size_t outstanding; /* bios submitted, not yet ended */
};

static uint64_t replay_now(const struct replay_state *st)
{
	return st->clock.virtual_ns;
}

static bool done_before(const struct replay_done *a, const struct replay_done *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static void heap_swap(struct replay_done *a, struct replay_done *b)
{
	struct replay_done tmp = *a;

	*a = *b;
	*b = tmp;
}

static void heap_push(struct replay_state *st, struct replay_done d)
{
	size_t i = st->heap_nr++;

	st->heap[i] = d;
	while (i && done_before(&st->heap[i], &st->heap[(i - 1) / 2])) {
		heap_swap(&st->heap[i], &st->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
}

static struct replay_done heap_pop(struct replay_state *st)
{
	struct replay_done top = st->heap[0];
	size_t i = 0;

	st->heap[0] = st->heap[--st->heap_nr];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < st->heap_nr && done_before(&st->heap[l], &st->heap[m]))
			m = l;
		if (r < st->heap_nr && done_before(&st->heap[r], &st->heap[m]))
			m = r;
		if (m == i)
			return top;
		heap_swap(&st->heap[i], &st->heap[m]);
		i = m;
	}
}

static uint64_t sector_distance(sector_t a, sector_t b)
{
	return a > b ? a - b : b - a;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* A time on the clock: at most REPLAY_CLOCK_MAX. */
static uint64_t clock_time(uint64_t ns)
{
	return ns < REPLAY_CLOCK_MAX ? ns : REPLAY_CLOCK_MAX;
}

static uint64_t replay_device_time(struct replay_state *st, const struct request *rq)
{
	struct model_io io = {
		.op = rq->cmd_op,
		.flags = rq->cmd_flags,
		.sector = blk_rq_pos(rq),
		.nr_sectors = blk_rq_sectors(rq),
	};

	if (op_has_data(rq->cmd_op)) {
		st->res->seek_sectors =
			add_sat(st->res->seek_sectors, sector_distance(st->head, io.sector));
		st->head = io.sector + io.nr_sectors;
	}
	if (!st->model)
		return replay_now(st);
	return clock_time(disk_model_service(st->model, &io, replay_now(st)));
}

/* request_fn: the device takes what the queue lets out, up to its depth. */
static void replay_request_fn(struct request_queue *q)
{
	struct replay_state *st = q->queuedata;
	struct request *rq;

	while (st->heap_nr < st->device_depth && (rq = blk_fetch_request(q))) {
		st->res->requests++;
		heap_push(st, (struct replay_done){ replay_device_time(st, rq), st->dispatched++, rq });
	}
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
	rb->bio.bi_end_io = replay_end_io;
	rb->bio.bi_private = rb;
	rb->st = st;
	rb->submitted = replay_now(st);
	if (io->op == REQ_OP_FLUSH || (io->flags & REQ_BARRIER))
		st->res->barriers++;
	if (!st->res->start_ns)
		st->res->start_ns = rb->submitted;
	st->outstanding++;
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

/* Everything due by now goes in as one plugged batch, so that it can merge. */
static void replay_submit_due(struct replay_state *st)
{
	uint64_t now = replay_now(st);

	blk_queue_lock(st->q);
	blk_plug_device(st->q);
	while (replay_next_submit(st) <= now)
		replay_submit_one(st);
	__blk_unplug(st->q);
	blk_queue_unlock(st->q);
}

static void replay_complete_due(struct replay_state *st)
{
	uint64_t now = replay_now(st);

	while (st->heap_nr && st->heap[0].at <= now) {
		struct request *rq = heap_pop(st).rq;

		blk_end_request(rq, 0, blk_rq_sectors(rq));
	}
	blk_run_queue(st->q);
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
		uint64_t done = st->heap_nr ? st->heap[0].at : NEVER;
		uint64_t t = min3(sub, done, replay_next_timer(st));

		if (t == NEVER) {
			snprintf(why, whylen, "elevator %s stalled with %zu I/Os outstanding",
				 st->cfg->elevator, st->outstanding);
			return -EDEADLK;
		}
		if (t > replay_now(st))
			st->clock.virtual_ns = t;
		if (done == t)
			replay_complete_due(st);
		else if (sub == t)
			replay_submit_due(st);
		else
			blk_run_queue(st->q);
		replay_progress(st, &steps);
	}
	return 0;
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
	st->q = blk_init_queue(replay_request_fn, NULL, &st->clock);
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
	ret = disk_model_new(st->cfg->model, capacity ? capacity : 1, &st->model, why, whylen);
	if (ret)
		return ret;
	st->device_depth = st->model ? disk_model_depth(st->model) : st->q->limits.nr_requests;
	st->heap = calloc(st->device_depth, sizeof(*st->heap));
	if (!st->heap) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	ret = elevator_init(st->q, st->cfg->elevator);
	if (ret)
		snprintf(why, whylen, "no elevator '%s'", st->cfg->elevator);
	return ret;
}

static void replay_teardown(struct replay_state *st)
{
	/* a stalled run leaves requests behind: the process is about to exit anyway */
	if (st->q && blk_queue_idle(st->q))
		blk_cleanup_queue(st->q);
	disk_model_free(st->model);
	free(st->heap);
	free(st->bios);
	free(st->buf);
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
		res->merges = 0;
		for (int g = 0; g < NR_STAT_GROUPS; g++)
			res->merges += st.q->stats.merges[g];
	}
	replay_teardown(&st);
	return ret;
}

void replay_result_free(struct replay_result *res)
{
	free(res->lat[0].ns);
	free(res->lat[1].ns);
	memset(res, 0, sizeof(*res));
}
