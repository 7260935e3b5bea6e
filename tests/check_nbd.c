/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_nbd.c - the nbd backend on a virtual clock, against a server of
 * the test's own (a thread speaking just enough NBD on a Unix socket, no
 * FUA, and logging every command it receives): deadlines (a server that
 * stops answering, a server gone), FUA on a server without it (a write,
 * then a flush, and only then done; sent again, flush and all, when the
 * connection drops in between), writes a drop lost reported to the next
 * flush, a server back without multi-conn, and the flush at exit.
 */
#include <arpa/inet.h>
#include <check.h>
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "backend_nbd.h"
#include "device.h"
#include "fake_driver.h"
#include "stack_harness.h"

#define S ((uint64_t)1000000000)
#define START_NS (1000 * S)
#define EXPORT_SIZE (1u << 20)
#define MAX_WATCHES 8
#define MAX_LOG 1024
#define MAX_BIOS 80
#define NBD_CMD_READ 0
/* A write of this many 64 KiB segments is more than a Unix socket's buffer takes at once. */
#define BIG_VECS 15
#define SEG (64u << 10)
#define NBD_CMD_WRITE 1
#define NBD_CMD_FLUSH 3
#define NBD_FLAG_HAS_FLAGS 1
#define NBD_FLAG_SEND_FLUSH 4
#define NBD_FLAG_CAN_MULTI_CONN 0x100

/* A command the server received: what, where, and on which connection (its socket). */
struct logged {
	uint16_t type;
	uint64_t off;
	int fd;
};

/*
 * The server: every connection a thread; mute, it reads requests and
 * answers none.  stall_write: the next write is read, then nothing more
 * is read or answered until go, when its reply is sent and the
 * connection closed (stalled, closed: how far it got).  hold_flush: a
 * flush is not answered while it is set; flush_error: the NBD error a
 * flush is answered with.  pause_after_write: the next write is answered,
 * then nothing more is read until resume (a client that stops sending
 * meanwhile is not seen to go).  multi_conn: a new connection is told
 * the export takes several.
 */
struct server {
	int listen_fd;
	char path[108];
	volatile int mute;
	volatile int stall_write, stalled, go, closed;
	volatile int hold_flush, flush_error;
	volatile int pause_after_write, resume;
	volatile int multi_conn;
	pthread_mutex_t lock; /* the log's */
	struct logged log[MAX_LOG];
	unsigned int nr_log;
	char data[EXPORT_SIZE];
};

static void server_log(struct server *srv, uint16_t type, uint64_t off, int fd)
{
	pthread_mutex_lock(&srv->lock);
	if (srv->nr_log < MAX_LOG)
		srv->log[srv->nr_log++] = (struct logged){ type, off, fd };
	pthread_mutex_unlock(&srv->lock);
}

static unsigned int server_nr_log(struct server *srv)
{
	unsigned int n;

	pthread_mutex_lock(&srv->lock);
	n = srv->nr_log;
	pthread_mutex_unlock(&srv->lock);
	return n;
}

/* The socket the first command at off came on, or -1. */
static int conn_of(struct server *srv, uint16_t type, uint64_t off)
{
	int fd = -1;

	pthread_mutex_lock(&srv->lock);
	for (unsigned int i = 0; i < srv->nr_log && fd < 0; i++)
		if (srv->log[i].type == type && srv->log[i].off == off)
			fd = srv->log[i].fd;
	pthread_mutex_unlock(&srv->lock);
	return fd;
}

/* Of the first n commands received, the writes at off. */
static unsigned int writes_at(struct server *srv, unsigned int n, uint64_t off)
{
	unsigned int count = 0;

	pthread_mutex_lock(&srv->lock);
	for (unsigned int i = 0; i < n; i++)
		count += srv->log[i].type == NBD_CMD_WRITE && srv->log[i].off == off;
	pthread_mutex_unlock(&srv->lock);
	return count;
}

/* Of the first n commands received, was the last write at off followed by a flush? */
static bool flushed_after_write_at(struct server *srv, unsigned int n, uint64_t off)
{
	bool flushed = false;

	pthread_mutex_lock(&srv->lock);
	for (unsigned int i = 0; i < n; i++) {
		if (srv->log[i].type == NBD_CMD_WRITE && srv->log[i].off == off)
			flushed = false;
		else if (srv->log[i].type == NBD_CMD_FLUSH)
			flushed = true;
	}
	pthread_mutex_unlock(&srv->lock);
	return flushed;
}

