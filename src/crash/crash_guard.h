/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crash_guard.h - the mapped log, guarded: another process may truncate the
 * file while rqdisk-crash reads it, and a read of a page past its new end
 * would end the run with SIGBUS, the FUSE mount and the temporary files
 * left behind.  Such a read finds zeros instead, and the guard remembers
 * it, so that the run can end in one line, the way any error does.
 */
#ifndef RQDISK_CRASH_GUARD_H
#define RQDISK_CRASH_GUARD_H

#include <stdbool.h>
#include <stddef.h>

/* Guards [map, map + len) (map page-aligned, from mmap): 0 or -errno. */
int crash_guard_watch(const void *map, size_t len);
/* Stops guarding, before the map goes. */
void crash_guard_unwatch(void);
/* Whether a read faulted past the file's end since the watch began. */
bool crash_guard_tripped(void);

#endif
