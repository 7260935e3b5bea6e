/* SPDX-License-Identifier: BSD-3-Clause */
/* control.h - the control tree beside the disk, shaped like /sys/block/<dev>/. */
#ifndef RQDISK_CONTROL_H
#define RQDISK_CONTROL_H

#include "frontend.h"

/*
 * Inodes: the fixed nodes first, from 1; from CTL_INO_LAYER_BASE the
 * directories of the device stack's layers, device/NAME/, CTL_LAYER_INOS
 * for each by its place in the stack (which never changes while mounted):
 * the directory, then its attrs in table order (an attr past the 30th is
 * not shown), the last the directory of its ctl_dir at the top (power/);
 * from CTL_INO_IOSCHED_BASE the running elevator's tunables,
 * CTL_TUNABLES_MAX inodes for each elevator instance (q->elevator_gen).
 * control_inode.c asserts that the ranges do not meet.
 */
#define CTL_INO_LAYER_BASE 512
#define CTL_LAYER_INOS 32
#define CTL_INO_IOSCHED_BASE 1000
#define CTL_TUNABLES_MAX 256

bool ctl_is_node(fuse_ino_t ino);
int ctl_lookup(struct rqdisk *d, fuse_ino_t parent, const char *name, struct stat *st);
int ctl_getattr(struct rqdisk *d, fuse_ino_t ino, struct stat *st);
/* owner: the caller is the mount's owner or root, who alone may write */
int ctl_open(struct rqdisk *d, fuse_ino_t ino, struct fuse_file_info *fi, bool owner);
void ctl_read(fuse_req_t req, struct rqdisk *d, fuse_ino_t ino, struct fuse_file_info *fi,
	      size_t size, off_t off);
/* The longest write taken, NUL included: a group_weights line names a cgroup path of up to PATH_MAX. */
#define CTL_VALUE_MAX (4096 + 64)

/* Answers req, at once or (a switch of elevators) once the new elevator runs. */
void ctl_write(fuse_req_t req, struct rqdisk *d, fuse_ino_t ino, const char *buf, size_t size,
	       bool owner);
void ctl_release(struct rqdisk *d, struct fuse_file_info *fi);
void ctl_cleanup(struct rqdisk *d);
void ctl_readdir(fuse_req_t req, struct rqdisk *d, fuse_ino_t ino, size_t size, off_t off);

#endif
