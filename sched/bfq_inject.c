/* SPDX-License-Identifier: BSD-3-Clause */
/* bfq_inject.c - BFQ's injection: other queues' requests while the disk idles for one. */

/*
 * After Linux's bfq_update_inject_limit and bfq_choose_bfqq_for_injection.
 * While the queue in service is idled for to keep its share (not for the
 * throughput), other queues' requests may go to the disk, at most
 * inject_limit of them out at once.  The limit is learnt per queue: the
 * base is the time from one of its requests arriving on an empty disk to
 * its completion; a request that arrived with injected ones out and took
 * 1.5 times the base or more lowers the limit, one that took less raises
 * it, up to one more than the disk was seen to hold.  Each second the
 * base is forgotten and the limit starts again from 0 (1 for a queue whose
 * think time is long).  A queue whose new requests come right after
 * another's complete has that one as its waker, whose requests are always
 * injected (bfq_check_waker).
 */
#include "bfq_impl.h"

/* Forget the base and start the limit again (bfq_reset_inject_limit). */
void bfq_reset_inject_limit(struct bfq_data *bfqd, struct bfq_queue *bfqq, uint64_t now)
{
	bfqq->last_serv_time_ns = 0;
	bfqd->waited_rq = NULL;
	bfqq->inject_limit = bfqq->has_short_ttime ? 0 : 1;
	bfqq->decrease_time = now;
}

/*
 * bfqq's I/O seems to wait for another queue's: three times in a row it got
 * a request within BFQ_WAKER_WINDOW_MS of that queue's last completion.
 */
static void bfq_check_waker(struct bfq_data *bfqd, struct bfq_queue *bfqq, uint64_t now)
{
	struct bfq_queue *last = bfqd->last_completed_rq_bfqq;

	if (!last || last == bfqq || bfqq->has_short_ttime ||
	    now - bfqd->last_completion >= BFQ_WAKER_WINDOW_MS * NSEC_PER_MSEC ||
	    last == &bfqd->oom_queue || bfqq == &bfqd->oom_queue)
		return;
	if (last != bfqq->tentative_waker ||
	    now > bfqq->waker_detection_started + 128 * bfqd->slice_idle) {
		bfqq->tentative_waker = last;
		bfqq->num_waker_detections = 1;
		bfqq->waker_detection_started = now;
	} else if (++bfqq->num_waker_detections == BFQ_WAKER_DETECTIONS) {
		bfqq->waker = last;
		bfqq->tentative_waker = NULL;
	}
}

/* A queue is freed: no queue keeps it as its waker. */
void bfq_waker_forget(struct bfq_data *bfqd, const struct bfq_queue *gone)
{
	struct bfq_queue *bfqq;

	if (bfqd->last_completed_rq_bfqq == gone)
		bfqd->last_completed_rq_bfqq = NULL;
	for (int i = 0; i < 1 << BFQ_HASH_BITS; i++)
		LIST_FOREACH(bfqq, &bfqd->hash[i], hash) {
			if (bfqq->waker == gone)
				bfqq->waker = NULL;
			if (bfqq->tentative_waker == gone)
				bfqq->tentative_waker = NULL;
		}
}

/*
 * A request joins bfqq (bfq_add_request): maybe a wake-up by another
 * queue; the limit's reset once a second; and, for the queue in service,
 * the start of a sample of its service time, from an empty disk (the
 * base) or with injected requests out (what the limit costs).
 */
void bfq_inject_on_add(struct bfq_data *bfqd, struct bfq_queue *bfqq, bool was_empty,
		       uint64_t now)
{
	if (bfqq->sync && was_empty)
		bfq_check_waker(bfqd, bfqq, now);
	if (now >= bfqq->decrease_time + BFQ_INJECT_RESET_MS * NSEC_PER_MSEC)
		bfq_reset_inject_limit(bfqd, bfqq, now);
	if (bfqq != bfqd->in_service ||
	    now < bfqq->decrease_time + BFQ_INJECT_SAMPLE_MS * NSEC_PER_MSEC)
		return;
	if (bfqd->rq_in_driver && !(bfqq->last_serv_time_ns && bfqd->rqs_injected))
		return;
	bfqd->last_empty_occupied_ns = now;
	bfqd->wait_dispatch = true;
	if (!bfqd->rq_in_driver)
		bfqd->rqs_injected = false; /* injection before rq costs it nothing */
}

