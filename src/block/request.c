/* SPDX-License-Identifier: BSD-3-Clause */
/* request.c - a request's life: made from a bio, walked by the driver, ended in parts. */
#include <assert.h>
#include <stdlib.h>

#include "blk_mq.h"
#include "blktrace.h"

static bool bio_is_barrier(const struct bio *bio)
{
	return bio->bi_op == REQ_OP_FLUSH || (bio->bi_flags & REQ_BARRIER);
}

/* A new request of one bio (or of none, for a core-made flush) in the epoch bios join now. */
struct request *blk_alloc_request(struct request_queue *q, struct bio *bio)
{
	/* the device stack's bytes follow the request (blk_rq_pdu) */
	struct request *rq = calloc(1, sizeof(*rq) + q->rq_pdu_size);

	if (!rq)
		return NULL;
	rq->q = q;
	rq->seq = q->rq_seq++;
	rq->cmd_op = REQ_OP_FLUSH;
	rq->epoch = q->submit_epoch;
	rq->start_time_ns = blk_clock_now(q->clock);
	q->nr_queued++;
	if (q->mq)
		blk_mq_rq_init(q, rq);
	if (bio) {
		blk_rq_bio_prep(rq, bio);
		blk_add_trace_rq(q, rq, BLK_TA_GETRQ); /* a core-made flush's comes once it is set up */
	}
	return rq;
}

void blk_rq_bio_prep(struct request *rq, struct bio *bio)
{
	rq->cmd_op = bio->bi_op;
	rq->cmd_flags = bio->bi_flags;
	rq->pid = bio->bi_pid;
	rq->ioprio = bio->bi_ioprio;
	rq->blkcg = bio->bi_blkcg;
	rq->sector = rq->hard_sector = bio->bi_sector;
	rq->nr_sectors = rq->hard_nr_sectors = bio_sectors(bio);
	rq->bio = rq->biotail = bio;
	bio->bi_next = NULL;
	if (bio_is_barrier(bio))
		rq->rq_flags |= RQF_BARRIER;
	if (op_has_data(bio->bi_op))
		rq->nr_phys_segments = rq->nr_hw_segments =
			(unsigned short)blk_recount_segments(rq->q, bio, NULL);
}

void blk_free_request(struct request *rq)
{
	free(rq);
}

static void cbio_reset(struct request *rq, struct bio *bio)
{
	rq->cbio = bio;
	rq->cbio_idx = 0;
	rq->cbio_offset = 0;
	rq->nr_cbio_segments = bio ? bio->bi_vcnt : 0;
	rq->nr_cbio_sectors = bio ? bio_sectors(bio) : 0;
}

/* Put the submission position at the start of what is left to complete. */
void blk_rq_init_walk(struct request *rq)
{
	rq->sector = rq->hard_sector;
	rq->nr_sectors = rq->hard_nr_sectors;
	cbio_reset(rq, rq->bio);
}

static void cbio_advance_bytes(struct request *rq, size_t bytes)
{
	while (bytes && rq->cbio_idx < rq->cbio->bi_vcnt) {
		size_t left = rq->cbio->bi_io_vec[rq->cbio_idx].bv_len - rq->cbio_offset;

		if (bytes < left) {
			rq->cbio_offset += bytes;
			return;
		}
		bytes -= left;
		rq->cbio_idx++;
		rq->cbio_offset = 0;
		rq->nr_cbio_segments--;
	}
}

/*
 * Move the submission position on by nr_sectors without completing
 * anything.  Returns true while sectors are left to submit.
 */
