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
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "backend_nbd.h"
#include "backend_rbd.h"
#include "blktrace.h"
#include "control.h"
#include "driver_uring.h"
#include "frontend.h"
#include "fuse_ring.h"
#include "notify.h"
#include "options.h"

#ifndef PR_SET_IO_FLUSHER
#define PR_SET_IO_FLUSHER 57
#endif

struct rqdisk_state {
	struct rqdisk_options opt;
	const struct backend_type *backend; /* what serves the image, from the registry */
	struct rqdisk disk;
	int fd;
	bool created; /* the image is ours to remove on failure */
	char *image_path; /* absolute */
	struct uring_driver *driver;
	struct fuse_session *se;
	struct fuse_ring *ring; /* --fuse-uring, or NULL */
	char *mountpoint; /* opt.mountpoint from /: the daemon unmounts it after chdir("/") */
	bool mounted;
	bool said_fallback; /* the arena ran short once: said so */
	bool blocked; /* serve waits for requests to end before reading more */
	int ready_fd; /* the waiting parent's pipe, or -1 */
	int serve_error; /* why reading the FUSE device stopped, or 0 */
	int power_fd;    /* SIGPWR's eventfd, watched by the loop, or -1 */
	struct bio exit_flush; /* the write cache's, before the loop ends */
	bool exit_flushed;
	int exit_flush_error; /* the cache's data did not all reach the image */
};

/* Where the SIGPWR handler says it came: the loop reads it on its thread. */
static volatile sig_atomic_t power_signal_fd = -1;

/*
 * FUSE requests read in one turn of the loop before its completions are
 * reaped.  Read all there is, and a QD32 client's requests move as one
 * convoy: read together, on the disk together, answered together, back
 * together, while the disk idles between.  Half that splits them into two
 * groups that take turns, one on the disk while the other is read.
 * Measured 4k QD32, direct: random writes 55k -> 73k IOPS, reads 78k -> 85k.
 */
#define SERVE_BATCH 16

