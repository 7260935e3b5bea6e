/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuse_ring.c - FUSE requests carried on the loop's io_uring ring.
 *
 * Linux 6.14 can hand FUSE requests to the server as completions of
 * IORING_OP_URING_CMD on /dev/fuse: each entry registers a header buffer
 * and a payload buffer per CPU queue, and one SQE answers a request and
 * asks for the next.  The reading and answering of every request then
 * ride in the loop's one io_uring_enter instead of a read and a write of
 * their own.  libfuse 3.14 knows nothing of it, so this file speaks it
 * under the session: it accepts the kernel's offer in the INIT reply,
 * lays each request out as /dev/fuse would have for
 * fuse_session_process_buf(), and turns the session's replies into
 * commits.  INIT, FORGET and INTERRUPT still come on /dev/fuse.
 *
 * On a multi-queue queue each hardware queue's thread owns the entries of
 * the CPUs whose software queues feed it: it registers them on its own
 * ring, so the kernel hands it the requests of those CPUs, and it takes,
 * queues, dispatches and answers each on that ring, as blk-mq runs a
 * request on the hardware context of the CPU that made it.  An answer
 * made on another thread (a request dispatched by another hardware queue,
 * a timer's end on the loop's) is posted to the owner, whose ring sends it.
 */
#include <bsd/sys/queue.h>
#include <errno.h>
#include <linux/fuse.h>
#include <liburing.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fuse_ring.h"

/* The kernel's side (uapi fuse.h, protocol 7.42); Debian 12's headers predate it. */
#define FRING_OFFER (1u << (41 - 32)) /* FUSE_OVER_IO_URING, in flags2 */
#define FRING_CMD_REGISTER 1
#define FRING_CMD_COMMIT_AND_FETCH 2
#define FRING_OP_IN_SIZE 128
#define FRING_MIN_PAYLOAD 8192 /* FUSE_MIN_READ_BUFFER */

struct fring_ent_in_out {
	uint64_t flags;
	uint64_t commit_id;
	uint32_t payload_sz;
	uint32_t padding;
	uint64_t reserved;
};

struct fring_req_header {
	char in_out[128]; /* fuse_in_header in, fuse_out_header out */
	char op_in[FRING_OP_IN_SIZE];
	struct fring_ent_in_out ent;
};

struct fring_cmd_req {
	uint64_t flags;
	uint64_t commit_id;
	uint16_t qid;
	uint8_t padding[6];
};

/*
 * Entries a CPU queue.  Linux queues a FUSE request on the ring queue of
 * the CPU that made it, and there it waits for one of that queue's
 * entries even while another CPU's are free: two processes at QD32 that
 * the scheduler puts on one CPU need 64 there.  With 32, two fio jobs
 * unpinned kept up to half their I/Os waiting in FUSE.
 */
#define FRING_DEPTH 64
/*
 * Locked payloads at most, over all queues: a machine with many CPUs
 * gets fewer entries a queue (down to FRING_MIN_DEPTH) rather than
 * gigabytes pinned at start.  Two CPUs keep the full FRING_DEPTH; the
 * headers in front of the payloads are 1/256 more.
 */
#define FRING_LOCK_MAX (128u << 20)
#define FRING_MIN_DEPTH 2
#define FRING_HASH 128   /* buckets for the requests in hand, by unique */
#define FRING_FRONT 4096 /* before each payload: where the request's headers are laid out */
#define FRING_SYS_ENABLE "/sys/module/fuse/parameters/enable_uring"
#define FRING_SYS_CPUS "/sys/devices/system/cpu/possible"

struct fring_owner;

struct fring_ent {
	struct fuse_ring *r;
	struct fring_owner *owner; /* whose ring its commands go on */
	struct fring_req_header *hdr;
	char *payload; /* page-aligned, FRING_FRONT bytes of our own before it */
	struct iovec iov[2];
	unsigned int qid;
	bool registered;
	uint64_t unique;            /* the request in hand, 0 for none */
	struct fring_ent *hnext;    /* in the hash, while in hand */
	STAILQ_ENTRY(fring_ent) link; /* ready, or unsent */
};

