/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_control.c - fuzz target: writes to the control tree, as the owner
 * would send them.  Every write is answered exactly once; one refused
 * changes nothing the tree shows; the queue's limits stay valid whatever
 * was taken; a write from anyone but the owner, or to a read-only file, or
 * to a tunable of an elevator no longer running, is refused; every text
 * shown is whole lines; and a file that takes back what it shows (a
 * number, fault/rules) takes it unchanged.  The input: a byte whose top
 * bit picks the queue (set: a multi-queue queue of two hardware queues,
 * with mq/N/ and nr_requests resizing its tags) and whose rest picks the
 * elevator to start with, then writes of [node | 0x80 if not the owner's][length]
 * [value...]; the running elevator's tunables are numbers, and text for
 * bfq's weights.  Writes that would reach outside the process are left
 * out: a scheduler path (dlopen), trace/enable (a file) and fault's
 * error_file (a thread that stats a path) and sectors_file (a file read).  Below the queue are the log-writes filter
 * (its log a temporary file, unlinked once open), two delays, a
 * model, the write cache and the fault filter over a backend that takes
 * nothing, for their files in device/ and at the top (log/, power/,
 * fault/).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blk_mq.h"
#include "control.h"
#include "fuzz.h"
#include "queue_stack.h"

#define MAX_WRITES 16
#define MAX_TEXT 4096
#define MAX_NODES 128

/* libfuse's replies, taken here in its place: the control tree is linked without libfuse. */
static struct {
	unsigned int count;
	int error;
	size_t written;
	char *text; /* where a read's bytes go, or NULL */
	size_t size;
} answer;

int fuse_reply_err(fuse_req_t req, int err)
{
	(void)req;
	answer.count++;
	answer.error = err;
	return 0;
}

int fuse_reply_write(fuse_req_t req, size_t count)
{
	(void)req;
	answer.count++;
	answer.written = count;
	return 0;
}

int fuse_reply_buf(fuse_req_t req, const char *buf, size_t size)
{
	(void)req;
	answer.count++;
	answer.size = size;
	if (answer.text) {
		FUZZ_ASSERT(size < MAX_TEXT);
		memcpy(answer.text, buf, size);
		answer.text[size] = '\0';
	}
	return 0;
}

size_t fuse_add_direntry(fuse_req_t req, char *buf, size_t bufsize, const char *name,
			 const struct stat *stbuf, off_t off)
{
	(void)req;
	(void)buf;
	(void)bufsize;
	(void)name;
	(void)stbuf;
	(void)off;
	return 0;
}

/* Nothing is submitted: the queue never has a request to give out. */
static void no_driver(struct request_queue *q)
{
	(void)q;
}

/* The multi-queue queue's driver: no bio is ever submitted, so nothing reaches it. */
static blk_status_t no_queue_rq(struct blk_mq_hw_ctx *hctx, struct request *rq)
{
	(void)hctx;
	(void)rq;
	abort();
}

/* As the daemon's driver, a kick only wakes a thread: the tree kicks with the queue lock held. */
static void no_run_async(struct blk_mq_hw_ctx *hctx)
{
	(void)hctx;
}

static const struct blk_mq_ops no_mq_ops = { .queue_rq = no_queue_rq,
					     .run_async = no_run_async };
static struct blk_mq_tag_set no_tag_set = { .ops = &no_mq_ops, .nr_hw_queues = 2,
					    .queue_depth = 64, .nr_cpus = 2 };

/* The queue data[0] asks for, with its elevator: false if mq refuses that one. */
static bool make_queue(struct rqdisk *d, const char *elevator, bool mq)
{
	char why[256];

	if (!mq) {
		d->q = blk_init_queue(no_driver, NULL, NULL);
		FUZZ_ASSERT(d->q);
		FUZZ_ASSERT(!elevator_init(d->q, elevator));
		return true;
	}
	d->q = blk_mq_init_queue(&no_tag_set, NULL, why, sizeof(why));
	FUZZ_ASSERT(d->q);
	if (!blk_mq_elevator_init(d->q, elevator, why, sizeof(why)))
		return true;
	blk_mq_free_queue(d->q);
	return false;
}

static void free_queue(struct request_queue *q)
{
	if (queue_is_mq(q))
		blk_mq_free_queue(q);
	else
		blk_cleanup_queue(q);
}

/* What the target knows of a node, beyond what its mode says. */
enum {
	N_LINE = 1,   /* one line of text: a value, never a list */
	N_BACK = 2,   /* what it shows, written back, is taken and changes nothing */
	N_MOVING = 4, /* changes by itself (the log's writer thread): shown, never compared */
	N_STALE = 8,  /* a tunable of an elevator no longer running: every write refused */
};

struct node_name {
	const char *dir, *name;
	unsigned int flags;
};

static const struct node_name fixed_nodes[] = {
	{ "queue", "scheduler", N_LINE },
	{ "queue", "max_sectors_kb", N_LINE | N_BACK },
	{ "queue", "nr_requests", N_LINE | N_BACK },
	{ "queue", "nomerges", N_LINE | N_BACK },
	{ "trace", "name", N_BACK },
};
#define NR_FIXED (sizeof(fixed_nodes) / sizeof(fixed_nodes[0]))

/*
 * The layers' files, after the tunables, by the name the tree gives them
 * in device/, or at the top for the filters that have a directory there.
 */
static const struct node_name layer_nodes[] = {
	{ "delay", "read_ms", N_LINE | N_BACK },
	{ "delay", "write_ms", N_LINE | N_BACK },
	{ "model", "in_flight", N_LINE },
	{ "model", "held", N_LINE },
	{ "delay.2", "read_ms", N_LINE | N_BACK },
	{ "delay.2", "write_ms", N_LINE | N_BACK },
	{ "log", "mark", N_LINE },
	{ "log", "enable", N_LINE | N_BACK },
	{ "log", "entries", N_LINE },
	{ "log", "stats", N_MOVING },
	{ "power", "cut", N_LINE },
	{ "power", "restore", N_LINE },
	{ "power", "state", N_LINE },
	{ "power", "dirty", N_LINE },
	{ "power", "stats", 0 },
	{ "fault", "rules", N_LINE | N_BACK },
	{ "fault", "enable", N_LINE | N_BACK },
	{ "fault", "badblocks", 0 },
	{ "fault", "stats", 0 },
	{ "fault", "sectors", 0 },
};
#define NR_LAYER_NODES (sizeof(layer_nodes) / sizeof(layer_nodes[0]))
/* The filters' own directories at the top, and the names of their layers in device/. */
static const char *const top_dirs[][2] = {
	{ "log", "log-writes" }, { "power", "write-cache" }, { "fault", "fault" } };

#define NR_SPECS 6
/* log-writes goes below write-cache, which it refuses above it (a power cut loses writes) */
#define LOG_SPEC 4
static const char *stack_specs[NR_SPECS] = {
	"delay:ms=200",
	"model:ssd",
	"delay:read=1,write=2",
	"write-cache:size=1,expire=0",
	NULL, /* LOG_SPEC: log-writes:file=..., made at the first input */
	"fault",
};
static char log_path[PATH_MAX];

/* ------------------------------------------------------------- the stack below */

static int nothing_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
			size_t whylen)
{
	(void)dev;
	(void)args;
	(void)why;
	(void)whylen;
	lim->capacity = 1 << 21;
	lim->logical_block_size = 512;
	return 0;
}

