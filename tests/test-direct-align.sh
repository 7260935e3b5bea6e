#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-direct-align.sh - --direct on a file system whose O_DIRECT needs 4096-byte
# blocks: a 512-byte logical block is refused before anything is mounted, in one
# line that says what to use; with --logical-block-size 4096 the disk works.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires_loop
requires mkfs.ext4 timeout

make_tmpdir tmp
mkdir "$tmp/fs" "$tmp/mnt"
truncate -s 64M "$tmp/backing"
loop_attach dev "$tmp/backing" --sector-size 4096
mkfs.ext4 -q -F -b 4096 "$dev"
mount_at "$dev" "$tmp/fs"
truncate -s 8M "$tmp/fs/img"
[ "$(blockdev --getss "$dev")" = 4096 ] || skip "the loop device did not take 4096-byte sectors"

say "a 512-byte disk over 4096-byte O_DIRECT is refused"
status=0
timeout 15 "$RQDISK" -f --direct "$tmp/fs/img" "$tmp/mnt" 2>"$tmp/err" || status=$?
cat "$tmp/err"
[ $status = 1 ] || fail "status $status, not 1"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "not one line on stderr"
grep -q "needs I/O in blocks of 4096 bytes, above the logical block size 512 (try --logical-block-size 4096)" \
	"$tmp/err" || fail "the message does not say what O_DIRECT needs"
no_mount_under "$tmp/mnt" || fail "a mount was left behind"

say "with --logical-block-size 4096 it mounts, and direct writes read back"
start_rqdisk --direct --logical-block-size 4096 "$tmp/fs/img" "$tmp/mnt"
random_file "$tmp/data" 65536
dd if="$tmp/data" of="$rqdisk_disk" bs=65536 seek=3 oflag=direct conv=notrunc status=none
dd if="$rqdisk_disk" of="$tmp/back" bs=65536 skip=3 count=1 iflag=direct status=none
cmp "$tmp/data" "$tmp/back" || fail "the data did not read back"
stop_rqdisk
same_bytes "$tmp/data" 0 "$tmp/fs/img" $((3 * 65536)) 65536 || fail "the image does not hold the data"
echo "PASS: --direct takes the file system's O_DIRECT block size"
