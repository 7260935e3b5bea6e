#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-nbd-multiconn.sh - rqdisk --connections N on an NBD server: with
# multi-conn advertised, N connections carry requests in turn and a flush
# goes on every one (nbdkit's log says which connection saw what); the
# data reads back whole.  A server without multi-conn gets one connection,
# said in one line, at the start or when it comes back without it.
source "$(dirname "$0")/functions.sh"
source "$(dirname "$0")/nbd-functions.sh"
requires_root
requires_fuse
requires dd cmp
requires_nbd
nbdkit --filter=multi-conn null --version >/dev/null 2>&1 || skip "no nbdkit multi-conn filter"

make_tmpdir tmp
mkdir "$tmp/mnt"
sock=$tmp/sock
uri="nbd+unix:///?socket=$sock"

say "multi-conn: 4 connections, requests spread over them, a flush on each"
start_nbdkit "$sock" --filter=log memory 64M logfile="$tmp/nbd.log"
start_rqdisk --connections 4 "$uri" "$tmp/mnt"
[ "$(cat "$tmp/mnt/device/stack")" = "nbd:$uri timeout=30,connections=4" ] ||
	fail "device/stack: $(cat "$tmp/mnt/device/stack")"
random_file "$tmp/pat" $((4 << 20))
round_trip "$tmp/mnt/disk" "$tmp/pat" "$tmp/back" "over 4 connections"
n=$(nbd_log_conns "$tmp/nbd.log" Write)
[ "$n" = 4 ] || fail "writes went on $n connections, not 4"
n=$(nbd_log_conns "$tmp/nbd.log" Read)
[ "$n" = 4 ] || fail "reads went on $n connections, not 4"
n=$(nbd_log_conns "$tmp/nbd.log" Flush)
[ "$n" = 4 ] || fail "flushes went on $n connections, not 4"
stop_rqdisk
stop_nbdkit

say "no multi-conn: one connection, said in one line"
start_nbdkit "$sock" --filter=multi-conn --filter=log memory 64M multi-conn-mode=disable \
	logfile="$tmp/nbd2.log"
start_rqdisk --connections 4 "$uri" "$tmp/mnt" 2>"$tmp/err"
grep -q "does not advertise multi-conn: one connection, not 4" "$tmp/err" ||
	fail "no word of the fallback: $(cat "$tmp/err")"
[ "$(cat "$tmp/mnt/device/stack")" = "nbd:$uri timeout=30,connections=1" ] ||
	fail "device/stack: $(cat "$tmp/mnt/device/stack")"
dd if="$tmp/pat" of="$tmp/mnt/disk" bs=64k count=16 oflag=direct conv=notrunc status=none ||
	fail "writes over one connection failed"
[ "$(grep -c " Connect " "$tmp/nbd2.log")" = 1 ] ||
	fail "$(grep -c " Connect " "$tmp/nbd2.log") connections to a server without multi-conn"
stop_rqdisk
stop_nbdkit

say "a server back without multi-conn: one connection, said in one line"
start_nbdkit "$sock" file "$tmp/pat"
start_rqdisk --connections 4 "$uri" "$tmp/mnt" 2>"$tmp/err3"
stop_nbdkit KILL
start_nbdkit "$sock" --filter=multi-conn file "$tmp/pat" multi-conn-mode=disable
for ((i = 0; i < 100; i++)); do
	grep -q "connected again" "$tmp/err3" && break
	sleep 0.2
done
dd if="$tmp/mnt/disk" of="$tmp/back" bs=64k count=64 iflag=direct status=none ||
	fail "reads after the server came back failed"
cmp "$tmp/pat" "$tmp/back" || fail "the data does not read back after the server came back"
grep -q "came back without multi-conn: one connection, not 4" "$tmp/err3" ||
	fail "no word of the fallback: $(cat "$tmp/err3")"
[ "$(cat "$tmp/mnt/device/stack")" = "nbd:$uri timeout=30,connections=1" ] ||
	fail "device/stack after the server came back: $(cat "$tmp/mnt/device/stack")"
stop_rqdisk
echo "PASS"