/* Nothing is submitted: the queue never has a request to give out. */
static void nothing_submit(struct blk_dev *dev, struct request *rq)
{
	(void)dev;
	(void)rq;
	FUZZ_ASSERT(0);
}

static const struct dev_ops nothing_backend = {
	.api_version = DEV_API_VERSION,
	.name = "nothing",
	.backend = true,
	.open = nothing_open,
	.submit = nothing_submit,
};

/* The host's loop, as log-writes needs one to watch its writer's eventfd: never woken here. */
static int watched = -1;

static int host_watch(void *host, int fd, void (*ready)(void *arg), void *arg)
{
	(void)host;
	(void)ready;
	(void)arg;
	FUZZ_ASSERT(watched < 0);
	watched = fd;
	return 0;
}

static void host_unwatch(void *host, int fd)
{
	(void)host;
	FUZZ_ASSERT(fd == watched);
	watched = -1;
}

static const struct dev_host_ops host_ops = { .watch_fd = host_watch, .unwatch_fd = host_unwatch };

/*
 * The log in memory where there is a tmpfs, named for this process, and
 * unlinked as soon as the filter has it open: an input that crashes
 * leaves nothing behind.
 */
static void log_spec(void)
{
	static char spec[PATH_MAX + 32];
	const char *dir = getenv("TMPDIR");

	if (stack_specs[LOG_SPEC])
		return;
	if (!dir || !*dir)
		dir = access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm";
	snprintf(log_path, sizeof(log_path), "%s/rqdisk-fuzz-control.%d.log", dir, (int)getpid());
	snprintf(spec, sizeof(spec), "log-writes:file=%s", log_path);
	stack_specs[LOG_SPEC] = spec;
}