static int xread(int fd, void *buf, size_t len)
{
	for (size_t got = 0; got < len;) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

static int xwrite(int fd, const void *buf, size_t len)
{
	return write(fd, buf, len) == (ssize_t)len ? 0 : -1;
}

static int opt_reply(int fd, uint32_t opt, uint32_t type, const void *data, uint32_t len)
{
	struct __attribute__((packed)) {
		uint64_t magic;
		uint32_t opt, type, len;
	} h = { htobe64(0x3e889045565a9ull), htonl(opt), htonl(type), htonl(len) };

	return xwrite(fd, &h, sizeof(h)) || (len && xwrite(fd, data, len)) ? -1 : 0;
}

/* Fixed newstyle: every option but GO is unsupported; GO says the export's size and flags. */
static int handshake(struct server *srv, int fd)
{
	struct __attribute__((packed)) {
		char magic[16];
		uint16_t flags;
	} hello = { .flags = htons(3) };
	uint32_t cflags;

	memcpy(hello.magic, "NBDMAGICIHAVEOPT", 16);
	if (xwrite(fd, &hello, sizeof(hello)) || xread(fd, &cflags, 4))
		return -1;
	for (;;) {
		struct __attribute__((packed)) {
			uint64_t magic;
			uint32_t opt, len;
		} o;
		char skip[4096];

		if (xread(fd, &o, sizeof(o)) || ntohl(o.len) > sizeof(skip) ||
		    xread(fd, skip, ntohl(o.len)))
			return -1;
		if (ntohl(o.opt) == 7) { /* NBD_OPT_GO */
			struct __attribute__((packed)) {
				uint16_t type;
				uint64_t size;
				uint16_t flags;
			} info = { 0, htobe64(EXPORT_SIZE),
				   htons(NBD_FLAG_HAS_FLAGS | NBD_FLAG_SEND_FLUSH |
					 (srv->multi_conn ? NBD_FLAG_CAN_MULTI_CONN : 0)) };

			return opt_reply(fd, 7, 3, &info, sizeof(info)) || opt_reply(fd, 7, 1, NULL, 0);
		}
		if (opt_reply(fd, ntohl(o.opt), 0x80000001u, NULL, 0))
			return -1;
	}
}

struct conn_arg {
	struct server *srv;
	int fd;
};

/* A stalled write: nothing more read until go, then its reply, and the connection closes. */
static void stall_then_close(struct server *srv, int fd, const void *rep, size_t len)
{
	srv->stalled = 1;
	while (!srv->go)
		usleep(1000);
	if (xwrite(fd, rep, len))
		fprintf(stderr, "check_nbd: the stalled write's reply was not sent\n");
	close(fd); /* what the client sent since is unread */
	srv->closed = 1;
}

/* Requests until the client goes; a mute server reads them and answers none. */
static void *serve_conn(void *arg)
{
	struct conn_arg ca = *(struct conn_arg *)arg;
	struct __attribute__((packed)) {
		uint32_t magic;
		uint16_t flags, type;
		uint64_t handle, off;
		uint32_t len;
	} rq;

	free(arg);
	if (handshake(ca.srv, ca.fd))
		goto out;
	while (!xread(ca.fd, &rq, sizeof(rq))) {
		struct __attribute__((packed)) {
			uint32_t magic, error;
			uint64_t handle;
		} rep = { htonl(0x67446698), 0, rq.handle };
		uint64_t off = be64toh(rq.off);
		uint32_t len = ntohl(rq.len);
		uint16_t type = ntohs(rq.type);

		if (off + len > EXPORT_SIZE || type == 2) /* out of range, or NBD_CMD_DISC */
			break;
		if (type == NBD_CMD_WRITE && xread(ca.fd, ca.srv->data + off, len))
			break;
		server_log(ca.srv, type, off, ca.fd);
		if (type == NBD_CMD_WRITE && ca.srv->stall_write) {
			ca.srv->stall_write = 0;
			stall_then_close(ca.srv, ca.fd, &rep, sizeof(rep));
			return NULL;
		}
		if (ca.srv->mute)
			continue;
		while (type == NBD_CMD_FLUSH && ca.srv->hold_flush)
			usleep(1000);
		if (type == NBD_CMD_FLUSH)
			rep.error = htonl((uint32_t)ca.srv->flush_error);
		if (xwrite(ca.fd, &rep, sizeof(rep)) ||
		    (type == 0 && xwrite(ca.fd, ca.srv->data + off, len)))
			break;
		if (type == NBD_CMD_WRITE && ca.srv->pause_after_write) {
			ca.srv->pause_after_write = 0;
			while (!ca.srv->resume)
				usleep(1000);
		}
	}
out:
	close(ca.fd);
	return NULL;
}

static void *accept_loop(void *arg)
{
	struct server *srv = arg;
	int fd;

	while ((fd = accept(srv->listen_fd, NULL, NULL)) >= 0) {
		struct conn_arg *ca = malloc(sizeof(*ca));
		pthread_t t;

		ck_assert_ptr_nonnull(ca);
		*ca = (struct conn_arg){ srv, fd };
		ck_assert_int_eq(pthread_create(&t, NULL, serve_conn, ca), 0);
		pthread_detach(t);
	}
	return NULL;
}

static struct server *server_start(void)
{
	struct server *srv = calloc(1, sizeof(*srv));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	pthread_t t;

	ck_assert_ptr_nonnull(srv);
	pthread_mutex_init(&srv->lock, NULL);
	snprintf(srv->path, sizeof(srv->path), "/tmp/check_nbd.%d.sock", (int)getpid());
	unlink(srv->path);
	strcpy(sa.sun_path, srv->path);
	srv->listen_fd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_ge(srv->listen_fd, 0);
	ck_assert_int_eq(bind(srv->listen_fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(srv->listen_fd, 8), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, accept_loop, srv), 0);
	pthread_detach(t);
	return srv;
}

/* The server is gone: no one listens there any more. */
static void server_gone(struct server *srv)
{
	unlink(srv->path);
}

/* The host: the backend's watches polled by the test, on a virtual clock. */
struct watch {
	int fd;
	unsigned int events;
	void (*ready)(void *arg, unsigned int revents);
	void *arg;
	bool used;
};

struct harness {
	struct blk_clock clock;
	struct request_queue *q;
	struct dev_stack stack;
	struct server *srv;
	struct watch w[MAX_WATCHES];
	struct bio bio[MAX_BIOS];
	struct bio_vec vec[MAX_BIOS][BIG_VECS];
	int error[MAX_BIOS];
	bool ended[MAX_BIOS];
	unsigned int log_at_end[MAX_BIOS]; /* the commands the server had received when it ended */
	unsigned int nr_bios;
	unsigned int nr_io_queues; /* the host's queues (dev_host_ops.nr_io_queues), 0: one */
	unsigned int io_queue;     /* the calling thread's, as a hardware queue's thread */
	char *buf; /* a page */
	char *big; /* BIG_VECS segments */
	char lost_said[512]; /* the last line the backend gave the host of a loss */
	unsigned int nr_lost_said;
};

static int h_watch_events(void *host, int fd, unsigned int events,
			  void (*ready)(void *arg, unsigned int revents), void *arg)
{
	struct harness *h = host;

	for (int i = 0; i < MAX_WATCHES; i++) {
		if (!h->w[i].used) {
			h->w[i] = (struct watch){ fd, events, ready, arg, true };
			return 0;
		}
	}
	return -ENOMEM;
}

static void h_set_events(void *host, int fd, unsigned int events)
{
	struct harness *h = host;

	for (int i = 0; i < MAX_WATCHES; i++) {
		if (h->w[i].used && h->w[i].fd == fd)
			h->w[i].events = events;
	}
}

static void h_unwatch(void *host, int fd)
{
	struct harness *h = host;

	for (int i = 0; i < MAX_WATCHES; i++) {
		if (h->w[i].used && h->w[i].fd == fd) {
			h->w[i].used = false;
			return;
		}
	}
}

static int h_watch(void *host, int fd, void (*ready)(void *arg), void *arg)
{
	return -EOPNOTSUPP;
}

static void h_lost_writes(void *host, const char *msg)
{
	struct harness *h = host;

	snprintf(h->lost_said, sizeof(h->lost_said), "%s", msg);
	h->nr_lost_said++;
}

static unsigned int h_nr_io_queues(void *host)
{
	struct harness *h = host;

	return h->nr_io_queues ? h->nr_io_queues : 1;
}

static unsigned int h_io_queue(void *host)
{
	return ((struct harness *)host)->io_queue;
}

static const struct dev_host_ops host_ops = {
	.watch_fd = h_watch,
	.unwatch_fd = h_unwatch,
	.watch_fd_events = h_watch_events,
	.set_fd_events = h_set_events,
	.lost_writes = h_lost_writes,
	.nr_io_queues = h_nr_io_queues,
	.io_queue = h_io_queue,
};

static void request_fn(struct request_queue *q)
{
	struct harness *h = q->queuedata;
	struct request *rq;

	while (dev_can_take(h->stack.top) && (rq = blk_fetch_request(q)))
		dev_submit(h->stack.top, rq);
}

static void end_io(struct bio *bio, int error)
{
	struct harness *h = bio->bi_private;
	unsigned int i = (unsigned int)(bio - h->bio);

	h->ended[i] = true;
	h->error[i] = error;
	h->log_at_end[i] = server_nr_log(h->srv);
}

static struct harness *setup_conns(struct server *srv, unsigned int timeout_s,
				   unsigned int conns)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct dev_limits lim = { .logical_block_size = 512 };
	char args[256], why[256] = "";

	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(posix_memalign((void **)&h->buf, 4096, 4096), 0);
	ck_assert_int_eq(posix_memalign((void **)&h->big, 4096, BIG_VECS * SEG), 0);
	memset(h->big, 0xa5, BIG_VECS * SEG);
	h->srv = srv;
	blk_virtual_clock_init(&h->clock, START_NS);
	h->q = blk_init_queue(request_fn, NULL, &h->clock);
	h->q->queuedata = h;
	h->stack.host = h;
	h->stack.host_ops = &host_ops;
	snprintf(args, sizeof(args), "nbd+unix:///?socket=%s timeout=%u,connections=%u", srv->path,
		 timeout_s, conns);
	ck_assert_msg(sh_stack_open(&h->stack, h->q, NULL, 0, &dev_nbd_ops, args, &lim, why,
				     sizeof(why)) == 0,
		      "%s", why);
	blk_queue_set_pdu_size(h->q, dev_stack_pdu_size(&h->stack));
	return h;
}

