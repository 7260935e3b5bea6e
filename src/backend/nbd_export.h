/* SPDX-License-Identifier: BSD-3-Clause */
/* nbd_export.h - what an NBD export says of itself: the disk's size, flags and limits. */
#ifndef RQDISK_NBD_EXPORT_H
#define RQDISK_NBD_EXPORT_H

#include <libnbd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device.h"

struct nbd_export {
	int64_t size; /* bytes, which a new connection must find again */
	bool read_only, can_flush, can_fua;
	uint64_t max_io; /* bytes a read or write command carries at most */
	unsigned int block; /* the logical block size every command is aligned to */
};

/*
 * Read what the export on h says into ex and lim: its size (capacity),
 * flags, and block sizes as the queue's limits.  0, or -errno with a
 * one-line reason in why.
 */
int nbd_export_limits(struct nbd_export *ex, struct nbd_handle *h, struct dev_limits *lim,
		      char *why, size_t whylen);
/* Flush and FUA, read again on a new connection. */
void nbd_export_flags(struct nbd_export *ex, struct nbd_handle *h);
/*
 * Whether h reached the export ex is (its size and read-only flag, block
 * sizes the disk's commands still fit); false is said.
 */
bool nbd_export_same(const struct nbd_export *ex, struct nbd_handle *h, const char *uri);

#endif
