#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-rbd.sh - rqdisk on a Ceph RBD image (a one-node cluster from
# contrib/ceph-single-node.sh): direct and synced writes read back and are
# in the image (rbd export), an fsync is a flush in librbd, so is each
# O_DSYNC write (FUA) and not a plain one, a discard and a
# zeroing reach the image, device/stack names it, ext4 made through a loop
# device checks clean, the multi-queue queue with two hardware queues
# writes from two CPUs at once (each through its own queue, with FUSE over
# io_uring) and flushes, a snapshot is a read-only disk that keeps what it
# held, an OSD that stops answering fails a read in time and a flush at
# exit (status 1), and a bad spec, a missing pool, image or snapshot and an
# unreachable cluster are refused in one line, nothing mounted.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires_loop
requires dd cmp ceph-mon ceph-osd ceph rbd rados monmaptool ceph-authtool uuidgen ss \
	mkfs.ext4 e2fsck fallocate python3
grep -q "rbd:POOL" <<<"$("$RQDISK" --help)" || skip "rqdisk was built without librbd"

make_tmpdir tmp
mkdir "$tmp/mnt"
M=$((1 << 20))

# refused SPEC WORDS: rqdisk on SPEC exits non-zero with one line saying WORDS, nothing mounted.
refused()
{
	local status=0

	timeout 60 "$RQDISK" -f "$1" "$tmp/mnt" 2>"$tmp/err" || status=$?
	[ "$status" != 0 ] || fail "$1: taken"
	[ "$status" != 124 ] || fail "$1: still trying after 60 s"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "$1: not one line: $(cat "$tmp/err")"
	grep -q "$2" "$tmp/err" || fail "$1: '$(cat "$tmp/err")' does not say '$2'"
	no_mount_under "$tmp/mnt" || fail "$1: something is mounted"
}

say "a bad spec is refused before any cluster is asked"
refused "rbd:disk" "POOL/IMAGE expected"
refused "rbd:pool/disk:conf" "KEY=VALUE"

say "an unreachable cluster is an error within the client's time-out, not a hang"
printf '[global]\nmon host = v2:127.0.0.1:1\nauth client required = none\n' >"$tmp/nowhere.conf"
start=$SECONDS
refused "rbd:rqdisk/disk:conf=$tmp/nowhere.conf" "cannot reach the Ceph cluster"
[ $((SECONDS - start)) -le 30 ] || fail "giving up on the cluster took $((SECONDS - start)) s"
refused "rbd:rqdisk/disk:mon_host=127.0.0.1\\:1:client_mount_timeout=1" \
	"cannot reach the Ceph cluster"

say "a one-node cluster with a 64 MiB image"
start=$SECONDS
conf=$("$top_srcdir/contrib/ceph-single-node.sh" start "$tmp/ceph" rqdisk/disk 64M) ||
	fail "the one-node cluster did not start"
cleanup_fn "$top_srcdir/contrib/ceph-single-node.sh" stop "$tmp/ceph"
echo "cluster up in $((SECONDS - start)) s"
spec="rbd:rqdisk/disk:conf=$conf"
export_image() # FILE [@SNAP]
{
	rbd -c "$conf" export "rqdisk/disk${2:-}" "$1" >/dev/null 2>&1 || fail "rbd export failed"
}

say "a missing pool, image or snapshot is refused in one line"
refused "rbd:nopool/disk:conf=$conf" "pool nopool: no such pool"
refused "rbd:rqdisk/nodisk:conf=$conf" "no such image"
refused "rbd:rqdisk/disk@nosnap:conf=$conf" "no such image or snapshot"
refused "rbd:rqdisk/disk:conf=$conf:no_such_option=1" "no such Ceph option"

# librbd's counters of the daemon's own client, through an admin socket set in the spec
rbd_count() # NAME [SOCKET]
{
	ceph --admin-daemon "${2:-$tmp/rqdisk.asok}" perf dump 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(v.get(sys.argv[1], 0) for k, v in d.items() if k.startswith("librbd-")))' "$1" ||
		fail "no librbd counters from the daemon's admin socket"
}

start_rqdisk "$spec:admin_socket=$tmp/rqdisk.asok" "$tmp/mnt"
disk=$rqdisk_disk
[ "$(stat -c %s "$disk")" = $((64 * M)) ] || fail "disk size $(stat -c %s "$disk"), not 64M"
[ "$(cat "$tmp/mnt/device/stack")" = "rbd:rqdisk/disk" ] ||
	fail "device/stack: $(cat "$tmp/mnt/device/stack")"
[ "$(cat "$tmp/mnt/queue/optimal_io_size")" = $((4 * M)) ] ||
	fail "queue/optimal_io_size: $(cat "$tmp/mnt/queue/optimal_io_size"), not the 4 MiB object"