static struct harness *setup(struct server *srv, unsigned int timeout_s)
{
	return setup_conns(srv, timeout_s, 1);
}

/* Run the timers due, on the virtual clock (a host may before it polls the sockets). */
static void run_timers(struct harness *h)
{
	blk_queue_lock(h->q);
	dev_stack_run_timers(&h->stack, h->clock.virtual_ns);
	blk_queue_unlock(h->q);
}

/* Poll the sockets for up to ms of real time, then run the timers due on the virtual clock. */
static void pump(struct harness *h, int ms)
{
	struct pollfd p[MAX_WATCHES];
	int idx[MAX_WATCHES], n = 0;

	for (int i = 0; i < MAX_WATCHES; i++) {
		if (h->w[i].used) {
			p[n] = (struct pollfd){ .fd = h->w[i].fd, .events = (short)h->w[i].events };
			idx[n++] = i;
		}
	}
	if (poll(p, (nfds_t)n, ms) > 0) {
		blk_queue_lock(h->q);
		for (int k = 0; k < n; k++) {
			struct watch *w = &h->w[idx[k]];

			if (p[k].revents && w->used && w->fd == p[k].fd)
				w->ready(w->arg, (unsigned int)p[k].revents);
		}
		blk_queue_unlock(h->q);
	}
	run_timers(h);
	blk_run_queue(h->q);
}

