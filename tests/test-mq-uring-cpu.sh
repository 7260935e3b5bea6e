#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-mq-uring-cpu.sh - the multi-queue queue with FUSE over io_uring: each
# hardware queue's thread takes the FUSE requests of the CPUs mapped to it
# on its own ring, so a writer pinned to CPU 0 has every request dispatched
# by hardware queue 0 and none by queue 1, and pinned to CPU 1 the other way
# round (mq/N/dispatched), under none and kyber, whose lists are per
# hardware queue; neither the loop's thread nor the other hardware queue's
# is woken for each request (their voluntary context switches stay well
# under the requests' count); the data reads back as written.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires_fuse_uring
requires taskset cmp dd
RQDISK_TEST_OPTS= # this test says itself how FUSE requests come

requires_cpus_0_1

make_tmpdir tmp
mkdir "$tmp/mnt"
truncate -s 16M "$tmp/img"
count=256 # 4 KiB direct writes from each CPU
random_file "$tmp/data" $((2 * count * 4096))
cleanup_fn _unmount "$tmp/mnt"

dispatched()
{
	cat "$tmp/mnt/mq/$1/dispatched"
}

# The loop's thread (the daemon's first, its pid): how often it slept and woke.
loop_wakeups()
{
	awk '$1 == "voluntary_ctxt_switches:" { print $2 }' "/proc/$rqdisk_pid/task/$rqdisk_pid/status"
}

# The hardware queues' threads' voluntary context switches, queue 0's first:
# the daemon's threads named rqdisk but the loop's, in the order made.
hwq_wakeups()
{
	local t

	for t in $(ls /proc/"$rqdisk_pid"/task | sort -n); do
		[ "$t" = "$rqdisk_pid" ] && continue
		[ "$(cat "/proc/$rqdisk_pid/task/$t/comm")" = rqdisk ] || continue
		awk '$1 == "voluntary_ctxt_switches:" { print $2 }' "/proc/$rqdisk_pid/task/$t/status"
	done
}

# pinned_write CPU HALF: the HALF-th half of the data written from CPU, 4 KiB direct.
pinned_write()
{
	taskset -c "$1" dd if="$tmp/data" of="$rqdisk_disk" bs=4k count=$count skip=$(($2 * count)) \
		seek=$(($2 * count)) oflag=direct conv=notrunc status=none ||
		fail "writing from CPU $1 failed"
}

for e in none kyber; do
	say "$e: requests from CPU 0, then CPU 1, are dispatched by hardware queue 0, then 1"
	start_rqdisk --queue-mode=mq --hw-queues 2 --fuse-uring=on --elevator "$e" \
		"$tmp/img" "$tmp/mnt"
	[ "$(cat "$tmp/mnt/fuse/transport")" = uring ] || fail "FUSE requests do not come on io_uring"
	for cpu in 0 1; do
		other=$((1 - cpu))
		before=$(dispatched "$cpu")
		before_other=$(dispatched "$other")
		wakeups=$(loop_wakeups)
		read -r -a hwq <<<"$(hwq_wakeups | tr '\n' ' ')"
		pinned_write "$cpu" "$cpu"
		wakeups=$(($(loop_wakeups) - wakeups))
		read -r -a hwq_after <<<"$(hwq_wakeups | tr '\n' ' ')"
		other_wakeups=$((hwq_after[other] - hwq[other]))
		mine=$(($(dispatched "$cpu") - before))
		theirs=$(($(dispatched "$other") - before_other))
		echo "CPU $cpu: queue $cpu dispatched $mine, queue $other $theirs; the loop woke" \
			"$wakeups times, queue $other's thread $other_wakeups"
		[ "$mine" -ge "$count" ] ||
			fail "$e: hardware queue $cpu dispatched $mine of CPU $cpu's $count writes"
		[ "$theirs" = 0 ] ||
			fail "$e: hardware queue $other dispatched $theirs requests while CPU $cpu wrote"
		[ "$wakeups" -lt $((count / 4)) ] ||
			fail "$e: the loop's thread woke $wakeups times for $count requests: a hand-off"
		[ "$other_wakeups" -lt $((count / 4)) ] ||
			fail "$e: queue $other's thread woke $other_wakeups times for CPU $cpu's $count requests"
	done
	taskset -c 1 dd if="$rqdisk_disk" of="$tmp/back" bs=4k count=$((2 * count)) iflag=direct \
		status=none || fail "reading back failed"
	stop_rqdisk
	cmp "$tmp/data" "$tmp/back" || fail "$e: the data read back differs from what was written"
done
echo "PASS: test-mq-uring-cpu.sh"
