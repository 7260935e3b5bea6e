/*
 * check_nbd.c - the nbd backend's deadlines on a virtual clock: a server
 * of the test's own (a thread speaking just enough NBD on a Unix socket)
 * that stops answering fails a request with EIO at its deadline, not
 * before; a request while the server is gone waits, and once it has been
 * gone for the timeout a new one fails at once.
 */
#include <arpa/inet.h>
#include <check.h>
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "backend_nbd.h"
#include "device.h"
#include "fake_driver.h"

#define S ((uint64_t)1000000000)
#define START_NS (1000 * S)
#define EXPORT_SIZE (1u << 20)
#define MAX_WATCHES 8

/* The server: every connection a thread; mute, it reads requests and answers none. */
struct server {
	int listen_fd;
	char path[108];
	volatile int mute;
	char data[EXPORT_SIZE];
};

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

/* Fixed newstyle: every option but GO is unsupported; GO says the export's size. */
static int handshake(int fd)
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
			} info = { 0, htobe64(EXPORT_SIZE), htons(1 | 4) }; /* HAS_FLAGS, SEND_FLUSH */

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
	if (handshake(ca.fd))
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
		if (type == 1 && xread(ca.fd, ca.srv->data + off, len))
			break;
		if (ca.srv->mute)
			continue;
		if (xwrite(ca.fd, &rep, sizeof(rep)) ||
		    (type == 0 && xwrite(ca.fd, ca.srv->data + off, len)))
			break;
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
	struct watch w[MAX_WATCHES];
	struct bio bio[8];
	struct bio_vec vec[8];
	int error[8];
	bool ended[8];
	unsigned int nr_bios;
	char *buf; /* a page */
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

static const struct dev_host_ops host_ops = {
	.watch_fd = h_watch,
	.unwatch_fd = h_unwatch,
	.watch_fd_events = h_watch_events,
	.set_fd_events = h_set_events,
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
}

static struct harness *setup(struct server *srv, unsigned int timeout_s)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct dev_limits lim = { .logical_block_size = 512 };
	char args[256], why[256] = "";

	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(posix_memalign((void **)&h->buf, 4096, 4096), 0);
	blk_virtual_clock_init(&h->clock, START_NS);
	h->q = blk_init_queue(request_fn, NULL, &h->clock);
	h->q->queuedata = h;
	h->stack.host = h;
	h->stack.host_ops = &host_ops;
	snprintf(args, sizeof(args), "nbd+unix:///?socket=%s timeout=%u,connections=1", srv->path,
		 timeout_s);
	ck_assert_msg(dev_stack_open(&h->stack, h->q, NULL, 0, &dev_nbd_ops, args, &lim, why,
				     sizeof(why)) == 0,
		      "%s", why);
	blk_queue_set_pdu_size(h->q, dev_stack_pdu_size(&h->stack));
	return h;
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
	blk_queue_lock(h->q);
	dev_stack_run_timers(&h->stack, h->clock.virtual_ns);
	blk_queue_unlock(h->q);
	blk_run_queue(h->q);
}

static unsigned int read_at(struct harness *h, sector_t sector)
{
	unsigned int i = h->nr_bios++;

	h->vec[i] = (struct bio_vec){ h->buf, 4096 };
	bio_init(&h->bio[i], REQ_OP_READ, sector, 4096, &h->vec[i], 1);
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

static void teardown(struct harness *h)
{
	dev_stack_close(&h->stack);
	blk_cleanup_queue(h->q);
	free(h->buf);
	free(h);
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
	/* the connection dies when the server's threads see it close: here, by shutting it */
	for (int i = 0; i < MAX_WATCHES; i++) {
		if (h->w[i].used)
			shutdown(h->w[i].fd, SHUT_RDWR);
	}
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

int main(void)
{
	Suite *s = suite_create("nbd");
	TCase *tc = tcase_create("deadlines");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, a_read_the_server_never_answers_fails_at_its_deadline);
	tcase_add_test(tc, gone_for_the_timeout_new_io_fails_at_once);
	suite_add_tcase(s, tc);
	return fake_run_suite(s);
}