static unsigned int read_at(struct harness *h, sector_t sector)
{
	unsigned int i = h->nr_bios++;

	ck_assert_uint_lt(i, MAX_BIOS);

	h->vec[i][0] = (struct bio_vec){ h->buf, 4096 };
	bio_init(&h->bio[i], REQ_OP_READ, sector, 4096, h->vec[i], 1);
	h->bio[i].bi_end_io = end_io;
	h->bio[i].bi_private = h;
	submit_bio(h->q, &h->bio[i]);
	return i;
}

/* A write of nr 64 KiB segments (or a page, nr 0) at sector, with flags (REQ_FUA). */
static unsigned int write_at(struct harness *h, sector_t sector, unsigned int nr,
			     unsigned int flags)
{
	unsigned int i = h->nr_bios++;

	ck_assert_uint_lt(i, MAX_BIOS);

	for (unsigned int k = 0; k < nr; k++)
		h->vec[i][k] = (struct bio_vec){ h->big + k * SEG, SEG };
	if (!nr)
		h->vec[i][0] = (struct bio_vec){ h->big, 4096 };
	bio_init(&h->bio[i], REQ_OP_WRITE, sector, nr ? nr * SEG : 4096, h->vec[i],
		 (unsigned short)(nr ? nr : 1));
	h->bio[i].bi_flags = flags;
	h->bio[i].bi_end_io = end_io;
	h->bio[i].bi_private = h;
	submit_bio(h->q, &h->bio[i]);
	return i;
}

/* A flush, as fsync sends it. */
static unsigned int flush(struct harness *h)
{
	unsigned int i = h->nr_bios++;

	ck_assert_uint_lt(i, MAX_BIOS);

	bio_init(&h->bio[i], REQ_OP_FLUSH, 0, 0, NULL, 0);
	h->bio[i].bi_flags = REQ_SYNC;
	h->bio[i].bi_end_io = end_io;
	h->bio[i].bi_private = h;
	submit_bio(h->q, &h->bio[i]);
	return i;
}

/* Pump for a while of real time (the replies, a reconnection) at the virtual time now. */
static void settle(struct harness *h)
{
	for (int i = 0; i < 20; i++)
		pump(h, 10);
}

/* Pump until *done, for at most 10 s of real time (a reconnection, a large write). */
static void pump_until(struct harness *h, const bool *done)
{
	for (int i = 0; i < 1000 && !*done; i++)
		pump(h, 10);
}

/* Wait, without pumping, for the server to set *flag: at most 10 s. */
static bool wait_server(volatile int *flag)
{
	for (int i = 0; i < 10000 && !*flag; i++)
		usleep(1000);
	return *flag;
}

/* The connections die, unseen until the backend next reads or writes: shut here. */
static void hang_up(struct harness *h)
{
	for (int i = 0; i < MAX_WATCHES; i++) {
		if (h->w[i].used)
			shutdown(h->w[i].fd, SHUT_RDWR);
	}
}

/* The sockets the backend polls now: one per connection. */
static unsigned int nr_watched(struct harness *h)
{
	unsigned int n = 0;

	for (int i = 0; i < MAX_WATCHES; i++)
		n += h->w[i].used;
	return n;
}

static void free_harness(struct harness *h)
{
	blk_cleanup_queue(h->q);
	free(h->buf);
	free(h->big);
	free(h);
}

static void teardown(struct harness *h)
{
	dev_stack_close(&h->stack);
	free_harness(h);
}

/*
 * Close the stack as the daemon does at exit, what it says on stderr into
 * said (NUL-terminated); returns what dev_stack_close returns.
 */
static int teardown_saying(struct harness *h, char *said, size_t len)
{
	char path[] = "/tmp/check_nbd.err.XXXXXX";
	int fd = mkstemp(path), saved = dup(2), ret;
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(saved, 0);
	unlink(path);
	fflush(stderr);
	ck_assert_int_ge(dup2(fd, 2), 0);
	ret = dev_stack_close(&h->stack);
	fflush(stderr);
	ck_assert_int_ge(dup2(saved, 2), 0);
	close(saved);
	n = pread(fd, said, len - 1, 0);
	said[n > 0 ? n : 0] = '\0';
	close(fd);
	free_harness(h);
	return ret;
}

/*
 * A server that stops answering: a read is not failed one nanosecond
 * before its deadline (the timeout after it came), and is failed with
 * EIO at it.
 */
START_TEST(a_read_the_server_never_answers_fails_at_its_deadline)
{
	struct server *srv = server_start();
	struct harness *h = setup(srv, 5);
	unsigned int a, b;

	a = read_at(h, 0);
	settle(h);
	ck_assert(h->ended[a]);
	ck_assert_int_eq(h->error[a], 0);
	srv->mute = 1;
	b = read_at(h, 8);
	settle(h);
	h->clock.virtual_ns = START_NS + 5 * S - 1;
	settle(h);
	ck_assert_msg(!h->ended[b], "the read ended before its deadline");
	h->clock.virtual_ns = START_NS + 5 * S;
	settle(h);
	ck_assert_msg(h->ended[b], "the read did not end at its deadline");
	ck_assert_int_eq(h->error[b], -EIO);
	srv->mute = 0;
	teardown(h);
	server_gone(srv);
}
END_TEST