/* ------------------------------------------------------------------ the nodes */

static fuse_ino_t lookup(struct rqdisk *d, fuse_ino_t parent, const char *name)
{
	struct stat st;

	return ctl_lookup(d, parent, name, &st) ? 0 : st.st_ino;
}

/* Every tunable inode looked up while its elevator ran: stale once it has gone. */
static struct {
	fuse_ino_t ino[MAX_NODES];
	size_t nr;
} seen;

static void seen_add(fuse_ino_t ino)
{
	for (size_t i = 0; i < seen.nr; i++)
		if (seen.ino[i] == ino)
			return;
	if (seen.nr < MAX_NODES)
		seen.ino[seen.nr++] = ino;
}

struct node {
	fuse_ino_t ino;
	unsigned int flags;
};

/*
 * The nodes written to now: the writable fixed ones, the running
 * elevator's tunables, the layers' files, then the tunables of elevators
 * gone; their count.
 */
static size_t writable(struct rqdisk *d, struct node *nodes, size_t max)
{
	const struct elv_tunable *t = d->q->elevator ? d->q->elevator->type->tunables : NULL;
	fuse_ino_t iosched = lookup(d, lookup(d, FUSE_ROOT_ID, "queue"), "iosched");
	fuse_ino_t device = lookup(d, FUSE_ROOT_ID, "device");
	size_t n = 0, first_tunable;

	for (size_t i = 0; i < NR_FIXED; i++)
		nodes[n++] = (struct node){
			lookup(d, lookup(d, FUSE_ROOT_ID, fixed_nodes[i].dir), fixed_nodes[i].name),
			fixed_nodes[i].flags
		};
	first_tunable = n;
	for (; t && t->name && n + NR_LAYER_NODES < max; t++) {
		/* a number, or text of the elevator's own (bfq's weights: a line for each) */
		nodes[n] = (struct node){ lookup(d, iosched, t->name), t->get ? N_LINE | N_BACK : 0 };
		seen_add(nodes[n++].ino);
	}
	for (size_t i = 0; i < NR_LAYER_NODES; i++) {
		fuse_ino_t dir = lookup(d, FUSE_ROOT_ID, layer_nodes[i].dir);

		if (!dir)
			dir = lookup(d, device, layer_nodes[i].dir);
		nodes[n++] = (struct node){ lookup(d, dir, layer_nodes[i].name), layer_nodes[i].flags };
	}
	for (size_t i = 0; i < n; i++)
		FUZZ_ASSERT(nodes[i].ino);
	for (size_t i = 0; i < seen.nr && n < max; i++) {
		bool live = false;

		for (size_t k = first_tunable; k < n && !live; k++)
			live = nodes[k].ino == seen.ino[i];
		if (!live)
			nodes[n++] = (struct node){ seen.ino[i], N_STALE };
	}
	return n;
}

