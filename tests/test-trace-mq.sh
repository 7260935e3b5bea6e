#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-trace-mq.sh - a trace of --queue-mode=mq --hw-queues 2 is a file per hardware queue,
# NAME.blktrace.0 and .1, whose records name it in blkparse's cpu column: writes submitted
# on a CPU of hardware queue 0 are queued (Q) with cpu 0, those on a CPU of hardware queue 1
# with cpu 1; each hardware queue's issues (D) less its requeues (R) are what mq/N/dispatched
# counts; blkparse reads every record (none dropped, no skips) and sums each CPU apart.
# Under "none" a request stays on its submitter's hardware queue, so its D has its Q's cpu.
# btt follows each write from Q to C across the files; rqdisk-checkorder reads them as one.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires dd blkparse btt taskset python3

checkorder=$top_builddir/src/tools/rqdisk-checkorder

# Two CPUs this test may run on, one even and one odd: hardware queue n takes CPU n mod 2.
read -r cpu0 cpu1 < <(python3 -c '
import os
cpus = sorted(os.sched_getaffinity(0))
even = [c for c in cpus if c % 2 == 0]
odd = [c for c in cpus if c % 2 == 1]
print(even[0] if even else -1, odd[0] if odd else -1)')
[ "$cpu0" -ge 0 ] && [ "$cpu1" -ge 0 ] || skip "needs an even and an odd CPU to run on"

make_tmpdir tmp
mkdir "$tmp/mnt"
truncate -s 64M "$tmp/img"

# writes_on CPU FIRST: eight 64 KiB direct writes from 1 MiB steps FIRST.. on CPU, the daemon
# (every thread) moved there first, so that its software queue is that CPU's.
writes_on()
{
	local cpu=$1 first=$2 i pids=()

	taskset -a -p -c "$cpu" "$rqdisk_pid" >/dev/null || fail "taskset -p $cpu $rqdisk_pid failed"
	for ((i = first; i < first + 8; i++)); do
		taskset -c "$cpu" dd if=/dev/zero of="$rqdisk_disk" bs=64K count=1 seek=$((i * 16)) \
			oflag=direct conv=notrunc status=none &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || fail "a write on CPU $cpu failed"
	done
}

# count TEXT CPU ACTION [RWBS]: blkparse's lines of ACTION on CPU.
count()
{
	awk -v c="$2" -v a="$3" -v r="${4:-}" '$1 == "240,0" && $2 == c && $6 == a &&
		(r == "" || $7 == r)' <<<"$1" | wc -l
}

# q_sectors TEXT CPU: the sectors of the write Q records on CPU, sorted.
q_sectors()
{
	awk -v c="$2" '$1 == "240,0" && $2 == c && $6 == "Q" && $7 == "W" { print $8 }' <<<"$1" |
		sort -n | tr '\n' ' '
}

expect0=$(for i in 0 1 2 3 4 5 6 7; do printf '%s ' $((i * 2048)); done)
expect1=$(for i in 8 9 10 11 12 13 14 15; do printf '%s ' $((i * 2048)); done)

# ELEVATOR[:MODEL]: under hdd's depth of 1 a hardware queue may take a request the device
# cannot take yet and give it back (R), to issue it again (a second D).
for run in none deadline deadline:hdd; do
	e=${run%%:*} model=none
	[ "$run" = "$e" ] || model=${run#*:}
	say "-e $e --model $model, two hardware queues: writes on CPU $cpu0 (queue 0), then on CPU $cpu1 (queue 1)"
	rm -f "$tmp"/run.blktrace.*
	start_rqdisk --queue-mode=mq --hw-queues 2 -e "$e" --model "$model" --trace "$tmp/run" \
		"$tmp/img" "$tmp/mnt"
	m=$tmp/mnt
	writes_on "$cpu0" 0
	writes_on "$cpu1" 8
	echo 0 >"$m/trace/enable" || fail "trace/enable 0 failed"
	dispatched=("$(cat "$m/mq/0/dispatched")" "$(cat "$m/mq/1/dispatched")")
	stop_rqdisk
	ls -l "$tmp"/run.blktrace.*
	[ -e "$tmp/run.blktrace.0" ] && [ -e "$tmp/run.blktrace.1" ] ||
		fail "-e $e: no file per hardware queue"
	[ ! -e "$tmp/run.blktrace.2" ] || fail "-e $e: a third file for two hardware queues"
	out=$(blkparse -i "$tmp/run" 2>"$tmp/err") || fail "blkparse -i $tmp/run failed"
	cat "$tmp/err"
	[ ! -s "$tmp/err" ] || fail "-e $e: blkparse complained: $(head -3 "$tmp/err")"
	grep -q '^Skips: 0 forward' <<<"$out" || fail "-e $e: blkparse saw sequence skips"
	grep -q '^CPU0 (run):' <<<"$out" && grep -q '^CPU1 (run):' <<<"$out" ||
		fail "-e $e: blkparse has no per-CPU summary for each hardware queue"
	[ "$(q_sectors "$out" 0)" = "$expect0" ] ||
		fail "-e $e: the writes queued on cpu 0 are at $(q_sectors "$out" 0), not $expect0"
	[ "$(q_sectors "$out" 1)" = "$expect1" ] ||
		fail "-e $e: the writes queued on cpu 1 are at $(q_sectors "$out" 1), not $expect1"
	for n in 0 1; do
		d=$(count "$out" $n D) r=$(count "$out" $n R)
		say "-e $e: cpu $n: $d D, $r R; mq/$n/dispatched ${dispatched[n]}"
		[ $((d - r)) = "${dispatched[n]}" ] ||
			fail "-e $e: cpu $n has $d D and $r R records, mq/$n/dispatched says ${dispatched[n]}"
	done
	say "-e $e: btt has a Q2C and a D2C per write; rqdisk-checkorder takes the files as one trace"
	blkparse -q -O -i "$tmp/run" -d "$tmp/run.bin" >/dev/null || fail "blkparse -d failed"
	bttout=$(cd "$tmp" && btt -i "$tmp/run.bin") || fail "btt -i $tmp/run.bin failed"
	for a in Q2C D2C; do
		n=$(awk -v a=$a '$1 == a { print $NF }' <<<"$bttout")
		[ "$n" = 16 ] || fail "-e $e: btt counts ${n:-no} $a samples, not 16"
	done
	"$checkorder" "$tmp/run" || fail "-e $e: rqdisk-checkorder refused the trace"
	if [ "$run" = none ]; then
		# no elevator: each write is dispatched by the hardware queue it was queued on
		for n in 0 1; do
			[ "$(count "$out" $n D W)" = 8 ] ||
				fail "-e none: $(count "$out" $n D W) writes issued on cpu $n, not 8"
		done
	fi
done
exit 0
