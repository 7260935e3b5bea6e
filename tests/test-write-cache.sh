#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-write-cache.sh - the write-cache filter on a mounted disk: a write not flushed
# is lost when the power is cut (echo all > power/cut, or SIGPWR), I/O fails with EIO
# until "echo 1 > power/restore", a write flushed before the cut is on the image, a
# random cut keeps some writes whole and drops the others, an O_DSYNC write survives
# a cut (the frontend sends it FUA), and the cache's data
# reaches the image when the disk is unmounted (exit 1 when it cannot).  power/ and
# device/write-cache/ are two directories.  queue/write_cache says "write back" over an
# image (--direct too: the host disk has a cache) or a write cache, "write through"
# with --null.  Bad keys are refused with one line and exit 2.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires dd cmp head

make_tmpdir tmp
mkdir "$tmp/mnt"
truncate -s 64M "$tmp/img"
head -c 1M /dev/urandom >"$tmp/pat"
pw=$tmp/mnt/power
MiB=1048576

# image_has OFFSET_MIB: the image holds the pattern at that MiB.
image_has()
{
	cmp -s -n $MiB "$tmp/pat" "$tmp/img" 0 $(($1 * MiB))
}

# image_zero OFFSET_MIB: the image holds zeros there.
image_zero()
{
	cmp -s -n $MiB /dev/zero "$tmp/img" 0 $(($1 * MiB))
}

# write_pattern OFFSET_MIB [DD_ARGS]: the pattern onto the disk, O_DIRECT (no page cache above).
write_pattern()
{
	local at=$1

	shift
	dd if="$tmp/pat" of="$rqdisk_disk" bs=64k seek=$((at * 16)) oflag=direct conv=notrunc \
		status=none "$@"
}

# io_fails: a read and a write of the disk both fail with EIO.
io_fails()
{
	dd if="$rqdisk_disk" of=/dev/null bs=4k count=1 iflag=direct status=none 2>"$tmp/err" &&
		fail "a read worked with the power off"
	grep -q "Input/output error" "$tmp/err" || fail "the read failed otherwise: $(cat "$tmp/err")"
	dd if=/dev/zero of="$rqdisk_disk" bs=4k count=1 seek=100 oflag=direct conv=notrunc \
		status=none 2>"$tmp/err" && fail "a write worked with the power off"
	grep -q "Input/output error" "$tmp/err" || fail "the write failed otherwise: $(cat "$tmp/err")"
}

# wait_state S: power/state shows S within 5 s.
wait_state()
{
	local i

	for ((i = 0; i < 50; i++)); do
		[ "$(cat "$pw/state")" = "$1" ] && return 0
		sleep 0.1
	done
	fail "power/state is $(cat "$pw/state"), not $1"
}

say "write-cache:expire=0: power/ and device/write-cache/, write back"
start_rqdisk --filter write-cache:expire=0 "$tmp/img" "$tmp/mnt"
[ "$(cat "$tmp/mnt/queue/write_cache")" = "write back" ] ||
	fail "queue/write_cache is $(cat "$tmp/mnt/queue/write_cache")"
[ "$(echo $(ls "$pw"))" = "cut dirty restore state stats" ] || fail "power/ holds: $(ls "$pw")"
[ -d "$tmp/mnt/device/write-cache" ] || fail "no device/write-cache/"
grep -q "^write-cache:size=64 expire=0 seed=1 depth=4 atomic=512 -> file" \
	"$tmp/mnt/device/stack" || fail "device/stack: $(cat "$tmp/mnt/device/stack")"
[ "$(cat "$pw/state")" = on ] || fail "state is $(cat "$pw/state")"
# two directories, not one under two names: the kernel takes no second name
# for a directory while the first is in use (a working directory here)
files="cut dirty restore state stats"
(cd "$pw" && [ "$(echo $(ls ../device/write-cache))" = "$files" ]) ||
	fail "device/write-cache/ cannot be listed from inside power/"
(cd "$tmp/mnt/device/write-cache" && [ "$(echo $(ls ../../power))" = "$files" ]) ||
	fail "power/ cannot be listed from inside device/write-cache/"
