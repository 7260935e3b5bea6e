#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-mq-nbd.sh - the multi-queue queue over an NBD export: with two
# hardware queues and two connections (multi-conn), what is written reads
# back, and an fsync is a flush on each connection (nbdkit's log); a server
# killed and started again gets its requests once it is back, sent by the
# loop's thread, and the data reads back whole.
source "$(dirname "$0")/functions.sh"
source "$(dirname "$0")/nbd-functions.sh"
requires_root
requires_fuse
requires dd cmp
requires_nbd

make_tmpdir tmp
mkdir "$tmp/mnt"
sock=$tmp/sock
uri="nbd+unix:///?socket=$sock"
random_file "$tmp/pat" $((4 << 20))
cleanup_fn _unmount "$tmp/mnt"

say "two hardware queues on two connections: the data reads back, an fsync flushes each"
start_nbdkit "$sock" --filter=log memory 64M logfile="$tmp/nbd.log"
start_rqdisk --queue-mode=mq --hw-queues 2 --connections 2 "$uri" "$tmp/mnt"
[ "$(cat "$tmp/mnt/queue/queue_mode")" = mq ] || fail "queue_mode is not mq"
[ "$(cat "$tmp/mnt/device/stack")" = "nbd:$uri timeout=30,connections=2" ] ||
	fail "device/stack: $(cat "$tmp/mnt/device/stack")"
round_trip "$tmp/mnt/disk" "$tmp/pat" "$tmp/back" "through two hardware queues"
n=$(nbd_log_conns "$tmp/nbd.log" Flush)
[ "$n" = 2 ] || fail "the flush went on $n connections, not 2"
stop_rqdisk
stop_nbdkit

say "the server killed and started again: the requests wait, then complete"
cp "$tmp/pat" "$tmp/export"
start_nbdkit "$sock" file "$tmp/export"
start_rqdisk --queue-mode=mq --hw-queues 2 --connections 2 "$uri" "$tmp/mnt" 2>"$tmp/err2"
stop_nbdkit KILL
dd if="$tmp/mnt/disk" of="$tmp/back2" bs=64k count=64 iflag=direct status=none &
reader=$!
sleep 1
kill -0 $reader 2>/dev/null || fail "a read finished while the server was away"
start_nbdkit "$sock" file "$tmp/export"
wait $reader || fail "the read waiting for the server failed once it was back"
cmp "$tmp/pat" "$tmp/back2" || fail "the data read after the server came back differs"
grep -q "connected again" "$tmp/err2" || fail "no word of the reconnection: $(cat "$tmp/err2")"
stop_rqdisk
stop_nbdkit
echo "PASS"