/* A filter's directory at the top holds the very files of its directory in device/. */
static void check_top_dirs(struct rqdisk *d)
{
	fuse_ino_t device = lookup(d, FUSE_ROOT_ID, "device");

	for (size_t i = 0; i < sizeof(top_dirs) / sizeof(top_dirs[0]); i++) {
		fuse_ino_t top = lookup(d, FUSE_ROOT_ID, top_dirs[i][0]);
		fuse_ino_t dev = lookup(d, device, top_dirs[i][1]);

		FUZZ_ASSERT(top && dev && top != dev);
		for (size_t k = 0; k < NR_LAYER_NODES; k++)
			if (!strcmp(layer_nodes[k].dir, top_dirs[i][0]))
				FUZZ_ASSERT(lookup(d, top, layer_nodes[k].name) ==
					    lookup(d, dev, layer_nodes[k].name));
	}
}

/* Whole lines, no NUL, within the file; one line if it holds a value. */
static void check_text(const char *text, size_t size, unsigned int flags)
{
	FUZZ_ASSERT(strlen(text) == size);
	FUZZ_ASSERT(size + 1 < MAX_TEXT);
	FUZZ_ASSERT(!size || text[size - 1] == '\n');
	if (flags & N_LINE)
		FUZZ_ASSERT(size && strchr(text, '\n') == text + size - 1);
}

/* What a node shows, as a reader opening it now would get it. */
static void show(struct rqdisk *d, const struct node *node, char *text)
{
	struct fuse_file_info fi = { .flags = O_RDONLY };

	FUZZ_ASSERT(!ctl_open(d, node->ino, &fi, true));
	memset(&answer, 0, sizeof(answer));
	answer.text = text;
	ctl_read((fuse_req_t)d, d, node->ino, &fi, MAX_TEXT - 1, 0);
	FUZZ_ASSERT(answer.count == 1 && !answer.error);
	answer.text = NULL;
	ctl_release(d, &fi);
	check_text(text, answer.size, node->flags);
}

/* Every live node's text, one after another (what moves by itself left out). */
static void show_all(struct rqdisk *d, char *texts, size_t max)
{
	struct node nodes[MAX_NODES];
	size_t n = writable(d, nodes, MAX_NODES);

	texts[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		char one[MAX_TEXT];

		if (nodes[i].flags & N_STALE)
			continue;
		show(d, &nodes[i], one);
		if (!(nodes[i].flags & N_MOVING))
			strncat(texts, one, max - strlen(texts) - 1);
	}
}

static bool excluded(struct rqdisk *d, fuse_ino_t ino, const char *val)
{
	if (ino == lookup(d, lookup(d, FUSE_ROOT_ID, "queue"), "scheduler"))
		return strchr(val, '/');
	if (ino == lookup(d, lookup(d, FUSE_ROOT_ID, "fault"), "rules"))
		return strstr(val, "error_file") || strstr(val, "sectors_file");
	return false;
}

/*
 * One write, from the owner or not; checks it is answered once, and what a
 * refusal leaves.  Returns the error it was answered with.
 */
static int write_one(struct rqdisk *d, const struct node *node, const char *val, size_t len,
		     bool owner)
{
	static char before[16 * MAX_TEXT], after[16 * MAX_TEXT];

	struct stat st;
	int error;

	show_all(d, before, sizeof(before));
	if (node->flags & N_STALE)
		FUZZ_ASSERT(ctl_getattr(d, node->ino, &st) == -ESTALE);
	else
		FUZZ_ASSERT(!ctl_getattr(d, node->ino, &st));
	memset(&answer, 0, sizeof(answer));
	ctl_write((fuse_req_t)d, d, node->ino, val, len, owner);
	FUZZ_ASSERT(owner || answer.error == EACCES); /* whatever the value */
	/* read-only: refused as such, or as a value no file takes (empty, a NUL inside) */
	FUZZ_ASSERT((node->flags & N_STALE) || (st.st_mode & S_IWUSR) || answer.error == EACCES ||
		    ((!len || memchr(val, 0, len)) && answer.error == EINVAL));
	/* gone with its elevator: refused as such, or as a value no file takes */
	FUZZ_ASSERT(!(node->flags & N_STALE) || answer.error == ESTALE ||
		    answer.error == EACCES || answer.error == EINVAL);
	FUZZ_ASSERT(answer.count == 1); /* nothing in flight: no switch is left pending */
	FUZZ_ASSERT(!d->q->switch_pending);
	FUZZ_ASSERT(answer.error || answer.written == len);
	error = answer.error;
	FUZZ_ASSERT(!blk_validate_limits(&d->q->limits, NULL, 0));
	FUZZ_ASSERT(d->q->limits.nr_requests >= 1 && d->q->limits.nr_requests <= d->max_nr_requests);
	show_all(d, after, sizeof(after));
	if (error)
		FUZZ_ASSERT(!strcmp(before, after));
	return error;
}

