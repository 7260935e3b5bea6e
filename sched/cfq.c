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
 * sync queue is in the group of its cgroup (v2: /proc/PID/cgroup, read
 * when the queue is made; elv_cgroup.c), async queues in the root group.
 * The group with the least disk time used, each slice's time charged
 * over the group's weight (cfq_group_served: vdisktime), has the next
 * slice, for its first queue on the round robin; a group that gets busy
 * starts no earlier than the last one chosen.  A group's weight is its
 * cgroup's io.weight (v2's blkio.weight), or the group_weights tunable's,
 * or 100.  Later kernels' group slices, group idling and service trees
 * are not here: the share is kept slice by slice.
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "elevator.h"
#include "elv_cgroup.h"
#include "rq_merge.h"
#include "rq_rbtree.h"

/* Defaults of 2.6 cfq-iosched, in milliseconds where 2.6 had jiffies. */
#define CFQ_QUANTUM 8                /* active queue's requests out while others wait */
#define CFQ_FIFO_EXPIRE_SYNC_MS 125  /* a sync request waits at most this long... */
#define CFQ_FIFO_EXPIRE_ASYNC_MS 250 /* ...and an async one this long, when they can */
#define CFQ_BACK_SEEK_MAX_KIB 16384  /* how far behind the head a request is still near */
#define CFQ_BACK_SEEK_PENALTY 2      /* a backward seek costs as much as this many forward */
#define CFQ_SLICE_SYNC_MS 100        /* a sync queue's time slice */
#define CFQ_SLICE_ASYNC_MS 40        /* the async queue's time slice */
#define CFQ_SLICE_ASYNC_RQ 2         /* base of the async queue's requests per slice */
#define CFQ_SLICE_IDLE_MS 8          /* how long to wait for a process's next sync request */
#define CFQ_SLICE_SCALE 5	     /* a level is worth this fraction of the base slice */
#define CFQ_IDLE_GRACE_MS 100	     /* the disk is idle for the idle class after this long */
#define CFQ_IDLE_MAX_OUT_ALONE 4     /* an idle queue's requests out when it is alone */

#define CFQ_HASH_BITS 6
#define CFQ_WEIGHT_DEFAULT 100 /* io.weight's: 1..10000 */
#define CFQ_WEIGHT_MAX 10000

/*
 * A process's history (2.6's cfq_io_context): its think time, a moving
 * average of the time from its last completion to its next sync request,
 * each sample weighing 1/8, capped at 2 * slice_idle and meaningful once
 * the samples weigh more than CFQ_TTIME_VALID_SAMPLES; and which of its
 * last 32 requests jumped more than CFQQ_SEEK_THR sectors.  More than
 * CFQQ_SEEKY_COUNT such seeks make it seeky, and a seeky process with
 * fewer than CFQQ_DEEP_QUEUED requests queued at once is not idled for;
 * neither is one whose think time is longer than slice_idle.  The history
 * outlives the queue, as the io context did; at most CFQ_MAX_CIC are kept.
 */
#define CFQ_TTIME_VALID_SAMPLES 80
#define CFQQ_SEEK_THR 800
#define CFQQ_SEEKY_COUNT 4 /* 32 / 8 */
#define CFQQ_DEEP_QUEUED 4
#define CFQ_MAX_CIC 1024

struct cfq_io_context {
	LIST_ENTRY(cfq_io_context) hash;
	TAILQ_ENTRY(cfq_io_context) lru; /* least recently used first */
	pid_t pid;
	uint64_t last_end_request; /* ns */
	uint64_t ttime_total, ttime_mean;
	unsigned int ttime_samples;
	uint32_t seek_history; /* bit 0: the latest request was a seek */
	sector_t last_request_pos;
	bool idle_window; /* its queue is idled for when it runs dry */
	bool deep;	  /* it had CFQQ_DEEP_QUEUED queued: seeks or not, worth idling */
};

LIST_HEAD(cfq_cic_head, cfq_io_context);
TAILQ_HEAD(cfq_cic_lru, cfq_io_context);

