/*
 * control.c - the control tree beside the disk, shaped like /sys/block/<dev>/:
 * queue limits, the scheduler and its tunables, the disk statistics, and
 * the device stack with each layer's own files.
 * A file's text is made when it is opened, as sysfs does; a write is
 * parsed and applied at once, and a bad value is refused with EINVAL,
 * leaving the old one.  Only the mount's owner and root may write: the
 * tree can load shared objects and name files the daemon creates.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blktrace.h"
#include "control.h"

#define CTL_FILE_SIZE 4096 /* what sysfs reports for every attribute */

enum ctl_ino {
	CTL_ROOT = RQDISK_ROOT_INO,
	CTL_DISK = RQDISK_DISK_INO,
	CTL_QUEUE,
	CTL_IOSCHED,
	CTL_STAT,
	CTL_INFLIGHT,
	CTL_SIZE,
	CTL_RO,
	CTL_SCHEDULER,
	CTL_MAX_SECTORS_KB,
	CTL_MAX_HW_SECTORS_KB,
	CTL_MAX_SEGMENTS,
	CTL_MAX_SEGMENT_SIZE,
	CTL_LOGICAL_BLOCK_SIZE,
	CTL_PHYSICAL_BLOCK_SIZE,
	CTL_HW_SECTOR_SIZE,
	CTL_NR_REQUESTS,
	CTL_NOMERGES,
	CTL_ROTATIONAL,
	CTL_WRITE_CACHE,
	CTL_MODEL,
	CTL_TRACE,
	CTL_TRACE_NAME,
	CTL_TRACE_ENABLE,
	CTL_DEVICE,
	CTL_DEVICE_STACK,
	CTL_FUSE,
	CTL_FUSE_TRANSPORT,
	CTL_OPTIMAL_IO_SIZE,
	CTL_DISCARD_MAX_BYTES,
	CTL_WRITE_ZEROES_MAX_BYTES,
	CTL_INO_END,
};

struct ctl_node {
	enum ctl_ino ino;
	enum ctl_ino parent;
	const char *name;
	int (*show)(struct rqdisk *d, char *buf, size_t len); /* NULL: a directory */
	int (*store)(struct rqdisk *d, const char *buf);      /* NULL: read-only */
};

/* The text of an open control file. */
struct ctl_file {
	LIST_ENTRY(ctl_file) link; /* on d->ctl_files until released */
	size_t len;
	char buf[CTL_FILE_SIZE];
};

static int show_stat(struct rqdisk *d, char *buf, size_t len)
{
	return blk_stat_format(&d->q->stats, blk_clock_now(d->q->clock), buf, len);
}

static int show_inflight(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%8u %8u\n", d->q->stats.in_flight[0], d->q->stats.in_flight[1]);
}

static int show_size(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%" PRIu64 "\n", d->size >> SECTOR_SHIFT);
}

static int show_ro(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%d\n", d->read_only);
}

/* "noop [deadline] cfq ...": every elevator, the running one in brackets. */
static int show_scheduler(struct rqdisk *d, char *buf, size_t len)
{
	const char *cur = d->q->elevator ? d->q->elevator->type->elevator_name : "none";
	const char *const *names = elevator_names();
	size_t used = 0;

	for (; *names && used < len; names++)
		used += (size_t)snprintf(buf + used, len - used, strcmp(*names, cur) ? "%s " : "[%s] ",
					 *names);
	if (used && used <= len)
		buf[used - 1] = '\n';
	return (int)used;
}

/* The last request in flight has ended: the new elevator runs. */
static void ctl_switch_done(struct request_queue *q, void *arg)
{
	struct rqdisk *d = arg;

	(void)q;
	fuse_reply_write(d->switch_req, d->switch_size);
	d->switch_req = NULL;
}

/*
 * Answered once the new elevator runs, as a write to sysfs returns: at
 * once, or (ctl_write parks the request) from the completion path when
 * the last request the old one gave out ends.  Nothing waits here: the
 * loop goes on serving.  A switch written while one is pending is refused
 * with EBUSY.
 */