/* The waited-for request of bfqq completed: adjust the limit (bfq_update_inject_limit). */
void bfq_update_inject_limit(struct bfq_data *bfqd, struct bfq_queue *bfqq, uint64_t now)
{
	uint64_t tot = now - bfqd->last_empty_occupied_ns;
	unsigned int old_limit = bfqq->inject_limit;

	if (bfqq->last_serv_time_ns && bfqd->rqs_injected) {
		uint64_t threshold = bfqq->last_serv_time_ns * 3 / 2;

		if (tot >= threshold && old_limit) {
			bfqq->inject_limit--;
			bfqq->decrease_time = now;
		} else if (tot < threshold && old_limit <= bfqd->max_rq_in_driver) {
			bfqq->inject_limit++;
		}
	}
	/* rq_in_driver still counts rq: 1 means it was alone on the disk */
	if ((!bfqq->last_serv_time_ns && bfqd->rq_in_driver == 1) ||
	    tot < bfqq->last_serv_time_ns) {
		if (!bfqq->last_serv_time_ns && !bfqq->inject_limit)
			bfqq->inject_limit = 1; /* a base at last: try injecting */
		bfqq->last_serv_time_ns = tot;
	} else if (!bfqd->rqs_injected && bfqd->rq_in_driver == 1) {
		bfqq->last_serv_time_ns = tot;
	}
	bfqd->waited_rq = NULL;
	bfqd->rqs_injected = false;
}

static bool bfq_fits_budget(const struct bfq_queue *bfqq)
{
	return bfqq && bfqq->busy && bfqq->next_rq &&
	       bfq_serv_to_charge(bfqq->next_rq, bfqq) <=
		       bfqq->entity.budget - bfqq->entity.service;
}

/* A queue waiting in sd's trees, not a group, that may have a request injected. */
static struct bfq_queue *bfq_injectable_in(struct bfq_data *bfqd, struct bfq_sched_data *sd,
					   bool always)
{
	for (int c = 0; c < BFQ_NR_CLASSES; c++) {
		struct bfq_entity *en;

		TAILQ_FOREACH(en, &sd->st[c].active, link) {
			struct bfq_queue *bfqq;

			if (en->my_sched_data)
				continue; /* a group: its queues are in its own trees */
			bfqq = entity_bfqq(en);
			/* flash serves one large request at a time best: none beside another */
			if (blk_queue_nonrot(bfqd->queue) && bfqd->rq_in_driver &&
			    bfqq->next_rq && blk_rq_sectors(bfqq->next_rq) >= BFQQ_SECT_THR_NONROT)
				continue;
			if ((always || bfqq->wr_coeff > 1) && bfq_fits_budget(bfqq)) {
				bfqd->rqs_injected = true;
				return bfqq;
			}
		}
	}
	return NULL;
}

/* A queue whose request may go while the disk idles for in (bfq_choose_bfqq_for_injection). */
static struct bfq_queue *bfq_choose_for_injection(struct bfq_data *bfqd, struct bfq_queue *in,
						  uint64_t now)
{
	bool always = in->wr_coeff == 1 || !in->has_short_ttime;
	unsigned int limit = in->inject_limit;

	/* no base yet, and the idling has gone on for slice_idle: one at least */
	if (!limit && !in->last_serv_time_ns && in->wait_request &&
	    now >= bfqd->last_idling_start + bfqd->slice_idle)
		limit = 1;
	if (bfqd->rq_in_driver >= limit)
		return NULL;
	for (struct bfq_sched_data *sd = bfq_sd_next(bfqd, NULL); sd; sd = bfq_sd_next(bfqd, sd)) {
		struct bfq_queue *bfqq = bfq_injectable_in(bfqd, sd, always);

		if (bfqq)
			return bfqq;
	}
	return NULL;
}

/*
 * The disk idles for in, which has nothing queued: a queue to serve one
 * request from meanwhile, or NULL.  in's waker first, whatever the limit;
 * then, where idling is for in's share and not for the throughput, and in
 * is not a raised queue whose next request is near, within the limit.
 */
struct bfq_queue *bfq_inject_queue(struct bfq_data *bfqd, struct bfq_queue *in, uint64_t now)
{
	/* the service order is to be kept exactly: nothing jumps it */
	if (bfqd->strict_guarantees)
		return NULL;
	if (bfq_fits_budget(in->waker))
		return in->waker;
	if (!bfq_idling_boosts_thr(bfqd, in) &&
	    (in->wr_coeff == 1 || bfqd->wr_busy_queues > 1 || !in->has_short_ttime))
		return bfq_choose_for_injection(bfqd, in, now);
	return NULL;
}
