#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-lock-stats.sh - queue/lock_stats and queue/lock_stats_enable: off by
# default and counting nothing; on, the acquisitions grow with the I/O,
# every p50 is at most its p99 and its max, the elevator's time per request
# is there under deadline (on the 2.6 queue and the multi-queue one) and
# zero under none; 0 resets, off stops counting, bad writes get EINVAL.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires dd python3

make_tmpdir tmp
mkdir "$tmp/mnt"

# snap: read queue/lock_stats once; get KEY: its value in that read.
snap()
{
	stats=$(cat "$q/lock_stats") || fail "reading queue/lock_stats failed"
}
get()
{
	local v

	v=$(sed -n "s/^$1=//p" <<<"$stats")
	[ -n "$v" ] || fail "queue/lock_stats has no $1: $stats"
	echo "$v"
}

# io N: N direct 4 KiB writes then N direct 4 KiB reads on the disk.
io()
{
	dd if=/dev/urandom of="$rqdisk_disk" bs=4k count="$1" oflag=direct conv=notrunc \
		status=none || fail "dd write failed"
	dd if="$rqdisk_disk" of=/dev/null bs=4k count="$1" iflag=direct status=none ||
		fail "dd read failed"
}

# ordered NAME: NAME's p50 <= p99 <= max.
ordered()
{
	local p50 p99 max

	p50=$(get "${1}_ns_p50")
	p99=$(get "${1}_ns_p99")
	max=$(get "${1}_ns_max")
	[ "$p50" -le "$p99" ] && [ "$p99" -le "$max" ] ||
		fail "$1: p50 $p50, p99 $p99, max $max are out of order"
}

# elevator_timed N: the stats show at least N requests through the elevator, with time.
elevator_timed()
{
	local n

	n=$(get elevator_requests)
	[ "$n" -ge "$1" ] || fail "elevator_requests is $n after $1 requests or more"
	[ "$(get elevator_calls)" -ge "$n" ] || fail "fewer elevator calls than requests"
	[ "$(get elevator_ns_total)" -gt 0 ] || fail "no time in the elevator: $stats"
	[ "$(get elevator_ns_per_request)" -gt 0 ] || fail "no elevator ns per request"
	[ "$(get elevator_rq_ns_p50)" -gt 0 ] || fail "elevator_rq_ns_p50 is 0"
	ordered elevator_rq
}

start_rqdisk --create 64M "$tmp/img" "$tmp/mnt"
q=$tmp/mnt/queue

say "off by default: nothing counted"
[ "$(cat "$q/lock_stats_enable")" = 0 ] || fail "lock_stats_enable is not 0 by default"
io 64
snap
echo "$stats"
[ "$(get enabled)" = 0 ] || fail "lock_stats says enabled"
[ "$(get acquisitions)" = 0 ] || fail "acquisitions counted while off"
[ "$(get elevator)" = deadline ] || fail "elevator is not deadline"
[ "$(get elevator_requests)" = 0 ] || fail "elevator requests counted while off"

say "on: the acquisitions grow with the I/O, p50 <= p99 <= max"
echo 1 >"$q/lock_stats_enable" || fail "writing 1 to lock_stats_enable failed"
[ "$(cat "$q/lock_stats_enable")" = 1 ] || fail "lock_stats_enable is not 1"
io 256
snap
echo "$stats"
[ "$(get enabled)" = 1 ] || fail "lock_stats does not say enabled"
a1=$(get acquisitions)
# each request takes the lock to be submitted, dispatched and ended
[ "$a1" -ge $((3 * 512)) ] || fail "$a1 acquisitions for 512 requests"
[ "$(get hold_ns_total)" -gt 0 ] || fail "no hold time"
ordered wait
ordered hold
elevator_timed 512
io 256
snap
a2=$(get acquisitions)
[ "$a2" -ge $((a1 + 3 * 512)) ] || fail "acquisitions went from $a1 to $a2 over 512 more requests"
elevator_timed 1024

say "0 resets"
echo 0 >"$q/lock_stats" || fail "writing 0 to lock_stats failed"
snap
[ "$(get acquisitions)" -lt 200 ] || fail "$(get acquisitions) acquisitions just after a reset"
# (the loop runs the queue now and then: a dispatch that finds nothing may be counted)
[ "$(get elevator_requests)" = 0 ] || fail "elevator requests left after a reset"
[ "$(get elevator_rq_ns_total)" = 0 ] || fail "elevator time per request left after a reset"
[ "$(get enabled)" = 1 ] || fail "a reset switched the statistics off"

say "bad writes are refused with EINVAL, nothing changed"
for v in 1 -1 00 abc " 0" ""; do
	write_fails "$q/lock_stats" "$v"
done
for v in 2 -1 on abc 1x ""; do
	write_fails "$q/lock_stats_enable" "$v"
done
[ "$(cat "$q/lock_stats_enable")" = 1 ] || fail "a refused write changed lock_stats_enable"

say "none: the lock is timed, no elevator is"
echo none >"$q/scheduler" || fail "switching to none failed"
echo 0 >"$q/lock_stats"
io 256
snap
echo "$stats"
[ "$(get elevator)" = none ] || fail "elevator is not none"
[ "$(get acquisitions)" -ge $((3 * 512)) ] || fail "acquisitions do not grow under none"
ordered hold
for k in elevator_requests elevator_calls elevator_ns_total elevator_ns_per_request \
	elevator_rq_ns_p50 elevator_rq_ns_p99; do
	[ "$(get $k)" = 0 ] || fail "$k is $(get $k) under none"
done

say "off again: the counts stay as they were"
echo deadline >"$q/scheduler" || fail "switching back to deadline failed"
echo 0 >"$q/lock_stats_enable" || fail "writing 0 to lock_stats_enable failed"
snap
before=$(get acquisitions)
io 64
snap
[ "$(get enabled)" = 0 ] || fail "lock_stats still says enabled"
[ "$(get acquisitions)" = "$before" ] || fail "acquisitions went from $before to $(get acquisitions) while off"
stop_rqdisk

say "the multi-queue queue: the hardware queues' threads take the same lock"
start_rqdisk --queue-mode=mq --hw-queues 2 "$tmp/img" "$tmp/mnt"
echo 1 >"$q/lock_stats_enable" || fail "writing 1 to lock_stats_enable failed"
io 256
snap
echo "$stats"
[ "$(get acquisitions)" -ge $((3 * 512)) ] || fail "$(get acquisitions) acquisitions in mq mode"
ordered wait
ordered hold
elevator_timed 512
stop_rqdisk