static int store_scheduler(struct rqdisk *d, const char *buf)
{
	char why[256];

	return elevator_switch(d->q, buf, why, sizeof(why));
}

static int parse_ulong(const char *buf, unsigned long min, unsigned long max, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(buf, &end, 10);
	return *buf == '-' || errno || end == buf || *end || *v < min || *v > max ? -EINVAL : 0;
}

static int show_max_sectors_kb(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%u\n", d->q->limits.max_sectors / 2);
}

/* Within the hardware limit, and checked as a whole like the command line's. */
static int store_max_sectors_kb(struct rqdisk *d, const char *buf)
{
	struct queue_limits lim = d->q->limits;
	unsigned long kb;

	if (parse_ulong(buf, BLK_PAGE_SIZE / 1024, lim.max_hw_sectors / 2, &kb))
		return -EINVAL;
	lim.max_sectors = (unsigned int)kb * 2;
	return blk_queue_set_limits(d->q, &lim, NULL, 0);
}

static int show_max_hw_sectors_kb(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%u\n", d->q->limits.max_hw_sectors / 2);
}

static int show_max_segments(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%u\n", queue_max_segments(&d->q->limits));
}

static int show_max_segment_size(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%u\n", d->q->limits.max_segment_size);
}

static int show_block_size(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%u\n", d->q->limits.logical_block_size);
}

static int show_physical_block_size(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%u\n", queue_physical_block_size(&d->q->limits));
}

static int show_optimal_io_size(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%u\n", d->q->limits.io_opt);
}

/* 0: the device takes none, as sysfs shows it. */
static int show_discard_max_bytes(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%llu\n",
			(unsigned long long)queue_max_sectors(&d->q->limits, REQ_OP_DISCARD)
				<< SECTOR_SHIFT);
}

static int show_write_zeroes_max_bytes(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%llu\n",
			(unsigned long long)queue_max_sectors(&d->q->limits, REQ_OP_WRITE_ZEROES)
				<< SECTOR_SHIFT);
}

static int show_nr_requests(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%u\n", d->q->limits.nr_requests);
}

/* Down to one, up to what the driver was set up to carry. */
static int store_nr_requests(struct rqdisk *d, const char *buf)
{
	unsigned long v;

	if (parse_ulong(buf, 1, d->max_nr_requests, &v))
		return -EINVAL;
	d->q->limits.nr_requests = (unsigned int)v;
	return 0;
}

static int show_nomerges(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%u\n", d->q->limits.nomerges);
}

static int store_nomerges(struct rqdisk *d, const char *buf)
{
	unsigned long v;

	if (parse_ulong(buf, BLK_MERGES_ALL, BLK_MERGES_NONE, &v))
		return -EINVAL;
	d->q->limits.nomerges = (unsigned int)v;
	return 0;
}

static int show_rotational(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%d\n", d->model && disk_model_rotational(d->model));
}

/*
 * Not in sysfs: "null" for a null device, then the timing model and all
 * its parameters; "none" for neither.
 */
static int show_model(struct rqdisk *d, char *buf, size_t len)
{
	int n = 0, m;

	if (d->null_device)
		n = snprintf(buf, len, d->model ? "null " : "null");
	else if (!d->model)
		n = snprintf(buf, len, "none");
	if (d->model && n >= 0 && (size_t)n < len) {
		m = disk_model_describe(d->model, buf + n, len - (size_t)n);
		n = m < 0 ? m : n + m;
	}
	if (n < 0 || (size_t)n + 1 >= len)
		return n;
	return n + snprintf(buf + n, len - (size_t)n, "\n");
}

/* Not in sysfs: the layers below the queue, nearest first, as "model:hdd ... -> file". */
static int show_device_stack(struct rqdisk *d, char *buf, size_t len)
{
	int n = d->stack ? dev_stack_describe(d->stack, buf, len) : snprintf(buf, len, "none");

	if (n < 0 || (size_t)n + 1 >= len)
		return n;
	return n + snprintf(buf + n, len - (size_t)n, "\n");
}