/*
 * The server is gone: a read waits (no EIO before its deadline) while the
 * backend tries to reconnect; once gone for the timeout, a new read fails
 * at once.
 */
START_TEST(gone_for_the_timeout_new_io_fails_at_once)
{
	struct server *srv = server_start();
	struct harness *h = setup(srv, 5);
	unsigned int a, b;

	server_gone(srv);
	srv->mute = 1;
	hang_up(h);
	settle(h);
	a = read_at(h, 0);
	settle(h);
	h->clock.virtual_ns = START_NS + 2 * S;
	settle(h);
	ck_assert_msg(!h->ended[a], "a read failed before its deadline");
	h->clock.virtual_ns = START_NS + 5 * S;
	settle(h);
	ck_assert(h->ended[a]);
	ck_assert_int_eq(h->error[a], -EIO);
	b = read_at(h, 8);
	settle(h);
	ck_assert_msg(h->ended[b], "a read after the timeout's outage did not fail at once");
	ck_assert_int_eq(h->error[b], -EIO);
	teardown(h);
}
END_TEST

/*
 * A FUA write on a server without FUA is a write, then a flush once the
 * write is answered: it ends only once the flush is answered, after the
 * server has received both, in that order.
 */
START_TEST(a_fua_write_ends_once_its_flush_is_answered)
{
	struct server *srv = server_start();
	struct harness *h = setup(srv, 5);
	unsigned int w;

	srv->hold_flush = 1;
	w = write_at(h, 8, 0, REQ_FUA);
	for (int i = 0; i < 1000 && server_nr_log(srv) < 2; i++)
		pump(h, 10);
	settle(h);
	ck_assert_uint_eq(server_nr_log(srv), 2);
	ck_assert_uint_eq(writes_at(srv, 1, 4096), 1);
	ck_assert_msg(flushed_after_write_at(srv, 2, 4096), "no flush followed the FUA write");
	ck_assert_msg(!h->ended[w], "the FUA write ended before its flush was answered");
	srv->hold_flush = 0;
	pump_until(h, &h->ended[w]);
	ck_assert(h->ended[w]);
	ck_assert_int_eq(h->error[w], 0);
	teardown(h);
	server_gone(srv);
}
END_TEST

/* The flush after a FUA write fails: the write, not durable, fails with EIO. */
START_TEST(a_fua_write_whose_flush_fails_fails_with_eio)
{
	struct server *srv = server_start();
	struct harness *h = setup(srv, 5);
	unsigned int w;

	srv->flush_error = EIO;
	w = write_at(h, 8, 0, REQ_FUA);
	pump_until(h, &h->ended[w]);
	ck_assert(h->ended[w]);
	ck_assert_int_eq(h->error[w], -EIO);
	ck_assert_msg(flushed_after_write_at(srv, h->log_at_end[w], 4096),
		      "the FUA write ended before a flush was sent");
	srv->flush_error = 0;
	teardown(h);
	server_gone(srv);
}
END_TEST

/*
 * FUA write w (at byte off) ends with success, once the server has had it
 * twice (sent again after the drop) and a flush after the second.
 */
static void assert_sent_again_with_flush(struct harness *h, struct server *srv, unsigned int w,
					 uint64_t off)
{
	pump_until(h, &h->ended[w]);
	ck_assert(h->ended[w]);
	ck_assert_int_eq(h->error[w], 0);
	ck_assert_msg(flushed_after_write_at(srv, h->log_at_end[w], off),
		      "the FUA write ended with success with no flush after it (%u of its writes "
		      "received, %u commands in all)",
		      writes_at(srv, h->log_at_end[w], off), h->log_at_end[w]);
	ck_assert_uint_eq(writes_at(srv, h->log_at_end[w], off), 2);
}

/*
 * The window between a FUA write's reply and its flush: the server
 * answers the write and closes the connection, and the client reads the
 * reply and finds the connection dead in one go.  That takes a command
 * libnbd is still sending when the reply comes (a write larger than the
 * socket's buffer, which the server no longer reads): libnbd then reads
 * the reply (the write's callback, success) and, in the same poll (a
 * hang-up is read and write), goes on sending and dies of EPIPE.  The
 * write is not durable yet: it must not end with success before the
 * server has received a flush after the write, sent again on the next
 * connection.
 */
START_TEST(a_fua_write_answered_then_dropped_is_sent_again_with_its_flush)
{
	struct server *srv = server_start();
	struct harness *h = setup(srv, 5);
	unsigned int w, x;

	/* a small send buffer: the large write below cannot all go at once */
	for (int i = 0; i < MAX_WATCHES; i++) {
		int size = 4096;

		if (h->w[i].used)
			ck_assert_int_eq(setsockopt(h->w[i].fd, SOL_SOCKET, SO_SNDBUF, &size,
						    sizeof(size)), 0);
	}
	srv->stall_write = 1;
	w = write_at(h, 0, 0, REQ_FUA);
	for (int i = 0; i < 1000 && !srv->stalled; i++)
		pump(h, 10);
	ck_assert_msg(srv->stalled, "the server did not receive the FUA write");
	x = write_at(h, SEG >> 9, BIG_VECS, 0);
	for (int i = 0; i < 5; i++)
		pump(h, 10);
	ck_assert_msg(!h->ended[w] && !h->ended[x], "a write ended the server did not answer");
	srv->go = 1;
	ck_assert_msg(wait_server(&srv->closed), "the server did not close the connection");
	pump(h, 10); /* the reply and the hang-up at once */
	assert_sent_again_with_flush(h, srv, w, 0);
	pump_until(h, &h->ended[x]);
	ck_assert(h->ended[x]);
	ck_assert_int_eq(h->error[x], 0);
	teardown(h);
	server_gone(srv);
}
END_TEST

