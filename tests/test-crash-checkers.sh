#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-crash-checkers.sh - contrib/crash's checkers under rqdisk-crash on
# ext4 images: check-fs passes a clean state and fails one with no file
# system or with a damaged bitmap; check-rename passes the old and the new
# file and fails a state where the file is missing.  check-fs also passes a
# clean XFS and btrfs and fails an XFS whose second allocation group lost
# its superblock copy (xfs_repair -n finds it), where their tools are installed.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires_loop
requires mkfs.ext4 e2fsck blkid debugfs

crash=$top_builddir/src/crash/rqdisk-crash
gen=$top_builddir/tests/crash-gen-log
checkfs=$top_srcdir/contrib/crash/check-fs
checkrename=$top_srcdir/contrib/crash/check-rename
[ -x "$crash" ] || fail "$crash is not built"

make_tmpdir tmp
mkdir "$tmp/mnt" "$tmp/t"
export TMPDIR=$tmp/t # rqdisk-crash's mount goes there, apart from any other's

# old.img: ext4 with /config the old file; new.img: /config replaced by rename
printf 'old config\n' >"$tmp/old.txt"
printf 'new config, longer\n' >"$tmp/new.txt"
truncate -s 16M "$tmp/old.img"
mkfs.ext4 -q -F -b 4096 "$tmp/old.img"
loop_attach dev "$tmp/old.img"
mount_at "$dev" "$tmp/mnt"
cp "$tmp/old.txt" "$tmp/mnt/config"
umount "$tmp/mnt"
loop_detach "$dev"
cp "$tmp/old.img" "$tmp/new.img"
loop_attach dev "$tmp/new.img"
mount "$dev" "$tmp/mnt"
cp "$tmp/new.txt" "$tmp/mnt/config.tmp"
sync
mv "$tmp/mnt/config.tmp" "$tmp/mnt/config"
umount "$tmp/mnt"
loop_detach "$dev"

# the log: all of new.img in one write, then a flush
printf 'writefile 0 %s\nflush\n' "$tmp/new.img" | "$gen" -s 4096 >"$tmp/log"

# run NAME ARGS...: status in $status, output in $tmp/NAME.out
run()
{
	local name=$1

	shift
	status=0
	timeout -s KILL 300 "$crash" "$@" >"$tmp/$name.out" 2>&1 || status=$?
	echo "+ rqdisk-crash $*: status $status"
	cat "$tmp/$name.out"
}

# With --drop 1: flush:1 and end are new.img, flush:1+drop:0 is BASE.  end
# is folded into flush:1 (the same bytes) unless --no-dedup.
say "check-fs: old.img and new.img are consistent"
run fs-good -j 2 --drop 1 --no-dedup "$tmp/old.img" "$tmp/log" -- "$checkfs" {}
[ "$status" = 0 ] || fail "check-fs on clean states: status $status"
grep -q "^prefix  *2  *2  *0  *0$" "$tmp/fs-good.out" || fail "not two prefix states checked"
grep -q "^drop  *1  *1  *0  *0$" "$tmp/fs-good.out" || fail "not one drop state checked"

say "check-fs: a state with no file system fails"
truncate -s 16M "$tmp/blank.img"
run fs-blank --drop 1 "$tmp/blank.img" "$tmp/log" -- "$checkfs" {}
[ "$status" = 1 ] || fail "check-fs on a blank state: status $status"
grep -qxF "failed: flush:1+drop:0 (exit 1)" "$tmp/fs-blank.out" || fail "flush:1+drop:0 not reported"
grep -qF "no file system found" "$tmp/fs-blank.out" || fail "check-fs did not say why"

say "check-fs: a state whose block bitmap lost a used block fails"
cp "$tmp/old.img" "$tmp/bad.img"
blk=$(debugfs -R "bmap /config 0" "$tmp/bad.img" 2>/dev/null)
[ -n "$blk" ] && [ "$blk" -gt 0 ] || fail "debugfs found no block of /config"
debugfs -w -R "freeb $blk" "$tmp/bad.img" >/dev/null 2>&1
run fs-bad --drop 1 "$tmp/bad.img" "$tmp/log" -- "$checkfs" {}
[ "$status" = 1 ] || fail "check-fs on a damaged state: status $status"
grep -qxF "failed: flush:1+drop:0 (exit 1)" "$tmp/fs-bad.out" || fail "the damaged state not reported"
grep -qF "the ext4 checker found damage" "$tmp/fs-bad.out" || fail "check-fs did not say why"

