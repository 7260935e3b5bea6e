/* SPDX-License-Identifier: BSD-3-Clause */
/* control_impl.h - what the control tree's files share: its fixed nodes and its inodes. */
#ifndef RQDISK_CONTROL_IMPL_H
#define RQDISK_CONTROL_IMPL_H

#include "control.h"
#include "options.h" /* RQDISK_MAX_HW_QUEUES */

enum ctl_ino {
	CTL_ROOT = RQDISK_ROOT_INO,
	CTL_DISK = RQDISK_DISK_INO,
	CTL_QUEUE,
	CTL_IOSCHED,
	CTL_STAT,
	CTL_INFLIGHT,
	CTL_SIZE,
	CTL_RO,
	CTL_SCHEDULER,
	CTL_MAX_SECTORS_KB,
	CTL_MAX_HW_SECTORS_KB,
	CTL_MAX_SEGMENTS,
	CTL_MAX_SEGMENT_SIZE,
	CTL_LOGICAL_BLOCK_SIZE,
	CTL_PHYSICAL_BLOCK_SIZE,
	CTL_HW_SECTOR_SIZE,
	CTL_NR_REQUESTS,
	CTL_NOMERGES,
	CTL_ROTATIONAL,
	CTL_WRITE_CACHE,
	CTL_MODEL,
	CTL_TRACE,
	CTL_TRACE_NAME,
	CTL_TRACE_ENABLE,
	CTL_DEVICE,
	CTL_DEVICE_STACK,
	CTL_FUSE,
	CTL_FUSE_TRANSPORT,
	CTL_FUSE_RING_DEPTH,
	CTL_OPTIMAL_IO_SIZE,
	CTL_DISCARD_MAX_BYTES,
	CTL_WRITE_ZEROES_MAX_BYTES,
	CTL_DEVICE_LOST_WRITES,
	CTL_QUEUE_MODE,
	CTL_NR_HW_QUEUES,
	CTL_LOCK_STATS,
	CTL_LOCK_STATS_ENABLE,
	CTL_TRACE_CGROUP,
	CTL_INO_END,
};

struct ctl_node {
	enum ctl_ino ino;
	enum ctl_ino parent;
	const char *name;
	int (*show)(struct rqdisk *d, char *buf, size_t len); /* NULL: a directory */
	int (*store)(struct rqdisk *d, const char *buf);      /* NULL: read-only */
};

/* control_attrs.c: the fixed nodes, directories and attributes, in listing order. */
extern const struct ctl_node ctl_nodes[];
extern const size_t ctl_nr_nodes;
#define NR_CTL_NODES ctl_nr_nodes

/*
 * The last inode of a layer's range is the directory of its ctl_dir at the
 * top of the tree (power/, log/): a directory of its own, holding the same
 * files, since the kernel takes no second name for one directory inode
 * while the first is in use (a working directory there).
 */
#define CTL_TOP_DIR_K (CTL_LAYER_INOS - 1)

/* control_inode.c: what an inode stands for. */
const struct ctl_node *ctl_node(fuse_ino_t ino);
const struct elv_tunable *ctl_tunables(struct rqdisk *d);
fuse_ino_t ctl_tunable_ino(struct rqdisk *d, size_t idx);
int ctl_tunable(struct rqdisk *d, fuse_ino_t ino, const struct elv_tunable **tp);
bool ctl_is_layer_ino(fuse_ino_t ino);
fuse_ino_t ctl_layer_ino(size_t i, size_t k);
int ctl_layer(struct rqdisk *d, fuse_ino_t ino, struct blk_dev **devp,
	      const struct dev_attr **ap);
int ctl_top_dir_layer(const struct rqdisk *d, const char *name);
bool ctl_layer_has_top_dir(const struct rqdisk *d, size_t i);

/*
 * control_mq.c: mq/ on a multi-queue queue, from CTL_INO_MQ_BASE: mq/
 * itself, then CTL_MQ_INOS for each hardware queue N (N/, then its files).
 */
#define CTL_INO_MQ_BASE 100
#define CTL_MQ_DIR CTL_INO_MQ_BASE
#define CTL_MQ_INOS 6
struct blk_mq_hw_ctx;
bool ctl_is_mq_ino(fuse_ino_t ino);
int ctl_mq(const struct rqdisk *d, fuse_ino_t ino, struct blk_mq_hw_ctx **hctx,
	   const char **attr);
fuse_ino_t ctl_mq_lookup(const struct rqdisk *d, fuse_ino_t parent, const char *name);
fuse_ino_t ctl_mq_entry(const struct rqdisk *d, fuse_ino_t ino, unsigned int i, char *buf,
			size_t len, bool *dir);
int ctl_mq_show(const struct blk_mq_hw_ctx *hctx, const char *attr, char *buf, size_t len);

#endif
