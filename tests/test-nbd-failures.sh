#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-nbd-failures.sh - rqdisk on an NBD server that goes away: a write
# held while the server restarts completes once it is back; I/O while it is
# gone fails with EIO within --nbd-timeout, the mount stays, and I/O works
# again, with the data intact, when it returns (the write no flush covered
# fails the next fsync).  A server that accepts and
# never answers hangs neither the start, nor I/O, nor the exit.
source "$(dirname "$0")/functions.sh"
source "$(dirname "$0")/nbd-functions.sh"
requires_root
requires_fuse
requires dd cmp python3 timeout
requires_nbd

T=3       # --nbd-timeout
MARGIN=12 # what a loaded machine may add to it
make_tmpdir tmp
mkdir "$tmp/mnt"
sock=$tmp/sock
uri="nbd+unix:///?socket=$sock"
truncate -s 16M "$tmp/img"

# fails_within SECONDS CMD...: CMD fails, and within SECONDS; its stderr in $tmp/err.
fails_within()
{
	local limit=$1 start=$SECONDS

	shift
	"$@" 2>"$tmp/err" && fail "$* succeeded"
	[ $((SECONDS - start)) -le "$limit" ] || fail "$* took $((SECONDS - start)) s, above $limit"
	return 0
}

read_block()
{
	timeout 120 dd if="$tmp/mnt/disk" of="$tmp/rb" bs=4k skip="$1" count=1 iflag=direct status=none
}

write_block()
{
	timeout 120 dd if="$2" of="$tmp/mnt/disk" bs=4k seek="$1" count=1 oflag=direct conv=notrunc status=none
}

# fsync_disk: fsync the disk; its stderr in $tmp/err.
fsync_disk()
{
	timeout 120 dd if=/dev/null of="$tmp/mnt/disk" conv=notrunc,fsync status=none 2>"$tmp/err"
}

# start_mute SOCK: a server on SOCK that accepts connections and never says a word.
start_mute()
{
	rm -f "$1"
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(8)
conns = []
while True:
    conns.append(s.accept()[0])
' "$1" &
	mute_pid=$!
	cleanup_fn _stop_pid "$mute_pid"
	for ((i = 0; i < 50; i++)); do [ -S "$1" ] && return 0; sleep 0.1; done
	fail "the mute server did not make $1"
}

say "a server that accepts and never answers: the start fails within the timeout"
start_mute "$tmp/mute"
start=$SECONDS
status=0
timeout 60 "$RQDISK" -f --nbd-timeout $T "nbd+unix:///?socket=$tmp/mute" "$tmp/mnt" \
	2>"$tmp/err" || status=$?
[ "$status" = 1 ] || fail "start on a mute server: status $status, not 1: $(cat "$tmp/err")"
[ $((SECONDS - start)) -le $((T + MARGIN)) ] || fail "start on a mute server took $((SECONDS - start)) s"
grep -q "did not answer within $T s" "$tmp/err" || fail "start on a mute server: $(cat "$tmp/err")"

say "the server dies under a write and restarts: the write is sent again and completes"
random_file "$tmp/a" 4096
random_file "$tmp/b" 4096
start_nbdkit "$sock" --filter=delay file "$tmp/img" wdelay=2
start_rqdisk --nbd-timeout 20 "$uri" "$tmp/mnt"
write_block 11 "$tmp/b" &
writer=$!
sleep 0.5 # the write is at the server, which answers it in 2 s
stop_nbdkit KILL
kill -0 "$writer" 2>/dev/null || fail "the write ended before the server died"
start_nbdkit "$sock" file "$tmp/img"
wait "$writer" || fail "a write in flight over the restart failed"
same_bytes "$tmp/img" $((11 * 4096)) "$tmp/b" 0 4096 || fail "the write is not on the server"
stop_rqdisk