[ "$(cat "$tmp/mnt/device/rbd/object_size")" = $((4 * M)) ] ||
	fail "device/rbd/object_size: $(cat "$tmp/mnt/device/rbd/object_size")"
# nothing waits on the cluster for ever: an OSD's silence fails a request in 30 s
ceph --admin-daemon "$tmp/rqdisk.asok" config get rados_osd_op_timeout 2>/dev/null |
	grep -q '"30"' || fail "rados_osd_op_timeout is not 30 s by default"

say "patterns written direct and synced read back the same, and are in the image"
random_file "$tmp/pat" $((6 * M))
# 6 MiB from 1 MiB: across the first object boundary, from a second open's view too
dd if="$tmp/pat" of="$disk" bs=64k seek=16 oflag=direct conv=notrunc status=none ||
	fail "direct writes failed"
flushes=$(rbd_count flush)
dd if="$tmp/pat" of="$disk" bs=4k seek=5000 count=3 oflag=direct,sync conv=notrunc,fsync \
	status=none || fail "O_SYNC writes and an fsync failed"
[ "$(rbd_count flush)" -gt "$flushes" ] || fail "an fsync of the disk flushed nothing in librbd"
dd if="$disk" of="$tmp/back" bs=64k skip=16 count=96 iflag=direct status=none ||
	fail "direct reads failed"
cmp "$tmp/pat" "$tmp/back" || fail "read back differs from what was written"
# the synced writes are in the cluster while the disk is still open
export_image "$tmp/image"
same_bytes "$tmp/image" $((5000 * 4096)) "$tmp/pat" 0 12288 ||
	fail "the image does not hold the synced writes"

say "O_DSYNC writes are flushed in librbd, each one; plain writes are not"
# the frontend sends an O_DSYNC write down FUA, and librbd has no FUA: a write, then a flush
flushes=$(rbd_count flush)
dd if="$tmp/pat" of="$disk" bs=4k seek=6000 count=16 oflag=direct conv=notrunc status=none ||
	fail "direct writes failed"
plain=$(($(rbd_count flush) - flushes))
flushes=$(rbd_count flush)
dd if="$tmp/pat" of="$disk" bs=4k seek=6100 count=16 oflag=direct,dsync conv=notrunc \
	status=none || fail "O_DSYNC writes failed"
synced=$(($(rbd_count flush) - flushes))
echo "librbd flushes: $plain for 16 plain writes, $synced for 16 O_DSYNC writes"
[ "$synced" -ge 16 ] || fail "16 O_DSYNC writes made $synced flushes in librbd, not one each"
[ "$plain" -lt 16 ] && [ "$plain" -lt "$synced" ] ||
	fail "16 plain writes made $plain flushes in librbd, as many as O_DSYNC ones"
export_image "$tmp/image-dsync"
same_bytes "$tmp/image-dsync" $((6100 * 4096)) "$tmp/pat" 0 $((16 * 4096)) ||
	fail "the image does not hold the O_DSYNC writes"

say "a discard of a whole object removes it, a discard of 4 KiB and a zeroing read zeros"
prefix=$(rbd -c "$conf" info rqdisk/disk | sed -n 's/.*block_name_prefix: //p')
rados -c "$conf" -p rqdisk stat "$prefix.0000000000000001" >/dev/null 2>&1 ||
	fail "no object $prefix.0000000000000001 for the second 4 MiB written"
fallocate -p -o $((4 * M)) -l $((4 * M)) "$disk" || fail "punching a hole failed"
fallocate -p -o $((3 * M + 4096)) -l 4096 "$disk" || fail "punching a 4 KiB hole failed"
fallocate -z -o $((2 * M)) -l $((64 << 10)) "$disk" || fail "zeroing a range failed"
sync "$disk"
rados -c "$conf" -p rqdisk stat "$prefix.0000000000000001" >/dev/null 2>&1 &&
	fail "the discarded object $prefix.0000000000000001 is still there"
export_image "$tmp/image2"
cmp -s -n $((4 * M)) -i $((4 * M)):0 "$tmp/image2" /dev/zero ||
	fail "the discarded object is not zeros in the image"
cmp -s -n 4096 -i $((3 * M + 4096)):0 "$tmp/image2" /dev/zero ||
	fail "the discarded 4 KiB are not zeros in the image"
dd if="$disk" bs=4k skip=$((3 * 256 + 1)) count=1 iflag=direct status=none |
	cmp -s -n 4096 - /dev/zero || fail "the discarded 4 KiB do not read back as zeros"
