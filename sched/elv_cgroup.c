/* SPDX-License-Identifier: BSD-3-Clause */
/* elv_cgroup.c - what bfq's and cfq's groups share: a group's weight, the group_weights tunable. */

/*
 * A group's weight is the "default N" line of a file in its cgroup's
 * directory under /sys/fs/cgroup, read when the group is made, never per
 * request.  The file is opened non-blocking: cgroupfs answers from
 * memory.  Which cgroup a request is in comes with the request.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elv_cgroup.h"

/* Up to len - 1 bytes of a small file, NUL-terminated; -errno. */
static int elv_read_small(const char *file, char *buf, size_t len)
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

/* The cgroup file's weight within 1..max, 0 if absent or out of range. */
static unsigned int elv_cgroup_read_weight(const char *path, const char *weight_file,
					   unsigned int max)
{
	char file[ELV_CGROUP_PATH_MAX + 64], buf[256];
	unsigned int w;

	snprintf(file, sizeof(file), "/sys/fs/cgroup%s/%s", path, weight_file);
	if (elv_read_small(file, buf, sizeof(buf)) || sscanf(buf, "default %u", &w) != 1 ||
	    w < 1 || w > max)
		return 0;
	return w;
}

static unsigned int elv_sys_cgroup_weight(void *priv, const char *path)
{
	const char *weight_file = priv;

	/* both files hold at most 10000 (io.weight); the elevator bounds its own */
	return elv_cgroup_read_weight(path, weight_file, 10000);
}

static unsigned int elv_none_cgroup_weight(void *priv, const char *path)
{
	(void)priv, (void)path;
	return 0;
}

/* The core's real clock (clock.c): the one place an elevator looks past its API. */
extern const struct blk_clock blk_real_clock;

static struct elv_cgroup_ops elv_cgroup_test_ops;
static bool elv_cgroup_overridden;

void elv_cgroup_override(const struct elv_cgroup_ops *ops)
{
	elv_cgroup_overridden = ops != NULL;
	if (ops)
		elv_cgroup_test_ops = *ops;
}

void elv_cgroup_ops_init(struct elv_cgroup_ops *ops, const struct blk_clock *clock,
			 const char *weight_file)
{
	bool real = clock == &blk_real_clock;

	if (elv_cgroup_overridden) {
		*ops = elv_cgroup_test_ops;
		return;
	}

	ops->cgroup_weight = real ? elv_sys_cgroup_weight : elv_none_cgroup_weight;
	ops->priv = (void *)weight_file;
}

/* ---- the group_weights tunable ---- */

static struct elv_group_weight *elv_group_weight_slot(const struct elv_group_weights *gw,
						      const char *path)
{
	for (unsigned int i = 0; i < gw->n; i++)
		if (!strcmp(gw->w[i].path, path))
			return &gw->w[i];
	return NULL;
}

unsigned int elv_group_weight_find(const struct elv_group_weights *gw, const char *path)
{
	const struct elv_group_weight *w = elv_group_weight_slot(gw, path);

	return w ? w->weight : 0;
}

int elv_group_weights_show(const struct elv_group_weights *gw, char *buf, size_t len)
{
	size_t n = 0;

	if (len)
		buf[0] = '\0';
	for (unsigned int i = 0; i < gw->n && n < len; i++) {
		int w = snprintf(buf + n, len - n, "%s %u\n", gw->w[i].path, gw->w[i].weight);

		if (w < 0)
			return -EINVAL;
		n += (size_t)w;
	}
	return (int)(n < len ? n : len);
}

int elv_groups_line(char *buf, size_t len, size_t *n, const char *path, unsigned int weight,
		    unsigned int queues)
{
	int w = snprintf(buf + *n, len - *n, "%s %u %u\n", path, weight, queues);

	if (w < 0)
		return -EINVAL;
	*n += (size_t)w;
	return *n >= len;
}

/* "PATH WEIGHT": PATH absolute, no blanks; WEIGHT 0..max or "default" (0). */
static int elv_group_weights_parse(const char *buf, unsigned int max, char *path,
				   unsigned int *weight)
{
	const char *p = buf, *end;
	unsigned long v = 0;

	if (*p != '/')
		return -EINVAL;
	end = p + strcspn(p, " \t\n");
	if ((*end != ' ' && *end != '\t') || (size_t)(end - p) >= ELV_CGROUP_PATH_MAX)
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
			if (v > max)
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

int elv_group_weights_store(struct elv_group_weights *gw, const char *buf, unsigned int max,
			    char *path)
{
	struct elv_group_weight *w, *grown;
	unsigned int weight;

	if (elv_group_weights_parse(buf, max, path, &weight))
		return -EINVAL;
	w = elv_group_weight_slot(gw, path);
	if (!weight && w) { /* the others keep their order: the file lists them as set */
		free(w->path);
		memmove(w, w + 1, (size_t)(gw->w + --gw->n - w) * sizeof(*w));
	} else if (weight && w) {
		w->weight = weight;
	} else if (weight) {
		if (gw->n >= ELV_MAX_GROUP_WEIGHTS)
			return -EINVAL;
		char *copy = strdup(path);

		grown = copy ? realloc(gw->w, (gw->n + 1) * sizeof(*grown)) : NULL;
		if (!grown) {
			free(copy);
			return -EINVAL;
		}
		gw->w = grown;
		w = &grown[gw->n++];
		w->path = copy;
		w->weight = weight;
	}
	return 0;
}

void elv_group_weights_free(struct elv_group_weights *gw)
{
	for (unsigned int i = 0; i < gw->n; i++)
		free(gw->w[i].path);
	free(gw->w);
	gw->w = NULL;
	gw->n = 0;
}
