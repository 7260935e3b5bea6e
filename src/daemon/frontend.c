/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * frontend.c - the disk as a FUSE file (low-level API): its inodes and
 * attributes, opens and releases, beside the control tree's; the data
 * path is frontend_io.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <string.h>
#include <sys/stat.h>

#include "disk_files.h"
#include "frontend_impl.h"

#define FE_MAX_BACKGROUND 128      /* requests the kernel keeps outstanding */

static void fe_disk_attr(const struct rqdisk *d, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = d->file_mount ? RQDISK_ROOT_INO : RQDISK_DISK_INO;
	st->st_mode = S_IFREG | (d->read_only ? 0444 : 0644);
	st->st_nlink = 1;
	st->st_uid = d->uid;
	st->st_gid = d->gid;
	st->st_size = (off_t)d->size;
	st->st_blksize = d->lbs;
	st->st_blocks = (blkcnt_t)(d->size >> SECTOR_SHIFT);
	st->st_atim = st->st_mtim = st->st_ctim = d->mtime;
}

static void fe_root_attr(const struct rqdisk *d, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = RQDISK_ROOT_INO;
	st->st_mode = S_IFDIR | 0755;
	st->st_nlink = 2;
	st->st_uid = d->uid;
	st->st_gid = d->gid;
	st->st_atim = st->st_mtim = st->st_ctim = d->mtime;
}

static int fe_attr(struct rqdisk *d, fuse_ino_t ino, struct stat *st)
{
	if (fe_is_disk(d, ino))
		fe_disk_attr(d, st);
	else if (ino == RQDISK_ROOT_INO)
		fe_root_attr(d, st);
	else if (fe_is_ctl(d, ino))
		return ctl_getattr(d, ino, st);
	else
		return -ENOENT;
	return 0;
}

static void fe_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	conn->max_write = FE_MAX_IO;
	conn->max_read = FE_MAX_IO;
	conn->max_readahead = FE_MAX_IO;
	conn->max_background = FE_MAX_BACKGROUND;
	conn->congestion_threshold = FE_MAX_BACKGROUND * 3 / 4;
	if (conn->capable & FUSE_CAP_ASYNC_DIO)
		conn->want |= FUSE_CAP_ASYNC_DIO;
	/* O_TRUNC on a disk is ignored, as on a block device */
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	conn->want &= ~(unsigned int)(FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE |
				      FUSE_CAP_SPLICE_MOVE);
}

static void fe_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct rqdisk *d = fe_disk(req);
	struct fuse_entry_param e = { 0 };

	int err = 0;

	if (d->file_mount)
		err = ENOENT;
	else if (parent == RQDISK_ROOT_INO && !strcmp(name, RQDISK_DISK_NAME))
		fe_disk_attr(d, &e.attr);
	else
		err = -ctl_lookup(d, parent, name, &e.attr);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	/* the control tree changes with the elevator: no caching of names or values */
	e.ino = e.attr.st_ino;
	fuse_reply_entry(req, &e);
}

static void fe_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;
	int err;

	(void)fi;
	err = fe_attr(fe_disk(req), ino, &st);
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_attr(req, &st, 0);
}

/* A disk's size is fixed: truncating it is refused as on a block device. */
static void fe_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct rqdisk *d = fe_disk(req);
	struct stat st;
	int err;

	(void)fi;
	err = fe_attr(d, ino, &st);
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	/* control files take O_TRUNC, as sysfs attributes do */
	if ((to_set & FUSE_SET_ATTR_SIZE) && fe_is_disk(d, ino) && (uint64_t)attr->st_size != d->size) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	fuse_reply_attr(req, &st, 0);
}

#ifndef FOPEN_PARALLEL_DIRECT_WRITES
#define FOPEN_PARALLEL_DIRECT_WRITES (1 << 6)
#endif

/*
 * The disk's open reply, by hand: libfuse 3.14 has no field for
 * FOPEN_PARALLEL_DIRECT_WRITES.  Without it the kernel holds the inode lock
 * exclusively while it sends each direct write (with async DIO, not until
 * the write ends).  Kernels before 6.2 ignore the flag.  Overlapping
 * writes stay safe: the frontend's range lock orders them.
 */
static void fe_reply_disk_open(fuse_req_t req, const struct fuse_file_info *fi)
{
	struct fuse_open_out out = {
		.fh = fi->fh,
		.open_flags = FOPEN_DIRECT_IO | FOPEN_PARALLEL_DIRECT_WRITES,
	};
	struct iovec iov = { &out, sizeof(out) };

	fuse_reply_iov(req, &iov, 1);
}

static void fe_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct rqdisk *d = fe_disk(req);
	bool writing = (fi->flags & O_ACCMODE) != O_RDONLY;
	struct fe_file *f;
	int err;

	if (fe_is_ctl(d, ino)) {
		err = ctl_open(d, ino, fi, fe_owner(req, d));
		if (err)
			fuse_reply_err(req, -err);
		else
			fuse_reply_open(req, fi);
		return;
	}
	if (!fe_is_disk(d, ino)) {
		fuse_reply_err(req, ino == RQDISK_ROOT_INO ? EISDIR : ENOENT);
		return;
	}
	if (d->read_only && writing) {
		fuse_reply_err(req, EROFS);
		return;
	}
	if (writing && !fe_owner(req, d)) {
		fuse_reply_err(req, EACCES);
		return;
	}
	f = fe_file_open(d);
	if (!f) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	fi->fh = (uintptr_t)f;
	fe_reply_disk_open(req, fi); /* direct I/O: every I/O reaches the queue */
}

static void fe_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct rqdisk *d = fe_disk(req);

	(void)fi;
	if (d->file_mount)
		fuse_reply_err(req, ENOTDIR);
	else
		ctl_readdir(req, d, ino, size, off);
}

static void fe_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct rqdisk *d = fe_disk(req);
	struct statvfs sv = {
		.f_bsize = d->lbs,
		.f_frsize = d->lbs,
		.f_blocks = d->size / d->lbs,
		.f_files = 1,
		.f_namemax = 255,
	};

	(void)ino;
	fuse_reply_statfs(req, &sv);
}

static void fe_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

static void fe_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct rqdisk *d = fe_disk(req);

	if (fe_is_ctl(d, ino))
		ctl_release(d, fi);
	else if (fe_is_disk(d, ino))
		fe_file_release(d, (struct fe_file *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

const struct fuse_lowlevel_ops rqdisk_fuse_ops = {
	.init = fe_init,
	.lookup = fe_lookup,
	.getattr = fe_getattr,
	.setattr = fe_setattr,
	.open = fe_open,
	.read = fe_read,
	.write_buf = fe_write_buf,
	.flush = fe_flush,
	.release = fe_release,
	.fsync = fe_fsync,
	.readdir = fe_readdir,
	.statfs = fe_statfs,
	.fallocate = fe_fallocate,
};
