#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-fuse-uring.sh - --fuse-uring: where the kernel does not offer FUSE over
# io_uring, rqdisk refuses it in one line before mounting; where it does, the
# daemon serves reads and writes without reading /dev/fuse (its read count,
# /proc/PID/io syscr, stays put; with --fuse-uring=off it grows with every
# request), and the data comes back as written.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires_fuse_uring
requires cmp dd
RQDISK_TEST_OPTS= # this test says itself when the option is on

make_tmpdir tmp
mkdir "$tmp/mnt"
truncate -s 64M "$tmp/img"
random_file "$tmp/data" $((4 * 1024 * 1024))
requests=2048 # 4 KiB direct writes, then as many reads

say "the kernel does not offer it: refused before mounting, in one line"
set_fuse_uring N
status=0
"$RQDISK" --fuse-uring "$tmp/img" "$tmp/mnt" 2>"$tmp/err" || status=$?
set_fuse_uring Y
cat "$tmp/err"
if [ $status = 0 ]; then
	fusermount3 -u "$tmp/mnt"
	fail "rqdisk --fuse-uring started although the kernel does not offer it"
fi
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "the refusal is not one line"
grep -q "fuse-uring: .*enable_uring" "$tmp/err" || fail "the refusal does not name the problem"
no_mount_under "$tmp" || fail "the refused start left a mount"

daemon_reads()
{
	awk '$1 == "syscr:" { print $2 }' "/proc/$rqdisk_pid/io"
}

# io_reads OPTIONS...: the data written and read back 4 KiB at a time,
# direct; the number of reads the daemon made meanwhile in $reads.
io_reads()
{
	local before

	start_rqdisk "$@" "$tmp/img" "$tmp/mnt"
	before=$(daemon_reads)
	dd if="$tmp/data" of="$rqdisk_disk" bs=4k oflag=direct conv=notrunc status=none ||
		fail "writing through the disk failed"
	dd if="$rqdisk_disk" of="$tmp/back" bs=4k count=$((requests / 2)) iflag=direct status=none ||
		fail "reading through the disk failed"
	reads=$(($(daemon_reads) - before))
	stop_rqdisk
	cmp "$tmp/data" "$tmp/back" || fail "the data read back differs from what was written"
	echo "$requests requests: the daemon made $reads reads"
}

say "with --fuse-uring=off every request is read from /dev/fuse"
io_reads --fuse-uring=off
[ "$reads" -ge "$requests" ] || fail "only $reads reads for $requests requests: the count proves nothing"

say "with --fuse-uring requests come on the ring: /dev/fuse is not read for them"
io_reads --fuse-uring
[ "$reads" -lt $((requests / 20)) ] || fail "$reads reads for $requests requests on the ring"

say "a mount with --fuse-uring unmounts cleanly"
no_mount_under "$tmp" || fail "a mount is left under $tmp"
echo "PASS"
