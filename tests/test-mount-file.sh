#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-mount-file.sh - mounted over a regular file, that file is the disk: it
# has the image's size and contents, takes writes, and the file under the
# mount is untouched.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires dd cmp stat

make_tmpdir tmp
size=$((8 * 1024 * 1024))
random_file "$tmp/img" $size
cp "$tmp/img" "$tmp/ref"
echo "the file under the mount" >"$tmp/over"
cp "$tmp/over" "$tmp/over.orig"
start_rqdisk "$tmp/img" "$tmp/over"
disk=$rqdisk_disk
[ "$disk" = "$tmp/over" ] || fail "start_rqdisk took the disk to be $disk"

say "the mount point itself is the disk: a regular file of the image's size"
is_mounted "$tmp/over" || fail "$tmp/over is not a mount point"
[ "$(stat -c %F "$disk")" = "regular file" ] || fail "the disk is a $(stat -c %F "$disk")"
[ "$(stat -c %s "$disk")" = $size ] || fail "the disk is $(stat -c %s "$disk") bytes, not $size"
[ ! -e "$disk/disk" ] || fail "a file mount shows a disk/disk entry"

say "it reads as the image"
cmp "$disk" "$tmp/ref" || fail "the disk differs from the image"

for w in 0:4096 3:5 1025:70000 $((size - 1)):1 $((size - 5000)):5000 100000:$((2 * 1024 * 1024 + 7)); do
	off=${w%:*} len=${w#*:}
	say "write $len bytes at $off, read them back"
	random_file "$tmp/piece" "$len"
	write_at "$tmp/piece" "$disk" "$off" || fail "writing $len bytes at $off failed"
	write_at "$tmp/piece" "$tmp/ref" "$off"
	same_bytes "$tmp/piece" 0 "$disk" "$off" "$len" ||
		fail "$len bytes written at $off do not read back"
done
cmp "$disk" "$tmp/ref" || fail "the disk differs from what was written"

stop_rqdisk
say "after unmount: the image has the writes, the file under the mount is as it was"
cmp "$tmp/img" "$tmp/ref" || fail "the image differs from what was written"
cmp "$tmp/over" "$tmp/over.orig" || fail "the file under the mount changed"
echo "PASS"
