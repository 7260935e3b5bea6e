/* SPDX-License-Identifier: BSD-3-Clause */
/* bfq.c - Budget Fair Queueing: the elevator, its per-process queues and its tunables. */

/*
 * After Linux's block/bfq-iosched.c.  Each process
 * (rq->pid) has a queue for its sync requests; async requests share one
 * queue per priority class and level, as Linux's async queues do.  The
 * queue in service owns the disk until its budget (in sectors) is used
 * up, its budget timeout passes, or it has nothing more and idling for
 * its next request did not pay off; the budget it gets next is fed back
 * from why it stopped.  Which queue goes next is B-WF2Q+'s choice
 * (bfq_wf2q.c), by weight: from the ioprio level, or set per process
 * through the weights tunable; a process's queue is in its cgroup's group
 * (bfq_group.c), and the groups share the disk by their io.bfq.weight.  With
 * low_latency a process that starts doing I/O, or comes back after two
 * seconds, is weight-raised for a while (interactive), and one whose
 * requests arrive no faster than a soft real-time rate is raised harder
 * for a short time.  The queue in service, its budget and its idling are
 * bfq_service.c's; the weights and their raising bfq_weight.c's.
 *
 * Each queue keeps its process's think time (a 7/8 moving average of the
 * time from its last completion to its next request, capped at twice
 * slice_idle) and its seek history (which of its last 32 requests jumped
 * more than 800 sectors), as Linux's bfq_update_io_thinktime and
 * bfq_update_io_seektime do: a queue whose think time is longer than
 * slice_idle / 2 is not idled for to boost the throughput, and a seeky
 * one is idled for no longer than 2 ms unless raised or its share needs
 * it.  Linux idles for any sync queue on a rotational disk that does not
 * queue, long thinker or not; rqdisk does not, as such idling only costs
 * the others (test_long_thinker_not_idled_hdd).
 *
 * Sync queues made together form a burst (bfq_burst.c): from the eighth
 * within 180 ms of each other on, they are neither raised nor idled for.
 *
 * While the disk idles for a queue's share, other queues' requests are
 * injected within a limit learnt from that queue's service times
 * (bfq_inject.c).
 *
 * Processes doing close I/O share a queue (bfq_coop.c): a young queue
 * whose request lies near where the disk is, or near another busy
 * queue's next request, is merged into that one, and split again when
 * the shared queue turns seeky; queues made together are merged by
 * stable merging.  A process's own queue then stays in the hash as the
 * redirection (Linux keeps it in the bfq_io_cq).
 *
 * Whether the disk rotates is queue/rotational (blk_queue_nonrot): on
 * flash a request is a seek only if small, a seeky queue is not idled for
 * its throughput, queues merge only where the flash does not queue, and
 * no large request is injected beside another.
 *
 * Left out: the I/O-bound flag, injecting a process's own async requests
 * or the queues it wakes first, nested groups and depth limits.  rqdisk-elevators(7) bfq lists
 * every difference.
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfq_impl.h"
#include "rq_merge.h"
#include "rq_rbtree.h"

static unsigned int bfq_hash_key(pid_t pid)
{
	return ((uint32_t)pid * 0x9e3779b9u) >> (32 - BFQ_HASH_BITS);
}

static bool bfq_bio_sync(const struct bio *bio)
{
	return bio->bi_op == REQ_OP_READ || (bio->bi_flags & (REQ_SYNC | REQ_FUA));
}

/* ---- queues ---- */

