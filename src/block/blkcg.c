/* SPDX-License-Identifier: BSD-3-Clause */
/* blkcg.c - the cgroups bios carry: one interned object per cgroup, named by path and id. */

/*
 * Linux hangs a blkcg_gq off every bio (bio_associate_blkg) and the
 * schedulers group queues by it.  Here the submitter (the FUSE frontend,
 * from the caller's pid; the replayer, from the trace) interns the
 * cgroup once and bios carry the pointer: a group lookup and the merge
 * rule are a pointer comparison, and no elevator reads /proc.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blkcg.h"
#include "blkdev.h"

/* FNV-1a: paths differ in their last characters as often as their first. */
static unsigned int blkcg_path_hash(const struct blkcg_table *t, const char *path)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *path; path++)
		h = (h ^ (unsigned char)*path) * 0x100000001b3ull;
	return (unsigned int)(h ^ (h >> 32)) & (t->slots - 1);
}

/* Fibonacci hashing: ids are often consecutive (inode numbers). */
static unsigned int blkcg_id_hash(const struct blkcg_table *t, uint64_t id)
{
	uint64_t h = id * 0x9e3779b97f4a7c15ull;

	return (unsigned int)(h >> 32) & (t->slots - 1);
}

/* cg[i] into the index, from slot h on: the index is never more than half full. */
static void blkcg_index_put(const struct blkcg_table *t, unsigned int *index, unsigned int h,
			    unsigned int i)
{
	while (index[h])
		h = (h + 1) & (t->slots - 1);
	index[h] = i + 1;
}

/* The index in cg of path's cgroup, or -1. */
static int blkcg_find_path(const struct blkcg_table *t, const char *path)
{
	for (unsigned int h = t->slots ? blkcg_path_hash(t, path) : 0; t->slots && t->by_path[h];
	     h = (h + 1) & (t->slots - 1))
		if (!strcmp(t->cg[t->by_path[h] - 1]->path, path))
			return (int)t->by_path[h] - 1;
	return -1;
}

static struct blkcg *blkcg_find_id(const struct blkcg_table *t, uint64_t id)
{
	for (unsigned int h = t->slots ? blkcg_id_hash(t, id) : 0; t->slots && t->by_id[h];
	     h = (h + 1) & (t->slots - 1))
		if (t->cg[t->by_id[h] - 1]->id == id)
			return t->cg[t->by_id[h] - 1];
	return NULL;
}

/* Room for n cgroups: the array, and both indexes made anew at 2 * n slots. */
static int blkcg_grow(struct blkcg_table *t, unsigned int n)
{
	struct blkcg **grown = realloc(t->cg, n * sizeof(*grown));
	unsigned int *by_path, *by_id;

	if (!grown)
		return -ENOMEM;
	t->cg = grown;
	by_path = calloc(2 * (size_t)n, sizeof(*by_path));
	by_id = calloc(2 * (size_t)n, sizeof(*by_id));
	if (!by_path || !by_id) {
		free(by_path);
		free(by_id);
		return -ENOMEM;
	}
	free(t->by_path);
	free(t->by_id);
	t->by_path = by_path;
	t->by_id = by_id;
	t->slots = 2 * n;
	t->alloc = n;
	for (unsigned int i = 0; i < t->nr; i++) {
		blkcg_index_put(t, by_path, blkcg_path_hash(t, t->cg[i]->path), i);
		if (t->cg[i]->id)
			blkcg_index_put(t, by_id, blkcg_id_hash(t, t->cg[i]->id), i);
	}
	return 0;
}

static const struct blkcg *blkcg_add(struct blkcg_table *t, const char *path, uint64_t id)
{
	struct blkcg *cg;

	if (t->nr == t->alloc && blkcg_grow(t, t->alloc ? 2 * t->alloc : 16))
		return NULL;
	cg = calloc(1, sizeof(*cg) + strlen(path) + 1);
	if (!cg)
		return NULL;
	strcpy(cg->path, path);
	cg->id = id;
	blkcg_index_put(t, t->by_path, blkcg_path_hash(t, path), t->nr);
	if (id)
		blkcg_index_put(t, t->by_id, blkcg_id_hash(t, id), t->nr);
	t->cg[t->nr++] = cg;
	return cg;
}

const struct blkcg *blkcg_intern(struct blkcg_table *t, const char *path, uint64_t id)
{
	struct blkcg *cg;
	int i;

	if (!path || path[0] != '/' || !path[1] || strlen(path) >= BLKCG_PATH_MAX)
		return NULL;
	i = blkcg_find_path(t, path);
	if (i < 0)
		return blkcg_add(t, path, id);
	cg = t->cg[i];
	if (!cg->id && id) { /* known now; no reader looks at it */
		cg->id = id;
		blkcg_index_put(t, t->by_id, blkcg_id_hash(t, id), (unsigned int)i);
	}
	return cg;
}

const struct blkcg *blkcg_intern_id(struct blkcg_table *t, uint64_t id)
{
	const struct blkcg *cg;
	char path[32];

	if (id <= 1)
		return NULL;
	cg = blkcg_find_id(t, id);
	if (cg)
		return cg;
	snprintf(path, sizeof(path), "/%" PRIu64, id);
	return blkcg_intern(t, path, id);
}

void blkcg_table_free(struct blkcg_table *t)
{
	for (unsigned int i = 0; i < t->nr; i++)
		free(t->cg[i]);
	free(t->cg);
	free(t->by_path);
	free(t->by_id);
	memset(t, 0, sizeof(*t));
}

/* ---- what elevators ask ---- */

const struct blkcg *blk_rq_cgroup(const struct request *rq)
{
	return rq->blkcg;
}

const char *blkcg_path(const struct blkcg *blkcg)
{
	return blkcg ? blkcg->path : "/";
}
