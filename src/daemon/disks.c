/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * disks.c - several disks in one daemon (--disk): each image served as
 * IMAGE alone is, by a thread of its own with its own queue, elevator,
 * stack and FUSE mount on MOUNTPOINT/diskN.  They start together (one
 * that fails undoes them all, nothing left behind: no mount, no diskN
 * directory, no image made) and stop together: a signal, or the unmount
 * of any one, ends every one, each flushing its write cache as a lone
 * disk does at exit.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "device.h"
#include "driver_uring.h"
#include "notify.h"

/* Where a termination signal says stop: every disk's stop_fd, written by the handler. */
static volatile sig_atomic_t stop_fds[RQDISK_MAX_DISKS];
static volatile sig_atomic_t nr_stop_fds;

static void stop_every_disk(void)
{
	uint64_t one = 1;

	for (sig_atomic_t i = 0; i < nr_stop_fds; i++)
		if (write(stop_fds[i], &one, sizeof(one)) < 0) { /* full: a stop is on its way */
		}
}

static void stop_signal(int sig)
{
	int saved = errno;

	(void)sig;
	stop_every_disk();
	errno = saved;
}

/* On the disk's loop thread, lock held: the domain stops; serving ends as at a signal. */
static void stop_ready(void *arg)
{
	struct rqdisk_state *s = arg;
	uint64_t n;

	if (read(s->stop_fd, &n, sizeof(n)) != sizeof(n))
		return;
	fuse_session_exit(s->se);
	uring_driver_watch_again(s->driver); /* serve sees it in the next turn */
}

int domain_watch_stop(struct rqdisk_state *s)
{
	const struct dev_stack *st = s->disk.stack;
	int ret;

	blk_queue_lock(s->disk.q);
	ret = st->host_ops->watch_fd(st->host, s->stop_fd, stop_ready, s);
	if (!ret)
		ret = st->host_ops->watch_fd(st->host, s->cut_fd, domain_cut_ready, s);
	s->disk.cut_all = domain_cut_write;
	blk_queue_unlock(s->disk.q);
	if (ret)
		die_msg("disk%u: %s", s->index, strerror(-ret));
	return ret ? -1 : 0;
}

/* TEXT with every %d made the disk's number (malloc'd; NULL: no memory). */
static char *disk_text(const char *text, unsigned int n)
{
	size_t len = strlen(text) + 1;
	const char *p;
	char *out, *o;

	for (p = text; (p = strstr(p, "%d")); p += 2)
		len += 8; /* a number of up to 10 digits replaces 2 characters */
	out = malloc(len);
	if (!out)
		return NULL;
	for (o = out; *text;) {
		if (text[0] == '%' && text[1] == 'd') {
			o += sprintf(o, "%u", n);
			text += 2;
		} else {
			*o++ = *text++;
		}
	}
	*o = '\0';
	return out;
}

/* MOUNTPOINT/diskN, made unless it is a directory already (then not ours to remove). */
static int make_disk_dir(struct rqdisk_state *s, const char *top)
{
	struct stat st;
	char *dir;

	if (asprintf(&dir, "%s/disk%u", top, s->index) < 0) {
		die_msg("out of memory");
		return -1;
	}
	s->dir = dir;
	s->opt.mountpoint = dir;
	if (!mkdir(dir, 0755)) {
		s->made_dir = true;
		return 0;
	}
	if (errno == EEXIST && !lstat(dir, &st) && S_ISDIR(st.st_mode))
		return 0;
	die_msg("%s: %s", dir, errno == EEXIST ? "is there and is not a directory" : strerror(errno));
	return -1;
}

/* Disk i's options: the first's, its own image, and %d made i in its filters and trace. */
static int disk_options(struct rqdisk_state *s, const struct rqdisk_options *first)
{
	s->opt = *first;
	s->opt.nr_disks = 0;
	if (s->index)
		s->opt.image = first->disks[s->index - 1];
	for (unsigned int i = 0; i < first->nr_filters; i++) {
		s->filter_specs[i] = disk_text(first->filters[i], s->index);
		if (!s->filter_specs[i])
			goto nomem;
		s->opt.filters[i] = s->filter_specs[i];
	}
	if (first->trace) {
		s->trace_name = disk_text(first->trace, s->index);
		if (!s->trace_name)
			goto nomem;
		s->opt.trace = s->trace_name;
	}
	return 0;
nomem:
	die_msg("out of memory");
	return -1;
}

