/* SPDX-License-Identifier: BSD-3-Clause */
/* merge.c - segments, merging, splitting and scatter/gather under the queue limits. */
#include <errno.h>
#include <stdint.h>

#include "blkdev.h"
#include "blktrace.h"

/*
 * Segments are built greedily, the same way when counting, splitting and
 * mapping, so a request never maps to more entries than were counted.
 */
struct seg_walk {
	const struct queue_limits *lim;
	char *start; /* the open segment, NULL before the first */
	size_t len;
	unsigned int nsegs;
	unsigned int max_segs; /* a new segment past this many is refused */
	struct iovec *sg;      /* where to write the entries, or NULL */
};

static void seg_walk_init(struct seg_walk *w, const struct queue_limits *lim, unsigned int max,
			  struct iovec *sg)
{
	*w = (struct seg_walk){ .lim = lim, .max_segs = max, .sg = sg };
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* Bytes from addr to the next segment boundary. */
static size_t boundary_room(const struct queue_limits *lim, const char *addr)
{
	return lim->seg_boundary_mask - ((uintptr_t)addr & lim->seg_boundary_mask) + 1;
}

static bool seg_can_extend(const struct seg_walk *w, const char *p)
{
	return w->start && w->start + w->len == p && w->len < w->lim->max_segment_size &&
	       ((uintptr_t)p & w->lim->seg_boundary_mask) != 0;
}

/* Add len bytes at addr; returns the bytes taken, short only at max_segs. */
static size_t seg_add(struct seg_walk *w, char *addr, size_t len)
{
	size_t taken = 0;

	while (taken < len) {
		char *p = addr + taken;
		size_t room;

		if (seg_can_extend(w, p)) {
			room = w->lim->max_segment_size - w->len;
		} else {
			if (w->nsegs == w->max_segs)
				break;
			w->start = p;
			w->len = 0;
			w->nsegs++;
			room = w->lim->max_segment_size;
		}
		room = min_size(min_size(room, boundary_room(w->lim, p)), len - taken);
		w->len += room;
		taken += room;
		if (w->sg)
			w->sg[w->nsegs - 1] = (struct iovec){ w->start, w->len };
	}
	return taken;
}

static void seg_add_chain(struct seg_walk *w, struct bio *bio)
{
	for (; bio; bio = bio->bi_next)
		for (unsigned short i = 0; i < bio->bi_vcnt; i++)
			seg_add(w, bio->bi_io_vec[i].bv_base, bio->bi_io_vec[i].bv_len);
}

/* Segments of two bio chains laid end to end; one past the limit means "too many". */
unsigned int blk_recount_segments(struct request_queue *q, struct bio *first, struct bio *second)
{
	struct seg_walk w;

	seg_walk_init(&w, &q->limits, queue_max_segments(&q->limits) + 1, NULL);
	seg_add_chain(&w, first);
	seg_add_chain(&w, second);
	return w.nsegs;
}

bool rq_mergeable(const struct request *rq)
{
	return !(rq->rq_flags & (RQF_STARTED | RQF_BARRIER)) && rq->cmd_op != REQ_OP_FLUSH &&
	       !(rq->cmd_flags & (REQ_FUA | REQ_BARRIER | REQ_PREFLUSH));
}

static bool bio_mergeable(const struct bio *bio)
{
	return bio->bi_op != REQ_OP_FLUSH && !(bio->bi_flags & (REQ_FUA | REQ_BARRIER));
}

/*
 * Same kind of I/O at the same priority from the same cgroup in the epoch
 * the bio joins: discards never meet reads or writes, an idle-class bio
 * never rides in a real-time request (nor the other way round), and a
 * group's bio is never served as another group's (blk_cgroup_mergeable),
 * as in Linux.
 */
static bool blk_rq_merge_ok(struct request_queue *q, const struct request *rq,
			    const struct bio *bio)
{
	return rq_mergeable(rq) && rq->cmd_op == bio->bi_op && rq->ioprio == bio->bi_ioprio &&
	       rq->blkcg == bio->bi_blkcg && rq->epoch == q->submit_epoch;
}

static enum elv_merge blk_try_merge(const struct request *rq, const struct bio *bio)
{
	if (blk_rq_end_sector(rq) == bio->bi_sector)
		return ELEVATOR_BACK_MERGE;
	if (blk_rq_pos(rq) == bio_end_sector(bio))
		return ELEVATOR_FRONT_MERGE;
	return ELEVATOR_NO_MERGE;
}

static bool ll_sectors_ok(struct request_queue *q, const struct request *rq, unsigned int more)
{
	return blk_rq_sectors(rq) + more <= queue_max_sectors(&q->limits, rq->cmd_op);
}

static bool ll_new_segments(struct request_queue *q, struct request *rq, struct bio *first,
			    struct bio *second)
{
	unsigned int n;

