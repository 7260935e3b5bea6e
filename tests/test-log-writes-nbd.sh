#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-log-writes-nbd.sh - the log-writes filter over an NBD export.
# base= is refused in one line (the export is no file here to copy, though
# a file may have its URI's name), nothing made.  Writes the server
# answered and lost when it was killed (nbdkit's cache filter in writeback
# mode): the fsync that reports the loss leaves the mark
# rqdisk-flush-failed in the log, so that the next flush's FLUSH entry
# does not call the lost write durable, and rqdisk-crash checks no state
# past it (exit 3, saying why).
source "$(dirname "$0")/functions.sh"
source "$(dirname "$0")/nbd-functions.sh"
requires_root
requires_fuse
requires dd timeout
requires_nbd
nbdkit --filter=cache null --version >/dev/null 2>&1 || skip "no nbdkit cache filter"

crash=$top_builddir/src/crash/rqdisk-crash
dump=$top_builddir/tests/log-writes-dump
[ -x "$crash" ] && [ -x "$dump" ] || fail "rqdisk-crash or log-writes-dump is not built"

make_tmpdir tmp
mkdir "$tmp/mnt"
sock=$tmp/sock
uri="nbd+unix:///?socket=$sock"
random_file "$tmp/img" $((16 << 20))
cp "$tmp/img" "$tmp/orig"
random_file "$tmp/new" 4096

start_cached()
{
	start_nbdkit "$sock" --filter=cache file "$tmp/img" cache=writeback
}

say "base= over an NBD export: one line, status 1, no file made"
start_cached
status=0
timeout 30 "$RQDISK" -f --filter "log-writes:file=$tmp/bad.log,base=$tmp/bad.base" "$uri" \
	"$tmp/mnt" 2>"$tmp/err" || status=$?
echo "status $status: $(cat "$tmp/err")"
[ "$status" = 1 ] || fail "base= over NBD: status $status, not 1"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "base= over NBD: not one line: $(cat "$tmp/err")"
grep -qF "log-writes: base= needs an image file: the device below has none to copy" "$tmp/err" ||
	fail "base= over NBD: '$(cat "$tmp/err")'"
is_mounted "$tmp/mnt" && fail "base= over NBD mounted the disk"
[ ! -e "$tmp/bad.log" ] && [ ! -e "$tmp/bad.base" ] || fail "base= over NBD left a file behind"

# lost NAME HOW: a write, the server killed with it unflushed, the loss told
# by HOW (an fsync, or an O_DSYNC write), an fsync that then succeeds; the
# log must mark the loss before its FLUSH entry, and rqdisk-crash stop there.
lost()
{
	local name=$1 how=$2

	start_rqdisk --nbd-timeout 20 --filter "log-writes:file=$tmp/$name.log" "$uri" "$tmp/mnt" \
		2>"$tmp/$name.rqerr"
	timeout 120 dd if="$tmp/new" of="$tmp/mnt/disk" bs=4k seek=5 count=1 oflag=direct \
		conv=notrunc status=none || fail "$name: the write failed"
	stop_nbdkit KILL
	start_cached
	if [ "$how" = fsync ]; then
		timeout 120 dd if=/dev/null of="$tmp/mnt/disk" conv=notrunc,fsync status=none 2>/dev/null
	else
		timeout 120 dd if="$tmp/new" of="$tmp/mnt/disk" bs=4k seek=9 count=1 oflag=direct,dsync \
			conv=notrunc status=none 2>/dev/null
	fi && fail "$name: the $how after the server lost a write succeeded"
	timeout 120 dd if=/dev/null of="$tmp/mnt/disk" conv=notrunc,fsync status=none ||
		fail "$name: the fsync after the $how that reported the loss failed"
	stop_rqdisk
	"$dump" "$tmp/$name.log" >"$tmp/$name.dump" || fail "$name: log-writes-dump refused the log"
	cat "$tmp/$name.dump"
	[ "$(awk 'NR > 1 { print $2 }' "$tmp/$name.dump" | tr '\n' ' ')" = "WRITE MARK FLUSH MARK " ] ||
		fail "$name: the log's entries are $(cat "$tmp/$name.dump")"
	grep -q "^1 MARK 0 0 rqdisk-flush-failed$" "$tmp/$name.dump" ||
		fail "$name: no rqdisk-flush-failed after the write"
	status=0
	TMPDIR=$tmp timeout 120 "$crash" --via copy "$tmp/orig" "$tmp/$name.log" -- true \
		>"$tmp/$name.out" 2>"$tmp/$name.cerr" || status=$?
	cat "$tmp/$name.out" "$tmp/$name.cerr"
	[ "$status" = 3 ] || fail "$name: rqdisk-crash on the log of a lost write: status $status, not 3"
	grep -qF "skipped: a flush failed at entry 1 (writes before it may be lost)" "$tmp/$name.cerr" ||
		fail "$name: rqdisk-crash does not say why it skipped points"
}

say "a write the server lost: the failed fsync leaves a mark, rqdisk-crash stops there (exit 3)"
lost fsync fsync
say "the loss heard by an O_DSYNC write, not by a flush: the mark is there all the same (exit 3)"
lost dsync "O_DSYNC write"
echo "PASS: test-log-writes-nbd.sh"
