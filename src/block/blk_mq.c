/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * blk_mq.c - the multi-queue request queue: set up from a tag set, bios in
 * through the core's own submission (limits, splits, bounces, merges,
 * barrier epochs), requests out through tags to the hardware queues, ended
 * in parts.  Locking: see blk_mq.h.
 */
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blk_mq.h"

/*
 * The 2.6 submission path ends by running the driver; on a multi-queue
 * queue the submitter runs its hardware queue itself once the queue lock is
 * dropped, so this has nothing to do.
 */
static void blk_mq_request_fn(struct request_queue *q)
{
	(void)q;
}

/* blk_mq_map_queues: CPU n's software queue feeds hardware queue n mod nr_hw_queues. */
void blk_mq_map_queues(struct blk_mq_queue *mq)
{
	unsigned int nr_hw = mq->set->nr_hw_queues;

	for (unsigned int i = 0; i < nr_hw; i++)
		mq->hctxs[i].nr_ctx = 0;
	for (unsigned int cpu = 0; cpu < mq->nr_ctx; cpu++) {
		struct blk_mq_hw_ctx *hctx = &mq->hctxs[cpu % nr_hw];

		mq->ctxs[cpu].hctx = hctx;
		hctx->ctxs[hctx->nr_ctx++] = &mq->ctxs[cpu];
	}
}

static int blk_mq_init_hctx(struct request_queue *q, struct blk_mq_hw_ctx *hctx,
			    unsigned int num)
{
	struct blk_mq_queue *mq = q->mq;

	pthread_mutex_init(&hctx->lock, NULL);
	TAILQ_INIT(&hctx->dispatch);
	TAILQ_INIT(&hctx->tag_wait);
	hctx->queue_num = num;
	hctx->queue = q;
	hctx->ctxs = calloc(mq->nr_ctx, sizeof(*hctx->ctxs));
	if (!hctx->ctxs)
		return -ENOMEM;
	return blk_mq_init_tags(&hctx->tags, mq->set->queue_depth);
}

static unsigned int blk_mq_nr_cpus(const struct blk_mq_tag_set *set)
{
	long n = set->nr_cpus ? (long)set->nr_cpus : sysconf(_SC_NPROCESSORS_CONF);

	return n > 0 ? (unsigned int)n : 1;
}

static int blk_mq_alloc_queues(struct request_queue *q, struct blk_mq_tag_set *set)
{
	struct blk_mq_queue *mq = q->mq;

	mq->set = set;
	mq->nr_ctx = blk_mq_nr_cpus(set);
	TAILQ_INIT(&mq->tag_wait);
	if (blk_mq_init_tags(&mq->sched_tags, 0)) /* none: an elevator brings its own */
		return -ENOMEM;
	mq->ctxs = calloc(mq->nr_ctx, sizeof(*mq->ctxs));
	mq->hctxs = calloc(set->nr_hw_queues, sizeof(*mq->hctxs));
	if (!mq->ctxs || !mq->hctxs)
		return -ENOMEM;
	for (unsigned int cpu = 0; cpu < mq->nr_ctx; cpu++) {
		pthread_mutex_init(&mq->ctxs[cpu].lock, NULL);
		TAILQ_INIT(&mq->ctxs[cpu].rq_list);
		mq->ctxs[cpu].cpu = cpu;
	}
	for (unsigned int i = 0; i < set->nr_hw_queues; i++)
		if (blk_mq_init_hctx(q, &mq->hctxs[i], i))
			return -ENOMEM;
	blk_mq_map_queues(mq);
	return 0;
}

/*
 * A queue in multi-queue mode over set, with no elevator ("none"): set
 * the limits (nr_requests too), then blk_mq_elevator_init() for one.
 */
struct request_queue *blk_mq_init_queue(struct blk_mq_tag_set *set,
					const struct blk_clock *clock, char *why, size_t whylen)
{
	struct request_queue *q;

	if (!set->ops || !set->ops->queue_rq || !set->nr_hw_queues || !set->queue_depth) {
		snprintf(why, whylen, "a tag set needs queue_rq, hardware queues and a depth");
		return NULL;
	}
	q = blk_init_queue(blk_mq_request_fn, NULL, clock);
	if (!q || !(q->mq = calloc(1, sizeof(*q->mq))) || blk_mq_alloc_queues(q, set)) {
		snprintf(why, whylen, "out of memory");
		blk_mq_free_queue(q);
		return NULL;
	}
	return q;
}

