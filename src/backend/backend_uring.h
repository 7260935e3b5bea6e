/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backend_uring.h - the backends that live on the daemon's io_uring loop:
 * "file", the image (today's io_uring path, O_DIRECT or not), and "null",
 * null_blk's instant device.  The stack's host is the loop (struct
 * uring_driver); both take the image's fd from it.
 */
#ifndef RQDISK_BACKEND_URING_H
#define RQDISK_BACKEND_URING_H

#include "backend.h"

extern const struct dev_ops dev_file_ops;
extern const struct dev_ops dev_null_ops;

#endif
