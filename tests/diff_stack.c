/* SPDX-License-Identifier: BSD-3-Clause */
/* diff_stack.c - the differential run (diff_stack.h): the stack, its log, libcrash, the model. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend_uring.h"
#include "blkdev.h"
#include "crash_dedup.h"
#include "crash_log.h"
#include "crash_overlay.h"
#include "crash_shard.h"
#include "crash_state.h"
#include "device.h"
#include "diff_stack.h"
#include "driver_uring.h"
#include "queue_stack.h"
#include "ref_disk.h"

#define DISK_BYTES ((uint64_t)DIFF_DISK_SECTORS * SECTOR_SIZE)
#define MAX_PEND 256
#define MAX_PTS 4096
#define MAX_MARKS 256
#define START_NS 1000000000ull
#define MS 1000000ull

/* A request the memory backend holds, and a write's data as it came. */
struct pend {
	struct request *rq;
	enum req_op op;
	sector_t pos;
	unsigned int total, done;
	uint8_t *snap;
};

enum pt_kind { PK_OTHER, PK_FLUSH, PK_FUA, PK_MARK };

struct mark_pt {
	char name[16];
	size_t pt;
	bool exact; /* nothing was in flight */
};

struct run {
	const struct diff_case *c;
	struct blk_clock clock;
	struct request_queue *q;
	struct dev_stack stack;
	struct blk_dev *lw, *wc;
	uint8_t *mem;
	struct pend pend[MAX_PEND];
	size_t nr_pend;
	/* the bios: one per op, and the read of the whole disk */
	struct bio *bio;
	struct bio_vec *vec;
	uint8_t **buf;
	uint64_t *mid;
	bool *ended;
	size_t nr_bio;
	struct ref_disk m;
	uint8_t pt_kind[MAX_PTS];
	struct mark_pt marks[MAX_MARKS];
	size_t nr_marks, start_pt, end_pt;
	unsigned int next_mark;
	sector_t last_end;
	int watched_fd;
	void (*ready)(void *arg);
	void *ready_arg;
	bool log_failed, limited;
	struct rlimit old_fsize;
	char dir[64], log[96], image[96];
	/* DF_FILE: the file backend, run by the daemon's io_uring loop in batches */
	struct uring_driver *d;
	int img_fd, idle[2];
	size_t next_op;
	bool served, reading, skipped;
	int verdict; /* 0, 1 a disagreement, -1 the run failed */
	char *why;
	size_t whylen;
};

static void disagree(struct run *r, int verdict, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The first disagreement is kept: later ones follow from it. */
static void disagree(struct run *r, int verdict, const char *fmt, ...)
{
	va_list ap;

	if (r->verdict)
		return;
	r->verdict = verdict;
	va_start(ap, fmt);
	vsnprintf(r->why, r->whylen, fmt, ap);
	va_end(ap);
}

static void *xalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p)
		abort();
	return p;
}

/* The layer of that name nearest the top, or NULL: the run reaches its control files so. */
static struct blk_dev *diff_layer(const struct dev_stack *s, const char *name)
{
	for (unsigned int i = 0; i < s->nr_layers; i++)
		if (!strcmp(s->layers[i].ops->name, name))
			return (struct blk_dev *)&s->layers[i];
	return NULL;
}

/* ------------------------------------------------------------ the backend */

static struct run *the_run; /* the backend's open finds its run here */

static int mem_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		    size_t whylen)
{
	(void)args;
	(void)why;
	(void)whylen;
	dev->priv = the_run;
	lim->logical_block_size = SECTOR_SIZE;
	lim->discard = lim->write_zeroes = true;
	lim->has_cache = true; /* flushes come down, and may be held */
	return 0;
}

static bool mem_can_take(struct blk_dev *dev)
{
	struct run *r = dev->priv;

	/* with merges, a shallow device: requests wait in the queue, and bios merge there */
	return r->nr_pend < (r->c->features & DF_MERGES ? 2 : MAX_PEND);
}

/* Copy between a request's data from its start and buf. */
static void rq_copy(struct request *rq, uint8_t *buf, bool to_rq)
{
	struct bio *bio;

	rq_for_each_bio(bio, rq) {
		for (unsigned short i = 0; i < bio->bi_vcnt; i++) {
			struct bio_vec *bv = &bio->bi_io_vec[i];

			if (to_rq)
				memcpy(bv->bv_base, buf, bv->bv_len);
			else
				memcpy(buf, bv->bv_base, bv->bv_len);
			buf += bv->bv_len;
		}
	}
}

static void mem_submit(struct blk_dev *dev, struct request *rq)
{
	struct run *r = dev->priv;
	struct pend *p = &r->pend[r->nr_pend++];

	*p = (struct pend){ .rq = rq, .op = rq->cmd_op, .pos = blk_rq_pos(rq),
			    .total = blk_rq_sectors(rq) };
	if (p->op == REQ_OP_WRITE) {
		p->snap = xalloc((size_t)p->total << SECTOR_SHIFT);
		rq_copy(rq, p->snap, false);
	}
}

static const struct dev_ops mem_ops = {
	.api_version = DEV_API_VERSION,
	.name = "diffmem",
	.backend = true,
	.open = mem_open,
	.can_take = mem_can_take,
	.submit = mem_submit,
};

/* The i-th held request: n more sectors land and end; then, with error, the rest fails. */
static void mem_end(struct run *r, size_t i, unsigned int n, int error)
{
	struct pend p = r->pend[i];
	unsigned int left = p.total - p.done;
	bool last = error || n >= left;
	uint8_t *at = r->mem + ((p.pos + p.done) << SECTOR_SHIFT);

	n = n > left ? left : n;
	if (p.op == REQ_OP_WRITE)
		memcpy(at, p.snap + ((size_t)p.done << SECTOR_SHIFT), (size_t)n << SECTOR_SHIFT);
	else if (p.op == REQ_OP_DISCARD || p.op == REQ_OP_WRITE_ZEROES)
		memset(at, 0, (size_t)n << SECTOR_SHIFT);
	else if (p.op == REQ_OP_READ)
		rq_copy(p.rq, r->mem + (p.pos << SECTOR_SHIFT), true);
	r->pend[i].done += n;
	if (last) {
		free(p.snap);
		memmove(&r->pend[i], &r->pend[i + 1], (r->nr_pend - i - 1) * sizeof(p));
		r->nr_pend--;
	}
	blk_queue_lock(r->q);
	if (p.op == REQ_OP_FLUSH)
		dev_end(r->stack.bottom, p.rq, 0, 0);
	else if (n || !error)
		dev_end(r->stack.bottom, p.rq, 0, n);
	if (error && n < left)
		dev_end(r->stack.bottom, p.rq, -EIO, left - n);
	blk_queue_unlock(r->q);
}

