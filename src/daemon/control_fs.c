/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * control_fs.c - the control tree beside the disk as a file system: the
 * FUSE lookup, getattr, open, read, write, release and readdir of its
 * nodes, its layers' files and the elevator's tunables.
 * A file's text is made when it is opened, as sysfs does; a write is
 * parsed and applied at once, and a bad value is refused with EINVAL,
 * leaving the old one.  Only the mount's owner and root may write: the
 * tree can load shared objects and name files the daemon creates.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blk_mq.h"
#include "control_impl.h"

#define CTL_FILE_SIZE 4096 /* what sysfs reports for every attribute */

/* The text of an open control file. */
struct ctl_file {
	LIST_ENTRY(ctl_file) link; /* on d->ctl_files until released */
	size_t len;
	char buf[CTL_FILE_SIZE];
};

/* The last request in flight has ended: the new elevator runs. */
static void ctl_switch_done(struct request_queue *q, void *arg)
{
	struct rqdisk *d = arg;

	(void)q;
	fuse_reply_write(d->switch_req, d->switch_size);
	d->switch_req = NULL;
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

	struct blk_mq_hw_ctx *hctx;
	const char *mq_attr;

	if (n) {
		ctl_attr(ino, !n->show, n->store, d, st);
		return 0;
	}
	if (ctl_is_mq_ino(ino)) {
		ret = ctl_mq(d, ino, &hctx, &mq_attr);
		if (!ret)
			ctl_attr(ino, !mq_attr, false, d, st);
		return ret;
	}
	if (!ctl_layer(d, ino, &dev, &a)) {
		ctl_attr(ino, !a, a && a->store, d, st);
		return 0;
	}
	blk_queue_lock(d->q);
	ret = ctl_tunable(d, ino, &t);
	if (!ret)
		ctl_attr(ino, false, t->set || t->store, d, st);
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
			ctl_attr(ctl_tunable_ino(d, idx), false, t->set || t->store, d, st);
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

int ctl_lookup(struct rqdisk *d, fuse_ino_t parent, const char *name, struct stat *st)
{
	fuse_ino_t ino;
	int top;

	if (ctl_is_mq_ino(parent)) {
		ino = ctl_mq_lookup(d, parent, name);
		return ino ? ctl_getattr(d, ino, st) : -ENOENT;
	}
	if (parent == CTL_IOSCHED)
		return ctl_lookup_tunable(d, name, st);
	if (ctl_is_layer_ino(parent))
		return ctl_lookup_attr(d, parent, name, st);
	for (size_t i = 0; i < NR_CTL_NODES; i++)
		if (ctl_nodes[i].parent == parent && !strcmp(ctl_nodes[i].name, name))
			return ctl_getattr(d, ctl_nodes[i].ino, st);
	if (parent == CTL_DEVICE)
		return ctl_lookup_layer(d, name, st);
	if (parent == CTL_ROOT && (ino = ctl_mq_lookup(d, parent, name)))
		return ctl_getattr(d, ino, st);
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
	struct blk_mq_hw_ctx *hctx;
	const char *mq_attr;
	int ret = -ENOENT;

	if (!n && !ctl_mq(d, ino, &hctx, &mq_attr)) /* counters: atomics, read without the lock */
		return mq_attr ? ctl_mq_show(hctx, mq_attr, buf, len) : -EISDIR;
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
	struct blk_mq_hw_ctx *hctx;
	const char *mq_attr = NULL;
	bool mq = !n && !ctl_mq(d, ino, &hctx, &mq_attr);
	struct ctl_file *f;
	int len;

	if ((n && !n->show) || (layer && !a) || (mq && !mq_attr))
		return -EISDIR;
	/* as kernfs: no opening for writing what cannot be written, even for root */
	if (writing && ((n && !n->store) || (layer && !a->store) || mq || !owner))
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
	blk_queue_lock(d->q); /* mq: every hardware queue's thread opens and releases */
	LIST_INSERT_HEAD(&d->ctl_files, f, link);
	blk_queue_unlock(d->q);
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

	if (!ctl_node(ino) && !ctl_is_layer_ino(ino) && !ctl_is_mq_ino(ino)) {
		blk_queue_lock(d->q);
		ret = ctl_tunable(d, ino, &t);
		blk_queue_unlock(d->q);
	}
	if (ret)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_buf(req, f->buf + from, n);
}

/* The write cache's cut, in power/ or in device/write-cache/. */
static bool is_power_cut(const struct blk_dev *dev, const struct dev_attr *a)
{
	const char *dir = dev->ops->ctl_dir;

	return dir && !strcmp(dir, "power") && !strcmp(a->name, "cut");
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

	if ((n && !n->store) || ctl_is_mq_ino(ino))
		return -EACCES;
	if (!n && !ctl_layer(d, ino, &dev, &a)) {
		if (!a || !a->store)
			return -EACCES;
		if (d->cut_all && is_power_cut(dev, a))
			ret = d->cut_all(d, val);
		else
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
	char val[CTL_VALUE_MAX];
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
	if (queue_is_mq(d->q))
		blk_mq_kick_marked(d->q); /* what a store let go (nr_requests) */
	if (ret < 0)
		fuse_reply_err(req, -ret);
	else if (!ret)
		fuse_reply_write(req, size);
}

void ctl_release(struct rqdisk *d, struct fuse_file_info *fi)
{
	struct ctl_file *f = (struct ctl_file *)(uintptr_t)fi->fh;

	blk_queue_lock(d->q);
	LIST_REMOVE(f, link);
	blk_queue_unlock(d->q);
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
	struct blk_mq_hw_ctx *hctx = NULL;
	const char *mq_attr;
	bool mq = !node && !ctl_mq(d, ino, &hctx, &mq_attr);
	fuse_ino_t parent = node ? node->parent : layer && !top ? CTL_DEVICE : CTL_ROOT;
	size_t used = 0, n;
	char lname[64];
	fuse_ino_t eino;
	bool edir;
	off_t i = 0;

	if (mq && hctx)
		parent = CTL_MQ_DIR;

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
	EMIT("..", parent, true);
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
	for (unsigned int k = 0;
	     (ino == CTL_ROOT || mq) && (eino = ctl_mq_entry(d, ino, k, lname, sizeof(lname), &edir));
	     k++)
		EMIT(lname, eino, edir);
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
	struct blk_mq_hw_ctx *hctx;
	const char *mq_attr;

	if (node)
		return !node->show;
	if (!ctl_mq(d, ino, &hctx, &mq_attr))
		return !mq_attr;
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