say "check-rename: the old file when the write is lost, the new one otherwise"
run rename-good --drop 1 "$tmp/old.img" "$tmp/log" -- "$checkrename" {} /config "$tmp/old.txt" "$tmp/new.txt"
[ "$status" = 0 ] || fail "check-rename on good states: status $status"

say "check-rename: a state where /config is missing fails"
cp "$tmp/old.img" "$tmp/none.img"
debugfs -w -R "rm /config" "$tmp/none.img" >/dev/null 2>&1
run rename-missing --drop 1 "$tmp/none.img" "$tmp/log" -- "$checkrename" {} /config "$tmp/old.txt" "$tmp/new.txt"
[ "$status" = 1 ] || fail "check-rename on a state without /config: status $status"
grep -qF "/config is missing" "$tmp/rename-missing.out" || fail "check-rename did not say why"

say "--loop: {} is a block device with the state on it, detached after"
cat >"$tmp/is-block" <<'SH'
#!/bin/sh
# is-block DEV: DEV is a loop device holding a clean ext4, and it is the only
# loop device on a state of this run (each state's is detached after it)
case $1 in /dev/loop*) ;; *) echo "not a loop device: $1"; exit 1 ;; esac
n=$(losetup -a | grep -cF "($TMPDIR/rqdisk-crash.")
[ "$n" = 1 ] || { echo "$n loop devices on states attached"; exit 1; }
[ -b "$1" ] && e2fsck -fn "$1"
SH
chmod +x "$tmp/is-block"
run loop --loop --drop 1 --no-dedup "$tmp/old.img" "$tmp/log" -- "$tmp/is-block" {}
[ "$status" = 0 ] || fail "--loop: status $status"
grep -q "^prefix  *2  *2  *0  *0$" "$tmp/loop.out" || fail "--loop: not two prefix states checked"
run noloop "$tmp/old.img" "$tmp/log" -- "$tmp/is-block" {}
[ "$status" = 1 ] || fail "without --loop {} was a loop device too"
if losetup -a | grep -qF "($TMPDIR/rqdisk-crash."; then
	fail "a loop device still holds a state: $(losetup -a | grep -F "($TMPDIR/rqdisk-crash.")"
fi

# A log of one flush: its states are BASE itself.
printf 'flush\n' | "$gen" -s 4096 >"$tmp/flush.log"
# have PROGRAM...: every one is installed
have()
{
	local p

	for p; do command -v "$p" >/dev/null || return 1; done
}

if have mkfs.xfs xfs_repair xfs_db; then
	say "check-fs: a clean XFS passes, one whose AG 1 lost its superblock copy fails"
	truncate -s 320M "$tmp/xfs.img"
	mkfs.xfs -q "$tmp/xfs.img" || fail "mkfs.xfs failed"
	run xfs-good "$tmp/xfs.img" "$tmp/flush.log" -- "$checkfs" {}
	[ "$status" = 0 ] || fail "check-fs on a clean XFS: status $status"
	ag=$(xfs_db -r -c "sb 0" -c "p agblocks" "$tmp/xfs.img" | awk '{ print $3 }')
	bs=$(xfs_db -r -c "sb 0" -c "p blocksize" "$tmp/xfs.img" | awk '{ print $3 }')
	dd if=/dev/zero of="$tmp/xfs.img" bs=512 seek=$((ag * bs / 512)) count=1 conv=notrunc \
		status=none
	run xfs-bad "$tmp/xfs.img" "$tmp/flush.log" -- "$checkfs" {}
	[ "$status" = 1 ] || fail "check-fs on a damaged XFS: status $status"
	grep -qF "the xfs checker found damage" "$tmp/xfs-bad.out" || fail "xfs_repair -n found nothing"
	rm "$tmp/xfs.img"
else
	echo "no XFS tools: the XFS case is not run"
fi
if have mkfs.btrfs btrfs; then
	say "check-fs: a clean btrfs passes"
	truncate -s 128M "$tmp/btrfs.img"
	mkfs.btrfs -q "$tmp/btrfs.img" >/dev/null || fail "mkfs.btrfs failed"
	run btrfs-good "$tmp/btrfs.img" "$tmp/flush.log" -- "$checkfs" {}
	[ "$status" = 0 ] || fail "check-fs on a clean btrfs: status $status"
	rm "$tmp/btrfs.img"
else
	echo "no btrfs tools: the btrfs case is not run"
fi
! grep -qF " $tmp/t/" /proc/mounts || fail "a mount is left: $(grep -F " $tmp/t/" /proc/mounts)"
echo "PASS: test-crash-checkers.sh"
