#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-null.sh - rqdisk --null runs every request through the queue and
# ends it at once, like null_blk: writes, flushes and reads succeed and are
# counted in the disk's stat, queue/model says null, and the image is never
# touched, with a timing model too.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires dd cmp stat awk

make_tmpdir tmp
size=$((8 * 1024 * 1024))
random_file "$tmp/img" $size
cp "$tmp/img" "$tmp/ref"
mtime=$(stat -c %Y.%y "$tmp/img")
mkdir "$tmp/mnt"
start_rqdisk --null "$tmp/img" "$tmp/mnt"
disk=$rqdisk_disk

say "direct writes, a flush and direct reads all succeed"
dd if=/dev/urandom of="$disk" bs=64k count=32 oflag=direct conv=notrunc,fsync status=none ||
	fail "direct writes to a --null disk failed"
dd if=/dev/urandom of="$disk" bs=4k count=8 seek=1000 oflag=direct,sync conv=notrunc \
	status=none || fail "O_SYNC writes to a --null disk failed"
dd if="$disk" of=/dev/null bs=64k count=32 iflag=direct status=none ||
	fail "direct reads of a --null disk failed"

say "the disk's stat counts them as done"
read -r -a st <"$tmp/mnt/stat"
[ "${st[0]}" -ge 32 ] || fail "stat counts ${st[0]} reads, not at least 32"
[ "${st[4]}" -ge 40 ] || fail "stat counts ${st[4]} writes, not at least 40"
[ "${st[8]}" = 0 ] || fail "stat shows ${st[8]} requests in flight with none running"

[ "$(cat "$tmp/mnt/queue/model")" = null ] || fail "queue/model: $(cat "$tmp/mnt/queue/model")"
stop_rqdisk

say "with a model, queue/model names both, and writes still succeed"
start_rqdisk --null --model ssd:read_us=2000 "$tmp/img" "$tmp/mnt"
model=$(cat "$tmp/mnt/queue/model")
[[ $model == "null ssd read_us=2000 "* ]] || fail "queue/model: $model"
dd if=/dev/urandom of="$disk" bs=4k count=16 oflag=direct conv=notrunc status=none ||
	fail "direct writes to a --null disk with a model failed"
stop_rqdisk
say "after unmount: the image is as it was, byte for byte"
cmp "$tmp/img" "$tmp/ref" || fail "--null changed the image"
[ "$(stat -c %Y.%y "$tmp/img")" = "$mtime" ] || fail "--null changed the image's mtime"
echo "PASS"
