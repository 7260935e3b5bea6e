#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-fuse-uring-depth.sh - FUSE over io_uring holds a CPU's whole queue
# depth: Linux queues a request on the ring queue of the CPU that made it,
# where it waits for one of that queue's entries even while another CPU's
# are free.  fio at QD64 from CPU 0 alone, on a --null disk whose requests
# take 200 ms each, has all 64 of its reads in the daemon's queue at once
# (inflight), on the 2.6 queue and the multi-queue one; fuse/ring_depth
# says 64 (fewer where more than two CPUs are possible, and fio's depth is
# that then).  With 32 entries a CPU (before), inflight stopped at 32.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires_fuse_uring
requires taskset fio
RQDISK_TEST_OPTS= # this test says itself how FUSE requests come

make_tmpdir tmp
mkdir "$tmp/mnt"
cleanup_fn _unmount "$tmp/mnt"
# fring_alloc(): 64 entries a CPU, 128 MiB of 1 MiB payloads at most over the possible CPUs
ncpu=$(possible_cpus)
depth=$((128 / ncpu < 64 ? 128 / ncpu : 64))
depth=$((depth < 2 ? 2 : depth))

# the most reads the daemon held at once while fio ran
max_inflight()
{
	local most=0 r w i

	for ((i = 0; i < 40; i++)); do
		kill -0 "$fio_pid" 2>/dev/null || break
		read -r r w <"$tmp/mnt/inflight"
		((r > most)) && most=$r
		sleep 0.05
	done
	echo "$most"
}

for mode in rq mq; do
	say "$mode: fio at QD$depth from CPU 0 has all $depth reads in the daemon at once"
	start_rqdisk --fuse-uring --queue-mode=$mode --null=irqmode=timer,completion_nsec=200000000 \
		--create 64M "$tmp/img" "$tmp/mnt"
	[ "$(cat "$tmp/mnt/fuse/ring_depth")" = "$depth" ] ||
		fail "fuse/ring_depth says $(cat "$tmp/mnt/fuse/ring_depth"), not $depth"
	taskset -c 0 fio --name=d --filename="$rqdisk_disk" --rw=randread --bs=4k --direct=1 \
		--ioengine=libaio --iodepth=$depth --runtime=3 --time_based --size=64M \
		--output="$tmp/fio.out" &
	fio_pid=$!
	sleep 1 # fio's start, and its first reads answered
	most=$(max_inflight)
	wait "$fio_pid" || fail "fio failed: $(tail -3 "$tmp/fio.out")"
	[ "$(cat "$tmp/mnt/fuse/transport")" = uring ] || fail "FUSE requests did not come on io_uring"
	echo "at most $most reads in the daemon at once"
	[ "$most" -ge "$depth" ] || fail "$mode: at most $most of fio's $depth reads reached the daemon at once"
	stop_rqdisk
	rm -f "$tmp/img"
done
exit 0