/* ------------------------------------------------------------ the host */

static int host_watch(void *host, int fd, void (*ready)(void *arg), void *arg)
{
	struct run *r = host;

	r->watched_fd = fd;
	r->ready = ready;
	r->ready_arg = arg;
	return 0;
}

static void host_unwatch(void *host, int fd)
{
	struct run *r = host;

	(void)fd;
	r->watched_fd = -1;
}

static const struct dev_host_ops host_ops = { .watch_fd = host_watch, .unwatch_fd = host_unwatch };

static void request_fn(struct request_queue *q)
{
	struct run *r = q->queuedata;
	struct request *rq;

	while (dev_can_take(r->stack.top) && (rq = blk_fetch_request(q)))
		dev_submit(r->stack.top, rq);
}

/* Timers due by now, and the queue after each. */
static void kick(struct run *r)
{
	uint64_t at;

	if (r->d) /* the loop runs the queue and the timers */
		return;

	while ((at = dev_stack_next_timer(&r->stack)) && at <= r->clock.virtual_ns) {
		blk_queue_lock(r->q);
		dev_stack_run_timers(&r->stack, r->clock.virtual_ns);
		blk_queue_unlock(r->q);
		blk_run_queue(r->q);
	}
	blk_run_queue(r->q);
}

static uint64_t next_wake(struct run *r)
{
	uint64_t a = dev_stack_next_timer(&r->stack), b = r->q->dispatch_at;

	if (!a || (b && b < a))
		a = b;
	return a;
}

/* Every request ends, in the order the backend got them, and the queue is idle. */
static void drain(struct run *r)
{
	if (r->d) /* the loop drains the queue between batches */
		return;
	for (unsigned int i = 0; i < 100000 && !r->verdict; i++) {
		uint64_t at;

		kick(r);
		if (r->nr_pend) {
			mem_end(r, 0, r->pend[0].total, 0);
			continue;
		}
		if (blk_queue_idle(r->q))
			return;
		if ((at = next_wake(r))) {
			if (at > r->clock.virtual_ns)
				r->clock.virtual_ns = at;
			continue;
		}
		if (r->watched_fd >= 0) {
			struct pollfd pfd = { .fd = r->watched_fd, .events = POLLIN };

			if (poll(&pfd, 1, 1000) == 1) {
				blk_queue_lock(r->q);
				r->ready(r->ready_arg);
				blk_queue_unlock(r->q);
				continue;
			}
		}
		break;
	}
	if (!r->verdict)
		disagree(r, -1, "the stack never went idle");
}

/* ------------------------------------------------------------ the model's side */

static long point(struct run *r, enum pt_kind kind)
{
	long pt = rd_point(&r->m);

	if (pt < 0 || pt >= MAX_PTS) {
		disagree(r, -1, "too many crash points");
		return 0;
	}
	r->pt_kind[pt] = (uint8_t)kind;
	return pt;
}

static void end_io(struct bio *bio, int error)
{
	struct run *r = bio->bi_private;
	size_t i = (size_t)(bio - r->bio);
	bool fua = bio->bi_flags & REQ_FUA;

	if (r->ended[i])
		disagree(r, 1, "(0) bio %zu ended twice", i);
	r->ended[i] = true;
	if (bio->bi_op == REQ_OP_READ)
		return;
	/*
	 * rqdisk-crash's flush:K is the crash just before flush K ends (what
	 * it covers still volatile); fua:K is taken on either side of it.
	 */
	fua = fua && (!error || bio->bi_good); /* a failed FUA write's good part is durable */
	if (bio->bi_op == REQ_OP_FLUSH && !error)
		point(r, PK_FLUSH);
	else if (fua)
		point(r, PK_FUA);
	rd_ack(&r->m, r->mid[i], error ? bio->bi_good : bio->bi_size, error);
	point(r, fua ? PK_FUA : PK_OTHER);
}

/* A bio of op over [sector, sector + nr); each sector's bytes name the op and the sector. */
static size_t new_bio(struct run *r, enum req_op op, unsigned int flags, sector_t sector,
		      unsigned int nr, size_t opi)
{
	size_t i = r->nr_bio++, len = (size_t)nr << SECTOR_SHIFT;

	if (len) {
		if (posix_memalign((void **)&r->buf[i], BLK_PAGE_SIZE, len))
			abort();
		memset(r->buf[i], 1 + (int)(opi % 250), len);
		for (unsigned int s = 0; s < nr; s++) {
			r->buf[i][s * SECTOR_SIZE + 1] = (uint8_t)s;
			r->buf[i][s * SECTOR_SIZE + 2] = (uint8_t)(opi >> 8);
		}
	}
	r->vec[i] = (struct bio_vec){ r->buf[i], len };
	bio_init(&r->bio[i], op, sector, op == REQ_OP_FLUSH ? 0 : (unsigned int)len, &r->vec[i],
		 op_has_data(op) ? 1 : 0);
	r->bio[i].bi_flags = flags;
	r->bio[i].bi_end_io = end_io;
	r->bio[i].bi_private = r;
	return i;
}

