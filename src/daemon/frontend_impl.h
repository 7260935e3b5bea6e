/* SPDX-License-Identifier: BSD-3-Clause */
/* frontend_impl.h - what the frontend's two files share: the inodes, the owner, the data path. */
#ifndef RQDISK_FRONTEND_IMPL_H
#define RQDISK_FRONTEND_IMPL_H

#include "control.h"
#include "frontend.h"

static inline struct rqdisk *fe_disk(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static inline bool fe_is_disk(const struct rqdisk *d, fuse_ino_t ino)
{
	return d->file_mount ? ino == RQDISK_ROOT_INO : ino == RQDISK_DISK_INO;
}

/*
 * The caller is the mount's owner or root, who alone may write.  With
 * --allow-other anyone reaches the mount; the kernel's mode checks
 * (default_permissions) stop other users at open, and this stops them
 * too, also when they write through a handle the owner passed on.
 */
static inline bool fe_owner(fuse_req_t req, const struct rqdisk *d)
{
	uid_t uid = fuse_req_ctx(req)->uid;

	return uid == 0 || uid == d->uid;
}

static inline bool fe_is_ctl(const struct rqdisk *d, fuse_ino_t ino)
{
	return !d->file_mount && ctl_is_node(ino);
}

/* frontend_io.c: the disk's data, as bios */
void fe_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi);
void fe_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *bufv, off_t off,
		  struct fuse_file_info *fi);
void fe_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);
void fe_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t length,
		  struct fuse_file_info *fi);

#endif
