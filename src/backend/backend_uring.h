/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backend_uring.h - the backends whose I/O the host's loop carries out
 * (dev_host_ops.submit_io: the daemon's io_uring ring): "file", the image
 * (O_DIRECT or not), and "null", null_blk's instant device.
 */
#ifndef RQDISK_BACKEND_URING_H
#define RQDISK_BACKEND_URING_H

#include <sys/stat.h>

#include "backend.h"

extern const struct dev_ops dev_file_ops;
extern const struct dev_ops dev_null_ops;

/*
 * The image at path, stat()ed into st: a regular file, and where
 * lim->capacity is 0 (the host does not know it) the disk's size, the
 * file's, a non-zero multiple of lim->logical_block_size.  0, or -errno
 * with a one-line reason in why.
 */
int file_image_size(const char *path, struct dev_limits *lim, struct stat *st, char *why,
		    size_t whylen);

/*
 * The null backend's keys, "KEY=VALUE,..." as --null= gives them, checked
 * as its open checks them: 0, or -EINVAL with a one-line reason in why.
 */
int null_check_keys(const char *keys, char *why, size_t whylen);

/* Write-zeroes the file backend dev did by writing zeros (its file system zeroes no range). */
unsigned long file_backend_zero_writes(const struct blk_dev *dev);

#endif