STAILQ_HEAD(fring_list, fring_ent);

/*
 * A thread whose ring carries entries: the loop's (the 2.6 queue), or a
 * hardware queue's.  ready and unsent are its thread's alone.
 */
struct fring_owner {
	struct fuse_ring *r;
	unsigned int n; /* the hardware queue, 0 for the loop */
	struct fring_list ready;  /* the kernel has handed them a request */
	struct fring_list unsent; /* to register, or answered: waiting for an SQE */
	pthread_mutex_t lock;     /* posted, closed */
	struct fring_list posted; /* to send from this ring, put there by other threads */
	bool closed;              /* the session is over: nothing more is answered */
	/* held while requests are answered: fuse_ring_stop() waits for it */
	pthread_mutex_t serve_lock;
	struct ioprio_cache ioprio; /* the callers' priorities, for this thread */
};

struct fuse_ring {
	struct fuse_session *se;
	int fd;
	struct rqdisk *disk;
	struct uring_driver *driver;
	uint64_t init_unique;
	unsigned int flags; /* FUSE_RING_* */
	bool offered;  /* the kernel's INIT asked */
	bool accepted; /* our INIT reply said yes */
	bool started;  /* entries queued for registering */
	bool said;     /* atomic: an unexpected error was reported */
	bool mq;       /* the hardware queues' threads own the entries */
	size_t payload_sz;
	unsigned int nr_queues;
	unsigned int depth; /* entries a queue */
	unsigned int nr_ents;
	struct fring_ent *ents;
	struct fring_req_header *hdrs;
	size_t hdrs_len;
	char *mem;
	size_t mem_len;
	bool locked; /* hdrs and mem are locked in memory */
	pthread_mutex_t hash_lock; /* answers come from any thread */
	struct fring_ent *hash[FRING_HASH];
	struct fring_owner *owners;
	unsigned int nr_owners;
};

static int fring_read_sys(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	bool ok;

	if (!f)
		return -errno;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	return ok ? 0 : -EIO;
}

int fuse_ring_available(char *why, size_t whylen)
{
	char val[8];

	if (fring_read_sys(FRING_SYS_ENABLE, val, sizeof(val))) {
		snprintf(why, whylen, "this kernel has no FUSE over io_uring (Linux 6.14 or later)");
		return 0;
	}
	if (val[0] != 'Y') {
		snprintf(why, whylen, "FUSE over io_uring is off in this kernel (%s is %c)",
			 FRING_SYS_ENABLE, val[0]);
		return 0;
	}
	return 1;
}

/*
 * The kernel keeps a queue for each possible CPU, numbered from 0 up to
 * their count (num_possible_cpus()): "0-3,6-7" is 6 queues.
 */
static unsigned int fring_nr_queues(void)
{
	char buf[256];
	unsigned int n = 0;
	char *p = buf;

	if (fring_read_sys(FRING_SYS_CPUS, buf, sizeof(buf)))
		return (unsigned int)sysconf(_SC_NPROCESSORS_CONF);
	while (*p >= '0' && *p <= '9') {
		unsigned long first = strtoul(p, &p, 10), last = first;

		if (*p == '-')
			last = strtoul(p + 1, &p, 10);
		n += (unsigned int)(last - first + 1);
		if (*p == ',')
			p++;
	}
	return n ? n : 1;
}

static size_t fring_hash_of(uint64_t unique)
{
	return (unique >> 1) % FRING_HASH; /* the kernel's uniques step by 2 */
}

static void fring_hash_add(struct fuse_ring *r, struct fring_ent *e)
{
	struct fring_ent **b = &r->hash[fring_hash_of(e->unique)];

	pthread_mutex_lock(&r->hash_lock);
	e->hnext = *b;
	*b = e;
	pthread_mutex_unlock(&r->hash_lock);
}

static struct fring_ent *fring_hash_take(struct fuse_ring *r, uint64_t unique)
{
	struct fring_ent **p = &r->hash[fring_hash_of(unique)];
	struct fring_ent *e = NULL;