static void bfq_queue_init(struct bfq_data *bfqd, struct bfq_queue *bfqq, pid_t pid, bool sync,
			   unsigned short ioprio)
{
	elv_rb_init(&bfqq->sort_list);
	TAILQ_INIT(&bfqq->fifo);
	bfqq->pid = pid;
	bfqq->sync = sync;
	bfqq->ioprio = ioprio;
	bfqq->class = bfq_class_of(ioprio);
	bfqq->level = bfq_level_of(ioprio);
	bfqq->just_created = true;
	bfqq->wr_coeff = 1;
	bfqq->soft_rt_next_start = UINT64_MAX; /* not soft real-time before it is measured */
	bfqq->max_budget = 2 * bfq_max_budget(bfqd) / 3;
	bfqq->entity.budget = bfqq->max_budget;
	bfqq->entity.weight = bfq_orig_weight(bfqd, bfqq);
	bfqq->entity.sched_data = &bfqd->sd;
	bfqq->ttime_last_end = UINT64_MAX; /* its first request counts as a long think */
	bfqq->has_short_ttime = sync && bfqq->class != BFQ_CLASS_IDLE;
}

static struct bfq_queue **bfq_async_slot(struct bfq_data *bfqd, unsigned short ioprio)
{
	return &bfqd->async[bfq_class_of(ioprio)][bfq_level_of(ioprio)];
}

static struct bfq_queue *bfq_find_queue(struct bfq_data *bfqd, pid_t pid, bool sync,
					unsigned short ioprio)
{
	struct bfq_queue *bfqq;

	if (!sync)
		return *bfq_async_slot(bfqd, ioprio);
	LIST_FOREACH(bfqq, &bfqd->hash[bfq_hash_key(pid)], hash)
		if (bfqq->pid == pid)
			return bfqq;
	return NULL;
}

static void bfq_free_queue(struct bfq_data *bfqd, struct bfq_queue *bfqq)
{
	assert(!bfqq->queued && !bfqq->dispatched && !bfqq->busy && bfqq != bfqd->in_service);
	bfq_forget_entity(&bfqq->entity);
	bfq_group_detach(bfqd, bfqq);
	bfq_burst_forget(bfqd, bfqq);
	bfq_waker_forget(bfqd, bfqq);
	if (bfqq->sync)
		bfq_coop_forget(bfqd, bfqq);
	if (bfqq->on_lru) {
		TAILQ_REMOVE(&bfqd->lru, bfqq, lru);
		bfqd->nr_lru--;
	}
	if (bfqq->sync)
		LIST_REMOVE(bfqq, hash);
	else
		*bfq_async_slot(bfqd, bfqq->ioprio) = NULL;
	free(bfqq);
}

/*
 * A sync queue with nothing queued, out or in service is kept a while: its
 * history (when it emptied, its budget, its raising) is what Linux keeps
 * for a process's lifetime.  Past bfq_wr_min_idle_time it is gone, and a
 * new one is deemed interactive, just as the old one would have been.
 */
void bfq_put_if_unused(struct bfq_data *bfqd, struct bfq_queue *bfqq, uint64_t now)
{
	if (bfqq == &bfqd->oom_queue || !bfqq->sync || bfqq->busy || bfqq->queued ||
	    bfqq->dispatched || bfqq == bfqd->in_service || bfqq->on_lru)
		return;
	if (!bfqq->budget_timeout || bfqq->budget_timeout > now)
		bfqq->budget_timeout = now; /* it emptied with requests out: from the last one */
	bfqq->on_lru = true;
	TAILQ_INSERT_TAIL(&bfqd->lru, bfqq, lru);
	bfqd->nr_lru++;
}

static void bfq_reap_unused(struct bfq_data *bfqd, uint64_t now)
{
	struct bfq_queue *bfqq;

	while ((bfqq = TAILQ_FIRST(&bfqd->lru)) &&
	       (bfqd->nr_lru > BFQ_MAX_UNUSED ||
		now > bfqq->budget_timeout + BFQ_WR_MIN_IDLE_TIME_MS * NSEC_PER_MSEC))
		bfq_free_queue(bfqd, bfqq);
}

