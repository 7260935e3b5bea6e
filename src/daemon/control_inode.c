/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * control_inode.c - the control tree's inodes: the fixed nodes, each layer
 * of the device stack's range (its directory, its attrs, its directory at
 * the top), and the running elevator's tunables, numbered by the
 * elevator instance they belong to; what each inode stands for.
 */
#include <errno.h>
#include <string.h>

#include "control_impl.h"

_Static_assert(CTL_INO_END <= CTL_INO_MQ_BASE, "fixed nodes run into the mq/ inodes");
_Static_assert(CTL_INO_LAYER_BASE + DEV_MAX_LAYERS * CTL_LAYER_INOS <= CTL_INO_IOSCHED_BASE,
	       "the layers' inodes run into the tunables'");

const struct ctl_node *ctl_node(fuse_ino_t ino)
{
	for (size_t i = 0; i < NR_CTL_NODES; i++)
		if (ctl_nodes[i].ino == ino)
			return &ctl_nodes[i];
	return NULL;
}

/* The running elevator's tunables, or NULL; lock held. */
const struct elv_tunable *ctl_tunables(struct rqdisk *d)
{
	return d->q->elevator ? d->q->elevator->type->tunables : NULL;
}

/*
 * A tunable's inode names the elevator instance it belongs to as well as
 * its place in the table, as a sysfs attribute goes away with its
 * elevator: a file opened on cfq's quantum must not set the read_expire
 * of the deadline that runs after a switch.  Lock held.
 */
fuse_ino_t ctl_tunable_ino(struct rqdisk *d, size_t idx)
{
	return CTL_INO_IOSCHED_BASE + d->q->elevator_gen * CTL_TUNABLES_MAX + idx;
}

/*
 * The tunable inode ino stands for: -ESTALE if it belongs to an elevator
 * no longer running, -ENOENT if it never was one.  Lock held.
 */
int ctl_tunable(struct rqdisk *d, fuse_ino_t ino, const struct elv_tunable **tp)
{
	const struct elv_tunable *t = ctl_tunables(d);
	uint64_t gen, idx;

	if (ino < CTL_INO_IOSCHED_BASE)
		return -ENOENT;
	gen = (ino - CTL_INO_IOSCHED_BASE) / CTL_TUNABLES_MAX;
	idx = (ino - CTL_INO_IOSCHED_BASE) % CTL_TUNABLES_MAX;
	if (gen != d->q->elevator_gen)
		return gen < d->q->elevator_gen ? -ESTALE : -ENOENT;
	for (; t && t->name; t++, idx--)
		if (!idx) {
			*tp = t;
			return 0;
		}
	return -ENOENT;
}

bool ctl_is_layer_ino(fuse_ino_t ino)
{
	return ino >= CTL_INO_LAYER_BASE &&
	       ino < CTL_INO_LAYER_BASE + DEV_MAX_LAYERS * CTL_LAYER_INOS;
}

/* The directory of the stack's layer i (k 0), or its attr k - 1. */
fuse_ino_t ctl_layer_ino(size_t i, size_t k)
{
	return CTL_INO_LAYER_BASE + i * CTL_LAYER_INOS + k;
}


/*
 * The layer whose directory or file ino is, and the attr (NULL for the
 * directory); -ENOENT if none.  A layer without attrs has no directory.
 */
int ctl_layer(struct rqdisk *d, fuse_ino_t ino, struct blk_dev **devp,
		     const struct dev_attr **ap)
{
	const struct dev_attr *a;
	size_t i, k;

	if (!ctl_is_layer_ino(ino) || !d->stack)
		return -ENOENT;
	i = (ino - CTL_INO_LAYER_BASE) / CTL_LAYER_INOS;
	k = (ino - CTL_INO_LAYER_BASE) % CTL_LAYER_INOS;
	if (i >= d->stack->nr_layers || !(a = d->stack->layers[i].ops->attrs))
		return -ENOENT;
	if (k == CTL_TOP_DIR_K) {
		if (!ctl_layer_has_top_dir(d, i))
			return -ENOENT;
		k = 0; /* a directory of the layer's files */
	}
	for (; k > 1 && a->name; k--)
		a++;
	if (k && !a->name)
		return -ENOENT;
	*devp = (struct blk_dev *)&d->stack->layers[i];
	*ap = k ? a : NULL;
	return 0;
}

bool ctl_is_node(fuse_ino_t ino)
{
	return (ino > CTL_DISK && ino < CTL_INO_END) || ctl_is_layer_ino(ino) || ctl_is_mq_ino(ino) ||
	       ino >= CTL_INO_IOSCHED_BASE;
}

/*
 * The layer whose files also show at the top of the tree as name/ (its
 * ops' ctl_dir): the one nearest the queue.  Its index, or -1.
 */
int ctl_top_dir_layer(const struct rqdisk *d, const char *name)
{
	for (size_t i = 0; d->stack && i < d->stack->nr_layers; i++) {
		const struct dev_ops *ops = d->stack->layers[i].ops;

		if (ops->attrs && ops->ctl_dir && !strcmp(ops->ctl_dir, name))
			return (int)i;
	}
	return -1;
}

/* Whether layer i is the one its ctl_dir names at the top of the tree. */
bool ctl_layer_has_top_dir(const struct rqdisk *d, size_t i)
{
	const char *dir = d->stack->layers[i].ops->ctl_dir;

	return dir && d->stack->layers[i].ops->attrs && ctl_top_dir_layer(d, dir) == (int)i;
}