enum { CFQ_ASYNC, CFQ_SYNC };

/* A cgroup's share of the disk (2.6.33's cfq_group). */
struct cfq_group {
	LIST_ENTRY(cfq_group) link;
	char path[ELV_CGROUP_PATH_MAX];
	unsigned int weight;
	uint64_t vdisktime;	/* disk time it used, in ns times CFQ_WEIGHT_DEFAULT over weight */
	unsigned int nr_queues; /* it goes with the last (the root never) */
	unsigned int busy;	/* its queues on the round robin */
};

LIST_HEAD(cfq_group_list, cfq_group);

struct cfq_queue {
	LIST_ENTRY(cfq_queue) hash; /* sync queues, by pid */
	TAILQ_ENTRY(cfq_queue) rr;  /* on the round robin while it has requests */
	struct elv_rb_root sort_list;
	struct elv_fifo fifo;
	struct request *next_rq; /* the sector-ordered walk goes on from here */
	pid_t pid;
	unsigned short ioprio_class; /* IOPRIO_CLASS_RT, _BE or _IDLE */
	unsigned short ioprio;	     /* its level, 0 (highest) .. 7 */
	bool sync;
	bool on_rr;
	bool slice_new;    /* nothing completed this slice yet: it has not started */
	bool fifo_expired; /* an expired request already went out of order this slice */
	unsigned int queued;
	unsigned int dispatched; /* in the driver */
	uint64_t slice_end;
	struct cfq_group *group;
};

LIST_HEAD(cfq_hash_head, cfq_queue);
TAILQ_HEAD(cfq_rr, cfq_queue);

struct cfq_data {
	struct cfq_hash_head hash[1 << CFQ_HASH_BITS];
	/* every process's async requests, by class (RT, BE, IDLE) and level */
	struct cfq_queue *async_queue[3][IOPRIO_NR_LEVELS];
	struct cfq_queue oom_queue;    /* for requests whose queue could not be allocated */
	struct cfq_rr rr_list;         /* queues with requests, in service order */
	unsigned int busy_queues;      /* on rr_list */
	struct cfq_queue *active;
	unsigned int dispatch_slice; /* requests the active queue sent this slice */
	uint64_t idle_until;         /* the active queue waits for a request until then; 0: not */
	uint64_t idle_class_after;   /* an idle-class queue may have the disk from then */
	sector_t last_position;      /* where the last dispatched request ends: the head */
	unsigned int rq_in_driver;
	unsigned int sync_flight; /* of those, from sync queues */

	int quantum;
	uint64_t fifo_expire[2]; /* ns */
	int back_seek_max;       /* KiB */
	int back_seek_penalty;
	uint64_t slice[2]; /* ns */
	int slice_async_rq;
	uint64_t slice_idle; /* ns */

	struct cfq_cic_head cic_hash[1 << CFQ_HASH_BITS];
	struct cfq_cic_lru cic_lru;
	unsigned int nr_cic;

	const struct blk_clock *clock;
	struct cfq_group root_group;
	struct cfq_group_list groups;
	uint64_t min_vdisktime; /* the last chosen group's */
	uint64_t active_since;	/* ns: the active queue got the disk then */
	struct elv_cgroup_ops cgroup;
	struct elv_group_weights group_weights;
};

static struct cfq_queue *rq_cfqq(const struct request *rq)
{
	return rq->elv_priv[0];
}

static unsigned int cfq_hash_key(pid_t pid)
{
	return ((uint32_t)pid * 0x9e3779b9u) >> (32 - CFQ_HASH_BITS);
}

static bool cfq_bio_sync(const struct bio *bio)
{
	return bio->bi_op == REQ_OP_READ || (bio->bi_flags & (REQ_SYNC | REQ_FUA));
}

static bool cfq_class_rt(const struct cfq_queue *cfqq)
{
	return cfqq->ioprio_class == IOPRIO_CLASS_RT;
}

