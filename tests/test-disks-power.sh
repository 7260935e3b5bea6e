#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-disks-power.sh - the disks of one daemon (--disk) are one power domain: with a
# write cache on each, "all" written to any disk's power/cut (or SIGPWR) cuts every
# disk's cache: a write acknowledged and not flushed is lost on both, a flushed one
# survives on either; each disk's power comes back with its own power/restore.  A
# value power/cut does not take is refused (EINVAL), and nothing is cut.  Many cuts
# at once from both disks' trees end (none waits for ever on the other).
source "$(dirname "$0")/functions.sh"
source "$(dirname "$0")/disks-functions.sh"
requires_root
requires_fuse
requires dd cmp head python3

make_tmpdir tmp
mkdir "$tmp/mnt"
truncate -s 64M "$tmp/a" "$tmp/b"
head -c 1M /dev/urandom >"$tmp/pat"
MiB=1048576
m=$tmp/mnt

# write_to N OFFSET_MIB [DD_ARGS]: the pattern onto disk N, O_DIRECT.
write_to()
{
	local n=$1 at=$2

	shift 2
	dd if="$tmp/pat" of="$m/disk$n/disk" bs=64k seek=$((at * 16)) oflag=direct conv=notrunc \
		status=none "$@"
}

# image_has IMAGE OFFSET_MIB / image_zero IMAGE OFFSET_MIB
image_has() { cmp -s -n $MiB "$tmp/pat" "$1" 0 $(($2 * MiB)); }
image_zero() { cmp -s -n $MiB /dev/zero "$1" 0 $(($2 * MiB)); }

# states: both disks' power/state, "S0 S1"
states() { echo "$(cat "$m/disk0/power/state") $(cat "$m/disk1/power/state")"; }

# wait_states S: both disks' power/state is S within 5 s.
wait_states()
{
	local i

	for ((i = 0; i < 50; i++)); do
		[ "$(states)" = "$1 $1" ] && return 0
		sleep 0.1
	done
	fail "power/state is $(states), not $1 on both"
}

restore_both()
{
	echo 1 >"$m/disk0/power/restore"
	echo 1 >"$m/disk1/power/restore"
	wait_states on
}

start_disks 2 --filter write-cache:expire=0 --disk "$tmp/b" "$tmp/a" "$tmp/mnt"

say "a write to each, not flushed: one cut on disk1 loses both"
write_to 0 0 || fail "the write to disk0 failed"
write_to 1 0 || fail "the write to disk1 failed"
[ "$(cat "$m/disk0/power/dirty") $(cat "$m/disk1/power/dirty")" = "$MiB $MiB" ] ||
	fail "dirty: $(cat "$m/disk0/power/dirty") $(cat "$m/disk1/power/dirty")"
echo all >"$m/disk1/power/cut" || fail "the cut failed"
wait_states off
image_zero "$tmp/a" 0 || fail "disk0's unflushed write reached its image: the cut missed disk0"
image_zero "$tmp/b" 0 || fail "disk1's unflushed write reached its image"
grep -q "^dropped $MiB$" "$m/disk0/power/stats" || fail "disk0: $(cat "$m/disk0/power/stats")"
grep -q "^dropped $MiB$" "$m/disk1/power/stats" || fail "disk1: $(cat "$m/disk1/power/stats")"

say "each disk's power comes back with its own restore"
echo 1 >"$m/disk0/power/restore"
[ "$(states)" = "on off" ] || fail "after disk0's restore: $(states)"
echo 1 >"$m/disk1/power/restore"
wait_states on

say "a flushed write survives on either disk, an unflushed one on neither"
write_to 0 1 conv=fsync || fail "the write to disk0 failed"
write_to 1 3 conv=fsync || fail "the write to disk1 failed"
write_to 1 2 || fail "the write to disk1 failed"
write_to 0 4 || fail "the write to disk0 failed"
echo all >"$m/disk0/power/cut" || fail "the cut failed"
wait_states off
image_has "$tmp/a" 1 || fail "disk0 lost a flushed write"
image_has "$tmp/b" 3 || fail "disk1 lost a flushed write"
image_zero "$tmp/b" 2 || fail "disk1 kept an unflushed write"
image_zero "$tmp/a" 4 || fail "disk0 kept an unflushed write"
restore_both

say "SIGPWR cuts both"
write_to 0 5 || fail "the write to disk0 failed"
write_to 1 5 || fail "the write to disk1 failed"
kill -PWR "$rqdisk_pid"
wait_states off
image_zero "$tmp/a" 5 || fail "SIGPWR: disk0's unflushed write survived"
image_zero "$tmp/b" 5 || fail "SIGPWR: disk1's unflushed write survived"
restore_both

say "a value power/cut does not take is refused, and nothing is cut"
write_to 1 6 || fail "the write failed"
write_fails "$m/disk0/power/cut" sideways
write_fails "$m/disk1/device/write-cache/cut" ""
[ "$(states)" = "on on" ] || fail "a refused cut cut: $(states)"

say "cuts from both trees at once all end"
for ((i = 0; i < 20; i++)); do
	echo all >"$m/disk0/power/cut" &
	p0=$!
	echo random >"$m/disk1/power/cut" &
	wait $p0 $! || fail "a cut failed"
	restore_both
done
[ "$(cat "$m/disk1/power/dirty")" = 0 ] || fail "disk1 still holds dirty data after the cuts"

say "the unmount flushes what each cache holds to its image"
write_to 0 7 || fail "the write to disk0 failed"
write_to 1 7 || fail "the write to disk1 failed"
fusermount3 -u "$m/disk0"
wait_disks_gone "$m"
[ "$rqdisk_status" = 0 ] || fail "rqdisk exited with status $rqdisk_status"
image_has "$tmp/a" 7 || fail "disk0's cache was not flushed at exit"
image_has "$tmp/b" 7 || fail "disk1's cache was not flushed at exit"
exit 0
