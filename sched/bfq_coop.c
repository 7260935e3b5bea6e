/* SPDX-License-Identifier: BSD-3-Clause */
/* bfq_coop.c - cooperating processes: queues of close I/O merged into one, and split again. */

/*
 * After Linux's bfq_setup_cooperator, bfq_merge_bfqqs and bfq_split_bfqq.
 * Processes that read one file in turns (a dump's threads, QEMU's I/O
 * threads) each look sequential to bfq, but served apart each leaves a
 * hole the disk must turn over; merged into one queue their requests go
 * out in the file's order.  A merge is a redirection: the process's own
 * queue stays (with its history, as Linux keeps it in the bfq_io_cq) and
 * points at the shared queue, where its requests go from then on.  When
 * the shared queue turns seeky the processes part again at their next
 * request, back to their own queues, unless they were merged by stable
 * merging, whose queues stay together.
 *
 * Finding a cooperator walks the busy queues (Linux keeps them in a tree
 * by position): a queue looks for one only in the first 100 ms of its
 * I/O, so the walk is paid by young queues alone.
 */
#include "bfq_impl.h"

#define MS(x) ((uint64_t)(x) * NSEC_PER_MSEC)

/* The queue the process's requests go to now: its own, or the one it was merged into. */
struct bfq_queue *bfq_coop_lookup(struct bfq_queue *own)
{
	while (own->merged)
		own = own->merged;
	return own;
}

/* Merging is for the first BFQ_MERGE_TIME_LIMIT_MS of a queue's I/O (bfq_too_late_for_merging). */
static bool bfq_too_late_for_merging(const struct bfq_queue *bfqq, uint64_t now)
{
	return bfqq->first_io_time && now > bfqq->first_io_time + MS(BFQ_MERGE_TIME_LIMIT_MS);
}

/*
 * Of one group, and of the same weight before raising: Linux merges only
 * queues of one group, and per-process weights stand for groups too.
 */
static bool bfq_same_group(const struct bfq_data *bfqd, const struct bfq_queue *a,
			   const struct bfq_queue *b)
{
	return a->group == b->group && bfq_orig_weight(bfqd, a) == bfq_orig_weight(bfqd, b);
}

/* Sync queues of one class, not the idle one, both young (bfq_may_be_close_cooperator). */
static bool bfq_may_be_close_cooperator(const struct bfq_data *bfqd, const struct bfq_queue *bfqq,
					const struct bfq_queue *coop, uint64_t now)
{
	return coop != &bfqd->oom_queue && !bfq_too_late_for_merging(coop, now) &&
	       bfqq->class != BFQ_CLASS_IDLE && bfqq->class == coop->class && bfqq->sync &&
	       coop->sync && bfq_same_group(bfqd, bfqq, coop);
}

static sector_t bfq_dist(sector_t a, sector_t b)
{
	return a > b ? a - b : b - a;
}

/* The busy queue whose next request is closest to sector, within BFQQ_CLOSE_THR. */
static struct bfq_queue *bfq_find_close_cooperator(struct bfq_data *bfqd,
						   const struct bfq_queue *bfqq, sector_t sector)
{
	struct bfq_queue *q, *best = NULL;
	sector_t best_dist = BFQQ_CLOSE_THR + 1;

	for (int i = 0; i < 1 << BFQ_HASH_BITS; i++)
		LIST_FOREACH(q, &bfqd->hash[i], hash) {
			sector_t d;

			if (q == bfqq || q->merged || !q->busy || !q->next_rq)
				continue;
			d = bfq_dist(blk_rq_pos(q->next_rq), sector);
			if (d < best_dist) {
				best = q;
				best_dist = d;
			}
		}
	return best;
}

/* bfqq's processes send their requests to coop from now on (bfq_merge_bfqqs). */
static void bfq_merge_bfqqs(struct bfq_data *bfqd, struct bfq_queue *bfqq,
			    struct bfq_queue *coop, uint64_t now)
{
	bfqq->merged = coop;
	coop->nr_merged++;
	coop->coop = true;
	bfqq->just_created = false;
	/* waiting for the process's next request here would idle the disk for nothing */
	if (bfqq == bfqd->in_service && bfqq->wait_request && !bfqq->queued)
		bfq_expire(bfqd, bfqq, false, BFQQE_NO_MORE_REQUESTS, now);
}

/* own goes back to serving its process alone (bfq_split_bfqq). */
static void bfq_split_bfqq(struct bfq_queue *own, uint64_t now)
{
	struct bfq_queue *shared = own->merged;

	own->merged = NULL;
	own->split_time = now;
	if (!--shared->nr_merged)
		shared->coop = shared->split_coop = false;
}

/*
 * Whether idling for the queue would boost the throughput with no harm to
 * others (idling_boosts_thr_without_issues): on a disk that does not
 * queue, or for sequential I/O of short think time, and while no raised
 * queue waits for the disk.  Such a queue is better served alone than
 * stably merged.
 */
static bool bfq_worth_keeping_apart(const struct bfq_data *bfqd, const struct bfq_queue *bfqq)
{
	return (bfq_rot_without_queueing(bfqd) ||
		((!blk_queue_nonrot(bfqd->queue) || bfqd->hw_tag != 1) && !bfq_seeky(bfqq) &&
		 bfqq->has_short_ttime)) &&
	       !bfqd->wr_busy_queues;
}

