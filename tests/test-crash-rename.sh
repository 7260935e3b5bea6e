#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-crash-rename.sh - an application replaces a file by writing a
# temporary one and renaming it over the original, on ext4 on an rqdisk disk
# logged with --filter log-writes; rqdisk-crash then checks every flush
# point of the log, with up to one write of its epoch lost, with
# contrib/crash/check-rename: the file must hold the old or the new bytes.
#  - Without an fsync before the rename, states with the file empty exist:
#    ext4 (mounted noauto_da_alloc, so no heuristic writes the data at the
#    rename; commit=1 so the rename commits before the data is written)
#    makes the rename durable before the data.
#  - With the fsync, no such state exists.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires_loop
requires mkfs.ext4 mount umount cmp

crash=$top_builddir/src/crash/rqdisk-crash
check=$top_srcdir/contrib/crash/check-rename
[ -x "$crash" ] || fail "$crash is not built"

make_tmpdir tmp
mkdir "$tmp/mnt" "$tmp/fs"
seq 1 2000 >"$tmp/old"
seq 5000 9000 >"$tmp/new"

# replace FSYNC: base.FSYNC (ext4 with the old file) and log.FSYNC (the replacement)
replace()
{
	local dev img=$tmp/img.$1

	truncate -s 64M "$img"
	mkfs.ext4 -q -F "$img" || fail "mkfs.ext4 failed"
	start_rqdisk "$img" "$tmp/mnt"
	loop_attach dev "$rqdisk_disk" --direct-io=on
	mount_at "$dev" "$tmp/fs"
	cp "$tmp/old" "$tmp/fs/file"
	umount "$tmp/fs" || fail "umount failed"
	loop_detach "$dev"
	stop_rqdisk

	start_rqdisk --filter "log-writes:file=$tmp/log.$1,base=$tmp/base.$1" "$img" "$tmp/mnt"
	loop_attach dev "$rqdisk_disk" --direct-io=on
	mount_at "$dev" "$tmp/fs" -o noauto_da_alloc,commit=1
	cp "$tmp/new" "$tmp/fs/file.tmp"
	[ "$1" = 1 ] && { sync "$tmp/fs/file.tmp" || fail "fsync failed"; }
	mv "$tmp/fs/file.tmp" "$tmp/fs/file" || fail "rename failed"
	echo renamed >"$tmp/mnt/log/mark"
	sleep 3 # a journal commit or two
	umount "$tmp/fs" || fail "umount failed"
	loop_detach "$dev"
	stop_rqdisk
}

say "rename without fsync: states with the file empty or missing exist"
replace 0
status=0
"$crash" --at flush --drop 1 -j 2 "$tmp/base.0" "$tmp/log.0" -- \
	"$check" {} file "$tmp/old" "$tmp/new" >"$tmp/out" 2>&1 || status=$?
cat "$tmp/out"
[ $status = 1 ] || fail "rqdisk-crash exited $status, not 1: no state lost the new data"
grep -Eq "/file is (empty|missing)" "$tmp/out" ||
	fail "the failing states are not an empty or missing file"

say "fsync before the rename: the file is the old or the new one in every state"
replace 1
status=0
"$crash" --at flush --drop 1 -j 2 "$tmp/base.1" "$tmp/log.1" -- \
	"$check" {} file "$tmp/old" "$tmp/new" >"$tmp/out" 2>&1 || status=$?
cat "$tmp/out"
[ $status = 0 ] || fail "rqdisk-crash exited $status: a state lost the fsynced file"
grep -Eq "^(prefix|drop) +[1-9]" "$tmp/out" || fail "no state was checked"
echo PASS
