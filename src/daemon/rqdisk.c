/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rqdisk.c - the daemon: an image as a FUSE file, carried out through the
 * request queue, an elevator and io_uring.  Returns once the mount is
 * ready; any failure before that is reported on the terminal, with nothing
 * left behind (no mount, no half-made image).
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <syslog.h>

#include "backend.h"
#include "blktrace.h"
#include "control.h"
#include "daemon.h"
#include "disk_files.h"
#include "driver_uring.h"
#include "fuse_ring.h"
#include "notify.h"

/*
 * FUSE requests read in one turn of the loop before its completions are
 * reaped.  Read all there is, and a QD32 client's requests move as one
 * convoy: read together, on the disk together, answered together, back
 * together, while the disk idles between.  Half that splits them into two
 * groups that take turns, one on the disk while the other is read.
 * Measured 4k QD32, direct: random writes 55k -> 73k IOPS, reads 78k -> 85k.
 */
#define SERVE_BATCH 16

int check_fuse_device(void)
{
	if (access("/dev/fuse", R_OK | W_OK)) {
		die_msg("/dev/fuse: %s (is the fuse module loaded, and may you use it?)",
			strerror(errno));
		return -1;
	}
	return 0;
}

static int check_mountpoint(struct rqdisk_state *s)
{
	struct stat st;

	if (stat(s->opt.mountpoint, &st)) {
		die_msg("mount point %s: %s", s->opt.mountpoint, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
		die_msg("mount point %s is neither a directory nor a regular file",
			s->opt.mountpoint);
		return -1;
	}
	s->disk.file_mount = S_ISREG(st.st_mode);
	return 0;
}

/*
 * RQDISK_TEST_FUSE_URING, for the tests only: "available" (1) takes the
 * kernel to offer FUSE over io_uring at start, whatever enable_uring
 * says, and "offered" (2) in its INIT too.  What the kernel then does is
 * what a daemon meets when enable_uring is turned off as it starts.
 * Not heeded by a privileged rqdisk, as no test knob is.
 */
static int test_fuse_uring(void)
{
	const char *test = secure_getenv("RQDISK_TEST_FUSE_URING");

	if (!test)
		return 0;
	return !strcmp(test, "offered") ? 2 : !strcmp(test, "available");
}

/*
 * Which way FUSE requests come, decided before anything is mounted:
 * auto takes the ring where the kernel offers it and is /dev/fuse,
 * unsaid, where not; on refuses to start where not.
 */
static int check_fuse_uring(struct rqdisk_state *s)
{
	char why[160];

	if (s->opt.fuse_uring == FUSE_URING_OFF || fuse_ring_available(why, sizeof(why)) ||
	    test_fuse_uring())
		return 0;
	if (s->opt.fuse_uring == FUSE_URING_AUTO) {
		s->opt.fuse_uring = FUSE_URING_OFF;
		return 0;
	}
	die_msg("--fuse-uring: %s", why);
	return -1;
}


static unsigned int driver_flags(const struct rqdisk_options *o)
{
	return (o->fuse_uring != FUSE_URING_OFF ? URING_DRIVER_SQE128 : 0) |
	       (o->foreground ? 0 : URING_DRIVER_SYSLOG) |
	       (o->read_only ? URING_DRIVER_READ_ONLY : 0) | (o->direct ? URING_DRIVER_DIRECT : 0);
}

/* The CPUs online, the default number of hardware queues, as null_blk's submit_queues. */
static unsigned int cpus_online(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		return 1;
	return n > RQDISK_MAX_HW_QUEUES ? RQDISK_MAX_HW_QUEUES : (unsigned int)n;
}

/*
 * The request queue of --queue-mode: the 2.6 one, or a multi-queue one
 * whose tag set the io_uring driver serves.
 */
static struct request_queue *make_queue(struct rqdisk_state *s, char *why, size_t whylen)
{
	struct blk_mq_tag_set *set = &s->tag_set;
	struct request_queue *q;

	if (s->opt.queue_mode == QUEUE_MODE_RQ) {
		q = blk_init_queue(NULL, NULL, NULL);
		if (!q)
			snprintf(why, whylen, "out of memory");
		return q;
	}
	set->ops = &uring_mq_ops;
	set->nr_hw_queues = s->opt.hw_queues ? s->opt.hw_queues : cpus_online();
	set->queue_depth = s->opt.hw_queue_depth ? s->opt.hw_queue_depth : RQDISK_HW_QUEUE_DEPTH;
	return blk_mq_init_queue(set, NULL, why, whylen);
}

static int init_elevator(struct rqdisk_state *s, char *why, size_t whylen)
{
	int ret;

	if (queue_is_mq(s->disk.q)) {
		ret = blk_mq_elevator_init(s->disk.q, s->opt.elevator, why, whylen);
		if (ret)
			die_msg("elevator %s: %s", s->opt.elevator, why);
		return ret;
	}
	ret = elevator_init(s->disk.q, s->opt.elevator);
	if (ret)
		die_msg("elevator %s: %s", s->opt.elevator, strerror(-ret));
	return ret;
}

/* Ring entries: one per request the queue lets out at once (mq: every driver tag). */
static unsigned int ring_entries(const struct rqdisk_state *s)
{
	const struct request_queue *q = s->disk.q;
	unsigned int tags;

	if (!queue_is_mq(q))
		return 0;
	tags = s->tag_set.nr_hw_queues * s->tag_set.queue_depth;
	return tags > q->limits.nr_requests ? tags : q->limits.nr_requests;
}

static int setup_queue(struct rqdisk_state *s)
{
	char why[PATH_MAX + 256]; /* a message may name the image twice */
	struct request_queue *q = make_queue(s, why, sizeof(why));
	const struct dev_ops *backend;

	if (!q) {
		die_msg("%s", why);
		return -1;
	}
	s->disk.q = q;
	s->disk.lbs = s->opt.limits.logical_block_size;
	s->disk.read_only = s->opt.read_only;
	s->disk.null_device = s->opt.null;
	s->disk.uid = getuid();
	s->disk.gid = getgid();
	range_lock_init(&s->disk.writes);
	ioprio_cache_init(&s->disk.ioprio, NULL);
	s->disk.max_nr_requests = s->opt.limits.nr_requests;
	remote_request_size(s);
	if (blk_queue_set_limits(q, &s->opt.limits, why, sizeof(why))) {
		die_msg("%s", why);
		return -1;
	}
	if (init_elevator(s, why, sizeof(why)))
		return -1;
	s->driver = uring_driver_new(q, ring_entries(s), driver_flags(&s->opt), NULL, NULL, why, sizeof(why));
	if (!s->driver) {
		die_msg("%s", why);
		return -1;
	}
	/* the backend opens the image from its args, and finds the disk's size */
	if (backend_of(s, &backend))
		return -1;
	uring_driver_set_disk(s->driver, s->index);
	if (uring_driver_set_stack(s->driver, s->opt.filters, s->opt.nr_filters, backend,
				   s->image_path, 0, why, sizeof(why))) {
		die_msg("%s", why);
		return -1;
	}
	s->disk.stack = uring_driver_stack(s->driver);
	s->disk.lbs = q->limits.logical_block_size; /* the device may need larger blocks */
	take_export(s);
	return 0;
}

/* --trace: from before the first I/O; trace/name shows the NAME. */
static int setup_trace(struct rqdisk_state *s)
{
	char why[PATH_MAX + 64];
	char *name;
	int ret;

	if (!s->opt.trace)
		return 0;
	name = absolute_path(s->opt.trace);
	if (!name || blk_trace_set_name(s->disk.q, name)) {
		die_msg("trace %s: %s", s->opt.trace, strerror(errno));
		free(name);
		return -1;
	}
	ret = blk_trace_setup(s->disk.q, name, why, sizeof(why));
	free(name);
	if (ret)
		die_msg("%s", why);
	return ret ? -1 : 0;
}

/* The trace files, if any, whole on disk. */
static int finish_trace(struct rqdisk_state *s)
{
	int ret = blk_trace_remove(s->disk.q);

	if (ret)
		die_msg("trace %s: %s", s->disk.q->blk_trace_name, strerror(-ret));
	return ret ? -1 : 0;
}

/* The ring, to take the kernel's offer when its INIT comes; auto's is quiet if turned down. */
static int setup_fuse_ring(struct rqdisk_state *s)
{
	unsigned int flags = s->opt.fuse_uring == FUSE_URING_AUTO ? FUSE_RING_QUIET : 0;

	if (test_fuse_uring() == 2)
		flags |= FUSE_RING_ASSUME_OFFER;
	s->ring = fuse_ring_new(s->se, fuse_session_fd(s->se), &s->disk, s->driver, flags);
	if (!s->ring) {
		die_msg("--fuse-uring: out of memory");
		return -1;
	}
	return 0;
}

static int setup_fuse(struct rqdisk_state *s)
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	char opts[512];

	/* the kernel checks every access against the modes before it reaches us */
	snprintf(opts, sizeof(opts),
		 "fsname=rqdisk,subtype=rqdisk,default_permissions,max_read=%u%s%s", FE_MAX_IO,
		 s->opt.allow_other ? ",allow_other" : "", s->opt.read_only ? ",ro" : "");
	if (fuse_opt_add_arg(&args, "rqdisk") || fuse_opt_add_arg(&args, "-o") ||
	    fuse_opt_add_arg(&args, opts)) {
		die_msg("out of memory");
		return -1;
	}
	s->se = fuse_session_new(&args, &rqdisk_fuse_ops, sizeof(rqdisk_fuse_ops), &s->disk);
	fuse_opt_free_args(&args);
	if (!s->se) {
		die_msg("cannot set up the FUSE session");
		return -1;
	}
	if (fuse_session_mount(s->se, s->opt.mountpoint)) {
		die_msg("cannot mount on %s", s->opt.mountpoint);
		return -1;
	}
	s->mounted = true;
	if (s->opt.fuse_uring != FUSE_URING_OFF && setup_fuse_ring(s))
		return -1;
	if (s->domain) /* the disks' signals are the domain's (disks.c) */
		return domain_watch_stop(s);
	if (fuse_set_signal_handlers(s->se))
		return -1;
	s->signals = true;
	return 0;
}


