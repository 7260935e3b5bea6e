/* SPDX-License-Identifier: BSD-3-Clause */
/* stack_harness.c - a queue over a device stack on a virtual clock, for the stack's unit tests. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "queue_stack.h"
#include "stack_harness.h"

struct sh_hand sh_hand;

static void sh_request_fn(struct request_queue *q)
{
	struct stack_harness *h = q->queuedata;
	struct request *rq;

	while (dev_can_take(h->stack.top) && (rq = blk_fetch_request(q))) {
		h->in_submit = true;
		dev_submit(h->stack.top, rq);
		h->in_submit = false;
		if (q->in_flight > h->max_below)
			h->max_below = q->in_flight;
	}
}

static void sh_end_io(struct bio *bio, int error)
{
	struct stack_harness *h = bio->bi_private;
	unsigned int i = (unsigned int)(bio - h->bio);

	ck_assert_msg(!h->ended_at[i], "bio %u ended twice", i);
	ck_assert_msg(!h->in_submit || h->may_end_in_submit, "bio %u ended inside submit", i);
	h->ended_in_submit += h->in_submit;
	h->ended_at[i] = h->clock.virtual_ns;
	h->error[i] = error;
	h->order[i] = ++h->nr_ended;
}

static int sh_watch(void *host, int fd, void (*ready)(void *arg), void *arg)
{
	struct stack_harness *h = host;

	h->watched_fd = fd;
	h->watched_ready = ready;
	h->watched_arg = arg;
	return 0;
}

static void sh_unwatch(void *host, int fd)
{
	struct stack_harness *h = host;

	ck_assert_int_eq(fd, h->watched_fd);
	h->watched_fd = -1;
}

static bool sh_io_room(void *host, unsigned int need)
{
	struct stack_harness *h = host;

	return h->nr_io + need <= SH_MAX_IO;
}

static void sh_submit_io(void *host, struct dev_io *io)
{
	struct stack_harness *h = host;

	ck_assert_uint_lt(h->nr_io, SH_MAX_IO); /* io_room said yes first */
	ck_assert_int_eq(io->op, DEV_IO_NOP); /* the one a harness carries out */
	h->io[h->nr_io++] = io;
}

static const struct dev_host_ops sh_host_ops = {
	.watch_fd = sh_watch,
	.unwatch_fd = sh_unwatch,
	.io_room = sh_io_room,
	.submit_io = sh_submit_io,
};

void sh_host_turn(struct stack_harness *h)
{
	struct dev_io *io[SH_MAX_IO];
	unsigned int nr = h->nr_io;

	/* what comes during the turn waits for the next, as a ring's new SQEs do */
	memcpy(io, h->io, nr * sizeof(io[0]));
	h->nr_io = 0;
	blk_queue_lock(h->q);
	for (unsigned int i = 0; i < nr; i++)
		io[i]->done(io[i], 0);
	blk_queue_unlock(h->q);
	blk_run_queue(h->q);
}

int sh_stack_open(struct dev_stack *s, struct request_queue *q, const char *const *specs,
		  unsigned int nr, const struct dev_ops *backend, const char *backend_args,
		  struct dev_limits *lim, char *why, size_t whylen)
{
	int ret;

	blk_stack_set_queue(s, q);
	ret = dev_stack_open(s, specs, nr, backend, backend_args, lim, why, whylen);
	if (ret)
		return ret;
	ret = blk_queue_stack_limits(q, lim, why, whylen);
	if (ret) {
		s->aborted = true; /* the layers take back what they made */
		dev_stack_close(s);
	}
	return ret;
}

int sh_open(struct stack_harness *h, const char *const *specs, unsigned int nr,
	    const struct dev_ops *backend, sector_t capacity, unsigned int max_bios, char *why,
	    size_t whylen)
{
	return sh_open_args(h, specs, nr, backend, NULL, capacity, max_bios, why, whylen);
}

