/* SPDX-License-Identifier: BSD-3-Clause */
/* bfq_burst.c - BFQ's bursts: many processes starting I/O at once are not raised. */

/*
 * After Linux's bfq_handle_burst.  A sync queue created within
 * BFQ_BURST_INTERVAL_MS of the last queue that joined the current burst
 * joins it too; a later one starts a new burst, as its first member if no
 * queue is busy, else as none (a burst is only seen from an idle start).
 * When the burst counts BFQ_LARGE_BURST_THRESH queues it is large: they
 * are all marked, the list is dropped, and every queue that joins while
 * it goes on is marked at once.  A marked queue is not weight-raised and
 * is not idled for the throughput's sake (bfq_better_to_idle).
 */
#include "bfq_impl.h"

static void bfq_burst_list_clear(struct bfq_data *bfqd)
{
	for (unsigned int i = 0; i < BFQ_LARGE_BURST_THRESH; i++) {
		if (bfqd->burst_list[i])
			bfqd->burst_list[i]->in_burst_list = false;
		bfqd->burst_list[i] = NULL;
	}
}

static void bfq_burst_list_add(struct bfq_data *bfqd, struct bfq_queue *bfqq)
{
	for (unsigned int i = 0; i < BFQ_LARGE_BURST_THRESH; i++)
		if (!bfqd->burst_list[i]) {
			bfqd->burst_list[i] = bfqq;
			bfqq->in_burst_list = true;
			return;
		}
}

/* A queue is freed: out of the list (bfq_put_queue's hlist_del_init). */
void bfq_burst_forget(struct bfq_data *bfqd, struct bfq_queue *bfqq)
{
	for (unsigned int i = 0; bfqq->in_burst_list && i < BFQ_LARGE_BURST_THRESH; i++)
		if (bfqd->burst_list[i] == bfqq) {
			bfqd->burst_list[i] = NULL;
			bfqq->in_burst_list = false;
		}
}

/* A new burst, bfqq its first queue when nothing is busy (bfq_reset_burst_list). */
static void bfq_reset_burst_list(struct bfq_data *bfqd, struct bfq_queue *bfqq)
{
	bfq_burst_list_clear(bfqd);
	bfqd->large_burst = false;
	if (!bfqd->busy_queues) {
		bfq_burst_list_add(bfqd, bfqq);
		bfqd->burst_size = 1;
	} else {
		bfqd->burst_size = 0;
	}
}

/* bfqq joins the burst, which may turn large (bfq_add_to_burst). */
static void bfq_add_to_burst(struct bfq_data *bfqd, struct bfq_queue *bfqq)
{
	if (++bfqd->burst_size < BFQ_LARGE_BURST_THRESH) {
		bfq_burst_list_add(bfqd, bfqq);
		return;
	}
	bfqd->large_burst = true;
	for (unsigned int i = 0; i < BFQ_LARGE_BURST_THRESH; i++)
		if (bfqd->burst_list[i])
			bfqd->burst_list[i]->in_large_burst = true;
	bfqq->in_large_burst = true;
	bfq_burst_list_clear(bfqd);
}

/*
 * bfqq was just created, for its first request; the caller checked that a
 * burst is under way or nothing is busy (bfq_init_rq).
 */
void bfq_handle_burst(struct bfq_data *bfqd, struct bfq_queue *bfqq, uint64_t now)
{
	if (bfqq->in_burst_list || bfqq->in_large_burst)
		return;
	if (now > bfqd->last_ins_in_burst + BFQ_BURST_INTERVAL_MS * NSEC_PER_MSEC)
		bfq_reset_burst_list(bfqd, bfqq);
	else if (bfqd->large_burst)
		bfqq->in_large_burst = true;
	else
		bfq_add_to_burst(bfqd, bfqq);
	bfqd->last_ins_in_burst = now;
}
