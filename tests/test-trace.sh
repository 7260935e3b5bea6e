#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-trace.sh - blktrace output: --trace from the start and trace/enable on a directory
# mount; blkparse reads the known I/O back (Q/D/C counts, sectors, sizes, the flush, the
# process names), btt takes the dump, the file is whole after umount and after SIGTERM,
# a restart (0 then 1) truncates the trace it stopped and no other file, and an
# unwritable NAME stops rqdisk before it mounts.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires dd blkparse btt python3 timeout

make_tmpdir tmp
mkdir "$tmp/mnt"

# Four 64 KiB writes at 1 MiB steps, two reads of them, then an fsync.
known_io()
{
	local i

	for i in 0 1 2 3; do
		dd if=/dev/urandom of="$1" bs=64K count=1 seek=$((i * 16)) oflag=direct \
			conv=notrunc status=none || fail "write $i failed"
	done
	dd if="$1" of=/dev/null bs=64K count=1 skip=16 iflag=direct status=none || fail "read 1"
	dd if="$1" of=/dev/null bs=64K count=1 skip=48 iflag=direct status=none || fail "read 2"
	python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_WRONLY); os.fsync(fd)' "$1" ||
		fail "fsync failed"
}

# records TEXT ACTION RWBS: "sector+count [name]" of each matching blkparse line, sorted.
records()
{
	awk -v a="$2" -v r="$3" '$6 == a && $7 == r { print $8 "+" $10 " " $11 }' <<<"$1" | sort -n
}

# check_known_io NAME: the trace holds exactly known_io's I/O.
check_known_io()
{
	local out n writes reads

	out=$(blkparse -i "$1") || fail "blkparse -i $1 failed"
	head -40 <<<"$out" # no pipe: a reader that stops early would SIGPIPE the writer
	for a in Q G I D C; do
		n=$(awk -v a=$a '$6 == a' <<<"$out" | wc -l)
		[ "$n" = 7 ] || fail "$n $a records, not 7 (4 writes, 2 reads, 1 flush)"
	done
	writes=$'0+128 [dd]\n2048+128 [dd]\n4096+128 [dd]\n6144+128 [dd]'
	reads=$'2048+128 [dd]\n6144+128 [dd]'
	for a in Q D; do
		[ "$(records "$out" $a W)" = "$writes" ] ||
			fail "$a W records are not the four writes: $(records "$out" $a W)"
		[ "$(records "$out" $a RS)" = "$reads" ] ||
			fail "$a RS records are not the two reads: $(records "$out" $a RS)"
	done
	# a completion names no process: its error instead
	[ "$(records "$out" C W)" = "${writes//\[dd\]/[0]}" ] ||
		fail "C W records are not the four writes, without error: $(records "$out" C W)"
	[ "$(records "$out" C RS)" = "${reads//\[dd\]/[0]}" ] ||
		fail "C RS records: $(records "$out" C RS)"
	say "the fsync is a flush (F in RWBS) from python3, with no data"
	for a in Q G I D; do
		[ -n "$(awk -v a=$a '$6 == a && $7 ~ /^F/ && $8 == "[python3]"' <<<"$out")" ] ||
			fail "no $a flush record from python3"
	done
	[ -n "$(awk '$6 == "C" && $7 ~ /^F/ && $8 == 0 && $9 == "[0]"' <<<"$out")" ] ||
		fail "no flush completion"
	say "btt: one Q2C and one D2C per read and write"
	blkparse -q -O -i "$1" -d "$1.bin" >/dev/null || fail "blkparse -d failed"
	# btt leaves its per-device *_fp.dat files in the working directory
	out=$(cd "$tmp" && btt -i "$1.bin") || fail "btt -i $1.bin failed"
	head -12 <<<"$out"
	for a in Q2C D2C; do
		n=$(awk -v a=$a '$1 == a { print $NF }' <<<"$out")
		[ "$n" = 6 ] || fail "btt counts ${n:-no} $a samples, not 6"
	done
}

say "--trace NAME: from the start, whole after umount"
start_rqdisk --create 64M --trace "$tmp/run" "$tmp/img" "$tmp/mnt"
[ "$(cat "$tmp/mnt/trace/enable")" = 1 ] || fail "trace/enable is not 1 under --trace"
[ "$(cat "$tmp/mnt/trace/name")" = "$tmp/run" ] ||
	fail "trace/name is $(cat "$tmp/mnt/trace/name"), not $tmp/run"
known_io "$rqdisk_disk"
stop_rqdisk
check_known_io "$tmp/run"