/*
 * Undo start.  -1 where the stack's close found its data may not be
 * durable (a backend's flush at exit failed; it said why), else 0.
 */
int teardown(struct rqdisk_state *s, bool failed)
{
	int ret = 0;

	/*
	 * The ring goes before the mount: closing it hands back the FUSE
	 * commands it holds, which the kernel waits for when it unmounts.
	 */
	if (s->driver && failed)
		uring_driver_abort(s->driver); /* a log the stack made goes with the image */
	if (s->driver && uring_driver_free(s->driver))
		ret = -1;
	if (s->se) {
		/* libfuse complains of handlers it never set (a refused mount) */
		if (s->signals)
			fuse_remove_signal_handlers(s->se);
		if (s->mounted)
			fuse_session_unmount(s->se);
		fuse_session_destroy(s->se);
	}
	ctl_cleanup(&s->disk);
	fe_files_cleanup(&s->disk);
	fuse_ring_free(s->ring);
	free(s->mountpoint);
	free(s->image_path);
	if (s->disk.q && queue_is_mq(s->disk.q))
		blk_mq_free_queue(s->disk.q);
	else
		blk_cleanup_queue(s->disk.q);
	fe_buffers_free(&s->disk);
	ioprio_cache_exit(&s->disk.ioprio); /* after the queue: its requests pointed at the cgroups */
	teardown_power(s);
	if (failed && s->created)
		unlink(s->opt.image);
	return ret;
}