/*
 * The connection dies between a FUA write's reply and its flush: the reply
 * is read, and the flush, the next thing sent, finds the socket shut
 * (libnbd runs its callback with ENOTCONN inside nbd_aio_flush).  The
 * write is not durable: it is sent again, flush and all, on the next
 * connection, not failed.
 */
START_TEST(a_fua_write_whose_flush_finds_the_connection_dead_is_sent_again)
{
	struct server *srv = server_start();
	struct harness *h = setup(srv, 5);
	struct pollfd p = { .fd = -1, .events = POLLIN };
	unsigned int w;

	for (int i = 0; i < MAX_WATCHES; i++) {
		if (h->w[i].used)
			p.fd = h->w[i].fd;
	}
	srv->pause_after_write = 1;
	w = write_at(h, 8, 0, REQ_FUA);
	/* the reply waits in the socket, unread; nothing the client sends goes out now */
	ck_assert_int_eq(poll(&p, 1, 10000), 1);
	ck_assert_int_eq(shutdown(p.fd, SHUT_WR), 0);
	assert_sent_again_with_flush(h, srv, w, 4096);
	srv->resume = 1;
	teardown(h);
	server_gone(srv);
}
END_TEST

/*
 * A read sent on a connection that died unseen (the send fails, and libnbd
 * runs the command's callback with ENOTCONN before nbd_aio_pread returns):
 * not yet sent, so it waits for the next connection, even where the host
 * runs the timers before it has polled the socket; it is not failed.
 */
START_TEST(a_read_sent_as_its_connection_dies_waits_for_the_next)
{
	struct server *srv = server_start();
	struct harness *h = setup(srv, 5);
	unsigned int a, b;

	a = read_at(h, 0);
	pump_until(h, &h->ended[a]);
	ck_assert_int_eq(h->error[a], 0);
	hang_up(h);
	b = read_at(h, 8);
	run_timers(h);
	ck_assert_msg(!h->ended[b] || !h->error[b],
		      "a read its dead connection never sent failed with %d", h->error[b]);
	pump_until(h, &h->ended[b]);
	ck_assert(h->ended[b]);
	ck_assert_int_eq(h->error[b], 0);
	teardown(h);
	server_gone(srv);
}
END_TEST

/* A write of a page at sector, ended with success. */
static void write_acked(struct harness *h, sector_t sector)
{
	unsigned int w = write_at(h, sector, 0, 0);

	pump_until(h, &h->ended[w]);
	ck_assert(h->ended[w]);
	ck_assert_int_eq(h->error[w], 0);
}

/* A flush, ended with error. */
static void flush_ends_with(struct harness *h, int error)
{
	unsigned int f = flush(h);

	pump_until(h, &h->ended[f]);
	ck_assert_msg(h->ended[f], "a flush did not end");
	ck_assert_msg(h->error[f] == error, "a flush ended with %d, not %d", h->error[f], error);
}

/*
 * A write the server answered, with no flush after it, is in the
 * server's cache when the connection drops (a server killed loses it):
 * the next flush, on the new connection, fails with EIO, as a writeback
 * error fails the next fsync; the flush after that succeeds.
 */
START_TEST(a_write_no_flush_covered_fails_the_next_flush_after_a_drop)
{
	struct server *srv = server_start();
	struct harness *h = setup(srv, 5);

	write_acked(h, 8);
	hang_up(h);
	settle(h);
	flush_ends_with(h, -EIO);
	flush_ends_with(h, 0);
	write_acked(h, 16); /* and a later drop with nothing unflushed says nothing */
	flush_ends_with(h, 0);
	hang_up(h);
	settle(h);
	flush_ends_with(h, 0);
	teardown(h);
	server_gone(srv);
}
END_TEST

/*
 * No false alarm: a drop with every answered write flushed, a drop before
 * any write, and a write in flight at the drop (never answered, so sent
 * again) leave the next flush to succeed.
 */
START_TEST(a_drop_that_lost_no_answered_write_fails_no_flush)
{
	struct server *srv = server_start();
	struct harness *h = setup(srv, 5);
	unsigned int w;

	hang_up(h);
	settle(h);
	flush_ends_with(h, 0);
	write_acked(h, 8);
	flush_ends_with(h, 0);
	hang_up(h);
	settle(h);
	flush_ends_with(h, 0);
	srv->mute = 1;
	w = write_at(h, 24, 0, 0);
	for (int i = 0; i < 1000 && !writes_at(srv, server_nr_log(srv), 24 * 512); i++)
		pump(h, 10);
	hang_up(h);
	srv->mute = 0;
	pump_until(h, &h->ended[w]);
	ck_assert(h->ended[w]);
	ck_assert_int_eq(h->error[w], 0);
	ck_assert_uint_eq(writes_at(srv, server_nr_log(srv), 24 * 512), 2);
	flush_ends_with(h, 0);
	ck_assert_uint_eq(h->stack.lost.events, 0);
	ck_assert_uint_eq(h->nr_lost_said, 0);
	teardown(h);
	server_gone(srv);
}
END_TEST

