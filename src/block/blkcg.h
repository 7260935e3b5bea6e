/* SPDX-License-Identifier: BSD-3-Clause */
/* blkcg.h - the cgroups bios carry: one interned object per cgroup, named by path and id. */
#ifndef RQDISK_BLKCG_H
#define RQDISK_BLKCG_H

#include <stdint.h>

#include <rqdisk/blk_types.h>

/*
 * The longest cgroup path kept, NUL included: PATH_MAX, as no path under
 * the cgroup mount is longer; a longer one is taken for the root.
 */
#define BLKCG_PATH_MAX 4096

struct blkcg {
	uint64_t id; /* the kernel's cgroup id (its directory's inode), 0 if not known */
	char path[]; /* under the cgroup (v2) root, as /proc/PID/cgroup says; its own length */
};

/*
 * The cgroups one submitter has seen, each made once and never freed
 * before the table: a bio may point at one for as long as the queue it
 * went to lives.  The table is not locked: one thread interns at a time
 * (the daemon's threads that make bios take the disk's cache's lock for it),
 * and the objects never change once made, so elevators on other threads
 * read them under the queue lock the bio was submitted under.
 */
struct blkcg_table {
	struct blkcg **cg;
	unsigned int nr, alloc;
	/*
	 * Where each cgroup is found by path and by id (those with one): an
	 * open-addressed index of 2 * alloc slots each, holding i + 1 for
	 * cg[i] (0: empty).  A trace may name a cgroup per I/O: no lookup
	 * walks them all.
	 */
	unsigned int *by_path, *by_id;
	unsigned int slots;
};

/*
 * The cgroup of path (and id, when known), made on first sight; NULL for
 * the root ("/"), a path that is not absolute or too long, or no memory:
 * the bio is then served as the root's, as Linux's is without a blkcg.
 */
const struct blkcg *blkcg_intern(struct blkcg_table *t, const char *path, uint64_t id);

/*
 * The cgroup a trace knows by its id alone (blktrace's cgroup records):
 * named "/ID" (decimal) so that group_weights can weigh it; NULL for
 * 0 and 1 (none, and the root cgroup's id).
 */
const struct blkcg *blkcg_intern_id(struct blkcg_table *t, uint64_t id);

/* Free every cgroup: no bio or request may point at one any more. */
void blkcg_table_free(struct blkcg_table *t);

#endif
