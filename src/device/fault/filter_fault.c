/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * filter_fault.c - the fault filter: errors by rule, bad sectors, flakey
 * intervals, dropped writes, corrupted bytes and extra latency, as
 * dm-flakey, dm-dust, dm-delay, null_blk's badblocks and nbdkit's error
 * filter inject them: "fault:error=read,prob=10000,seed=1".  Every request
 * ends from the timer or from below, never inside submit; a request that
 * fails after a good prefix goes down whole, and its prefix is passed up
 * as done before the rest fails.  Rules change at run time through the
 * control tree's fault/ (rules, enable, badblocks, stats).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <time.h>

#include "device.h"
#include "fault.h"

#define NSEC_PER_MS 1000000ull
#define FAULT_FILE_POLL_MS 10 /* how often error_file is looked at */

enum fault_act { FA_PASS, FA_FAIL, FA_DROP };

/* What the layer keeps with each request. */
struct fault_rq {
	TAILQ_ENTRY(fault_rq) link;
	struct request *rq;
	uint64_t due;
	enum fault_act act;
	unsigned int total;	/* sectors */
	unsigned int fail_at;	/* sectors before the first that fails; total: none fails */
	int err;		/* -errno for those from fail_at on */
	unsigned int done;	/* sectors ended below */
	unsigned int held_good; /* of them, held back to corrupt before passing up */
	bool corrupt_byte;	/* corrupt_bio_byte on this read's data */
	bool corrupt_random;	/* one random byte of this read's data */
	bool fails;		/* from fail_at on (a flush: fail_at 0 and total 0) */
};

TAILQ_HEAD(fault_list, fault_rq);

struct fault_stats {
	uint64_t errors, badblock_errors, flakey_errors, dropped_writes, corrupted, delayed, spikes,
	    cleared_badblocks;
};

/*
 * error_file's watcher: a thread of its own, so that no stat(2) runs on the
 * host's loop.  Detached, it shares this with the filter and the last of
 * the two frees it: a stat that hangs (a dead mount) holds up neither the
 * disk's stop nor anything else.
 */
struct fault_watch {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	char *path;	    /* under lock; NULL: nothing to watch */
	uint64_t gen;	    /* under lock: paths set so far */
	bool stop;	    /* under lock */
	unsigned int refs;  /* under lock: the filter's and the thread's */
	atomic_bool exists; /* what the last look at the current path saw */
};

struct fault_filter {
	struct fault_rules r;
	struct fault_badblocks bb;
	sector_t capacity;
	uint64_t epoch; /* when the rules were set: flakey is up from then */
	uint64_t rng_err, rng_spike, rng_corrupt;
	uint64_t matched, fired; /* requests the error rule matched, and failed */
	int was_down;		 /* -1: not looked yet */
	struct fault_list held;	 /* in due order */
	unsigned int nr_held, nr_below;
	struct fault_stats st;
	struct fault_watch *w; /* NULL: no watcher */
	bool no_data;	       /* over a device with no data (rqdisk-replay's) */
};

/* splitmix64: small, seedable, the same sequence everywhere. */
static uint64_t fault_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static bool fault_chance(uint64_t *s, uint32_t ppm)
{
	if (ppm >= FAULT_PPM)
		return true;
	return ppm && fault_rand(s) % FAULT_PPM < ppm;
}

/* Start the rules over: counts, random sequences and flakey's cycle. */
static void fault_restart(struct fault_filter *ff, uint64_t now)
{
	ff->rng_err = ff->r.seed;
	ff->rng_spike = ff->r.seed ^ 0x5bd1e995ull;
	ff->rng_corrupt = ff->r.seed ^ 0xc2b2ae35ull;
	ff->matched = ff->fired = 0;
	ff->epoch = now;
	ff->was_down = -1;
}

