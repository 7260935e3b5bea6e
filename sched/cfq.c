/* SPDX-License-Identifier: BSD-3-Clause */
/* cfq.c - Completely Fair Queuing: a queue per process, served round robin in time slices. */

/*
 * After Linux 2.6.20-2.6.23 cfq-iosched.  Each process (rq->pid) has a
 * queue for its sync requests (reads, sync and FUA writes); the async
 * requests of all processes share one queue, as 2.6 did (CFQ_KEY_ASYNC,
 * then async_cfqq).  Queues with requests wait their turn on a round-robin
 * list; the active one owns the disk for a time slice.  Within a queue
 * requests go in sector order from the head, short backward seeks allowed
 * at a penalty, unless the oldest has waited too long.
 *
 * I/O priorities as 2.6.23 (see rqdisk-elevators(7)): a queue takes the
 * class and level of its requests (rq->ioprio, the caller's); its slice is
 * the base slice scaled by the level (cfq_prio_slice), an async queue's
 * request budget too (cfq_prio_to_maxrq).  Real-time queues go before
 * best-effort ones, idle ones after both, and an idle queue gets the disk
 * only when no other queue's request completed for CFQ_IDLE_GRACE_MS; it
 * has one request out at a time, never idles, and any other request
 * takes the disk from it.  Async queues are one per class and level.
 *
 * What 2.6 did and this one does not, or does otherwise, and why:
 *  - The round robin is a list per class in arrival order: a queue that
 *    gets busy or whose slice ends goes to the tail of its class.  2.6.23
 *    sorted within a class by a time key that put lower levels further
 *    back (cfq_slice_offset) and credited a preempted queue's unused
 *    slice; 2.6.20 put never-served queues first; queues here are freed
 *    when idle, so every queue would be new.
 *  - A real-time request does not preempt a best-effort sync slice, as in
 *    2.6.23 (later kernels let it): it goes first once that slice ends.
 *  - Async queues are per class and level (2.6.24 on); 2.6.23 keyed them
 *    by level alone, so a real-time and a best-effort process at one level
 *    shared one.
 *  - The idle window follows 2.6.23's think time (a process thinking
 *    longer than slice_idle is not idled for) and later kernels' seek
 *    history (CFQQ_SEEKY: more than 4 jumps over 800 sectors in the last
 *    32 requests, and not deep), kept per process past its queue as the
 *    io context was.  Without later kernels' service trees a seeky queue
 *    is never idled for, where they idle for the last one of a group.
 *  - Whether the disk queues is learned as later kernels' hw_tag, and
 *    flash that queues (or is not known not to) is never idled for
 *    (cfq_should_idle); later 4.x kernels also set slice_idle to 0
 *    on flash once the queue is registered (cfq_registered_queue), which
 *    is left to the tunable here: the elevator is made before the device
 *    below says whether it rotates.
 *  - The FIFO is checked at each dispatch until one expired request has
 *    been served out of order in the slice (2.6.20; 2.6.23 looked once).
 *  - The async request budget counts the whole slice (2.6.20; 2.6.23
 *    counted one dispatch round, so its budget never ran out).
 *  - The core's back merges do not know pids (no allow_merge hook), so a
 *    bio may join another process's request; the request stays where it is.
 *  - A request that finds no memory for its queue goes to a built-in
 *    fallback queue (later kernels' oom_cfqq), as add_request cannot fail.
 * As in 2.6.22-23: a slice starts when its first request completes, at
 * most quantum requests of the active queue are out while others wait, the
 * async queue waits while sync requests are out, a sync request preempts
 * the async queue, and idling starts only with nothing in the driver.
 * Draining for an elevator switch hands everything out at once, as 2.6's
 * forced dispatch did.
 *
 * Groups as 2.6.33 added them (blkio cgroups), one level deep: a process's
 * sync queue is in the group of the cgroup (v2) its first request carries
 * (blk_rq_cgroup(): the submitter resolved it), async queues in the root group.
 * The group with the least disk time used, each slice's time charged
 * over the group's weight (cfq_group_served: vdisktime), has the next
 * slice, for its first queue on the round robin; a group that gets busy
 * starts no earlier than the last one chosen.  A group's weight is its
 * cgroup's io.weight (v2's blkio.weight), or the group_weights tunable's,
 * or 100.  Later kernels' group slices, group idling and service trees
 * are not here: the share is kept slice by slice.
 */

