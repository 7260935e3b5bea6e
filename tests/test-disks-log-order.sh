#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-disks-log-order.sh - the log-writes filters of several disks (--disk) log in
# one order: each disk's log stays a plain dm-log-writes log that replays alone onto
# a copy of its image, and order=FILE (log_order.h) holds a line per entry of any
# log, naming its disk, in the order the entries were made: writes that alternate
# between the disks, each waited for, alternate there; each disk's lines number its
# log's entries.  A lone disk's order is all 0.  Refused, leaving nothing: order= the
# log itself (status 2), an order file already there (status 1); a start that fails
# takes the order file it made away with the logs.
source "$(dirname "$0")/functions.sh"
source "$(dirname "$0")/disks-functions.sh"
requires_root
requires_fuse
requires dd cmp head

make_tmpdir tmp
mkdir "$tmp/mnt"
truncate -s 16M "$tmp/a" "$tmp/b"
dump=$top_builddir/tests/log-writes-dump
m=$tmp/mnt

# entries LOG: the number of entries log-writes-dump reads in LOG.
entries()
{
	"$dump" "$1" >"$tmp/dump" || fail "log-writes-dump refused $1"
	awk 'NR == 1 { print $4 }' "$tmp/dump"
}

# lines N: the order's lines naming disk N.
lines() { tail -n +2 "$tmp/order" | grep -cx "$1" || :; }

say "two disks, writes alternating, each waited for: the order alternates too"
start_disks 2 --filter "log-writes:file=$tmp/log%d,order=$tmp/order" --disk "$tmp/b" \
	"$tmp/a" "$tmp/mnt"
for i in 1 2 3; do
	# an O_DSYNC write is one FUA entry; a write and fsync two: the write, the flush
	dd if=/dev/urandom of="$m/disk0/disk" bs=4k count=1 seek=$i oflag=direct,dsync \
		conv=notrunc status=none || fail "the write to disk0 failed"
	dd if=/dev/urandom of="$m/disk1/disk" bs=4k count=1 seek=$i oflag=direct conv=notrunc,fsync \
		status=none || fail "the write to disk1 failed"
done
fusermount3 -u "$m/disk1"
wait_disks_gone "$m"
[ "$rqdisk_status" = 0 ] || fail "rqdisk exited with status $rqdisk_status"
[ "$(head -1 "$tmp/order")" = "rqdisk-log-order 1" ] || fail "the header: $(head -1 "$tmp/order")"
# then each disk's end mark, in whichever order the disks closed
[ "$(tail -n +2 "$tmp/order" | head -9 | tr '\n' ' ')" = "0 1 1 0 1 1 0 1 1 " ] ||
	fail "the order is $(tail -n +2 "$tmp/order" | tr '\n' ' ')"
[ "$(tail -n +11 "$tmp/order" | sort | tr '\n' ' ')" = "0 1 " ] ||
	fail "the end marks: $(tail -n +11 "$tmp/order" | tr '\n' ' ')"
[ "$(lines 0)" = "$(entries "$tmp/log0")" ] || fail "disk0: $(lines 0) lines, $(entries "$tmp/log0") entries"
[ "$(lines 1)" = "$(entries "$tmp/log1")" ] || fail "disk1: $(lines 1) lines, $(entries "$tmp/log1") entries"
[ "$(lines 0) $(lines 1)" = "4 7" ] || fail "lines: $(lines 0) $(lines 1), not 4 7"

say "each log replays alone onto a copy of its image as it was"
for n in 0 1; do
	img=$tmp/a
	[ $n = 1 ] && img=$tmp/b
	truncate -s 16M "$tmp/replay$n"
	"$dump" replay "$tmp/log$n" "$tmp/replay$n" >/dev/null || fail "log$n does not replay"
	cmp -s "$tmp/replay$n" "$img" || fail "log$n replays to another disk than disk$n's image"
done

say "a lone disk with order=: every line is 0"
rm -f "$tmp/order" "$tmp/log0" "$tmp/log1"
start_rqdisk --filter "log-writes:file=$tmp/log0,order=$tmp/order" "$tmp/a" "$m"
dd if=/dev/urandom of="$rqdisk_disk" bs=4k count=2 oflag=direct conv=notrunc,fsync status=none
stop_rqdisk
[ "$(tail -n +2 "$tmp/order" | sort -u)" = 0 ] || fail "a lone disk's order: $(cat "$tmp/order")"
[ "$(lines 0)" = "$(entries "$tmp/log0")" ] || fail "$(lines 0) lines, $(entries "$tmp/log0") entries"

say "refused, nothing left: order= the log, an order file already there, a failed start"
rm -f "$tmp/order" "$tmp/log0"
"$RQDISK" -f --filter "log-writes:file=$tmp/log%d,order=$tmp/log%d" --disk "$tmp/b" "$tmp/a" \
	"$m" 2>"$tmp/err" && fail "order= the log was taken"
grep -q "order= is the log" "$tmp/err" || fail "said: $(cat "$tmp/err")"
touch "$tmp/order"
status=0
"$RQDISK" -f --filter "log-writes:file=$tmp/log%d,order=$tmp/order" --disk "$tmp/b" "$tmp/a" \
	"$m" 2>"$tmp/err" || status=$?
[ $status = 1 ] || fail "an order file already there: status $status"
grep -q "order=$tmp/order" "$tmp/err" || fail "said: $(cat "$tmp/err")"
[ ! -e "$tmp/log0" ] && [ ! -e "$tmp/log1" ] || fail "logs left by a refused start"
rm "$tmp/order"
"$RQDISK" -f --filter "log-writes:file=$tmp/log%d,order=$tmp/order" --disk "$tmp/missing" \
	"$tmp/a" "$m" 2>"$tmp/err" && fail "started with disk1 missing"
[ ! -e "$tmp/order" ] || fail "the order file is left by a failed start"
[ ! -e "$tmp/log0" ] || fail "disk0's log is left by a failed start"
no_mount_under "$m" && [ -z "$(ls -A "$m")" ] || fail "a failed start left something in $m"
exit 0