/* Drop a reference, the lock held (and released); the last frees the watch. */
static void fault_watch_put(struct fault_watch *w)
{
	bool last = !--w->refs;

	pthread_mutex_unlock(&w->lock);
	if (!last)
		return;
	free(w->path);
	pthread_cond_destroy(&w->wake);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

static void *fault_watcher(void *arg)
{
	struct fault_watch *w = arg;
	char *path = NULL;

	pthread_mutex_lock(&w->lock);
	while (!w->stop) {
		uint64_t gen = w->gen;
		struct timespec ts;
		struct stat st;
		bool seen;

		free(path);
		path = w->path ? strdup(w->path) : NULL;
		pthread_mutex_unlock(&w->lock);
		seen = path && !stat(path, &st);
		pthread_mutex_lock(&w->lock);
		if (gen != w->gen)
			continue; /* a look at a path no longer watched: look at the new one */
		atomic_store(&w->exists, seen);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += FAULT_FILE_POLL_MS * NSEC_PER_MS;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		if (!w->stop)
			pthread_cond_timedwait(&w->wake, &w->lock, &ts);
	}
	free(path);
	fault_watch_put(w);
	return NULL;
}

static struct fault_watch *fault_watch_start(char *path)
{
	struct fault_watch *w = calloc(1, sizeof(*w));
	pthread_attr_t attr;
	pthread_t thread;
	int ret;

	if (!w)
		return NULL;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->wake, NULL);
	w->path = path;
	w->refs = 2;
	atomic_store(&w->exists, false);
	ret = pthread_attr_init(&attr);
	if (!ret) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		ret = pthread_create(&thread, &attr, fault_watcher, w);
		pthread_attr_destroy(&attr);
	}
	if (ret) {
		pthread_cond_destroy(&w->wake);
		pthread_mutex_destroy(&w->lock);
		free(w);
		return NULL;
	}
	return w;
}

/* Watch path (NULL: none) from now on; the thread starts with the first path. */
static int fault_watch_set(struct fault_filter *ff, const char *path)
{
	char *copy = path ? strdup(path) : NULL;
	struct fault_watch *w = ff->w;

	if (path && !copy)
		return -ENOMEM;
	if (!w && !path)
		return 0;
	if (!w) {
		ff->w = fault_watch_start(copy);
		if (!ff->w) {
			free(copy);
			return -EAGAIN;
		}
		return 0;
	}
	pthread_mutex_lock(&w->lock);
	free(w->path);
	w->path = copy;
	w->gen++;
	atomic_store(&w->exists, false); /* until the watcher has looked */
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

/* The thread ends after its look in progress, if one is; nothing waits for it. */
static void fault_watch_stop(struct fault_filter *ff)
{
	struct fault_watch *w = ff->w;

	if (!w)
		return;
	ff->w = NULL;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->wake);
	fault_watch_put(w);
}

/* Keys with nothing to act on over a device with no data (lim->no_data) and no files. */
static int fault_check_no_data(const struct fault_rules *r, char *why, size_t whylen)
{
	if (r->drop_writes || r->corrupt_bio_byte || r->random_read_corrupt ||
	    r->random_write_corrupt || r->error_file) {
		snprintf(why, whylen,
			 "fault: drop_writes, corruption and error_file need data and "
			 "files, which the device below has not");
		return -EINVAL;
	}
	return 0;
}

static int fault_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		      size_t whylen)
{
	struct fault_filter *ff = calloc(1, sizeof(*ff));
	int ret;

	if (!ff) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	fault_rules_init(&ff->r);
	ff->capacity = lim->capacity;
	ff->no_data = lim->no_data;
	ret = fault_rules_parse(&ff->r, &ff->bb, args, lim->capacity, why, whylen);
	if (!ret && ff->no_data)
		ret = fault_check_no_data(&ff->r, why, whylen);
	/* no queue: a stack only checked and described (rqdisk-replay): no watcher, no clock */
	if (!ret && dev_has_queue(dev)) {
		ret = fault_watch_set(ff, ff->r.error_file);
		if (ret)
			snprintf(why, whylen, "fault: no watcher for error_file: %s",
				 strerror(-ret));
	}
	if (ret) {
		fault_rules_free(&ff->r);
		fault_bb_free(&ff->bb);
		free(ff);
		return ret;
	}
	TAILQ_INIT(&ff->held);
	fault_restart(ff, dev_has_queue(dev) ? dev_now(dev) : 0);
	dev->priv = ff;
	return 0;
}

static void fault_close(struct blk_dev *dev)
{
	struct fault_filter *ff = dev->priv;

	if (!ff)
		return;
	fault_watch_stop(ff);
	fault_rules_free(&ff->r);
	fault_bb_free(&ff->bb);
	free(ff);
	dev->priv = NULL;
}

static bool fault_can_take(struct blk_dev *dev)
{
	struct fault_filter *ff = dev->priv;

	return ff->nr_held + ff->nr_below < dev_depth(dev) &&
	       (ff->nr_held || dev_can_take(dev->lower));
}

