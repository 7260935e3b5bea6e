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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crash_id.h"
#include "crash_log.h"

/* The most writes a joint state loses: --drop's bound. */
#define CRASH_JOINT_MAX_DROP 3

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

/*
 * One joint state (crash_joint_id.h names it): the order's first n
 * entries made, less the writes in drop, and the torn write, when torn,
 * made only in its first torn_k units of torn_a bytes.
 */
struct crash_joint_state {
	size_t n;
	struct crash_joint_ref drop[CRASH_JOINT_MAX_DROP]; /* in the order's sequence */
	unsigned int nr_drop;
	bool torn;
	struct crash_joint_ref torn_w;
	uint64_t torn_a, torn_k;
};

/*
 * Whether st is a state of j: 0, or -EINVAL with one line in why (n past
 * the order's end, a disk past the last, a lost or torn write that is
 * not among the volatile writes at n, lost writes out of the order's
 * sequence, a torn write with no such units), or -ENOMEM.
 */
int crash_joint_check(const struct crash_joint *j, const struct crash_joint_state *st, char *why,
		      size_t whylen);

/*
 * Disk d's part of st (checked) as a state of its log alone: "entry:" its
 * position, its lost writes, its torn write.  0 or -ENOMEM; crash_resolve
 * takes *id, crash_id_free frees it.
 */
int crash_joint_disk_id(const struct crash_joint *j, const struct crash_joint_state *st,
			unsigned int d, struct crash_id *id);

/* The torn lengths (crash_torn_ks) of write w in units of a bytes: none for a discard. */
size_t crash_joint_torn_ks(const struct crash_joint *j, struct crash_joint_ref w, uint64_t a,
			   uint64_t ks[3]);

void crash_joint_free(struct crash_joint *j);

#endif
