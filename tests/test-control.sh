#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-control.sh - the control tree beside the disk: the layout of /sys/block/<dev>/,
# the scheduler list and switch, every elevator's tunables read and written, writable
# limits, bad values refused and left unchanged, exact stat counters, tunables opened
# before a switch refused after it, and fsync on a control file sending no flush.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires dd fallocate python3

make_tmpdir tmp
mkdir "$tmp/mnt"
start_rqdisk --create 64M "$tmp/img" "$tmp/mnt"
q=$tmp/mnt/queue

say "the tree has the sysfs layout"
for f in disk stat inflight size ro queue/scheduler queue/iosched queue/max_sectors_kb \
	queue/max_hw_sectors_kb queue/max_segments queue/max_segment_size \
	queue/logical_block_size queue/physical_block_size queue/nr_requests queue/nomerges \
	queue/rotational queue/write_cache; do
	[ -e "$tmp/mnt/$f" ] || fail "$f is missing"
done
[ "$(cat "$tmp/mnt/size")" = $((64 * 2048)) ] || fail "size is $(cat "$tmp/mnt/size")"
[ "$(cat "$q/max_sectors_kb")" = 127 ] || fail "max_sectors_kb is $(cat "$q/max_sectors_kb")"
[ "$(cat "$q/max_segments")" = 128 ] || fail "max_segments is $(cat "$q/max_segments")"
[ "$(cat "$q/logical_block_size")" = 512 ] || fail "logical_block_size"
[ "$(cat "$q/nr_requests")" = 128 ] || fail "nr_requests is $(cat "$q/nr_requests")"
[ "$(cat "$tmp/mnt/device/lost_writes")" = "0 0 0" ] ||
	fail "device/lost_writes over an image: $(cat "$tmp/mnt/device/lost_writes")"
echo 1 >"$tmp/mnt/device/lost_writes" 2>/dev/null && fail "device/lost_writes took a write"

say "scheduler: every elevator, the running one in brackets"
sched=$(cat "$q/scheduler")
echo "$sched"
[[ "$sched" == *"[deadline]"* ]] || fail "deadline is not the running elevator: $sched"
for e in none noop deadline; do
	[[ " ${sched//[\[\]]/} " == *" $e "* ]] || fail "$e is not listed: $sched"
done
read -r -a names <<<"${sched//[\[\]]/}"
elevators=$(foreach_elevator)
[ "${names[*]}" = "$(echo $elevators)" ] ||
	fail "queue/scheduler lists '${names[*]}', rqdisk --list elevators '$(echo $elevators)'"

