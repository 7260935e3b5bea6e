#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-mq-poll-usec.sh - --poll-usec on the multi-queue queue: a hardware
# queue's thread spins for its next completion or request before it
# sleeps, I/O in flight or not.  A writer at queue depth 1, pinned to CPU
# 0, with FUSE over io_uring, on the image opened with O_DIRECT (each write
# waits for the device, and ends on the hardware queue's own ring, so no
# other thread of the daemon takes the queue lock meanwhile, on which a
# spinning thread could sleep on a loaded machine): --idle-poll alone,
# however long, lets the thread sleep while each write is out (a voluntary
# context switch for one write in two at least); --poll-usec far longer
# than a write takes keeps it awake (fewer than one in sixteen).  It is for
# the multi-queue queue only, and takes 0 to 1000000.
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
count=256 # 4 KiB direct writes, one at a time
random_file "$tmp/data" $((count * 4096))
cleanup_fn _unmount "$tmp/mnt"

say "--poll-usec is for mq, 0 to 1000000"
for bad in "--poll-usec 10" "--queue-mode=mq --poll-usec 1000001" "--queue-mode=mq --poll-usec 5us"; do
	status=0
	# shellcheck disable=SC2086 # the options are words
	"$RQDISK" -f $bad "$tmp/img" "$tmp/mnt" 2>"$tmp/err" || status=$?
	[ $status = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q -- "--poll-usec" "$tmp/err" ||
		fail "rqdisk $bad: status $status, $(cat "$tmp/err")"
	no_mount_under "$tmp" || fail "rqdisk $bad left a mount"
done

# sleeps_with OPTIONS...: the thread's sleeps while $count writes go by
sleeps_with()
{
	local before

	start_rqdisk --queue-mode=mq --hw-queues 1 --fuse-uring=on --elevator none --direct \
		"$@" "$tmp/img" "$tmp/mnt"
	[ "$(cat "$tmp/mnt/fuse/transport")" = uring ] || fail "FUSE requests do not come on io_uring"
	# the daemon on CPU 1, the writer on CPU 0, as test-mq-idle-poll: no preemption by the writer
	taskset -a -p -c 1 "$rqdisk_pid" >/dev/null || fail "cannot move the daemon to CPU 1"
	before=$(rqdisk_hwq_sleeps)
	taskset -c 0 dd if="$tmp/data" of="$rqdisk_disk" bs=4k oflag=direct conv=notrunc \
		status=none || fail "writing with $* failed"
	sleeps=$(($(rqdisk_hwq_sleeps) - before))
	stop_rqdisk
	echo "$*: the hardware queue's thread slept $sleeps times for $count writes"
}

say "--idle-poll alone: the thread sleeps while each request is out"
sleeps_with --idle-poll 1000000
[ "$sleeps" -ge $((count / 2)) ] ||
	fail "only $sleeps sleeps for $count writes to the device: the count proves nothing"
unpolled=$sleeps

say "--poll-usec far longer than a request: it stays awake"
sleeps_with --idle-poll 0 --poll-usec 1000000
[ "$sleeps" -lt $((count / 16)) ] && [ $((4 * sleeps)) -lt "$unpolled" ] ||
	fail "the hardware queue's thread slept $sleeps times for $count requests with --poll-usec"
echo "PASS: test-mq-poll-usec.sh"