static bool fault_is_write(enum req_op op)
{
	return op == REQ_OP_WRITE || op == REQ_OP_WRITE_ZEROES || op == REQ_OP_DISCARD;
}

/* The request fails from sector at on, with err, unless something fails it earlier. */
static bool fault_fail(struct fault_rq *p, unsigned int at, int err)
{
	if (p->fails && at >= p->fail_at)
		return false;
	p->fails = true;
	p->fail_at = at;
	p->err = -err;
	return true;
}

/* Reads fail at a bad sector, and writes too when sticky (others clear them: fault_remap). */
static void fault_badblocks(struct blk_dev *dev, struct fault_rq *p, sector_t pos)
{
	struct fault_filter *ff = dev->priv;
	enum req_op op = p->rq->cmd_op;
	unsigned int at;

	if (!ff->bb.nr || !p->total || (op != REQ_OP_READ && !fault_is_write(op)))
		return;
	if (op != REQ_OP_READ && !ff->r.sticky)
		return;
	at = fault_bb_first(&ff->bb, pos, p->total);
	if (at < p->total && fault_fail(p, at, EIO)) {
		ff->st.badblock_errors++;
		dev_trace_msg(dev, "bad sector %llu: EIO", (unsigned long long)(pos + at));
	}
}

/*
 * A write clears the bad sectors it writes (the drive remapped them): once
 * the other rules have had their say, only those before the sectors that
 * fail, and none of a write that fails whole or is dropped, which reaches
 * no sector.
 */
static void fault_remap(struct blk_dev *dev, struct fault_rq *p, sector_t pos)
{
	struct fault_filter *ff = dev->priv;

	if (!ff->bb.nr || ff->r.sticky || !fault_is_write(p->rq->cmd_op) || p->act != FA_PASS ||
	    !p->fail_at || fault_bb_first(&ff->bb, pos, p->fail_at) == p->fail_at)
		return;
	if (!fault_bb_clear(&ff->bb, pos, pos + p->fail_at)) {
		ff->st.cleared_badblocks++;
		dev_trace_msg(dev, "bad sectors in %llu+%u cleared by a write",
			      (unsigned long long)pos, p->fail_at);
	}
}

/* The error rule: whether it is on now, and whether this request matches it. */
static void fault_error_rule(struct blk_dev *dev, struct fault_rq *p, sector_t pos)
{
	struct fault_filter *ff = dev->priv;
	const struct fault_rules *r = &ff->r;
	sector_t end = r->end ? r->end : ff->capacity;
	unsigned int at = 0;

	if (!r->ops || !r->enable || !(r->ops & FAULT_OP(p->rq->cmd_op)))
		return;
	if (r->error_file && (!ff->w || !atomic_load(&ff->w->exists)))
		return;
	if (p->total) {
		if (pos >= end || pos + p->total <= r->start)
			return;
		at = r->start > pos ? (unsigned int)(r->start - pos) : 0;
	}
	if (++ff->matched % r->interval)
		return;
	if (!fault_chance(&ff->rng_err, r->prob))
		return;
	if (r->times && ff->fired >= r->times)
		return;
	if (fault_fail(p, at, r->err)) { /* times counts what the rule fails, not a bad sector */
		ff->fired++;
		ff->st.errors++;
		dev_trace_msg(dev, "error %s at %llu", fault_errno_name(r->err),
			      (unsigned long long)(pos + at));
	}
}

static bool fault_down(struct blk_dev *dev, uint64_t now)
{
	struct fault_filter *ff = dev->priv;
	uint64_t up = ff->r.up_ms * NSEC_PER_MS, period = up + ff->r.down_ms * NSEC_PER_MS;
	bool down = ff->r.down_ms && (now - ff->epoch) % period >= up;

	if ((int)down != ff->was_down) {
		if (ff->was_down >= 0)
			dev_trace_msg(dev, "flakey %s", down ? "down" : "up");
		ff->was_down = down;
	}
	return down;
}

/* Set the byte at off of the request's data (from its first bio) to v, or xor it with x. */
static void fault_poke(struct request *rq, uint64_t off, int v, unsigned int x)
{
	struct bio *bio;

	rq_for_each_bio(bio, rq)
	{
		for (unsigned short i = 0; i < bio->bi_vcnt; i++) {
			struct bio_vec *bv = &bio->bi_io_vec[i];
			unsigned char *b = bv->bv_base;

			if (off < bv->bv_len) {
				b[off] = v >= 0 ? (unsigned char)v : (unsigned char)(b[off] ^ x);
				return;
			}
			off -= bv->bv_len;
		}
	}
}

