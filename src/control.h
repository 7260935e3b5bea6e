/* control.h - the control tree beside the disk, shaped like /sys/block/<dev>/. */
#ifndef RQDISK_CONTROL_H
#define RQDISK_CONTROL_H

#include "frontend.h"

/* Inodes below this are fixed nodes; the running elevator's tunables follow it. */
#define CTL_INO_IOSCHED_BASE 1000

bool ctl_is_node(fuse_ino_t ino);
int ctl_lookup(struct rqdisk *d, fuse_ino_t parent, const char *name, struct stat *st);
int ctl_getattr(struct rqdisk *d, fuse_ino_t ino, struct stat *st);
int ctl_open(struct rqdisk *d, fuse_ino_t ino, struct fuse_file_info *fi);
void ctl_read(fuse_req_t req, struct fuse_file_info *fi, size_t size, off_t off);
int ctl_write(struct rqdisk *d, fuse_ino_t ino, const char *buf, size_t size);
void ctl_release(struct fuse_file_info *fi);
void ctl_readdir(fuse_req_t req, struct rqdisk *d, fuse_ino_t ino, size_t size, off_t off);

#endif
