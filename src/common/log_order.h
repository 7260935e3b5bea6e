/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log_order.h - the shared order of several disks' write logs: a small
 * file of rqdisk's own, written beside the disks' dm-log-writes logs by
 * their log-writes filters (order=FILE) and read by rqdisk-crash.
 *
 * Each disk's log stays a plain dm-log-writes log, which replay-log and
 * rqdisk-crash replay alone; what one log cannot say is where its entries
 * fall among another disk's.  The order file says that, one line per
 * entry of any of the logs, in the order the entries were made:
 *
 *   rqdisk-log-order 1\n      the header: the format and its version
 *   D\n                       the next entry of disk D's log (D decimal,
 *   ...                       0 to LOG_ORDER_MAX_DISKS - 1, no sign, no
 *                             leading zero)
 *
 * Disk D's K-th line is its log's entry K - 1, so the lines of disk D
 * number exactly its log's entries.  It is not in the logs' entry blocks:
 * replay-log refuses an entry whose block is not zero past the entry, so
 * nothing may be hidden there, and a log must replay alone.
 */
#ifndef RQDISK_LOG_ORDER_H
#define RQDISK_LOG_ORDER_H

#include <stddef.h>
#include <stdint.h>

#define LOG_ORDER_HEADER "rqdisk-log-order 1\n"
#define LOG_ORDER_MAX_DISKS 16

/*
 * The disk of each entry, in order, from the file's text (len bytes):
 * *disks a malloc'd array of *nr, each below nr_disks.  0, or -EINVAL with
 * one line in why naming the line at fault (-ENOMEM: out of memory).
 */
int log_order_parse(const char *text, size_t len, unsigned int nr_disks, uint8_t **disks,
		    size_t *nr, char *why, size_t whylen);

#endif