/* corrupt_bio_byte: the Nth byte of each bio, within the first bytes of the request. */
static void fault_corrupt_bios(const struct fault_rules *r, struct request *rq, uint64_t bytes)
{
	uint64_t at = 0, n = r->corrupt_bio_byte - 1;
	struct bio *bio;

	rq_for_each_bio(bio, rq)
	{
		if (n < bio->bi_size && at + n < bytes)
			fault_poke(rq, at + n, (int)r->corrupt_value, 0);
		at += bio->bi_size;
	}
}

/* One byte of the first bytes, at random, changed to another value. */
static void fault_corrupt_random(struct fault_filter *ff, struct request *rq, uint64_t bytes)
{
	uint64_t x = fault_rand(&ff->rng_corrupt);

	if (bytes)
		fault_poke(rq, (x >> 8) % bytes, -1, (unsigned int)(x & 0xff) | 1);
}

/* While flakey is down: what dm-flakey does with its features, or every request fails. */
static void fault_flakey(struct blk_dev *dev, struct fault_rq *p)
{
	struct fault_filter *ff = dev->priv;
	const struct fault_rules *r = &ff->r;
	enum req_op op = p->rq->cmd_op;
	bool any = r->error_reads || r->error_writes || r->drop_writes || r->corrupt_bio_byte ||
		   r->random_read_corrupt || r->random_write_corrupt;
	uint64_t bytes = (uint64_t)p->total << SECTOR_SHIFT;

	if (!any || (r->error_reads && op == REQ_OP_READ) ||
	    (r->error_writes && fault_is_write(op))) {
		if (fault_fail(p, 0, EIO))
			ff->st.flakey_errors++;
		return;
	}
	if (p->fails)
		return; /* failing already: nothing of it is written or read */
	if (r->drop_writes && fault_is_write(op)) {
		p->act = FA_DROP;
		ff->st.dropped_writes++;
		dev_dropped_write(dev);
		return;
	}
	if (op == REQ_OP_WRITE) {
		bool byte = r->corrupt_bio_byte && (r->corrupt_on & FAULT_OP(REQ_OP_WRITE));
		bool rnd = fault_chance(&ff->rng_corrupt, r->random_write_corrupt);

		if (byte)
			fault_corrupt_bios(r, p->rq, bytes);
		if (rnd)
			fault_corrupt_random(ff, p->rq, bytes);
		ff->st.corrupted += byte || rnd;
	} else if (op == REQ_OP_READ) {
		p->corrupt_byte = r->corrupt_bio_byte && (r->corrupt_on & FAULT_OP(REQ_OP_READ));
		p->corrupt_random = fault_chance(&ff->rng_corrupt, r->random_read_corrupt);
	}
}

static uint64_t fault_delay(struct fault_filter *ff, enum req_op op)
{
	uint64_t ms = op == REQ_OP_READ ? ff->r.delay_read_ms : ff->r.delay_write_ms;

	if (ms)
		ff->st.delayed++;
	if (ff->r.spike_ms && fault_chance(&ff->rng_spike, ff->r.spike_prob)) {
		ms += ff->r.spike_ms;
		ff->st.spikes++;
	}
	return ms * NSEC_PER_MS;
}

/* Into the held list, in due order (equal dues in arrival order). */
static void fault_hold(struct blk_dev *dev, struct fault_rq *p)
{
	struct fault_filter *ff = dev->priv;
	struct fault_rq *o;

	TAILQ_FOREACH_REVERSE(o, &ff->held, fault_list, link)
	if (o->due <= p->due)
		break;
	if (o)
		TAILQ_INSERT_AFTER(&ff->held, o, p, link);
	else
		TAILQ_INSERT_HEAD(&ff->held, p, link);
	ff->nr_held++;
	if (!dev->timer_at || p->due < dev->timer_at)
		dev_set_timer(dev, p->due);
}

static void fault_down_submit(struct blk_dev *dev, struct fault_rq *p)
{
	struct fault_filter *ff = dev->priv;

	ff->nr_below++;
	dev_submit(dev->lower, p->rq);
}