	pthread_mutex_lock(&r->hash_lock);
	for (; *p; p = &(*p)->hnext) {
		if ((*p)->unique == unique) {
			e = *p;
			*p = e->hnext;
			break;
		}
	}
	pthread_mutex_unlock(&r->hash_lock);
	return e;
}

static void fring_prep(struct fuse_ring *r, struct fring_ent *e, struct io_uring_sqe *sqe)
{
	struct fring_cmd_req *cmd = (struct fring_cmd_req *)sqe->cmd;

	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = r->fd;
	cmd->qid = (uint16_t)e->qid;
	if (!e->registered) {
		sqe->cmd_op = FRING_CMD_REGISTER;
		sqe->addr = (uint64_t)(uintptr_t)e->iov;
		sqe->len = 2;
		e->registered = true;
	} else {
		sqe->cmd_op = FRING_CMD_COMMIT_AND_FETCH;
		cmd->commit_id = e->unique;
	}
	e->unique = 0;
}

/* On o's thread: o's serve runs in its next turn. */
static void fring_serve_again(struct fring_owner *o)
{
	if (o->r->mq)
		uring_driver_watch_again_queue(o->r->driver, o->n);
	else
		uring_driver_watch_again(o->r->driver);
}

/*
 * Register e, or answer its request and ask for the next, on its owner's
 * ring: now on the owner's thread (later if the SQ is full), else posted
 * to it.
 */
static void fring_send(struct fuse_ring *r, struct fring_ent *e)
{
	struct fring_owner *o = e->owner;
	struct io_uring_sqe *sqe;

	if (r->mq && uring_driver_thread_queue(r->driver) != (int)o->n) {
		pthread_mutex_lock(&o->lock);
		STAILQ_INSERT_TAIL(&o->posted, e, link);
		pthread_mutex_unlock(&o->lock);
		uring_driver_watch_again_queue(r->driver, o->n);
		return;
	}
	sqe = uring_driver_thread_sqe(r->driver, e);
	if (!sqe) {
		STAILQ_INSERT_TAIL(&o->unsent, e, link);
		fring_serve_again(o);
		return;
	}
	fring_prep(r, e, sqe);
}

/* A reply from the session into e's buffers: the header, then the arguments in a row. */
static ssize_t fring_fill_reply(struct fuse_ring *r, struct fring_ent *e,
				const struct iovec *iov, int count)
{
	struct fuse_out_header *oh = (struct fuse_out_header *)e->hdr->in_out;
	size_t at = 0;

	memcpy(oh, iov[0].iov_base, sizeof(*oh));
	for (int i = 1; i < count; i++) {
		if (iov[i].iov_len > r->payload_sz - at) {
			oh->error = -EIO; /* cannot happen: replies are bounded by max_read */
			at = 0;
			break;
		}
		if (iov[i].iov_base != e->payload + at) /* a read into the payload is there already */
			memmove(e->payload + at, iov[i].iov_base, iov[i].iov_len);
		at += iov[i].iov_len;
	}
	e->hdr->ent.payload_sz = (uint32_t)at;
	return (ssize_t)(sizeof(*oh) + at);
}

/*
 * Our INIT reply takes the kernel's offer if the payload buffers hold the
 * largest request the reply allows; otherwise it goes out as libfuse made
 * it and the connection stays on /dev/fuse.
 */
static ssize_t fring_accept(struct fuse_ring *r, int fd, struct iovec *iov, int count)
{
	struct fuse_init_out out = { 0 };
	struct iovec mine[2];
	size_t page = (size_t)sysconf(_SC_PAGESIZE), need;
	ssize_t res;

	if (count != 2 || iov[1].iov_len < offsetof(struct fuse_init_out, unused))
		return writev(fd, iov, count);
	memcpy(&out, iov[1].iov_base, iov[1].iov_len < sizeof(out) ? iov[1].iov_len : sizeof(out));
	need = out.max_write > FRING_MIN_PAYLOAD ? out.max_write : FRING_MIN_PAYLOAD;
	if ((out.flags & FUSE_MAX_PAGES) && (size_t)out.max_pages * page > need)
		need = (size_t)out.max_pages * page;
	if (need > r->payload_sz)
		return writev(fd, iov, count);
	out.flags |= FUSE_INIT_EXT;
	out.flags2 |= FRING_OFFER;
	mine[0] = iov[0];
	mine[1] = (struct iovec){ &out, iov[1].iov_len };
	res = writev(fd, mine, 2);
	if (res >= 0) {
		r->accepted = true;
		uring_driver_watch_again(r->driver); /* serve registers the entries */
	}
	return res;
}

