/* SPDX-License-Identifier: BSD-3-Clause */
/* cfq_iocontext.c - a process's history in CFQ: think time, seeks, its idle window, as the disk allows. */
#include <stdlib.h>

#include "cfq_impl.h"

/* ---- a process's history ---- */

struct cfq_io_context *cfq_find_cic(const struct cfq_data *cfqd, pid_t pid)
{
	struct cfq_io_context *cic;

	LIST_FOREACH(cic, &cfqd->cic_hash[cfq_hash_key(pid)], hash)
		if (cic->pid == pid)
			return cic;
	return NULL;
}

void cfq_free_cic(struct cfq_data *cfqd, struct cfq_io_context *cic)
{
	LIST_REMOVE(cic, hash);
	TAILQ_REMOVE(&cfqd->cic_lru, cic, lru);
	cfqd->nr_cic--;
	free(cic);
}

/* pid's history, made on demand (NULL without memory: its queue idles as before). */
static struct cfq_io_context *cfq_get_cic(struct cfq_data *cfqd, pid_t pid, uint64_t now)
{
	struct cfq_io_context *cic = cfq_find_cic(cfqd, pid);

	if (cic) {
		TAILQ_REMOVE(&cfqd->cic_lru, cic, lru);
		TAILQ_INSERT_TAIL(&cfqd->cic_lru, cic, lru);
		return cic;
	}
	if (cfqd->nr_cic >= CFQ_MAX_CIC)
		cfq_free_cic(cfqd, TAILQ_FIRST(&cfqd->cic_lru));
	cic = calloc(1, sizeof(*cic));
	if (!cic)
		return NULL;
	cic->pid = pid;
	cic->last_end_request = now; /* 2.6's cfq_alloc_io_context */
	cic->idle_window = true;
	LIST_INSERT_HEAD(&cfqd->cic_hash[cfq_hash_key(pid)], cic, hash);
	TAILQ_INSERT_TAIL(&cfqd->cic_lru, cic, lru);
	cfqd->nr_cic++;
	return cic;
}

/* How long the process thought before this request (cfq_update_io_thinktime). */
static void cfq_update_io_thinktime(const struct cfq_data *cfqd, struct cfq_io_context *cic,
				    uint64_t now)
{
	uint64_t elapsed = now > cic->last_end_request ? now - cic->last_end_request : 0;

	if (elapsed > 2 * cfqd->slice_idle)
		elapsed = 2 * cfqd->slice_idle;
	cic->ttime_samples = (7 * cic->ttime_samples + 256) / 8;
	cic->ttime_total = (7 * cic->ttime_total + 256 * elapsed) / 8;
	cic->ttime_mean = (cic->ttime_total + 128) / cic->ttime_samples;
}

/*
 * Whether rq jumped more than CFQQ_SEEK_THR from the last
 * (cfq_update_io_seektime); on flash, where distance costs nothing,
 * whether it is small: many small requests are what keep flash from its
 * throughput.
 */
static void cfq_update_io_seektime(const struct cfq_data *cfqd, struct cfq_io_context *cic,
				   const struct request *rq)
{
	sector_t pos = blk_rq_pos(rq), last = cic->last_request_pos;
	sector_t dist = !last ? 0 : pos > last ? pos - last : last - pos;
	bool seek = blk_queue_nonrot(cfqd->queue) ? blk_rq_sectors(rq) < CFQQ_SECT_THR_NONROT
						  : dist > CFQQ_SEEK_THR;

	cic->seek_history = cic->seek_history << 1 | seek;
}

static bool cfq_cic_seeky(const struct cfq_io_context *cic)
{
	return __builtin_popcount(cic->seek_history) > CFQQ_SEEKY_COUNT;
}

/*
 * Whether idling for the process's next request pays (cfq_update_idle_window):
 * not for a seeky one with few requests queued at once, whose next is as
 * far as anyone's; not for one that thinks longer than slice_idle.
 */
