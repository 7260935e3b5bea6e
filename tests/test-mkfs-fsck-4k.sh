#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-mkfs-fsck-4k.sh - test-mkfs-fsck.sh on a disk of 4096-byte logical
# blocks, loop-attached with 4096-byte sectors.
mkfs_rqdisk_opts=(--logical-block-size 4096)
mkfs_losetup_opts=(--sector-size 4096)
source "$(dirname "$0")/test-mkfs-fsck.sh"
