#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-crash-rename-cut.sh - an application replaces a file by writing a
# temporary one and renaming it over the original; the power is cut (the
# write-cache filter's power/cut) a few seconds later, after ext4 has
# committed its journal.  Without an fsync before the rename the file is
# left empty: the rename was durable, the data was still in the page cache
# (ext4 mounted noauto_da_alloc, so no heuristic flushes it at the rename,
# commit=1 so the rename commits within the wait).  With the fsync the file
# holds the new content.  The disk then comes back (power/restore) and
# e2fsck finds the file system clean after its journal is replayed.  A
# sync anywhere on the machine (another test's) writes the data back
# before the cut: FIEMAP shows it is no longer delayed, and that attempt
# without fsync is made again, up to three times.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires_loop
requires mkfs.ext4 e2fsck mount umount filefrag

make_tmpdir tmp
mkdir "$tmp/mnt" "$tmp/fs"
pw=$tmp/mnt/power

# wait_state S: power/state shows S within 10 s.
wait_state()
{
	local i

	for ((i = 0; i < 100; i++)); do
		[ "$(cat "$pw/state")" = "$1" ] && return 0
		sleep 0.1
	done
	fail "power/state is $(cat "$pw/state"), not $1"
}

# replace_then_cut FSYNC: the file holds "old", durably; the application
# writes "new" to file.tmp, fsyncs it when FSYNC is 1, renames it over
# file; 3 s later the power is cut.  Sets got to what the file holds after
# the disk comes back and its journal is replayed ("missing" if it is gone),
# and delayed to 1 if the new data was still in the page cache at the cut
# (its extent delayed allocation: filefrag without -s does not sync).
replace_then_cut()
{
	local dev img=$tmp/img.$1

	truncate -s 64M "$img"
	mkfs.ext4 -q -F "$img" || fail "mkfs.ext4 failed"
	start_rqdisk --filter write-cache:expire=0 "$img" "$tmp/mnt"
	loop_attach dev "$rqdisk_disk" --direct-io=on
	mount_at "$dev" "$tmp/fs" -o noauto_da_alloc,commit=1
	echo old >"$tmp/fs/file"
	sync -f "$tmp/fs" || fail "sync failed"

	echo new >"$tmp/fs/file.tmp"
	[ "$1" = 1 ] && { sync "$tmp/fs/file.tmp" || fail "fsync failed"; }
	mv "$tmp/fs/file.tmp" "$tmp/fs/file" || fail "rename failed"
	sleep 3
	delayed=0
	filefrag -v "$tmp/fs/file" | grep -q delalloc && delayed=1
	echo all >"$pw/cut" || fail "the power cut failed"
	wait_state off

	umount "$tmp/fs" 2>/dev/null # ext4 sees EIO now; what it holds is gone with the power
	loop_detach "$dev"
	echo 1 >"$pw/restore" || fail "restore failed"
	stop_rqdisk

	loop_attach dev "$img"
	mount_at "$dev" "$tmp/fs" # replays the journal
	if [ -e "$tmp/fs/file" ]; then
		if [ -s "$tmp/fs/file" ]; then got=$(cat "$tmp/fs/file"); else got=empty; fi
	else
		got=missing
	fi
	umount "$tmp/fs" || fail "umount failed"
	e2fsck -fn "$dev" || fail "e2fsck found the file system corrupt after the cut"
	loop_detach "$dev"
}

say "rename without fsync, then a power cut"
for attempt in 1 2 3; do
	replace_then_cut 0
	echo "the file holds: $got (attempt $attempt, data still delayed at the cut: $delayed)"
	[ "$delayed" = 1 ] && break
done
[ "$delayed" = 1 ] || fail "the data was written back before the cut in every attempt (a sync elsewhere?)"
[ "$got" = empty ] || [ "$got" = missing ] ||
	fail "without fsync the file holds '$got': the cut did not lose the unsynced data"

say "fsync, rename, then a power cut"
replace_then_cut 1
echo "the file holds: $got"
[ "$got" = new ] || fail "with fsync before the rename the file holds '$got', not 'new'"
echo PASS