/* The session's reply path: a request that came on the ring is answered on it. */
static ssize_t fring_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	struct rqdisk *disk = userdata;
	struct fuse_ring *r = disk->ring;
	const struct fuse_out_header *oh = iov[0].iov_base;
	struct fring_ent *e;
	ssize_t len;

	if (r->offered && !r->accepted && oh->unique == r->init_unique && !oh->error)
		return fring_accept(r, fd, iov, count);
	e = oh->unique ? fring_hash_take(r, oh->unique) : NULL;
	if (!e)
		return writev(fd, iov, count);
	len = fring_fill_reply(r, e, iov, count);
	e->unique = oh->unique;
	fring_send(r, e);
	return len;
}

static ssize_t fring_read(int fd, void *buf, size_t len, void *userdata)
{
	(void)userdata;
	return read(fd, buf, len);
}

void fuse_ring_saw_request(struct fuse_ring *r, const void *mem, size_t size)
{
	const struct fuse_in_header *ih = mem;
	const struct fuse_init_in *in = (const void *)(ih + 1);

	if (size < sizeof(*ih) + sizeof(*in) || ih->opcode != FUSE_INIT)
		return;
	r->offered = (in->flags & FUSE_INIT_EXT) && (in->flags2 & FRING_OFFER);
	r->offered |= !!(r->flags & FUSE_RING_ASSUME_OFFER);
	r->init_unique = ih->unique;
	if (!r->offered && !(r->flags & FUSE_RING_QUIET))
		fprintf(stderr, "rqdisk: --fuse-uring: the kernel did not offer io_uring; "
				"requests come on /dev/fuse\n");
}

/* A request the kernel laid out in e, handed to the session as /dev/fuse would have. */
static void fring_answer(struct fuse_ring *r, struct fring_ent *e)
{
	const struct fuse_in_header *ih = (const void *)e->hdr->in_out;
	size_t payload = e->hdr->ent.payload_sz;
	size_t op = ih->len >= sizeof(*ih) + payload ? ih->len - sizeof(*ih) - payload : SIZE_MAX;
	char *msg;

	e->unique = ih->unique;
	if (op > FRING_OP_IN_SIZE || payload > r->payload_sz) {
		struct fuse_out_header oh = { sizeof(oh), -EIO, ih->unique };

		fring_fill_reply(r, e, &(struct iovec){ &oh, sizeof(oh) }, 1);
		fring_send(r, e);
		return;
	}
	msg = e->payload - sizeof(*ih) - op;
	memcpy(msg, ih, sizeof(*ih));
	memcpy(msg + sizeof(*ih), e->hdr->op_in, op);
	fring_hash_add(r, e);
	fe_origin = (struct fe_origin){ .held = e->payload, .held_len = r->payload_sz,
					.cpu = (int)e->qid,
					.ioprio = r->mq ? &e->owner->ioprio : NULL };
	fuse_session_process_buf(r->se, &(struct fuse_buf){ .size = ih->len, .mem = msg });
	fe_origin = (struct fe_origin){ .cpu = -1 };
}

/* Every entry to its owner, to be registered on its ring. */
static void fring_start(struct fuse_ring *r)
{
	for (unsigned int i = 0; i < r->nr_ents; i++) {
		struct fring_owner *o = r->ents[i].owner;

		if (!r->mq) {
			STAILQ_INSERT_TAIL(&o->unsent, &r->ents[i], link);
			continue;
		}
		pthread_mutex_lock(&o->lock);
		STAILQ_INSERT_TAIL(&o->posted, &r->ents[i], link);
		pthread_mutex_unlock(&o->lock);
	}
	for (unsigned int n = 0; r->mq && n < r->nr_owners; n++)
		uring_driver_watch_again_queue(r->driver, n);
	r->started = true;
}

