/* SPDX-License-Identifier: BSD-3-Clause */
/* queue.c - the request queue: bios in, requests out to the driver, in barrier order. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blkdev.h"
#include "blktrace.h"

#define BLK_UNPLUG_THRESH 4 /* a plugged queue this deep runs anyway, as 2.6 did */

struct request_queue *blk_init_queue(request_fn_proc *fn, pthread_mutex_t *lock,
				     const struct blk_clock *clock)
{
	struct request_queue *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	pthread_mutex_init(&q->__queue_lock, NULL);
	q->queue_lock = lock ? lock : &q->__queue_lock;
	q->request_fn = fn;
	q->clock = clock ? clock : &blk_real_clock;
	blk_set_default_limits(&q->limits);
	q->unplug_thresh = BLK_UNPLUG_THRESH;
	q->blk_trace_last = -1;
	blk_lock_stats_init(&q->lock_stats);
	TAILQ_INIT(&q->queue_head);
	TAILQ_INIT(&q->hold);
	for (int i = 0; i < 1 << ELV_HASH_BITS; i++) {
		LIST_INIT(&q->hash_start[i]);
		LIST_INIT(&q->hash_end[i]);
	}
	return q;
}

/* The queue must be idle: every submitted bio has ended. */
void blk_cleanup_queue(struct request_queue *q)
{
	if (!q)
		return;
	blk_trace_cleanup(q);
	free(q->blk_trace_name);
	if (q->elevator)
		elevator_exit(q->elevator);
	if (q->next_elevator)
		elevator_exit(q->next_elevator);
	pthread_mutex_destroy(&q->__queue_lock);
	free(q);
}

int blk_queue_set_limits(struct request_queue *q, const struct queue_limits *lim, char *why,
			 size_t whylen)
{
	int ret = blk_validate_limits(lim, why, whylen);

	if (!ret)
		q->limits = *lim;
	return ret;
}

/*
 * Lock held: queue/nr_requests written on a 2.6 queue: the requests the
 * driver may hold from now on, and the elevator's depth (depth_updated).
 */
void blk_queue_update_nr_requests(struct request_queue *q, unsigned int nr)
{
	q->limits.nr_requests = nr;
	elv_depth_updated(q);
}

/* name "none" (or NULL) bypasses the elevator: no sorting, no merging. */
int elevator_init(struct request_queue *q, const char *name)
{
	const struct elevator_type *type;
	char why[256];

	if (!name || !strcmp(name, "none"))
		return 0;
	type = elevator_get(name, why, sizeof(why));
	if (!type)
		return -ENOENT;
	q->elevator = elevator_alloc(q, type);
	return q->elevator ? 0 : -ENOMEM;
}

/* With lock statistics off, one branch more than the mutex (lock_stats.h). */
void blk_queue_lock(struct request_queue *q)
{
	if (__builtin_expect(blk_lock_stats_enabled(&q->lock_stats), 0))
		blk_lock_timed(&q->lock_stats, q->queue_lock);
	else
		pthread_mutex_lock(q->queue_lock);
}

void blk_queue_unlock(struct request_queue *q)
{
	if (__builtin_expect(q->lock_stats.timing, 0))
		blk_lock_timed_release(&q->lock_stats);
	pthread_mutex_unlock(q->queue_lock);
}

static int bio_check(const struct request_queue *q, const struct bio *bio)
{
	unsigned int lbs = q->limits.logical_block_size;

	if (bio->bi_op == REQ_OP_FLUSH)
		return bio->bi_size ? -EINVAL : 0;
	/* a limit of 0 is a device without the op, as submit_bio_noacct refuses it */
	if ((bio->bi_op == REQ_OP_DISCARD && !q->limits.max_discard_sectors) ||
	    (bio->bi_op == REQ_OP_WRITE_ZEROES && !q->limits.max_write_zeroes_sectors))
		return -EOPNOTSUPP;
	if (!bio->bi_size || bio->bi_size % lbs || (bio->bi_sector << SECTOR_SHIFT) % lbs)
		return -EINVAL;
	return 0;
}

/* One piece that fits the limits: merged into a queued request or made into a new one. */
static void blk_make_request(struct request_queue *q, struct bio *bio)
{
	struct request *rq;

	if (blk_try_merge_bio(q, bio))
		return;
	rq = blk_alloc_request(q, bio);
	if (!rq) {
		bio_endio(bio, -ENOMEM);
		return;
	}
	if (q->elevator && rq_mergeable(rq)) {
		elv_rqhash_add(q, rq);
		q->last_merge = rq;
	}
	blk_epoch_add(q, rq);
}

static void blk_submit_data(struct request_queue *q, struct bio *bio)
{
	struct bio *bounce;

	if (!blk_bio_needs_bounce(q, bio)) {
		blk_submit_split(q, bio, blk_make_request);
		return;
	}
	bounce = blk_bounce_range(q, bio, 0, bio->bi_size);
	if (bounce)
		blk_submit_split(q, bounce, blk_make_request);
	bio_endio(bio, bounce ? 0 : -ENOMEM);
}

