#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-sigterm-uring.sh - test-sigterm.sh with FUSE requests on io_uring.
RQDISK_TEST_OPTS=--fuse-uring # start_rqdisk adds it, and turns the kernel's side on
source "$(dirname "$0")/test-sigterm.sh"