same_bytes "$tmp/image2" $((3 * M)) "$tmp/pat" $((2 * M)) 4096 ||
	fail "the 4 KiB before the small discard changed"
cmp -s -n $((64 << 10)) -i $((2 * M)):0 "$tmp/image2" /dev/zero ||
	fail "the zeroed range is not zeros in the image"
same_bytes "$tmp/image2" $((M)) "$tmp/pat" 0 $((M)) ||
	fail "the discard or zeroing took data before it"
stop_rqdisk

say "everything written is in the image after the disk closes"
export_image "$tmp/image3"
same_bytes "$tmp/image3" $((M)) "$tmp/pat" 0 $((M)) || fail "the first MiB is not in the image"
same_bytes "$tmp/image3" $((2 * M + (64 << 10))) "$tmp/pat" $((M + (64 << 10))) \
	$((M - (64 << 10) + 4096)) || fail "the pattern after the zeroed range is not in the image"
same_bytes "$tmp/image3" $((3 * M + 8192)) "$tmp/pat" $((2 * M + 8192)) $((M - 8192)) ||
	fail "the pattern after the small discard is not in the image"
cmp -s -n $((4 * M)) -i $((4 * M)):0 "$tmp/image3" /dev/zero ||
	fail "the discarded object came back"
same_bytes "$tmp/image3" $((5000 * 4096)) "$tmp/pat" 0 12288 ||
	fail "the image does not hold the synced writes"

say "ext4 through a loop device on the disk: made, written, checked clean"
mkdir "$tmp/fs"
start_rqdisk "$spec" "$tmp/mnt"
loop_attach loop "$rqdisk_disk" --direct-io=on
mkfs.ext4 -q -F "$loop" || fail "mkfs.ext4 failed"
mount_at "$loop" "$tmp/fs"
head -c $((3 * M)) /dev/urandom >"$tmp/fs/file"
cp "$tmp/fs/file" "$tmp/file"
umount "$tmp/fs"
e2fsck -fn "$loop" >"$tmp/fsck" 2>&1 || fail "e2fsck: $(cat "$tmp/fsck")"
loop_detach "$loop"
stop_rqdisk

say "a snapshot is a read-only disk that keeps what it held"
rbd -c "$conf" snap create rqdisk/disk@s1 >/dev/null 2>&1 || fail "rbd snap create failed"
export_image "$tmp/at-snap"
start_rqdisk "$spec" "$tmp/mnt"
dd if=/dev/urandom of="$rqdisk_disk" bs=1M count=2 oflag=direct conv=notrunc status=none ||
	fail "writing over the image failed"
stop_rqdisk
# another client name, and the options after a comma
start_rqdisk "rbd:rqdisk/disk@s1:conf=$conf,id=reader" "$tmp/mnt"
# the one-node cluster's ceph.conf names each client's admin socket after it
[ -S "$tmp/ceph/run/client.reader.asok" ] || fail "id=reader: the client is not client.reader"
[ "$(cat "$tmp/mnt/ro")" = 1 ] || fail "ro shows $(cat "$tmp/mnt/ro") for a snapshot"
[ "$(cat "$tmp/mnt/device/stack")" = "rbd:rqdisk/disk@s1" ] ||
	fail "device/stack: $(cat "$tmp/mnt/device/stack")"
dd if=/dev/zero of="$rqdisk_disk" bs=4k count=1 oflag=direct conv=notrunc status=none \
	2>/dev/null && fail "a write to a snapshot's disk succeeded"
dd if="$rqdisk_disk" of="$tmp/snap" bs=1M iflag=direct status=none ||
	fail "reading the snapshot's disk failed"
cmp "$tmp/snap" "$tmp/at-snap" || fail "the snapshot's disk does not hold the image as it was"
loop_attach loop "$rqdisk_disk" --read-only
mount_at "$loop" "$tmp/fs" -o ro,noload
cmp "$tmp/fs/file" "$tmp/file" || fail "the file on the snapshot's ext4 differs"
umount "$tmp/fs"
loop_detach "$loop"
stop_rqdisk

say "the multi-queue queue, two hardware queues: writes from two CPUs at once read back, an fsync flushes in librbd, all is in the image"
cpu1=1
taskset -c 1 true 2>/dev/null || cpu1=0 # one CPU: both writers on CPU 0
# with FUSE over io_uring each CPU's requests go to its own hardware queue, so both send to librbd
ring=
if [ "$cpu1" = 1 ] && [ -e "$fuse_uring_param" ]; then
	lock_fuse_uring
	if [ "$(cat "$fuse_uring_param")" = Y ] || set_fuse_uring Y 2>/dev/null; then
		ring=--fuse-uring
	fi
