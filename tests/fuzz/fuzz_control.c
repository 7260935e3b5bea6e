/*
 * fuzz_control.c - fuzz target: writes to the control tree, as the owner
 * would send them.  Every write is answered exactly once; one refused
 * changes nothing the tree shows; the queue's limits stay valid whatever
 * was taken; a write from anyone but the owner, or to a read-only file, is
 * refused.  The input: an elevator to start with, then writes of [node |
 * 0x80 if not the owner's][length][value...].  Writes that would reach
 * outside the process are left out: a scheduler path (dlopen) and
 * trace/enable (a file).  Below the queue are two delays and a model over
 * a backend that takes nothing, for their files in device/.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "control.h"
#include "fuzz.h"

#define MAX_WRITES 16
#define MAX_TEXT 4096

/* libfuse's replies, taken here in its place: control.c is linked without libfuse. */
static struct {
	unsigned int count;
	int error;
	size_t written;
	char *text; /* where a read's bytes go, or NULL */
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

static const char *const fixed_nodes[][2] = {
	{ "queue", "scheduler" }, { "queue", "max_sectors_kb" }, { "queue", "nr_requests" },
	{ "queue", "nomerges" },  { "trace", "name" },
};
#define NR_FIXED (sizeof(fixed_nodes) / sizeof(fixed_nodes[0]))

/* The layers' files, after the tunables: the model's are read-only. */
static const char *const layer_nodes[][2] = {
	{ "delay", "read_ms" }, { "delay", "write_ms" },   { "model", "in_flight" },
	{ "model", "held" },    { "delay.2", "read_ms" }, { "delay.2", "write_ms" },
};
#define NR_LAYER_NODES (sizeof(layer_nodes) / sizeof(layer_nodes[0]))
static const char *const stack_specs[] = { "delay:ms=200", "model:ssd", "delay:read=1,write=2" };

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

static fuse_ino_t lookup(struct rqdisk *d, fuse_ino_t parent, const char *name)
{
	struct stat st;

	return ctl_lookup(d, parent, name, &st) ? 0 : st.st_ino;
}

/*
 * The nodes written to now: the writable fixed ones, the running
 * elevator's tunables, then the layers' files; their count.
 */
static size_t writable(struct rqdisk *d, fuse_ino_t *ino, size_t max)
{
	const struct elv_tunable *t = d->q->elevator ? d->q->elevator->type->tunables : NULL;
	fuse_ino_t iosched = lookup(d, lookup(d, FUSE_ROOT_ID, "queue"), "iosched");
	fuse_ino_t device = lookup(d, FUSE_ROOT_ID, "device");
	size_t n = 0;

	for (size_t i = 0; i < NR_FIXED; i++)
		ino[n++] = lookup(d, lookup(d, FUSE_ROOT_ID, fixed_nodes[i][0]), fixed_nodes[i][1]);
	for (; t && t->name && n + NR_LAYER_NODES < max; t++)
		ino[n++] = lookup(d, iosched, t->name);
	for (size_t i = 0; i < NR_LAYER_NODES; i++)
		ino[n++] = lookup(d, lookup(d, device, layer_nodes[i][0]), layer_nodes[i][1]);
	for (size_t i = 0; i < n; i++)
		FUZZ_ASSERT(ino[i]);
	return n;
}

/* What a node shows, as a reader opening it now would get it. */
static void show(struct rqdisk *d, fuse_ino_t ino, char *text)
{
	struct fuse_file_info fi = { .flags = O_RDONLY };

	FUZZ_ASSERT(!ctl_open(d, ino, &fi, true));
	memset(&answer, 0, sizeof(answer));
	answer.text = text;
	ctl_read((fuse_req_t)d, d, ino, &fi, MAX_TEXT - 1, 0);
	FUZZ_ASSERT(answer.count == 1 && !answer.error);
	answer.text = NULL;
	ctl_release(&fi);
}

/* Every writable node's text, one after another. */
static void show_all(struct rqdisk *d, char *texts, size_t max)
{
	fuse_ino_t ino[64];
	size_t n = writable(d, ino, 64);

	texts[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		char one[MAX_TEXT];

		show(d, ino[i], one);
		strncat(texts, one, max - strlen(texts) - 1);
	}
}

static bool excluded(struct rqdisk *d, fuse_ino_t ino, const char *val)
{
	return ino == lookup(d, lookup(d, FUSE_ROOT_ID, "queue"), "scheduler") && strchr(val, '/');
}

/* One write, from the owner or not; checks it is answered once, and what a refusal leaves. */
static void write_one(struct rqdisk *d, fuse_ino_t ino, const char *val, size_t len, bool owner)
{
	static char before[8 * MAX_TEXT], after[8 * MAX_TEXT];

	struct stat st;
	int error;

	show_all(d, before, sizeof(before));
	FUZZ_ASSERT(!ctl_getattr(d, ino, &st));
	memset(&answer, 0, sizeof(answer));
	ctl_write((fuse_req_t)d, d, ino, val, len, owner);
	FUZZ_ASSERT(owner || answer.error == EACCES); /* whatever the value */
	/* read-only: refused as such, or as an empty write */
	FUZZ_ASSERT((st.st_mode & S_IWUSR) || answer.error == EACCES ||
		    (!len && answer.error == EINVAL));
	FUZZ_ASSERT(answer.count == 1); /* nothing in flight: no switch is left pending */
	FUZZ_ASSERT(!d->q->switch_pending);
	FUZZ_ASSERT(answer.error || answer.written == len);
	error = answer.error;
	FUZZ_ASSERT(!blk_validate_limits(&d->q->limits, NULL, 0));
	FUZZ_ASSERT(d->q->limits.nr_requests >= 1 && d->q->limits.nr_requests <= d->max_nr_requests);
	show_all(d, after, sizeof(after));
	if (error)
		FUZZ_ASSERT(!strcmp(before, after));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *const *names = elevator_builtin_names();
	size_t nr_names = 0, pos = 1;
	struct rqdisk d = { .uid = 0, .max_nr_requests = 128 };
	struct dev_stack stack = { 0 };
	struct dev_limits lim = { 0 };
	char why[256];

	while (names[nr_names])
		nr_names++;
	if (!size)
		return 0;
	d.q = blk_init_queue(no_driver, NULL, NULL);
	FUZZ_ASSERT(d.q);
	LIST_INIT(&d.ctl_files);
	FUZZ_ASSERT(!elevator_init(d.q, names[data[0] % nr_names]));
	FUZZ_ASSERT(!dev_stack_open(&stack, d.q, stack_specs, 3, &nothing_backend, NULL, &lim, why,
				    sizeof(why)));
	d.stack = &stack;
	for (unsigned int w = 0; w < MAX_WRITES && pos + 2 <= size; w++) {
		fuse_ino_t ino[64];
		size_t n = writable(&d, ino, 64);
		fuse_ino_t node = ino[(data[pos] & 0x7f) % n];
		bool owner = !(data[pos] & 0x80);
		size_t len = data[pos + 1];
		char val[256];

		pos += 2;
		if (len > size - pos)
			len = size - pos;
		memcpy(val, data + pos, len);
		pos += len;
		val[len] = '\0';
		if (excluded(&d, node, val))
			continue;
		write_one(&d, node, val, len, owner);
	}
	ctl_cleanup(&d);
	dev_stack_close(&stack);
	blk_cleanup_queue(d.q);
	return 0;
}
