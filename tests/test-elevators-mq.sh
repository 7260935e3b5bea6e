#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-elevators-mq.sh - test-elevators.sh on the multi-queue queue, with one
# hardware queue and with two: every elevator carries a file system there too.
elevators_configs=("--queue-mode=mq --hw-queues 1" "--queue-mode=mq --hw-queues 2")

# elevators_check OPTION...: the queue is the multi-queue one, with the hardware queues asked for
elevators_check()
{
	local opts="$*" want

	want=${opts##*--hw-queues }

	[ "$(cat "$tmp/mnt/queue/queue_mode")" = mq ] || fail "queue/queue_mode is not mq"
	[ "$(cat "$tmp/mnt/queue/nr_hw_queues")" = "$want" ] ||
		fail "queue/nr_hw_queues is $(cat "$tmp/mnt/queue/nr_hw_queues"), not $want"
}
source "$(dirname "$0")/test-elevators.sh"