/* The queue rq belongs in, made on demand. */
static struct bfq_queue *bfq_get_queue(struct bfq_data *bfqd, const struct request *rq,
				       uint64_t now)
{
	bool sync = rq_is_sync(rq);
	struct bfq_queue *bfqq = bfq_find_queue(bfqd, rq->pid, sync, rq->ioprio);

	if (bfqq) {
		if (bfqq->on_lru) {
			TAILQ_REMOVE(&bfqd->lru, bfqq, lru);
			bfqd->nr_lru--;
			bfqq->on_lru = false;
		}
		if (sync)
			bfqq->ioprio = rq->ioprio; /* a prio change shows at its next activation */
		return bfqq;
	}
	bfqq = calloc(1, sizeof(*bfqq));
	if (!bfqq)
		return &bfqd->oom_queue;
	bfq_queue_init(bfqd, bfqq, sync ? rq->pid : 0, sync, rq->ioprio);
	if (sync) {
		LIST_INSERT_HEAD(&bfqd->hash[bfq_hash_key(rq->pid)], bfqq, hash);
		bfq_group_attach(bfqd, bfqq, rq, now);
		bfq_coop_created(bfqd, bfqq, now);
	} else {
		*bfq_async_slot(bfqd, rq->ioprio) = bfqq;
	}
	return bfqq;
}

static int bfq_init_queue(struct elevator_queue *e)
{
	struct bfq_data *bfqd = calloc(1, sizeof(*bfqd));

	if (!bfqd)
		return -ENOMEM;
	for (int i = 0; i < 1 << BFQ_HASH_BITS; i++)
		LIST_INIT(&bfqd->hash[i]);
	TAILQ_INIT(&bfqd->lru);
	LIST_INIT(&bfqd->groups);
	elv_cgroup_ops_init(&bfqd->cgroup, e->clock, "io.bfq.weight");
	bfq_sched_init(&bfqd->sd);
	bfqd->sd.class_idle_last_service = blk_clock_now(e->clock);
	bfqd->fifo_expire[BFQ_SYNC] = BFQ_FIFO_EXPIRE_SYNC_MS * NSEC_PER_MSEC;
	bfqd->fifo_expire[BFQ_ASYNC] = BFQ_FIFO_EXPIRE_ASYNC_MS * NSEC_PER_MSEC;
	bfqd->back_max = BFQ_BACK_MAX_KIB;
	bfqd->back_penalty = BFQ_BACK_PENALTY;
	bfqd->slice_idle = BFQ_SLICE_IDLE_MS * NSEC_PER_MSEC;
	bfqd->timeout = BFQ_TIMEOUT_MS * NSEC_PER_MSEC;
	bfqd->low_latency = 1;
	bfqd->hw_tag = -1;
	bfqd->queue = e->q;
	bfq_queue_init(bfqd, &bfqd->oom_queue, 0, false, IOPRIO_DEFAULT);
	e->elevator_data = bfqd;
	return 0;
}

static void bfq_exit_queue(struct elevator_queue *e)
{
	struct bfq_data *bfqd = e->elevator_data;
	struct bfq_queue *bfqq;

	assert(!bfqd->queued && !bfqd->rq_in_driver);
	if (bfqd->in_service) {
		bfqq = bfqd->in_service;
		bfqd->in_service = NULL;
		bfq_deactivate_leaf(&bfqq->entity);
		bfqq->busy = false;
	}
	for (int i = 0; i < 1 << BFQ_HASH_BITS; i++)
		while ((bfqq = LIST_FIRST(&bfqd->hash[i])))
			bfq_free_queue(bfqd, bfqq);
	for (int c = 0; c < BFQ_NR_CLASSES; c++)
		for (int l = 0; l < IOPRIO_NR_LEVELS; l++)
			if (bfqd->async[c][l])
				bfq_free_queue(bfqd, bfqd->async[c][l]);
	bfq_groups_exit(bfqd);
	free(bfqd->weights);
	free(bfqd);
}

/* ---- request order within a queue ---- */

