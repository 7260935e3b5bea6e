/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crash_joint.h - several disks' logs read with their shared order
 * (log_order.h, the log-writes filter's order=): every entry of every log
 * in the one sequence the disks made them, each disk's position at any
 * point of it, and the writes of all the disks that a power failure there
 * may lose.  What a joint crash state of several disks is built from.
 */
#ifndef RQDISK_CRASH_JOINT_H
#define RQDISK_CRASH_JOINT_H

#include <stddef.h>

#include "crash_log.h"

/* One entry of one disk's log. */
struct crash_joint_ref {
	unsigned int disk;
	size_t entry;
};

struct crash_joint {
	unsigned int nr_disks;
	const struct crash_log *const *logs;
	struct crash_joint_ref *seq; /* every entry of every log, in the disks' order */
	size_t nr;
};

/*
 * The order file's text (len bytes) over the logs of nr_disks disks (disk
 * d's log is logs[d]; the caller keeps the array and the logs while j is
 * used): 0, or -EINVAL
 * with one line in why ("order line 7: ...", or a disk whose lines are not
 * its log's entries), or -ENOMEM.
 */
int crash_joint_init(struct crash_joint *j, const struct crash_log *const *logs,
		     unsigned int nr_disks, const char *order, size_t len, char *why, size_t whylen);

/* Each disk's position (its entries [0, pos[d]) applied) once the first n of seq are. */
void crash_joint_positions(const struct crash_joint *j, size_t n, size_t *pos);

/*
 * The entries every disk may lose were the power cut once the first n of
 * seq are made: each disk's writes after its last flush (crash_volatile),
 * in seq's order, into out (room for the sum of the logs' entries), their
 * number in *count.  0, or -ENOMEM.
 */
int crash_joint_volatile(const struct crash_joint *j, size_t n, struct crash_joint_ref *out,
			 size_t *count);

void crash_joint_free(struct crash_joint *j);

#endif