int sh_open_args(struct stack_harness *h, const char *const *specs, unsigned int nr,
		 const struct dev_ops *backend, const char *args, sector_t capacity,
		 unsigned int max_bios, char *why, size_t whylen)
{
	struct dev_limits lim = { .capacity = capacity };

	memset(h, 0, sizeof(*h));
	h->watched_fd = -1;
	blk_virtual_clock_init(&h->clock, SH_START_NS);
	h->q = blk_init_queue(sh_request_fn, NULL, &h->clock);
	ck_assert_ptr_nonnull(h->q);
	h->q->queuedata = h;
	h->max_bios = max_bios;
	h->bio = calloc(max_bios, sizeof(*h->bio));
	h->vec = calloc(max_bios, sizeof(*h->vec));
	h->buf = calloc(max_bios, sizeof(*h->buf));
	h->ended_at = calloc(max_bios, sizeof(*h->ended_at));
	h->error = calloc(max_bios, sizeof(*h->error));
	h->order = calloc(max_bios, sizeof(*h->order));
	ck_assert(h->bio && h->vec && h->buf && h->ended_at && h->error && h->order);
	h->stack.host_ops = &sh_host_ops;
	h->stack.host = h;
	return sh_stack_open(&h->stack, h->q, specs, nr, backend, args, &lim, why, whylen);
}

void sh_setup(struct stack_harness *h, const char *const *specs, unsigned int nr,
	      const struct dev_ops *backend, sector_t capacity, unsigned int max_bios)
{
	char why[256] = "";

	ck_assert_msg(sh_open(h, specs, nr, backend, capacity, max_bios, why, sizeof(why)) == 0,
		      "%s", why);
	blk_queue_set_pdu_size(h->q, dev_stack_pdu_size(&h->stack));
	ck_assert_int_eq(elevator_init(h->q, "noop"), 0);
}

void sh_close(struct stack_harness *h)
{
	ck_assert(blk_queue_idle(h->q));
	dev_stack_close(&h->stack);
	blk_cleanup_queue(h->q);
	h->q = NULL;
}

void sh_free(struct stack_harness *h)
{
	for (unsigned int i = 0; i < h->nr_bios; i++)
		free(h->buf[i]);
	free(h->bio);
	free(h->vec);
	free(h->buf);
	free(h->ended_at);
	free(h->error);
	free(h->order);
}

void sh_teardown(struct stack_harness *h)
{
	sh_close(h);
	sh_free(h);
}

void sh_open_failed(struct stack_harness *h)
{
	blk_cleanup_queue(h->q);
	h->q = NULL;
	sh_free(h);
}

void sh_kick(struct stack_harness *h)
{
	uint64_t at;

	while ((at = dev_stack_next_timer(&h->stack)) && at <= h->clock.virtual_ns) {
		blk_queue_lock(h->q);
		dev_stack_run_timers(&h->stack, h->clock.virtual_ns);
		blk_queue_unlock(h->q);
		blk_run_queue(h->q);
	}
	blk_run_queue(h->q);
}

void sh_run_until(struct stack_harness *h, uint64_t t)
{
	uint64_t at;

	sh_kick(h);
	while ((at = dev_stack_next_timer(&h->stack)) && at <= t) {
		h->clock.virtual_ns = at;
		sh_kick(h);
	}
	h->clock.virtual_ns = t;
	sh_kick(h);
}

/*
 * Each timer at its time, never back in time, the queue run after each;
 * the host's I/O at once, before time goes on.
 */
void sh_run(struct stack_harness *h)
{
	uint64_t at;

	for (;;) {
		if (h->nr_io) {
			sh_host_turn(h);
			continue;
		}
		at = dev_stack_next_timer(&h->stack);
		if (!at)
			break;
		ck_assert_uint_ge(at, h->clock.virtual_ns);
		h->clock.virtual_ns = at;
		blk_queue_lock(h->q);
		dev_stack_run_timers(&h->stack, at);
		blk_queue_unlock(h->q);
		blk_run_queue(h->q);
	}
	for (unsigned int i = 0; i < h->nr_bios; i++)
		ck_assert_msg(h->ended_at[i], "bio %u never ended", i);
}