bool process_that_request_first(struct request *rq, unsigned int nr_sectors)
{
	if (nr_sectors > rq->nr_sectors)
		nr_sectors = rq->nr_sectors;
	rq->sector += nr_sectors;
	rq->nr_sectors -= nr_sectors;
	while (nr_sectors && rq->cbio) {
		unsigned int n = nr_sectors < rq->nr_cbio_sectors ? nr_sectors : rq->nr_cbio_sectors;

		cbio_advance_bytes(rq, (size_t)n << SECTOR_SHIFT);
		rq->nr_cbio_sectors -= n;
		nr_sectors -= n;
		if (!rq->nr_cbio_sectors)
			cbio_reset(rq, rq->cbio->bi_next);
	}
	return rq->nr_sectors > 0;
}

/*
 * Complete nr_sectors from the completion position, ending each bio whose
 * sectors are all covered, in order, exactly once.  error sticks to every
 * bio it touches.  Returns true while the request has sectors left.
 */
bool end_that_request_first(struct request *rq, int error, unsigned int nr_sectors)
{
	struct bio *bio;

	if (error && !rq->errors)
		rq->errors = error;
	if (nr_sectors > rq->hard_nr_sectors)
		nr_sectors = rq->hard_nr_sectors;
	blk_account_io_sectors(&rq->q->stats, rq, nr_sectors);
	while ((bio = rq->bio)) {
		unsigned int left = (bio->bi_size - bio->bi_done) >> SECTOR_SHIFT;
		unsigned int n = nr_sectors < left ? nr_sectors : left;

		if (n && error && !bio->bi_error)
			bio->bi_error = error;
		if (n && error && bio->bi_done < bio->bi_good)
			bio->bi_good = bio->bi_done;
		bio->bi_done += n << SECTOR_SHIFT;
		rq->hard_sector += n;
		rq->hard_nr_sectors -= n;
		nr_sectors -= n;
		if (n < left)
			break;
		if (!left && error && !bio->bi_error)
			bio->bi_error = error;
		if (!left && error && bio->bi_done < bio->bi_good)
			bio->bi_good = bio->bi_done;
		rq->bio = bio->bi_next;
		bio->bi_next = NULL;
		bio_endio(bio, 0);
	}
	if (!rq->bio)
		rq->biotail = NULL;
	return rq->bio != NULL;
}

/* The request is done: account it, let the epoch move on, free it. */
void end_that_request_last(struct request *rq)
{
	struct request_queue *q = rq->q;
	struct elevator_queue *e = q->elevator;
	uint64_t now = blk_clock_now(q->clock);

	assert(!rq->bio);
	blk_add_trace_rq(q, rq, BLK_TA_COMPLETE);
	if (rq->rq_flags & RQF_STARTED) {
		q->in_flight--;
		blk_account_io_done(&q->stats, rq, now);
	}
	if ((rq->rq_flags & RQF_SORTED) && e && e->type->completed) {
		uint64_t t0 = blk_elv_time_start(&q->lock_stats);

		e->type->completed(e, rq);
		blk_elv_time_end(&q->lock_stats, t0, &rq->elv_ns);
	}
	if (rq->rq_flags & RQF_SORTED)
		blk_elv_time_request(&q->lock_stats, rq->elv_ns);
	q->nr_queued--;
	if (q->mq)
		blk_mq_free_rq_tags(rq); /* before the epoch moves on: what it lets in needs them */
	blk_epoch_done(q, rq);
	blk_free_request(rq);
	blk_elevator_switch_check(q);
}

/* Lock held.  Returns true while the request has sectors left. */
bool __blk_end_request(struct request *rq, int error, unsigned int nr_sectors)
{
	struct request_queue *q = rq->q;

	if (end_that_request_first(rq, error, nr_sectors))
		return true;
	end_that_request_last(rq);
	if (q->mq && q->mq->set->ops->run_async)
		blk_mq_kick_marked(q); /* only what the end restarted; run_async only wakes */
	else
		__blk_run_queue(q);
	return false;
}

bool blk_end_request(struct request *rq, int error, unsigned int nr_sectors)
{
	struct request_queue *q = rq->q;
	bool more;

	blk_queue_lock(q);
	more = __blk_end_request(rq, error, nr_sectors);
	blk_queue_unlock(q);
	return more;
}