/* Which of two requests to serve next from the head (bfq_choose_req, from AS and CFQ). */
static struct request *bfq_choose_req(const struct bfq_data *bfqd, struct request *rq1,
				      struct request *rq2)
{
	/* back_max is in KiB: twice as many sectors */
	return rq_choose_req(rq1, rq2, bfqd->last_position, (sector_t)bfqd->back_max * 2,
			     (sector_t)bfqd->back_penalty);
}

/*
 * The FIFO head, if it expired, is the next to go, but the FIFO is looked
 * at only once a budget (bfq_check_fifo): a queue is not turned into a
 * FIFO by a backlog that is old all through.
 */
static struct request *bfq_check_fifo(struct bfq_queue *bfqq, const struct request *last,
				      uint64_t now)
{
	struct request *rq = TAILQ_FIRST(&bfqq->fifo);

	if (bfqq->fifo_expire)
		return NULL;
	bfqq->fifo_expire = true;
	if (!rq || rq == last || now < rq->fifo_time)
		return NULL;
	return rq;
}

/* The request to go after rq, which is leaving (bfq_find_next_rq). */
static struct request *bfq_find_next_rq(const struct bfq_data *bfqd, struct bfq_queue *bfqq,
					struct request *rq, uint64_t now)
{
	struct request *next = bfq_check_fifo(bfqq, rq, now);

	if (next)
		return next;
	return bfq_choose_req(bfqd, rq_rb_next_wrap(&bfqq->sort_list, rq), elv_rb_prev(rq));
}

void bfq_remove_request(struct bfq_data *bfqd, struct request *rq, uint64_t now)
{
	struct bfq_queue *bfqq = rq_bfqq(rq);

	if (bfqq->next_rq == rq)
		bfqq->next_rq = bfq_find_next_rq(bfqd, bfqq, rq, now);
	elv_rb_del(&bfqq->sort_list, rq);
	TAILQ_REMOVE(&bfqq->fifo, rq, queuelist);
	bfqq->queued--;
	bfqd->queued--;
}

/* ---- think time and seekiness ---- */

/*
 * How long the process took to ask again once nothing of its was queued or
 * out (bfq_update_io_thinktime), capped at 2 * slice_idle: a 7/8 moving
 * average.  Requests that join a queue with others still there or out say
 * nothing about the process's thinking, so they are no sample.
 */
static void bfq_update_io_thinktime(const struct bfq_data *bfqd, struct bfq_queue *bfqq,
				    uint64_t now)
{
	uint64_t cap = 2 * bfqd->slice_idle;
	uint64_t last = bfqq->ttime_last_end;
	uint64_t elapsed = last != UINT64_MAX && now >= last ? now - last : cap;

	if (bfqq->dispatched || bfqq->busy)
		return;
	if (elapsed > cap)
		elapsed = cap;
	bfqq->ttime_samples = (7 * bfqq->ttime_samples + 256) / 8;
	bfqq->ttime_total = (7 * bfqq->ttime_total + 256 * elapsed) / 8;
	bfqq->ttime_mean = (bfqq->ttime_total + 128) / bfqq->ttime_samples;
}

/*
 * Short think time (bfq_update_has_short_ttime): until enough samples say
 * otherwise, a sync queue is taken to think no longer than slice_idle / 2,
 * the time idling for it may wait and still pay.
 */
static void bfq_update_has_short_ttime(struct bfq_data *bfqd, struct bfq_queue *bfqq,
				       uint64_t now)
{
	bool was = bfqq->has_short_ttime;

	if (!bfqq->sync || bfqq->class == BFQ_CLASS_IDLE || !bfqd->slice_idle)
		return;
	bfqq->has_short_ttime = bfqq->ttime_samples <= BFQ_TTIME_VALID_SAMPLES ||
				bfqq->ttime_mean <= bfqd->slice_idle / 2;
	/* with no base yet, the limit's start follows the think time */
	if (was != bfqq->has_short_ttime && !bfqq->last_serv_time_ns &&
	    (now >= bfqq->decrease_time + 100 * NSEC_PER_MSEC || !bfqq->has_short_ttime))
		bfq_reset_inject_limit(bfqd, bfqq, now);
}

