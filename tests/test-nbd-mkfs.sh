#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-nbd-mkfs.sh - a file system on an NBD export through rqdisk: loop-
# attach the disk (2 connections to nbdkit's file plugin), mkfs.ext4, copy
# a tree; e2fsck finds it clean on the loop device and on the server's
# image; after a restart of rqdisk every file has its checksum.
source "$(dirname "$0")/functions.sh"
source "$(dirname "$0")/nbd-functions.sh"
requires_root
requires_fuse
requires_loop
requires mkfs.ext4 e2fsck sha256sum tar mount umount
requires_nbd

for src in /usr/include /usr/share/doc /usr/lib; do
	[ -d "$src" ] && break
done
make_tmpdir tmp
(cd "$src" && find . -xdev -type f -readable -size -1M -print0 2>/dev/null | sort -z |
	head -z -n 2000) >"$tmp/list"
[ -s "$tmp/list" ] || skip "no files under $src to copy"
(cd "$src" && xargs -0 sha256sum <"$tmp/list") >"$tmp/sums" || skip "cannot read the files under $src"

mkdir "$tmp/mnt" "$tmp/fs"
truncate -s 128M "$tmp/img"
sock=$tmp/sock
uri="nbd+unix:///?socket=$sock"
start_nbdkit "$sock" file "$tmp/img"

say "mkfs.ext4 on a loop device over the disk, a tree copied, e2fsck clean"
start_rqdisk --connections 2 "$uri" "$tmp/mnt"
loop_attach dev "$rqdisk_disk" --direct-io=on
mkfs.ext4 -q -F "$dev" || fail "mkfs.ext4 failed"
mount_at "$dev" "$tmp/fs"
tar -C "$src" --null -T "$tmp/list" -cf - | tar -C "$tmp/fs" -xf - || fail "copying failed"
sync -f "$tmp/fs" || fail "syncing the file system failed: a write to the disk failed"
umount "$tmp/fs" || fail "umount failed"
e2fsck -fn "$dev" || fail "e2fsck on the loop device found errors (status $?)"
loop_detach "$dev"
stop_rqdisk
e2fsck -fn "$tmp/img" || fail "e2fsck on the server's image found errors (status $?)"

say "after a restart: every file has its checksum"
start_rqdisk "$uri" "$tmp/mnt"
loop_attach dev "$rqdisk_disk" --direct-io=off
mount_at "$dev" "$tmp/fs" -o ro
(cd "$tmp/fs" && sha256sum -c --quiet --strict "$tmp/sums") || fail "files differ from their originals"
umount "$tmp/fs" || fail "umount failed"
loop_detach "$dev"
stop_rqdisk
echo "PASS"