for e in "${names[@]}"; do
	say "switch to $e; its tunables round-trip"
	echo "$e" >"$q/scheduler" || fail "switching to $e failed"
	[[ "$(cat "$q/scheduler")" == *"[$e]"* ]] || fail "$e is not running: $(cat "$q/scheduler")"
	for t in "$q"/iosched/*; do
		[ -e "$t" ] || continue
		v=$(cat "$t")
		# bfq's and cfq's groups are read-only: the mode says so, a write fails
		if [ "$(basename "$t")" = groups ]; then
			[[ "$(stat -c %A "$t")" != *w* ]] || fail "groups is writable under $e"
			if (echo "/a 1" >"$t") 2>/dev/null; then fail "a write to groups was taken under $e"; fi
			continue
		fi
		# bfq's weights and bfq's and cfq's group_weights are text, one
		# line a write: checked on their own below
		if [ "$(basename "$t")" != weights ] && [ "$(basename "$t")" != group_weights ]; then
			echo "$v" >"$t" || fail "writing back $(basename "$t")=$v failed under $e"
			[ "$(cat "$t")" = "$v" ] || fail "$(basename "$t") changed on writing back $v"
		fi
		write_fails "$t" "not-a-number"
		write_fails "$t" "-1"
		[ "$(cat "$t")" = "$v" ] || fail "$(basename "$t") changed after a refused write"
	done
done

say "deadline's tunables: defaults, a new value, bounds"
echo deadline >"$q/scheduler"
want="async_depth fifo_batch front_merges prio_aging_expire read_expire write_expire writes_starved "
[ "$(ls "$q/iosched" | tr '\n' ' ')" = "$want" ] ||
	fail "deadline's tunables are: $(ls "$q/iosched")"
[ "$(cat "$q/iosched/read_expire")" = 500 ] || fail "read_expire default"
[ "$(cat "$q/iosched/write_expire")" = 5000 ] || fail "write_expire default"
[ "$(cat "$q/iosched/prio_aging_expire")" = 10000 ] || fail "prio_aging_expire default"
echo 250 >"$q/iosched/read_expire"
[ "$(cat "$q/iosched/read_expire")" = 250 ] || fail "read_expire did not take 250"
write_fails "$q/iosched/front_merges" 2
# async_depth: nr_requests (128 here) by default, from 1 to nr_requests
[ "$(cat "$q/iosched/async_depth")" = 128 ] || fail "async_depth default"
write_fails "$q/iosched/async_depth" 0
write_fails "$q/iosched/async_depth" 129
echo 32 >"$q/iosched/async_depth"
[ "$(cat "$q/iosched/async_depth")" = 32 ] || fail "async_depth did not take 32"
echo none >"$q/scheduler"
[ -z "$(ls "$q/iosched")" ] || fail "none has tunables: $(ls "$q/iosched")"
write_fails "$q/scheduler" "elephant"
[[ "$(cat "$q/scheduler")" == *"[none]"* ]] || fail "a refused switch changed the elevator"
echo deadline >"$q/scheduler"

say "bfq's tunables, and its weights: PID WEIGHT lines set, read back, removed, bad ones refused"
echo bfq >"$q/scheduler" || fail "switching to bfq failed"
[ "$(ls "$q/iosched" | tr '\n' ' ')" = "back_seek_max back_seek_penalty fifo_expire_async fifo_expire_sync group_weights groups low_latency max_budget slice_idle slice_idle_us strict_guarantees timeout_sync weights " ] ||
	fail "bfq's tunables are: $(ls "$q/iosched")"
w=$q/iosched/weights
[ -z "$(cat "$w")" ] || fail "bfq starts with weights: $(cat "$w")"
echo "4242 500" >"$w" || fail "writing '4242 500' to weights failed"
echo "77 10" >"$w" || fail "writing '77 10' to weights failed"
[ "$(cat "$w")" = $'4242 500\n77 10' ] || fail "weights read back as: $(cat "$w")"
for bad in "4242" "4242 1001" "4242 -1" "0 10" "x 10" "4242 10 1" "4242 defaults"; do
	write_fails "$w" "$bad"
done
[ "$(cat "$w")" = $'4242 500\n77 10' ] || fail "a refused write changed weights: $(cat "$w")"
echo "4242 default" >"$w" || fail "removing 4242's weight failed"
echo "77 0" >"$w" || fail "removing 77's weight failed"
[ -z "$(cat "$w")" ] || fail "weights left after removing both: $(cat "$w")"
echo deadline >"$q/scheduler"

for e in bfq cfq; do
	say "$e's group_weights: CGROUP WEIGHT lines set, read back, removed, bad ones refused"
	echo $e >"$q/scheduler" || fail "switching to $e failed"
	w=$q/iosched/group_weights
	[ -z "$(cat "$w")" ] || fail "$e starts with group weights: $(cat "$w")"
	echo "/a.slice 300" >"$w" || fail "$e: writing '/a.slice 300' to group_weights failed"
	echo "/b.slice/c 50" >"$w" || fail "$e: writing '/b.slice/c 50' to group_weights failed"
	[ "$(cat "$w")" = $'/a.slice 300\n/b.slice/c 50' ] || fail "$e: group_weights read back as: $(cat "$w")"
	for bad in "" "a.slice 10" "/a.slice" "/a.slice x" "/a.slice -1" "/a.slice 99999999"; do
		write_fails "$w" "$bad"
	done
	[ "$(cat "$w")" = $'/a.slice 300\n/b.slice/c 50' ] || fail "$e: a refused write changed group_weights"
	echo "/a.slice default" >"$w" || fail "$e: removing /a.slice's weight failed"
	echo "/b.slice/c 0" >"$w" || fail "$e: removing /b.slice/c's weight failed"
	[ -z "$(cat "$w")" ] || fail "$e: group weights left after removing both: $(cat "$w")"
	echo deadline >"$q/scheduler"
done

say "writable limits, and bad values refused"
echo 64 >"$q/max_sectors_kb"
[ "$(cat "$q/max_sectors_kb")" = 64 ] || fail "max_sectors_kb did not take 64"
write_fails "$q/max_sectors_kb" 1000
write_fails "$q/max_sectors_kb" 2
[ "$(cat "$q/max_sectors_kb")" = 64 ] || fail "max_sectors_kb changed after refused writes"
echo 16 >"$q/nr_requests"
[ "$(cat "$q/nr_requests")" = 16 ] || fail "nr_requests did not take 16"
write_fails "$q/nr_requests" 0
write_fails "$q/nr_requests" 4096
echo 2 >"$q/nomerges"
[ "$(cat "$q/nomerges")" = 2 ] || fail "nomerges did not take 2"
write_fails "$q/nomerges" 3
echo 0 >"$q/nomerges"
python3 -c "import os,sys; os.open(sys.argv[1], os.O_WRONLY)" "$q/max_segments" 2>/dev/null &&
	fail "a read-only attribute opened for writing"

say "stat counts exactly the I/O issued"
read -r -a before <"$tmp/mnt/stat"
[ ${#before[@]} = 17 ] || fail "stat has ${#before[@]} fields, not 17"
for i in "${!before[@]}"; do
	[ "${before[$i]}" = 0 ] || fail "stat field $((i + 1)) is ${before[$i]} before any I/O"
done
dd if=/dev/zero of="$tmp/mnt/disk" bs=4096 count=10 seek=100 oflag=direct conv=notrunc status=none
dd if="$tmp/mnt/disk" of=/dev/null bs=4096 count=3 skip=7 iflag=direct status=none
python3 -c "import os,sys; fd = os.open(sys.argv[1], os.O_WRONLY); os.fsync(fd)" "$tmp/mnt/disk"
fallocate --punch-hole --keep-size --offset $((1 << 20)) --length $((1 << 20)) "$tmp/mnt/disk"
read -r -a s <"$tmp/mnt/stat"
echo "stat: ${s[*]}"
expect()
{
	[ "${s[$1 - 1]}" = "$2" ] || fail "stat field $1 ($3) is ${s[$1 - 1]}, expected $2"
}
expect 1 3 "reads completed"
expect 2 0 "reads merged"
expect 3 24 "sectors read"
expect 5 10 "writes completed"
expect 6 0 "writes merged"
expect 7 80 "sectors written"
expect 9 0 "in flight"
expect 12 1 "discards completed"
expect 14 2048 "sectors discarded"
expect 16 2 "flushes completed (fallocate(1) fsyncs too)"
[ "$(cat "$tmp/mnt/inflight" | tr -s ' ')" = " 0 0" ] || fail "inflight is '$(cat "$tmp/mnt/inflight")'"

# tunables: every tunable of the running elevator, "name=value" in one line.
tunables()
{
	local t out=

	for t in "$q"/iosched/*; do
		[ -e "$t" ] && out+="$(basename "$t")=$(cat "$t") "
	done
	echo "$out"
}

# write_stale FD VALUE: a write through FD is refused with ESTALE or ENOENT.
write_stale()
{
	python3 - "$1" "$2" <<'PY' || fail "a write through a stale tunable handle was not refused"
import errno, os, sys
try:
    os.write(int(sys.argv[1]), sys.argv[2].encode() + b"\n")
except OSError as e:
    print("refused:", os.strerror(e.errno))
    sys.exit(0 if e.errno in (errno.ESTALE, errno.ENOENT) else 1)
sys.exit(1)
PY
}

say "a tunable opened under cfq is stale under deadline: refused, nothing changed"
echo cfq >"$q/scheduler"
exec 3>"$q/iosched/quantum"
echo deadline >"$q/scheduler"
before=$(tunables)
write_stale 3 1
[ "$(tunables)" = "$before" ] || fail "a stale write changed deadline: $before -> $(tunables)"
python3 -c 'import os; os.fstat(3)' 2>/dev/null && fail "fstat on a stale tunable succeeded"
exec 3>&-

say "a tunable opened under one deadline is stale under the next deadline"
exec 3>"$q/iosched/read_expire"
echo noop >"$q/scheduler"
echo deadline >"$q/scheduler"
before=$(tunables)
write_stale 3 7
[ "$(tunables)" = "$before" ] || fail "a stale write changed deadline: $before -> $(tunables)"
exec 3>&-
echo 7 >"$q/iosched/read_expire" || fail "a fresh handle cannot write read_expire"
[ "$(cat "$q/iosched/read_expire")" = 7 ] || fail "read_expire did not take 7"

say "fsync on a control file sends no flush; on the disk it does"
flushes() { read -r -a s <"$tmp/mnt/stat"; echo "${s[15]}"; }
before=$(flushes)
for f in queue/scheduler queue/iosched/read_expire queue/nr_requests stat trace/name; do
	python3 -c "import os,sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)" \
		"$tmp/mnt/$f" || fail "fsync on $f failed"
done
[ "$(flushes)" = "$before" ] || fail "fsync on control files sent $(($(flushes) - before)) flushes"
python3 -c "import os,sys; fd = os.open(sys.argv[1], os.O_WRONLY); os.fsync(fd)" "$tmp/mnt/disk"
[ "$(flushes)" = $((before + 1)) ] || fail "fsync on the disk sent $(($(flushes) - before)) flushes"

stop_rqdisk
echo PASS