/*
 * Whether rq jumped more than BFQQ_SEEK_THR from the queue's last request
 * (BFQ_RQ_SEEKY): on flash a large request is no seek, wherever it lies.
 */
static void bfq_update_io_seektime(const struct bfq_data *bfqd, struct bfq_queue *bfqq,
				   const struct request *rq)
{
	sector_t pos = blk_rq_pos(rq), last = bfqq->last_request_pos;
	sector_t dist = pos > last ? pos - last : last - pos;
	bool seek = dist > BFQQ_SEEK_THR && (!blk_queue_nonrot(bfqd->queue) ||
					      blk_rq_sectors(rq) < BFQQ_SECT_THR_NONROT);

	bfqq->seek_history = bfqq->seek_history << 1 | seek;
}

static void bfq_add_request(struct elevator_queue *e, struct request *rq)
{
	struct bfq_data *bfqd = e->elevator_data;
	uint64_t now = blk_clock_now(e->clock);
	struct bfq_queue *bfqq, *own;
	bool was_empty;

	bfq_reap_unused(bfqd, now);
	own = bfq_get_queue(bfqd, rq, now);
	/* a new sync queue may be one of many started together (bfq_init_rq) */
	if (own->just_created && own->sync && (bfqd->burst_size || !bfqd->busy_queues))
		bfq_handle_burst(bfqd, own, now);
	bfqq = bfq_coop_queue(bfqd, own, rq, now);
	if (bfqq != own && !own->queued && !own->dispatched && !own->busy &&
	    own != bfqd->in_service) {
		/* a process's own queue, merged: kept while it sends, reaped when it stops */
		own->budget_timeout = now;
		bfq_put_if_unused(bfqd, own, now);
	}
	rq->elv_priv[0] = bfqq;
	was_empty = !bfqq->busy && !bfqq->dispatched;
	bfq_update_io_thinktime(bfqd, bfqq, now);
	bfq_update_has_short_ttime(bfqd, bfqq, now);
	bfq_update_io_seektime(bfqd, bfqq, rq);
	bfqq->last_request_pos = blk_rq_end_sector(rq);
	elv_rb_add(&bfqq->sort_list, rq);
	rq->fifo_time = now + bfqd->fifo_expire[rq_is_sync(rq)];
	TAILQ_INSERT_TAIL(&bfqq->fifo, rq, queuelist);
	bfqq->next_rq = bfq_choose_req(bfqd, bfqq->next_rq, rq);
	bfqq->queued++;
	bfqd->queued++;
	bfq_inject_on_add(bfqd, bfqq, was_empty, now);
	if (!bfqq->busy)
		bfq_idle_busy_switch(bfqd, bfqq, now);
	else if (bfqq == bfqd->in_service && bfqq->wait_request &&
		 bfq_budget_timeout(bfqq, now)) /* bfq_rq_enqueued: no point waiting on */
		bfq_expire(bfqd, bfqq, false, BFQQE_BUDGET_TIMEOUT, now);
}

/* Front merges, within the queue the bio would join. */
static enum elv_merge bfq_find_merge(struct elevator_queue *e, const struct bio *bio,
				     struct request **rq)
{
	struct bfq_queue *bfqq =
		bfq_find_queue(e->elevator_data, bio->bi_pid, bfq_bio_sync(bio), bio->bi_ioprio);

	if (bfqq)
		bfqq = bfq_coop_lookup(bfqq);

	return rq_find_front_merge(bfqq ? &bfqq->sort_list : NULL, bio, rq);
}

