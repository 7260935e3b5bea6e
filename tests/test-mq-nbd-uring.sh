#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-mq-nbd-uring.sh - the multi-queue queue over an NBD export with FUSE
# over io_uring: hardware queue N sends on connection N (of as many), as
# Linux's nbd gives each hardware queue a socket.  A writer pinned to CPU 0
# has its requests dispatched by queue 0 and every write on one connection;
# pinned to CPU 1, by queue 1 and on the other; the data reads back.
source "$(dirname "$0")/functions.sh"
source "$(dirname "$0")/nbd-functions.sh"
requires_root
requires_fuse
requires_fuse_uring
requires taskset dd cmp
requires_nbd
RQDISK_TEST_OPTS= # this test says itself how FUSE requests come

requires_cpus_0_1

make_tmpdir tmp
mkdir "$tmp/mnt"
sock=$tmp/sock
uri="nbd+unix:///?socket=$sock"
count=256 # 4 KiB direct writes from each CPU: CPU 0 the first MiB, CPU 1 the second
random_file "$tmp/data" $((2 * count * 4096))
cleanup_fn _unmount "$tmp/mnt"

# conns_of HALF: the connections nbdkit's log has writes of HALF (0: below
# 1 MiB, 1: the MiB above) on, one a line
conns_of()
{
	awk -v half="$1" '/ Write id=/ {
		c = $0; sub(/.*connection=/, "", c); sub(/ .*/, "", c)
		o = $0; sub(/.*offset=0x/, "", o); sub(/ .*/, "", o)
		if ((length(o) >= 6) == half) print c
	}' "$tmp/nbd.log" | sort -u
}

start_nbdkit "$sock" --filter=log memory 64M logfile="$tmp/nbd.log"
start_rqdisk --queue-mode=mq --hw-queues 2 --connections 2 --fuse-uring=on "$uri" "$tmp/mnt"
[ "$(cat "$tmp/mnt/fuse/transport")" = uring ] || fail "FUSE requests do not come on io_uring"
for cpu in 0 1; do
	before=$(cat "$tmp/mnt/mq/$cpu/dispatched")
	taskset -c $cpu dd if="$tmp/data" of="$rqdisk_disk" bs=4k count=$count skip=$((cpu * count)) \
		seek=$((cpu * count)) oflag=direct conv=notrunc status=none ||
		fail "writing from CPU $cpu failed"
	mine=$(($(cat "$tmp/mnt/mq/$cpu/dispatched") - before))
	[ "$mine" -ge $count ] || fail "hardware queue $cpu dispatched $mine of CPU $cpu's $count writes"
done
c0=$(conns_of 0)
c1=$(conns_of 1)
echo "CPU 0's writes on connection(s) $c0; CPU 1's on $c1"
[ "$(wc -w <<<"$c0")" = 1 ] || fail "CPU 0's writes went on connections $c0, not one"
[ "$(wc -w <<<"$c1")" = 1 ] || fail "CPU 1's writes went on connections $c1, not one"
[ "$c0" != "$c1" ] || fail "both hardware queues sent on connection $c0"
dd if="$rqdisk_disk" of="$tmp/back" bs=4k count=$((2 * count)) iflag=direct status=none ||
	fail "reading back failed"
cmp "$tmp/data" "$tmp/back" || fail "what was written does not read back"
stop_rqdisk
stop_nbdkit
echo "PASS"