/* The queue must be idle: every submitted bio has ended. */
void blk_mq_free_queue(struct request_queue *q)
{
	struct blk_mq_queue *mq = q ? q->mq : NULL;

	if (mq) {
		for (unsigned int i = 0; mq->hctxs && i < mq->set->nr_hw_queues; i++) {
			blk_mq_free_tags(&mq->hctxs[i].tags);
			free(mq->hctxs[i].ctxs);
			pthread_mutex_destroy(&mq->hctxs[i].lock);
		}
		for (unsigned int cpu = 0; mq->ctxs && cpu < mq->nr_ctx; cpu++)
			pthread_mutex_destroy(&mq->ctxs[cpu].lock);
		blk_mq_free_tags(&mq->sched_tags);
		blk_mq_free_tags(&mq->next_sched_tags);
		free(mq->hctxs);
		free(mq->ctxs);
		free(mq);
		q->mq = NULL;
	}
	blk_cleanup_queue(q);
}

/* Queue lock held: a new request belongs to the submitter's software queue. */
void blk_mq_rq_init(struct request_queue *q, struct request *rq)
{
	struct blk_mq_ctx *ctx = q->mq->submit_ctx ? q->mq->submit_ctx : &q->mq->ctxs[0];

	rq->tag = -1;
	rq->internal_tag = -1;
	rq->mq_ctx = ctx;
	rq->mq_hctx = ctx->hctx;
}

/*
 * Queue lock held: the tag that lets rq be queued, a scheduler tag under
 * an elevator (within its limit_depth) or a driver tag of its hardware
 * queue without one.  False: none it may take is free; *full then says
 * none is free at all, for any request.
 */
static bool blk_mq_get_queue_tag(struct request_queue *q, struct request *rq, bool *full)
{
	struct blk_mq_tags *tags = q->elevator ? &q->mq->sched_tags : &rq->mq_hctx->tags;
	unsigned int depth = q->elevator ? blk_mq_sched_depth(q, rq) : 0;
	int tag = blk_mq_get_tag(tags, depth);

	if (q->elevator)
		rq->internal_tag = tag;
	else
		rq->tag = tag;
	*full = tag < 0 && (!depth || blk_mq_tags_in_use(tags) >= tags->nr_tags);
	return tag >= 0;
}

static struct rq_list *blk_mq_tag_waitq(struct request_queue *q, struct request *rq)
{
	return q->elevator ? &q->mq->tag_wait : &rq->mq_hctx->tag_wait;
}

/*
 * Queue lock held: queue whoever waits in waitq and may take a tag now,
 * in order.  The whole list is walked, as sbitmap wakes each waiter whose
 * own depth has room: a request held back by its class's limit_depth
 * (async writes over deadline's async_depth or kyber's 75%) holds back no
 * later one of another class (a read).  Within a class the order stays
 * FIFO: tags are taken and given back only under the queue lock, so the
 * tags in use only grow during the walk, and once one request of a depth
 * cannot take a tag no later one of that depth can.  The walk stops when
 * no tag is free at all.
 */
static void blk_mq_tag_wakeup_list(struct request_queue *q, struct rq_list *waitq)
{
	struct request *rq, *next;
	bool full = false;

	for (rq = TAILQ_FIRST(waitq); rq && !full; rq = next) {
		next = TAILQ_NEXT(rq, queuelist);
		if (blk_mq_get_queue_tag(q, rq, &full)) {
			TAILQ_REMOVE(waitq, rq, queuelist);
			blk_mq_insert_request(q, rq);
		}
	}
}

/*
 * Queue lock held (flush.c): rq's barrier epoch is the active one.  It is
 * queued once it has its tag; until then it waits, as a submitter
 * sleeping in blk_mq_get_tag would: behind those of its class that wait
 * already, never behind another class (blk_mq_tag_wakeup_list).
 */