static void fault_submit(struct blk_dev *dev, struct request *rq)
{
	struct fault_filter *ff = dev->priv;
	struct fault_rq *p = dev_rq_pdu(dev, rq);
	uint64_t now = dev_now(dev);
	sector_t pos = blk_rq_pos(rq);

	p->rq = rq;
	p->total = p->fail_at = blk_rq_sectors(rq);
	p->act = FA_PASS;
	fault_badblocks(dev, p, pos);
	fault_error_rule(dev, p, pos);
	if (fault_down(dev, now))
		fault_flakey(dev, p);
	if (p->fails && p->fail_at == 0)
		p->act = FA_FAIL;
	fault_remap(dev, p, pos);
	p->due = now + fault_delay(ff, rq->cmd_op);
	if (p->act == FA_PASS && p->due <= now && TAILQ_EMPTY(&ff->held))
		fault_down_submit(dev, p);
	else
		fault_hold(dev, p);
}

/* What is due: ended here (failed, dropped), or sent down while the layer below takes it. */
static void fault_release(struct blk_dev *dev, uint64_t now)
{
	struct fault_filter *ff = dev->priv;
	struct fault_rq *p;

	while ((p = TAILQ_FIRST(&ff->held)) && p->due <= now) {
		if (p->act == FA_PASS && !dev_can_take(dev->lower))
			break;
		TAILQ_REMOVE(&ff->held, p, link);
		ff->nr_held--;
		if (p->act == FA_PASS)
			fault_down_submit(dev, p);
		else
			dev_end(dev, p->rq, p->act == FA_FAIL ? p->err : 0, p->total);
	}
	p = TAILQ_FIRST(&ff->held);
	if (!p)
		dev_set_timer(dev, 0);
	else if (p->due > now)
		dev_set_timer(dev, p->due);
	else if (ff->nr_below)
		dev_set_timer(dev, 0); /* due but not taken: the next end below brings it */
	else
		dev_set_timer(dev, now + NSEC_PER_MS / 10);
}

static void fault_timer(struct blk_dev *dev, uint64_t now)
{
	fault_release(dev, now);
}

/* A read's good sectors, corrupted as its rules say, passed up at once. */
static void fault_pass_corrupted(struct blk_dev *dev, struct fault_rq *p)
{
	struct fault_filter *ff = dev->priv;
	unsigned int good = p->held_good;
	uint64_t bytes = (uint64_t)good << SECTOR_SHIFT;

	if (p->corrupt_byte)
		fault_corrupt_bios(&ff->r, p->rq, bytes);
	if (p->corrupt_random)
		fault_corrupt_random(ff, p->rq, bytes);
	ff->st.corrupted++;
	p->corrupt_byte = p->corrupt_random = false;
	p->held_good = 0;
	if (good) /* the last end of the request frees it, p with it */
		dev_end(dev, p->rq, 0, good);
}

/*
 * Sectors [from, from + n) of the request ended below with error: those
 * before fail_at go up with it, the rest with the rule's error.  A read to
 * corrupt is held until it has all ended, or fails, so that its data is
 * changed in place before anyone above sees it.
 */
static void fault_end(struct blk_dev *dev, struct request *rq, int error, unsigned int n)
{
	struct fault_filter *ff = dev->priv;
	struct fault_rq *p = dev_rq_pdu(dev, rq);
	unsigned int from = p->done, good;
	bool last;

	p->done += n < p->total - p->done ? n : p->total - p->done;
	last = p->done == p->total;
	if (last)
		ff->nr_below--;
	if (p->corrupt_byte || p->corrupt_random) {
		if (!error)
			p->held_good += n;
		if (error || last)
			fault_pass_corrupted(dev, p);
		if (error)
			dev_end(dev, rq, error, n);
	} else {
		good = from < p->fail_at ? p->fail_at - from : 0;
		if (good > n)
			good = n;
		if (good || !n)
			dev_end(dev, rq, error, good);
		if (n > good)
			dev_end(dev, rq, error ? error : p->err, n - good);
	}
	if (last && TAILQ_FIRST(&ff->held))
		fault_release(dev, dev_now(dev));
}

static int fault_describe(const struct blk_dev *dev, char *buf, size_t len)
{
	const struct fault_filter *ff = dev->priv;

	return fault_rules_format(&ff->r, buf, len);
}

static int fault_show_rules(struct blk_dev *dev, char *buf, size_t len)
{
	int n = fault_describe(dev, buf, len);

	if (n >= 0 && (size_t)n + 1 < len) {
		buf[n++] = '\n';
		buf[n] = 0;
	}
	return n;
}

