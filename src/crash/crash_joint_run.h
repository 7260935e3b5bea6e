/* SPDX-License-Identifier: BSD-3-Clause */
/* crash_joint_run.h - rqdisk-crash --order: the joint crash states of several disks, checked. */
#ifndef RQDISK_CRASH_JOINT_RUN_H
#define RQDISK_CRASH_JOINT_RUN_H

#include <stdbool.h>

/* Whether the command line asks for a joint run (--order before any "--"). */
bool joint_wanted(int argc, char **argv);
/* The whole run: rqdisk-crash's exit status. */
int joint_main(int argc, char **argv);

#endif
