#!/bin/bash
# test-mkfs-fsck-uring.sh - test-mkfs-fsck.sh with FUSE requests on io_uring.
mkfs_rqdisk_opts=(--fuse-uring)
source "$(dirname "$0")/test-mkfs-fsck.sh"
