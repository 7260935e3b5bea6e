#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-crash-ext4.sh - crash consistency of ext4, checked at the block level.
# contrib/crash/workload-meta (creates, fsyncs, renames over files, an untar,
# removals) runs on ext4 on an rqdisk disk logged with --filter log-writes;
# rqdisk-crash then builds the states a power failure could leave and
# contrib/crash/check-fs mounts each (replaying the journal), unmounts it and
# runs e2fsck -fn.
#  - With barriers (ext4's default) every prefix state at a flush, and every
#    state with up to two writes of the last flush's epoch lost, is clean.
#  - Mounted -o nobarrier, ext4 issues no flush at all: every write is
#    volatile until the end, and among the prefixes of the log and the
#    states with one write lost, some are corrupt: rqdisk-crash exits 1 and
#    names them.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires_loop
requires mkfs.ext4 e2fsck tar mount umount

crash=$top_builddir/src/crash/rqdisk-crash
checkfs=$top_srcdir/contrib/crash/check-fs
workload=$top_srcdir/contrib/crash/workload-meta
[ -x "$crash" ] || fail "$crash is not built"

make_tmpdir tmp
mkdir "$tmp/mnt" "$tmp/fs"

# log_workload NAME MOUNT-OPTIONS: base.NAME (a fresh ext4) and log.NAME (the workload's writes)
log_workload()
{
	local dev img=$tmp/img.$1

	truncate -s 64M "$img"
	mkfs.ext4 -q -F "$img" || fail "mkfs.ext4 failed"
	start_rqdisk --filter "log-writes:file=$tmp/log.$1,base=$tmp/base.$1" "$img" "$tmp/mnt"
	loop_attach dev "$rqdisk_disk" --direct-io=on
	mount_at "$dev" "$tmp/fs" -o "$2"
	"$workload" "$tmp/fs" || fail "the workload failed"
	umount "$tmp/fs" || fail "umount failed"
	loop_detach "$dev"
	stop_rqdisk
	if cmp -s "$tmp/base.$1" "$img"; then fail "the workload left the image as it was"; fi
}

# rows CSV RESULT [CLASS]: how many states of the CSV had that result (and class)
rows()
{
	# an ID with a comma in it is quoted: the first field is read apart
	sed 's/^"[^"]*"/ID/' "$1" | awk -F, -v r="$2" -v c="${3:-}" '$3 == r && (c == "" || $2 == c)' |
		wc -l
}

say "ext4 with barriers: every flush prefix, and up to 2 lost writes of its epoch, is clean"
log_workload barrier barrier
status=0
"$crash" --at flush --drop 2 -j 2 --csv "$tmp/barrier.csv" "$tmp/base.barrier" \
	"$tmp/log.barrier" -- "$checkfs" {} >"$tmp/out" 2>&1 || status=$?
cat "$tmp/out"
[ $status = 0 ] || fail "rqdisk-crash found states of ext4 with barriers corrupt (status $status)"
prefix=$(rows "$tmp/barrier.csv" ok prefix)
drop=$(rows "$tmp/barrier.csv" ok drop)
echo "clean: $prefix prefix states, $drop with lost writes"
[ "$prefix" -ge 10 ] || fail "only $prefix prefix states: the log has too few flushes to test"
[ "$drop" -ge 10 ] || fail "only $drop states with lost writes: nothing was volatile at a flush"

say "ext4 -o nobarrier: some prefixes and lost writes leave it corrupt"
log_workload nobarrier nobarrier
status=0
"$crash" --at 4 --drop 1 -j 2 --csv "$tmp/nobarrier.csv" "$tmp/base.nobarrier" \
	"$tmp/log.nobarrier" -- "$checkfs" {} >"$tmp/out" 2>&1 || status=$?
cat "$tmp/out"
[ $status = 1 ] || fail "rqdisk-crash exited $status, not 1: no corrupt state of ext4 without barriers"
failed=$(rows "$tmp/nobarrier.csv" failed)
echo "corrupt: $failed of $(($(rows "$tmp/nobarrier.csv" ok) + failed)) states"
[ "$failed" -ge 1 ] || fail "no failed state in the CSV"
echo PASS