#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cfq_impl.h"
#include "rq_merge.h"

static bool cfq_bio_sync(const struct bio *bio)
{
	return bio->bi_op == REQ_OP_READ || (bio->bi_flags & (REQ_SYNC | REQ_FUA));
}

static int cfq_init_queue(struct elevator_queue *e)
{
	struct cfq_data *cfqd = calloc(1, sizeof(*cfqd));

	if (!cfqd)
		return -1;
	for (int i = 0; i < 1 << CFQ_HASH_BITS; i++)
		LIST_INIT(&cfqd->hash[i]);
	TAILQ_INIT(&cfqd->rr_list);
	cfq_queue_init(&cfqd->oom_queue, 0, false, IOPRIO_DEFAULT);
	cfqd->clock = e->clock;
	cfqd->root_group.path = "/";
	cfqd->root_group.weight = CFQ_WEIGHT_DEFAULT;
	cfqd->oom_queue.group = &cfqd->root_group;
	LIST_INIT(&cfqd->groups);
	elv_cgroup_ops_init(&cfqd->cgroup, e->clock, "io.weight");
	cfqd->quantum = CFQ_QUANTUM;
	cfqd->fifo_expire[CFQ_SYNC] = CFQ_FIFO_EXPIRE_SYNC_MS * NSEC_PER_MSEC;
	cfqd->fifo_expire[CFQ_ASYNC] = CFQ_FIFO_EXPIRE_ASYNC_MS * NSEC_PER_MSEC;
	cfqd->back_seek_max = CFQ_BACK_SEEK_MAX_KIB;
	cfqd->back_seek_penalty = CFQ_BACK_SEEK_PENALTY;
	cfqd->slice[CFQ_SYNC] = CFQ_SLICE_SYNC_MS * NSEC_PER_MSEC;
	cfqd->slice[CFQ_ASYNC] = CFQ_SLICE_ASYNC_MS * NSEC_PER_MSEC;
	cfqd->slice_async_rq = CFQ_SLICE_ASYNC_RQ;
	cfqd->slice_idle = CFQ_SLICE_IDLE_MS * NSEC_PER_MSEC;
	cfqd->hw_tag = -1;
	cfqd->queue = e->q;
	for (int i = 0; i < 1 << CFQ_HASH_BITS; i++)
		LIST_INIT(&cfqd->cic_hash[i]);
	TAILQ_INIT(&cfqd->cic_lru);
	e->elevator_data = cfqd;
	return 0;
}

static void cfq_exit_queue(struct elevator_queue *e)
{
	struct cfq_data *cfqd = e->elevator_data;
	struct cfq_queue *cfqq;

	assert(!cfqd->busy_queues && !cfqd->rq_in_driver && TAILQ_EMPTY(&cfqd->oom_queue.fifo));
	cfqd->active = NULL;
	for (int i = 0; i < 1 << CFQ_HASH_BITS; i++)
		while ((cfqq = LIST_FIRST(&cfqd->hash[i])))
			cfq_free_queue(cfqd, cfqq);
	for (int c = 0; c < 3; c++)
		for (int l = 0; l < IOPRIO_NR_LEVELS; l++)
			if (cfqd->async_queue[c][l])
				cfq_free_queue(cfqd, cfqd->async_queue[c][l]);
	while (!TAILQ_EMPTY(&cfqd->cic_lru))
		cfq_free_cic(cfqd, TAILQ_FIRST(&cfqd->cic_lru));
	elv_group_weights_free(&cfqd->group_weights);
	free(cfqd);
}

static void cfq_add_request(struct elevator_queue *e, struct request *rq)
{
	struct cfq_data *cfqd = e->elevator_data;
	struct cfq_queue *cfqq = cfq_get_queue(cfqd, rq);
	uint64_t now = blk_clock_now(e->clock);

	rq->elv_priv[0] = cfqq;
	cfq_update_prio(cfqd, cfqq, rq->ioprio);
	elv_rb_add(&cfqq->sort_list, rq);
	rq->fifo_time = now + cfqd->fifo_expire[rq_is_sync(rq)];
	TAILQ_INSERT_TAIL(&cfqq->fifo, rq, queuelist);
	if (!cfqq->queued++)
		cfq_add_rr(cfqd, cfqq);
	cfqd->rq_queued++;
	cfqq->next_rq = cfq_choose_req(cfqd, cfqq->next_rq, rq);
	cfq_update_history(cfqd, cfqq, rq, now);
	cfq_rq_enqueued(cfqd, cfqq, rq, now);
}

