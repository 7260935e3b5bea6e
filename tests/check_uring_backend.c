/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_uring_backend.c - backends on the io_uring loop: the null backend does no I/O but keeps a
 * model's time, and backends that are not io_uring-native end on the loop's thread.
 */
#include <check.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "uring_harness.h"

/*
 * The null backend: every request ends without error and the file is never
 * touched: writes and discards leave it as it was, a read leaves its memory
 * as it was, and all of them are counted as done.
 */
START_TEST(test_null_does_no_io)
{
	char *want = mem_alloc(64 * KIB), *buf = mem_alloc(64 * KIB);
	struct disk k;

	disk_init(&k, temp_file(tmp_dir(), DISK_SIZE, false), elevators[_i]);
	mem_fill(want, 64 * KIB, 11);
	ck_assert_int_eq(pwrite(k.fd, want, 64 * KIB, 0), 64 * KIB);
	disk_start_flags(&k, 0, NULL, 0, &dev_null_ops);
	mem_fill(buf, 64 * KIB, 12);
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE, 0, 0, 64 * KIB, buf), 0);
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE, REQ_BARRIER, 8, 4 * KIB, buf), 0);
	ck_assert_int_eq(disk_io(&k, REQ_OP_DISCARD, 0, 16, 8 * KIB, NULL), 0);
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE_ZEROES, 0, 32, 8 * KIB, NULL), 0);
	ck_assert_int_eq(disk_io(&k, REQ_OP_FLUSH, 0, 0, 0, NULL), 0);
	memset(buf, 0xa5, 64 * KIB);
	ck_assert_int_eq(disk_io(&k, REQ_OP_READ, 0, 0, 64 * KIB, buf), 0);
	for (size_t i = 0; i < 64 * KIB; i++)
		ck_assert_uint_eq((unsigned char)buf[i], 0xa5);
	file_has(&k, 0, want, 64 * KIB);
	ck_assert_uint_eq(ios_done(&k, STAT_READ), 1);
	ck_assert_uint_ge(ios_done(&k, STAT_WRITE), 2);
	ck_assert_uint_ge(ios_done(&k, STAT_FLUSH), 2); /* the barrier's preflush, and the flush */
	disk_close(&k);
	free(want), free(buf);
}
END_TEST

/*
 * A backend as libnbd's or librbd's would be: not io_uring-native.  Its
 * requests go to a worker thread, which does them and says so on an
 * eventfd; the loop polls the eventfd (dev_host_ops.watch_fd) and the
 * backend ends what is done there, on the loop's own thread.
 */
struct evfd_backend {
	struct blk_dev *dev;
	int efd;
	pthread_t worker, loop;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct request *todo[64], *done[64];
	unsigned int nr_todo, nr_done;
	bool stop;
	unsigned int ready_calls, ended, ended_off_loop;
};

static struct evfd_backend evb;
static bool evfd_unwatch_in_ready; /* the server hung up: ready stops watching, as a backend would */

static void *evfd_worker(void *arg)
{
	struct evfd_backend *b = arg;
	uint64_t one = 1;

	pthread_mutex_lock(&b->lock);
	for (;;) {
		while (!b->nr_todo && !b->stop)
			pthread_cond_wait(&b->cond, &b->lock);
		if (b->stop)
			break;
		pthread_mutex_unlock(&b->lock);
		usleep(1000); /* the server's time */
		pthread_mutex_lock(&b->lock);
		while (b->nr_todo)
			b->done[b->nr_done++] = b->todo[--b->nr_todo];
		ck_assert_int_eq(write(b->efd, &one, sizeof(one)), (ssize_t)sizeof(one));
	}
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

/* The eventfd fired: end, on the loop's thread, what the worker has done. */
static void evfd_ready(void *arg)
{
	struct evfd_backend *b = arg;
	struct request *done[64];
	unsigned int n;
	uint64_t v;

	b->ready_calls++;
	ck_assert_int_eq(read(b->efd, &v, sizeof(v)), (ssize_t)sizeof(v));
	pthread_mutex_lock(&b->lock);
	n = b->nr_done;
	memcpy(done, b->done, n * sizeof(done[0]));
	b->nr_done = 0;
	pthread_mutex_unlock(&b->lock);
	for (unsigned int i = 0; i < n; i++) {
		struct bio *bio;

		if (!pthread_equal(pthread_self(), b->loop))
			b->ended_off_loop++;
		if (done[i]->cmd_op == REQ_OP_READ)
			rq_for_each_bio(bio, done[i])
				memset(bio->bi_io_vec[0].bv_base, 0x5e, bio->bi_io_vec[0].bv_len);
		b->ended++;
		dev_end(b->dev, done[i], 0, blk_rq_sectors(done[i]));
	}
	if (evfd_unwatch_in_ready && b->ended)
		b->dev->stack->host_ops->unwatch_fd(b->dev->stack->host, b->efd);
}

static int evfd_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		     size_t whylen)
{
	struct dev_stack *s = dev->stack;

	memset(&evb, 0, sizeof(evb));
	evb.dev = dev;
	evb.loop = pthread_self();
	evb.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ck_assert_int_ge(evb.efd, 0);
	pthread_mutex_init(&evb.lock, NULL);
	pthread_cond_init(&evb.cond, NULL);
	ck_assert_int_eq(pthread_create(&evb.worker, NULL, evfd_worker, &evb), 0);
	ck_assert_ptr_nonnull(s->host_ops);
	return s->host_ops->watch_fd(s->host, evb.efd, evfd_ready, &evb);
}

