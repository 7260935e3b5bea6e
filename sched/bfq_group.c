/* SPDX-License-Identifier: BSD-3-Clause */
/* bfq_group.c - BFQ's groups: a process's cgroup, the group's weight, the group_weights tunable. */

/*
 * After Linux's block/bfq-cgroup.c, one level deep: every cgroup (v2)
 * path other than the root is a group of its own under the root, nested
 * ones included, and the queues of processes in the root cgroup are
 * scheduled beside the groups, as Linux's root group's are.  A process's
 * cgroup is read from /proc/PID/cgroup once, when its queue is made, and
 * a group's weight from io.bfq.weight in its cgroup directory once, when
 * the group is made: no request pays for a read of /proc or /sys, only
 * a process's first one (or its first after its queue was reaped, two
 * seconds idle), and a process moved to another cgroup is seen then.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bfq_impl.h"

/* Up to len - 1 bytes of a small file, NUL-terminated; -errno. */
static int bfq_read_small(const char *file, char *buf, size_t len)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* The "0::PATH" line of /proc/PID/cgroup (cgroup v2). */
static int bfq_sys_cgroup_of(void *priv, pid_t pid, char *path, size_t len)
{
	char file[64], buf[4096], *line, *nl;

	(void)priv;
	snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
	if (bfq_read_small(file, buf, sizeof(buf)))
		return -ENOENT;
	for (line = buf; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (!strncmp(line, "0::/", 4) && strlen(line + 3) < len) {
			strcpy(path, line + 3);
			return 0;
		}
	}
	return -ENOENT;
}

/* io.bfq.weight's "default N" in the cgroup's directory; 0 when absent or unreadable. */
static unsigned int bfq_sys_cgroup_weight(void *priv, const char *path)
{
	char file[BFQ_CGROUP_PATH_MAX + 64], buf[256];
	unsigned int w;

	(void)priv;
	snprintf(file, sizeof(file), "/sys/fs/cgroup%s/io.bfq.weight", path);
	if (bfq_read_small(file, buf, sizeof(buf)) || sscanf(buf, "default %u", &w) != 1 ||
	    w < BFQ_MIN_WEIGHT || w > BFQ_MAX_WEIGHT)
		return 0;
	return w;
}

static const struct bfq_cgroup_ops bfq_cgroup_sys = {
	.cgroup_of = bfq_sys_cgroup_of,
	.cgroup_weight = bfq_sys_cgroup_weight,
};

static int bfq_none_cgroup_of(void *priv, pid_t pid, char *path, size_t len)
{
	(void)priv, (void)pid, (void)path, (void)len;
	return -ENOENT;
}

static unsigned int bfq_none_cgroup_weight(void *priv, const char *path)
{
	(void)priv, (void)path;
	return 0;
}

static const struct bfq_cgroup_ops bfq_cgroup_none = {
	.cgroup_of = bfq_none_cgroup_of,
	.cgroup_weight = bfq_none_cgroup_weight,
};

/* The core's real clock (clock.c): the one place bfq looks past the elevator API. */
extern const struct blk_clock blk_real_clock;

/*
 * A request's pid is a process of this system only when the queue runs
 * on the real clock (the daemon); on a virtual one (a replayed trace, a
 * test) it names nothing here, and every process is in the root.
 */
const struct bfq_cgroup_ops *bfq_cgroup_ops_for(const struct blk_clock *clock)
{
	return clock == &blk_real_clock ? &bfq_cgroup_sys : &bfq_cgroup_none;
}

static struct bfq_group_weight *bfq_group_weight_find(const struct bfq_data *bfqd,
						      const char *path)
{
	for (unsigned int i = 0; i < bfqd->nr_group_weights; i++)
		if (!strcmp(bfqd->group_weights[i].path, path))
			return &bfqd->group_weights[i];
	return NULL;
}

/* The tunable's weight for the group, else its cgroup's, else the default. */
static unsigned int bfq_group_weight(const struct bfq_data *bfqd, const char *path)
{
	const struct bfq_group_weight *gw = bfq_group_weight_find(bfqd, path);
	unsigned int w;

	if (gw)
		return gw->weight;
	w = bfqd->cgroup.cgroup_weight(bfqd->cgroup.priv, path);
	return w ? w : BFQ_GROUP_DEFAULT_WEIGHT;
}