static bool cfq_class_idle(const struct cfq_queue *cfqq)
{
	return cfqq->ioprio_class == IOPRIO_CLASS_IDLE;
}

/*
 * The class and level a queue of these requests is served at (2.6's
 * cfq_init_prio_data): no class is best effort (the core's ioprio_class
 * says so), and the idle class is at the lowest level.
 */
static void cfq_init_prio_data(struct cfq_queue *cfqq, unsigned short ioprio)
{
	cfqq->ioprio_class = (unsigned short)ioprio_class(ioprio);
	cfqq->ioprio = (unsigned short)ioprio_level(ioprio);
	if (cfq_class_idle(cfqq))
		cfqq->ioprio = IOPRIO_NR_LEVELS - 1;
}

static void cfq_queue_init(struct cfq_queue *cfqq, pid_t pid, bool sync, unsigned short ioprio)
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

static struct cfq_queue *cfq_find_queue(struct cfq_data *cfqd, pid_t pid, bool sync,
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
/* ---- groups ---- */

/* The tunable's weight for the group, else its cgroup's io.weight, else the default. */
static unsigned int cfq_group_weight(const struct cfq_data *cfqd, const char *path)
{
	unsigned int w = elv_group_weight_find(&cfqd->group_weights, path);

	if (!w)
		w = cfqd->cgroup.cgroup_weight(cfqd->cgroup.priv, path);
	return w >= 1 && w <= CFQ_WEIGHT_MAX ? w : CFQ_WEIGHT_DEFAULT;
}

/* A new sync queue goes to its process's group, made on demand (cfq_find_alloc_cfqg). */
static void cfq_group_attach(struct cfq_data *cfqd, struct cfq_queue *cfqq)
{
	char path[ELV_CGROUP_PATH_MAX];
	struct cfq_group *g;

	if (cfqd->cgroup.cgroup_of(cfqd->cgroup.priv, cfqq->pid, path, sizeof(path)) ||
	    !strcmp(path, "/"))
		return;
	LIST_FOREACH(g, &cfqd->groups, link)
		if (!strcmp(g->path, path))
			break;
	if (!g) {
		g = calloc(1, sizeof(*g));
		if (!g)
			return; /* its process is served in the root group */
		strcpy(g->path, path);
		g->weight = cfq_group_weight(cfqd, path);
		g->vdisktime = cfqd->min_vdisktime;
		LIST_INSERT_HEAD(&cfqd->groups, g, link);
	}
	g->nr_queues++;
	cfqq->group = g;
}

static void cfq_group_detach(struct cfq_data *cfqd, struct cfq_queue *cfqq)
{
	struct cfq_group *g = cfqq->group;

	if (!g || g == &cfqd->root_group || --g->nr_queues)
		return;
	LIST_REMOVE(g, link);
	free(g);
}

/* The active queue's slice is over: its group is charged the time, over its weight. */
static void cfq_group_served(struct cfq_data *cfqd, struct cfq_queue *cfqq)
{
	uint64_t now = blk_clock_now(cfqd->clock);
	uint64_t used = now > cfqd->active_since ? now - cfqd->active_since : 0;

	cfqq->group->vdisktime += used * CFQ_WEIGHT_DEFAULT / cfqq->group->weight;
}

static int cfq_group_weights_show(const struct elevator_queue *e, char *buf, size_t len)
{
	const struct cfq_data *cfqd = e->elevator_data;

	return elv_group_weights_show(&cfqd->group_weights, buf, len);
}

/* "PATH WEIGHT": WEIGHT 1..10000 sets, 0 or "default" removes; the group's weight follows. */
static int cfq_group_weights_store(struct elevator_queue *e, const char *buf)
{
	struct cfq_data *cfqd = e->elevator_data;
	char path[ELV_CGROUP_PATH_MAX];
	struct cfq_group *g;

	if (elv_group_weights_store(&cfqd->group_weights, buf, CFQ_WEIGHT_MAX, path))
		return -EINVAL;
	if (!strcmp(path, "/"))
		cfqd->root_group.weight = cfq_group_weight(cfqd, path);
	LIST_FOREACH(g, &cfqd->groups, link)
		if (!strcmp(g->path, path))
			g->weight = cfq_group_weight(cfqd, path);
	return 0;
}

static struct cfq_queue *cfq_get_queue(struct cfq_data *cfqd, const struct request *rq)
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
		cfq_group_attach(cfqd, cfqq);
	} else {
		*cfq_async_slot(cfqd, rq->ioprio) = cfqq;
	}
	return cfqq;
}

