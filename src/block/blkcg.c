/* SPDX-License-Identifier: BSD-3-Clause */
/* blkcg.c - the cgroups bios carry: one interned object per cgroup, named by path and id. */

/*
 * Linux hangs a blkcg_gq off every bio (bio_associate_blkg) and the
 * schedulers group queues by it.  Here the submitter (the FUSE frontend,
 * from the caller's pid; the replayer, from the trace) interns the
 * cgroup once and bios carry the pointer: a group lookup and the merge
 * rule are a pointer comparison, and no elevator reads /proc.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blkcg.h"
#include "blkdev.h"

static const struct blkcg *blkcg_add(struct blkcg_table *t, const char *path, uint64_t id)
{
	struct blkcg *cg;

	if (t->nr == t->alloc) {
		unsigned int n = t->alloc ? 2 * t->alloc : 16;
		struct blkcg **grown = realloc(t->cg, n * sizeof(*grown));

		if (!grown)
			return NULL;
		t->cg = grown;
		t->alloc = n;
	}
	cg = calloc(1, sizeof(*cg));
	if (!cg)
		return NULL;
	strcpy(cg->path, path);
	cg->id = id;
	t->cg[t->nr++] = cg;
	return cg;
}

const struct blkcg *blkcg_intern(struct blkcg_table *t, const char *path, uint64_t id)
{
	if (!path || path[0] != '/' || !path[1] || strlen(path) >= BLKCG_PATH_MAX)
		return NULL;
	for (unsigned int i = 0; i < t->nr; i++)
		if (!strcmp(t->cg[i]->path, path)) {
			if (!t->cg[i]->id)
				t->cg[i]->id = id; /* known now; no reader looks at it */
			return t->cg[i];
		}
	return blkcg_add(t, path, id);
}

const struct blkcg *blkcg_intern_id(struct blkcg_table *t, uint64_t id)
{
	char path[32];

	if (id <= 1)
		return NULL;
	for (unsigned int i = 0; i < t->nr; i++)
		if (t->cg[i]->id == id)
			return t->cg[i];
	snprintf(path, sizeof(path), "/%" PRIu64, id);
	return blkcg_intern(t, path, id);
}

void blkcg_table_free(struct blkcg_table *t)
{
	for (unsigned int i = 0; i < t->nr; i++)
		free(t->cg[i]);
	free(t->cg);
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
