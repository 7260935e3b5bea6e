#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-sigterm-mq.sh - test-sigterm.sh on the multi-queue queue with two
# hardware queues: their threads take no signal, the loop's thread does.
RQDISK_TEST_OPTS="--queue-mode=mq --hw-queues 2" # start_rqdisk adds it
source "$(dirname "$0")/test-sigterm.sh"