static void evfd_close(struct blk_dev *dev)
{
	struct dev_stack *s = dev->stack;

	s->host_ops->unwatch_fd(s->host, evb.efd);
	pthread_mutex_lock(&evb.lock);
	evb.stop = true;
	pthread_cond_signal(&evb.cond);
	pthread_mutex_unlock(&evb.lock);
	pthread_join(evb.worker, NULL);
	close(evb.efd);
}

static bool evfd_can_take(struct blk_dev *dev)
{
	return evb.nr_todo + evb.nr_done < 32; /* the loop alone adds: a look without the lock */
}

static void evfd_submit(struct blk_dev *dev, struct request *rq)
{
	pthread_mutex_lock(&evb.lock);
	evb.todo[evb.nr_todo++] = rq;
	pthread_cond_signal(&evb.cond);
	pthread_mutex_unlock(&evb.lock);
}

static const struct dev_ops evfd_ops = {
	.api_version = DEV_API_VERSION,
	.name = "evfd",
	.backend = true,
	.open = evfd_open,
	.close = evfd_close,
	.can_take = evfd_can_take,
	.submit = evfd_submit,
};

/* Sixteen reads under the model filter, over the eventfd backend: all end, on the loop's thread. */
START_TEST(test_fd_backend_ends_on_the_loop)
{
	const char *filters[] = { "model:ssd:read_us=100" };
	char *buf = mem_alloc(16 * 4 * KIB), why[256];
	struct tbio tb[16];
	struct disk k;

	disk_init(&k, temp_file(tmp_dir(), DISK_SIZE, false), elevators[_i]);
	disk_start(&k, 0);
	ck_assert_msg(!uring_driver_set_stack(k.d, filters, (unsigned int)_i, &evfd_ops, NULL,
					      DISK_SIZE >> SECTOR_SHIFT, why, sizeof(why)),
		      "%s", why);
	memset(buf, 0, 16 * 4 * KIB);
	for (unsigned int i = 0; i < 16; i++) {
		tbio_setup(&tb[i], &k, REQ_OP_READ, 0, 64 * i, 4 * KIB, buf + 4 * KIB * i);
		disk_submit(&k, &tb[i]);
	}
	wait_ended(&k, 16);
	for (unsigned int i = 0; i < 16; i++) {
		ck_assert_int_eq(tb[i].ended, 1);
		ck_assert_int_eq(tb[i].error, 0);
	}
	for (size_t i = 0; i < 16 * 4 * KIB; i++)
		ck_assert_uint_eq((unsigned char)buf[i], 0x5e);
	ck_assert_uint_ge(evb.ready_calls, 1);
	ck_assert_uint_eq(evb.ended_off_loop, 0);
	disk_close(&k);
	ck_assert_uint_eq(evb.ended, 16); /* no merges: 64 sectors apart */
	free(buf);
}
END_TEST

/* A backend that stops watching its fd from inside ready (a server that hung up). */
START_TEST(test_fd_backend_unwatches_in_ready)
{
	char *buf = mem_alloc(4 * KIB), why[256];
	struct tbio tb;
	struct disk k;

	evfd_unwatch_in_ready = true;
	disk_init(&k, temp_file(tmp_dir(), DISK_SIZE, false), "none");
	disk_start(&k, 0);
	ck_assert_msg(!uring_driver_set_stack(k.d, NULL, 0, &evfd_ops, NULL,
					      DISK_SIZE >> SECTOR_SHIFT, why, sizeof(why)),
		      "%s", why);
	tbio_setup(&tb, &k, REQ_OP_READ, 0, 0, 4 * KIB, buf);
	disk_submit(&k, &tb);
	wait_ended(&k, 1);
	ck_assert_int_eq(tb.ended, 1);
	disk_close(&k);
	evfd_unwatch_in_ready = false;
	free(buf);
}
END_TEST