static void __attribute__((format(printf, 1, 2))) die_msg(const char *fmt, ...)
{
	va_list ap;

	fputs("rqdisk: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int check_fuse_device(void)
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
 */
static int test_fuse_uring(void)
{
	const char *test = getenv("RQDISK_TEST_FUSE_URING");

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

/* Make the image: exclusively, so an existing file is never touched. */
static int create_image(struct rqdisk_state *s)
{
	int fd = open(s->opt.image, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	if (fd < 0) {
		die_msg("%s: cannot create: %s", s->opt.image, strerror(errno));
		return -1;
	}
	s->created = true;
	if (ftruncate(fd, (off_t)s->opt.create_size)) {
		die_msg("%s: cannot make it %llu bytes: %s", s->opt.image,
			(unsigned long long)s->opt.create_size, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int check_image_size(struct rqdisk_state *s, const struct stat *st)
{
	unsigned int lbs = s->opt.limits.logical_block_size;

	if (!S_ISREG(st->st_mode)) {
		die_msg("image %s is not a regular file", s->opt.image);
		return -1;
	}
	if (!st->st_size || st->st_size % lbs) {
		die_msg("image %s: size %lld is not a non-zero multiple of the logical block size %u",
			s->opt.image, (long long)st->st_size, lbs);
		return -1;
	}
	s->disk.size = (uint64_t)st->st_size;
	return 0;
}

/*
 * O_DIRECT on the image takes I/O only at the offsets and from the memory
 * the file system there allows (statx's dio alignment, Linux 6.1).  Offsets
 * are the queue's logical blocks: a coarser need is refused, as a 512-byte
 * disk cannot sit on a 4096-byte device.  Memory is the queue's dma
 * alignment: raised to what the file needs, as a driver declares it, so
 * that the core bounces anything less aligned.
 */
static int check_direct_alignment(struct rqdisk_state *s)
{
	struct queue_limits *lim = &s->opt.limits;
	struct statx stx;

	if (!s->opt.direct || statx(s->fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) ||
	    !(stx.stx_mask & STATX_DIOALIGN))
		return 0; /* not told: the first I/O says, with EINVAL */
	if (!stx.stx_dio_offset_align) {
		die_msg("image %s: --direct: the file system there takes no O_DIRECT I/O",
			s->opt.image);
		return -1;
	}
	if (stx.stx_dio_offset_align > lim->logical_block_size) {
		die_msg("image %s: --direct: O_DIRECT there needs I/O in blocks of %u bytes, "
			"above the logical block size %u (try --logical-block-size %u)",
			s->opt.image, stx.stx_dio_offset_align, lim->logical_block_size,
			stx.stx_dio_offset_align);
		return -1;
	}
	if (stx.stx_dio_mem_align > BLK_PAGE_SIZE) {
		die_msg("image %s: --direct: O_DIRECT there needs memory aligned to %u bytes, "
			"above a page",
			s->opt.image, stx.stx_dio_mem_align);
		return -1;
	}
	if (stx.stx_dio_mem_align > lim->dma_alignment + 1)
		lim->dma_alignment = stx.stx_dio_mem_align - 1;
	return 0;
}

/* Whether the registry gave the image to the backend of that scheme. */
static bool backend_is(const struct rqdisk_state *s, const char *scheme)
{
	return !strcmp(s->backend->scheme, scheme);
}

/* The URI and the NBD options, as the nbd backend opens them (NULL: no memory). */
static char *nbd_backend_args(const struct rqdisk_options *o)
{
	char *args = NULL;

	if (asprintf(&args, "%s timeout=%u,connections=%u", o->image,
		     o->nbd_timeout ? o->nbd_timeout : NBD_DEFAULT_TIMEOUT,
		     o->connections ? o->connections : 1) < 0)
		return NULL;
	return args;
}

/*
 * An image on a server (an NBD export, an RBD image), not a file here:
 * its size and mode come from the backend.
 */
static bool image_is_remote(const struct rqdisk_state *s)
{
	return s->backend->remote;
}

/*
 * Over a network every request is a round trip: unless the user chose,
 * a remote image's requests carry up to 1 MiB (the most one FUSE request
 * brings) in one segment, as Linux's nbd driver takes requests of up to
 * 1280 KiB, where a local file keeps 2.6's 255 sectors.  The server's own
 * maximum still bounds them (the stack tightens the queue's limits).
 */
#define REMOTE_MAX_SECTORS 2048

static void remote_request_size(struct rqdisk_state *s)
{
	struct queue_limits *lim = &s->opt.limits;

	if (!image_is_remote(s) || s->opt.request_size_set)
		return;
	lim->max_sectors = lim->max_hw_sectors = REMOTE_MAX_SECTORS;
	lim->max_segment_size = REMOTE_MAX_SECTORS << SECTOR_SHIFT;
}

static int open_image(struct rqdisk_state *s)
{
	struct stat st;
	/* --null never writes the image: it only gives the disk its size */
	int flags = (s->opt.read_only || s->opt.null ? O_RDONLY : O_RDWR) | O_CLOEXEC;

	if (image_is_remote(s)) {
		clock_gettime(CLOCK_REALTIME, &s->disk.mtime);
		return 0;
	}
	if (stat(s->opt.image, &st)) {
		if (errno != ENOENT || !s->opt.create_size) {
			die_msg("image %s: %s", s->opt.image, strerror(errno));
			return -1;
		}
		if (create_image(s) || stat(s->opt.image, &st))
			return -1;
	}
	if (check_image_size(s, &st))
		return -1;
	s->fd = open(s->opt.image, flags | (s->opt.direct ? O_DIRECT : 0));
	if (s->fd < 0) {
		die_msg("image %s: %s%s", s->opt.image,
			s->opt.direct && errno == EINVAL ? "O_DIRECT is not supported there: " : "",
			strerror(errno));
		return -1;
	}
	s->disk.mtime = st.st_mtim;
	return check_direct_alignment(s);
}

static unsigned int driver_flags(const struct rqdisk_options *o)
{
	return o->fuse_uring != FUSE_URING_OFF ? URING_DRIVER_SQE128 : 0;
}

/* The image's backend's ops: built in, or (nbd, rbd) loaded from its module only now. */
static int backend_of(const struct rqdisk_state *s, const struct dev_ops **ops)
{
	char why[PATH_MAX + 256];

	*ops = backend_ops(s->backend, why, sizeof(why));
	if (!*ops)
		die_msg("IMAGE %s: %s", s->opt.image, why);
	return *ops ? 0 : -1;
}

/* The export's size and whether it takes writes, as the backend found them. */
static void take_export(struct rqdisk_state *s)
{
	const struct dev_limits *lim = &s->disk.stack->limits;

	s->disk.size = (uint64_t)lim->capacity << SECTOR_SHIFT;
	if (lim->read_only && !s->opt.read_only) {
		fprintf(stderr, "rqdisk: %s: the export is read-only: so is the disk\n",
			s->opt.image);
		s->opt.read_only = s->disk.read_only = true;
	}
}

static int setup_queue(struct rqdisk_state *s)
{
	struct request_queue *q = blk_init_queue(NULL, NULL, NULL);
	const struct dev_ops *backend;
	const struct blk_dev *model;
	char why[160];
	int ret;

	if (!q) {
		die_msg("out of memory");
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
	ret = elevator_init(q, s->opt.elevator);
	if (ret) {
		die_msg("elevator %s: %s", s->opt.elevator, strerror(-ret));
		return -1;
	}
	/* a local image's backend (file, null) opens on the fd; a remote one, below, with its args */
	s->driver = uring_driver_new(q, s->fd, 0, driver_flags(&s->opt),
				     image_is_remote(s) ? NULL : s->backend->ops, why, sizeof(why));
	if (!s->driver) {
		die_msg("%s", why);
		return -1;
	}
	if (backend_of(s, &backend))
		return -1;
	if (uring_driver_set_stack(s->driver, s->opt.filters, s->opt.nr_filters, backend,
				   s->image_path, s->disk.size >> SECTOR_SHIFT, why, sizeof(why))) {
		die_msg("%s", why);
		return -1;
	}
	s->disk.stack = uring_driver_stack(s->driver);
	s->disk.lbs = q->limits.logical_block_size; /* the device may need larger blocks */
	if (image_is_remote(s))
		take_export(s);
	model = dev_stack_find(s->disk.stack, "model");
	s->disk.model = model ? dev_model_of(model) : NULL;
	return 0;
}

/* The layer that shows its files as power/ (write-cache), or NULL. */
static struct blk_dev *power_layer(const struct dev_stack *st)
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
	const struct dev_attr *a = dev ? dev->ops->attrs : NULL;
	uint64_t n;

	if (read(s->power_fd, &n, sizeof(n)) != sizeof(n))
		return;
	while (a && a->name && strcmp(a->name, "cut"))
		a++;
	if (!a || !a->name || !a->store) {
		fprintf(stderr, "rqdisk: SIGPWR: no write-cache filter: no power to cut\n");
		return;
	}
	fprintf(stderr, "rqdisk: SIGPWR: the power is cut\n");
	a->store(dev, "all");
}

/*
 * SIGPWR cuts the power as "echo all > power/cut" does: the handler only
 * writes to an eventfd, which the loop watches and reads on its thread,
 * with the queue lock held.
 */
static int setup_power(struct rqdisk_state *s)
{
	const struct dev_stack *st = s->disk.stack;
	struct sigaction sa = { .sa_handler = power_signal, .sa_flags = SA_RESTART };
	int ret;

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

/*
 * The I/O buffers, after the fork: a child inherits no memory locks, and
 * its first write to each page would copy it.  RQDISK_TEST_BUFPOOL=BYTES,
 * for the tests only, makes the arena that small with nothing past it.
 */
static int setup_memory(struct rqdisk_state *s)
{
	const char *test = getenv("RQDISK_TEST_BUFPOOL");
	size_t pool = FE_POOL_SIZE;
	unsigned int flags = 0;

	if (test) {
		pool = (size_t)strtoull(test, NULL, 0);
		flags = BUFPOOL_NO_FALLBACK;
	}
	if (fe_buffers_init(&s->disk, pool, flags)) {
		die_msg("out of memory for %zu MiB of I/O buffers", pool >> 20);
		return -1;
	}
	return 0;
}

#define LOCK_HEAP (4u << 20)    /* free heap kept for the I/O path's small structures */
#define LOCK_STACK (256u << 10) /* stack faulted in for serving */

static void __attribute__((noinline)) grow_stack(void)
{
	char buf[LOCK_STACK];

	memset(buf, 0, sizeof(buf));
	__asm__ volatile("" : : "r"(buf) : "memory");
}

/*
 * What serving touches beside the buffers, locked too: the heap its
 * requests and bios come from (grown by LOCK_HEAP, never trimmed), its
 * stack, the program's pages.  A request then faults in nothing; one
 * that did was seen waiting on reclaim.  Not under AddressSanitizer,
 * whose shadow is terabytes of address space.
 */
static bool lock_process(void)
{
	void *heap;

	mallopt(M_TRIM_THRESHOLD, -1);
	mallopt(M_MMAP_THRESHOLD, 2 * LOCK_HEAP); /* LOCK_HEAP from the heap, not mmap */
	heap = malloc(LOCK_HEAP);
	if (heap)
		*(volatile char *)heap = 0; /* a malloc freed unused may be left out */
	free(heap);
	grow_stack();
#ifdef __SANITIZE_ADDRESS__
	return true;
#else
	return !mlockall(MCL_CURRENT);
#endif
}

/* Everything the I/O path touches, locked; said once where that is refused. */
static void lock_memory(struct rqdisk_state *s)
{
	/* where the arena could not be locked, mlockall would be refused too */
	bool all = s->disk.bufs.locked && lock_process();

	if (all && (!s->ring || fuse_ring_locked(s->ring)))
		return;
	fprintf(stderr, "rqdisk: warning: mlock refused (no CAP_IPC_LOCK, or RLIMIT_MEMLOCK "
			"too low): I/O buffers may be reclaimed; see MEMORY PRESSURE in rqdisk(8)\n");
}

/* NAME from the working directory at start: the daemon leaves it for /. */
static char *absolute_path(const char *name)
{
	char cwd[PATH_MAX], *path;

	if (name[0] == '/')
		return strdup(name);
	if (!getcwd(cwd, sizeof(cwd)) || asprintf(&path, "%s/%s", cwd, name) < 0)
		return NULL;
	return path;
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

/* The trace file, if any, whole on disk. */
static int finish_trace(struct rqdisk_state *s)
{
	int ret = blk_trace_remove(s->disk.q);

	if (ret)
		die_msg("trace %s.blktrace.0: %s", s->disk.q->blk_trace_name, strerror(-ret));
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
	return fuse_set_signal_handlers(s->se) ? -1 : 0;
}

/*
 * Without a terminal to hold: the parent waits until the child says the
 * mount is ready (or has failed, having said why on stderr) and exits
 * with that status.
 */
static int daemonize_start(struct rqdisk_state *s)
{
	int pipefd[2];
	pid_t pid;
	char status = 1;

	if (pipe2(pipefd, O_CLOEXEC)) {
		die_msg("pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		die_msg("fork: %s", strerror(errno));
		return -1;
	}
	if (pid > 0) {
		close(pipefd[1]);
		if (read(pipefd[0], &status, 1) != 1)
			status = 1;
		_exit(status);
	}
	close(pipefd[0]);
	s->ready_fd = pipefd[1];
	setsid();
	return 0;
}

static void daemonize_finish(struct rqdisk_state *s, int status)
{
	char c = (char)status;
	int null;

	if (s->ready_fd < 0)
		return;
	if (!status) {
		null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
			if (null > STDERR_FILENO)
				close(null);
		}
		if (chdir("/"))
			status = 0; /* nothing depends on the working directory */
	}
	if (write(s->ready_fd, &c, 1) != 1)
		status = 0;
	close(s->ready_fd);
	s->ready_fd = -1;
}

/*
 * Undo start.  -1 where the stack's close found its data may not be
 * durable (a backend's flush at exit failed; it said why), else 0.
 */
static int teardown(struct rqdisk_state *s, bool failed)
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
		fuse_remove_signal_handlers(s->se);
		if (s->mounted)
			fuse_session_unmount(s->se);
		fuse_session_destroy(s->se);
	}
	ctl_cleanup(&s->disk);
	fuse_ring_free(s->ring);
	free(s->mountpoint);
	free(s->image_path);
	blk_cleanup_queue(s->disk.q);
	fe_buffers_free(&s->disk);
	if (s->fd >= 0)
		close(s->fd);
	if (s->power_fd >= 0) {
		signal(SIGPWR, SIG_IGN); /* no handler writes to the fd number once it is closed */
		power_signal_fd = -1;
		close(s->power_fd);
	}
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
static void flush_at_exit(struct rqdisk_state *s)
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
			flush_at_exit(s);
			return URING_SERVE_DONE;
		}
	}
	return URING_SERVE_MORE;
}

/*
 * One thread serves the mount: it reads FUSE requests, submits their I/O
 * and reaps completions in one loop.  The termination signals are let in
 * only while it sleeps, so a signal always ends a wait.
 */
static int serve(struct rqdisk_state *s)
{
	int fd = fuse_session_fd(s->se);
	sigset_t term, waitmask;
	struct uring_watch w = { fd, serve_fuse, s, &waitmask, fuse_ring_complete,
				 s->opt.idle_poll_us };

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

/* The loop has ended what was queued: close the trace and make the image durable. */
static int sync_image(struct rqdisk_state *s)
{
	int ret;

	assert(blk_queue_idle(s->disk.q)); /* the loop returns only once the queue is */
	ret = finish_trace(s);
	if (!s->opt.read_only && s->fd >= 0 && fdatasync(s->fd)) {
		die_msg("image %s: fdatasync: %s", s->opt.image, strerror(errno));
		return -1;
	}
	return ret;
}

static int start(struct rqdisk_state *s)
{
	if (check_fuse_device() || check_mountpoint(s) || check_fuse_uring(s))
		return -1;
	s->mountpoint = absolute_path(s->opt.mountpoint);
	if (!s->mountpoint) {
		die_msg("mount point %s: %s", s->opt.mountpoint, strerror(errno));
		return -1;
	}
	s->opt.mountpoint = s->mountpoint;
	s->backend = backend_for_image(s->opt.image, s->opt.null);
	/* device/stack shows it */
	if (backend_is(s, "rbd")) /* the backend gets the text after "rbd:" */
		s->image_path = strdup(s->opt.image + strlen(RBD_SPEC_PREFIX));
	else if (backend_is(s, "nbd"))
		s->image_path = nbd_backend_args(&s->opt);
	else
		s->image_path = absolute_path(s->opt.image);
	if (!s->image_path) {
		die_msg("image %s: %s", s->opt.image, strerror(errno));
		return -1;
	}
	if (!s->opt.foreground && daemonize_start(s))
		return -1;
	if (open_image(s) || setup_queue(s) || setup_power(s) || setup_memory(s) ||
	    setup_trace(s) || setup_fuse(s))
		return -1;
	lock_memory(s);
	/* our own reclaim must not wait on the writeback of a loop device on this disk */
	if (prctl(PR_SET_IO_FLUSHER, 1, 0, 0, 0))
		fprintf(stderr,
			"rqdisk: warning: PR_SET_IO_FLUSHER: %s (needs CAP_SYS_RESOURCE); a loop "
			"device on this disk may deadlock it under memory pressure; see MEMORY "
			"PRESSURE in rqdisk(8)\n",
			strerror(errno));
	return 0;
}

int main(int argc, char **argv)
{
	struct rqdisk_state s = { .fd = -1, .ready_fd = -1, .power_fd = -1 };
	int ret;

	switch (rqdisk_parse_options(argc, argv, &s.opt)) {
	case PARSE_EXIT_OK:
		return 0;
	case PARSE_ERROR:
		return 2;
	default:
		break;
	}
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
