#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-crash-btrfs-raid1.sh - contrib/crash/btrfs-raid1 in small: btrfs -d raid1
# -m raid1 over two disks of one rqdisk, logged with one order, a few rounds of
# files written, fsynced, overwritten, renamed and removed; rqdisk-crash --order
# --drop 1 checks the joint states with check-btrfs-raid1 (btrfs check, a mount,
# every file read).  None fails: btrfs orders its writes with flushes on both
# disks.  The checker is not vacuous: a state whose disk1 is blank fails it.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires_loop
requires mkfs.btrfs btrfs mount umount losetup
grep -qw btrfs /proc/filesystems || skip "this kernel has no btrfs"

script=$top_srcdir/contrib/crash/btrfs-raid1
checker=$top_srcdir/contrib/crash/check-btrfs-raid1
[ -x "$top_builddir/src/crash/rqdisk-crash" ] || fail "rqdisk-crash is not built"
make_tmpdir tmp

say "a small workload: no joint state fails"
status=0
"$script" --files 4 --drop 1 "$top_builddir" >"$tmp/out" 2>"$tmp/err" || status=$?
cat "$tmp/out"
[ $status = 0 ] || fail "btrfs-raid1: status $status: $(cat "$tmp/err")"
read -r states failed <<<"$(sed -n 's/.*: \([0-9]*\) joint states, \([0-9]*\) failed.*/\1 \2/p' "$tmp/out")"
((states > 10)) || fail "only ${states:-no} joint states"
[ "$failed" = 0 ] || fail "$failed joint states failed"

say "the checker fails a pair whose disk1 is blank"
truncate -s 160M "$tmp/a" "$tmp/b"
l0=$(losetup -f --show "$tmp/a")
l1=$(losetup -f --show "$tmp/b")
mkfs.btrfs -q -f -d raid1 -m raid1 "$l0" "$l1" >/dev/null 2>&1 || fail "mkfs.btrfs failed"
losetup -d "$l0" "$l1"
btrfs device scan --forget >/dev/null 2>&1 || :
RQDISK_CRASH_DISKS=2 RQDISK_CRASH_IMAGE0=$tmp/a RQDISK_CRASH_IMAGE1=$tmp/b "$checker" >"$tmp/ok" ||
	fail "the checker fails a fresh file system: $(cat "$tmp/ok")"
truncate -s 0 "$tmp/b"
truncate -s 160M "$tmp/b"
status=0
RQDISK_CRASH_DISKS=2 RQDISK_CRASH_IMAGE0=$tmp/a RQDISK_CRASH_IMAGE1=$tmp/b "$checker" >"$tmp/bad" ||
	status=$?
[ $status = 1 ] || fail "a blank disk1: status $status: $(cat "$tmp/bad")"
[ "$(wc -l <"$tmp/bad")" = 1 ] || fail "not one line: $(cat "$tmp/bad")"
exit 0
