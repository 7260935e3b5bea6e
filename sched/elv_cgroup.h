/* SPDX-License-Identifier: BSD-3-Clause */
/* elv_cgroup.h - what bfq's and cfq's groups share: a group's weight, the group_weights tunable. */
#ifndef RQDISK_ELV_CGROUP_H
#define RQDISK_ELV_CGROUP_H

#include "elevator.h"

#define ELV_CGROUP_PATH_MAX 4096 /* PATH_MAX, as the core's cgroups */
#define ELV_MAX_GROUP_WEIGHTS 256

/*
 * Where a group's weight comes from: /sys/fs/cgroup unless a test puts
 * its own here.  cgroup_weight returns the cgroup's weight, or 0 for
 * none set.  A request's group is the cgroup it carries
 * (blk_rq_cgroup()), which its submitter resolved: no elevator reads
 * /proc.
 */
struct elv_cgroup_ops {
	unsigned int (*cgroup_weight)(void *priv, const char *path);
	void *priv;
};

/*
 * The lookups for a queue on clock, the weight read from weight_file
 * ("default N") in the cgroup's directory, N in 1..max_weight.  On a
 * virtual clock (a replay, a test) the cgroups are not this system's:
 * none has a weight file, and group_weights gives theirs.
 */
void elv_cgroup_ops_init(struct elv_cgroup_ops *ops, const struct blk_clock *clock,
			 const char *weight_file);

/*
 * For tests: elevators made from now on take their lookups from ops
 * (copied), whatever their clock; NULL goes back to the rule above.
 */
void elv_cgroup_override(const struct elv_cgroup_ops *ops);

/* The group_weights tunable: "PATH WEIGHT" lines, set in order. */
struct elv_group_weight {
	char *path; /* its own copy */
	unsigned int weight;
};

struct elv_group_weights {
	struct elv_group_weight *w;
	unsigned int n;
};

unsigned int elv_group_weight_find(const struct elv_group_weights *gw, const char *path);
int elv_group_weights_show(const struct elv_group_weights *gw, char *buf, size_t len);
/*
 * A groups file's line, "PATH WEIGHT QUEUES", at buf + *n: 0 while there
 * is room for more, 1 once buf is full, -EINVAL on an error.
 */
int elv_groups_line(char *buf, size_t len, size_t *n, const char *path, unsigned int weight,
		    unsigned int queues);
/* WEIGHT 1..max sets, 0 or "default" removes; the group's path in path. -EINVAL for the rest. */
int elv_group_weights_store(struct elv_group_weights *gw, const char *buf, unsigned int max,
			    char *path);
void elv_group_weights_free(struct elv_group_weights *gw);

#endif