/* Two disks on one image would each write it as its own. */
static int check_distinct(const struct rqdisk_domain *dm, unsigned int i)
{
	const char *a = dm->disks[i].opt.image;
	struct stat sa, sb;
	bool here = !stat(a, &sa);

	for (unsigned int j = 0; j < i; j++) {
		const char *b = dm->disks[j].opt.image;

		if (!strcmp(a, b) ||
		    (here && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino)) {
			die_msg("--disk %s: disk%u and disk%u are one image", a, j, i);
			return -1;
		}
	}
	return 0;
}

static int init_disk(struct rqdisk_domain *dm, unsigned int i, const struct rqdisk_options *first,
		     const char *top)
{
	struct rqdisk_state *s = &dm->disks[i];

	s->ready_fd = s->power_fd = s->stop_fd = s->cut_fd = -1;
	s->domain = dm;
	s->index = i;
	if (disk_options(s, first) || check_distinct(dm, i) || make_disk_dir(s, top))
		return -1;
	s->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	s->cut_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->stop_fd < 0 || s->cut_fd < 0) {
		die_msg("eventfd: %s", strerror(errno));
		return -1;
	}
	stop_fds[i] = s->stop_fd;
	nr_stop_fds = (sig_atomic_t)(i + 1);
	return start_paths(s);
}

/* A disk's thread says how its start went and waits for the word: true to serve. */
static bool report_start(struct rqdisk_state *s, bool ok)
{
	struct rqdisk_domain *dm = s->domain;
	bool go;

	pthread_mutex_lock(&dm->lock);
	dm->reported++;
	dm->failed |= !ok;
	pthread_cond_broadcast(&dm->cond);
	while (!dm->decided)
		pthread_cond_wait(&dm->cond, &dm->lock);
	go = dm->go && ok;
	pthread_mutex_unlock(&dm->lock);
	return go;
}

/* The disk serves no more: a cut waits for it no longer. */
static void leave_domain(struct rqdisk_state *s)
{
	struct rqdisk_domain *dm = s->domain;

	pthread_mutex_lock(&dm->lock);
	dm->live--;
	pthread_cond_broadcast(&dm->cond);
	pthread_mutex_unlock(&dm->lock);
}

/* One disk from set-up to teardown, as main runs IMAGE alone; its status in s->status. */
static void *disk_thread(void *arg)
{
	struct rqdisk_state *s = arg;
	int ret = start_disk(s);

	s->started = !ret;
	if (!report_start(s, !ret)) {
		teardown(s, true);
		s->status = -1;
		return NULL;
	}
	ret = serve(s);
	leave_domain(s);
	stop_every_disk(); /* one disk's end (its unmount) is every disk's */
	if (sync_image(s) || s->exit_flush_error)
		ret = -1;
	if (teardown(s, false))
		ret = -1;
	s->status = ret;
	return NULL;
}

/*
 * The termination signals are the main thread's alone: the handler tells
 * every disk's loop through its stop_fd.  The disks' threads take none.
 */
static int set_stop_signals(void)
{
	struct sigaction sa = { .sa_handler = stop_signal, .sa_flags = SA_RESTART };
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &sa, NULL)) {
			die_msg("sigaction: %s", strerror(errno));
			return -1;
		}
	signal(SIGPIPE, SIG_IGN); /* as libfuse's handlers set it for one disk */
	return 0;
}

