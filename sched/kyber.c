/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kyber.c - the kyber elevator, after Linux's kyber-iosched: four domains of
 * requests (read, write, discard, other), each needing a token to go, and a
 * timer that shrinks the tokens of the domains doing well while one misses
 * its latency target, and gives tokens back to a domain that misses its own.
 * On a multi-queue queue each hardware queue keeps its own lists and its own
 * turn among the domains (Linux's kyber_hctx_data), while the tokens stay
 * global to the queue; async requests may hold at most 3/4 of the
 * scheduler tags (KYBER_ASYNC_PERCENT).
 */
#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "elevator.h"

enum {
	KYBER_READ,
	KYBER_WRITE,
	KYBER_DISCARD,
	KYBER_OTHER, /* write zeroes, and any op to come: no latency target, never measured */
	KYBER_NUM_DOMAINS,
};

/* Tokens of each domain at most (and at first), as Linux; never above the queue's depth. */
static const unsigned int kyber_depth[KYBER_NUM_DOMAINS] = { 256, 128, 64, 16 };

/* Requests a domain sends in a row before the next domain's turn: reads favoured. */
static const unsigned int kyber_batch_size[KYBER_NUM_DOMAINS] = { 16, 8, 1, 1 };

/* Latency targets: read and write are tunables; discard's is fixed, as in Linux. */
#define KYBER_READ_LAT_NS (2 * NSEC_PER_MSEC)
#define KYBER_WRITE_LAT_NS (10 * NSEC_PER_MSEC)
#define KYBER_DISCARD_LAT_NS (5000 * NSEC_PER_MSEC)

/*
 * A histogram per measured domain and latency type, its buckets a quarter
 * of the target wide: the first four are at or below the target ("good"),
 * the last takes everything above 1 3/4 of it.
 */
#define KYBER_LATENCY_SHIFT 2
#define KYBER_GOOD_BUCKETS (1 << KYBER_LATENCY_SHIFT)
#define KYBER_LATENCY_BUCKETS (2 << KYBER_LATENCY_SHIFT)

/* Total latency from queueing, I/O latency from dispatch to completion. */
enum { KYBER_TOTAL_LATENCY, KYBER_IO_LATENCY, KYBER_NR_LAT_TYPES };

#define KYBER_TIMER_NS (100 * NSEC_PER_MSEC) /* the statistics window */
/* A percentile needs this many samples, or this long since it first had too few. */
#define KYBER_MIN_SAMPLES 500
#define KYBER_SAMPLE_TIMEOUT_NS (1000 * NSEC_PER_MSEC)

/* The share of the scheduler tags async requests may hold, as Linux: the rest is kept for sync. */
#define KYBER_ASYNC_PERCENT 75

/*
 * One hardware queue's requests and turn (Linux's kyber_hctx_data); a 2.6
 * queue has one.  Only the hardware queue they were inserted on
 * dispatches them.
 */
struct kyber_hctx_data {
	struct elv_fifo rqs[KYBER_NUM_DOMAINS]; /* one FIFO per domain */
	unsigned int cur_domain;
	unsigned int batching; /* requests of cur_domain sent in this batch */
};

struct kyber_data {
	/* The tokens: one count per domain for the whole queue, whichever hctx dispatches. */
	unsigned int depth[KYBER_NUM_DOMAINS]; /* tokens */
	unsigned int scaled[KYBER_NUM_DOMAINS]; /* what the windows set, before the queue's bound */
	unsigned int busy[KYBER_NUM_DOMAINS];  /* tokens held by dispatched requests */

	unsigned int buckets[KYBER_OTHER][KYBER_NR_LAT_TYPES][KYBER_LATENCY_BUCKETS];
	uint64_t latency_timeout[KYBER_OTHER]; /* 0: none running */
	int domain_p99[KYBER_OTHER];           /* a p99 kept for the next congestion, or -1 */
	uint64_t latency_target[KYBER_OTHER];  /* ns */
	uint64_t timer_at;                     /* 0: the timer is not armed */
	uintptr_t id;                          /* this instance's mark on its tokens */
	unsigned int nr_hctx;                  /* hardware queues; 1 on a 2.6 queue */
	struct kyber_hctx_data khd[];
};

/* Every instance's id, never 0 and never used twice: an address may be. */
static uintptr_t kyber_instances;

/*
 * elv_priv[0] holds the id of the instance whose token the request holds.
 * A request another elevator dispatched (it was given back by the driver
 * before a switch, and waits in the dispatch list) holds none of ours,
 * even if it holds one of a kyber freed at the address we now have.
 */
static void rq_set_token(const struct kyber_data *kd, struct request *rq)
{
	rq->elv_priv[0] = (void *)kd->id;
}

static bool rq_has_token(const struct kyber_data *kd, const struct request *rq)
{
	return rq->elv_priv[0] == (void *)kd->id;
}

static unsigned int kyber_sched_domain(enum req_op op)
{
	switch (op) {
	case REQ_OP_READ:
		return KYBER_READ;
	case REQ_OP_WRITE:
		return KYBER_WRITE;
	case REQ_OP_DISCARD:
		return KYBER_DISCARD;
	default:
		return KYBER_OTHER;
	}
}

static unsigned int kyber_max_depth(const struct elevator_queue *e, unsigned int sched_domain)
{
	unsigned int qdepth = e->nr_requests;

	return qdepth < kyber_depth[sched_domain] ? qdepth : kyber_depth[sched_domain];
}

/* The lists of the hardware queue a multi-queue hook was given. */
static struct kyber_hctx_data *kyber_hctx(struct kyber_data *kd, struct blk_mq_hw_ctx *hctx)
{
	unsigned int i = blk_mq_hctx_index(hctx);

	assert(i < kd->nr_hctx);
	return &kd->khd[i];
}

static int kyber_init_queue(struct elevator_queue *e)
{
	unsigned int nr_hctx = e->nr_hw_queues ? e->nr_hw_queues : 1;
	struct kyber_data *kd = calloc(1, sizeof(*kd) + nr_hctx * sizeof(kd->khd[0]));
	static const uint64_t targets[KYBER_OTHER] = {
		KYBER_READ_LAT_NS, KYBER_WRITE_LAT_NS, KYBER_DISCARD_LAT_NS
	};

	if (!kd)
		return -1;
	kd->nr_hctx = nr_hctx;
	for (unsigned int h = 0; h < nr_hctx; h++)
		for (unsigned int i = 0; i < KYBER_NUM_DOMAINS; i++)
			TAILQ_INIT(&kd->khd[h].rqs[i]);
	for (unsigned int i = 0; i < KYBER_NUM_DOMAINS; i++) {
		kd->scaled[i] = kyber_depth[i];
		kd->depth[i] = kyber_max_depth(e, i);
		if (!kd->depth[i])
			kd->depth[i] = 1;
	}
	for (unsigned int i = 0; i < KYBER_OTHER; i++) {
		kd->domain_p99[i] = -1;
		kd->latency_target[i] = targets[i];
	}
	kd->id = __atomic_add_fetch(&kyber_instances, 1, __ATOMIC_RELAXED);
	e->elevator_data = kd;
	return 0;
}

static void kyber_exit_queue(struct elevator_queue *e)
{
	struct kyber_data *kd = e->elevator_data;

	for (unsigned int h = 0; h < kd->nr_hctx; h++)
		for (unsigned int i = 0; i < KYBER_NUM_DOMAINS; i++)
			assert(TAILQ_EMPTY(&kd->khd[h].rqs[i]));
	free(kd);
}

/*
 * The bucket of the percentile of a domain's histogram, which is emptied,
 * or -1 while there are too few samples: fewer than KYBER_MIN_SAMPLES for
 * less than KYBER_SAMPLE_TIMEOUT_NS since the first look found some.
 */
static int calculate_percentile(struct kyber_data *kd, unsigned int sched_domain,
				unsigned int type, unsigned int percentile, uint64_t now)
{
	unsigned int *buckets = kd->buckets[sched_domain][type];
	unsigned int bucket, samples = 0, rank;

	for (bucket = 0; bucket < KYBER_LATENCY_BUCKETS; bucket++)
		samples += buckets[bucket];
	if (!samples)
		return -1;
	if (!kd->latency_timeout[sched_domain])
		kd->latency_timeout[sched_domain] = now + KYBER_SAMPLE_TIMEOUT_NS;
	if (samples < KYBER_MIN_SAMPLES && now < kd->latency_timeout[sched_domain])
		return -1;
	kd->latency_timeout[sched_domain] = 0;

	rank = (unsigned int)(((uint64_t)samples * percentile + 99) / 100);
	for (bucket = 0; bucket < KYBER_LATENCY_BUCKETS - 1; bucket++) {
		if (buckets[bucket] >= rank)
			break;
		rank -= buckets[bucket];
	}
	memset(kd->buckets[sched_domain][type], 0, sizeof(kd->buckets[sched_domain][type]));
	return (int)bucket;
}

/* A domain's tokens: what the windows set it to, under the queue's depth; one at least. */
static void kyber_bound_domain(struct elevator_queue *e, unsigned int sched_domain)
{
	struct kyber_data *kd = e->elevator_data;
	unsigned int max = kyber_max_depth(e, sched_domain);
	unsigned int depth = kd->scaled[sched_domain] < max ? kd->scaled[sched_domain] : max;

	kd->depth[sched_domain] = depth ? depth : 1;
}

/*
 * The queue's depth changed: each domain's tokens are what the windows
 * set, under the new depth, so a domain at its most follows the depth
 * up and down, and one a congested window scaled down keeps its scaling
 * through a lowered and raised depth.  (Linux's kyber sizes its tokens
 * by kyber_depth alone and recomputes only the async depth, which
 * kyber_limit_depth reads here.)
 */
static void kyber_depth_updated(struct elevator_queue *e)
{
	for (unsigned int i = 0; i < KYBER_NUM_DOMAINS; i++)
		kyber_bound_domain(e, i);
}

static void kyber_resize_domain(struct elevator_queue *e, unsigned int sched_domain,
				unsigned int depth)
{
	struct kyber_data *kd = e->elevator_data;

	kd->scaled[sched_domain] = depth < kyber_depth[sched_domain] ? depth : kyber_depth[sched_domain];
	kyber_bound_domain(e, sched_domain);
}

/*
 * The window is over.  Congestion is an I/O latency p90 above its target
 * in any domain (the p90: outliers should not count).  Then each domain's
 * depth is scaled by its total latency p99 against its target (3/4 of the
 * target: 3/4 of the tokens; twice the target: twice the tokens): every
 * domain's under congestion, else only a domain missing its own target.
 */
static void kyber_timer_fn(struct elevator_queue *e, uint64_t now)
{
	struct kyber_data *kd = e->elevator_data;
	bool bad = false;
	unsigned int d;

	for (d = 0; d < KYBER_OTHER; d++)
		if (calculate_percentile(kd, d, KYBER_IO_LATENCY, 90, now) >= KYBER_GOOD_BUCKETS)
			bad = true;

	for (d = 0; d < KYBER_OTHER; d++) {
		int p99 = calculate_percentile(kd, d, KYBER_TOTAL_LATENCY, 99, now);

		/*
		 * A domain may have too few samples in the window congestion
		 * is seen in: its last p99 stands in, once.
		 */
		if (bad) {
			if (p99 < 0)
				p99 = kd->domain_p99[d];
			kd->domain_p99[d] = -1;
		} else if (p99 >= 0) {
			kd->domain_p99[d] = p99;
		}
		if (p99 < 0)
			continue;
		if (bad || p99 >= KYBER_GOOD_BUCKETS)
			kyber_resize_domain(e, d, (kd->depth[d] * (unsigned int)(p99 + 1)) >>
							  KYBER_LATENCY_SHIFT);
	}
}

/* Run the timer if it is due: from every hook, as nothing else calls the elevator. */
static void kyber_timer_check(struct elevator_queue *e, uint64_t now)
{
	struct kyber_data *kd = e->elevator_data;

	if (kd->timer_at && now >= kd->timer_at) {
		kd->timer_at = 0;
		kyber_timer_fn(e, now);
	}
}

static void kyber_insert(struct kyber_hctx_data *khd, struct request *rq, bool at_head)
{
	struct elv_fifo *fifo = &khd->rqs[kyber_sched_domain(rq->cmd_op)];

	rq->elv_priv[0] = NULL;
	if (at_head)
		TAILQ_INSERT_HEAD(fifo, rq, queuelist);
	else
		TAILQ_INSERT_TAIL(fifo, rq, queuelist);
}

/* The 2.6 queue's: its one set of lists. */
static void kyber_add_request(struct elevator_queue *e, struct request *rq)
{
	struct kyber_data *kd = e->elevator_data;

	kyber_timer_check(e, blk_clock_now(e->clock));
	kyber_insert(&kd->khd[0], rq, false);
}

/* Linux's kyber_insert_requests: onto hctx's own lists, one per domain. */
static void kyber_insert_requests(struct elevator_queue *e, struct blk_mq_hw_ctx *hctx,
				  struct elv_fifo *list, bool at_head)
{
	struct kyber_hctx_data *khd = kyber_hctx(e->elevator_data, hctx);
	struct request *rq;

	kyber_timer_check(e, blk_clock_now(e->clock));
	while ((rq = TAILQ_FIRST(list))) {
		TAILQ_REMOVE(list, rq, queuelist);
		kyber_insert(khd, rq, at_head);
	}
}

static bool kyber_get_domain_token(struct kyber_data *kd, unsigned int sched_domain)
{
	if (kd->busy[sched_domain] >= kd->depth[sched_domain])
		return false;
	kd->busy[sched_domain]++;
	return true;
}

/*
 * The head of khd's FIFO of its current domain, if the domain has a token
 * for it (a token of the queue's: every hctx takes from the same count).
 * While the elevator is emptied for a switch nothing is in flight and
 * everything must go: no token is taken, none is needed.
 */
static struct request *kyber_dispatch_cur_domain(struct elevator_queue *e,
						 struct kyber_hctx_data *khd)
{
	struct kyber_data *kd = e->elevator_data;
	struct request *rq = TAILQ_FIRST(&khd->rqs[khd->cur_domain]);

	if (!rq)
		return NULL;
	if (!e->draining) {
		if (!kyber_get_domain_token(kd, khd->cur_domain))
			return NULL;
		rq_set_token(kd, rq);
	}
	khd->batching++;
	TAILQ_REMOVE(&khd->rqs[khd->cur_domain], rq, queuelist);
	return rq;
}

/*
 * Go on with khd's current domain's batch while it may; else start the
 * next domain's batch, round robin, back to the current domain if no other
 * has both a request and a token.  NULL when none has: a completion
 * returns a token, and the core runs every queue after a completion.
 */
static struct request *kyber_dispatch(struct elevator_queue *e, struct kyber_hctx_data *khd,
				      uint64_t now)
{
	struct request *rq;

	kyber_timer_check(e, now);
	if (khd->batching < kyber_batch_size[khd->cur_domain]) {
		rq = kyber_dispatch_cur_domain(e, khd);
		if (rq)
			return rq;
	}
	khd->batching = 0;
	for (unsigned int i = 0; i < KYBER_NUM_DOMAINS; i++) {
		khd->cur_domain = (khd->cur_domain + 1) % KYBER_NUM_DOMAINS;
		rq = kyber_dispatch_cur_domain(e, khd);
		if (rq)
			return rq;
	}
	return NULL;
}

static struct request *kyber_dispatch_request(struct elevator_queue *e, uint64_t now)
{
	struct kyber_data *kd = e->elevator_data;

	return kyber_dispatch(e, &kd->khd[0], now);
}

/* Linux's kyber_dispatch_request: hctx's own lists only. */
static struct request *kyber_mq_dispatch_request(struct elevator_queue *e,
						 struct blk_mq_hw_ctx *hctx, uint64_t now)
{
	return kyber_dispatch(e, kyber_hctx(e->elevator_data, hctx), now);
}

static bool kyber_hctx_has_work(const struct kyber_hctx_data *khd)
{
	for (unsigned int i = 0; i < KYBER_NUM_DOMAINS; i++)
		if (!TAILQ_EMPTY(&khd->rqs[i]))
			return true;
	return false;
}

/* Whether any hardware queue's lists hold a request. */
static bool kyber_has_work(const struct elevator_queue *e)
{
	const struct kyber_data *kd = e->elevator_data;

	for (unsigned int h = 0; h < kd->nr_hctx; h++)
		if (kyber_hctx_has_work(&kd->khd[h]))
			return true;
	return false;
}

static bool kyber_mq_has_work(struct elevator_queue *e, struct blk_mq_hw_ctx *hctx)
{
	return kyber_hctx_has_work(kyber_hctx(e->elevator_data, hctx));
}

/*
 * Linux's op_is_sync: a read, or a request someone waits for.  rqdisk's
 * barrier is Linux's preflush.
 */
static bool kyber_is_sync(enum req_op op, unsigned int flags)
{
	return op == REQ_OP_READ || (flags & (REQ_SYNC | REQ_FUA | REQ_PREFLUSH | REQ_BARRIER));
}

/*
 * Linux's kyber_limit_depth: an async request takes a scheduler tag only
 * while fewer than KYBER_ASYNC_PERCENT of them are in use, so that async
 * requests never hold more.  A flush is not limited: Linux's core never
 * asks for one (it goes to the dispatch list, as rqdisk's does).
 */
static void kyber_limit_depth(struct elevator_queue *e, enum req_op op,
			      struct blk_mq_alloc_data *data)
{
	unsigned int depth = data->nr_tags * KYBER_ASYNC_PERCENT / 100;

	(void)e;
	if (op == REQ_OP_FLUSH || kyber_is_sync(op, data->cmd_flags))
		return;
	data->shallow_depth = depth ? depth : 1;
}

/* Which quarter-target bucket a latency falls in: (k/4 target, (k+1)/4 target] is bucket k. */
static unsigned int kyber_latency_bucket(uint64_t target, uint64_t latency)
{
	uint64_t width = target >> KYBER_LATENCY_SHIFT;
	uint64_t bucket;

	if (!latency)
		return 0;
	bucket = (latency - 1) / (width ? width : 1);
	return bucket < KYBER_LATENCY_BUCKETS - 1 ? (unsigned int)bucket : KYBER_LATENCY_BUCKETS - 1;
}

static uint64_t since(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}

/*
 * Give the token back; a measured domain's request counts in both
 * histograms and arms the timer, which ends the window at most
 * KYBER_TIMER_NS after its first completion.
 */
static void kyber_completed(struct elevator_queue *e, struct request *rq)
{
	struct kyber_data *kd = e->elevator_data;
	unsigned int d = kyber_sched_domain(rq->cmd_op);
	uint64_t now = blk_clock_now(e->clock);
	uint64_t target;

	kyber_timer_check(e, now);
	if (rq_has_token(kd, rq)) {
		assert(kd->busy[d]);
		if (kd->busy[d])
			kd->busy[d]--;
		rq->elv_priv[0] = NULL;
	}
	if (d == KYBER_OTHER)
		return;
	target = kd->latency_target[d];
	kd->buckets[d][KYBER_TOTAL_LATENCY]
		   [kyber_latency_bucket(target, since(now, rq->start_time_ns))]++;
	kd->buckets[d][KYBER_IO_LATENCY]
		   [kyber_latency_bucket(target, since(now, rq->io_start_time_ns))]++;
	if (!kd->timer_at) {
		kd->timer_at = now + KYBER_TIMER_NS;
		elv_schedule_dispatch(e, kd->timer_at);
	}
}

/*
 * Front merges, as Linux tries a bio on the newest few requests of its
 * domain (on each hardware queue's list: the hook is not told which
 * queue the bio comes from); back merges are the core's own.
 */
#define KYBER_MERGE_LOOKBACK 8

static struct request *kyber_find_front(struct elv_fifo *fifo, const struct bio *bio)
{
	unsigned int n = 0;
	struct request *r;

	TAILQ_FOREACH_REVERSE(r, fifo, elv_fifo, queuelist) {
		if (n++ == KYBER_MERGE_LOOKBACK)
			break;
		if (blk_rq_pos(r) == bio_end_sector(bio))
			return r;
	}
	return NULL;
}

static enum elv_merge kyber_find_merge(struct elevator_queue *e, const struct bio *bio,
				       struct request **rq)
{
	struct kyber_data *kd = e->elevator_data;
	unsigned int d = kyber_sched_domain(bio->bi_op);

	for (unsigned int h = 0; h < kd->nr_hctx; h++) {
		*rq = kyber_find_front(&kd->khd[h].rqs[d], bio);
		if (*rq)
			return ELEVATOR_FRONT_MERGE;
	}
	return ELEVATOR_NO_MERGE;
}

/* In nanoseconds, as Linux; at most INT_MAX (2.1 s), as every tunable here. */
ELV_TUNABLE(kyber, read_lat_nsec, struct kyber_data, latency_target[KYBER_READ], 0, INT_MAX, 1);
ELV_TUNABLE(kyber, write_lat_nsec, struct kyber_data, latency_target[KYBER_WRITE], 0, INT_MAX, 1);

static const struct elv_tunable kyber_tunables[] = {
	ELV_ATTR(kyber, read_lat_nsec),
	ELV_ATTR(kyber, write_lat_nsec),
	{ 0 },
};

static struct elevator_type elevator_kyber = {
	.elevator_name = "kyber",
	.elevator_description = "token-based: read and write latency targets by limiting depth",
	.init_queue = kyber_init_queue,
	.exit_queue = kyber_exit_queue,
	.add_request = kyber_add_request,
	.dispatch_request = kyber_dispatch_request,
	.has_work = kyber_has_work,
	.find_merge = kyber_find_merge,
	.completed = kyber_completed,
	.tunables = kyber_tunables,
	.mq_ops = {
		.insert_requests = kyber_insert_requests,
		.dispatch_request = kyber_mq_dispatch_request,
		.has_work = kyber_mq_has_work,
		.limit_depth = kyber_limit_depth,
	},
	.depth_updated = kyber_depth_updated,
};

ELEVATOR_REGISTER(kyber, elevator_kyber)