/* A node that takes back what it shows: the text, written back, is taken and changes nothing. */
static void write_back(struct rqdisk *d, const struct node *node)
{
	static char before[16 * MAX_TEXT], after[16 * MAX_TEXT];
	char text[MAX_TEXT];
	size_t len;

	show(d, node, text);
	len = strlen(text);
	if (len <= 1 || len >= 256) /* nothing to write, or more than one write takes */
		return;
	show_all(d, before, sizeof(before));
	memset(&answer, 0, sizeof(answer));
	ctl_write((fuse_req_t)d, d, node->ino, text, len, true);
	if (answer.error)
		fprintf(stderr, "refused (%s) what it shows: %s", strerror(answer.error), text);
	FUZZ_ASSERT(answer.count == 1 && !answer.error && answer.written == len);
	show_all(d, after, sizeof(after));
	FUZZ_ASSERT(!strcmp(before, after));
}

static bool open_all(struct rqdisk *d, struct dev_stack *stack, const uint8_t *data,
		     size_t nr_names)
{
	const char *const *names = elevator_builtin_names();
	struct dev_limits lim = { 0 };
	char why[256];

	if (!make_queue(d, names[(data[0] & 0x7f) % nr_names], data[0] & 0x80))
		return false;
	LIST_INIT(&d->ctl_files);
	log_spec();
	stack->host_ops = &host_ops;
	blk_stack_set_queue(stack, d->q);
	if (dev_stack_open(stack, stack_specs, NR_SPECS, &nothing_backend, NULL, &lim, why,
			   sizeof(why)) ||
	    blk_queue_stack_limits(d->q, &lim, why, sizeof(why))) {
		fprintf(stderr, "fuzz-control: %s\n", why);
		abort();
	}
	unlink(log_path);
	d->stack = stack;
	check_top_dirs(d);
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *const *names = elevator_builtin_names();
	size_t nr_names = 0, pos = 1;
	struct rqdisk d = { .uid = 0, .max_nr_requests = 128 };
	struct dev_stack stack = { 0 };

	while (names[nr_names])
		nr_names++;
	if (!size)
		return 0;
	seen.nr = 0;
	if (!open_all(&d, &stack, data, nr_names))
		return 0;
	for (unsigned int w = 0; w < MAX_WRITES && pos + 2 <= size; w++) {
		struct node nodes[MAX_NODES];
		size_t n = writable(&d, nodes, MAX_NODES);
		struct node node = nodes[(data[pos] & 0x7f) % n];
		bool owner = !(data[pos] & 0x80);
		size_t len = data[pos + 1];
		char val[256];

		pos += 2;
		if (len > size - pos)
			len = size - pos;
		memcpy(val, data + pos, len);
		pos += len;
		val[len] = '\0';
		if (excluded(&d, node.ino, val))
			continue;
		if (!write_one(&d, &node, val, len, owner) && (node.flags & N_BACK))
			write_back(&d, &node);
	}
	ctl_cleanup(&d);
	dev_stack_close(&stack);
	FUZZ_ASSERT(watched < 0);
	free_queue(d.q);
	return 0;
}
