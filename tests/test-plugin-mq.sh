#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-plugin-mq.sh - test-plugin.sh on the multi-queue queue with two
# hardware queues: the idler holds every request back and asks for a
# wake-up (elv_schedule_dispatch), which the loop's timer must bring.
RQDISK_TEST_OPTS="--queue-mode=mq --hw-queues 2" # start_rqdisk adds it
source "$(dirname "$0")/test-plugin.sh"