/* One FUSE request read and answered: 1, or 0 for none waiting, or -errno. */
static int serve_one(struct rqdisk_state *s)
{
	size_t size;
	char *mem = fe_input(&s->disk, &size);
	ssize_t n;

	if (!mem)
		return -ENOMEM;
	n = read(fuse_session_fd(s->se), mem, size);
	if (n < 0 && (errno == EINTR || errno == ENOENT)) /* ENOENT: the request was interrupted */
		return 1;
	if (n < 0 && errno == EAGAIN)
		return 0;
	if (n <= 0) /* ENODEV, or end of file: unmounted */
		return n < 0 && errno != ENODEV ? -errno : -ENODEV;
	if (s->ring)
		fuse_ring_saw_request(s->ring, mem, (size_t)n);
	fuse_session_process_buf(s->se, &(struct fuse_buf){ .size = (size_t)n, .mem = mem });
	return 1;
}


/*
 * Read and answer what the FUSE device has, up to a batch.  The device is
 * non-blocking: EAGAIN is the end of the input, not an error.  While the
 * locked arena cannot hold what one more request may need and requests
 * are in flight, nothing more is read until one ends (BLOCKED): the
 * kernel keeps the rest, and no buffer comes from malloc.
 */
static enum uring_serve serve_fuse(void *arg)
{
	struct rqdisk_state *s = arg;

	if (s->ring) {
		fuse_ring_serve(s->ring);
		if (!fuse_session_exited(s->se) && !uring_driver_watch_input(s->driver) &&
		    !s->blocked)
			return URING_SERVE_DRAINED;
	}
	if (s->disk.bufs.fallbacks && !s->said_fallback) {
		fprintf(stderr, "rqdisk: warning: the %zu MiB of locked I/O buffers ran short; "
				"more come from malloc\n", s->disk.bufs.size >> 20);
		s->said_fallback = true;
	}
	s->blocked = false;
	for (int i = 0; i < SERVE_BATCH; i++) {
		int n;

		if (!fuse_session_exited(s->se) && !fe_input_ready(&s->disk) &&
		    !blk_queue_idle_unlocked(s->disk.q)) {
			s->blocked = true;
			return URING_SERVE_BLOCKED;
		}
		n = fuse_session_exited(s->se) ? -ENODEV : serve_one(s);

		if (!n)
			return URING_SERVE_DRAINED;
		if (n < 0) {
			if (n != -ENODEV) {
				die_msg("FUSE device: %s", strerror(-n));
				s->serve_error = n;
			}
			fuse_session_exit(s->se);
			if (s->ring) /* mq: no hardware queue's thread takes more */
				fuse_ring_stop(s->ring);
			flush_at_exit(s);
			return URING_SERVE_DONE;
		}
	}
	return URING_SERVE_MORE;
}