/*
 * On o's thread: answer what the kernel has handed over (unless the
 * session is over), then send what waits for o's ring.
 */
static void fring_serve_owner(struct fuse_ring *r, struct fring_owner *o)
{
	struct fring_list unsent = STAILQ_HEAD_INITIALIZER(unsent);
	struct fring_ent *e;
	bool closed;

	pthread_mutex_lock(&o->serve_lock);
	pthread_mutex_lock(&o->lock);
	STAILQ_CONCAT(&unsent, &o->posted);
	closed = o->closed;
	pthread_mutex_unlock(&o->lock);
	while (!closed && (e = STAILQ_FIRST(&o->ready))) {
		STAILQ_REMOVE_HEAD(&o->ready, link);
		fring_answer(r, e);
	}
	pthread_mutex_unlock(&o->serve_lock);
	STAILQ_CONCAT(&unsent, &o->unsent);
	while ((e = STAILQ_FIRST(&unsent))) {
		STAILQ_REMOVE_HEAD(&unsent, link);
		fring_send(r, e);
	}
}

void fuse_ring_serve(struct fuse_ring *r)
{
	if (r->accepted && !r->started)
		fring_start(r);
	if (!r->mq)
		fring_serve_owner(r, &r->owners[0]);
}

void fuse_ring_serve_queue(struct fuse_ring *r, unsigned int n)
{
	if (r->mq && n < r->nr_owners)
		fring_serve_owner(r, &r->owners[n]);
}

void fuse_ring_stop(struct fuse_ring *r)
{
	for (unsigned int n = 0; n < r->nr_owners; n++) {
		struct fring_owner *o = &r->owners[n];

		pthread_mutex_lock(&o->lock);
		o->closed = true;
		pthread_mutex_unlock(&o->lock);
		/* a thread answering now has done so once this is had */
		pthread_mutex_lock(&o->serve_lock);
		pthread_mutex_unlock(&o->serve_lock);
	}
}

/*
 * Whether an entry's error is worth a word: not when the connection is
 * going (ENOTCONN, ECONNABORTED) or the ring is (ECANCELED), nor when a
 * kernel that turns the ring down (EOPNOTSUPP: enable_uring went off
 * before our INIT reply) meets a daemon that was told to take it only
 * where offered.
 */
static bool fring_error_said(const struct fuse_ring *r, int res)
{
	if (res == -ENOTCONN || res == -ECONNABORTED || res == -ECANCELED)
		return false;
	return res != -EOPNOTSUPP || !(r->flags & FUSE_RING_QUIET);
}

/*
 * A command ended.  0: the kernel handed the entry a request, and the
 * ring carries them from now on.  An error ends the entry, and the kernel
 * goes on with /dev/fuse; it is said once, unless fring_error_said() says
 * otherwise.
 */
void fuse_ring_complete(void *arg, void *tag, int res)
{
	struct fring_ent *e = tag;
	struct fuse_ring *r = e->r;

	(void)arg;
	if (!res) {
		__atomic_store_n(&r->disk->fuse_on_ring, true, __ATOMIC_RELAXED);
		STAILQ_INSERT_TAIL(&e->owner->ready, e, link); /* this is its owner's thread */
		return;
	}
	if (fring_error_said(r, res) && !__atomic_exchange_n(&r->said, true, __ATOMIC_RELAXED))
		fprintf(stderr, "rqdisk: FUSE over io_uring: %s\n", strerror(-res));
}

/*
 * The kernel copies each request into its entry's header and payload
 * under the ring queue's lock: a page it faults in there may wait on
 * reclaim, and reclaim on a loop device on this disk, whose requests then
 * wait for that lock.  Every page is faulted in and locked now.
 */