static void io(struct run *r, const struct diff_op *o, size_t opi)
{
	static const enum req_op ops[] = { REQ_OP_WRITE, REQ_OP_WRITE, REQ_OP_DISCARD,
					   REQ_OP_WRITE_ZEROES };
	/* b's bit 7: right after the last write, as a file written in order */
	sector_t sector = (o->b & 0x80 ? r->last_end : o->a) % DIFF_DISK_SECTORS;
	unsigned int nr = 1 + o->b % 16, flags = o->kind == DK_FUA ? REQ_FUA | REQ_SYNC : 0;
	size_t i;

	if (sector + nr > DIFF_DISK_SECTORS)
		nr = (unsigned int)(DIFF_DISK_SECTORS - sector);
	/*
	 * As a file system, never two writes of the same sectors in flight at
	 * once: which lands last is the device's choice, and neither a log in
	 * completion order nor the model can know it.
	 */
	for (size_t k = 0; k < r->m.nr_p; k++)
		if (!r->m.p[k].flush && r->m.p[k].off < (sector + nr) << SECTOR_SHIFT &&
		    sector << SECTOR_SHIFT < r->m.p[k].off + r->m.p[k].len) {
			drain(r);
			break;
		}
	r->last_end = sector + nr;
	i = new_bio(r, ops[o->kind], flags, sector, nr, opi);
	r->mid[i] = rd_submit_write(&r->m, sector << SECTOR_SHIFT, (uint64_t)nr << SECTOR_SHIFT,
				    o->kind <= DK_FUA ? r->buf[i] : NULL, o->kind == DK_FUA);
	submit_bio(r->q, &r->bio[i]);
	kick(r);
}

static void flush(struct run *r, size_t opi)
{
	size_t i = new_bio(r, REQ_OP_FLUSH, REQ_SYNC, 0, 0, opi);

	r->mid[i] = rd_submit_flush(&r->m);
	submit_bio(r->q, &r->bio[i]);
	kick(r);
}

/* The a-th held request that is a write (any request, unless writes_only), or -1. */
static long pick(struct run *r, unsigned int a, bool writes_only)
{
	size_t idx[MAX_PEND], n = 0;

	for (size_t i = 0; i < r->nr_pend; i++)
		if (!writes_only || op_is_write(r->pend[i].op))
			if (r->pend[i].op != REQ_OP_FLUSH || !writes_only)
				idx[n++] = i;
	return n ? (long)idx[a % n] : -1;
}

static int store(struct run *r, struct blk_dev *dev, const char *name, const char *val)
{
	const struct dev_attr *a = dev->ops->attrs;
	int ret;

	while (a->name && strcmp(a->name, name))
		a++;
	blk_queue_lock(r->q);
	ret = a->store(dev, val);
	blk_queue_unlock(r->q);
	kick(r);
	return ret;
}

static const char *show(struct run *r, struct blk_dev *dev, const char *name)
{
	static char buf[1024];
	const struct dev_attr *a = dev->ops->attrs;

	while (a->name && strcmp(a->name, name))
		a++;
	blk_queue_lock(r->q);
	a->show(dev, buf, sizeof(buf));
	blk_queue_unlock(r->q);
	return buf;
}

static void mark(struct run *r, bool exact)
{
	struct mark_pt *mp;

	if (r->nr_marks == MAX_MARKS)
		return;
	if (exact) /* with the file backend: a batch starts with it, nothing in flight */
		drain(r);
	mp = &r->marks[r->nr_marks];
	snprintf(mp->name, sizeof(mp->name), "m%u", r->next_mark++);
	if (store(r, r->lw, "mark", mp->name))
		return; /* the log stopped: no mark */
	mp->pt = (size_t)point(r, PK_MARK);
	mp->exact = exact;
	r->nr_marks++;
}

/* The power goes while the cache holds what it holds; what the backend keeps is checked (4). */
static void cut(struct run *r, unsigned int mode)
{
	static const char *const modes[] = { "all", "random", "torn" };
	char why[512];
	size_t pt;

	if (!r->wc)
		return;
	pt = (size_t)point(r, PK_OTHER);
	if (store(r, r->wc, "cut", modes[mode % 3]))
		return disagree(r, -1, "power/cut refused");
	for (unsigned int i = 0; i < 1000 && strcmp(show(r, r->wc, "state"), "off\n"); i++) {
		if (r->nr_pend)
			mem_end(r, 0, r->pend[0].total, 0);
		else if (next_wake(r))
			r->clock.virtual_ns = next_wake(r);
		kick(r);
	}
	if (strcmp(show(r, r->wc, "state"), "off\n"))
		return disagree(r, -1, "the power cut never settled");
	if (!rd_allowed(&r->m, pt, r->mem, why, sizeof(why)))
		disagree(r, 1, "(4) after a power cut (%s) the disk holds a state the model does not "
			       "allow: %s", modes[mode % 3], why);
	rd_power_cut(&r->m);
	if (store(r, r->wc, "restore", "1"))
		disagree(r, -1, "power/restore refused");
}

/* The log's file grows no more: its writer's next write fails, as on a full file system. */
static void log_fail(struct run *r)
{
	struct stat st;
	struct rlimit lim;

	if (r->limited)
		return;
	drain(r);
	/* what the writer has been handed is in the file first: the next entry is what fails */
	for (int i = 0; i < 5000 && !strstr(show(r, r->lw, "stats"), "pending_bytes 0\n"); i++)
		usleep(1000);
	if (stat(r->log, &st))
		return;
	signal(SIGXFSZ, SIG_IGN); /* a write past the limit fails with EFBIG instead */
	getrlimit(RLIMIT_FSIZE, &r->old_fsize);
	lim = r->old_fsize;
	lim.rlim_cur = (rlim_t)st.st_size;
	if (!setrlimit(RLIMIT_FSIZE, &lim))
		r->limited = r->log_failed = true;
}

static void unlimit(struct run *r)
{
	if (r->limited)
		setrlimit(RLIMIT_FSIZE, &r->old_fsize);
	r->limited = false;
}