[ "$(cd "$pw" && cat ../power/state)" = on ] || fail "power/.. is not the top of the tree"

say "a write not flushed is lost with the power"
write_pattern 0 || fail "the write failed"
[ "$(cat "$pw/dirty")" = $MiB ] || fail "dirty is $(cat "$pw/dirty"), not $MiB"
image_zero 0 || fail "the data reached the image before any flush"
echo all >"$pw/cut" || fail "the cut failed"
[ "$(cat "$pw/state")" = off ] || fail "state is $(cat "$pw/state") after the cut"
io_fails
image_zero 0 || fail "the image holds data that was never flushed"
grep -q "^dropped $MiB$" "$pw/stats" || fail "stats: $(cat "$pw/stats")"
echo 2 >"$pw/restore" 2>/dev/null && fail "restore took 2"
echo 1 >"$pw/restore" || fail "restore failed"
[ "$(cat "$pw/state")" = on ] || fail "state is $(cat "$pw/state") after restore"
cmp -s -n $MiB /dev/zero "$rqdisk_disk" || fail "the disk does not read as the image"

say "a write flushed before the cut survives it"
write_pattern 0 conv=fsync || fail "the write failed"
image_has 0 || fail "fsync did not bring the data to the image"
echo all >"$pw/cut"
image_has 0 || fail "the cut took flushed data"
echo 1 >"$pw/restore"
cmp -s -n $MiB "$tmp/pat" "$rqdisk_disk" || fail "the disk lost flushed data"

say "an O_DSYNC write (dd oflag=dsync) is durable when it returns: it survives the cut"
write_pattern 4 oflag=dsync || fail "the write failed"
[ "$(cat "$pw/dirty")" = 0 ] || fail "dirty is $(cat "$pw/dirty") after O_DSYNC writes"
echo all >"$pw/cut"
image_has 4 || fail "the cut took the O_DSYNC writes"
echo 1 >"$pw/restore"

say "SIGPWR cuts the power as well"
write_pattern 1 || fail "the write failed"
kill -PWR "$rqdisk_pid"
wait_state off
io_fails
image_zero 1 || fail "the image holds data that was never flushed, after SIGPWR"
echo 1 >"$pw/restore"

say "cut random: each 64 KiB write there whole or not at all, some of each"
write_pattern 3 || fail "the write failed"
echo random >"$pw/cut" || fail "the cut failed"
wait_state off
io_fails
echo 1 >"$pw/restore" || fail "restore failed"
kept=0
for ((i = 0; i < 16; i++)); do
	if cmp -s -n 65536 "$tmp/pat" "$tmp/img" $((i * 65536)) $((3 * MiB + i * 65536)); then
		kept=$((kept + 1))
	else
		cmp -s -n 65536 /dev/zero "$tmp/img" 0 $((3 * MiB + i * 65536)) ||
			fail "write $i of the random cut is on the image in part"
	fi
done
say "the random cut kept $kept of 16 writes"
[ $kept -gt 0 ] && [ $kept -lt 16 ] || fail "the random cut kept $kept of 16 writes"
cmp -s -n $MiB "$tmp/img" "$rqdisk_disk" $((3 * MiB)) $((3 * MiB)) ||
	fail "the disk does not read as the image after the random cut"

say "unmounted, the cache's data goes to the image"
write_pattern 2 || fail "the write failed"
image_zero 2 || fail "the data reached the image before any flush"
stop_rqdisk
image_has 2 || fail "the cache's data did not reach the image at unmount"

say "without the filter: write back over an image, --direct too; write through with --null"
start_rqdisk "$tmp/img" "$tmp/mnt"
[ "$(cat "$tmp/mnt/queue/write_cache")" = "write back" ] ||
	fail "queue/write_cache is $(cat "$tmp/mnt/queue/write_cache") over the page cache"
[ ! -e "$pw" ] || fail "power/ without a write cache"
kill -PWR "$rqdisk_pid"
sleep 0.5
kill -0 "$rqdisk_pid" 2>/dev/null || fail "SIGPWR without a write cache ended the daemon"
dd if="$rqdisk_disk" of=/dev/null bs=4k count=1 iflag=direct status=none ||
	fail "SIGPWR without a write cache broke the disk"
