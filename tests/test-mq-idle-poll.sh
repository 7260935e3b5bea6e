#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-mq-idle-poll.sh - --idle-poll on the multi-queue queue: a hardware
# queue's thread with nothing queued or in flight looks at its ring before
# it sleeps.  A writer at queue depth 1, pinned to CPU 0, with FUSE over
# io_uring (its requests come on hardware queue 0's ring): with
# --idle-poll 0 the hardware queues' threads sleep at least once a request
# (their voluntary context switches); with a poll time far longer than the
# gap between two requests the sleep before each next request is gone (at
# least one sleep a request fewer; what is left are waits for the image's
# I/O, which is never polled for).  The data reads back.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires_fuse_uring
requires taskset cmp dd
RQDISK_TEST_OPTS= # this test says itself how FUSE requests come

[ "$(getconf _NPROCESSORS_ONLN)" -ge 2 ] || skip "two CPUs online are needed"
taskset -c 0 true 2>/dev/null || skip "CPU 0 is not usable"

make_tmpdir tmp
mkdir "$tmp/mnt"
truncate -s 16M "$tmp/img"
count=512 # 4 KiB direct writes, one at a time
random_file "$tmp/data" $((count * 4096))
cleanup_fn _unmount "$tmp/mnt"

# Voluntary context switches of the hardware queues' threads: the daemon's
# threads but the loop's (its pid) and io_uring's workers (iou-wrk-*).
hwq_sleeps()
{
	local t n=0

	for t in /proc/"$rqdisk_pid"/task/*; do
		[ "${t##*/}" = "$rqdisk_pid" ] && continue
		[ "$(cat "$t/comm")" = rqdisk ] || continue
		n=$((n + $(awk '$1 == "voluntary_ctxt_switches:" { print $2 }' "$t/status")))
	done
	echo $n
}

# sleeps_for USEC: the hardware queues' threads' sleeps while $count writes go by.
sleeps_for()
{
	local before

	start_rqdisk --queue-mode=mq --hw-queues 2 --fuse-uring=on --elevator none \
		--idle-poll "$1" "$tmp/img" "$tmp/mnt"
	[ "$(cat "$tmp/mnt/fuse/transport")" = uring ] || fail "FUSE requests do not come on io_uring"
	before=$(hwq_sleeps)
	taskset -c 0 dd if="$tmp/data" of="$rqdisk_disk" bs=4k oflag=direct conv=notrunc \
		status=none || fail "writing with --idle-poll $1 failed"
	sleeps=$(($(hwq_sleeps) - before))
	taskset -c 0 dd if="$rqdisk_disk" of="$tmp/back" bs=4k count=$count iflag=direct \
		status=none || fail "reading back failed"
	stop_rqdisk
	cmp "$tmp/data" "$tmp/back" || fail "--idle-poll $1: the data read back differs"
	echo "--idle-poll $1: the hardware queues' threads slept $sleeps times for $count writes"
}

say "no poll: a sleep a request"
sleeps_for 0
[ "$sleeps" -ge "$count" ] || fail "only $sleeps sleeps for $count requests: the count proves nothing"
unpolled=$sleeps

say "a poll far longer than the gap between requests: no sleep before the next one"
sleeps_for 1000000
[ $((unpolled - sleeps)) -ge "$count" ] ||
	fail "the hardware queues' threads slept $sleeps times polling, $unpolled not: too many"
echo "PASS: test-mq-idle-poll.sh"