/*
 * "write back" when writes are durable only after a flush: always over an
 * image (the page cache, the host disk's cache, a sparse file's
 * allocation), and over a write-cache filter; "write through" over a
 * backend with nothing to lose (null).
 */
static int show_write_cache(struct rqdisk *d, char *buf, size_t len)
{
	bool cache = d->stack && d->stack->limits.has_cache;

	return snprintf(buf, len, "%s\n", cache ? "write back" : "write through");
}

static int show_trace_name(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%s\n", d->q->blk_trace_name ? d->q->blk_trace_name : "");
}

/* An absolute path (in the background the daemon runs in /), and not while tracing. */
static int store_trace_name(struct rqdisk *d, const char *buf)
{
	if (buf[0] != '/')
		return -EINVAL;
	if (d->q->blk_trace)
		return -EBUSY;
	return blk_trace_set_name(d->q, buf);
}

static int show_trace_enable(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%d\n", d->q->blk_trace != NULL);
}

/* 1 starts a trace to trace/name (the file truncated); 0 stops it, the file whole. */
static int store_trace_enable(struct rqdisk *d, const char *buf)
{
	unsigned long v;

	if (parse_ulong(buf, 0, 1, &v) || (v && !d->q->blk_trace_name))
		return -EINVAL;
	if (!v)
		return __blk_trace_remove(d->q);
	if (d->q->blk_trace)
		return 0;
	return __blk_trace_setup(d->q, d->q->blk_trace_name, NULL, 0);
}

/* Not in sysfs: how FUSE requests reach the daemon, "uring" or "dev" (/dev/fuse). */
static int show_fuse_transport(struct rqdisk *d, char *buf, size_t len)
{
	return snprintf(buf, len, "%s\n", d->fuse_on_ring ? "uring" : "dev");
}

static const struct ctl_node ctl_nodes[] = {
	{ CTL_QUEUE, CTL_ROOT, "queue", NULL, NULL },
	{ CTL_STAT, CTL_ROOT, "stat", show_stat, NULL },
	{ CTL_INFLIGHT, CTL_ROOT, "inflight", show_inflight, NULL },
	{ CTL_SIZE, CTL_ROOT, "size", show_size, NULL },
	{ CTL_RO, CTL_ROOT, "ro", show_ro, NULL },
	{ CTL_IOSCHED, CTL_QUEUE, "iosched", NULL, NULL },
	{ CTL_SCHEDULER, CTL_QUEUE, "scheduler", show_scheduler, store_scheduler },
	{ CTL_MAX_SECTORS_KB, CTL_QUEUE, "max_sectors_kb", show_max_sectors_kb,
	  store_max_sectors_kb },
	{ CTL_MAX_HW_SECTORS_KB, CTL_QUEUE, "max_hw_sectors_kb", show_max_hw_sectors_kb, NULL },
	{ CTL_MAX_SEGMENTS, CTL_QUEUE, "max_segments", show_max_segments, NULL },
	{ CTL_MAX_SEGMENT_SIZE, CTL_QUEUE, "max_segment_size", show_max_segment_size, NULL },
	{ CTL_LOGICAL_BLOCK_SIZE, CTL_QUEUE, "logical_block_size", show_block_size, NULL },
	{ CTL_PHYSICAL_BLOCK_SIZE, CTL_QUEUE, "physical_block_size", show_physical_block_size,
	  NULL },
	{ CTL_OPTIMAL_IO_SIZE, CTL_QUEUE, "optimal_io_size", show_optimal_io_size, NULL },
	{ CTL_DISCARD_MAX_BYTES, CTL_QUEUE, "discard_max_bytes", show_discard_max_bytes, NULL },
	{ CTL_WRITE_ZEROES_MAX_BYTES, CTL_QUEUE, "write_zeroes_max_bytes",
	  show_write_zeroes_max_bytes, NULL },
	{ CTL_HW_SECTOR_SIZE, CTL_QUEUE, "hw_sector_size", show_block_size, NULL },
	{ CTL_NR_REQUESTS, CTL_QUEUE, "nr_requests", show_nr_requests, store_nr_requests },
	{ CTL_NOMERGES, CTL_QUEUE, "nomerges", show_nomerges, store_nomerges },
	{ CTL_ROTATIONAL, CTL_QUEUE, "rotational", show_rotational, NULL },
	{ CTL_WRITE_CACHE, CTL_QUEUE, "write_cache", show_write_cache, NULL },
	{ CTL_MODEL, CTL_QUEUE, "model", show_model, NULL },
	{ CTL_TRACE, CTL_ROOT, "trace", NULL, NULL },
	{ CTL_TRACE_NAME, CTL_TRACE, "name", show_trace_name, store_trace_name },
	{ CTL_TRACE_ENABLE, CTL_TRACE, "enable", show_trace_enable, store_trace_enable },
	{ CTL_DEVICE, CTL_ROOT, "device", NULL, NULL },
	{ CTL_DEVICE_STACK, CTL_DEVICE, "stack", show_device_stack, NULL },
	{ CTL_FUSE, CTL_ROOT, "fuse", NULL, NULL },
	{ CTL_FUSE_TRANSPORT, CTL_FUSE, "transport", show_fuse_transport, NULL },
};

