#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-mkfs-fsck.sh - a real file system on the disk: loop-attach it (direct
# I/O on, then off), mkfs.ext4, copy a tree, and after every unmount and
# restart of rqdisk e2fsck finds it clean and every file has its checksum.
#
# test-mkfs-fsck-*.sh run this with other rqdisk and losetup options: they set
# mkfs_rqdisk_opts and mkfs_losetup_opts (arrays) and source this file.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires_loop
requires mkfs.ext4 e2fsck sha256sum tar mount umount

[ -n "${mkfs_rqdisk_opts+set}" ] || mkfs_rqdisk_opts=()
[ -n "${mkfs_losetup_opts+set}" ] || mkfs_losetup_opts=()

# A tree to copy, about 50 MB of it in two halves.
for src in /usr/include /usr/share/doc /usr/lib; do
	[ -d "$src" ] && break
done
make_tmpdir tmp
(cd "$src" && find . -xdev -type f -readable -size -4M -printf '%s\t%P\0' 2>/dev/null | sort -z) |
	awk -v RS='\0' -v ORS='\0' -v a="$tmp/list.A" -v b="$tmp/list.B" '
		{ n = index($0, "\t"); size = substr($0, 1, n - 1); name = substr($0, n + 1) }
		total < 25e6 { print name > a; total += size; next }
		total < 50e6 { print name > b; total += size }'
for half in A B; do
	[ -s "$tmp/list.$half" ] || skip "not enough files under $src to copy"
	(cd "$src" && xargs -0 sha256sum <"$tmp/list.$half") >"$tmp/sums.$half" ||
		skip "cannot read the files under $src"
done
echo "copying $(tr -cd '\0' <"$tmp/list.A" | wc -c) + $(tr -cd '\0' <"$tmp/list.B" | wc -c) files from $src"

truncate -s 256M "$tmp/img"
mkdir "$tmp/mnt" "$tmp/fs"

# copy_half HALF: the half of the tree into the file system.
copy_half()
{
	mkdir "$tmp/fs/$1"
	tar -C "$src" --null -T "$tmp/list.$1" -cf - | tar -C "$tmp/fs/$1" -xf - ||
		fail "copying into the file system failed"
	# syncfs reports a write-back error: a write the disk failed
	sync -f "$tmp/fs" || fail "syncing the file system failed: a write to the disk failed"
}

# check_half HALF: every file of that half has its checksum.
check_half()
{
	(cd "$tmp/fs/$1" && sha256sum -c --quiet --strict "$tmp/sums.$1") ||
		fail "files of half $1 differ from their originals"
}

# attach LOSETUP-OPTIONS...: the disk on a loop device, in $dev.
attach()
{
	loop_attach dev "$rqdisk_disk" "${mkfs_losetup_opts[@]}" "$@"
	echo "loop device $dev: direct I/O $(cat "/sys/block/${dev#/dev/}/loop/dio" 2>/dev/null)," \
		"logical block size $(blockdev --getss "$dev")"
}

# detach: fsck the unmounted file system on the loop device, detach, stop rqdisk.
fsck_detach_stop()
{
	umount "$tmp/fs" || fail "umount failed"
	say "e2fsck -fn on the loop device finds it clean"
	e2fsck -fn "$dev" || fail "e2fsck found errors (status $?)"
	loop_detach "$dev"
	stop_rqdisk
	say "e2fsck -fn on the image itself finds it clean: everything reached it"
	e2fsck -fn "$tmp/img" || fail "e2fsck on the image found errors (status $?)"
}

say "first run: loop with direct I/O, mkfs.ext4, copy half A"
start_rqdisk "${mkfs_rqdisk_opts[@]}" "$tmp/img" "$tmp/mnt"
attach --direct-io=on
mkfs.ext4 -q -F "$dev" || fail "mkfs.ext4 failed"
mount_at "$dev" "$tmp/fs"
copy_half A
check_half A
fsck_detach_stop

say "second run: loop without direct I/O, half A intact, copy half B"
start_rqdisk "${mkfs_rqdisk_opts[@]}" "$tmp/img" "$tmp/mnt"
attach --direct-io=off
mount_at "$dev" "$tmp/fs"
check_half A
copy_half B
check_half B
fsck_detach_stop

say "third run: both halves intact"
start_rqdisk "${mkfs_rqdisk_opts[@]}" "$tmp/img" "$tmp/mnt"
attach --direct-io=on
mount_at "$dev" "$tmp/fs" -o ro
check_half A
check_half B
umount "$tmp/fs" || fail "umount failed"
loop_detach "$dev"
stop_rqdisk
echo "PASS"