/* mq: hardware queue n's thread serves the FUSE requests of its CPUs, on its ring. */
static void serve_fuse_queue(void *arg, unsigned int n)
{
	struct rqdisk_state *s = arg;

	if (s->ring)
		fuse_ring_serve_queue(s->ring, n);
}

/*
 * One thread serves the mount: it reads FUSE requests, submits their I/O
 * and reaps completions in one loop (on a multi-queue queue with FUSE
 * over io_uring, each hardware queue's thread does for its CPUs'
 * requests).  The termination signals are let in only while the loop's
 * thread sleeps, so a signal always ends a wait.
 */
int serve(struct rqdisk_state *s)
{
	int fd = fuse_session_fd(s->se);
	sigset_t term, waitmask;
	struct uring_watch w = { fd, serve_fuse, s, &waitmask, fuse_ring_complete,
				 s->opt.idle_poll_us, serve_fuse_queue, s->opt.poll_us };

	sigemptyset(&term);
	sigaddset(&term, SIGINT);
	sigaddset(&term, SIGTERM);
	sigaddset(&term, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &term, &waitmask);
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)) {
		die_msg("FUSE device: %s", strerror(errno));
		return -1;
	}
	uring_driver_run(s->driver, &w);
	fe_input_free(&s->disk);
	return s->serve_error < 0 ? -1 : 0;
}

/*
 * The loop has ended what was queued: close the trace.  The stack's close
 * (teardown) makes the image durable, and fails the exit if it cannot.
 */
int sync_image(struct rqdisk_state *s)
{
	assert(blk_queue_idle(s->disk.q)); /* the loop returns only once the queue is */
	return finish_trace(s);
}

/* What is checked and chosen for a disk before the fork: its mount point, its backend. */
int start_paths(struct rqdisk_state *s)
{
	if (check_mountpoint(s) || check_fuse_uring(s))
		return -1;
	s->mountpoint = absolute_path(s->opt.mountpoint);
	if (!s->mountpoint) {
		die_msg("mount point %s: %s", s->opt.mountpoint, strerror(errno));
		return -1;
	}
	s->opt.mountpoint = s->mountpoint;
	return choose_backend(s);
}

/*
 * A disk set up and mounted, on the thread that will serve it: its ring
 * takes submissions from one thread, and PR_SET_IO_FLUSHER and the
 * capabilities are the thread's.
 */
int start_disk(struct rqdisk_state *s)
{
	if (open_image(s) || setup_queue(s) || setup_power(s) || raise_setup_privilege() ||
	    setup_memory(s) || setup_trace(s) || setup_fuse(s))
		return -1;
	lock_memory(s);
	set_io_flusher(s->index > 0);
	return drop_setup_privilege();
}

static int start(struct rqdisk_state *s)
{
	if (check_fuse_device() || start_paths(s))
		return -1;
	if (!s->opt.foreground && daemonize_start(s))
		return -1;
	return start_disk(s);
}

int main(int argc, char **argv)
{
	struct rqdisk_state s = { .ready_fd = -1, .power_fd = -1 };
	int ret;

	if (drop_privilege())
		return 1;
	/* what must be seen also goes to syslog: a detached daemon's stderr goes nowhere */
	openlog("rqdisk", LOG_PID, LOG_DAEMON);
	switch (rqdisk_parse_options(argc, argv, &s.opt)) {
	case PARSE_EXIT_OK:
		return 0;
	case PARSE_ERROR:
		return 2;
	default:
		break;
	}
	if (s.opt.nr_disks)
		return run_disks(&s);
	if (start(&s)) {
		teardown(&s, true); /* before the parent returns: nothing left behind */
		daemonize_finish(&s, 1);
		return 1;
	}
	notify_ready(); /* a unit of Type=notify starts what waits for the mount */
	daemonize_finish(&s, 0);
	ret = serve(&s);
	notify_stopping();
	if (sync_image(&s) || s.exit_flush_error)
		ret = -1;
	if (teardown(&s, false))
		ret = -1;
	return ret < 0 ? 1 : 0;
}