/* generic_make_request: lock held. */
void __submit_bio(struct request_queue *q, struct bio *bio)
{
	bool barrier = bio->bi_op == REQ_OP_FLUSH || (bio->bi_flags & REQ_BARRIER);
	int err = bio_check(q, bio);

	bio->bi_next = NULL;
	bio->bi_done = 0;
	bio->bi_good = bio->bi_size;
	bio->bi_error = 0;
	bio->bi_state = 0;
	bio->bi_remaining = 1;
	if (!err)
		blk_add_trace_bio(q, bio, BLK_TA_QUEUE); /* as submitted: before any split or bounce */
	if (!err && barrier)
		err = blk_barrier_begin(q, bio);
	if (err) {
		bio_endio(bio, err);
		return;
	}
	if (bio->bi_op == REQ_OP_FLUSH)
		blk_make_request(q, bio);
	else
		blk_submit_data(q, bio);
	if (barrier)
		blk_barrier_end(q);
	if (!q->plugged || q->nr_queued - q->in_flight >= q->unplug_thresh)
		__blk_run_queue(q);
}

void submit_bio(struct request_queue *q, struct bio *bio)
{
	blk_queue_lock(q);
	__submit_bio(q, bio);
	blk_queue_unlock(q);
}

void blk_start_request(struct request_queue *q, struct request *rq, uint64_t now)
{
	rq->rq_flags |= RQF_STARTED;
	rq->io_start_time_ns = now;
	if (!rq->issue_nr_sectors) { /* not again after a requeue: a part may have ended */
		rq->issue_sector = blk_rq_pos(rq);
		rq->issue_nr_sectors = blk_rq_sectors(rq);
	}
	blk_add_trace_rq(q, rq, BLK_TA_ISSUE);
	q->in_flight++;
	blk_account_io_start(&q->stats, rq, now);
	blk_rq_init_walk(rq);
}

/* The elevator's next request, its time in the hook counted to it (lock_stats.h). */
static struct request *blk_elv_dispatch(struct request_queue *q, uint64_t now)
{
	uint64_t t0 = blk_elv_time_start(&q->lock_stats);
	struct request *rq = elv_next_request(q, now);

	blk_elv_time_end(&q->lock_stats, t0, rq ? &rq->elv_ns : NULL);
	return rq;
}

/*
 * The driver's next request, started, or NULL when none may go now (queue
 * depth reached, nothing ready, or a barrier epoch still draining).
 */
struct request *blk_fetch_request(struct request_queue *q)
{
	uint64_t now = blk_clock_now(q->clock);
	struct request *rq;

	while (q->in_flight < q->limits.nr_requests && !q->switch_pending) {
		rq = TAILQ_FIRST(&q->queue_head);
		if (rq)
			TAILQ_REMOVE(&q->queue_head, rq, queuelist);
		else if (q->elevator)
			rq = blk_elv_dispatch(q, now);
		if (!rq)
			return NULL;
		blk_start_request(q, rq, now);
		if (!rq->errors)
			return rq;
		/* its preflush failed: the barrier write must not reach the disk */
		end_that_request_first(rq, rq->errors, rq->hard_nr_sectors);
		end_that_request_last(rq);
	}
	return NULL;
}

/* The driver could not take rq after all: it goes first again. */
void blk_requeue_request(struct request_queue *q, struct request *rq)
{
	blk_add_trace_rq(q, rq, BLK_TA_REQUEUE);
	rq->rq_flags &= ~RQF_STARTED;
	q->in_flight--;
	q->stats.in_flight[rq_data_dir(rq)]--;
	TAILQ_INSERT_HEAD(&q->queue_head, rq, queuelist);
}

/* Call the driver, never re-entering it: a run asked for while it runs is done after. */
void __blk_run_queue(struct request_queue *q)
{
	if (q->running) {
		q->run_again = true;
		return;
	}
	do {
		q->running = true;
		q->run_again = false;
		q->request_fn(q);
		q->running = false;
	} while (q->run_again);
}

void blk_run_queue(struct request_queue *q)
{
	blk_queue_lock(q);
	__blk_run_queue(q);
	blk_queue_unlock(q);
}

/* Hold requests back so that a batch of bios can merge first. */
void blk_plug_device(struct request_queue *q)
{
	q->plugged = true;
}

void __blk_unplug(struct request_queue *q)
{
	q->plugged = false;
	__blk_run_queue(q);
}

void blk_unplug(struct request_queue *q)
{
	blk_queue_lock(q);
	__blk_unplug(q);
	blk_queue_unlock(q);
}

bool blk_queue_idle(struct request_queue *q)
{
	return q->nr_queued == 0;
}

/* blk_queue_idle() for a caller that does not hold the lock. */
bool blk_queue_idle_unlocked(struct request_queue *q)
{
	bool idle;

	blk_queue_lock(q);
	idle = blk_queue_idle(q);
	blk_queue_unlock(q);
	return idle;
}

void blk_queue_set_pdu_size(struct request_queue *q, size_t size)
{
	assert(!q->nr_queued); /* requests already made have no room for it */
	/* what follows a request keeps the alignment of anything in it */
	q->rq_pdu_size = (size + 15) & ~(size_t)15;
}
