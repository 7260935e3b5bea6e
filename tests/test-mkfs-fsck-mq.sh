#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-mkfs-fsck-mq.sh - test-mkfs-fsck.sh on the multi-queue queue with two
# hardware queues.
mkfs_rqdisk_opts=(--queue-mode=mq --hw-queues 2)
mkfs_losetup_opts=()
source "$(dirname "$0")/test-mkfs-fsck.sh"