static struct bfq_group *bfq_group_get(struct bfq_data *bfqd, const char *path, uint64_t now)
{
	struct bfq_group *g;

	LIST_FOREACH(g, &bfqd->groups, link)
		if (!strcmp(g->path, path))
			return g;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL; /* its processes are served in the root */
	strcpy(g->path, path);
	bfq_sched_init(&g->sd);
	g->sd.class_idle_last_service = now;
	g->entity.sched_data = &bfqd->sd;
	g->entity.my_sched_data = &g->sd;
	g->entity.weight = bfq_group_weight(bfqd, path);
	LIST_INSERT_HEAD(&bfqd->groups, g, link);
	return g;
}

/* A new sync queue joins its process's group (bfq_bfqq_move at bic_set_bfqq). */
void bfq_group_attach(struct bfq_data *bfqd, struct bfq_queue *bfqq, uint64_t now)
{
	char path[BFQ_CGROUP_PATH_MAX];
	struct bfq_group *g;

	if (bfqd->cgroup.cgroup_of(bfqd->cgroup.priv, bfqq->pid, path, sizeof(path)) ||
	    !strcmp(path, "/"))
		return;
	g = bfq_group_get(bfqd, path, now);
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
	free(bfqd->group_weights);
}

int bfq_group_weights_show(const struct elevator_queue *e, char *buf, size_t len)
{
	const struct bfq_data *bfqd = e->elevator_data;
	size_t n = 0;

	if (len)
		buf[0] = '\0';
	for (unsigned int i = 0; i < bfqd->nr_group_weights && n < len; i++) {
		int w = snprintf(buf + n, len - n, "%s %u\n", bfqd->group_weights[i].path,
				 bfqd->group_weights[i].weight);

		if (w < 0)
			return -EINVAL;
		n += (size_t)w;
	}
	return (int)(n < len ? n : len);
}

/* "PATH WEIGHT": PATH absolute, no blanks; WEIGHT 1..1000, or 0 or "default" to remove. */
static int bfq_group_weights_parse(const char *buf, char *path, unsigned int *weight)
{
	const char *p = buf, *end;
	unsigned long v = 0;

	if (*p != '/')
		return -EINVAL;
	end = p + strcspn(p, " \t\n");
	if (*end != ' ' && *end != '\t')
		return -EINVAL;
	if ((size_t)(end - p) >= BFQ_CGROUP_PATH_MAX)
		return -EINVAL;
	memcpy(path, p, (size_t)(end - p));
	path[end - p] = '\0';
	p = end + strspn(end, " \t");
	if (!strncmp(p, "default", 7)) {
		p += 7;
	} else {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		for (; *p >= '0' && *p <= '9'; p++) {
			v = v * 10 + (unsigned long)(*p - '0');
			if (v > BFQ_MAX_WEIGHT)
				return -EINVAL;
		}
	}
	if (*p == '\n')
		p++;
	if (*p)
		return -EINVAL;
	*weight = (unsigned int)v;
	return 0;
}

int bfq_group_weights_store(struct elevator_queue *e, const char *buf)
{
	struct bfq_data *bfqd = e->elevator_data;
	char path[BFQ_CGROUP_PATH_MAX];
	struct bfq_group_weight *gw, *grown;
	struct bfq_group *g;
	unsigned int weight;

	if (bfq_group_weights_parse(buf, path, &weight))
		return -EINVAL;
	gw = bfq_group_weight_find(bfqd, path);
	if (!weight && gw) {
		memmove(gw, gw + 1,
			(size_t)(bfqd->group_weights + --bfqd->nr_group_weights - gw) * sizeof(*gw));
	} else if (weight && gw) {
		gw->weight = weight;
	} else if (weight) {
		if (bfqd->nr_group_weights >= BFQ_MAX_GROUP_WEIGHTS)
			return -EINVAL;
		grown = realloc(bfqd->group_weights, (bfqd->nr_group_weights + 1) * sizeof(*grown));
		if (!grown)
			return -EINVAL;
		bfqd->group_weights = grown;
		gw = &grown[bfqd->nr_group_weights++];
		strcpy(gw->path, path);
		gw->weight = weight;
	}
	LIST_FOREACH(g, &bfqd->groups, link)
		if (!strcmp(g->path, path))
			bfq_entity_set_weight(&g->entity, bfq_group_weight(bfqd, path));
	return 0;
}