/*
 * A backend on a socket polled for input, then for output too, as libnbd's
 * is while it has bytes to send: nothing is written to the socket's other
 * end, so only the poll for output, armed anew, ends the request.
 */
static struct {
	struct blk_dev *dev;
	int sv[2];
	struct request *rq;
	unsigned int revents;
} sockb;

static void sock_ready(void *arg, unsigned int revents)
{
	struct request *rq = sockb.rq;
	struct dev_stack *s = sockb.dev->stack;

	sockb.revents |= revents;
	if (!(revents & POLLOUT) || !rq)
		return;
	sockb.rq = NULL;
	s->host_ops->set_fd_events(s->host, sockb.sv[0], POLLIN);
	dev_end(sockb.dev, rq, 0, blk_rq_sectors(rq));
}

static int sock_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		     size_t whylen)
{
	struct dev_stack *s = dev->stack;

	memset(&sockb, 0, sizeof(sockb));
	sockb.dev = dev;
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
				    sockb.sv), 0);
	ck_assert_ptr_nonnull(s->host_ops->watch_fd_events);
	return s->host_ops->watch_fd_events(s->host, sockb.sv[0], POLLIN, sock_ready, NULL);
}

static void sock_close(struct blk_dev *dev)
{
	dev->stack->host_ops->unwatch_fd(dev->stack->host, sockb.sv[0]);
	close(sockb.sv[0]);
	close(sockb.sv[1]);
}

static bool sock_can_take(struct blk_dev *dev)
{
	return !sockb.rq;
}

static void sock_submit(struct blk_dev *dev, struct request *rq)
{
	sockb.rq = rq;
	dev->stack->host_ops->set_fd_events(dev->stack->host, sockb.sv[0], POLLIN | POLLOUT);
}

static const struct dev_ops sock_ops = {
	.api_version = DEV_API_VERSION,
	.name = "sock",
	.backend = true,
	.open = sock_open,
	.close = sock_close,
	.can_take = sock_can_take,
	.submit = sock_submit,
};

/* Three reads, one at a time: each ends from the poll for output its submit asked for. */
START_TEST(test_fd_backend_polls_for_output)
{
	char *buf = mem_alloc(3 * 4 * KIB), why[256];
	struct tbio tb[3];
	struct disk k;

	disk_init(&k, temp_file(tmp_dir(), DISK_SIZE, false), "none");
	disk_start(&k, 0);
	ck_assert_msg(!uring_driver_set_stack(k.d, NULL, 0, &sock_ops, NULL,
					      DISK_SIZE >> SECTOR_SHIFT, why, sizeof(why)),
		      "%s", why);
	for (unsigned int i = 0; i < 3; i++) {
		tbio_setup(&tb[i], &k, REQ_OP_READ, 0, 64 * i, 4 * KIB, buf + 4 * KIB * i);
		disk_submit(&k, &tb[i]);
	}
	wait_ended(&k, 3);
	for (unsigned int i = 0; i < 3; i++)
		ck_assert_int_eq(tb[i].error, 0);
	ck_assert_uint_eq(sockb.revents & POLLIN, 0); /* nothing came to read */
	ck_assert_uint_ne(sockb.revents & POLLOUT, 0);
	disk_close(&k);
	free(buf);
}
END_TEST

/* A model still times a null device: four 30 ms reads one at a time take 120 ms. */
START_TEST(test_null_keeps_the_model_time)
{
	uint64_t ns;
	struct trace_counts tc =
		modelled_reads("noop", "ssd:read_us=30000,depth=1", 4, &dev_null_ops, &ns);

	ck_assert_uint_ge(ns, 120 * NSEC_PER_MSEC);
	ck_assert_uint_ge(tc.min_d2c_ns, 30 * NSEC_PER_MSEC);
	ck_assert_uint_eq(tc.max_in_flight, 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("uring_backend");
	TCase *tc = tcase_create("backend");
	int unavailable = uring_available();

	if (unavailable)
		return unavailable;
	tcase_set_timeout(tc, 2 * WAIT_SECONDS);
	tcase_add_loop_test(tc, test_fd_backend_ends_on_the_loop, 0, 2);
	tcase_add_test(tc, test_fd_backend_unwatches_in_ready);
	tcase_add_test(tc, test_fd_backend_polls_for_output);
	tcase_add_loop_test(tc, test_null_does_no_io, 0, NR_ELEVATORS);
	tcase_add_test(tc, test_null_keeps_the_model_time);
	suite_add_tcase(s, tc);
	return fake_run_suite(s);
}
