/* SPDX-License-Identifier: BSD-3-Clause */
/* bfq_weight.c - BFQ's weights: a process's or its level's, raised for interactive I/O. */
#include <stdint.h>

#include "bfq_impl.h"

/* ---- per-process weights (cgroup io.bfq.weight) ---- */

struct bfq_weight *bfq_weight_find(const struct bfq_data *bfqd, pid_t pid)
{
	for (unsigned int i = 0; i < bfqd->nr_weights; i++)
		if (bfqd->weights[i].pid == pid)
			return &bfqd->weights[i];
	return NULL;
}

/* The weight the queue is served with when not raised: its process's, or its level's. */
unsigned int bfq_orig_weight(const struct bfq_data *bfqd, const struct bfq_queue *bfqq)
{
	const struct bfq_weight *w = bfqq->sync ? bfq_weight_find(bfqd, bfqq->pid) : NULL;

	return w ? w->weight : bfq_ioprio_to_weight(bfqq->level);
}

void bfq_update_weight(const struct bfq_data *bfqd, struct bfq_queue *bfqq)
{
	bfq_entity_set_weight(&bfqq->entity, bfq_orig_weight(bfqd, bfqq) * bfqq->wr_coeff);
}

/* ---- weight raising ---- */

static uint64_t bfq_wr_duration(const struct bfq_data *bfqd)
{
	bool nonrot = blk_queue_nonrot(bfqd->queue);
	uint64_t ref_ms = nonrot ? BFQ_WR_REF_DURATION_NONROT_MS : BFQ_WR_REF_DURATION_MS;
	uint64_t ms = ref_ms;

	if (bfqd->peak_rate)
		ms = ref_ms * (nonrot ? BFQ_REF_RATE_NONROT : BFQ_REF_RATE) / bfqd->peak_rate;
	if (ms < BFQ_WR_MIN_DURATION_MS)
		ms = BFQ_WR_MIN_DURATION_MS;
	if (ms > BFQ_WR_MAX_DURATION_MS)
		ms = BFQ_WR_MAX_DURATION_MS;
	return ms * NSEC_PER_MSEC;
}

static void bfq_set_wr_coeff(struct bfq_data *bfqd, struct bfq_queue *bfqq, unsigned int coeff)
{
	if (bfqq->busy)
		bfqd->wr_busy_queues += (coeff > 1) - (bfqq->wr_coeff > 1);
	bfqq->wr_coeff = coeff;
	bfq_update_weight(bfqd, bfqq);
}

static void bfq_end_wr(struct bfq_data *bfqd, struct bfq_queue *bfqq, uint64_t now)
{
	bfq_set_wr_coeff(bfqd, bfqq, 1);
	bfqq->wr_cur_max_time = 0;
	bfqq->last_wr_start_finish = now;
}

/* Raising ends when its time is up, or an interactive one got its fill (bfq_update_wr_data). */
void bfq_update_wr_data(struct bfq_data *bfqd, struct bfq_queue *bfqq, uint64_t now)
{
	bool rt = bfqq->wr_cur_max_time == BFQ_WR_RT_MAX_TIME_MS * NSEC_PER_MSEC;

	if (bfqq->wr_coeff == 1)
		return;
	/* raised before its burst was seen to be large: no longer */
	if (bfqq->in_large_burst || now > bfqq->last_wr_start_finish + bfqq->wr_cur_max_time ||
	    (!rt && bfqq->service_from_wr > BFQ_MAX_SERVICE_FROM_WR))
		bfq_end_wr(bfqd, bfqq, now);
}

/* When the queue may next be deemed soft real-time (bfq_bfqq_softrt_next_start). */
uint64_t bfq_softrt_next_start(const struct bfq_data *bfqd, const struct bfq_queue *bfqq,
			       uint64_t now)
{
	uint64_t ns_per_sector = 1000000000ull / BFQ_WR_MAX_SOFTRT_RATE;
	uint64_t by_rate = bfqq->last_idle_bklogged + bfqq->service_from_backlogged * ns_per_sector;
	uint64_t by_idle = now + bfqd->slice_idle + BFQ_SOFTRT_SLACK_MS * NSEC_PER_MSEC;
	uint64_t next = bfqq->soft_rt_next_start;

	if (next == UINT64_MAX || next < by_rate)
		next = by_rate;
	return next > by_idle ? next : by_idle;
}

/*
 * The queue got its first request after being empty: raise it if it
 * looks interactive (new, or empty for bfq_wr_min_idle_time) or soft
 * real-time (bfq_update_bfqq_wr_on_rq_arrival).  Sync queues only.
 */
void bfq_wr_on_arrival(struct bfq_data *bfqd, struct bfq_queue *bfqq, bool interactive,
		       bool soft_rt, uint64_t now)
{
	if (!bfqd->low_latency || !bfqq->sync)
		return;
	if (interactive) {
		bfq_set_wr_coeff(bfqd, bfqq, BFQ_WR_COEFF);
		bfqq->wr_cur_max_time = bfq_wr_duration(bfqd);
	} else if (soft_rt) {
		bfq_set_wr_coeff(bfqd, bfqq, BFQ_WR_COEFF * BFQ_SOFTRT_WEIGHT_FACTOR);
		bfqq->wr_cur_max_time = BFQ_WR_RT_MAX_TIME_MS * NSEC_PER_MSEC;
	} else {
		return;
	}
	bfqq->last_wr_start_finish = now;
	bfqq->service_from_wr = 0;
}