static void cfq_update_idle_window(const struct cfq_data *cfqd, const struct cfq_queue *cfqq,
				   struct cfq_io_context *cic)
{
	if (cfqq->queued >= CFQQ_DEEP_QUEUED)
		cic->deep = true;
	if (!cfqd->slice_idle || (!cic->deep && cfq_cic_seeky(cic)))
		cic->idle_window = false;
	else if (cic->ttime_samples > CFQ_TTIME_VALID_SAMPLES)
		cic->idle_window = cic->ttime_mean <= cfqd->slice_idle;
}

/* A sync request arrives: what it says of its process (2.6's cfq_rq_enqueued). */
void cfq_update_history(struct cfq_data *cfqd, struct cfq_queue *cfqq,
			const struct request *rq, uint64_t now)
{
	struct cfq_io_context *cic;

	if (!cfqq->sync || cfqq == &cfqd->oom_queue)
		return;
	cic = cfq_get_cic(cfqd, cfqq->pid, now);
	if (!cic)
		return;
	cfq_update_io_thinktime(cfqd, cic, now);
	cfq_update_io_seektime(cfqd, cic, rq);
	if (!cfq_class_idle(cfqq))
		cfq_update_idle_window(cfqd, cfqq, cic);
	cic->last_request_pos = blk_rq_end_sector(rq);
}

/*
 * Sync queues idle unless slice_idle is 0 or their process's idle window
 * is closed (cfq_update_idle_window); the idle class never does.
 */
bool cfq_idle_window(const struct cfq_data *cfqd, const struct cfq_queue *cfqq)
{
	const struct cfq_io_context *cic;

	if (!cfqq->sync || !cfqd->slice_idle || cfq_class_idle(cfqq))
		return false;
	cic = cfq_find_cic(cfqd, cfqq->pid);
	return !cic || cic->idle_window;
}

/*
 * cfq_should_idle: and never on flash that queues (or not yet known not
 * to), where the other queues' requests cost the process no seek and the
 * disk serves them beside its own.
 */
bool cfq_may_idle(const struct cfq_data *cfqd, const struct cfq_queue *cfqq)
{
	if (blk_queue_nonrot(cfqd->queue) && cfqd->hw_tag)
		return false;
	return cfq_idle_window(cfqd, cfqq);
}

/*
 * cfq_update_hw_tag, at each completion before it is counted: sample the
 * driver's depth only under load, and not while the active queue, which
 * may be idled for, has too few requests to fill the disk (its own lack,
 * not the disk's); once the disk is seen to queue it stays so.
 */
void cfq_update_hw_tag(struct cfq_data *cfqd)
{
	const struct cfq_queue *active = cfqd->active;

	if (cfqd->rq_in_driver > cfqd->hw_tag_est_depth)
		cfqd->hw_tag_est_depth = cfqd->rq_in_driver;
	if (cfqd->hw_tag == 1)
		return;
	if (cfqd->rq_queued <= CFQ_HW_QUEUE_MIN && cfqd->rq_in_driver <= CFQ_HW_QUEUE_MIN)
		return;
	if (active && cfq_idle_window(cfqd, active) &&
	    active->dispatched + active->queued < CFQ_HW_QUEUE_MIN &&
	    cfqd->rq_in_driver < CFQ_HW_QUEUE_MIN)
		return;
	if (cfqd->hw_tag_samples++ < CFQ_HW_TAG_SAMPLES)
		return;
	cfqd->hw_tag = cfqd->hw_tag_est_depth >= CFQ_HW_QUEUE_MIN;
}

/* The idling ran out with no request: the queue is no longer deep (cfq_idle_slice_timer). */
void cfq_idle_failed(struct cfq_data *cfqd, const struct cfq_queue *cfqq)
{
	struct cfq_io_context *cic = cfqq->sync ? cfq_find_cic(cfqd, cfqq->pid) : NULL;

	if (cic)
		cic->deep = false;
}
