#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-crash-joint.sh - rqdisk-crash --order: the joint crash states of two disks
# logged by one daemon (--disk, log-writes with order=).  A write made durable on disk0
# (fsync) before a write on disk1 is in every state that holds the disk1 write: no
# joint state breaks the order the disks' writes were made in.  A program that writes
# disk0 after disk1 without flushing disk1 is caught: a state with disk0's write and
# without disk1's, named by its ID.  --list prints the IDs; a wrong order is refused.
# SIGTERM ends the run and its checker, leaving no state file behind.
source "$(dirname "$0")/functions.sh"
source "$(dirname "$0")/disks-functions.sh"
requires_root
requires_fuse
requires dd cmp head

CRASH=$top_builddir/src/crash/rqdisk-crash
make_tmpdir tmp
mkdir "$tmp/mnt"
m=$tmp/mnt
head -c 4096 /dev/urandom >"$tmp/A"
head -c 4096 /dev/urandom >"$tmp/B"

# has IMAGE PATTERN: IMAGE holds PATTERN at 0.
cat >"$tmp/has" <<'SH'
#!/bin/sh
cmp -s -n 4096 "$1" "$2"
SH
# "if disk$1 holds pattern $2 then disk$3 holds pattern $4", of the state's images
cat >"$tmp/implies" <<SH
#!/bin/sh
eval a=\\\$RQDISK_CRASH_IMAGE\$1
eval b=\\\$RQDISK_CRASH_IMAGE\$3
[ "\$RQDISK_CRASH_DISKS" = 2 ] || exit 9
sh "$tmp/has" "\$a" "$tmp/\$2" || exit 0
sh "$tmp/has" "\$b" "$tmp/\$4"
SH
chmod +x "$tmp/has" "$tmp/implies"

# run_disks: the two disks logged, base copies made, order kept; then WORKLOAD (a function).
run_disks()
{
	rm -f "$tmp"/log? "$tmp"/base? "$tmp/order"
	truncate -s 0 "$tmp/a" "$tmp/b"
	truncate -s 4M "$tmp/a" "$tmp/b"
	start_disks 2 --filter "log-writes:file=$tmp/log%d,base=$tmp/base%d,order=$tmp/order" \
		--disk "$tmp/b" "$tmp/a" "$m"
	"$1"
	fusermount3 -u "$m/disk0"
	wait_disks_gone "$m"
	[ "$rqdisk_status" = 0 ] || fail "rqdisk exited with status $rqdisk_status"
}

put() # put N PATTERN [DD_ARGS]: the pattern at disk N's start
{
	local n=$1 p=$2

	shift 2
	dd if="$tmp/$p" of="$m/disk$n/disk" bs=4k oflag=direct conv=notrunc status=none "$@" ||
		fail "the write to disk$n failed"
}

a_then_b() { put 0 A conv=fsync; put 1 B; }
b_then_a() { put 1 B; put 0 A conv=fsync; }

say "A on disk0, fsynced, then B on disk1: every joint state with B holds A"
run_disks a_then_b
"$CRASH" --order "$tmp/order" --drop 2 "$tmp/base0" "$tmp/log0" "$tmp/base1" "$tmp/log1" \
	-- "$tmp/implies" 1 B 0 A >"$tmp/out" || fail "a joint state broke the order: $(cat "$tmp/out")"
grep -q "joint states of 2 disks, 0 failed" "$tmp/out" || fail "$(cat "$tmp/out")"
# and the run did see states with B kept and B lost: the checker is not vacuous
"$CRASH" --order "$tmp/order" --list "$tmp/base0" "$tmp/log0" "$tmp/base1" "$tmp/log1" \
	>"$tmp/ids" || fail "--list failed"
grep -q -- "-1\.0$" "$tmp/ids" || fail "no state drops disk1's unflushed write: $(cat "$tmp/ids")"
[ "$(grep -c . "$tmp/ids")" -gt 2 ] || fail "too few states: $(cat "$tmp/ids")"

say "B on disk1, not flushed, then A on disk0, fsynced: a state with A and without B"
run_disks b_then_a
status=0
"$CRASH" --order "$tmp/order" "$tmp/base0" "$tmp/log0" "$tmp/base1" "$tmp/log1" \
	-- "$tmp/implies" 0 A 1 B >"$tmp/out" || status=$?
[ $status = 1 ] || fail "status $status, not 1: $(cat "$tmp/out")"
grep -q "^FAIL joint:[0-9]*-1\.0 " "$tmp/out" || fail "the failing state is not named: $(cat "$tmp/out")"

say "SIGTERM ends the run and its checker, and takes its state files away"
mkdir "$tmp/t"
TMPDIR=$tmp/t "$CRASH" --order "$tmp/order" "$tmp/base0" "$tmp/log0" "$tmp/base1" "$tmp/log1" \
	-- sleep 60 >"$tmp/out" 2>"$tmp/err" &
cpid=$!
for ((i = 0; i < 50; i++)); do
	pgrep -P $cpid -x sleep >/dev/null && break
	sleep 0.1
done
[ -n "$(ls -A "$tmp/t")" ] || fail "no state files under TMPDIR while a checker runs"
kill -TERM $cpid
status=0
wait $cpid || status=$?
[ $status = 143 ] || fail "status $status after SIGTERM, not 143: $(cat "$tmp/err")"
[ -z "$(ls -A "$tmp/t")" ] || fail "left under TMPDIR: $(ls -R "$tmp/t")"
! pgrep -x sleep -P $cpid >/dev/null || fail "the checker outlived the run"

say "refused in one line: an order of other logs, an odd number of files, no CHECK"
status=0
"$CRASH" --order "$tmp/order" "$tmp/base1" "$tmp/log1" "$tmp/base0" "$tmp/log0" \
	-- true 2>"$tmp/err" || status=$?
[ $status = 2 ] && grep -q "order: disk 0 has .* lines, its log .* entries" "$tmp/err" ||
	fail "swapped logs: status $status, $(cat "$tmp/err")"
"$CRASH" --order "$tmp/order" "$tmp/base0" "$tmp/log0" "$tmp/base1" -- true 2>"$tmp/err" &&
	fail "an odd number of files was taken"
grep -q "BASE LOG pairs" "$tmp/err" || fail "said: $(cat "$tmp/err")"
"$CRASH" --order "$tmp/order" "$tmp/base0" "$tmp/log0" "$tmp/base1" "$tmp/log1" \
	2>"$tmp/err" && fail "no CHECK was taken"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "said: $(cat "$tmp/err")"
exit 0
