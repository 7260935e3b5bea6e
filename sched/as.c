/* SPDX-License-Identifier: BSD-3-Clause */
/* as.c - the anticipatory elevator, after Linux 2.6: deadline, plus waiting for readers. */
#include <assert.h>
#include <limits.h>
#include <stdlib.h>

#include "elevator.h"
#include "rq_rbtree.h"

/*
 * Deadline's sorted lists and FIFOs, batches of reads and of writes bounded
 * in time, and anticipation: once a process's read completed, the disk may
 * stay idle a few milliseconds for that process's next read, likely close
 * by, rather than seek away to serve someone else and seek back.
 *
 * How it differs from 2.6, on purpose:
 * - Directions are reads and writes (rq_data_dir), as in deadline.c; 2.6
 *   put synchronous writes with the reads.
 * - A batch's clock starts when the batch starts, not at its first
 *   completion, and a new batch does not first wait for the previous
 *   direction to drain from the device.  Write batches are bounded by time
 *   only (2.6 also counted them, adapting the count to the disk).
 * - "Close" is a fixed window around the head (AS_CLOSE_AHEAD), where 2.6
 *   widened it the longer it had waited; a request nearer than the process's
 *   own mean seek distance is close too, as in 2.6, so a process that seeks
 *   all over the disk is not worth waiting for.
 * - A process without history is waited for (2.6 used the means of new
 *   processes and a guess at whether they exit).  rqdisk cannot see a
 *   process exit: one quiet for AS_PROC_FORGET_MS is forgotten instead.
 * - The anticipation timer is the core's: dispatch_request returns NULL
 *   and asks, with elv_schedule_dispatch(), to be called at the deadline.
 * - The wait for a process is timed from the completion of the last of
 *   its requests out; 2.6's as_completed_request timed it from the first.
 * - A request has expired at its deadline, as in deadline.c; 2.6's
 *   as_fifo_expired waited one tick (a millisecond) more.
 * - A read's seek distance is capped at AS_MAX_SEEK only, where 2.6's
 *   as_update_seekdist capped it near four times the process's mean, so
 *   that one far read moves the mean less.
 */

/* Defaults of 2.6 (HZ 1000). */
#define AS_READ_EXPIRE_MS 125       /* a read waits at most this long in its FIFO... */
#define AS_WRITE_EXPIRE_MS 250      /* ...and a write this long, batches permitting */
#define AS_READ_BATCH_EXPIRE_MS 500 /* reads run this long while writes wait... */
#define AS_WRITE_BATCH_EXPIRE_MS 125 /* ...and writes this long while reads wait */
#define AS_ANTIC_EXPIRE_MS 6        /* longest idle wait for a process's next read (HZ/150) */

#define AS_BACK_PENALTY 2            /* a backward seek costs twice a forward one as long */
#define AS_MAX_BACK (1024 * 1024)    /* sectors: farther behind waits for the next sweep */
#define AS_CLOSE_AHEAD 8192          /* sectors (4 MiB) ahead of the head are close... */
#define AS_CLOSE_BEHIND (AS_CLOSE_AHEAD / 2) /* ...and half that behind it */
#define AS_MAX_THINK_MS 20           /* one long pause weighs no more than this */
#define AS_MAX_SEEK (1ull << 32)     /* sectors: keeps the fixed-point sums in range */

#define AS_PROC_HASH 64         /* buckets of the per-process table */
#define AS_PROC_SWEEP 64        /* processes known before quiet ones are forgotten */
#define AS_PROC_FORGET_MS 1000  /* quiet this long, a process's history predicts nothing */

enum { AS_READ, AS_WRITE };

enum as_antic {
	AS_ANTIC_OFF,       /* not waiting */
	AS_ANTIC_WAIT_REQ,  /* holding back until the awaited process's I/O completes */
	AS_ANTIC_WAIT_NEXT, /* holding back for its next read, until antic_start + antic_expire */
	AS_ANTIC_FINISHED,  /* the wait ended (answered or timed out): dispatch the next request */
};

/* A decaying mean: a new sample weighs 1/8, the past 7/8; fixed point, 1.0 == 256. */
struct as_mean {
	uint64_t samples;
	uint64_t total;
	uint64_t mean;
};

/* What the elevator knows of one process: enough to guess whether it reads again soon, near. */
struct as_proc {
	LIST_ENTRY(as_proc) hash;
	pid_t pid;
	unsigned int nr_queued; /* its requests waiting here */
	unsigned int in_flight; /* its requests given out and not completed */
	bool has_read;          /* last_pos is set */
	bool read_done;         /* last_end is set */
	sector_t last_pos;      /* where its last read ended */
	uint64_t last_end;      /* when a read of its last completed */
	uint64_t last_seen;     /* its last submission or completion */
	struct as_mean ttime;   /* think time: ns from a completed read to its next read */
	struct as_mean seek;    /* sectors from the end of one read to the start of the next */
};

