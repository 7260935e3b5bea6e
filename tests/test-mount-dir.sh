#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-mount-dir.sh - mounted on a directory, the disk is MOUNTPOINT/disk: a
# regular file of the image's size whose every byte is the image's, through
# writes of any size at any offset (read-modify-write of partial sectors).
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires dd cmp stat

make_tmpdir tmp
size=$((32 * 1024 * 1024))
random_file "$tmp/img" $size
cp "$tmp/img" "$tmp/ref" # what the image must hold: every write applied to it too
mkdir "$tmp/mnt"
start_rqdisk "$tmp/img" "$tmp/mnt"
disk=$rqdisk_disk

say "the mount shows disk, a regular file of the image's size"
entries=$(ls -A "$tmp/mnt")
grep -qx disk <<<"$entries" || fail "the mount shows no disk, only: $(tr "\n" " " <<<"$entries")"
[ "$(stat -c %F "$disk")" = "regular file" ] || fail "disk is a $(stat -c %F "$disk")"
[ "$(stat -c %s "$disk")" = $size ] || fail "disk is $(stat -c %s "$disk") bytes, not $size"

say "the disk reads as the image"
cmp "$disk" "$tmp/ref" || fail "the disk differs from the image before any write"

# offset:length, aligned and not, 1 byte to 3 MiB, the first and last sectors
M=$((1024 * 1024))
writes=(
	0:1 1:1 511:1 511:2 512:512 513:510 1000:3000 4095:4097 4096:4096
	65535:65538 $((7 * 512 + 3)):$((64 * 1024)) 123457:$((3 * M))
	$((3 * M)):$((3 * M)) $((5 * M + 511)):$((M + 1)) $((8 * M - 3)):6
	$((size - 1)):1 $((size - 512)):512 $((size - 700)):700
	$((size - 4097)):4097 $((size - 3 * M - 1)):$((3 * M + 1)) 0:$((3 * M))
	777:1 778:1 779:1
)
for w in "${writes[@]}"; do
	off=${w%:*} len=${w#*:}
	say "write $len bytes at $off, read them back"
	random_file "$tmp/piece" "$len"
	write_at "$tmp/piece" "$disk" "$off" || fail "writing $len bytes at $off failed"
	write_at "$tmp/piece" "$tmp/ref" "$off"
	same_bytes "$tmp/piece" 0 "$disk" "$off" "$len" ||
		fail "$len bytes written at $off do not read back"
done
[ "$(stat -c %s "$disk")" = $size ] || fail "the disk changed size to $(stat -c %s "$disk")"

say "every byte of the disk is right: nothing around the writes changed"
cmp "$disk" "$tmp/ref" || fail "the disk differs from what was written"

say "unaligned reads of odd sizes return the right bytes"
for r in 1:1 511:3 513:1023 4097:12345 $((size - 3)):3 $((size - 1000)):1000 $((2 * M - 5)):$((M + 10)); do
	off=${r%:*} len=${r#*:}
	dd if="$disk" of="$tmp/got" bs="$len" count=1 skip="$off" iflag=skip_bytes,fullblock status=none ||
		fail "reading $len bytes at $off failed"
	[ "$(stat -c %s "$tmp/got")" = "$len" ] || fail "reading $len bytes at $off was short"
	same_bytes "$tmp/got" 0 "$tmp/ref" "$off" "$len" || fail "$len bytes read at $off are wrong"
done

stop_rqdisk
say "after unmount the image holds every write"
cmp "$tmp/img" "$tmp/ref" || fail "the image differs from what was written"
[ "$(stat -c %s "$tmp/img")" = $size ] || fail "the image changed size"
echo "PASS"
