/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crash_server.h - the crash states as files of a FUSE mount in a private
 * directory: one file, of a new inode, per state while it is checked.
 */
#ifndef RQDISK_CRASH_SERVER_H
#define RQDISK_CRASH_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "crash_overlay.h"

struct crash_server;

/* Mounts an empty directory at mnt, served by its own threads: 0 or -errno, why said. */
int server_start(struct crash_server **out, const char *mnt, uint64_t size, char *why,
		 size_t whylen);

/* Serves o (the server owns it from now) at a new path: 0 or -ENOMEM.  *handle removes it. */
int server_add(struct crash_server *s, struct ovl *o, char *path, size_t pathlen,
	       uint64_t *handle);

/* The state's file is gone; its memory once nothing holds it open. */
void server_remove(struct crash_server *s, uint64_t handle);

/* The time spent answering reads so far. */
uint64_t server_read_ns(struct crash_server *s);

/* Unmounts (lazily, so a checker that still holds a file cannot stop it) and frees. */
void server_stop(struct crash_server *s);

#endif