static void bfq_request_merged(struct elevator_queue *e, struct request *rq, enum elv_merge type)
{
	struct bfq_queue *bfqq = rq_bfqq(rq);

	if (type == ELEVATOR_FRONT_MERGE)
		bfqq->next_rq = bfq_choose_req(e->elevator_data, bfqq->next_rq, rq);
}

/* next joins rq; a queue it empties leaves the scheduler unless in service (bfq_remove_request). */
static void bfq_requests_merged(struct elevator_queue *e, struct request *rq, struct request *next)
{
	struct bfq_data *bfqd = e->elevator_data;
	struct bfq_queue *bfqq = rq_bfqq(next);
	uint64_t now = blk_clock_now(e->clock);

	if (rq_bfqq(rq) == bfqq)
		elv_fifo_merge(&bfqq->fifo, rq, next);
	bfq_remove_request(bfqd, next, now);
	if (!bfqq->queued && bfqq->busy && bfqq != bfqd->in_service)
		bfq_del_bfqq_busy(bfqd, bfqq, false);
	bfq_put_if_unused(bfqd, bfqq, now);
}

/* ---- tunables ---- */

static int bfq_weights_show(const struct elevator_queue *e, char *buf, size_t len)
{
	const struct bfq_data *bfqd = e->elevator_data;
	size_t n = 0;

	if (len)
		buf[0] = '\0';
	for (unsigned int i = 0; i < bfqd->nr_weights && n < len; i++) {
		int w = snprintf(buf + n, len - n, "%d %u\n", (int)bfqd->weights[i].pid,
				 bfqd->weights[i].weight);

		if (w < 0)
			return -EINVAL;
		n += (size_t)w;
	}
	return (int)(n < len ? n : len);
}

/* A decimal number in [min, max] at *p, moving past it; false if none. */
static bool bfq_parse_num(const char **p, long long min, long long max, long long *out)
{
	long long v = 0;
	const char *s = *p;

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (*s - '0');
		if (v > max)
			return false;
	}
	if (v < min)
		return false;
	*p = s;
	*out = v;
	return true;
}

/* "PID WEIGHT": WEIGHT 1..1000 sets, 0 or "default" removes; anything else changes nothing. */
static int bfq_weights_parse(const char *buf, pid_t *pid, unsigned int *weight)
{
	const char *p = buf;
	long long v;

	if (!bfq_parse_num(&p, 1, INT_MAX, &v) || (*p != ' ' && *p != '\t'))
		return -EINVAL;
	*pid = (pid_t)v;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!strncmp(p, "default", 7)) {
		p += 7;
		v = 0;
	} else if (!bfq_parse_num(&p, 0, BFQ_MAX_WEIGHT, &v)) {
		return -EINVAL;
	}
	if (*p == '\n')
		p++;
	if (*p)
		return -EINVAL;
	*weight = (unsigned int)v;
	return 0;
}

static int bfq_weights_store(struct elevator_queue *e, const char *buf)
{
	struct bfq_data *bfqd = e->elevator_data;
	struct bfq_weight *w, *grown;
	struct bfq_queue *bfqq;
	unsigned int weight;
	pid_t pid;

	if (bfq_weights_parse(buf, &pid, &weight))
		return -EINVAL;
	w = bfq_weight_find(bfqd, pid);
	if (!weight && w) { /* the others keep their order: the file lists them as set */
		memmove(w, w + 1, (size_t)(bfqd->weights + --bfqd->nr_weights - w) * sizeof(*w));
	} else if (weight && w) {
		w->weight = weight;
	} else if (weight) {
		if (bfqd->nr_weights >= BFQ_MAX_WEIGHTS)
			return -EINVAL;
		grown = realloc(bfqd->weights, (bfqd->nr_weights + 1) * sizeof(*grown));
		if (!grown)
			return -EINVAL;
		bfqd->weights = grown;
		grown[bfqd->nr_weights++] = (struct bfq_weight){ pid, weight };
	}
	bfqq = bfq_find_queue(bfqd, pid, true, 0);
	if (bfqq)
		bfq_update_weight(bfqd, bfqq);
	return 0;
}