static void step(struct run *r, const struct diff_op *o, size_t opi)
{
	long k;

	switch (o->kind) {
	case DK_WRITE:
	case DK_FUA:
	case DK_DISCARD:
	case DK_ZEROES:
		io(r, o, opi);
		break;
	case DK_FLUSH:
		flush(r, opi);
		break;
	case DK_END:
		if ((k = pick(r, o->a, false)) >= 0)
			mem_end(r, (size_t)k, r->pend[k].total, 0);
		break;
	case DK_PART:
		if ((k = pick(r, o->a, true)) >= 0 && o->b % (r->pend[k].total - r->pend[k].done))
			mem_end(r, (size_t)k, o->b % (r->pend[k].total - r->pend[k].done), 0);
		break;
	case DK_FAIL:
		if ((k = pick(r, o->a, true)) >= 0)
			mem_end(r, (size_t)k, o->b % (r->pend[k].total - r->pend[k].done), -EIO);
		break;
	case DK_WAIT:
		drain(r);
		break;
	case DK_MARK:
	case DK_QMARK:
		mark(r, o->kind == DK_QMARK);
		break;
	case DK_OFF:
	case DK_ON:
		store(r, r->lw, "enable", o->kind == DK_ON ? "1" : "0");
		break;
	case DK_CUT:
		drain(r); /* the cache is what a cut acts on: nothing of the host's in flight */
		cut(r, o->a);
		break;
	case DK_LOGFAIL:
		log_fail(r);
		break;
	case DK_TICK:
		r->clock.virtual_ns += (uint64_t)(1 + o->a % 8) * MS;
		kick(r);
		break;
	}
	kick(r);
}

/* ------------------------------------------------------------ the stack */

static int open_file_stack(struct run *r, const char *const *specs, unsigned int nr);

static int open_stack(struct run *r)
{
	char lwspec[256], wcspec[128], why[256] = "";
	/*
	 * The write cache above log-writes: the log records what reaches the
	 * medium below the cache (its writebacks, its flushes downward), the
	 * model is fed what the queue sees above it.  wcache_below asks for
	 * the other order, which the stack refuses at open.
	 */
	bool below = r->c->wcache_below, wcache = below || (r->c->features & DF_WCACHE);
	const char *specs[2] = { wcache && !below ? wcspec : lwspec, below ? wcspec : lwspec };
	unsigned int nr = wcache ? 2 : 1;
	struct dev_limits lim = { .capacity = DIFF_DISK_SECTORS };
	int ret;

	snprintf(lwspec, sizeof(lwspec), "log-writes:file=%s%s", r->log,
		 r->c->features & DF_OFF_OPEN ? ",enable=0" : "");
	/*
	 * On the loop, no writeback by age: the loop returns once the queue is
	 * idle, and one the cache started on its own could still be below when
	 * the stack closes (its request is then never ended nor freed).
	 */
	snprintf(wcspec, sizeof(wcspec), "write-cache:size=1,expire=%u,seed=%u,atomic=%u",
		 r->c->features & DF_FILE ? 0 : r->c->wc_expire, r->c->wc_expire + 1,
		 r->c->wc_atomic && r->c->atomic ? r->c->atomic : SECTOR_SIZE);
	if (r->c->features & DF_FILE)
		return open_file_stack(r, specs, nr);
	blk_virtual_clock_init(&r->clock, START_NS);
	r->q = blk_init_queue(request_fn, NULL, &r->clock);
	if (!r->q)
		return -ENOMEM;
	r->q->queuedata = r;
	r->stack.host_ops = &host_ops;
	r->stack.host = r;
	blk_stack_set_queue(&r->stack, r->q);
	the_run = r;
	ret = dev_stack_open(&r->stack, specs, nr, &mem_ops, NULL, &lim, why, sizeof(why));
	if (!ret && (ret = blk_queue_stack_limits(r->q, &lim, why, sizeof(why)))) {
		r->stack.aborted = true;
		dev_stack_close(&r->stack);
	}
	if (ret) {
		blk_cleanup_queue(r->q);
		r->q = NULL;
		disagree(r, -1, "the stack: %s", why);
		return ret;
	}
	blk_queue_set_pdu_size(r->q, dev_stack_pdu_size(&r->stack));
	/* one bio, one request, one log entry: the model's writes are the log's (3) */
	if (!(r->c->features & DF_MERGES))
		r->q->limits.nomerges = BLK_MERGES_NONE;
	if (elevator_init(r->q, r->c->elevator[0] ? r->c->elevator : "noop")) {
		disagree(r, -1, "no elevator %s", r->c->elevator);
		return -EINVAL;
	}
	r->lw = diff_layer(&r->stack, "log-writes");
	r->wc = diff_layer(&r->stack, "write-cache");
	return 0;
}

/* The whole disk read through the stack, as the disk's user sees it. */
static void read_disk(struct run *r, uint8_t *img)
{
	size_t i = new_bio(r, REQ_OP_READ, 0, 0, DIFF_DISK_SECTORS, 0);

	submit_bio(r->q, &r->bio[i]);
	drain(r);
	if (!r->ended[i])
		return disagree(r, -1, "the read of the disk never ended");
	memcpy(img, r->buf[i], DISK_BYTES);
}

/* ------------------------------------------------------------ the file backend */

/*
 * The ops on the loop, in batches: a batch goes in at once and ends when
 * all of it has (the loop returns once serve says DONE and the queue is
 * idle), in the kernel's order.  A batch ends before a wait, before a mark
 * that wants nothing in flight, and before a write of sectors a write of
 * the batch still has in flight.  The backend's own ops (END, PART, FAIL),
 * power cuts and the clock are not the test's here: they are skipped.
 */
static bool file_overlaps(const struct run *r, const struct diff_op *o)
{
	sector_t sector = (o->b & 0x80 ? r->last_end : o->a) % DIFF_DISK_SECTORS;
	uint64_t off = sector << SECTOR_SHIFT, end = off + ((uint64_t)(1 + o->b % 16) << 9);

	if (o->kind > DK_ZEROES)
		return false;
	for (size_t k = 0; k < r->m.nr_p; k++)
		if (!r->m.p[k].flush && r->m.p[k].off < end && off < r->m.p[k].off + r->m.p[k].len)
			return true;
	return false;
}