/*
 * A drop that lost writes is counted in the stack, writes and sectors,
 * and said to the host once, naming the export and what was lost (a
 * daemon puts it in the system log, and every open file's next fsync
 * fails); a later drop with nothing unflushed adds nothing, and a second
 * loss adds to the counts.
 */
START_TEST(a_drop_that_lost_writes_is_counted_and_said_to_the_host)
{
	struct server *srv = server_start();
	struct harness *h = setup(srv, 5);
	char want[256];

	write_acked(h, 8);
	write_acked(h, 64);
	hang_up(h);
	settle(h);
	ck_assert_uint_eq(h->stack.lost.events, 1);
	ck_assert_uint_eq(h->stack.lost.writes, 2);
	ck_assert_uint_eq(h->stack.lost.sectors, 16);
	ck_assert_uint_eq(h->nr_lost_said, 1);
	snprintf(want, sizeof(want), "nbd: nbd+unix:///?socket=%s: 2 writes (16 sectors) no flush "
		 "covered may be lost with the connection", srv->path);
	ck_assert_msg(strstr(h->lost_said, want), "said: %s", h->lost_said);
	flush_ends_with(h, -EIO);
	hang_up(h);
	settle(h);
	flush_ends_with(h, 0);
	ck_assert_uint_eq(h->stack.lost.events, 1);
	write_acked(h, 8); /* flushed: not lost */
	flush_ends_with(h, 0);
	write_acked(h, 24);
	hang_up(h);
	settle(h);
	ck_assert_uint_eq(h->stack.lost.events, 2);
	ck_assert_uint_eq(h->stack.lost.writes, 3);
	ck_assert_uint_eq(h->stack.lost.sectors, 24);
	ck_assert_uint_eq(h->nr_lost_said, 2);
	ck_assert_msg(strstr(h->lost_said, ": 1 write (8 sectors) no flush covered"), "said: %s",
		      h->lost_said);
	teardown(h);
	server_gone(srv);
}
END_TEST

/*
 * A flush the server has not answered when the connection drops did not
 * make the writes before it durable: sent again, it fails with EIO.
 */
START_TEST(a_flush_in_flight_at_a_drop_that_lost_writes_fails)
{
	struct server *srv = server_start();
	struct harness *h = setup(srv, 5);
	unsigned int f;

	write_acked(h, 8);
	srv->hold_flush = 1;
	f = flush(h);
	for (int i = 0; i < 1000 && server_nr_log(srv) < 2; i++)
		pump(h, 10);
	ck_assert_uint_eq(server_nr_log(srv), 2);
	hang_up(h);
	srv->hold_flush = 0;
	pump_until(h, &h->ended[f]);
	ck_assert(h->ended[f]);
	ck_assert_int_eq(h->error[f], -EIO);
	flush_ends_with(h, 0);
	teardown(h);
	server_gone(srv);
}
END_TEST

/*
 * A FUA write (an O_DSYNC write) reports the loss as a flush does: the
 * kernel's fsync after an O_DSYNC write would.
 */
START_TEST(a_fua_write_after_a_drop_that_lost_writes_fails)
{
	struct server *srv = server_start();
	struct harness *h = setup(srv, 5);
	unsigned int w;

	write_acked(h, 8);
	hang_up(h);
	settle(h);
	w = write_at(h, 16, 0, REQ_FUA);
	pump_until(h, &h->ended[w]);
	ck_assert(h->ended[w]);
	ck_assert_int_eq(h->error[w], -EIO);
	flush_ends_with(h, 0);
	teardown(h);
	server_gone(srv);
}
END_TEST

/*
 * A server back without multi-conn gets one connection, as it would have
 * at the start: requests spread over several would not be consistent.
 */
START_TEST(a_server_back_without_multi_conn_gets_one_connection)
{
	struct server *srv = server_start();
	struct harness *h;
	char desc[512];
	unsigned int r;

	srv->multi_conn = 1;
	h = setup_conns(srv, 5, 2);
	ck_assert_uint_eq(nr_watched(h), 2);
	srv->multi_conn = 0;
	hang_up(h);
	r = read_at(h, 0);
	pump_until(h, &h->ended[r]);
	ck_assert(h->ended[r]);
	ck_assert_int_eq(h->error[r], 0);
	ck_assert_uint_eq(nr_watched(h), 1);
	dev_stack_describe(&h->stack, desc, sizeof(desc));
	ck_assert_msg(strstr(desc, "connections=1"), "device/stack: %s", desc);
	write_acked(h, 8);
	flush_ends_with(h, 0);
	teardown(h);
	server_gone(srv);
}
END_TEST

/*
 * On a multi-queue queue each hardware queue sends on a connection of its
 * own, and a full one holds back its own queue alone: queue 0 with 64
 * reads unanswered on its connection can take no more, and its 65th read
 * waits; queue 1 can, and sends that read on the other connection.
 * (Bounded by the two connections' 128 together, queue 0 sent all 65 on
 * its one.)
 */