#define NR_CTL_NODES (sizeof(ctl_nodes) / sizeof(ctl_nodes[0]))

_Static_assert(CTL_INO_END <= CTL_INO_LAYER_BASE, "fixed nodes run into the layers' inodes");
_Static_assert(CTL_INO_LAYER_BASE + DEV_MAX_LAYERS * CTL_LAYER_INOS <= CTL_INO_IOSCHED_BASE,
	       "the layers' inodes run into the tunables'");

static const struct ctl_node *ctl_node(fuse_ino_t ino)
{
	for (size_t i = 0; i < NR_CTL_NODES; i++)
		if (ctl_nodes[i].ino == ino)
			return &ctl_nodes[i];
	return NULL;
}

/* The running elevator's tunables, or NULL; lock held. */
static const struct elv_tunable *ctl_tunables(struct rqdisk *d)
{
	return d->q->elevator ? d->q->elevator->type->tunables : NULL;
}

/*
 * A tunable's inode names the elevator instance it belongs to as well as
 * its place in the table, as a sysfs attribute goes away with its
 * elevator: a file opened on cfq's quantum must not set the read_expire
 * of the deadline that runs after a switch.  Lock held.
 */
static fuse_ino_t ctl_tunable_ino(struct rqdisk *d, size_t idx)
{
	return CTL_INO_IOSCHED_BASE + d->q->elevator_gen * CTL_TUNABLES_MAX + idx;
}

/*
 * The tunable inode ino stands for: -ESTALE if it belongs to an elevator
 * no longer running, -ENOENT if it never was one.  Lock held.
 */
static int ctl_tunable(struct rqdisk *d, fuse_ino_t ino, const struct elv_tunable **tp)
{
	const struct elv_tunable *t = ctl_tunables(d);
	uint64_t gen, idx;

	if (ino < CTL_INO_IOSCHED_BASE)
		return -ENOENT;
	gen = (ino - CTL_INO_IOSCHED_BASE) / CTL_TUNABLES_MAX;
	idx = (ino - CTL_INO_IOSCHED_BASE) % CTL_TUNABLES_MAX;
	if (gen != d->q->elevator_gen)
		return gen < d->q->elevator_gen ? -ESTALE : -ENOENT;
	for (; t && t->name; t++, idx--)
		if (!idx) {
			*tp = t;
			return 0;
		}
	return -ENOENT;
}

static bool ctl_is_layer_ino(fuse_ino_t ino)
{
	return ino >= CTL_INO_LAYER_BASE &&
	       ino < CTL_INO_LAYER_BASE + DEV_MAX_LAYERS * CTL_LAYER_INOS;
}

/* The directory of the stack's layer i (k 0), or its attr k - 1. */
static fuse_ino_t ctl_layer_ino(size_t i, size_t k)
{
	return CTL_INO_LAYER_BASE + i * CTL_LAYER_INOS + k;
}

