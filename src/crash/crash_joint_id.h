/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crash_joint_id.h - the IDs that name the joint crash states of several
 * disks (rqdisk-crash --order), as text:
 *
 *   JOINT = "joint:" N { "-" D "." E } [ "~" D "." E "@" A "/" K ]
 *
 * The order's first N entries made; each "-D.E", entry E of disk D's log,
 * lost (in the order's sequence); "~D.E@A/K" that write torn: only its
 * part in the first K of the disk's units of A bytes made.  Numbers as in
 * crash_id.h: decimal, no sign, no leading zeros, so a state has one ID.
 */
#ifndef RQDISK_CRASH_JOINT_ID_H
#define RQDISK_CRASH_JOINT_ID_H

#include <stdbool.h>
#include <stddef.h>

#include "crash_joint.h"

/* Room for any joint ID's text and its NUL. */
#define CRASH_JOINT_ID_MAX 256

/*
 * s as a joint ID: 0, or -EINVAL with one line in why naming s and where
 * it went wrong.  Only its text is checked: crash_joint_check says whether
 * it is a state of some disks' logs.
 */
int crash_joint_id_parse(const char *s, struct crash_joint_state *st, char *why, size_t whylen);

/* st's ID into buf (CRASH_JOINT_ID_MAX bytes). */
void crash_joint_id_format(const struct crash_joint_state *st, char *buf, size_t len);

#endif