/* The planned stable merge of own, now it is old enough (bfq_setup_cooperator's first part). */
static struct bfq_queue *bfq_stable_merge(struct bfq_data *bfqd, struct bfq_queue *own,
					  uint64_t now)
{
	struct bfq_queue *target = own->stable_merge_bfqq;

	if (!target || own->merged || own->just_created ||
	    now <= own->split_time + MS(BFQ_LATE_STABLE_MERGING_MS) ||
	    now <= own->creation_time + MS(BFQ_LATE_STABLE_MERGING_MS))
		return NULL;
	own->stable_merge_bfqq = NULL;
	target = bfq_coop_lookup(target);
	if (target == own || bfq_worth_keeping_apart(bfqd, own))
		return NULL;
	own->stably_merged = target->stably_merged = true;
	return target;
}

/* Where rq's queue should go, if anywhere (bfq_setup_cooperator). */
static struct bfq_queue *bfq_setup_cooperator(struct bfq_data *bfqd, struct bfq_queue *bfqq,
					      struct bfq_queue *own, const struct request *rq,
					      uint64_t now)
{
	struct bfq_queue *in = bfqd->in_service, *coop;

	if (!bfq_nonrot_with_queueing(bfqd) && bfqq == own) {
		coop = bfq_stable_merge(bfqd, own, now);
		if (coop)
			return coop;
	}
	/*
	 * Flash that queues gains nothing from fewer, larger queues.  Nothing
	 * to look for if bfqq will be the only queue with requests: Linux
	 * counts the busy queues before bfqq joins them, and so lets the
	 * second of three readers started together keep its first request
	 * apart, a hole in the merged queue's stream it never fills.
	 */
	if (bfq_nonrot_with_queueing(bfqd) || bfq_too_late_for_merging(bfqq, now) ||
	    bfqd->busy_queues + !bfqq->busy <= 1)
		return NULL;
	if (in && in != bfqq && in != &bfqd->oom_queue && !in->merged &&
	    bfq_dist(blk_rq_pos(rq), bfqd->last_position) <= BFQQ_CLOSE_THR &&
	    bfq_may_be_close_cooperator(bfqd, bfqq, in, now))
		return in;
	coop = bfq_find_close_cooperator(bfqd, bfqq, blk_rq_pos(rq));
	if (coop && bfq_may_be_close_cooperator(bfqd, bfqq, coop, now))
		return coop;
	return NULL;
}

/*
 * The queue rq goes to, own being its process's: own, or a queue it was
 * merged into, or one it merges into now; a merged process whose shared
 * queue turned seeky is split off first.
 */
struct bfq_queue *bfq_coop_queue(struct bfq_data *bfqd, struct bfq_queue *own,
				 const struct request *rq, uint64_t now)
{
	struct bfq_queue *bfqq, *coop;

	if (own == &bfqd->oom_queue || !own->sync)
		return own;
	if (!own->first_io_time)
		own->first_io_time = now;
	bfqq = bfq_coop_lookup(own);
	if (bfqq != own && bfqq->split_coop && !own->stably_merged) {
		bfq_split_bfqq(own, now);
		bfqq = own;
	}
	coop = bfq_setup_cooperator(bfqd, bfqq, own, rq, now);
	if (coop) {
		bfq_merge_bfqqs(bfqd, bfqq, coop, now);
		bfqq = coop;
	}
	return bfqq;
}

/*
 * A new sync queue (bfq_do_or_sched_stable_merge): made within the burst
 * interval of the last one made, of the same class and level, it is to
 * be merged into that one: at once on flash that queues, where keeping
 * them apart gains nothing, later (bfq_stable_merge) on a disk that seeks.
 */
void bfq_coop_created(struct bfq_data *bfqd, struct bfq_queue *bfqq, uint64_t now)
{
	struct bfq_queue *last = bfqd->last_bfqq_created;

	bfqq->creation_time = now;
	if (!last || now > last->creation_time + MS(BFQ_ACTIVATION_STABLE_MERGING_MS) ||
	    last->class != bfqq->class || last->level != bfqq->level ||
	    !bfq_same_group(bfqd, last, bfqq)) {
		bfqd->last_bfqq_created = bfqq;
	} else if (now <= last->creation_time + MS(BFQ_BURST_INTERVAL_MS)) {
		if (bfq_nonrot_with_queueing(bfqd)) {
			last = bfq_coop_lookup(last);
			bfqq->stably_merged = last->stably_merged = true;
			bfq_merge_bfqqs(bfqd, bfqq, last, now);
		} else {
			bfqq->stable_merge_bfqq = last;
		}
	}
}

/* A shared queue that expires seeky is split at its processes' next requests. */
void bfq_coop_expired(struct bfq_queue *bfqq)
{
	if (bfqq->coop && bfq_seeky(bfqq))
		bfqq->split_coop = true;
}

/* gone is being freed: nothing may point at it any longer. */
void bfq_coop_forget(struct bfq_data *bfqd, struct bfq_queue *gone)
{
	struct bfq_queue *q;

	if (bfqd->last_bfqq_created == gone)
		bfqd->last_bfqq_created = NULL;
	if (gone->merged)
		bfq_split_bfqq(gone, 0);
	for (int i = 0; i < 1 << BFQ_HASH_BITS; i++)
		LIST_FOREACH(q, &bfqd->hash[i], hash) {
			if (q->merged == gone)
				q->merged = NULL;
			if (q->stable_merge_bfqq == gone)
				q->stable_merge_bfqq = NULL;
		}
}