/*
 * The last inode of a layer's range is the directory of its ctl_dir at the
 * top of the tree (power/, log/): a directory of its own, holding the same
 * files, since the kernel takes no second name for one directory inode
 * while the first is in use (a working directory there).
 */
#define CTL_TOP_DIR_K (CTL_LAYER_INOS - 1)

static bool ctl_layer_has_top_dir(const struct rqdisk *d, size_t i);

/*
 * The layer whose directory or file ino is, and the attr (NULL for the
 * directory); -ENOENT if none.  A layer without attrs has no directory.
 */
static int ctl_layer(struct rqdisk *d, fuse_ino_t ino, struct blk_dev **devp,
		     const struct dev_attr **ap)
{
	const struct dev_attr *a;
	size_t i, k;

	if (!ctl_is_layer_ino(ino) || !d->stack)
		return -ENOENT;
	i = (ino - CTL_INO_LAYER_BASE) / CTL_LAYER_INOS;
	k = (ino - CTL_INO_LAYER_BASE) % CTL_LAYER_INOS;
	if (i >= d->stack->nr_layers || !(a = d->stack->layers[i].ops->attrs))
		return -ENOENT;
	if (k == CTL_TOP_DIR_K) {
		if (!ctl_layer_has_top_dir(d, i))
			return -ENOENT;
		k = 0; /* a directory of the layer's files */
	}
	for (; k > 1 && a->name; k--)
		a++;
	if (k && !a->name)
		return -ENOENT;
	*devp = (struct blk_dev *)&d->stack->layers[i];
	*ap = k ? a : NULL;
	return 0;
}

bool ctl_is_node(fuse_ino_t ino)
{
	return (ino > CTL_DISK && ino < CTL_INO_END) || ctl_is_layer_ino(ino) ||
	       ino >= CTL_INO_IOSCHED_BASE;
}

static void ctl_attr(fuse_ino_t ino, bool dir, bool writable, const struct rqdisk *d,
		     struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_mode = dir ? S_IFDIR | 0755 : S_IFREG | (writable ? 0644 : 0444);
	st->st_nlink = dir ? 2 : 1;
	st->st_size = dir ? 0 : CTL_FILE_SIZE;
	st->st_uid = d->uid;
	st->st_gid = d->gid;
	st->st_atim = st->st_mtim = st->st_ctim = d->mtime;
}

int ctl_getattr(struct rqdisk *d, fuse_ino_t ino, struct stat *st)
{
	const struct ctl_node *n = ctl_node(ino);
	const struct elv_tunable *t;
	const struct dev_attr *a;
	struct blk_dev *dev;
	int ret;

	if (n) {
		ctl_attr(ino, !n->show, n->store, d, st);
		return 0;
	}
	if (!ctl_layer(d, ino, &dev, &a)) {
		ctl_attr(ino, !a, a && a->store, d, st);
		return 0;
	}
	blk_queue_lock(d->q);
	ret = ctl_tunable(d, ino, &t);
	if (!ret)
		ctl_attr(ino, false, true, d, st);
	blk_queue_unlock(d->q);
	return ret;
}

static int ctl_lookup_tunable(struct rqdisk *d, const char *name, struct stat *st)
{
	const struct elv_tunable *t;
	size_t idx = 0;
	int ret = -ENOENT;

	blk_queue_lock(d->q);
	for (t = ctl_tunables(d); t && t->name && idx < CTL_TUNABLES_MAX; t++, idx++)
		if (!strcmp(t->name, name)) {
			ctl_attr(ctl_tunable_ino(d, idx), false, true, d, st);
			ret = 0;
			break;
		}
	blk_queue_unlock(d->q);
	return ret;
}

/* device/NAME: a layer's directory, by the name dev_layer_name gives it. */
static int ctl_lookup_layer(struct rqdisk *d, const char *name, struct stat *st)
{
	char lname[64];

	for (size_t i = 0; d->stack && i < d->stack->nr_layers; i++) {
		const struct blk_dev *dev = &d->stack->layers[i];

		if (!dev->ops->attrs)
			continue;
		dev_layer_name(dev, lname, sizeof(lname));
		if (!strcmp(lname, name))
			return ctl_getattr(d, ctl_layer_ino(i, 0), st);
	}
	return -ENOENT;
}