void blk_mq_activate(struct request_queue *q, struct request *rq)
{
	struct rq_list *waitq = blk_mq_tag_waitq(q, rq);
	bool full;

	if (TAILQ_EMPTY(waitq)) {
		if (blk_mq_get_queue_tag(q, rq, &full))
			blk_mq_insert_request(q, rq);
		else
			TAILQ_INSERT_TAIL(waitq, rq, queuelist);
		return;
	}
	TAILQ_INSERT_TAIL(waitq, rq, queuelist);
	blk_mq_tag_wakeup_list(q, waitq);
}

/*
 * Queue lock held (request.c): rq has ended; its tags go back before its
 * epoch moves on, and what waited for them is marked to run.
 */
void blk_mq_free_rq_tags(struct request *rq)
{
	struct request_queue *q = rq->q;
	struct blk_mq_queue *mq = q->mq;
	struct blk_mq_hw_ctx *hctx = rq->tag >= 0 ? rq->mq_hctx : NULL;

	blk_mq_put_tag(&rq->mq_hctx->tags, rq->tag);
	blk_mq_put_tag(&mq->sched_tags, rq->internal_tag);
	rq->tag = rq->internal_tag = -1;
	blk_mq_tag_wakeup_list(q, &mq->tag_wait);
	for (unsigned int i = 0; i < mq->set->nr_hw_queues; i++)
		blk_mq_tag_wakeup_list(q, &mq->hctxs[i].tag_wait);
	blk_mq_sched_restart(q, hctx);
}

/*
 * Queue lock held: what nr_requests shows, and takes back unchanged.
 * Under an elevator, its scheduler tags (the queue's nr_requests); without
 * one, each hardware queue's driver tags, as Linux's blk-mq shows them.
 */
unsigned int blk_mq_nr_requests(const struct request_queue *q)
{
	return q->elevator ? q->limits.nr_requests : q->mq->hctxs[0].tags.nr_tags;
}

/*
 * Queue lock held: nr_requests written, as blk_mq_update_nr_requests()
 * takes it.  Under an elevator its scheduler tags become nr; without one
 * each hardware queue's driver tags do, at most the tag set's depth
 * (-EINVAL above it), until an elevator comes (blk_mq_sched_switch_finish
 * gives them back their depth).  The elevator is told (depth_updated).
 * Refused (-EBUSY) while a switch waits:
 * the tags it brings are sized already.  Tags out above a new, lower
 * depth stay out until they come back.  What waits for a tag and may take
 * one now is queued, and every hardware queue is marked to run: the
 * caller kicks the marked once it drops the lock (blk_mq_kick_marked).
 */
int blk_mq_update_nr_requests(struct request_queue *q, unsigned int nr)
{
	struct blk_mq_queue *mq = q->mq;
	unsigned int i, nr_hw = mq->set->nr_hw_queues;
	int ret = 0;

	if (q->switch_pending)
		return -EBUSY;
	if (!nr || (!q->elevator && nr > mq->set->queue_depth))
		return -EINVAL;
	if (q->elevator)
		ret = blk_mq_resize_tags(&mq->sched_tags, nr);
	for (i = 0; !q->elevator && i < nr_hw; i++)
		ret = blk_mq_resize_tags(&mq->hctxs[i].tags, nr); /* within its size: no allocation */
	if (ret)
		return ret;
	if (q->elevator) {
		q->limits.nr_requests = nr;
		elv_depth_updated(q);
	}
	blk_mq_tag_wakeup_list(q, &mq->tag_wait);
	for (i = 0; i < nr_hw; i++) {
		blk_mq_tag_wakeup_list(q, &mq->hctxs[i].tag_wait);
		blk_mq_mark(&mq->hctxs[i], BLK_MQ_S_RUN);
	}
	return 0;
}

/* Queue lock held: bio merges so far, of every kind (/sys/block/DEV/stat's). */
static uint64_t blk_mq_merges(const struct request_queue *q)
{
	uint64_t n = 0;

	for (int i = 0; i < NR_STAT_GROUPS; i++)
		n += q->stats.merges[i];
	return n;
}

