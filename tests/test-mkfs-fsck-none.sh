#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-mkfs-fsck-none.sh - test-mkfs-fsck.sh with no elevator (--elevator none).
mkfs_rqdisk_opts=(--elevator none)
mkfs_losetup_opts=()
source "$(dirname "$0")/test-mkfs-fsck.sh"