say "the server is gone: I/O fails with EIO within the timeout; the mount stays"
start_rqdisk --nbd-timeout $T "$uri" "$tmp/mnt"
write_block 20 "$tmp/a" || fail "a write failed"
stop_nbdkit KILL
fails_within $((T + MARGIN)) read_block 21
grep -q "Input/output error" "$tmp/err" || fail "a read while gone: $(cat "$tmp/err"), not EIO"
fails_within $((T + MARGIN)) write_block 22 "$tmp/b"
grep -q "Input/output error" "$tmp/err" || fail "a write while gone: $(cat "$tmp/err"), not EIO"
sleep $T
fails_within 2 read_block 23 # gone longer than the timeout: at once
is_mounted "$tmp/mnt" || fail "the mount went away with the server"

say "the server is back: I/O works again, the data is intact"
start_nbdkit "$sock" file "$tmp/img"
for ((i = 0; i < 100; i++)); do
	read_block 20 2>/dev/null && break
	sleep 0.2
done
read_block 20 || fail "no I/O 20 s after the server came back"
cmp "$tmp/rb" "$tmp/a" || fail "the block written before the outage changed"
write_block 24 "$tmp/b" || fail "a write after the server came back failed"
read_block 24 && cmp "$tmp/rb" "$tmp/b" || fail "the write after the outage did not read back"

say "the write no flush covered when the server died fails the next fsync, once"
fsync_disk && fail "the fsync after the outage did not report the unflushed write"
grep -q "Input/output error" "$tmp/err" || fail "fsync after the outage: $(cat "$tmp/err"), not EIO"
fsync_disk || fail "the second fsync after the outage failed: $(cat "$tmp/err")"
stop_rqdisk
stop_nbdkit KILL

say "a server that never answers a read: EIO within the timeout, then I/O goes on"
start_nbdkit "$sock" --filter=delay file "$tmp/img" rdelay=3600
start_rqdisk --nbd-timeout $T "$uri" "$tmp/mnt"
fails_within $((T + MARGIN)) read_block 30
grep -q "Input/output error" "$tmp/err" || fail "a hung read: $(cat "$tmp/err"), not EIO"
for ((i = 0; i < 100; i++)); do
	write_block 31 "$tmp/a" 2>/dev/null && break
	sleep 0.2
done
same_bytes "$tmp/img" $((31 * 4096)) "$tmp/a" 0 4096 || fail "no write after a hung read"

say "the exit does not hang on a read the server never answers"
read_block 32 2>/dev/null &
reader=$!
sleep 0.5
start=$SECONDS
kill -TERM "$rqdisk_pid"
wait_rqdisk
[ $((SECONDS - start)) -le $((T + MARGIN)) ] || fail "the exit took $((SECONDS - start)) s"
wait "$reader" && fail "the hung read succeeded"

say "the server comes back mute: I/O fails within the timeout, the exit does not hang"
stop_nbdkit KILL
start_nbdkit "$sock" file "$tmp/img"
start_rqdisk --nbd-timeout $T "$uri" "$tmp/mnt"
stop_nbdkit KILL
start_mute "$sock"
fails_within $((T + MARGIN)) read_block 40
grep -q "Input/output error" "$tmp/err" || fail "a read on a mute server: $(cat "$tmp/err"), not EIO"
sleep 2 # a reconnection waits on the mute server
start=$SECONDS
stop_rqdisk
[ $((SECONDS - start)) -le $((T + MARGIN)) ] || fail "the exit took $((SECONDS - start)) s"

say "a server back with blocks the disk's I/O does not fit is not taken: I/O fails, rqdisk says why"
if nbdkit --filter=blocksize-policy null --version >/dev/null 2>&1; then
	stop_nbdkit KILL
	start_nbdkit "$sock" file "$tmp/img"
	start_rqdisk --nbd-timeout $T "$uri" "$tmp/mnt" 2>"$tmp/rqerr"
	stop_nbdkit KILL
	start_nbdkit "$sock" --filter=blocksize-policy file "$tmp/img" blocksize-minimum=4096 \
		blocksize-error-policy=error
	fails_within $((T + MARGIN)) read_block 50
	grep -q "came back changed (.* blocks of 4096 to " "$tmp/rqerr" ||
		fail "no word of the changed export: $(cat "$tmp/rqerr")"
	stop_rqdisk
else
	say "(skipped: no nbdkit blocksize-policy filter here)"
fi
echo "PASS"