	if (!op_has_data(rq->cmd_op))
		return true;
	n = blk_recount_segments(q, first, second);
	if (n > queue_max_segments(&q->limits))
		return false;
	rq->nr_phys_segments = rq->nr_hw_segments = n;
	return true;
}

static bool ll_vetoed(struct request_queue *q, const struct request *rq, const struct bio *bio)
{
	return q->merge_bvec_fn && !q->merge_bvec_fn(q, rq, bio);
}

bool ll_back_merge_fn(struct request_queue *q, struct request *rq, struct bio *bio)
{
	return ll_sectors_ok(q, rq, bio_sectors(bio)) && !ll_vetoed(q, rq, bio) &&
	       ll_new_segments(q, rq, rq->bio, bio);
}

bool ll_front_merge_fn(struct request_queue *q, struct request *rq, struct bio *bio)
{
	return ll_sectors_ok(q, rq, bio_sectors(bio)) && !ll_vetoed(q, rq, bio) &&
	       ll_new_segments(q, rq, bio, rq->bio);
}

static void rq_grow(struct request *rq, unsigned int sectors)
{
	rq->nr_sectors += sectors;
	rq->hard_nr_sectors += sectors;
}

/* Two queued requests become one when a bio closed the gap between them. */
static bool attempt_merge(struct request_queue *q, struct request *rq, struct request *next)
{
	struct elevator_queue *e = q->elevator;

	/* after a front merge rq is whatever ends where next starts: maybe nothing */
	if (!rq || !next || next == rq || !rq_mergeable(next) || next->cmd_op != rq->cmd_op ||
	    next->ioprio != rq->ioprio || next->blkcg != rq->blkcg || next->epoch != rq->epoch ||
	    (rq->rq_flags & RQF_HELD) != (next->rq_flags & RQF_HELD))
		return false;
	/* both wait in the elevator, or both in the hold list: nowhere else */
	if (!(next->rq_flags & (RQF_ELVPRIV | RQF_HELD)) ||
	    (rq->rq_flags & (RQF_ELVPRIV | RQF_HELD)) != (next->rq_flags & (RQF_ELVPRIV | RQF_HELD)))
		return false;
	if ((rq->rq_flags & RQF_ELVPRIV) && !e->type->requests_merged)
		return false;
	if (blk_rq_end_sector(rq) != blk_rq_pos(next) ||
	    !ll_sectors_ok(q, rq, blk_rq_sectors(next)) || ll_vetoed(q, rq, next->bio) ||
	    !ll_new_segments(q, rq, rq->bio, next->bio))
		return false;

	if (rq->rq_flags & RQF_ELVPRIV) {
		uint64_t t0 = blk_elv_time_start(&q->lock_stats);

		e->type->requests_merged(e, rq, next);
		blk_elv_time_end(&q->lock_stats, t0, &rq->elv_ns);
	} else if (rq->rq_flags & RQF_HELD)
		TAILQ_REMOVE(&q->hold, next, holdlist);
	elv_rqhash_del(q, next);
	rq->biotail->bi_next = next->bio;
	rq->biotail = next->biotail;
	rq_grow(rq, blk_rq_sectors(next));
	rq->elv_ns += next->elv_ns; /* one request now: the elevator's time for both is its */
	if (next->start_time_ns < rq->start_time_ns)
		rq->start_time_ns = next->start_time_ns;
	elv_rqhash_reposition(q, rq);
	if (q->last_merge == next)
		q->last_merge = rq;
	blk_account_io_merge(&q->stats, rq);
	if (!(next->rq_flags & RQF_HELD))
		q->epoch_count--;
	q->nr_queued--;
	blk_free_request(next);
	return true;
}

static bool bio_attempt_back_merge(struct request_queue *q, struct request *rq, struct bio *bio)
{
	if (!ll_back_merge_fn(q, rq, bio))
		return false;
	blk_add_trace_bio(q, bio, BLK_TA_BACKMERGE);
	rq->biotail->bi_next = bio;
	rq->biotail = bio;
	bio->bi_next = NULL;
	rq_grow(rq, bio_sectors(bio));
	return true;
}

static bool bio_attempt_front_merge(struct request_queue *q, struct request *rq, struct bio *bio)
{
	if (!ll_front_merge_fn(q, rq, bio))
		return false;
	blk_add_trace_bio(q, bio, BLK_TA_FRONTMERGE);
	bio->bi_next = rq->bio;
	rq->bio = bio;
	rq->sector = rq->hard_sector = bio->bi_sector;
	rq_grow(rq, bio_sectors(bio));
	return true;
}

static bool blk_merge_bio(struct request_queue *q, struct request *rq, struct bio *bio,
			  enum elv_merge type)
{
	struct elevator_queue *e = q->elevator;
	bool ok = type == ELEVATOR_BACK_MERGE ? bio_attempt_back_merge(q, rq, bio)
					      : bio_attempt_front_merge(q, rq, bio);