static long long bfq_max_budget_get(const struct elevator_queue *e)
{
	const struct bfq_data *bfqd = e->elevator_data;

	return bfqd->user_max_budget;
}

static void bfq_max_budget_set(struct elevator_queue *e, long long v)
{
	struct bfq_data *bfqd = e->elevator_data;

	bfqd->user_max_budget = (int)v;
}

/* Linux's slice_idle_us: the same idling, in microseconds. */
static long long bfq_slice_idle_us_get(const struct elevator_queue *e)
{
	const struct bfq_data *bfqd = e->elevator_data;

	return (long long)(bfqd->slice_idle / 1000);
}

static void bfq_slice_idle_us_set(struct elevator_queue *e, long long v)
{
	struct bfq_data *bfqd = e->elevator_data;

	bfqd->slice_idle = (uint64_t)v * 1000;
}

ELV_TUNABLE(bfq, fifo_expire_sync, struct bfq_data, fifo_expire[BFQ_SYNC], 1, INT_MAX,
	    NSEC_PER_MSEC);
ELV_TUNABLE(bfq, fifo_expire_async, struct bfq_data, fifo_expire[BFQ_ASYNC], 1, INT_MAX,
	    NSEC_PER_MSEC);
ELV_TUNABLE(bfq, back_seek_max, struct bfq_data, back_max, 0, INT_MAX, 1);
ELV_TUNABLE(bfq, back_seek_penalty, struct bfq_data, back_penalty, 1, INT_MAX, 1);
ELV_TUNABLE(bfq, slice_idle, struct bfq_data, slice_idle, 0, INT_MAX, NSEC_PER_MSEC);
ELV_TUNABLE(bfq, timeout_sync, struct bfq_data, timeout, 1, INT_MAX, NSEC_PER_MSEC);
ELV_TUNABLE(bfq, strict_guarantees, struct bfq_data, strict_guarantees, 0, 1, 1);
ELV_TUNABLE(bfq, low_latency, struct bfq_data, low_latency, 0, 1, 1);
enum { bfq_max_budget_min = 0, bfq_max_budget_max = BFQ_MAX_BUDGET_LIMIT };
enum { bfq_slice_idle_us_min = 0, bfq_slice_idle_us_max = INT_MAX };

static const struct elv_tunable bfq_tunables[] = {
	ELV_ATTR(bfq, fifo_expire_sync),
	ELV_ATTR(bfq, fifo_expire_async),
	ELV_ATTR(bfq, back_seek_max),
	ELV_ATTR(bfq, back_seek_penalty),
	ELV_ATTR(bfq, slice_idle),
	ELV_ATTR(bfq, slice_idle_us),
	ELV_ATTR(bfq, max_budget),
	ELV_ATTR(bfq, timeout_sync),
	ELV_ATTR(bfq, strict_guarantees),
	ELV_ATTR(bfq, low_latency),
	ELV_TEXT_ATTR(bfq, weights),
	ELV_TEXT_ATTR(bfq, group_weights),
	ELV_RO_ATTR(bfq, groups),
	{ 0 },
};

static struct elevator_type elevator_bfq = {
	.elevator_name = "bfq",
	.elevator_description = "budget fair queueing: a share of the sectors per process",
	.init_queue = bfq_init_queue,
	.exit_queue = bfq_exit_queue,
	.add_request = bfq_add_request,
	.dispatch_request = bfq_dispatch_request,
	.has_work = bfq_has_work,
	.find_merge = bfq_find_merge,
	.request_merged = bfq_request_merged,
	.requests_merged = bfq_requests_merged,
	.completed = bfq_completed,
	.tunables = bfq_tunables,
};

ELEVATOR_REGISTER(bfq, elevator_bfq)