say "a relative --trace NAME is the working directory's"
cd "$tmp"
start_rqdisk --trace rel "$tmp/img" "$tmp/mnt"
cd - >/dev/null
[ "$(cat "$tmp/mnt/trace/name")" = "$tmp/rel" ] || fail "trace/name is $(cat "$tmp/mnt/trace/name")"
stop_rqdisk
[ -e "$tmp/rel.blktrace.0" ] || fail "no $tmp/rel.blktrace.0"

say "trace/name and trace/enable: started, stopped, and refusals"
start_rqdisk "$tmp/img" "$tmp/mnt"
t=$tmp/mnt/trace
[ "$(cat "$t/enable")" = 0 ] || fail "tracing without being asked"
[ -z "$(cat "$t/name")" ] || fail "trace/name is not empty: $(cat "$t/name")"
# write_errno FILE VALUE ERRNO: the write fails with ERRNO (EINVAL, EBUSY, ...).
write_errno()
{
	python3 - "$@" <<'PY' || fail "writing '$2' to $1 did not fail with $3"
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
try:
    os.write(fd, sys.argv[2].encode() + b"\n")
except OSError as e:
    sys.exit(0 if e.errno == getattr(errno, sys.argv[3]) else 1)
sys.exit(1)
PY
}
write_errno "$t/enable" 1 EINVAL    # no name yet
write_errno "$t/name" relative EINVAL
echo "$tmp/ctl" >"$t/name"
[ "$(cat "$t/name")" = "$tmp/ctl" ] || fail "trace/name did not take $tmp/ctl"
write_errno "$t/enable" 2 EINVAL
echo 1 >"$t/enable"
[ "$(cat "$t/enable")" = 1 ] || fail "trace/enable did not start tracing"
write_errno "$t/name" "$tmp/other" EBUSY
known_io "$rqdisk_disk"
echo 0 >"$t/enable"
[ "$(cat "$t/enable")" = 0 ] || fail "trace/enable did not stop tracing"
size=$(stat -c %s "$tmp/ctl.blktrace.0")
dd if="$rqdisk_disk" of=/dev/null bs=4K count=1 iflag=direct status=none
[ "$(stat -c %s "$tmp/ctl.blktrace.0")" = "$size" ] || fail "the trace grew after stopping"
check_known_io "$tmp/ctl"

say "trace/enable 1 again restarts that trace: truncated, only what follows, blkparse reads it"
dd if="$rqdisk_disk" of=/dev/null bs=4K count=1 iflag=direct status=none # not traced
echo 1 >"$t/enable" || fail "trace/enable 1 after 0 did not restart the trace"
[ "$(cat "$t/enable")" = 1 ] || fail "trace/enable is not 1 after the restart"
[ "$(stat -c %s "$tmp/ctl.blktrace.0")" = 0 ] || fail "the restarted trace was not truncated"
known_io "$rqdisk_disk"
echo 0 >"$t/enable"
check_known_io "$tmp/ctl" # 7 of each: nothing from before the restart

say "a restart writes over no other file put in the trace's place"
echo "another's" >"$tmp/other"
mv "$tmp/other" "$tmp/ctl.blktrace.0"
write_errno "$t/enable" 1 EEXIST
[ "$(cat "$t/enable")" = 0 ] || fail "tracing into a file the trace did not make"
[ "$(cat "$tmp/ctl.blktrace.0")" = "another's" ] || fail "the file put in its place was written"

say "tracing started again ends whole on SIGTERM"
echo "$tmp/term" >"$t/name"
echo 1 >"$t/enable"
known_io "$rqdisk_disk"
kill -TERM "$rqdisk_pid"
wait_rqdisk
[ "$rqdisk_status" = 0 ] || fail "rqdisk exited with $rqdisk_status on SIGTERM"
check_known_io "$tmp/term"

say "an unwritable NAME: one line, a failure, no mount (foreground and daemonizing)"
cleanup_fn _unmount "$tmp/mnt"
for mode in -f ""; do
	status=0
	# shellcheck disable=SC2086 # mode is no word or one
	timeout 15 "$RQDISK" $mode --trace "$tmp/no-such-dir/t" "$tmp/img" "$tmp/mnt" \
		2>"$tmp/err" || status=$?
	echo "rqdisk $mode: status $status: $(cat "$tmp/err")"
	[ $status != 0 ] && [ $status != 124 ] || fail "rqdisk $mode: status $status"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "not one line: $(cat "$tmp/err")"
	grep -qF "$tmp/no-such-dir/t.blktrace.0" "$tmp/err" || fail "the message does not name the file"
	no_mount_under "$tmp/mnt" || fail "a mount was left behind"
done
exit 0