static int spawn_disks(struct rqdisk_domain *dm)
{
	sigset_t all, old;
	int ret = 0;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (unsigned int i = 0; i < dm->nr && !ret; i++) {
		ret = pthread_create(&dm->disks[i].thread, NULL, disk_thread, &dm->disks[i]);
		if (ret)
			die_msg("disk%u: pthread_create: %s", i, strerror(ret));
		else
			dm->disks[i].thread_started = true;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret ? -1 : 0;
}

/* Every thread started has said how its start went: serve all, or undo all. */
static bool decide(struct rqdisk_domain *dm, unsigned int spawned, bool ok)
{
	pthread_mutex_lock(&dm->lock);
	while (dm->reported < spawned)
		pthread_cond_wait(&dm->cond, &dm->lock);
	dm->go = ok && !dm->failed;
	dm->live = dm->go ? dm->nr : 0;
	dm->decided = true;
	pthread_cond_broadcast(&dm->cond);
	pthread_mutex_unlock(&dm->lock);
	return dm->go;
}

/* After the threads: what main made for them.  The status, 0 or -1. */
static int finish_disks(struct rqdisk_domain *dm)
{
	int ret = 0;

	for (unsigned int i = 0; i < dm->nr; i++) {
		struct rqdisk_state *s = &dm->disks[i];

		if (s->thread_started) {
			pthread_join(s->thread, NULL);
			if (s->status)
				ret = -1;
		} else {
			/* never started: only what start_paths made */
			free(s->mountpoint);
			free(s->image_path);
		}
	}
	nr_stop_fds = 0;
	for (unsigned int i = 0; i < dm->nr; i++) {
		struct rqdisk_state *s = &dm->disks[i];

		if (s->stop_fd >= 0)
			close(s->stop_fd);
		if (s->cut_fd >= 0)
			close(s->cut_fd);
		if (s->made_dir && rmdir(s->dir) && errno != ENOENT)
			die_msg("%s: %s", s->dir, strerror(errno));
		free(s->dir);
		free(s->trace_name);
		for (unsigned int j = 0; j < RQDISK_MAX_FILTERS; j++)
			free(s->filter_specs[j]);
	}
	return ret;
}

/* MOUNTPOINT must be a directory, to hold disk0/, disk1/, ... */
static char *check_top(const char *mountpoint)
{
	struct stat st;
	char *top;

	if (stat(mountpoint, &st)) {
		die_msg("mount point %s: %s", mountpoint, strerror(errno));
		return NULL;
	}
	if (!S_ISDIR(st.st_mode)) {
		die_msg("mount point %s: with --disk it must be a directory, for disk0/, disk1/, ...",
			mountpoint);
		return NULL;
	}
	top = absolute_path(mountpoint);
	if (!top)
		die_msg("mount point %s: %s", mountpoint, strerror(errno));
	return top;
}

int run_disks(struct rqdisk_state *first)
{
	struct rqdisk_domain dm = { .nr = first->opt.nr_disks + 1,
				    .lock = PTHREAD_MUTEX_INITIALIZER,
				    .cond = PTHREAD_COND_INITIALIZER };
	unsigned int spawned = 0;
	char *top = NULL;
	int ret = -1;
	bool go;

	dm.disks = calloc(dm.nr, sizeof(*dm.disks));
	if (!dm.disks) {
		die_msg("out of memory");
		return 1;
	}
	if (check_fuse_device())
		goto out;
	top = check_top(first->opt.mountpoint);
	if (!top)
		goto out;
	for (unsigned int i = 0; i < dm.nr; i++) {
		if (init_disk(&dm, i, &first->opt, top))
			goto out;
	}
	if (set_stop_signals() || (!first->opt.foreground && daemonize_start(first)))
		goto out;
	ret = spawn_disks(&dm);
	for (unsigned int i = 0; i < dm.nr; i++)
		spawned += dm.disks[i].thread_started;
	go = decide(&dm, spawned, !ret);
	if (go) {
		notify_ready();
		daemonize_finish(first, 0);
	}
	ret = finish_disks(&dm);
	if (go)
		notify_stopping();
	else
		ret = -1;
	goto done;
out:
	finish_disks(&dm);
done:
	if (ret)
		daemonize_finish(first, 1); /* nothing left behind: the parent may return */
	free(top);
	free(dm.disks);
	return ret ? 1 : 0;
}