/* The FIFO head, if it expired and none went out of order yet this slice. */
static struct request *cfq_check_fifo(struct cfq_queue *cfqq, uint64_t now)
{
	struct request *rq = TAILQ_FIRST(&cfqq->fifo);

	if (cfqq->fifo_expired || !rq || now < rq->fifo_time)
		return NULL;
	cfqq->fifo_expired = true;
	return rq;
}

/* Out to the driver: the head moves to rq's end, and the sorted walk goes on from there. */
static void cfq_dispatch_insert(struct cfq_data *cfqd, struct request *rq)
{
	struct cfq_queue *cfqq = rq_cfqq(rq);

	cfqd->last_position = blk_rq_end_sector(rq);
	cfq_remove_request(cfqd, rq);
	cfqq->dispatched++;
	cfqd->rq_in_driver++;
	cfqd->sync_flight += cfqq->sync;
	cfqd->dispatch_slice++;
}

/*
 * The core is switching elevators: every request goes, the active queue's
 * first, then round robin, each in its sector order.  None reaches the
 * driver from here (the next elevator takes them), so none is counted out.
 */
static struct request *cfq_drain_request(struct cfq_data *cfqd)
{
	struct cfq_queue *cfqq = cfqd->active;
	struct request *rq;

	if (!cfqq || !cfqq->queued)
		cfqq = TAILQ_FIRST(&cfqd->rr_list);
	if (!cfqq)
		return NULL;
	rq = cfqq->next_rq;
	cfqd->last_position = blk_rq_end_sector(rq);
	cfq_remove_request(cfqd, rq);
	cfq_put_if_unused(cfqd, cfqq);
	return rq;
}

static struct request *cfq_dispatch_request(struct elevator_queue *e, uint64_t now)
{
	struct cfq_data *cfqd = e->elevator_data;
	struct cfq_queue *cfqq;
	struct request *rq;

	if (e->draining)
		return cfq_drain_request(cfqd);
	cfqq = cfq_select_queue(cfqd, now);
	if (!cfqq) {
		/* idling: try again when the wait is over, if no request ends it first */
		if (cfqd->idle_until)
			elv_schedule_dispatch(e, cfqd->idle_until);
		/* no queue is active: an idle-class one waits out the grace */
		else if (!cfqd->active && cfqd->busy_queues)
			elv_schedule_dispatch(e, cfqd->idle_class_after);
		return NULL;
	}
	if (cfq_must_wait(cfqd, cfqq))
		return NULL; /* a completion runs the queue again */
	rq = cfq_check_fifo(cfqq, now);
	if (!rq)
		rq = cfqq->next_rq;
	cfq_dispatch_insert(cfqd, rq);
	cfq_check_async_budget(cfqd, cfqq);
	return rq;
}

static bool cfq_has_work(const struct elevator_queue *e)
{
	const struct cfq_data *cfqd = e->elevator_data;

	return cfqd->busy_queues > 0;
}

static void cfq_completed(struct elevator_queue *e, struct request *rq)
{
	struct cfq_data *cfqd = e->elevator_data;
	struct cfq_queue *cfqq = rq_cfqq(rq);
	uint64_t now = blk_clock_now(e->clock);

	assert(cfqq->dispatched && cfqd->rq_in_driver);
	cfq_update_hw_tag(cfqd);
	cfqq->dispatched--;
	cfqd->rq_in_driver--;
	cfqd->sync_flight -= cfqq->sync;
	if (cfqq->sync && cfqq != &cfqd->oom_queue) {
		struct cfq_io_context *cic = cfq_find_cic(cfqd, cfqq->pid);

		if (cic)
			cic->last_end_request = now;
	}
	/* the disk is busy for others: the idle class waits (2.6's last_end_request) */
	if (!cfq_class_idle(cfqq))
		cfqd->idle_class_after = now + CFQ_IDLE_GRACE_MS * NSEC_PER_MSEC;
	if (cfqq == cfqd->active)
		cfq_active_completed(cfqd, cfqq, now);
	else
		cfq_put_if_unused(cfqd, cfqq);
}