/* device/NAME/ATTR: parent is a layer's directory, or not. */
static int ctl_lookup_attr(struct rqdisk *d, fuse_ino_t parent, const char *name, struct stat *st)
{
	const struct dev_attr *a;
	struct blk_dev *dev;

	if (ctl_layer(d, parent, &dev, &a) || a)
		return -ENOENT;
	size_t i = (size_t)(dev - d->stack->layers);

	for (size_t k = 1; k < CTL_TOP_DIR_K && dev->ops->attrs[k - 1].name; k++)
		if (!strcmp(dev->ops->attrs[k - 1].name, name))
			return ctl_getattr(d, ctl_layer_ino(i, k), st);
	return -ENOENT;
}

/*
 * The layer whose files also show at the top of the tree as name/ (its
 * ops' ctl_dir): the one nearest the queue.  Its index, or -1.
 */
static int ctl_top_dir_layer(const struct rqdisk *d, const char *name)
{
	for (size_t i = 0; d->stack && i < d->stack->nr_layers; i++) {
		const struct dev_ops *ops = d->stack->layers[i].ops;

		if (ops->attrs && ops->ctl_dir && !strcmp(ops->ctl_dir, name))
			return (int)i;
	}
	return -1;
}

/* Whether layer i is the one its ctl_dir names at the top of the tree. */
static bool ctl_layer_has_top_dir(const struct rqdisk *d, size_t i)
{
	const char *dir = d->stack->layers[i].ops->ctl_dir;

	return dir && d->stack->layers[i].ops->attrs && ctl_top_dir_layer(d, dir) == (int)i;
}

int ctl_lookup(struct rqdisk *d, fuse_ino_t parent, const char *name, struct stat *st)
{
	int top;

	if (parent == CTL_IOSCHED)
		return ctl_lookup_tunable(d, name, st);
	if (ctl_is_layer_ino(parent))
		return ctl_lookup_attr(d, parent, name, st);
	for (size_t i = 0; i < NR_CTL_NODES; i++)
		if (ctl_nodes[i].parent == parent && !strcmp(ctl_nodes[i].name, name))
			return ctl_getattr(d, ctl_nodes[i].ino, st);
	if (parent == CTL_DEVICE)
		return ctl_lookup_layer(d, name, st);
	if (parent == CTL_ROOT && (top = ctl_top_dir_layer(d, name)) >= 0)
		return ctl_getattr(d, ctl_layer_ino((size_t)top, CTL_TOP_DIR_K), st);
	return -ENOENT;
}

static int ctl_show(struct rqdisk *d, fuse_ino_t ino, char *buf, size_t len)
{
	const struct ctl_node *n = ctl_node(ino);
	const struct elv_tunable *t;
	const struct dev_attr *a;
	struct blk_dev *dev;
	int ret = -ENOENT;

	blk_queue_lock(d->q);
	if (n && n->show)
		ret = n->show(d, buf, len);
	else if (!n && !ctl_layer(d, ino, &dev, &a))
		ret = a && a->show ? a->show(dev, buf, len) : -ENOENT;
	else if (!n && !(ret = ctl_tunable(d, ino, &t)))
		ret = elv_tunable_text(d->q->elevator, t, buf, len);
	blk_queue_unlock(d->q);
	return ret;
}

int ctl_open(struct rqdisk *d, fuse_ino_t ino, struct fuse_file_info *fi, bool owner)
{
	const struct ctl_node *n = ctl_node(ino);
	bool writing = (fi->flags & O_ACCMODE) != O_RDONLY;
	const struct dev_attr *a = NULL;
	struct blk_dev *dev;
	bool layer = !n && !ctl_layer(d, ino, &dev, &a);
	struct ctl_file *f;
	int len;

	if ((n && !n->show) || (layer && !a))
		return -EISDIR;
	/* as kernfs: no opening for writing what cannot be written, even for root */
	if (writing && ((n && !n->store) || (layer && !a->store) || !owner))
		return -EACCES;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	len = ctl_show(d, ino, f->buf, sizeof(f->buf));
	if (len < 0) {
		free(f);
		return len;
	}
	f->len = (size_t)len < sizeof(f->buf) ? (size_t)len : sizeof(f->buf) - 1;
	LIST_INSERT_HEAD(&d->ctl_files, f, link);
	fi->fh = (uintptr_t)f;
	fi->direct_io = 1; /* the text changes: never cache it */
	return 0;
}

