#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-nbd.sh - rqdisk on an NBD export (nbdkit's memory plugin over a Unix
# socket): direct writes reach the server and read back the same, a
# discard reaches it as a trim, device/stack names it, and a URI no backend takes is
# refused in one line with status 2.  A read-only export is a read-only disk;
# one without trim or write-zeroes refuses those fallocates (EOPNOTSUPP).
source "$(dirname "$0")/functions.sh"
source "$(dirname "$0")/nbd-functions.sh"
requires_root
requires_fuse
requires dd cmp fallocate ss
requires_nbd

make_tmpdir tmp
mkdir "$tmp/mnt"
sock=$tmp/sock
uri="nbd+unix:///?socket=$sock"

say "a URI of a scheme no backend takes: one line, status 2"
status=0
"$RQDISK" -f "nbdx:///?socket=$sock" "$tmp/mnt" 2>"$tmp/err" || status=$?
[ "$status" = 2 ] || fail "a bad URI: status $status, not 2"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "a bad URI: not one line: $(cat "$tmp/err")"

say "the NBD options: bad values, and an image file, refused in one line with status 2"
truncate -s 1M "$tmp/file.img"
for args in "--nbd-timeout 0 $uri" "--nbd-timeout x $uri" "--connections 17 $uri" \
	"--connections 2 $tmp/file.img" "--nbd-timeout 5 $tmp/file.img"; do
	status=0
	# shellcheck disable=SC2086 # the words are the options
	"$RQDISK" -f $args "$tmp/mnt" 2>"$tmp/err" || status=$?
	[ "$status" = 2 ] || fail "rqdisk $args: status $status, not 2"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "rqdisk $args: not one line: $(cat "$tmp/err")"
done
grep -q "is for an NBD export" "$tmp/err" || fail "an NBD option with a file: $(cat "$tmp/err")"

nbdkit -U "$sock" -P "$tmp/nbdkit.pid" -f --filter=log memory 64M logfile="$tmp/nbd.log" &
nbdkit_pid=$!
cleanup_fn kill "$nbdkit_pid"
for ((i = 0; i < 100; i++)); do
	[ -S "$sock" ] && break
	sleep 0.1
done
[ -S "$sock" ] || fail "nbdkit did not make its socket"

start_rqdisk "$uri" "$tmp/mnt"
disk=$rqdisk_disk
[ "$(stat -c %s "$disk")" = $((64 << 20)) ] || fail "disk size $(stat -c %s "$disk"), not 64M"
[ "$(cat "$tmp/mnt/device/stack")" = "nbd:$uri timeout=30,connections=1" ] ||
	fail "device/stack: $(cat "$tmp/mnt/device/stack")"
# a round trip per request: up to 1 MiB each, in one segment, where a file takes 127.5 KiB
[ "$(cat "$tmp/mnt/queue/max_sectors_kb")" = 1024 ] ||
	fail "queue/max_sectors_kb: $(cat "$tmp/mnt/queue/max_sectors_kb"), not 1024"
[ "$(cat "$tmp/mnt/queue/max_segment_size")" = 1048576 ] ||
	fail "queue/max_segment_size: $(cat "$tmp/mnt/queue/max_segment_size"), not 1048576"

say "the Unix socket holds a whole 1 MiB write: it goes out in one send, not five"
# skmem's tb: the send buffer, as the kernel doubled it when it was set
tb=$(ss -x -m -p | grep -F "pid=$rqdisk_pid," | grep -o 'tb[0-9]*' | head -1)
[ -n "$tb" ] || fail "ss shows no socket of rqdisk's"
[ "${tb#tb}" -ge $((2 * ((1 << 20) + 28))) ] ||
	fail "the socket's send buffer is ${tb#tb} bytes, less than a 1 MiB write's"

say "patterns written direct read back the same, and are on the server"
random_file "$tmp/pat" $((1 << 20))
dd if="$tmp/pat" of="$disk" bs=64k seek=16 oflag=direct conv=notrunc status=none ||
	fail "direct writes failed"
dd if="$tmp/pat" of="$disk" bs=4k seek=5000 count=3 oflag=direct,sync conv=notrunc \
	status=none || fail "O_SYNC (FUA) writes failed"
dd if="$disk" of="$tmp/back" bs=64k skip=16 count=16 iflag=direct status=none ||
	fail "direct reads failed"
cmp "$tmp/pat" "$tmp/back" || fail "read back differs from what was written"
nbdcopy "$uri" "$tmp/server" || fail "nbdcopy from the server failed"
same_bytes "$tmp/server" $((1 << 20)) "$tmp/pat" 0 $((1 << 20)) ||
	fail "the server does not hold the written pattern"
same_bytes "$tmp/server" $((5000 * 4096)) "$tmp/pat" 0 12288 ||
	fail "the server does not hold the FUA writes"

say "a discard reaches the server: the range reads zeros there"
fallocate -p -o $((1 << 20)) -l $((256 << 10)) "$disk" || fail "punching a hole failed"
nbdcopy "$uri" "$tmp/server2" || fail "nbdcopy from the server failed"
cmp -s -n $((256 << 10)) -i $((1 << 20)):0 "$tmp/server2" /dev/zero ||
	fail "the discarded range is not zeros on the server"
grep -q "Trim .*offset=0x100000 " "$tmp/nbd.log" ||
	fail "the server was sent no trim at 1 MiB: $(grep -c Trim "$tmp/nbd.log") trims"
stop_rqdisk

say "a read-only export makes a read-only disk: writes refused, reads served"
nbdkit -r -U "$sock.ro" -f memory 1M &
ro_pid=$!
cleanup_fn kill "$ro_pid"
for ((i = 0; i < 100; i++)); do
	[ -S "$sock.ro" ] && break
	sleep 0.1