LIST_HEAD(as_proc_list, as_proc);

struct as_data {
	struct elv_rb_root sort_list[2];
	struct elv_fifo fifo_list[2];
	sector_t last_sector[2];     /* where the last request given out in each direction ended */
	uint64_t last_check_fifo[2]; /* a FIFO head is looked at once per expire interval */
	int batch_dir;
	uint64_t batch_end; /* the batch gives way then, if the other direction waits */

	enum as_antic antic_status;
	struct as_proc *antic_proc; /* whose read went out last: the one worth waiting for */
	uint64_t antic_start;       /* when its I/O last completed */

	struct as_proc_list procs[AS_PROC_HASH];
	unsigned int nr_procs;
	unsigned int sweep_at; /* forget quiet processes when this many are known */

	uint64_t fifo_expire[2];  /* ns */
	uint64_t batch_expire[2]; /* ns */
	uint64_t antic_expire;    /* ns */
};

static void as_mean_add(struct as_mean *m, uint64_t x)
{
	m->samples = (7 * m->samples + 256) / 8;
	m->total = (7 * m->total + 256 * x) / 8;
	m->mean = (m->total + m->samples / 2) / m->samples;
}

static uint64_t as_min(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static sector_t as_dist(sector_t a, sector_t b)
{
	return a > b ? a - b : b - a;
}

static struct as_proc_list *as_proc_bucket(struct as_data *ad, pid_t pid)
{
	return &ad->procs[(unsigned int)pid % AS_PROC_HASH];
}

static struct as_proc *as_proc_find(struct as_data *ad, pid_t pid)
{
	struct as_proc *p;

	LIST_FOREACH(p, as_proc_bucket(ad, pid), hash)
		if (p->pid == pid)
			return p;
	return NULL;
}

/* Forget processes with nothing here that have been quiet long: the table stays small. */
static void as_proc_sweep(struct as_data *ad, uint64_t now)
{
	struct as_proc *p, *tmp;

	for (int i = 0; i < AS_PROC_HASH; i++)
		LIST_FOREACH_SAFE(p, &ad->procs[i], hash, tmp) {
			if (p->nr_queued || p->in_flight || p == ad->antic_proc ||
			    now < p->last_seen + AS_PROC_FORGET_MS * NSEC_PER_MSEC)
				continue;
			LIST_REMOVE(p, hash);
			free(p);
			ad->nr_procs--;
		}
	ad->sweep_at = ad->nr_procs * 2 > AS_PROC_SWEEP ? ad->nr_procs * 2 : AS_PROC_SWEEP;
}

/* NULL when out of memory: the request then goes untracked, and is never waited on. */
static struct as_proc *as_proc_get(struct as_data *ad, pid_t pid, uint64_t now)
{
	struct as_proc *p = as_proc_find(ad, pid);

	if (p)
		return p;
	if (ad->nr_procs >= ad->sweep_at)
		as_proc_sweep(ad, now);
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	LIST_INSERT_HEAD(as_proc_bucket(ad, pid), p, hash);
	ad->nr_procs++;
	return p;
}

/* A read from p: how long p thought since its last read completed, and how far it seeks. */
static void as_update_history(struct as_proc *p, const struct request *rq, uint64_t now)
{
	uint64_t think = 0;

	if (rq_data_dir(rq) != AS_READ)
		return;
	if (p->has_read) {
		/* with I/O still out it did not stop to think */
		if (p->read_done && !p->nr_queued && !p->in_flight)
			think = as_min(now - p->last_end, AS_MAX_THINK_MS * NSEC_PER_MSEC);
		as_mean_add(&p->ttime, think);
		as_mean_add(&p->seek, as_min(as_dist(blk_rq_pos(rq), p->last_pos), AS_MAX_SEEK));
	}
	p->has_read = true;
	p->last_pos = blk_rq_end_sector(rq);
}

static int as_init_queue(struct elevator_queue *e)
{
	struct as_data *ad = calloc(1, sizeof(*ad));

	if (!ad)
		return -1;
	for (int dir = AS_READ; dir <= AS_WRITE; dir++) {
		elv_rb_init(&ad->sort_list[dir]);
		TAILQ_INIT(&ad->fifo_list[dir]);
	}
	for (int i = 0; i < AS_PROC_HASH; i++)
		LIST_INIT(&ad->procs[i]);
	ad->sweep_at = AS_PROC_SWEEP;
	ad->batch_dir = AS_WRITE; /* so that the first batch, with both waiting, is of reads */
	ad->fifo_expire[AS_READ] = AS_READ_EXPIRE_MS * NSEC_PER_MSEC;
	ad->fifo_expire[AS_WRITE] = AS_WRITE_EXPIRE_MS * NSEC_PER_MSEC;
	ad->batch_expire[AS_READ] = AS_READ_BATCH_EXPIRE_MS * NSEC_PER_MSEC;
	ad->batch_expire[AS_WRITE] = AS_WRITE_BATCH_EXPIRE_MS * NSEC_PER_MSEC;
	ad->antic_expire = AS_ANTIC_EXPIRE_MS * NSEC_PER_MSEC;
	e->elevator_data = ad;
	return 0;
}

static void as_exit_queue(struct elevator_queue *e)
{
	struct as_data *ad = e->elevator_data;
	struct as_proc *p;

	assert(TAILQ_EMPTY(&ad->fifo_list[AS_READ]) && TAILQ_EMPTY(&ad->fifo_list[AS_WRITE]));
	for (int i = 0; i < AS_PROC_HASH; i++)
		while ((p = LIST_FIRST(&ad->procs[i]))) {
			LIST_REMOVE(p, hash);
			free(p);
		}
	free(ad);
}

static bool as_antic_waiting(const struct as_data *ad)
{
	return ad->antic_status == AS_ANTIC_WAIT_REQ || ad->antic_status == AS_ANTIC_WAIT_NEXT;
}

static uint64_t as_antic_deadline(const struct as_data *ad)
{
	return ad->antic_start + ad->antic_expire;
}

/* Close to where the last read left the head, or nearer than p usually seeks. */
static bool as_close(const struct as_data *ad, const struct as_proc *p, const struct request *rq)
{
	sector_t head = ad->last_sector[AS_READ], pos = blk_rq_pos(rq);

	if (pos >= head ? pos - head <= AS_CLOSE_AHEAD : head - pos <= AS_CLOSE_BEHIND)
		return true;
	return p->seek.samples && as_dist(pos, head) < p->seek.mean;
}

/*
 * Whether waiting for the process whose read went last is pointless: it has
 * a request queued (whatever its direction or place: it is not thinking);
 * it was waited for long enough; it usually thinks longer than we would
 * wait; or rq (a new request, or the read that would go next, or NULL) is
 * close by anyway.
 */
static bool as_can_break(const struct as_data *ad, const struct request *rq, uint64_t now)
{
	const struct as_proc *p = ad->antic_proc;

	if (p->nr_queued || (!p->in_flight && now >= as_antic_deadline(ad)))
		return true;
	if (p->ttime.samples && p->ttime.mean > ad->antic_expire)
		return true;
	return rq && rq_data_dir(rq) == AS_READ && as_close(ad, p, rq);
}

static void as_add_request(struct elevator_queue *e, struct request *rq)
{
	struct as_data *ad = e->elevator_data;
	uint64_t now = blk_clock_now(e->clock);
	struct as_proc *p = as_proc_get(ad, rq->pid, now);
	int dir = rq_data_dir(rq);

	rq->elv_priv[0] = p;
	if (p) {
		as_update_history(p, rq, now);
		p->nr_queued++;
		p->last_seen = now;
	}
	elv_rb_add(&ad->sort_list[dir], rq);
	rq->fifo_time = now + ad->fifo_expire[dir];
	TAILQ_INSERT_TAIL(&ad->fifo_list[dir], rq, queuelist);
	/* the core runs the queue after adding: the wait ends there */
	if (as_antic_waiting(ad) && as_can_break(ad, rq, now))
		ad->antic_status = AS_ANTIC_FINISHED;
}

static void as_remove_request(struct as_data *ad, struct request *rq)
{
	int dir = rq_data_dir(rq);

	elv_rb_del(&ad->sort_list[dir], rq);
	TAILQ_REMOVE(&ad->fifo_list[dir], rq, queuelist);
}

/*
 * The next request of a direction: the nearest ahead of the head, unless
 * one a short way behind is nearer at AS_BACK_PENALTY times the cost; with
 * nothing ahead and nothing near behind, the sweep starts again at the
 * lowest sector.
 */
static struct request *as_next_rq(struct as_data *ad, int dir)
{
	struct elv_rb_root *tree = &ad->sort_list[dir];
	sector_t head = ad->last_sector[dir];
	struct request *ahead, *behind;
	sector_t back;

	rq_rb_around(tree, head, &ahead, &behind);
	back = behind ? head - blk_rq_pos(behind) : 0;
	if (back > AS_MAX_BACK)
		behind = NULL;
	if (ahead && (!behind || blk_rq_pos(ahead) - head <= back * AS_BACK_PENALTY))
		return ahead;
	return behind ? behind : elv_rb_first(tree);
}

/* The FIFO head if it expired; looked at once per expire interval, or seeks would storm. */
static struct request *as_fifo_expired(struct as_data *ad, int dir, uint64_t now)
{
	struct request *rq = TAILQ_FIRST(&ad->fifo_list[dir]);

	if (now < ad->last_check_fifo[dir] + ad->fifo_expire[dir])
		return NULL;
	ad->last_check_fifo[dir] = now;
	return rq && now >= rq->fifo_time ? rq : NULL;
}

/* Both directions wait and the batch has had its time. */
static bool as_batch_over(const struct as_data *ad, uint64_t now)
{
	return !TAILQ_EMPTY(&ad->fifo_list[AS_READ]) && !TAILQ_EMPTY(&ad->fifo_list[AS_WRITE]) &&
	       now >= ad->batch_end;
}

/*
 * Reads, unless the batch that ended was of reads and writes wait.  A read
 * batch starts at the oldest read, and its FIFO's clock with it; a write
 * batch goes on in sector order from the last write, unless the oldest
 * write is found expired (2.6's as_dispatch_request).
 */
static struct request *as_new_batch(struct as_data *ad, uint64_t now)
{
	bool reads = !TAILQ_EMPTY(&ad->fifo_list[AS_READ]);
	bool writes = !TAILQ_EMPTY(&ad->fifo_list[AS_WRITE]);
	int dir = reads && !(writes && ad->batch_dir == AS_READ) ? AS_READ : AS_WRITE;
	struct request *rq;

	ad->batch_dir = dir;
	ad->batch_end = now + ad->batch_expire[dir];
	if (dir == AS_WRITE) {
		rq = as_fifo_expired(ad, AS_WRITE, now);
		return rq ? rq : as_next_rq(ad, AS_WRITE);
	}
	ad->last_check_fifo[AS_READ] = now;
	return TAILQ_FIRST(&ad->fifo_list[AS_READ]);
}

/* Hold the read batch back for the process whose read went last?  Starts the wait. */
static bool as_anticipate(struct elevator_queue *e, uint64_t now)
{
	struct as_data *ad = e->elevator_data;

	if (!ad->antic_proc || !ad->antic_expire || e->draining ||
	    ad->antic_status == AS_ANTIC_FINISHED)
		return false;
	if (as_can_break(ad, as_next_rq(ad, AS_READ), now))
		return false;
	if (ad->antic_proc->in_flight) {
		ad->antic_status = AS_ANTIC_WAIT_REQ; /* the clock starts when it completes */
		return true;
	}
	ad->antic_status = AS_ANTIC_WAIT_NEXT;
	elv_schedule_dispatch(e, as_antic_deadline(ad));
	return true;
}

/* Whether a wait still holds the queue back; its timeout or draining ends it. */
static bool as_antic_holds(struct elevator_queue *e, uint64_t now)
{
	struct as_data *ad = e->elevator_data;

	if (!as_antic_waiting(ad))
		return false;
	if (e->draining ||
	    (ad->antic_status == AS_ANTIC_WAIT_NEXT && now >= as_antic_deadline(ad))) {
		ad->antic_status = AS_ANTIC_FINISHED;
		return false;
	}
	/* again: the core forgets a wake-up once its time passed, maybe an earlier wait's */
	if (ad->antic_status == AS_ANTIC_WAIT_NEXT)
		elv_schedule_dispatch(e, as_antic_deadline(ad));
	return true;
}

static void as_move_to_dispatch(struct as_data *ad, struct request *rq)
{
	struct as_proc *p = rq->elv_priv[0];
	int dir = rq_data_dir(rq);

	ad->antic_status = AS_ANTIC_OFF;
	ad->antic_proc = dir == AS_READ ? p : NULL; /* after a write, no reader to wait for */
	ad->last_sector[dir] = blk_rq_end_sector(rq);
	if (p) {
		p->nr_queued--;
		p->in_flight++;
	}
	as_remove_request(ad, rq);
}

static struct request *as_dispatch_request(struct elevator_queue *e, uint64_t now)
{
	struct as_data *ad = e->elevator_data;
	struct request *rq = NULL;

	if (as_antic_holds(e, now))
		return NULL;
	if (!as_batch_over(ad, now)) {
		rq = as_fifo_expired(ad, ad->batch_dir, now);
		if (!rq && ad->batch_dir == AS_READ && as_anticipate(e, now))
			return NULL;
		if (!rq)
			rq = as_next_rq(ad, ad->batch_dir);
		/* reads alone: the batch's clock waits for a write to start */
		if (rq && ad->batch_dir == AS_READ && TAILQ_EMPTY(&ad->fifo_list[AS_WRITE]))
			ad->batch_end = now + ad->batch_expire[AS_READ];
	}
	if (!rq)
		rq = as_new_batch(ad, now);
	if (rq)
		as_move_to_dispatch(ad, rq);
	return rq;
}

static bool as_has_work(const struct elevator_queue *e)
{
	const struct as_data *ad = e->elevator_data;

	return !TAILQ_EMPTY(&ad->fifo_list[AS_READ]) || !TAILQ_EMPTY(&ad->fifo_list[AS_WRITE]);
}

/*
 * Once all of the process's I/O is done it may be thinking about its next
 * read: a wait for it starts timing now.  elv_priv still holds the process
 * add_request found, which in_flight kept from being forgotten.
 */
static void as_completed(struct elevator_queue *e, struct request *rq)
{
	struct as_data *ad = e->elevator_data;
	uint64_t now = blk_clock_now(e->clock);
	struct as_proc *p = rq->elv_priv[0];

	if (!p)
		return; /* went untracked, out of memory */
	assert(p->in_flight);
	p->in_flight--;
	p->last_seen = now;
	if (rq_data_dir(rq) == AS_READ) {
		p->last_end = now;
		p->read_done = true;
	}
	if (p != ad->antic_proc || p->in_flight)
		return;
	ad->antic_start = now;
	if (ad->antic_status == AS_ANTIC_WAIT_REQ) {
		ad->antic_status = AS_ANTIC_WAIT_NEXT;
		elv_schedule_dispatch(e, as_antic_deadline(ad));
	}
}

/* Front merges (2.6's as_merge): a queued request that starts where the bio ends. */
static enum elv_merge as_find_merge(struct elevator_queue *e, const struct bio *bio,
				    struct request **rq)
{
	struct as_data *ad = e->elevator_data;

	*rq = elv_rb_find(&ad->sort_list[op_is_write(bio->bi_op)], bio_end_sector(bio));
	return *rq ? ELEVATOR_FRONT_MERGE : ELEVATOR_NO_MERGE;
}

/* next joins rq: rq keeps the earlier of the two deadlines and its FIFO place. */
static void as_requests_merged(struct elevator_queue *e, struct request *rq,
			       struct request *next)
{
	struct as_data *ad = e->elevator_data;
	struct as_proc *p = next->elv_priv[0];

	elv_fifo_merge(&ad->fifo_list[rq_data_dir(rq)], rq, next);
	if (p)
		p->nr_queued--;
	as_remove_request(ad, next);
}

ELV_TUNABLE(as, read_expire, struct as_data, fifo_expire[AS_READ], 0, INT_MAX, NSEC_PER_MSEC);
ELV_TUNABLE(as, write_expire, struct as_data, fifo_expire[AS_WRITE], 0, INT_MAX, NSEC_PER_MSEC);
ELV_TUNABLE(as, read_batch_expire, struct as_data, batch_expire[AS_READ], 0, INT_MAX,
	    NSEC_PER_MSEC);
ELV_TUNABLE(as, write_batch_expire, struct as_data, batch_expire[AS_WRITE], 0, INT_MAX,
	    NSEC_PER_MSEC);
ELV_TUNABLE(as, antic_expire, struct as_data, antic_expire, 0, INT_MAX, NSEC_PER_MSEC);

static const struct elv_tunable as_tunables[] = {
	ELV_ATTR(as, read_expire),
	ELV_ATTR(as, write_expire),
	ELV_ATTR(as, read_batch_expire),
	ELV_ATTR(as, write_batch_expire),
	ELV_ATTR(as, antic_expire),
	{ 0 },
};

static struct elevator_type elevator_as = {
	.elevator_name = "as",
	.elevator_description = "anticipatory: deadline that waits a moment for the next read nearby",
	.elevator_alias = "anticipatory",
	.init_queue = as_init_queue,
	.exit_queue = as_exit_queue,
	.add_request = as_add_request,
	.dispatch_request = as_dispatch_request,
	.has_work = as_has_work,
	.find_merge = as_find_merge,
	.requests_merged = as_requests_merged,
	.completed = as_completed,
	.tunables = as_tunables,
};

ELEVATOR_REGISTER(as, elevator_as)