START_TEST(a_full_connection_holds_back_its_own_queue_alone)
{
	struct server *srv = server_start();
	struct harness *h;
	unsigned int n = 0;

	srv->multi_conn = 1;
	h = setup_conns(srv, 60, 2);
	h->nr_io_queues = 2;
	srv->mute = 1;
	for (unsigned int i = 0; i < 65; i++)
		read_at(h, i * 16); /* not next to each other: none merge */
	settle(h);
	ck_assert_uint_eq(server_nr_log(srv), 64);
	blk_queue_lock(h->q);
	ck_assert_msg(!dev_can_take(h->stack.top), "queue 0 takes more with its connection full");
	h->io_queue = 1;
	ck_assert_msg(dev_can_take(h->stack.top), "queue 1 takes nothing with its connection idle");
	blk_queue_unlock(h->q);
	blk_run_queue(h->q);
	settle(h);
	ck_assert_uint_eq(server_nr_log(srv), 65);
	ck_assert_int_ge(conn_of(srv, NBD_CMD_READ, 64 * 16 * 512), 0);
	ck_assert_int_ne(conn_of(srv, NBD_CMD_READ, 64 * 16 * 512), conn_of(srv, NBD_CMD_READ, 0));
	h->clock.virtual_ns = START_NS + 60 * S; /* the deadline: every read fails */
	settle(h);
	for (unsigned int i = 0; i < 65; i++)
		n += h->ended[i] && h->error[i] == -EIO;
	ck_assert_uint_eq(n, 65);
	srv->mute = 0;
	teardown(h);
	server_gone(srv);
}
END_TEST

/*
 * The server is gone at exit with a write no flush covered: the flush at
 * exit cannot go, said in one line naming the export, and the close
 * fails (the daemon's exit status).
 */
START_TEST(the_exit_with_the_server_gone_says_the_last_flush_failed)
{
	struct server *srv = server_start();
	struct harness *h = setup(srv, 5);
	char said[1024];

	write_acked(h, 8);
	server_gone(srv);
	hang_up(h);
	settle(h);
	ck_assert_int_eq(teardown_saying(h, said, sizeof(said)), -EIO);
	ck_assert_msg(strstr(said, srv->path) &&
			      strstr(said, "the last flush failed: the server is gone; writes since "
					   "the last flush may be lost\n"),
		      "said: %s", said);
}
END_TEST

/* A flush at exit the server fails: said, with its cause, and the close fails. */
START_TEST(a_failed_flush_at_exit_is_said)
{
	struct server *srv = server_start();
	struct harness *h = setup(srv, 5);
	char said[1024];

	write_acked(h, 8);
	srv->flush_error = EIO;
	ck_assert_int_eq(teardown_saying(h, said, sizeof(said)), -EIO);
	ck_assert_msg(strstr(said, "the last flush failed: ") &&
			      strstr(said, "; writes since the last flush may be lost\n"),
		      "said: %s", said);
	srv->flush_error = 0;
	server_gone(srv);
}
END_TEST

/* A loss no flush has reported yet is the exit's to say, though the flush at exit succeeds. */
START_TEST(a_loss_no_flush_reported_is_said_at_exit)
{
	struct server *srv = server_start();
	struct harness *h = setup(srv, 5);
	char said[1024];

	write_acked(h, 8);
	hang_up(h);
	settle(h);
	ck_assert_int_eq(teardown_saying(h, said, sizeof(said)), -EIO);
	ck_assert_msg(strstr(said, "the last flush failed: "), "said: %s", said);
	server_gone(srv);
}
END_TEST

/* A clean exit, every write flushed, says nothing and succeeds. */
START_TEST(a_clean_exit_says_nothing)
{
	struct server *srv = server_start();
	struct harness *h = setup(srv, 5);
	char said[1024];

	write_acked(h, 8);
	ck_assert_int_eq(teardown_saying(h, said, sizeof(said)), 0);
	ck_assert_str_eq(said, "");
	server_gone(srv);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("nbd");
	TCase *tc = tcase_create("deadlines");

	signal(SIGPIPE, SIG_IGN); /* the server answers on sockets the client shut */

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, a_read_the_server_never_answers_fails_at_its_deadline);
	tcase_add_test(tc, gone_for_the_timeout_new_io_fails_at_once);
	tcase_add_test(tc, a_read_sent_as_its_connection_dies_waits_for_the_next);
	suite_add_tcase(s, tc);
	tc = tcase_create("fua");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, a_fua_write_ends_once_its_flush_is_answered);
	tcase_add_test(tc, a_fua_write_whose_flush_fails_fails_with_eio);
	tcase_add_test(tc, a_fua_write_answered_then_dropped_is_sent_again_with_its_flush);
	tcase_add_test(tc, a_fua_write_whose_flush_finds_the_connection_dead_is_sent_again);
	suite_add_tcase(s, tc);
	tc = tcase_create("lost writes");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, a_write_no_flush_covered_fails_the_next_flush_after_a_drop);
	tcase_add_test(tc, a_drop_that_lost_no_answered_write_fails_no_flush);
	tcase_add_test(tc, a_drop_that_lost_writes_is_counted_and_said_to_the_host);
	tcase_add_test(tc, a_flush_in_flight_at_a_drop_that_lost_writes_fails);
	tcase_add_test(tc, a_fua_write_after_a_drop_that_lost_writes_fails);
	suite_add_tcase(s, tc);
	tc = tcase_create("reconnect");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, a_server_back_without_multi_conn_gets_one_connection);
	tcase_add_test(tc, a_full_connection_holds_back_its_own_queue_alone);
	suite_add_tcase(s, tc);
	tc = tcase_create("exit");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, the_exit_with_the_server_gone_says_the_last_flush_failed);
	tcase_add_test(tc, a_failed_flush_at_exit_is_said);
	tcase_add_test(tc, a_loss_no_flush_reported_is_said_at_exit);
	tcase_add_test(tc, a_clean_exit_says_nothing);
	suite_add_tcase(s, tc);
	return fake_run_suite(s);
}
