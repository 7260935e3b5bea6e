#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-sigterm-mq-uring.sh - test-sigterm.sh on the multi-queue queue with two
# hardware queues whose threads take FUSE requests on their io_uring rings.
RQDISK_TEST_OPTS="--fuse-uring --queue-mode=mq --hw-queues 2" # start_rqdisk adds it
source "$(dirname "$0")/test-sigterm.sh"
