#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-switch-fio-uring.sh - test-switch-fio.sh with FUSE requests on io_uring:
# a switch waits for the requests in flight while a ring request is handled.
RQDISK_TEST_OPTS=--fuse-uring # start_rqdisk adds it, and turns the kernel's side on
source "$(dirname "$0")/test-switch-fio.sh"
