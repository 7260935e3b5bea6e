/* SPDX-License-Identifier: BSD-3-Clause */
/* bfq_group.c - BFQ's groups: a process's cgroup, the group's weight, the group_weights tunable. */

/*
 * After Linux's block/bfq-cgroup.c, one level deep: every cgroup (v2)
 * path other than the root is a group of its own under the root, nested
 * ones included, and the queues of processes in the root cgroup are
 * scheduled beside the groups, as Linux's root group's are.  A queue's
 * group is the cgroup its first request carries (blk_rq_cgroup(), which
 * the submitter resolved, as Linux's bio carries its blkcg), and a
 * group's weight is read from io.bfq.weight in its cgroup directory once,
 * when the group is made: no request pays for a read of /sys.  A process
 * moved to another cgroup is seen when its queue is made again (after it
 * was reaped, two seconds idle).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfq_impl.h"

/* The tunable's weight for the group, else its cgroup's, else the default. */
static unsigned int bfq_group_weight(const struct bfq_data *bfqd, const char *path)
{
	unsigned int w = elv_group_weight_find(&bfqd->group_weights, path);

	if (w)
		return w;
	w = bfqd->cgroup.cgroup_weight(bfqd->cgroup.priv, path);
	return w >= BFQ_MIN_WEIGHT && w <= BFQ_MAX_WEIGHT ? w : BFQ_GROUP_DEFAULT_WEIGHT;
}

static struct bfq_group *bfq_group_get(struct bfq_data *bfqd, const struct blkcg *blkcg,
				       uint64_t now)
{
	const char *path = blkcg_path(blkcg);
	struct bfq_group *g;

	LIST_FOREACH(g, &bfqd->groups, link)
		if (g->blkcg == blkcg)
			return g;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL; /* its processes are served in the root */
	g->blkcg = blkcg;
	g->path = path; /* the cgroup outlives the queue */
	bfq_sched_init(&g->sd);
	g->sd.class_idle_last_service = now;
	g->entity.sched_data = &bfqd->sd;
	g->entity.my_sched_data = &g->sd;
	g->entity.weight = bfq_group_weight(bfqd, path);
	LIST_INSERT_HEAD(&bfqd->groups, g, link);
	return g;
}

/* A new sync queue joins the group of rq's cgroup (bfq_bfqq_move at bic_set_bfqq). */
void bfq_group_attach(struct bfq_data *bfqd, struct bfq_queue *bfqq, const struct request *rq,
		      uint64_t now)
{
	const struct blkcg *blkcg = blk_rq_cgroup(rq);
	struct bfq_group *g;

	if (!blkcg)
		return;
	g = bfq_group_get(bfqd, blkcg, now);
	if (!g)
		return;
	g->nr_queues++;
	bfqq->group = g;
	bfqq->entity.parent = &g->entity;
	bfqq->entity.sched_data = &g->sd;
}

/* The queue is freed, out of every tree; the group goes with its last queue. */
void bfq_group_detach(struct bfq_data *bfqd, struct bfq_queue *bfqq)
{
	struct bfq_group *g = bfqq->group;

	(void)bfqd;
	if (!g || --g->nr_queues)
		return;
	bfq_forget_entity(&g->entity);
	LIST_REMOVE(g, link);
	free(g);
}

void bfq_groups_exit(struct bfq_data *bfqd)
{
	elv_group_weights_free(&bfqd->group_weights);
}

int bfq_group_weights_show(const struct elevator_queue *e, char *buf, size_t len)
{
	const struct bfq_data *bfqd = e->elevator_data;

	return elv_group_weights_show(&bfqd->group_weights, buf, len);
}

/* The groups there are: "PATH WEIGHT QUEUES" each, the latest made first. */
int bfq_groups_show(const struct elevator_queue *e, char *buf, size_t len)
{
	const struct bfq_data *bfqd = e->elevator_data;
	const struct bfq_group *g;
	size_t n = 0;

	if (len)
		buf[0] = '\0';
	LIST_FOREACH(g, &bfqd->groups, link) {
		int ret = elv_groups_line(buf, len, &n, g->path, g->entity.weight, g->nr_queues);

		if (ret)
			return ret < 0 ? ret : (int)len;
	}
	return (int)n;
}

/* "PATH WEIGHT": WEIGHT 1..1000 sets, 0 or "default" removes; the group's weight follows. */
int bfq_group_weights_store(struct elevator_queue *e, const char *buf)
{
	struct bfq_data *bfqd = e->elevator_data;
	char path[ELV_CGROUP_PATH_MAX];
	struct bfq_group *g;

	if (elv_group_weights_store(&bfqd->group_weights, buf, BFQ_MAX_WEIGHT, path))
		return -EINVAL;
	LIST_FOREACH(g, &bfqd->groups, link)
		if (!strcmp(g->path, path))
			bfq_entity_set_weight(&g->entity, bfq_group_weight(bfqd, path));
	return 0;
}