static enum uring_serve file_serve(void *arg)
{
	struct run *r = arg;
	bool first = true;

	if (r->served)
		return URING_SERVE_DONE;
	r->served = true;
	if (r->reading) {
		submit_bio(r->q, &r->bio[r->nr_bio - 1]);
		return URING_SERVE_DONE;
	}
	for (; r->next_op < r->c->nr && !r->verdict; r->next_op++, first = false) {
		const struct diff_op *o = &r->c->ops[r->next_op];

		if (o->kind == DK_WAIT && !first)
			break;
		if ((o->kind == DK_QMARK || o->kind == DK_LOGFAIL) && !first)
			break;
		if (file_overlaps(r, o))
			break;
		if (o->kind <= DK_ZEROES || o->kind == DK_FLUSH || o->kind == DK_MARK ||
		    o->kind == DK_QMARK || o->kind == DK_ON || o->kind == DK_OFF ||
		    o->kind == DK_LOGFAIL)
			step(r, o, r->next_op);
	}
	return URING_SERVE_DONE;
}

static void file_batch(struct run *r)
{
	struct uring_watch w = { .fd = r->idle[0], .serve = file_serve, .arg = r };

	r->served = false;
	uring_driver_run(r->d, &w);
}

static int open_file_stack(struct run *r, const char *const *specs, unsigned int nr)
{
	char why[256] = "";

	snprintf(r->image, sizeof(r->image), "%s/image", r->dir);
	r->img_fd = open(r->image, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (r->img_fd < 0 || ftruncate(r->img_fd, (off_t)DISK_BYTES) ||
	    pipe2(r->idle, O_NONBLOCK | O_CLOEXEC)) {
		disagree(r, -1, "the image: %s", strerror(errno));
		return -1;
	}
	r->q = blk_init_queue(NULL, NULL, NULL);
	if (!r->q || elevator_init(r->q, r->c->elevator[0] ? r->c->elevator : "noop")) {
		disagree(r, -1, "no queue or no elevator %s", r->c->elevator);
		return -1;
	}
	if (!(r->c->features & DF_MERGES))
		r->q->limits.nomerges = BLK_MERGES_NONE;
	r->d = uring_driver_new(r->q, 0, 0, &dev_file_ops, r->image, why, sizeof(why));
	if (!r->d) {
		r->skipped = errno == ENOSYS || errno == EPERM; /* no io_uring here */
		if (!r->skipped)
			disagree(r, -1, "uring_driver_new: %s", why);
		return -1;
	}
	if (uring_driver_set_filters(r->d, specs, nr, DIFF_DISK_SECTORS, why, sizeof(why))) {
		disagree(r, -1, "the stack: %s", why);
		return -1;
	}
	r->lw = diff_layer(uring_driver_stack(r->d), "log-writes");
	r->wc = NULL; /* no power cuts here */
	return 0;
}

static void close_file_stack(struct run *r)
{
	if (r->d && uring_driver_free(r->d) && !r->log_failed)
		disagree(r, 1, "(1) closing the stack failed: the log may not be whole");
	if (r->q)
		blk_cleanup_queue(r->q);
	for (int i = 0; i < 2; i++)
		if (r->idle[i] > 0)
			close(r->idle[i]);
	if (r->img_fd > 0)
		close(r->img_fd);
	unlink(r->image);
	r->d = NULL;
	r->q = NULL;
}

/* The batches, then the disk read through the stack, and the file itself. */
static void file_run_ops(struct run *r, uint8_t *image)
{
	size_t i;

	while (r->next_op < r->c->nr && !r->verdict)
		file_batch(r);
	if (r->verdict)
		return;
	i = new_bio(r, REQ_OP_READ, 0, 0, DIFF_DISK_SECTORS, 0);
	r->reading = true;
	file_batch(r);
	if (!r->ended[i])
		return disagree(r, -1, "the read of the disk never ended");
	memcpy(image, r->buf[i], DISK_BYTES);
	if (pread(r->img_fd, r->mem, DISK_BYTES, 0) != (ssize_t)DISK_BYTES)
		disagree(r, -1, "reading the image: %s", strerror(errno));
}

/* ------------------------------------------------------------ the log's side */

struct state {
	char *id;
	size_t pos;
	enum crash_point_kind kind;
	uint64_t h[2];
	bool verdict; /* a random checker's: a function of the bytes and the marks passed */
};

struct states {
	struct state *s;
	size_t nr;
};

static void hash(const uint8_t *img, uint64_t h[2])
{
	h[0] = 0xcbf29ce484222325ull;
	h[1] = 0x84222325cbf29ce4ull;
	for (uint64_t i = 0; i < DISK_BYTES; i++) {
		h[0] = (h[0] ^ img[i]) * 0x100000001b3ull;
		h[1] = (h[1] ^ img[i]) * 0x100000001b3ull + (h[1] >> 29);
	}
}

/*
 * A checker's verdict that depends on nothing but what a checker is
 * given: the state's bytes (their hash) and RQDISK_CRASH_MARKS at its
 * point; pass or fail as a coin thrown on them.
 */
static bool verdict_of(const struct crash_log *log, size_t pos, const uint64_t h[2])
{
	char *marks = crash_marks_text(log, pos);
	uint64_t x = h[0] ^ (h[1] * 0x9e3779b97f4a7c15ull);

	if (!marks)
		abort();
	for (const char *c = marks; *c; c++)
		x = (x ^ (uint8_t)*c) * 0x100000001b3ull;
	free(marks);
	x ^= x >> 31;
	return (x * 0xbf58476d1ce4e5b9ull) >> 63;
}

/* The image of the state spec names, over a BASE of zeros. */
static int build(const struct crash_log *log, const struct crash_spec *spec, int base_fd,
		 uint8_t *img)
{
	struct ovl o;
	int ret = ovl_build(&o, log, spec, base_fd, DISK_BYTES, NULL);

	if (ret)
		return ret;
	ret = ovl_read(&o, img, DISK_BYTES, 0) == (ssize_t)DISK_BYTES ? 0 : -EIO;
	ovl_free(&o);
	return ret;
}

static bool ours(const struct crash_entry *e, const struct mark_pt *m)
{
	return e->mark && e->mark_len == strlen(m->name) && !memcmp(e->mark, m->name, e->mark_len);
}

/* Our mark the log entry i is, or NULL. */
static const struct mark_pt *mark_of(const struct run *r, const struct crash_log *log, size_t i)
{
	if (!(log->e[i].flags & LOG_MARK_FLAG))
		return NULL;
	for (size_t k = 0; k < r->nr_marks; k++)
		if (ours(&log->e[i], &r->marks[k]))
			return &r->marks[k];
	return NULL;
}

/*
 * The model's points a state at pos may be from: exactly one right after
 * one of our marks and at the end; else those between the marks around
 * pos, of the kind the state's point is (a flush's state: where a flush
 * ended).  lo, hi: the range; *exact when it is one point.
 */
static void window(const struct run *r, const struct crash_log *log, size_t pos, size_t *lo,
		   size_t *hi, bool *exact)
{
	const struct mark_pt *mp;

	*exact = true;
	if (pos == log->nr && !crash_log_cut(log)) { /* a log cut short ends before the run */
		*lo = *hi = r->end_pt;
		return;
	}
	if (pos && (mp = mark_of(r, log, pos - 1))) {
		*lo = *hi = mp->pt;
		return;
	}
	*exact = false;
	*lo = r->start_pt;
	*hi = r->end_pt;
	for (size_t i = pos; i-- > 0;)
		if ((mp = mark_of(r, log, i))) {
			*lo = mp->pt;
			break;
		}
	for (size_t i = pos; i < log->nr; i++)
		if ((mp = mark_of(r, log, i))) {
			*hi = mp->pt;
			break;
		}
}

/* (2): the state (its image) is one the model allows at a point it may be from. */
static void check_state(struct run *r, const struct crash_log *log, const struct state *st,
			const uint8_t *img)
{
	char why[1024] = "no point of its kind in the model";
	size_t lo, hi;
	bool exact;

	/*
	 * Under the write cache the log's flushes and FUA writes are the
	 * cache's, downward: a state at one matches any of the model's points
	 * between the marks around it, not only those where the queue's own
	 * flush or FUA write ended.
	 */
	bool kinds = !(r->c->features & DF_WCACHE);

	window(r, log, st->pos, &lo, &hi, &exact);
	for (size_t p = lo; p <= hi; p++) {
		if (kinds && !exact && st->kind == PT_FLUSH && r->pt_kind[p] != PK_FLUSH)
			continue;
		if (kinds && !exact && st->kind == PT_FUA && r->pt_kind[p] != PK_FUA)
			continue;
		if (rd_allowed(&r->m, p, img, why, sizeof(why)))
			return;
	}
	if (exact)
		disagree(r, 1, "(2) state %s (log position %zu) is not one the disk may hold there: %s",
			 st->id, st->pos, why);
	else
		disagree(r, 1,
			 "(2) state %s (log position %zu) is one the disk may hold at none of the "
			 "model's points %zu-%zu%s; at the last of them: %s",
			 st->id, st->pos, lo, hi,
			 !kinds		      ? ""
			 : st->kind == PT_FLUSH ? " where a flush ends"
			 : st->kind == PT_FUA   ? " where a FUA write ends"
						: "",
			 why);
}

static void set_at(const struct run *r, const struct crash_log *log, struct crash_at *at)
{
	memset(at, 0, sizeof(*at));
	at->kinds = AT_FLUSH | AT_FUA;
	at->every = 1;
	at->marks = xalloc(r->nr_marks * sizeof(*at->marks));
	at->mark_lens = xalloc(r->nr_marks * sizeof(*at->mark_lens));
	for (size_t k = 0; k < r->nr_marks; k++)
		for (size_t i = 0; i < log->nr; i++)
			if (ours(&log->e[i], &r->marks[k])) {
				at->marks[at->nr_marks] = (char *)r->marks[k].name;
				at->mark_lens[at->nr_marks++] = strlen(r->marks[k].name);
				break;
			}
}

static void gen_opts(const struct run *r, struct crash_gen_opts *o)
{
	*o = (struct crash_gen_opts){ .drop = r->c->drop, .sample = 3, .seed = 7,
				      .torn = r->c->torn, .atomic = r->c->atomic };
}

/* Every state, dedup off: each built and checked (2), kept for (3) and the dedup/shard checks. */
static void all_states(struct run *r, const struct crash_log *log, const struct crash_at *at,
		       int base_fd, struct states *out)
{
	struct crash_gen_opts o;
	struct crash_gen g;
	struct crash_id id;
	enum crash_class cls;
	uint8_t *img = xalloc(DISK_BYTES);
	char why[256];
	int ret;

	gen_opts(r, &o);
	if (crash_gen_init(&g, log, at, &o)) {
		free(img);
		return disagree(r, -1, "crash_gen_init failed");
	}
	while (!r->verdict && (ret = crash_gen_next(&g, &id, &cls)) == 1) {
		struct crash_spec spec;
		struct state st = { .kind = id.kind };

		st.id = crash_id_format(&id);
		if (crash_resolve(log, &id, &spec, why, sizeof(why)))
			disagree(r, 1, "(2) the generator's state %s does not resolve: %s", st.id,
				 why);
		else if (build(log, &spec, base_fd, img))
			disagree(r, -1, "(2) state %s: could not build it", st.id);
		st.pos = spec.pos;
		hash(img, st.h);
		st.verdict = verdict_of(log, st.pos, st.h);
		crash_id_free(&id);
		if (!r->verdict)
			check_state(r, log, &st, img);
		out->s = realloc(out->s, (out->nr + 1) * sizeof(*out->s));
		if (!out->s)
			abort();
		out->s[out->nr++] = st;
	}
	crash_gen_free(&g);
	free(img);
}

static const struct state *find(const struct states *ss, const char *id)
{
	for (size_t i = 0; i < ss->nr; i++)
		if (!strcmp(ss->s[i].id, id))
			return &ss->s[i];
	return NULL;
}

/*
 * The run's states through dedup (and shard sh): each folded state is
 * byte-identical to the one it was folded into, checked by the same
 * shard, and takes its verdict: a checker that is a function of the bytes
 * and the marks passed gives every state the verdict it gives it without
 * dedup.  *seen counts how often each state was reported.
 */
static void picked(struct run *r, const struct crash_log *log, const struct crash_at *at,
		   const struct states *all, struct crash_shard sh, unsigned int *seen)
{
	struct crash_gen_opts o;
	struct crash_gen g;
	struct crash_dedup d;
	struct crash_pick p;
	struct crash_id id;
	enum crash_class cls;
	struct dedup_rep *rep;
	const struct state **rep_of = NULL;
	size_t nr_rep = 0;
	int ret;

	gen_opts(r, &o);
	if (crash_gen_init(&g, log, at, &o))
		return disagree(r, -1, "crash_gen_init failed");
	dedup_init(&d, log, NULL);
	p = (struct crash_pick){ .gen = &g, .dedup = &d, .shard = sh };
	while (!r->verdict && (ret = crash_pick_next(&p, &id, &cls, &rep)) == 1) {
		char *text = crash_id_format(&id);
		const struct state *st = find(all, text);

		if (!st) {
			disagree(r, 1, "(2) dedup run: state %s not in the run without dedup", text);
		} else {
			seen[st - all->s]++;
			if (!rep) {
				uint64_t ord = p.nr_checked - 1;

				if (ord >= nr_rep) {
					rep_of = realloc(rep_of, (ord + 1) * sizeof(*rep_of));
					if (!rep_of)
						abort();
					memset(rep_of + nr_rep, 0, (ord + 1 - nr_rep) * sizeof(*rep_of));
					nr_rep = ord + 1;
				}
				rep_of[ord] = st;
			} else if (rep->ordinal >= nr_rep || !rep_of[rep->ordinal]) {
				disagree(r, 1,
					 "(2) dedup folded %s into a state not checked here%s",
					 text, sh.n ? " (a shard)" : "");
			} else if (memcmp(rep_of[rep->ordinal]->h, st->h, sizeof(st->h))) {
				disagree(r, 1, "(2) dedup folded %s into %s, which differs from it",
					 text, rep_of[rep->ordinal]->id);
			} else if (rep_of[rep->ordinal]->verdict != st->verdict) {
				/* a checker given RQDISK_CRASH_MARKS may judge them apart */
				disagree(r, 1,
					 "(2) dedup folded %s into %s, whose verdict (from "
					 "its bytes and the marks passed) differs from its own",
					 text, rep_of[rep->ordinal]->id);
			}
		}
		free(text);
		crash_id_free(&id);
	}
	free(rep_of);
	dedup_free(&d);
	crash_gen_free(&g);
}

/* Dedup whole, then three shards: every state reported exactly once by the shards. */
static void check_dedup_shards(struct run *r, const struct crash_log *log,
			       const struct crash_at *at, const struct states *all)
{
	unsigned int *seen = xalloc(all->nr * sizeof(*seen));

	picked(r, log, at, all, (struct crash_shard){ 0, 0 }, seen);
	for (size_t i = 0; i < all->nr && !r->verdict; i++)
		if (seen[i] != 1)
			disagree(r, 1, "(2) with dedup, state %s was reported %u times",
				 all->s[i].id, seen[i]);
	memset(seen, 0, all->nr * sizeof(*seen));
	for (unsigned long k = 1; k <= 3; k++)
		picked(r, log, at, all, (struct crash_shard){ k, 3 }, seen);
	for (size_t i = 0; i < all->nr && !r->verdict; i++)
		if (seen[i] != 1)
			disagree(r, 1, "(2) shards 1/3..3/3 report state %s %u times", all->s[i].id,
				 seen[i]);
	free(seen);
}

struct want {
	struct run *r;
	const struct states *all;
	size_t pos;
	const char *where;
};

static int want_built(void *arg, const uint8_t *img)
{
	struct want *w = arg;
	uint64_t h[2];

	hash(img, h);
	for (size_t i = 0; i < w->all->nr; i++)
		if (w->all->s[i].pos == w->pos && !memcmp(w->all->s[i].h, h, sizeof(h)))
			return 0;
	disagree(w->r, 1,
		 "(3) at %s (log position %zu) a state the model allows (at most %u writes lost) "
		 "is never built",
		 w->where, w->pos, w->r->c->drop);
	return 1;
}

/* (3): at the points where log and model meet exactly, nothing the model allows is skipped. */
static void check_complete(struct run *r, const struct crash_log *log, const struct states *all)
{
	struct want w = { r, all, log->nr, "end" };

	if (!crash_log_past_gap(log, log->nr) && !crash_log_cut(log))
		rd_enumerate(&r->m, r->end_pt, r->c->drop, want_built, &w);
	for (size_t i = 0; i < log->nr && !r->verdict; i++) {
		const struct mark_pt *mp = mark_of(r, log, i);

		if (!mp || !mp->exact || crash_log_past_gap(log, i + 1))
			continue;
		w.pos = i + 1;
		w.where = mp->name;
		rd_enumerate(&r->m, mp->pt, r->c->drop, want_built, &w);
	}
}

static void check_log(struct run *r)
{
	struct crash_log log;
	struct crash_at at;
	struct states all = { 0 };
	char why[512];
	uint8_t *img;
	int base_fd;

	if (crash_log_open(r->log, DISK_BYTES, &log, why, sizeof(why)))
		return disagree(r, 1, "(1) the log the filter wrote%s is refused: %s",
				r->log_failed ? " (its file filled up)" : "", why);
	base_fd = memfd_create("diff-base", MFD_CLOEXEC);
	if (base_fd < 0 || ftruncate(base_fd, (off_t)DISK_BYTES)) {
		disagree(r, -1, "memfd: %s", strerror(errno));
		goto out;
	}
	img = xalloc(DISK_BYTES);
	if (r->log_failed && !crash_log_cut(&log)) {
		/* its file filled up: the log must say it stopped, not pass for whole */
		disagree(r, 1, "(1) the log whose file filled up (%zu entries) is not cut short",
			 log.nr);
	} else if (r->log_failed) {
		/* its states are checked (2) all the same: those before the stop are real */
	} else if (crash_log_cut(&log)) {
		crash_log_cut_text(&log, why, sizeof(why));
		disagree(r, 1, "(1) the log is cut short with nothing to stop it: %s", why);
	} else if (log.gap_off < 0) {
		struct crash_spec spec = { .pos = log.nr, .torn_e = -1 };
		size_t b = 0;

		if (build(&log, &spec, base_fd, img))
			disagree(r, -1, "(1) could not build the end of the log");
		/* the backend's image: under the cache, what reached the medium */
		while (!r->verdict && b < DISK_BYTES && img[b] == r->mem[b])
			b++;
		if (b < DISK_BYTES)
			disagree(r, 1,
				 "(1) the log (%zu entries) replayed to its end is not the "
				 "backend's image: sector %zu differs (log %02x, image %02x)",
				 log.nr, b / SECTOR_SIZE, img[b], r->mem[b]);
	}
	free(img);
	set_at(r, &log, &at);
	if (!r->verdict)
		all_states(r, &log, &at, base_fd, &all);
	if (!r->verdict)
		check_dedup_shards(r, &log, &at, &all);
	/* under the cache the log's writes are its writebacks, not the model's writes */
	if (!r->verdict && !(r->c->features & (DF_MERGES | DF_WCACHE)))
		check_complete(r, &log, &all);
	for (size_t i = 0; i < all.nr; i++)
		free(all.s[i].id);
	free(all.s);
	free(at.marks);
	free(at.mark_lens);
out:
	if (base_fd >= 0)
		close(base_fd);
	crash_log_free(&log);
}

/* ------------------------------------------------------------ a run */

static void run_ops(struct run *r, uint8_t *image)
{
	char why[1024];

	r->start_pt = (size_t)point(r, PK_OTHER);
	for (size_t i = 0; i < r->c->nr && !r->verdict && !r->d; i++)
		step(r, &r->c->ops[i], i);
	if (r->verdict)
		return;
	if (r->d) {
		file_run_ops(r, image);
	} else {
		drain(r);
		read_disk(r, image);
	}
	r->end_pt = (size_t)point(r, PK_OTHER);
	if (r->verdict)
		return;
	for (size_t i = 0; i < r->nr_bio; i++)
		if (!r->ended[i])
			return disagree(r, 1, "(0) bio %zu never ended", i);
	if (!rd_allowed(&r->m, r->end_pt, image, why, sizeof(why)))
		disagree(r, 1, "(0) the disk read at the end is not a state the model allows: %s",
			 why);
	else if (!rd_allowed(&r->m, r->end_pt, r->mem, why, sizeof(why)))
		disagree(r, 1, "(0) the backend at the end is not a state the model allows: %s",
			 why);
}

/*
 * The atomic unit the model holds the disk to.  Under the write cache the
 * medium is written by the cache's writebacks, which keep no unit above a
 * sector (a newer write carves an older one's cached extent, and the two
 * parts go down apart): 512, unless the case tells the cache the unit
 * (wc_atomic).  rqdisk-crash's --atomic is the case's all the same.
 */
static uint32_t model_unit(const struct diff_case *c)
{
	if ((c->features & DF_WCACHE) && !c->wc_atomic)
		return SECTOR_SIZE;
	return c->atomic ? c->atomic : SECTOR_SIZE;
}

int diff_run(const struct diff_case *c, char *why, size_t whylen)
{
	struct run *r = xalloc(sizeof(*r));
	size_t max = c->nr + 2;
	uint8_t *image = xalloc(DISK_BYTES);
	int verdict;

	r->c = c;
	r->why = why;
	r->whylen = whylen;
	r->watched_fd = -1;
	why[0] = '\0';
	r->mem = xalloc(DISK_BYTES);
	r->bio = xalloc(max * sizeof(*r->bio));
	r->vec = xalloc(max * sizeof(*r->vec));
	r->buf = xalloc(max * sizeof(*r->buf));
	r->mid = xalloc(max * sizeof(*r->mid));
	r->ended = xalloc(max * sizeof(*r->ended));
	strcpy(r->dir, "/tmp/rqdisk-diff.XXXXXX");
	if (!mkdtemp(r->dir)) {
		disagree(r, -1, "mkdtemp: %s", strerror(errno));
		goto out;
	}
	snprintf(r->log, sizeof(r->log), "%s/log", r->dir);
	if (rd_init(&r->m, DISK_BYTES, model_unit(c), true)) {
		disagree(r, -1, "atomic %u: not a unit the model takes", c->atomic);
		goto out_dir;
	}
	if (!open_stack(r) && r->d) {
		run_ops(r, image);
		close_file_stack(r);
		unlimit(r);
		if (!r->verdict)
			check_log(r);
	} else if (r->d || r->img_fd > 0) {
		close_file_stack(r); /* it failed to open */
	} else if (r->q) {
		run_ops(r, image);
		if (r->verdict >= 0 || blk_queue_idle(r->q)) {
			dev_stack_close(&r->stack);
			blk_cleanup_queue(r->q);
		}
		unlimit(r);
		if (!r->verdict && !c->disk_only)
			check_log(r);
	}
	unlimit(r);
	rd_free(&r->m);
out_dir:
	unlink(r->log);
	rmdir(r->dir);
out:
	for (size_t i = 0; i < r->nr_bio; i++)
		free(r->buf[i]);
	for (size_t i = 0; i < r->nr_pend; i++)
		free(r->pend[i].snap);
	free(r->bio);
	free(r->vec);
	free(r->buf);
	free(r->mid);
	free(r->ended);
	free(r->mem);
	free(image);
	verdict = r->verdict;
	free(r);
	return verdict;
}
