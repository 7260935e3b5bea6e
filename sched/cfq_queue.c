/* SPDX-License-Identifier: BSD-3-Clause */
/* cfq_queue.c - CFQ's queues: one per process, one per async class and level, made on demand. */
#include <assert.h>
#include <stdlib.h>

#include "cfq_impl.h"
#include "rq_merge.h"
#include "rq_rbtree.h"

/*
 * The class and level a queue of these requests is served at (2.6's
 * cfq_init_prio_data): no class is best effort (the core's ioprio_class
 * says so), and the idle class is at the lowest level.
 */
void cfq_init_prio_data(struct cfq_queue *cfqq, unsigned short ioprio)
{
	cfqq->ioprio_class = (unsigned short)ioprio_class(ioprio);
	cfqq->ioprio = (unsigned short)ioprio_level(ioprio);
	if (cfq_class_idle(cfqq))
		cfqq->ioprio = IOPRIO_NR_LEVELS - 1;
}

void cfq_queue_init(struct cfq_queue *cfqq, pid_t pid, bool sync, unsigned short ioprio)
{
	elv_rb_init(&cfqq->sort_list);
	TAILQ_INIT(&cfqq->fifo);
	cfqq->pid = pid;
	cfqq->sync = sync;
	cfq_init_prio_data(cfqq, ioprio);
}

/* The async queue of a class and level (2.6.24's cfq_async_queue_prio). */
static struct cfq_queue **cfq_async_slot(struct cfq_data *cfqd, unsigned short ioprio)
{
	struct cfq_queue probe;

	cfq_init_prio_data(&probe, ioprio);
	return &cfqd->async_queue[probe.ioprio_class - IOPRIO_CLASS_RT][probe.ioprio];
}

struct cfq_queue *cfq_find_queue(struct cfq_data *cfqd, pid_t pid, bool sync,
				 unsigned short ioprio)
{
	struct cfq_queue *cfqq;

	if (!sync)
		return *cfq_async_slot(cfqd, ioprio);
	LIST_FOREACH(cfqq, &cfqd->hash[cfq_hash_key(pid)], hash)
		if (cfqq->pid == pid)
			return cfqq;
	return NULL;
}

/* The queue rq belongs in, made on demand. */
struct cfq_queue *cfq_get_queue(struct cfq_data *cfqd, const struct request *rq)
{
	bool sync = rq_is_sync(rq);
	struct cfq_queue *cfqq = cfq_find_queue(cfqd, rq->pid, sync, rq->ioprio);

	if (cfqq)
		return cfqq;
	cfqq = calloc(1, sizeof(*cfqq));
	if (!cfqq)
		return &cfqd->oom_queue;
	cfq_queue_init(cfqq, rq->pid, sync, rq->ioprio);
	cfqq->group = &cfqd->root_group;
	if (sync) {
		LIST_INSERT_HEAD(&cfqd->hash[cfq_hash_key(rq->pid)], cfqq, hash);
		cfq_group_attach(cfqd, cfqq, rq);
	} else {
		*cfq_async_slot(cfqd, rq->ioprio) = cfqq;
	}
	return cfqq;
}

void cfq_free_queue(struct cfq_data *cfqd, struct cfq_queue *cfqq)
{
	assert(elv_rb_empty(&cfqq->sort_list) && TAILQ_EMPTY(&cfqq->fifo));
	assert(!cfqq->queued && !cfqq->dispatched && !cfqq->on_rr);
	cfq_group_detach(cfqd, cfqq);
	if (cfqq->sync)
		LIST_REMOVE(cfqq, hash);
	else
		cfqd->async_queue[cfqq->ioprio_class - IOPRIO_CLASS_RT][cfqq->ioprio] = NULL;
	free(cfqq);
}

/* A queue lives while it holds requests, has some in the driver, or owns the slice. */
void cfq_put_if_unused(struct cfq_data *cfqd, struct cfq_queue *cfqq)
{
	if (cfqq == cfqd->active || cfqq == &cfqd->oom_queue || cfqq->queued || cfqq->dispatched)
		return;
	cfq_free_queue(cfqd, cfqq);
}

/* Which of two requests to serve next from the head, as 2.6 (after AS) chose. */
struct request *cfq_choose_req(const struct cfq_data *cfqd, struct request *rq1,
			       struct request *rq2)
{
	/* back_seek_max is in KiB: twice as many sectors */
	return rq_choose_req(rq1, rq2, cfqd->last_position, (sector_t)cfqd->back_seek_max * 2,
			     (sector_t)cfqd->back_seek_penalty);
}

/* The best request around rq, which is leaving: the one after it (wrapping), or before. */
static struct request *cfq_find_next_rq(const struct cfq_data *cfqd, struct cfq_queue *cfqq,
					struct request *rq)
{
	return cfq_choose_req(cfqd, rq_rb_next_wrap(&cfqq->sort_list, rq), elv_rb_prev(rq));
}

void cfq_remove_request(struct cfq_data *cfqd, struct request *rq)
{
	struct cfq_queue *cfqq = rq_cfqq(rq);

	if (cfqq->next_rq == rq)
		cfqq->next_rq = cfq_find_next_rq(cfqd, cfqq, rq);
	elv_rb_del(&cfqq->sort_list, rq);
	TAILQ_REMOVE(&cfqq->fifo, rq, queuelist);
	cfqd->rq_queued--;
	if (!--cfqq->queued)
		cfq_del_rr(cfqd, cfqq);
}
