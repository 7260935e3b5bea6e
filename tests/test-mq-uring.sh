#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-mq-uring.sh - test-mq.sh with FUSE requests on the hardware queues'
# io_uring rings.
RQDISK_TEST_OPTS=--fuse-uring # start_rqdisk adds it, and turns the kernel's side on
source "$(dirname "$0")/test-mq.sh"