/*
 * New rules, over the ones in force (keys not given keep their values):
 * all or nothing.  The rules start over: the error rule's counts, the
 * random sequences from the seed, flakey's cycle from now.
 */
static int fault_store_rules(struct blk_dev *dev, const char *buf)
{
	struct fault_filter *ff = dev->priv;
	struct fault_rules r;
	struct fault_badblocks bb;
	char why[256];
	int ret;

	if (fault_rules_copy(&r, &ff->r))
		return -ENOMEM;
	if (fault_bb_copy(&bb, &ff->bb)) {
		fault_rules_free(&r);
		return -ENOMEM;
	}
	ret = fault_rules_parse(&r, &bb, buf, ff->capacity, why, sizeof(why));
	if (!ret && ff->no_data)
		ret = fault_check_no_data(&r, why, sizeof(why));
	if (!ret && (!r.error_file != !ff->r.error_file ||
		     (r.error_file && strcmp(r.error_file, ff->r.error_file))))
		ret = fault_watch_set(ff, r.error_file);
	if (ret) {
		fault_rules_free(&r);
		fault_bb_free(&bb);
		return ret == -ENOMEM ? ret : -EINVAL;
	}
	fault_rules_free(&ff->r);
	fault_bb_free(&ff->bb);
	ff->r = r;
	ff->bb = bb;
	fault_restart(ff, dev_now(dev));
	dev_trace_msg(dev, "rules %s", buf);
	return 0;
}

static int fault_show_enable(struct blk_dev *dev, char *buf, size_t len)
{
	struct fault_filter *ff = dev->priv;

	return snprintf(buf, len, "%d\n", ff->r.enable);
}

/* On or off, the counts kept (dm-dust's enable and disable). */
static int fault_store_enable(struct blk_dev *dev, const char *buf)
{
	struct fault_filter *ff = dev->priv;
	uint64_t v;

	if (dev_parse_value(buf, 0, 1, &v))
		return -EINVAL;
	if (ff->r.enable != (bool)v)
		dev_trace_msg(dev, "enable %llu", (unsigned long long)v);
	ff->r.enable = v;
	return 0;
}

static int fault_show_badblocks(struct blk_dev *dev, char *buf, size_t len)
{
	struct fault_filter *ff = dev->priv;

	return fault_bb_show(&ff->bb, buf, len);
}

static int fault_store_badblocks(struct blk_dev *dev, const char *buf)
{
	struct fault_filter *ff = dev->priv;
	int ret = fault_bb_command(&ff->bb, buf, ff->capacity);

	if (ret)
		return ret == -ENOMEM ? ret : -EINVAL;
	dev_trace_msg(dev, "badblocks %s", buf);
	return 0;
}

static int fault_show_stats(struct blk_dev *dev, char *buf, size_t len)
{
	struct fault_filter *ff = dev->priv;
	const struct fault_stats *s = &ff->st;

	return snprintf(buf, len,
			"errors %llu\nbadblock_errors %llu\nflakey_errors %llu\n"
			"dropped_writes %llu\ncorrupted %llu\ndelayed %llu\nspikes %llu\n"
			"cleared_badblocks %llu\n",
			(unsigned long long)s->errors, (unsigned long long)s->badblock_errors,
			(unsigned long long)s->flakey_errors, (unsigned long long)s->dropped_writes,
			(unsigned long long)s->corrupted, (unsigned long long)s->delayed,
			(unsigned long long)s->spikes, (unsigned long long)s->cleared_badblocks);
}

/* fault/ (and device/fault/): the rules, the error rule's switch, the bad sectors, the counts. */
static const struct dev_attr fault_attrs[] = {
    {"badblocks", fault_show_badblocks, fault_store_badblocks},
    {"enable", fault_show_enable, fault_store_enable},
    {"rules", fault_show_rules, fault_store_rules},
    {"stats", fault_show_stats, NULL},
    {NULL, NULL, NULL},
};

DEV_REGISTER(fault, "fault",
    .description = "fails, drops, corrupts or delays requests by rules, as dm-flakey and dm-dust",
    .keys = fault_keys,
    .rq_pdu_size = sizeof(struct fault_rq),
    .open = fault_open,
    .close = fault_close,
    .can_take = fault_can_take,
    .submit = fault_submit,
    .end = fault_end,
    .timer = fault_timer,
    .describe = fault_describe,
    .attrs = fault_attrs,
    .ctl_dir = "fault");
