/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * power.c - the write cache's power, from outside and at exit: SIGPWR cuts
 * it as "echo all > power/cut" does, and once the mount is gone the cache
 * is flushed to the image, as a system flushes a disk's cache at shutdown.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "daemon.h"

/* Where the SIGPWR handler says it came: the loop reads it on its thread. */
static volatile sig_atomic_t power_signal_fd = -1;

/* The layer that shows its files as power/ (write-cache), or NULL. */
struct blk_dev *power_layer(const struct dev_stack *st)
{
	for (unsigned int i = 0; i < st->nr_layers; i++) {
		const char *dir = st->layers[i].ops->ctl_dir;

		if (dir && !strcmp(dir, "power"))
			return (struct blk_dev *)&st->layers[i];
	}
	return NULL;
}

static void power_signal(int sig)
{
	uint64_t one = 1;
	int saved = errno;

	(void)sig;
	if (write(power_signal_fd, &one, sizeof(one)) < 0) { /* full: a cut is on its way */
	}
	errno = saved;
}

/* On the loop's thread, lock held: SIGPWR is "all" written to power/cut. */
static void power_ready(void *arg)
{
	struct rqdisk_state *s = arg;
	struct blk_dev *dev = power_layer(s->disk.stack);
	const struct dev_attr *a = power_attr(dev, "cut");
	uint64_t n;

	if (read(s->power_fd, &n, sizeof(n)) != sizeof(n))
		return;
	if (!a || !a->store) {
		fprintf(stderr, "rqdisk: SIGPWR: no write-cache filter: no power to cut\n");
		return;
	}
	fprintf(stderr, "rqdisk: SIGPWR: the power is cut\n");
	if (s->domain)
		domain_cut(s, "all");
	else
		a->store(dev, "all");
}

/*
 * SIGPWR cuts the power as "echo all > power/cut" does (on every disk of
 * the daemon's, as that does: power_domain.c): the handler only
 * writes to an eventfd, which the loop watches and reads on its thread,
 * with the queue lock held.
 */
int setup_power(struct rqdisk_state *s)
{
	const struct dev_stack *st = s->disk.stack;
	struct sigaction sa = { .sa_handler = power_signal, .sa_flags = SA_RESTART };
	int ret;

	if (s->index) /* several disks: SIGPWR is disk0's, and its cut every disk's */
		return 0;
	s->power_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->power_fd < 0) {
		die_msg("eventfd: %s", strerror(errno));
		return -1;
	}
	power_signal_fd = s->power_fd;
	blk_queue_lock(s->disk.q);
	ret = st->host_ops->watch_fd(st->host, s->power_fd, power_ready, s);
	blk_queue_unlock(s->disk.q);
	if (ret) {
		die_msg("SIGPWR: %s", strerror(-ret));
		return -1;
	}
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPWR, &sa, NULL)) {
		die_msg("SIGPWR: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Whether the write cache's power is on: what power/state shows. */
static bool power_is_on(struct blk_dev *dev)
{
	const struct dev_attr *a = dev->ops->attrs;
	char buf[16] = "";

	while (a && a->name && strcmp(a->name, "state"))
		a++;
	if (a && a->name && a->show)
		a->show(dev, buf, sizeof(buf));
	return !strcmp(buf, "on\n");
}

/*
 * With the power on, a failed flush is cached data that never reached the
 * image (a writeback failed): ending failed.  With it off, it is the cut's.
 */
static void exit_flush_done(struct bio *bio, int error)
{
	struct rqdisk_state *s = bio->bi_private;

	if (!error || !power_is_on(power_layer(s->disk.stack)))
		return;
	die_msg("the write cache's flush at exit: %s", strerror(-error));
	s->exit_flush_error = error;
}

/*
 * The mount is gone: a write cache's data goes to the image, as a system
 * flushes a disk's cache when it shuts down.  The loop ends only once the
 * queue is idle, so it waits for the flush, and for the writebacks the
 * flush waits for.
 */
void flush_at_exit(struct rqdisk_state *s)
{
	if (s->exit_flushed || s->opt.read_only || !power_layer(s->disk.stack))
		return;
	s->exit_flushed = true;
	bio_init(&s->exit_flush, REQ_OP_FLUSH, 0, 0, NULL, 0);
	s->exit_flush.bi_flags = REQ_SYNC;
	s->exit_flush.bi_end_io = exit_flush_done;
	s->exit_flush.bi_private = s;
	submit_bio(s->disk.q, &s->exit_flush);
}

/* No handler writes to the fd's number once it is closed. */
void teardown_power(struct rqdisk_state *s)
{
	if (s->power_fd < 0)
		return;
	signal(SIGPWR, SIG_IGN);
	power_signal_fd = -1;
	close(s->power_fd);
	s->power_fd = -1;
}