static int fring_alloc(struct fuse_ring *r)
{
	size_t stride = FRING_FRONT + r->payload_sz;
	bool hdrs_locked = false, mem_locked = false;

	r->depth = FRING_LOCK_MAX / (r->nr_queues * r->payload_sz);
	r->depth = r->depth > FRING_DEPTH ? FRING_DEPTH : r->depth;
	r->depth = r->depth < FRING_MIN_DEPTH ? FRING_MIN_DEPTH : r->depth;
	r->nr_ents = r->nr_queues * r->depth;
	r->ents = calloc(r->nr_ents, sizeof(*r->ents));
	r->hdrs_len = r->nr_ents * sizeof(*r->hdrs);
	r->hdrs = mem_map_locked(r->hdrs_len, &hdrs_locked);
	r->mem_len = stride * r->nr_ents;
	r->mem = mem_map_locked(r->mem_len, &mem_locked);
	r->locked = hdrs_locked && mem_locked;
	if (!r->ents || !r->hdrs || !r->mem)
		return -ENOMEM;
	for (unsigned int i = 0; i < r->nr_ents; i++) {
		struct fring_ent *e = &r->ents[i];

		e->r = r;
		e->qid = i / r->depth;
		e->owner = &r->owners[r->mq ? uring_driver_cpu_queue(r->driver, e->qid) : 0];
		e->hdr = &r->hdrs[i];
		e->payload = r->mem + i * stride + FRING_FRONT;
		e->iov[0] = (struct iovec){ e->hdr, sizeof(*e->hdr) };
		e->iov[1] = (struct iovec){ e->payload, r->payload_sz };
	}
	return 0;
}

/* The loop alone, or a thread per hardware queue. */
static int fring_owners_init(struct fuse_ring *r)
{
	unsigned int nr = uring_driver_nr_queues(r->driver);

	r->mq = nr > 0;
	r->nr_owners = nr ? nr : 1;
	r->owners = calloc(r->nr_owners, sizeof(*r->owners));
	if (!r->owners)
		return -ENOMEM;
	for (unsigned int n = 0; n < r->nr_owners; n++) {
		struct fring_owner *o = &r->owners[n];

		o->r = r;
		o->n = n;
		STAILQ_INIT(&o->ready);
		STAILQ_INIT(&o->unsent);
		STAILQ_INIT(&o->posted);
		pthread_mutex_init(&o->lock, NULL);
		pthread_mutex_init(&o->serve_lock, NULL);
		ioprio_cache_init(&o->ioprio, NULL);
		ioprio_cache_share_cgroups(&o->ioprio, &r->disk->ioprio);
	}
	return 0;
}

struct fuse_ring *fuse_ring_new(struct fuse_session *se, int fd, struct rqdisk *disk,
				struct uring_driver *driver, unsigned int flags)
{
	static const struct fuse_custom_io io = { .writev = fring_writev, .read = fring_read };
	struct fuse_ring *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	*r = (struct fuse_ring){
		.se = se, .fd = fd, .disk = disk, .driver = driver, .flags = flags
	};
	pthread_mutex_init(&r->hash_lock, NULL);
	r->payload_sz = FE_MAX_IO;
	r->nr_queues = fring_nr_queues();
	if (fring_owners_init(r) || fring_alloc(r) || fuse_session_custom_io(se, &io, fd)) {
		fuse_ring_free(r);
		return NULL;
	}
	disk->ring = r;
	disk->fuse_ring_depth = r->depth;
	return r;
}

bool fuse_ring_locked(const struct fuse_ring *r)
{
	return r->locked;
}

void fuse_ring_free(struct fuse_ring *r)
{
	if (!r)
		return;
	if (r->mem)
		munmap(r->mem, r->mem_len);
	if (r->hdrs)
		munmap(r->hdrs, r->hdrs_len);
	for (unsigned int n = 0; r->owners && n < r->nr_owners; n++) {
		pthread_mutex_destroy(&r->owners[n].lock);
		pthread_mutex_destroy(&r->owners[n].serve_lock);
		ioprio_cache_exit(&r->owners[n].ioprio); /* its cgroups are the disk's cache's */
	}
	free(r->owners);
	pthread_mutex_destroy(&r->hash_lock);
	free(r->ents);
	free(r);
}