/* Front merges, within the queue the bio would join (2.6's cfq_find_rq_fmerge). */
static enum elv_merge cfq_find_merge(struct elevator_queue *e, const struct bio *bio,
				     struct request **rq)
{
	struct cfq_queue *cfqq =
	    cfq_find_queue(e->elevator_data, bio->bi_pid, cfq_bio_sync(bio), bio->bi_ioprio);

	return rq_find_front_merge(cfqq ? &cfqq->sort_list : NULL, bio, rq);
}

/* A front merge moved rq's start (the core has re-sorted it): maybe the walk's next now. */
static void cfq_request_merged(struct elevator_queue *e, struct request *rq, enum elv_merge type)
{
	struct cfq_queue *cfqq = rq_cfqq(rq);

	if (type != ELEVATOR_FRONT_MERGE)
		return;
	cfqq->next_rq = cfq_choose_req(e->elevator_data, cfqq->next_rq, rq);
}

/* next joins rq: in one queue rq keeps the older FIFO place; next's queue may go. */
static void cfq_requests_merged(struct elevator_queue *e, struct request *rq,
				struct request *next)
{
	struct cfq_data *cfqd = e->elevator_data;
	struct cfq_queue *cfqq = rq_cfqq(next);

	if (rq_cfqq(rq) == cfqq)
		elv_fifo_merge(&cfqq->fifo, rq, next);
	cfq_remove_request(cfqd, next);
	cfq_put_if_unused(cfqd, cfqq);
}

ELV_TUNABLE(cfq, quantum, struct cfq_data, quantum, 1, INT_MAX, 1);
ELV_TUNABLE(cfq, fifo_expire_sync, struct cfq_data, fifo_expire[CFQ_SYNC], 1, INT_MAX,
	    NSEC_PER_MSEC);
ELV_TUNABLE(cfq, fifo_expire_async, struct cfq_data, fifo_expire[CFQ_ASYNC], 1, INT_MAX,
	    NSEC_PER_MSEC);
ELV_TUNABLE(cfq, back_seek_max, struct cfq_data, back_seek_max, 0, INT_MAX, 1);
ELV_TUNABLE(cfq, back_seek_penalty, struct cfq_data, back_seek_penalty, 1, INT_MAX, 1);
ELV_TUNABLE(cfq, slice_sync, struct cfq_data, slice[CFQ_SYNC], 1, INT_MAX, NSEC_PER_MSEC);
ELV_TUNABLE(cfq, slice_async, struct cfq_data, slice[CFQ_ASYNC], 1, INT_MAX, NSEC_PER_MSEC);
ELV_TUNABLE(cfq, slice_async_rq, struct cfq_data, slice_async_rq, 1, INT_MAX, 1);
ELV_TUNABLE(cfq, slice_idle, struct cfq_data, slice_idle, 0, INT_MAX, NSEC_PER_MSEC);

static const struct elv_tunable cfq_tunables[] = {
	ELV_ATTR(cfq, quantum),
	ELV_ATTR(cfq, fifo_expire_sync),
	ELV_ATTR(cfq, fifo_expire_async),
	ELV_ATTR(cfq, back_seek_max),
	ELV_ATTR(cfq, back_seek_penalty),
	ELV_ATTR(cfq, slice_sync),
	ELV_ATTR(cfq, slice_async),
	ELV_ATTR(cfq, slice_async_rq),
	ELV_ATTR(cfq, slice_idle),
	ELV_TEXT_ATTR(cfq, group_weights),
	ELV_RO_ATTR(cfq, groups),
	{ 0 },
};

static struct elevator_type elevator_cfq = {
	.elevator_name = "cfq",
	.elevator_description = "a time slice per process, as CFQ: fair between processes",
	.init_queue = cfq_init_queue,
	.exit_queue = cfq_exit_queue,
	.add_request = cfq_add_request,
	.dispatch_request = cfq_dispatch_request,
	.has_work = cfq_has_work,
	.find_merge = cfq_find_merge,
	.request_merged = cfq_request_merged,
	.requests_merged = cfq_requests_merged,
	.completed = cfq_completed,
	.tunables = cfq_tunables,
};

ELEVATOR_REGISTER(cfq, elevator_cfq)