stop_rqdisk
make_odirect_tmpdir dtmp
if [ -n "$dtmp" ]; then
	truncate -s 16M "$dtmp/img"
	start_rqdisk --direct "$dtmp/img" "$tmp/mnt"
	[ "$(cat "$tmp/mnt/queue/write_cache")" = "write back" ] ||
		fail "queue/write_cache is $(cat "$tmp/mnt/queue/write_cache") with --direct"
	stop_rqdisk
	start_rqdisk --direct --filter write-cache "$dtmp/img" "$tmp/mnt"
	[ "$(cat "$tmp/mnt/queue/write_cache")" = "write back" ] ||
		fail "queue/write_cache is $(cat "$tmp/mnt/queue/write_cache") over a write cache"
	stop_rqdisk
else
	say "no file system here takes O_DIRECT: --direct not tried"
fi
start_rqdisk --null "$tmp/img" "$tmp/mnt"
[ "$(cat "$tmp/mnt/queue/write_cache")" = "write through" ] ||
	fail "queue/write_cache is $(cat "$tmp/mnt/queue/write_cache") with --null"
stop_rqdisk

# fio_verify NAME FILE EXTRA...: random writes of 512 B to 128 KiB, then every block's
# crc32c read back and checked.
fio_verify()
{
	local name=$1 file=$2

	shift 2
	(cd "$tmp" && fio --name="$name" --size=32M --rw=randwrite --bsrange=512-128k \
		--verify=crc32c --verify_fatal=1 --verify_state_save=0 --filename="$file" \
		--output="$tmp/$name.out" "$@") || { cat "$tmp/$name.out"; fail "fio $name failed"; }
}

if command -v fio >/dev/null && fio --enghelp 2>/dev/null | grep -qw io_uring; then
	say "fio through a 1 MiB cache: writes wait for room, reads see the cache; the image verifies"
	truncate -s 0 "$tmp/img"
	truncate -s 64M "$tmp/img"
	start_rqdisk --filter write-cache:size=1,expire=10,depth=2 "$tmp/img" "$tmp/mnt"
	fio_verify cached "$rqdisk_disk" --ioengine=io_uring --direct=1 --iodepth=32 --do_verify=1
	grep -q "^written_back [1-9]" "$pw/stats" || fail "nothing written back: $(cat "$pw/stats")"
	stop_rqdisk
	fio_verify image "$tmp/img" --ioengine=psync --verify_only
else
	say "no fio with io_uring: the fio run is left out"
fi

say "writebacks that fail at unmount (the image's file system is full): said, and exit 1"
mkdir "$tmp/small"
mount -t tmpfs -o size=2M tmpfs "$tmp/small" || fail "cannot mount a tmpfs"
cleanup_fn umount "$tmp/small"
truncate -s 16M "$tmp/small/img"
start_rqdisk --filter write-cache:expire=0 "$tmp/small/img" "$tmp/mnt" 2>"$tmp/full.err"
for ((i = 0; i < 4; i++)); do
	write_pattern $i || fail "the write failed"
done
fusermount3 -u "$tmp/mnt" || fail "fusermount3 -u failed"
wait_rqdisk
[ "$rqdisk_status" = 1 ] ||
	fail "rqdisk exited with status $rqdisk_status, not 1, with cached data lost"
grep -q "flush at exit: No space left on device" "$tmp/full.err" ||
	fail "the lost writebacks were not said: $(cat "$tmp/full.err")"

for spec in write-cache:size=0 write-cache:depth=0 write-cache:expire=x write-cache:colour=1 \
	write-cache:atomic=1000; do
	status=0
	"$RQDISK" --create 8M --filter "$spec" "$tmp/new.img" "$tmp/mnt" 2>"$tmp/err" || status=$?
	[ "$status" = 2 ] || fail "--filter $spec: exit $status, not 2"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "--filter $spec: not one line: $(cat "$tmp/err")"
	say "--filter $spec: $(cat "$tmp/err")"
	! is_mounted "$tmp/mnt" || fail "--filter $spec left a mount"
	[ ! -e "$tmp/new.img" ] || fail "--filter $spec left an image"
done
exit 0
