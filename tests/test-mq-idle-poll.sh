#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-mq-idle-poll.sh - --idle-poll on the multi-queue queue: a hardware
# queue's thread looks at its ring before it sleeps while nothing is queued
# or in flight.  A writer at queue depth 1, pinned to CPU 0 (the daemon to
# CPU 1), with FUSE over io_uring (its requests come on hardware queue 0's
# ring), on --null with irqmode=none (a request ends as it is dispatched: no wait for a device):
# with --idle-poll 0 the hardware queues' threads sleep (their voluntary
# context switches) for one request in four at least, as the next request
# comes after they went to sleep; with a poll time far longer than the gap
# between two requests, for fewer than one in sixteen, and under a quarter
# as often as without.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires_fuse_uring
requires taskset dd
RQDISK_TEST_OPTS= # this test says itself how FUSE requests come

requires_cpus_0_1

make_tmpdir tmp
mkdir "$tmp/mnt"
truncate -s 16M "$tmp/img"
count=512 # 4 KiB direct writes, one at a time
random_file "$tmp/data" $((count * 4096))
cleanup_fn _unmount "$tmp/mnt"

# sleeps_for USEC: the hardware queues' threads' sleeps while $count writes go by.
sleeps_for()
{
	local before

	start_rqdisk --queue-mode=mq --hw-queues 2 --fuse-uring=on --elevator none \
		--null=irqmode=none --idle-poll "$1" "$tmp/img" "$tmp/mnt"
	[ "$(cat "$tmp/mnt/fuse/transport")" = uring ] || fail "FUSE requests do not come on io_uring"
	# The daemon's threads on CPU 1, the writer on CPU 0: on one CPU the
	# writer, woken by an answer, may preempt the thread before it waits,
	# which then finds the next request there without sleeping
	taskset -a -p -c 1 "$rqdisk_pid" >/dev/null || fail "cannot move the daemon to CPU 1"
	before=$(rqdisk_hwq_sleeps)
	taskset -c 0 dd if="$tmp/data" of="$rqdisk_disk" bs=4k oflag=direct conv=notrunc \
		status=none || fail "writing with --idle-poll $1 failed"
	sleeps=$(($(rqdisk_hwq_sleeps) - before))
	stop_rqdisk
	echo "--idle-poll $1: the hardware queues' threads slept $sleeps times for $count writes"
}

say "no poll: the threads sleep between requests"
sleeps_for 0
[ "$sleeps" -ge $((count / 4)) ] ||
	fail "only $sleeps sleeps for $count requests: the count proves nothing"
unpolled=$sleeps

say "a poll far longer than the gap between requests: hardly a sleep"
sleeps_for 1000000
[ "$sleeps" -lt $((count / 16)) ] && [ $((4 * sleeps)) -lt "$unpolled" ] ||
	fail "the hardware queues' threads slept $sleeps times for $count requests while polling"
echo "PASS: test-mq-idle-poll.sh"