unsigned int sh_bio(struct stack_harness *h, enum req_op op, unsigned int flags, sector_t sector,
		    unsigned int nr, int fill)
{
	unsigned int i = h->nr_bios++;
	size_t len = (size_t)nr << SECTOR_SHIFT;

	ck_assert_uint_lt(i, h->max_bios);
	if (len) {
		ck_assert_int_eq(posix_memalign((void **)&h->buf[i], BLK_PAGE_SIZE, len), 0);
		memset(h->buf[i], fill, len);
	}
	h->vec[i] = (struct bio_vec){ h->buf[i], len };
	bio_init(&h->bio[i], op, sector, op == REQ_OP_FLUSH ? 0 : (unsigned int)len, &h->vec[i],
		 op_has_data(op) ? 1 : 0);
	h->bio[i].bi_flags = flags;
	h->bio[i].bi_end_io = sh_end_io;
	h->bio[i].bi_private = h;
	return i;
}

unsigned int sh_queue_bio(struct stack_harness *h, enum req_op op, unsigned int flags,
			  sector_t sector, unsigned int nr, int fill)
{
	unsigned int i = sh_bio(h, op, flags, sector, nr, fill);

	__submit_bio(h->q, &h->bio[i]);
	return i;
}

unsigned int sh_submit(struct stack_harness *h, enum req_op op, unsigned int flags, sector_t sector,
		       unsigned int nr, int fill)
{
	unsigned int i = sh_bio(h, op, flags, sector, nr, fill);

	submit_bio(h->q, &h->bio[i]);
	sh_kick(h);
	return i;
}

/*
 * As blk_fetch_request leaves a request: started, counted in flight and
 * in its barrier epoch.
 */
void sh_issue(struct stack_harness *h, unsigned int i)
{
	struct request *rq;

	h->bio[i].bi_remaining = 1; /* what submit_bio sets */
	blk_queue_lock(h->q);
	rq = blk_alloc_request(h->q, &h->bio[i]);
	ck_assert_ptr_nonnull(rq);
	rq->rq_flags |= RQF_STARTED;
	h->q->in_flight++;
	h->q->epoch_count++;
	ck_assert(dev_can_take(h->stack.top));
	h->in_submit = true;
	dev_submit(h->stack.top, rq);
	h->in_submit = false;
	blk_queue_unlock(h->q);
}

void sh_copy(struct request *rq, void *medium, bool to_rq)
{
	unsigned char *at = medium;
	struct bio *bio;

	rq_for_each_bio(bio, rq) {
		for (unsigned short i = 0; i < bio->bi_vcnt; i++) {
			struct bio_vec *bv = &bio->bi_io_vec[i];

			if (to_rq)
				memcpy(bv->bv_base, at, bv->bv_len);
			else
				memcpy(at, bv->bv_base, bv->bv_len);
			at += bv->bv_len;
		}
	}
}

static int sh_hand_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
			size_t whylen)
{
	(void)dev;
	(void)args;
	(void)why;
	(void)whylen;
	lim->logical_block_size = SECTOR_SIZE;
	lim->discard = lim->write_zeroes = true;
	sh_hand.nr = 0;
	sh_hand.refuse = false;
	return 0;
}

static bool sh_hand_can_take(struct blk_dev *dev)
{
	(void)dev;
	return !sh_hand.refuse;
}

static void sh_hand_submit(struct blk_dev *dev, struct request *rq)
{
	(void)dev;
	ck_assert_uint_lt(sh_hand.nr, SH_HAND_MAX);
	sh_hand.below[sh_hand.nr++] = rq;
}

const struct dev_ops sh_hand_ops = {
	.api_version = DEV_API_VERSION,
	.name = "hand",
	.backend = true,
	.open = sh_hand_open,
	.can_take = sh_hand_can_take,
	.submit = sh_hand_submit,
};

