#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-crash-joint.sh - rqdisk-crash --order: the joint crash states of two disks
# logged by one daemon (--disk, log-writes with order=).  A write made durable on disk0
# (fsync) before a write on disk1 is in every state that holds the disk1 write: no
# joint state breaks the order the disks' writes were made in.  A program that writes
# disk0 after disk1 without flushing disk1 is caught: a state with disk0's write and
# without disk1's, named by its ID.  --torn tears that write too, which a checker
# that every untorn state passes catches.  --state rebuilds a FAIL line's state from
# its ID, which fails the same checker, and -o writes its images; a bad joint ID is
# refused in one line.  --list prints the IDs; a wrong order is refused.
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
# disk1 holds B whole, or none of it
cat >"$tmp/whole" <<SH
#!/bin/sh
cmp -s -n 4096 "\$RQDISK_CRASH_IMAGE1" "$tmp/B" || cmp -s -n 4096 "\$RQDISK_CRASH_IMAGE1" /dev/zero
SH
chmod +x "$tmp/has" "$tmp/implies" "$tmp/whole"

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
mv "$tmp/out" "$tmp/out-drop"

DISKS=("$tmp/base0" "$tmp/log0" "$tmp/base1" "$tmp/log1")
say "--torn: disk1's unflushed write torn, caught by a checker every untorn state passes"
"$CRASH" --order "$tmp/order" --drop 2 "${DISKS[@]}" -- "$tmp/whole" >"$tmp/out" ||
	fail "an untorn state failed: $(cat "$tmp/out")"
grep -q "joint states of 2 disks, 0 failed" "$tmp/out" || fail "$(cat "$tmp/out")"
status=0
"$CRASH" --order "$tmp/order" --torn "${DISKS[@]}" -- "$tmp/whole" >"$tmp/out" || status=$?
[ $status = 1 ] || fail "--torn: status $status, not 1: $(cat "$tmp/out")"
grep -q "^FAIL joint:[0-9]*~1\.0@[0-9]*/1 " "$tmp/out" || fail "no torn state named: $(cat "$tmp/out")"
! grep "^FAIL" "$tmp/out" | grep -v "~1\.0@" || fail "an untorn state failed: $(cat "$tmp/out")"
"$CRASH" --order "$tmp/order" --torn --list "${DISKS[@]}" >"$tmp/ids" || fail "--torn --list failed"
[ "$(grep -c "~1\.0@" "$tmp/ids")" = "$(grep -c "^FAIL" "$tmp/out")" ] ||
	fail "not every torn state failed: $(cat "$tmp/ids" "$tmp/out")"
# a 4096-byte write is one unit of 4096 bytes: nothing to tear
"$CRASH" --order "$tmp/order" --torn --atomic 4096 "${DISKS[@]}" -- "$tmp/whole" >"$tmp/out4" ||
	fail "--atomic 4096 tore a write of one unit: $(cat "$tmp/out4")"

say "--state ID rebuilds the state of a FAIL line, which fails the same checker"
torn=$(sed -n 's/^FAIL \([^ ]*\) .*/\1/p' "$tmp/out" | head -n 1)
dropped=$(sed -n 's/^FAIL \([^ ]*\) .*/\1/p' "$tmp/out-drop" | head -n 1)
for id in "$torn" "$dropped"; do
	[ "$id" = "$torn" ] && check=("$tmp/whole") || check=("$tmp/implies" 0 A 1 B)
	status=0
	"$CRASH" --order "$tmp/order" --state "$id" "${DISKS[@]}" -- "${check[@]}" >"$tmp/out" ||
		status=$?
	[ $status = 1 ] && grep -q "^FAIL $id (status 1)$" "$tmp/out" &&
		grep -q "^1 joint states of 2 disks, 1 failed$" "$tmp/out" ||
		fail "--state $id: status $status, $(cat "$tmp/out")"
done
say "--state ID -o DIR writes every disk's image of the state"
"$CRASH" --order "$tmp/order" --state "$torn" -o "$tmp/st" "${DISKS[@]}" >"$tmp/out" 2>&1 ||
	fail "--state -o: $(cat "$tmp/out")"
[ "$(stat -c %s "$tmp/st/disk0")" = 4194304 ] && [ "$(stat -c %s "$tmp/st/disk1")" = 4194304 ] ||
	fail "the images are not whole disks: $(ls -l "$tmp/st")"
RQDISK_CRASH_IMAGE1=$tmp/st/disk1 "$tmp/whole" && fail "the torn image passes the checker"
a=${torn##*@}
cmp -s -n "${a%/*}" "$tmp/st/disk1" "$tmp/B" || fail "disk1 lacks B's first unit"
cmp -s -n 4096 "$tmp/st/disk0" "$tmp/A" || fail "disk0 lacks A, fsynced before the point"
ln -s "$tmp/st" "$tmp/link"
"$CRASH" --order "$tmp/order" --state "$torn" -o "$tmp/link" "${DISKS[@]}" 2>"$tmp/err" &&
	fail "-o through a symbolic link was taken"
grep -q "symbolic link: refused" "$tmp/err" || fail "said: $(cat "$tmp/err")"

say "a bad joint ID, or one of no state of these logs, is refused in one line, nothing written"
for id in "joint:1-0.x" "joint:99999" "${torn%%~*}-0.0" "flush:1"; do
	status=0
	"$CRASH" --order "$tmp/order" --state "$id" -o "$tmp/bad" "${DISKS[@]}" 2>"$tmp/err" ||
		status=$?
	[ $status = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] || fail "$id: status $status, $(cat "$tmp/err")"
	[ ! -e "$tmp/bad" ] || fail "$id: -o's directory was made"
done
grep -q "bad joint state ID 'flush:1'" "$tmp/err" || fail "said: $(cat "$tmp/err")"

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