static void cfq_free_queue(struct cfq_data *cfqd, struct cfq_queue *cfqq)
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
static void cfq_put_if_unused(struct cfq_data *cfqd, struct cfq_queue *cfqq)
{
	if (cfqq == cfqd->active || cfqq == &cfqd->oom_queue || cfqq->queued || cfqq->dispatched)
		return;
	cfq_free_queue(cfqd, cfqq);
}

/* ---- a process's history ---- */

static struct cfq_io_context *cfq_find_cic(const struct cfq_data *cfqd, pid_t pid)
{
	struct cfq_io_context *cic;

	LIST_FOREACH(cic, &cfqd->cic_hash[cfq_hash_key(pid)], hash)
		if (cic->pid == pid)
			return cic;
	return NULL;
}

static void cfq_free_cic(struct cfq_data *cfqd, struct cfq_io_context *cic)
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

/* Whether rq jumped more than CFQQ_SEEK_THR from the last (cfq_update_io_seektime). */
static void cfq_update_io_seektime(struct cfq_io_context *cic, const struct request *rq)
{
	sector_t pos = blk_rq_pos(rq), last = cic->last_request_pos;
	sector_t dist = !last ? 0 : pos > last ? pos - last : last - pos;

	cic->seek_history = cic->seek_history << 1 | (dist > CFQQ_SEEK_THR);
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
static void cfq_update_history(struct cfq_data *cfqd, struct cfq_queue *cfqq,
			       const struct request *rq, uint64_t now)
{
	struct cfq_io_context *cic;

	if (!cfqq->sync || cfqq == &cfqd->oom_queue)
		return;
	cic = cfq_get_cic(cfqd, cfqq->pid, now);
	if (!cic)
		return;
	cfq_update_io_thinktime(cfqd, cic, now);
	cfq_update_io_seektime(cic, rq);
	if (!cfq_class_idle(cfqq))
		cfq_update_idle_window(cfqd, cfqq, cic);
	cic->last_request_pos = blk_rq_end_sector(rq);
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
	strcpy(cfqd->root_group.path, "/");
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

/* Which of two requests to serve next from the head, as 2.6 (after AS) chose. */
static struct request *cfq_choose_req(const struct cfq_data *cfqd, struct request *rq1,
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

/* Served before: real time, then best effort, then idle (2.6.23's cfq_service_tree_add). */
static int cfq_class_rank(const struct cfq_queue *cfqq)
{
	return cfq_class_rt(cfqq) ? 0 : cfq_class_idle(cfqq) ? 2 : 1;
}

/* Onto the round robin at the tail of its class, or at its head when front. */
static void cfq_rr_insert(struct cfq_data *cfqd, struct cfq_queue *cfqq, bool front)
{
	int rank = cfq_class_rank(cfqq);
	struct cfq_queue *pos;

	TAILQ_FOREACH(pos, &cfqd->rr_list, rr)
		if (cfq_class_rank(pos) > rank || (front && cfq_class_rank(pos) == rank))
			break;
	if (pos)
		TAILQ_INSERT_BEFORE(pos, cfqq, rr);
	else
		TAILQ_INSERT_TAIL(&cfqd->rr_list, cfqq, rr);
}

static void cfq_add_rr(struct cfq_data *cfqd, struct cfq_queue *cfqq)
{
	struct cfq_group *g = cfqq->group;

	/* a group getting busy does not get back the time it was idle (cfq_group_service_tree_add) */
	if (!g->busy++ && (!cfqd->active || cfqd->active->group != g) &&
	    g->vdisktime < cfqd->min_vdisktime)
		g->vdisktime = cfqd->min_vdisktime;
	cfqq->on_rr = true;
	cfqd->busy_queues++;
	cfq_rr_insert(cfqd, cfqq, false);
}

static void cfq_del_rr(struct cfq_data *cfqd, struct cfq_queue *cfqq)
{
	cfqq->on_rr = false;
	cfqq->group->busy--;
	cfqd->busy_queues--;
	TAILQ_REMOVE(&cfqd->rr_list, cfqq, rr);
}

static void cfq_remove_request(struct cfq_data *cfqd, struct request *rq)
{
	struct cfq_queue *cfqq = rq_cfqq(rq);

	if (cfqq->next_rq == rq)
		cfqq->next_rq = cfq_find_next_rq(cfqd, cfqq, rq);
	elv_rb_del(&cfqq->sort_list, rq);
	TAILQ_REMOVE(&cfqq->fifo, rq, queuelist);
	if (!--cfqq->queued)
		cfq_del_rr(cfqd, cfqq);
}

/*
 * The queue to serve next: the head of the round robin, unless it is of
 * the idle class and another queue's request completed less than
 * CFQ_IDLE_GRACE_MS ago (2.6.23's cfq_get_next_queue; the caller asks to
 * be run again when the grace ends, as cfq_idle_class_timer did).
 */
static struct cfq_queue *cfq_get_next_queue(struct cfq_data *cfqd, uint64_t now)
{
	struct cfq_queue *cfqq = TAILQ_FIRST(&cfqd->rr_list), *pos;

	/* the group that used least time for its weight first (cfq_get_next_cfqg) */
	TAILQ_FOREACH(pos, &cfqd->rr_list, rr)
		if (pos->group->vdisktime < cfqq->group->vdisktime)
			cfqq = pos;
	if (cfqq && cfqq->group->vdisktime > cfqd->min_vdisktime)
		cfqd->min_vdisktime = cfqq->group->vdisktime;

	if (cfqq && cfq_class_idle(cfqq) && now < cfqd->idle_class_after)
		return NULL;
	return cfqq;
}

/* A new slice for the next queue, if any. */
static struct cfq_queue *cfq_set_active_queue(struct cfq_data *cfqd, uint64_t now)
{
	struct cfq_queue *cfqq = cfq_get_next_queue(cfqd, now);

	cfqd->active = cfqq;
	cfqd->active_since = now;
	cfqd->dispatch_slice = 0;
	if (cfqq) {
		cfqq->slice_new = true;
		cfqq->fifo_expired = false;
	}
	return cfqq;
}

/* The active queue's slice is over: to the back of the round robin, or gone when idle. */
static void cfq_slice_expired(struct cfq_data *cfqd, struct cfq_queue *cfqq)
{
	cfq_group_served(cfqd, cfqq);
	cfqd->active = NULL;
	cfqd->idle_until = 0;
	if (cfqq->on_rr) {
		TAILQ_REMOVE(&cfqd->rr_list, cfqq, rr);
		cfq_rr_insert(cfqd, cfqq, false);
	}
	cfq_put_if_unused(cfqd, cfqq);
}

/* cfqq takes the disk from the active queue now, and goes first in its class. */
static void cfq_preempt_queue(struct cfq_data *cfqd, struct cfq_queue *cfqq)
{
	cfq_slice_expired(cfqd, cfqd->active);
	TAILQ_REMOVE(&cfqd->rr_list, cfqq, rr);
	cfq_rr_insert(cfqd, cfqq, true);
}

/* A slice runs from its first completion: the disk finishing others' work is not charged. */
static bool cfq_slice_used(const struct cfq_queue *cfqq, uint64_t now)
{
	return !cfqq->slice_new && now >= cfqq->slice_end;
}

/*
 * Whether cfqq's new request rq takes the disk from the active queue, as
 * 2.6.23's cfq_should_preempt: when the active slice is over, never for
 * an idle-class queue, always from an idle-class one, and a sync request
 * from an async queue.
 */
static bool cfq_should_preempt(const struct cfq_data *cfqd, const struct cfq_queue *cfqq,
			       const struct request *rq, uint64_t now)
{
	const struct cfq_queue *active = cfqd->active;

	if (cfq_slice_used(active, now))
		return true;
	if (cfq_class_idle(cfqq))
		return false;
	if (cfq_class_idle(active))
		return true;
	return rq_is_sync(rq) && !active->sync;
}

/*
 * What rq means for another queue owning the disk: it may preempt it, and
 * an async request from the process being idled for says its next sync
 * request is not coming soon.
 */
static void cfq_rq_enqueued(struct cfq_data *cfqd, struct cfq_queue *cfqq, struct request *rq,
			    uint64_t now)
{
	struct cfq_queue *active = cfqd->active;

	if (!active || active == cfqq)
		return;
	if (cfq_should_preempt(cfqd, cfqq, rq, now))
		cfq_preempt_queue(cfqd, cfqq);
	else if (!rq_is_sync(rq) && cfqd->idle_until && active->pid == rq->pid)
		cfq_slice_expired(cfqd, active);
}

/*
 * A sync queue follows its process's priority, which its newest request
 * carries (2.6's prio_changed, seen at insert): a queue waiting its turn
 * moves to its new class.
 */
static void cfq_update_prio(struct cfq_data *cfqd, struct cfq_queue *cfqq, unsigned short ioprio)
{
	struct cfq_queue probe;

	cfq_init_prio_data(&probe, ioprio);
	if (!cfqq->sync || cfqq == &cfqd->oom_queue ||
	    (probe.ioprio_class == cfqq->ioprio_class && probe.ioprio == cfqq->ioprio))
		return;
	cfqq->ioprio_class = probe.ioprio_class;
	cfqq->ioprio = probe.ioprio;
	if (cfqq->on_rr && cfqq != cfqd->active) {
		TAILQ_REMOVE(&cfqd->rr_list, cfqq, rr);
		cfq_rr_insert(cfqd, cfqq, false);
	}
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
	cfqq->next_rq = cfq_choose_req(cfqd, cfqq->next_rq, rq);
	cfq_update_history(cfqd, cfqq, rq, now);
	cfq_rq_enqueued(cfqd, cfqq, rq, now);
}

/*
 * Sync queues idle unless slice_idle is 0 or their process's idle window
 * is closed (cfq_update_idle_window); the idle class never does.
 */
static bool cfq_may_idle(const struct cfq_data *cfqd, const struct cfq_queue *cfqq)
{
	const struct cfq_io_context *cic;

	if (!cfqq->sync || !cfqd->slice_idle || cfq_class_idle(cfqq))
		return false;
	cic = cfq_find_cic(cfqd, cfqq->pid);
	return !cic || cic->idle_window;
}

/*
 * The slice of a queue at this level (2.6's cfq_prio_slice): the base
 * slice, a fifth of it more for each level above the normal 4, a fifth
 * less for each below: 180 ms at level 0 to 40 ms at 7 for sync queues.
 */
static uint64_t cfq_prio_slice(const struct cfq_data *cfqd, bool sync, int level)
{
	int64_t base = (int64_t)cfqd->slice[sync];

	return (uint64_t)(base + base / CFQ_SLICE_SCALE * (IOPRIO_BE_NORM - level));
}

/* An async queue's requests per slice (2.6's cfq_prio_to_maxrq): 16 at level 4. */
static unsigned long long cfq_prio_to_maxrq(const struct cfq_data *cfqd,
					    const struct cfq_queue *cfqq)
{
	unsigned long long base = (unsigned long long)cfqd->slice_async_rq;

	return 2 * (base + base * (IOPRIO_NR_LEVELS - 1 - cfqq->ioprio));
}

/* The idling ran out with no request: the queue is no longer deep (cfq_idle_slice_timer). */
static void cfq_idle_failed(struct cfq_data *cfqd, const struct cfq_queue *cfqq)
{
	struct cfq_io_context *cic = cfqq->sync ? cfq_find_cic(cfqd, cfqq->pid) : NULL;

	if (cic)
		cic->deep = false;
}

/*
 * The queue to dispatch from: the active one while its slice lasts and it
 * has requests; NULL while it idles or waits for its requests in the
 * driver to complete (the completion may start the idling); else the next.
 */
static struct cfq_queue *cfq_select_queue(struct cfq_data *cfqd, uint64_t now)
{
	struct cfq_queue *cfqq = cfqd->active;

	if (cfqq && !cfq_slice_used(cfqq, now)) {
		if (cfqq->queued) {
			cfqd->idle_until = 0;
			return cfqq;
		}
		if (cfqd->idle_until > now)
			return NULL;
		if (cfqd->idle_until)
			cfq_idle_failed(cfqd, cfqq);
		if (!cfqd->idle_until && cfqq->dispatched && cfq_may_idle(cfqd, cfqq))
			return NULL;
	}
	if (cfqq)
		cfq_slice_expired(cfqd, cfqq);
	return cfq_set_active_queue(cfqd, now);
}

/*
 * Hold the active queue back: quantum reached while others wait, or async
 * while sync is out.  An idle-class queue's quantum is one, and alone it
 * has at most CFQ_IDLE_MAX_OUT_ALONE out (2.6's cfq_dispatch_requests).
 */
static bool cfq_must_wait(const struct cfq_data *cfqd, const struct cfq_queue *cfqq)
{
	unsigned int max = cfq_class_idle(cfqq) ? 1 : (unsigned int)cfqd->quantum;

	if (cfqq->dispatched >= max && cfqd->busy_queues > 1)
		return true;
	if (cfq_class_idle(cfqq) && cfqq->dispatched >= CFQ_IDLE_MAX_OUT_ALONE)
		return true;
	return !cfqq->sync && cfqd->sync_flight;
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
 * If others wait, an async queue's slice also ends on its request budget,
 * and an idle-class queue's after each request (2.6's
 * __cfq_dispatch_requests: "idle queue always expire after 1 dispatch round").
 */
static void cfq_check_async_budget(struct cfq_data *cfqd, struct cfq_queue *cfqq)
{
	if (cfqd->busy_queues <= cfqq->on_rr)
		return;
	if (cfq_class_idle(cfqq) ||
	    (!cfqq->sync && cfqd->dispatch_slice >= cfq_prio_to_maxrq(cfqd, cfqq)))
		cfq_slice_expired(cfqd, cfqq);
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

/* Wait for the process's next request, as long as slice_idle and the slice allow. */
static void cfq_arm_idle(struct cfq_data *cfqd, struct cfq_queue *cfqq, uint64_t now)
{
	uint64_t until = now + cfqd->slice_idle;

	/* with requests still in the driver the disk is not idle yet */
	if (!cfq_may_idle(cfqd, cfqq) || cfqd->rq_in_driver)
		return;
	cfqd->idle_until = until < cfqq->slice_end ? until : cfqq->slice_end;
}

/* One of the active queue's requests completed: start its slice, end it, or idle. */
static void cfq_active_completed(struct cfq_data *cfqd, struct cfq_queue *cfqq, uint64_t now)
{
	if (cfqq->slice_new) {
		cfqq->slice_new = false;
		cfqq->slice_end = now + cfq_prio_slice(cfqd, cfqq->sync, cfqq->ioprio);
	}
	if (cfq_slice_used(cfqq, now))
		cfq_slice_expired(cfqd, cfqq);
	else if (!cfqq->queued)
		cfq_arm_idle(cfqd, cfqq, now);
}

static void cfq_completed(struct elevator_queue *e, struct request *rq)
{
	struct cfq_data *cfqd = e->elevator_data;
	struct cfq_queue *cfqq = rq_cfqq(rq);
	uint64_t now = blk_clock_now(e->clock);

	assert(cfqq->dispatched && cfqd->rq_in_driver);
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
