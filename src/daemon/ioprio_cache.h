/* SPDX-License-Identifier: BSD-3-Clause */
/* ioprio_cache.h - the I/O priority and cgroup of each process the disk serves, asked once a while per pid. */
#ifndef RQDISK_IOPRIO_CACHE_H
#define RQDISK_IOPRIO_CACHE_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "blkcg.h"
#include "ioprio.h"

/* Processes remembered at once; the least recently seen makes room. */
#define IOPRIO_CACHE_SLOTS 64

/*
 * How long a looked-up priority and cgroup are trusted.  ionice(1) may
 * change a running process's priority, a process may be moved to another
 * cgroup, and a pid may be reused by another process: a second is soon
 * enough for each to show, while system calls and a read of /proc per
 * FUSE request, on the one thread that serves them all, would not be.
 */
#define IOPRIO_CACHE_REFRESH_NS 1000000000ull

/* Where priorities come from: the kernel's, or a test's. */
struct ioprio_source {
	/* ioprio_get(IOPRIO_WHO_PROCESS, pid): the value, or -errno. */
	int (*get_ioprio)(void *arg, pid_t pid);
	/* getpriority(PRIO_PROCESS, pid): 0 and *nice, or -errno. */
	int (*get_nice)(void *arg, pid_t pid, int *nice);
	/* A monotonic clock, in nanoseconds. */
	uint64_t (*now)(void *arg);
	void *arg;
	/*
	 * The process's cgroup (v2): its path into path ("/" the root) and
	 * the cgroup's id (0 if not known), 0; or -errno.  NULL: every
	 * process is in the root.
	 */
	int (*get_cgroup)(void *arg, pid_t pid, char *path, size_t len, uint64_t *id);
};

struct ioprio_cache_entry {
	pid_t pid; /* 0: a free slot */
	unsigned short ioprio;
	const struct blkcg *blkcg; /* in the cache's table; NULL: the root */
	uint64_t looked_up; /* when, on the source's clock */
	uint64_t used;	    /* the cache's count of lookups when last asked for */
};

struct ioprio_cache {
	struct ioprio_source src;
	uint64_t refresh_ns;
	uint64_t uses;
	struct ioprio_cache_entry slot[IOPRIO_CACHE_SLOTS];
	struct blkcg_table cgroups; /* every cgroup seen, for as long as the cache */
	/*
	 * The cache whose table this one interns into: itself, or the disk's
	 * when each thread has a cache of its own (ioprio_cache_share_cgroups),
	 * so that one cgroup is one object whichever thread met it first.
	 */
	struct ioprio_cache *cgroups_owner;
	pthread_mutex_t cgroups_lock; /* the owner's: guards its table */
};

/* An empty cache over src, or over the kernel's priorities when src is NULL. */
void ioprio_cache_init(struct ioprio_cache *c, const struct ioprio_source *src);

/*
 * The priority pid's I/O is served at, as a bio carries it: never class
 * NONE (best effort at the level of the process's nice value, as Linux
 * does), IOPRIO_DEFAULT for a pid that is gone or was never a process.
 */
unsigned short ioprio_cache_get(struct ioprio_cache *c, pid_t pid);

/*
 * The cgroup pid's I/O is charged to, as a bio carries it (bi_blkcg),
 * looked up with the priority and trusted as long: NULL (the root) for a
 * pid that is gone, was never a process, or is in the root.  The object
 * lives until ioprio_cache_exit(), which must come after the last bio.
 */
const struct blkcg *ioprio_cache_blkcg(struct ioprio_cache *c, pid_t pid);

/*
 * c, a thread's own cache, interns its cgroups in owner's table (the
 * disk's) from now on; owner outlives c, and c keeps no cgroup of its own.
 */
void ioprio_cache_share_cgroups(struct ioprio_cache *c, struct ioprio_cache *owner);

/* Both at once, as a bio takes them: one look in the cache, not two. */
void ioprio_cache_lookup(struct ioprio_cache *c, pid_t pid, unsigned short *ioprio,
			 const struct blkcg **blkcg);

/* Free the cgroups: no bio or request may point at one any more. */
void ioprio_cache_exit(struct ioprio_cache *c);

/*
 * The v2 path ("0::PATH") of a /proc/PID/cgroup's text read from f, into
 * path: 0, -ENOENT (v1 alone) or -ENAMETOOLONG (len bytes or more).
 */
int ioprio_cgroup_v2_path(FILE *f, char *path, size_t len);

#endif