void sh_hand_end(struct stack_harness *h, unsigned int k, int error, unsigned int n)
{
	ck_assert_uint_lt(k, sh_hand.nr);
	blk_queue_lock(h->q);
	dev_end(h->stack.bottom, sh_hand.below[k], error, n);
	blk_queue_unlock(h->q);
}

struct sh_mem *sh_mem;

static bool sh_ranges_meet(sector_t a, unsigned int na, sector_t b, unsigned int nb)
{
	return a < b + nb && b < a + na;
}

static int sh_mem_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		       size_t whylen)
{
	struct sh_mem *m = calloc(1, sizeof(*m));

	(void)args;
	(void)why;
	(void)whylen;
	ck_assert_ptr_nonnull(m);
	m->data = calloc(lim->capacity, SECTOR_SIZE);
	ck_assert_ptr_nonnull(m->data);
	TAILQ_INIT(&m->fifo);
	lim->logical_block_size = SECTOR_SIZE;
	lim->discard = lim->write_zeroes = true;
	dev->priv = m;
	sh_mem = m;
	return 0;
}

static int sh_mem_cache_open(struct blk_dev *dev, const char *args, struct dev_limits *lim,
			     char *why, size_t whylen)
{
	lim->has_cache = true;
	return sh_mem_open(dev, args, lim, why, whylen);
}

static void sh_mem_close(struct blk_dev *dev)
{
	struct sh_mem *m = dev->priv;

	free(m->data);
	free(m->log);
	free(m);
	sh_mem = NULL;
}

/* What came, in order, and (no_overlap) no write below at once with another on its sectors. */
static void sh_mem_record(struct blk_dev *dev, struct sh_mem *m, struct request *rq)
{
	struct sh_mem_rq *o;
	bool write = rq->cmd_op != REQ_OP_READ && rq->cmd_op != REQ_OP_FLUSH;

	if (write && m->no_overlap)
		TAILQ_FOREACH(o, &m->fifo, link)
			ck_assert_msg(o->rq->cmd_op == REQ_OP_READ || o->rq->cmd_op == REQ_OP_FLUSH ||
					      !sh_ranges_meet(blk_rq_pos(rq), blk_rq_sectors(rq),
							      blk_rq_pos(o->rq), blk_rq_sectors(o->rq)),
				      "overlapping writes below at once at %llu",
				      (unsigned long long)blk_rq_pos(rq));
	m->log = realloc(m->log, (m->nr_log + 1) * sizeof(*m->log));
	ck_assert_ptr_nonnull(m->log);
	m->log[m->nr_log++] = (struct sh_mem_op){ rq->cmd_op, rq->cmd_flags, blk_rq_pos(rq),
						  blk_rq_sectors(rq), dev_now(dev) };
	m->reads += rq->cmd_op == REQ_OP_READ;
	m->writes += rq->cmd_op == REQ_OP_WRITE;
	m->others += rq->cmd_op != REQ_OP_READ && rq->cmd_op != REQ_OP_WRITE;
	if (rq->cmd_op == REQ_OP_FLUSH)
		m->writes_done_at_flush = m->writes_done;
}

static void sh_mem_submit(struct blk_dev *dev, struct request *rq)
{
	struct sh_mem *m = dev->priv;
	struct sh_mem_rq *p = dev_rq_pdu(dev, rq);
	size_t len = (size_t)blk_rq_sectors(rq) << SECTOR_SHIFT;

	sh_mem_record(dev, m, rq);
	p->rq = rq;
	p->snap = NULL;
	if (rq->cmd_op == REQ_OP_READ) {
		p->snap = malloc(len);
		ck_assert_ptr_nonnull(p->snap);
		memcpy(p->snap, m->data + (blk_rq_pos(rq) << SECTOR_SHIFT), len);
	}
	TAILQ_INSERT_TAIL(&m->fifo, p, link);
	m->nr_pending++;
	if (!m->hold)
		dev_set_timer(dev, dev_now(dev));
}

