/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * control_mq.c - the control tree's mq/ directory on a multi-queue queue,
 * as /sys/block/<dev>/mq/: a directory N/ per hardware queue with its
 * nr_tags and cpu_list, and the dispatched, merged and run counts that
 * Linux keeps in debugfs.  Every file is read-only; its inode is fixed by
 * the queue's number, which never changes while mounted.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "blk_mq.h"
#include "control_impl.h"

static const char *const ctl_mq_attrs[CTL_MQ_INOS - 1] = {
	"nr_tags", "cpu_list", "dispatched", "merged", "run",
};

_Static_assert(CTL_INO_MQ_BASE + 1 + RQDISK_MAX_HW_QUEUES * CTL_MQ_INOS <= CTL_INO_LAYER_BASE,
	       "the mq/ inodes run into the layers'");

static unsigned int ctl_mq_nr(const struct rqdisk *d)
{
	return queue_is_mq(d->q) ? d->q->mq->set->nr_hw_queues : 0;
}

bool ctl_is_mq_ino(fuse_ino_t ino)
{
	return ino >= CTL_INO_MQ_BASE && ino <= CTL_INO_MQ_BASE + RQDISK_MAX_HW_QUEUES * CTL_MQ_INOS;
}

/* Hardware queue n's directory (k 0), or its file k - 1. */
static fuse_ino_t ctl_mq_ino(unsigned int n, unsigned int k)
{
	return CTL_INO_MQ_BASE + 1 + n * CTL_MQ_INOS + k;
}

/*
 * What ino is: mq/ itself (*hctx NULL), a hardware queue's directory
 * (*attr NULL) or one of its files; -ENOENT on a 2.6 queue or past its
 * hardware queues.
 */
int ctl_mq(const struct rqdisk *d, fuse_ino_t ino, struct blk_mq_hw_ctx **hctx,
	   const char **attr)
{
	unsigned int n, k;

	if (!ctl_is_mq_ino(ino) || !queue_is_mq(d->q))
		return -ENOENT;
	*hctx = NULL;
	*attr = NULL;
	if (ino == CTL_MQ_DIR)
		return 0;
	n = (unsigned int)(ino - CTL_INO_MQ_BASE - 1) / CTL_MQ_INOS;
	k = (unsigned int)(ino - CTL_INO_MQ_BASE - 1) % CTL_MQ_INOS;
	if (n >= ctl_mq_nr(d))
		return -ENOENT;
	*hctx = &d->q->mq->hctxs[n];
	*attr = k ? ctl_mq_attrs[k - 1] : NULL;
	return 0;
}

/* name in the mq directory parent (mq/ at the root, N in mq/, a file in N/): its inode, or 0. */
fuse_ino_t ctl_mq_lookup(const struct rqdisk *d, fuse_ino_t parent, const char *name)
{
	struct blk_mq_hw_ctx *hctx;
	const char *attr;
	char num[16];

	if (parent == CTL_ROOT)
		return queue_is_mq(d->q) && !strcmp(name, "mq") ? CTL_MQ_DIR : 0;
	if (ctl_mq(d, parent, &hctx, &attr) || attr)
		return 0;
	for (unsigned int n = 0; !hctx && n < ctl_mq_nr(d); n++) {
		snprintf(num, sizeof(num), "%u", n);
		if (!strcmp(num, name))
			return ctl_mq_ino(n, 0);
	}
	for (unsigned int k = 1; hctx && k < CTL_MQ_INOS; k++)
		if (!strcmp(ctl_mq_attrs[k - 1], name))
			return ctl_mq_ino(hctx->queue_num, k);
	return 0;
}

/*
 * Entry i of directory ino beyond its fixed nodes (mq/ for the root, the
 * queues for mq/, the files for N/): its name in buf and its inode, or 0
 * past the last.
 */
fuse_ino_t ctl_mq_entry(const struct rqdisk *d, fuse_ino_t ino, unsigned int i, char *buf,
			size_t len, bool *dir)
{
	struct blk_mq_hw_ctx *hctx;
	const char *attr;

	if (ino == CTL_ROOT) {
		if (i || !queue_is_mq(d->q))
			return 0;
		snprintf(buf, len, "mq");
		*dir = true;
		return CTL_MQ_DIR;
	}
	if (ctl_mq(d, ino, &hctx, &attr) || attr)
		return 0;
	*dir = !hctx;
	if (!hctx) {
		if (i >= ctl_mq_nr(d))
			return 0;
		snprintf(buf, len, "%u", i);
		return ctl_mq_ino(i, 0);
	}
	if (i >= CTL_MQ_INOS - 1)
		return 0;
	snprintf(buf, len, "%s", ctl_mq_attrs[i]);
	return ctl_mq_ino(hctx->queue_num, i + 1);
}

/* A file's text: what /sys/block/<dev>/mq/N/ATTR (or its debugfs twin) shows. */
int ctl_mq_show(const struct blk_mq_hw_ctx *hctx, const char *attr, char *buf, size_t len)
{
	return blk_mq_hw_sysfs_show(hctx, attr, buf, len);
}