/* A tunable whose elevator is gone is not read from its old text: ESTALE. */
void ctl_read(fuse_req_t req, struct rqdisk *d, fuse_ino_t ino, struct fuse_file_info *fi,
	      size_t size, off_t off)
{
	struct ctl_file *f = (struct ctl_file *)(uintptr_t)fi->fh;
	size_t from = (size_t)off < f->len ? (size_t)off : f->len;
	size_t n = f->len - from < size ? f->len - from : size;
	const struct elv_tunable *t;
	int ret = 0;

	if (!ctl_node(ino) && !ctl_is_layer_ino(ino)) {
		blk_queue_lock(d->q);
		ret = ctl_tunable(d, ino, &t);
		blk_queue_unlock(d->q);
	}
	if (ret)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_buf(req, f->buf + from, n);
}

/* Lock held: apply val to ino; 1 if the answer is left to the completion path. */
static int ctl_store(fuse_req_t req, struct rqdisk *d, fuse_ino_t ino, const char *val,
		     size_t size)
{
	const struct ctl_node *n = ctl_node(ino);
	const struct elv_tunable *t;
	const struct dev_attr *a;
	struct blk_dev *dev;
	int ret;

	if (n && !n->store)
		return -EACCES;
	if (!n && !ctl_layer(d, ino, &dev, &a)) {
		if (!a || !a->store)
			return -EACCES;
		ret = a->store(dev, val);
		return ret < 0 ? ret : 0; /* answered here, whatever else it returned */
	}
	if (!n) {
		ret = ctl_tunable(d, ino, &t);
		return ret ? ret : elv_tunable_store(d->q->elevator, t->name, val);
	}
	ret = n->store(d, val);
	if (ret || n->ino != CTL_SCHEDULER || !d->q->switch_pending)
		return ret;
	/* this write started the switch (another would have been refused): answer at its end */
	d->switch_req = req;
	d->switch_size = size;
	d->q->switch_done = ctl_switch_done;
	d->q->switch_arg = d;
	return 1;
}

/*
 * One value per write, as sysfs takes it: a trailing newline is allowed.
 * Only from the owner or root, whatever the file's mode and whoever opened
 * the handle.  Answers req, now or from the completion path.
 */
