#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-mq-barrier.sh - a flush covers every write completed on any hardware
# queue before it: on a multi-queue disk with two hardware queues over a
# volatile write cache, a write submitted from CPU 0 completes through
# hardware queue 0 (the daemon and the writer pinned there, elevator none:
# a request leaves by its software queue's hardware queue), a flush submitted from
# CPU 1 goes through hardware queue 1, the power is cut, and the write is
# on the image.  A write that no flush covered is lost with the power, so
# the cut is a real one.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires dd cmp head taskset python3

[ "$(getconf _NPROCESSORS_ONLN)" -ge 2 ] || skip "fewer than two CPUs online"
taskset -c 1 true 2>/dev/null || skip "cannot run on CPU 1"

make_tmpdir tmp
mkdir "$tmp/mnt"
truncate -s 64M "$tmp/img"
head -c 1M /dev/urandom >"$tmp/pat"
MiB=1048576
m=$tmp/mnt
pw=$m/power

image_has()
{
	cmp -s -n $MiB "$tmp/pat" "$tmp/img" 0 $(($1 * MiB))
}

image_zero()
{
	cmp -s -n $MiB /dev/zero "$tmp/img" 0 $(($1 * MiB))
}

write_pattern()
{
	taskset -c "$cpu" dd if="$tmp/pat" of="$rqdisk_disk" bs=64k seek=$(($1 * 16)) oflag=direct conv=notrunc \
		status=none
}

# flush: an fsync of the disk, which FUSE sends as a flush, nothing written.
flush()
{
	taskset -c "$cpu" python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)' \
		"$rqdisk_disk"
}

dispatched()
{
	cat "$m/mq/$1/dispatched"
}

# on_cpu N: the daemon's loop, which submits the bios of the FUSE requests
# it reads from /dev/fuse, and the test's writer and flusher, whose CPU
# says which ring queue a request takes with FUSE over io_uring, run on CPU N.
on_cpu()
{
	cpu=$1
	taskset -p -c "$1" "$rqdisk_pid" >/dev/null || fail "cannot pin the daemon to CPU $1"
}

start_rqdisk --queue-mode=mq --hw-queues 2 -e none --filter write-cache:expire=0 \
	"$tmp/img" "$tmp/mnt"
[ "$(cat "$m/mq/0/cpu_list")" = 0 ] || [[ $(cat "$m/mq/0/cpu_list") == "0, "* ]] ||
	fail "CPU 0 does not feed hardware queue 0: $(cat "$m/mq/0/cpu_list")"

say "a write through hardware queue 0, then a flush through hardware queue 1"
on_cpu 0
d0=$(dispatched 0) d1=$(dispatched 1)
write_pattern 0 || fail "the write failed"
[ "$(dispatched 0)" -gt "$d0" ] || fail "the write did not go through hardware queue 0"
[ "$(dispatched 1)" = "$d1" ] || fail "the write went through hardware queue 1 too"
[ "$(cat "$pw/dirty")" = $MiB ] || fail "dirty is $(cat "$pw/dirty"), not $MiB"
image_zero 0 || fail "the write reached the image before any flush"
on_cpu 1
d0=$(dispatched 0) d1=$(dispatched 1)
flush || fail "the flush failed"
[ "$(dispatched 1)" -gt "$d1" ] || fail "the flush did not go through hardware queue 1"
[ "$(dispatched 0)" = "$d0" ] || fail "the flush went through hardware queue 0"

say "a write no flush covered, through hardware queue 0"
on_cpu 0
write_pattern 1 || fail "the second write failed"

say "the power cut: the flushed write is on the image, the other is lost"
echo all >"$pw/cut" || fail "the cut failed"
image_has 0 || fail "the write completed on queue 0 and flushed through queue 1 is lost"
image_zero 1 || fail "the write no flush covered reached the image"
echo 1 >"$pw/restore" || fail "restore failed"
stop_rqdisk
echo "PASS: test-mq-barrier.sh"