void sh_mem_finish(struct blk_dev *dev, struct sh_mem_rq *p)
{
	struct sh_mem *m = dev->priv;
	struct request *rq = p->rq;
	unsigned char *at = m->data + (blk_rq_pos(rq) << SECTOR_SHIFT);

	TAILQ_REMOVE(&m->fifo, p, link);
	m->nr_pending--;
	switch (rq->cmd_op) {
	case REQ_OP_READ:
		sh_copy(rq, p->snap, true);
		free(p->snap);
		break;
	case REQ_OP_WRITE:
		if (m->fail_writes) {
			dev_end(dev, rq, -EIO, blk_rq_sectors(rq));
			return;
		}
		sh_copy(rq, at, false);
		m->writes_done++;
		break;
	case REQ_OP_DISCARD:
	case REQ_OP_WRITE_ZEROES:
		memset(at, 0, (size_t)blk_rq_sectors(rq) << SECTOR_SHIFT);
		m->writes_done++;
		break;
	case REQ_OP_FLUSH:
		m->flushes_done++;
		break;
	}
	dev_end(dev, rq, 0, blk_rq_sectors(rq));
}

static bool sh_mem_can_take(struct blk_dev *dev)
{
	struct sh_mem *m = dev->priv;

	return !m->refuse;
}

static void sh_mem_timer(struct blk_dev *dev, uint64_t now)
{
	struct sh_mem *m = dev->priv;

	(void)now;
	while (!m->hold && !TAILQ_EMPTY(&m->fifo))
		sh_mem_finish(dev, TAILQ_FIRST(&m->fifo));
}

#define SH_MEM_OPS(open_fn)                                  \
	{                                                    \
		.api_version = DEV_API_VERSION,              \
		.name = "mem",                               \
		.backend = true,                             \
		.rq_pdu_size = sizeof(struct sh_mem_rq),     \
		.open = open_fn,                             \
		.close = sh_mem_close,                       \
		.can_take = sh_mem_can_take,                 \
		.submit = sh_mem_submit,                     \
		.timer = sh_mem_timer,                       \
	}

const struct dev_ops sh_mem_ops = SH_MEM_OPS(sh_mem_open);
const struct dev_ops sh_mem_cache_ops = SH_MEM_OPS(sh_mem_cache_open);

static const struct dev_attr *sh_attr(struct blk_dev *dev, const char *name)
{
	const struct dev_attr *a = dev->ops->attrs;

	while (a && a->name && strcmp(a->name, name))
		a++;
	ck_assert_msg(a && a->name, "%s has no file %s", dev->ops->name, name);
	return a;
}

struct blk_dev *sh_layer(const struct dev_stack *s, const char *name)
{
	for (unsigned int i = 0; i < s->nr_layers; i++)
		if (!strcmp(s->layers[i].ops->name, name))
			return (struct blk_dev *)&s->layers[i];
	return NULL;
}

const char *sh_show(struct stack_harness *h, struct blk_dev *dev, const char *name)
{
	static char buf[4096];

	blk_queue_lock(h->q);
	sh_attr(dev, name)->show(dev, buf, sizeof(buf));
	blk_queue_unlock(h->q);
	return buf;
}

int sh_store(struct stack_harness *h, struct blk_dev *dev, const char *name, const char *val)
{
	int ret;

	blk_queue_lock(h->q);
	ret = sh_attr(dev, name)->store(dev, val);
	blk_queue_unlock(h->q);
	return ret;
}

void sh_assert_refused(const char *spec, const char *reason)
{
	char why[256] = "";

	ck_assert_int_eq(dev_check_filter(spec, why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, reason), "%s: '%s' lacks '%s'", spec, why, reason);
	ck_assert_msg(!strchr(why, '\n'), "%s: '%s' is more than a line", spec, why);
}