void ctl_write(fuse_req_t req, struct rqdisk *d, fuse_ino_t ino, const char *buf, size_t size,
	       bool owner)
{
	char val[256];
	int ret;

	if (!owner) {
		fuse_reply_err(req, EACCES);
		return;
	}
	/* a NUL inside would cut the value short unseen (a mark's name): refused */
	if (!size || size >= sizeof(val) || memchr(buf, 0, size)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	memcpy(val, buf, size);
	val[size] = '\0';
	if (val[size - 1] == '\n')
		val[size - 1] = '\0';
	blk_queue_lock(d->q);
	ret = ctl_store(req, d, ino, val, size);
	blk_queue_unlock(d->q);
	if (ret < 0)
		fuse_reply_err(req, -ret);
	else if (!ret)
		fuse_reply_write(req, size);
}

void ctl_release(struct fuse_file_info *fi)
{
	struct ctl_file *f = (struct ctl_file *)(uintptr_t)fi->fh;

	LIST_REMOVE(f, link);
	free(f);
}

/* Files still open when the session ends: their release will never come. */
void ctl_cleanup(struct rqdisk *d)
{
	struct ctl_file *f;

	while ((f = LIST_FIRST(&d->ctl_files))) {
		LIST_REMOVE(f, link);
		free(f);
	}
}

static size_t ctl_dirent(fuse_req_t req, char *buf, size_t room, const char *name,
			 fuse_ino_t ino, bool dir, off_t next)
{
	struct stat st = { .st_ino = ino, .st_mode = dir ? S_IFDIR : S_IFREG };

	return fuse_add_direntry(req, buf, room, name, &st, next);
}

/*
 * The entries of a control directory: ".", "..", then its nodes in table
 * order; then the tunables of iosched, the layers' directories of device,
 * or a layer's attrs.
 */
static size_t ctl_list(fuse_req_t req, struct rqdisk *d, fuse_ino_t ino, char *buf, size_t size,
		       off_t off)
{
	const struct ctl_node *node = ctl_node(ino);
	const struct elv_tunable *t = NULL;
	const struct dev_attr *a = NULL;
	struct blk_dev *dev = NULL;
	bool layer = !node && !ctl_layer(d, ino, &dev, &a);
	bool top = layer && (ino - CTL_INO_LAYER_BASE) % CTL_LAYER_INOS == CTL_TOP_DIR_K;
	size_t used = 0, n;
	char lname[64];
	off_t i = 0;

	if (ino == CTL_IOSCHED)
		t = ctl_tunables(d);
#define EMIT(name, eino, dir)                                                           \
	do {                                                                            \
		if (i++ >= off) {                                                       \
			n = ctl_dirent(req, buf + used, size - used, name, eino, dir, i); \
			if (n > size - used)                                            \
				return used;                                            \
			used += n;                                                      \
		}                                                                       \
	} while (0)
	EMIT(".", ino, true);
	EMIT("..", node ? node->parent : layer && !top ? CTL_DEVICE : CTL_ROOT, true);
	if (ino == CTL_ROOT)
		EMIT(RQDISK_DISK_NAME, CTL_DISK, false);
	for (size_t k = 0; k < NR_CTL_NODES; k++)
		if (ctl_nodes[k].parent == ino)
			EMIT(ctl_nodes[k].name, ctl_nodes[k].ino, !ctl_nodes[k].show);
	for (size_t k = 0; t && t->name && k < CTL_TUNABLES_MAX; t++, k++)
		EMIT(t->name, ctl_tunable_ino(d, k), false);
	for (size_t k = 0; ino == CTL_DEVICE && d->stack && k < d->stack->nr_layers; k++) {
		if (!d->stack->layers[k].ops->attrs)
			continue;
		dev_layer_name(&d->stack->layers[k], lname, sizeof(lname));
		EMIT(lname, ctl_layer_ino(k, 0), true);
	}
	for (size_t k = 0; ino == CTL_ROOT && d->stack && k < d->stack->nr_layers; k++)
		if (ctl_layer_has_top_dir(d, k))
			EMIT(d->stack->layers[k].ops->ctl_dir, ctl_layer_ino(k, CTL_TOP_DIR_K),
			     true);
	for (size_t k = 1; layer && k < CTL_TOP_DIR_K && dev->ops->attrs[k - 1].name; k++)
		EMIT(dev->ops->attrs[k - 1].name,
		     ctl_layer_ino((size_t)(dev - d->stack->layers), k), false);
#undef EMIT
	return used;
}

static bool ctl_is_dir(struct rqdisk *d, fuse_ino_t ino)
{
	const struct ctl_node *node = ctl_node(ino);
	const struct dev_attr *a;
	struct blk_dev *dev;

	if (ino == CTL_ROOT)
		return true;
	if (node)
		return !node->show;
	return !ctl_layer(d, ino, &dev, &a) && !a;
}

void ctl_readdir(fuse_req_t req, struct rqdisk *d, fuse_ino_t ino, size_t size, off_t off)
{
	char *buf;
	size_t used;

	if (!ctl_is_dir(d, ino)) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	buf = malloc(size);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	blk_queue_lock(d->q);
	used = ctl_list(req, d, ino, buf, size, off);
	blk_queue_unlock(d->q);
	fuse_reply_buf(req, buf, used);
	free(buf);
}