	if (!ok)
		return false;
	elv_rqhash_reposition(q, rq);
	blk_account_io_merge(&q->stats, rq);
	/* rq's start moved: the elevator's sorted tree follows before the elevator hears of it */
	if ((rq->rq_flags & RQF_ELVPRIV) && type == ELEVATOR_FRONT_MERGE)
		elv_rb_reposition(rq);
	if ((rq->rq_flags & RQF_ELVPRIV) && e->type->request_merged) {
		uint64_t t0 = blk_elv_time_start(&q->lock_stats);

		e->type->request_merged(e, rq, type);
		blk_elv_time_end(&q->lock_stats, t0, &rq->elv_ns);
	}
	q->last_merge = rq;
	if (q->limits.nomerges != BLK_MERGES_ALL)
		return true;
	if (type == ELEVATOR_BACK_MERGE)
		attempt_merge(q, rq, elv_rqhash_find_start(q, blk_rq_end_sector(rq), rq->epoch));
	else
		attempt_merge(q, elv_rqhash_find_end(q, blk_rq_pos(rq), rq->epoch), rq);
	return true;
}

static bool blk_try_type(struct request_queue *q, struct request *rq, struct bio *bio,
			 enum elv_merge type)
{
	return rq && type != ELEVATOR_NO_MERGE && blk_rq_merge_ok(q, rq, bio) &&
	       blk_try_merge(rq, bio) == type && blk_merge_bio(q, rq, bio, type);
}

/* The elevator's merge candidate in *rq, its time in the hook counted to it if any. */
static enum elv_merge blk_elv_find_merge(struct request_queue *q, struct bio *bio,
					 struct request **rq)
{
	struct elevator_queue *e = q->elevator;
	uint64_t t0 = blk_elv_time_start(&q->lock_stats);
	enum elv_merge type;