fi
start_rqdisk --queue-mode=mq --hw-queues 2 ${ring:+"$ring"} "$spec:admin_socket=$tmp/rqdisk-mq.asok" \
	"$tmp/mnt"
[ "$(cat "$tmp/mnt/queue/queue_mode")" = mq ] || fail "queue_mode is not mq"
random_file "$tmp/mqpat" $((8 * M))
for half in 0 1; do
	cpu=$((half * cpu1))
	taskset -c $cpu dd if="$tmp/mqpat" of="$rqdisk_disk" bs=64k count=64 skip=$((half * 64)) \
		seek=$((512 + half * 64)) oflag=direct conv=notrunc status=none &
	pids[half]=$!
done
wait "${pids[0]}" || fail "the writer on CPU 0 failed"
wait "${pids[1]}" || fail "the writer on CPU $cpu1 failed"
flushes=$(rbd_count flush "$tmp/rqdisk-mq.asok")
sync "$rqdisk_disk"
[ "$(rbd_count flush "$tmp/rqdisk-mq.asok")" -gt "$flushes" ] ||
	fail "an fsync on the multi-queue queue flushed nothing in librbd"
q0=$(cat "$tmp/mnt/mq/0/dispatched") q1=$(cat "$tmp/mnt/mq/1/dispatched")
echo "dispatched by hardware queue 0: $q0, 1: $q1${ring:+ (FUSE over io_uring)}"
# each writer's 64 writes on its CPU's queue: 48 at least, should a merge join two
[ -z "$ring" ] || { [ "$q0" -ge 48 ] && [ "$q1" -ge 48 ]; } ||
	fail "with a writer on each CPU, hardware queue 0 dispatched $q0 and queue 1 $q1, not about 64 each"
dd if="$rqdisk_disk" of="$tmp/mqback" bs=64k skip=512 count=128 iflag=direct status=none ||
	fail "reading back on the multi-queue queue failed"
cmp "$tmp/mqpat" "$tmp/mqback" || fail "read back on the multi-queue queue differs"
stop_rqdisk
export_image "$tmp/image-mq"
same_bytes "$tmp/image-mq" $((32 * M)) "$tmp/mqpat" 0 $((8 * M)) ||
	fail "the image does not hold what the two hardware queues wrote"

say "an OSD that stops answering: a read fails with EIO within rados_osd_op_timeout, works again once it answers, the exit does not hang and its failed flush is its status"
# librbd's cache in write-back, keeping what it holds for the exit's flush (its default,
# writearound, sends each write at once, and write-back sends it after a second)
start_rqdisk "$spec,rados_osd_op_timeout=3,rbd_cache_policy=writeback,rbd_cache_max_dirty_age=600" \
	"$tmp/mnt" 2>"$tmp/osd-err"
osd=$(cat "$tmp/ceph/run/osd.0.pid") || fail "no OSD pid file"
kill -STOP "$osd"
cleanup_fn kill -CONT "$osd"
t0=$SECONDS
timeout 60 dd if="$rqdisk_disk" of=/dev/null bs=4k count=1 skip=3000 iflag=direct \
	status=none 2>"$tmp/err" && fail "a read worked with the OSD stopped"
grep -q "Input/output error" "$tmp/err" || fail "the read failed otherwise: $(cat "$tmp/err")"
[ $((SECONDS - t0)) -le 30 ] || fail "the read took $((SECONDS - t0)) s to fail, not about 3"
kill -CONT "$osd"
timeout 60 dd if="$rqdisk_disk" of=/dev/null bs=4k count=1 skip=3000 iflag=direct \
	status=none || fail "a read failed once the OSD answered again"
# a flush ends librbd's writing through (until one), then a write it holds
dd if="$tmp/pat" of="$rqdisk_disk" bs=4k count=1 seek=3000 oflag=direct conv=notrunc,fsync \
	status=none || fail "a synced write failed once the OSD answered again"
dd if="$tmp/pat" of="$rqdisk_disk" bs=4k count=1 seek=3001 oflag=direct conv=notrunc \
	status=none || fail "a write failed once the OSD answered again"
kill -STOP "$osd"
timeout 30 fusermount3 -u "$tmp/mnt" || fail "the unmount hung with the OSD stopped"
wait_rqdisk # within 60 s: its exit flush fails in the time-out too
say "rqdisk exited with status $rqdisk_status"
kill -CONT "$osd"
cat "$tmp/osd-err"
grep -q "^rqdisk: rbd: flush at exit: .*writes since the last flush may be lost$" "$tmp/osd-err" ||
	fail "the failed flush at exit was not said"
[ "$rqdisk_status" = 1 ] || fail "the flush at exit failed, and the exit status is $rqdisk_status, not 1"
echo "PASS"