/*
 * Queue lock held: bio from cpu made into requests (checks, barrier
 * epochs, bounce, split, merge, a request per piece in cpu's software
 * queue), with no kick of a hardware queue but the queue's request_fn
 * (a driver whose run_async only wakes a thread may kick there).  True
 * when a barrier moved the epoch on: every hardware queue has work.
 */
bool __blk_mq_submit_bio(struct request_queue *q, struct bio *bio, unsigned int cpu)
{
	struct blk_mq_queue *mq = q->mq;
	struct blk_mq_ctx *ctx = &mq->ctxs[cpu % mq->nr_ctx];
	uint64_t epoch = q->active_epoch;
	uint64_t merges = blk_mq_merges(q);

	mq->submit_ctx = ctx;
	__submit_bio(q, bio);
	mq->submit_ctx = NULL;
	merges = blk_mq_merges(q) - merges;
	if (merges)
		__atomic_fetch_add(&ctx->hctx->merged, (unsigned long)merges, __ATOMIC_RELAXED);
	return epoch != q->active_epoch;
}

/*
 * Submit bio from cpu (__blk_mq_submit_bio), then a kick of each hardware
 * queue it put work on (the submitter's; when a barrier moved the epoch
 * on, every one that the next epoch's requests went to).  A bio merged
 * into a queued request, or waiting for a tag, kicks nothing.
 */
void blk_mq_submit_bio(struct request_queue *q, struct bio *bio, unsigned int cpu)
{
	blk_queue_lock(q);
	__blk_mq_submit_bio(q, bio, cpu);
	blk_queue_unlock(q);
	blk_mq_kick_marked(q);
}

/*
 * End nr_sectors of rq (its bios in order, each exactly once, as
 * blk_end_request does), with error.  Returns true while sectors are
 * left.  Once it is all done its tags go back and the hardware queues
 * that end restarts or put work on are kicked (blk_mq_sched_restart).
 */
bool blk_mq_end_request(struct request *rq, int error, unsigned int nr_sectors)
{
	struct request_queue *q = rq->q;
	bool more;

	blk_queue_lock(q);
	more = end_that_request_first(rq, error, nr_sectors);
	if (!more)
		end_that_request_last(rq);
	blk_queue_unlock(q);
	if (!more)
		blk_mq_kick_marked(q);
	return more;
}

bool blk_mq_queue_idle(struct request_queue *q)
{
	return blk_queue_idle_unlocked(q);
}

/* The CPUs whose software queues feed hctx, as sysfs's cpu_list: "0, 2". */
void blk_mq_cpu_list(const struct blk_mq_hw_ctx *hctx, char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (unsigned int i = 0; i < hctx->nr_ctx && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%u", i ? ", " : "",
					 hctx->ctxs[i]->cpu);
}

static unsigned long counter_read(const unsigned long *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/*
 * One file of /sys/block/DEV/mq/N/ (nr_tags, cpu_list) or of its debugfs
 * twin (dispatched, merged, run, busy), with its newline: its length, or
 * -ENOENT for no such attribute.
 */
int blk_mq_hw_sysfs_show(const struct blk_mq_hw_ctx *hctx, const char *attr, char *buf,
			 size_t len)
{
	static const struct {
		const char *name;
		size_t offset;
	} counters[] = {
		{ "dispatched", offsetof(struct blk_mq_hw_ctx, dispatched) },
		{ "merged", offsetof(struct blk_mq_hw_ctx, merged) },
		{ "run", offsetof(struct blk_mq_hw_ctx, run) },
		{ "busy", offsetof(struct blk_mq_hw_ctx, busy) },
	};
	size_t n;

	if (!strcmp(attr, "nr_tags"))
		return snprintf(buf, len, "%u\n", hctx->tags.nr_tags);
	if (!strcmp(attr, "cpu_list")) {
		blk_mq_cpu_list(hctx, buf, len);
		n = strlen(buf);
		return snprintf(buf + n, len - n, "\n") + (int)n;
	}
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
		if (!strcmp(attr, counters[i].name))
			return snprintf(buf, len, "%lu\n",
					counter_read((const unsigned long *)((const char *)hctx +
									     counters[i].offset)));
	return -ENOENT;
}

unsigned int blk_mq_hctx_index(const struct blk_mq_hw_ctx *hctx)
{
	return hctx->queue_num;
}
