#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-mkfs-fsck-mq-uring.sh - test-mkfs-fsck.sh on the multi-queue queue with
# two hardware queues, FUSE requests on their io_uring rings.
mkfs_rqdisk_opts=(--queue-mode=mq --hw-queues 2)
mkfs_losetup_opts=()
RQDISK_TEST_OPTS=--fuse-uring # start_rqdisk adds it, and turns the kernel's side on
source "$(dirname "$0")/test-mkfs-fsck.sh"