	*rq = NULL;
	type = e->type->find_merge(e, bio, rq);
	blk_elv_time_end(&q->lock_stats, t0, *rq ? &(*rq)->elv_ns : NULL);
	return type;
}

/* The core's merge lookup: last-merge cache, back merge by end sector, then the elevator's. */
bool blk_try_merge_bio(struct request_queue *q, struct bio *bio)
{
	struct elevator_queue *e = q->elevator;
	struct request *rq = q->last_merge;

	if (!e || q->limits.nomerges == BLK_MERGES_NONE || !bio_mergeable(bio))
		return false;
	if (rq && blk_try_type(q, rq, bio, blk_try_merge(rq, bio)))
		return true;
	if (q->limits.nomerges == BLK_MERGES_ONE_HIT)
		return false;
	rq = elv_rqhash_find_end(q, bio->bi_sector, q->submit_epoch);
	if (blk_try_type(q, rq, bio, ELEVATOR_BACK_MERGE))
		return true;
	if (!e->type->find_merge || q->submit_epoch != q->active_epoch)
		return false;
	return blk_try_type(q, rq, bio, blk_elv_find_merge(q, bio, &rq));
}

/* blk_rq_map_sg: the request's memory as iovecs, joining what is contiguous. */
int blk_rq_map_sg(struct request_queue *q, struct request *rq, struct iovec *sg)
{
	struct seg_walk w;

	seg_walk_init(&w, &q->limits, UINT32_MAX, sg);
	seg_add_chain(&w, rq->bio);
	return (int)w.nsegs;
}

/*
 * The bytes of bio from offset that one request can carry: 0 if not even
 * one block, or if the memory there is not on the dma alignment.
 */
static size_t blk_split_point(struct request_queue *q, struct bio *bio, size_t offset)
{
	const struct queue_limits *lim = &q->limits;
	size_t budget = (size_t)queue_max_sectors(lim, bio->bi_op) << SECTOR_SHIFT;
	size_t left = bio->bi_size - offset, fit = 0, unit;
	struct seg_walk w;

	if (!op_has_data(bio->bi_op))
		return min_size(left, budget);
	budget = min_size(budget, left);
	seg_walk_init(&w, lim, queue_max_segments(lim), NULL);
	for (unsigned short i = 0; i < bio->bi_vcnt && fit < budget; i++) {
		const struct bio_vec *bv = &bio->bi_io_vec[i];
		size_t skip = min_size(offset, bv->bv_len);
		size_t want = min_size(bv->bv_len - skip, budget - fit);
		size_t got;

		offset -= skip;
		if (!want)
			continue;
		/* an earlier cut left this piece's memory off the dma alignment */
		if (!fit && ((uintptr_t)bv->bv_base + skip) & lim->dma_alignment)
			return 0;
		got = seg_add(&w, (char *)bv->bv_base + skip, want);
		fit += got;
		if (got < want)
			break;
	}
	if (fit == left)
		return fit;
	/* whole blocks, and the next piece's memory still on the dma alignment */
	unit = lim->logical_block_size > lim->dma_alignment + 1 ? lim->logical_block_size
								 : lim->dma_alignment + 1;
	return fit - fit % unit;
}

/*
 * Cut bio into pieces that each fit one request.  What cannot be cut well
 * (memory split so finely that not one block fits the segment limit, or a
 * cut that left the rest off the dma alignment) is copied straight first.
 */
void blk_submit_split(struct request_queue *q, struct bio *bio,
		      void (*make_request)(struct request_queue *, struct bio *))
{
	size_t offset = 0;
	size_t n = blk_split_point(q, bio, 0);

	if (n == bio->bi_size) {
		make_request(q, bio);
		return;
	}
	q->split++;
	while (offset < bio->bi_size) {
		struct bio *piece;

		n = blk_split_point(q, bio, offset);
		piece = n ? bio_clone_range(bio, offset, (unsigned int)n)
			  : blk_bounce_range(q, bio, offset, (unsigned int)(bio->bi_size - offset));
		if (!piece) {
			bio->bi_error = bio->bi_error ? bio->bi_error : -ENOMEM;
			if (offset < bio->bi_good) /* nothing from here on is read */
				bio->bi_good = (unsigned int)offset;
			break;
		}
		if (n && offset + n < bio->bi_size)
			blk_add_trace_split(q, piece, bio_end_sector(piece));
		if (n)
			make_request(q, piece);
		else
			blk_submit_split(q, piece, make_request);
		offset += n ? n : bio->bi_size - offset;
	}
	bio_endio(bio, 0); /* the submitter's reference: the pieces hold the bio now */
}