done
start_rqdisk "nbd+unix:///?socket=$sock.ro" "$tmp/mnt"
[ "$(cat "$tmp/mnt/ro")" = 1 ] || fail "ro shows $(cat "$tmp/mnt/ro") for a read-only export"
dd if=/dev/zero of="$rqdisk_disk" bs=4k count=1 oflag=direct conv=notrunc status=none \
	2>/dev/null && fail "a write to a read-only export's disk succeeded"
dd if="$rqdisk_disk" of=/dev/null bs=64k iflag=direct status=none ||
	fail "reading a read-only export's disk failed"
fallocate -p -o 0 -l 4096 "$rqdisk_disk" 2>"$tmp/err" && fail "a hole punched in a read-only disk"
grep -q "Read-only file system" "$tmp/err" || fail "punching a read-only disk: $(cat "$tmp/err")"
stop_rqdisk

say "an export without trim: a hole punched fails EOPNOTSUPP, as on a disk without discard"
truncate -s 1M "$tmp/notrim.img"
start_nbdkit "$sock.nt" eval get_size='echo 1048576' \
	pread="dd if=$tmp/notrim.img skip=\$4 count=\$3 iflag=skip_bytes,count_bytes status=none" \
	pwrite="dd of=$tmp/notrim.img seek=\$4 conv=notrunc oflag=seek_bytes status=none"
start_rqdisk "nbd+unix:///?socket=$sock.nt" "$tmp/mnt"
fallocate -p -o 0 -l 64k "$tmp/mnt/disk" 2>"$tmp/err" && fail "a hole was punched in an export without trim"
grep -qE "(not |un)supported" "$tmp/err" || fail "punching a hole: $(cat "$tmp/err"), not EOPNOTSUPP"
dd if=/dev/urandom of="$tmp/mnt/disk" bs=4k count=2 oflag=direct conv=notrunc status=none ||
	fail "a write to an export without trim failed"
stop_rqdisk
stop_nbdkit

say "an export without write-zeroes: zeroing a range fails EOPNOTSUPP, a discard still goes"
start_nbdkit "$sock.nz" --filter=nozero memory 1M zeromode=none
start_rqdisk --max-sectors 64 "nbd+unix:///?socket=$sock.nz" "$tmp/mnt"
[ "$(cat "$tmp/mnt/queue/max_sectors_kb")" = 32 ] ||
	fail "--max-sectors 64: queue/max_sectors_kb is $(cat "$tmp/mnt/queue/max_sectors_kb")"
[ "$(cat "$tmp/mnt/queue/max_segment_size")" = 65536 ] ||
	fail "--max-sectors 64: queue/max_segment_size is $(cat "$tmp/mnt/queue/max_segment_size")"
fallocate -z -o 0 -l 64k "$tmp/mnt/disk" 2>"$tmp/err" && fail "zeroed a range on an export without zero"
grep -qE "(not |un)supported" "$tmp/err" || fail "zeroing a range: $(cat "$tmp/err"), not EOPNOTSUPP"
fallocate -p -o 0 -l 64k "$tmp/mnt/disk" || fail "a discard on an export with trim failed"
stop_rqdisk
stop_nbdkit

say "the server's block sizes are the queue's limits; it sees no I/O it would refuse"
if nbdkit --filter=blocksize-policy null --version >/dev/null 2>&1; then
	start_nbdkit "$sock.bs" --filter=blocksize-policy memory 4M blocksize-minimum=4096 \
		blocksize-preferred=65536 blocksize-maximum=65536 blocksize-error-policy=error
	start_rqdisk "nbd+unix:///?socket=$sock.bs" "$tmp/mnt"
	q=$tmp/mnt/queue
	[ "$(cat "$q/logical_block_size")" = 4096 ] || fail "logical_block_size $(cat "$q/logical_block_size")"
	[ "$(cat "$q/physical_block_size")" = 65536 ] || fail "physical_block_size $(cat "$q/physical_block_size")"
	[ "$(cat "$q/optimal_io_size")" = 65536 ] || fail "optimal_io_size $(cat "$q/optimal_io_size")"
	[ "$(cat "$q/max_hw_sectors_kb")" = 64 ] || fail "max_hw_sectors_kb $(cat "$q/max_hw_sectors_kb")"
	[ "$(stat -c %o "$tmp/mnt/disk")" = 4096 ] || fail "st_blksize $(stat -c %o "$tmp/mnt/disk")"
	random_file "$tmp/pat4" $((1 << 20))
	dd if="$tmp/pat4" of="$tmp/mnt/disk" bs=1M seek=1 oflag=direct conv=notrunc status=none ||
		fail "a 1 MiB write (above the server's maximum) failed"
	random_file "$tmp/pat5" 1536
	dd if="$tmp/pat5" of="$tmp/mnt/disk" bs=512 seek=2048 conv=notrunc,fsync status=none ||
		fail "a write of 512-byte pieces (below the server's minimum) failed"
	dd if="$tmp/mnt/disk" of="$tmp/back4" bs=1M skip=1 count=1 iflag=direct status=none ||
		fail "a 1 MiB read failed"
	cmp -n 1536 "$tmp/pat5" "$tmp/back4" || fail "the 512-byte pieces did not read back"
	cmp -i 1536 "$tmp/pat4" "$tmp/back4" || fail "the rest of the 1 MiB write did not read back"
	stop_rqdisk
	stop_nbdkit
else
	say "(skipped: no nbdkit blocksize-policy filter here)"
fi
echo "PASS"
