/* SPDX-License-Identifier: BSD-3-Clause */
/* cfq_group.c - CFQ's groups: a cgroup's share of the disk, its weight over the time used. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfq_impl.h"

/* ---- groups ---- */

/* The tunable's weight for the group, else its cgroup's io.weight, else the default. */
static unsigned int cfq_group_weight(const struct cfq_data *cfqd, const char *path)
{
	unsigned int w = elv_group_weight_find(&cfqd->group_weights, path);

	if (!w)
		w = cfqd->cgroup.cgroup_weight(cfqd->cgroup.priv, path);
	return w >= 1 && w <= CFQ_WEIGHT_MAX ? w : CFQ_WEIGHT_DEFAULT;
}

/*
 * A new sync queue goes to the group of the cgroup its first request
 * carries (blk_rq_cgroup(), as 2.6.33's bio carried its blkio cgroup),
 * made on demand (cfq_find_alloc_cfqg).
 */
void cfq_group_attach(struct cfq_data *cfqd, struct cfq_queue *cfqq, const struct request *rq)
{
	const struct blkcg *blkcg = blk_rq_cgroup(rq);
	const char *path = blkcg_path(blkcg);
	struct cfq_group *g;

	if (!blkcg)
		return;
	LIST_FOREACH(g, &cfqd->groups, link)
		if (g->blkcg == blkcg)
			break;
	if (!g) {
		g = calloc(1, sizeof(*g));
		if (!g)
			return; /* its process is served in the root group */
		g->blkcg = blkcg;
		g->path = path; /* the cgroup outlives the queue */
		g->weight = cfq_group_weight(cfqd, path);
		g->vdisktime = cfqd->min_vdisktime;
		LIST_INSERT_HEAD(&cfqd->groups, g, link);
	}
	g->nr_queues++;
	cfqq->group = g;
}

void cfq_group_detach(struct cfq_data *cfqd, struct cfq_queue *cfqq)
{
	struct cfq_group *g = cfqq->group;

	if (!g || g == &cfqd->root_group || --g->nr_queues)
		return;
	LIST_REMOVE(g, link);
	free(g);
}

/* The active queue's slice is over: its group is charged the time, over its weight. */
void cfq_group_served(struct cfq_data *cfqd, struct cfq_queue *cfqq)
{
	uint64_t now = blk_clock_now(cfqd->clock);
	uint64_t used = now > cfqd->active_since ? now - cfqd->active_since : 0;

	cfqq->group->vdisktime += used * CFQ_WEIGHT_DEFAULT / cfqq->group->weight;
}

int cfq_group_weights_show(const struct elevator_queue *e, char *buf, size_t len)
{
	const struct cfq_data *cfqd = e->elevator_data;

	return elv_group_weights_show(&cfqd->group_weights, buf, len);
}

/* The groups there are: "PATH WEIGHT QUEUES" each, the latest made first (the root not listed). */
int cfq_groups_show(const struct elevator_queue *e, char *buf, size_t len)
{
	const struct cfq_data *cfqd = e->elevator_data;
	const struct cfq_group *g;
	size_t n = 0;

	if (len)
		buf[0] = '\0';
	LIST_FOREACH(g, &cfqd->groups, link) {
		int ret = elv_groups_line(buf, len, &n, g->path, g->weight, g->nr_queues);

		if (ret)
			return ret < 0 ? ret : (int)len;
	}
	return (int)n;
}

/* "PATH WEIGHT": WEIGHT 1..10000 sets, 0 or "default" removes; the group's weight follows. */
int cfq_group_weights_store(struct elevator_queue *e, const char *buf)
{
	struct cfq_data *cfqd = e->elevator_data;
	char path[ELV_CGROUP_PATH_MAX];
	struct cfq_group *g;

	if (elv_group_weights_store(&cfqd->group_weights, buf, CFQ_WEIGHT_MAX, path))
		return -EINVAL;
	if (!strcmp(path, "/"))
		cfqd->root_group.weight = cfq_group_weight(cfqd, path);
	LIST_FOREACH(g, &cfqd->groups, link)
		if (!strcmp(g->path, path))
			g->weight = cfq_group_weight(cfqd, path);
	return 0;
}
