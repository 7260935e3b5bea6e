#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-nbd-lost-writes.sh - writes an NBD server answered and never
# flushed die with it (nbdkit's cache filter in writeback mode, kill -9):
# the next fsync on the disk fails with EIO, the one after succeeds, and
# the disk honestly reads the old data.  A drop with every write flushed
# fails no fsync.  An exit with the server gone and a write no flush
# covered says so in one line, with exit status 1.
source "$(dirname "$0")/functions.sh"
source "$(dirname "$0")/nbd-functions.sh"
requires_root
requires_fuse
requires dd cmp timeout
requires_nbd
nbdkit --filter=cache null --version >/dev/null 2>&1 || skip "no nbdkit cache filter"

make_tmpdir tmp
mkdir "$tmp/mnt"
sock=$tmp/sock
uri="nbd+unix:///?socket=$sock"
random_file "$tmp/img" $((16 << 20))
cp "$tmp/img" "$tmp/orig"
random_file "$tmp/new" 4096

# The file plugin under a cache that keeps writes until a flush: kill -9 loses them.
start_cached()
{
	start_nbdkit "$sock" --filter=cache file "$tmp/img" cache=writeback
}

write_block()
{
	timeout 120 dd if="$tmp/new" of="$tmp/mnt/disk" bs=4k seek="$1" count=1 oflag=direct \
		conv=notrunc status=none
}

# fsync_disk: fsync the disk; its stderr in $tmp/err.
fsync_disk()
{
	timeout 120 dd if=/dev/null of="$tmp/mnt/disk" conv=notrunc,fsync status=none 2>"$tmp/err"
}

read_block()
{
	timeout 120 dd if="$tmp/mnt/disk" of="$tmp/rb" bs=4k skip="$1" count=1 iflag=direct status=none
}

say "a write answered and never flushed, the server killed: the next fsync fails with EIO"
start_cached
start_rqdisk --nbd-timeout 20 "$uri" "$tmp/mnt" 2>"$tmp/rqerr"
write_block 5 || fail "a write failed"
same_bytes "$tmp/img" $((5 * 4096)) "$tmp/orig" $((5 * 4096)) 4096 ||
	fail "the write reached the file before a flush: the cache filter does not hold it"
stop_nbdkit KILL
start_cached
fsync_disk && fail "fsync after a server lost an unflushed write succeeded"
grep -q "Input/output error" "$tmp/err" || fail "fsync after the loss: $(cat "$tmp/err"), not EIO"
grep -q "nbd: $uri: 1 write (8 sectors) no flush covered may be lost" "$tmp/rqerr" ||
	fail "no word of the loss: $(cat "$tmp/rqerr")"
fsync_disk || fail "the fsync after the one that reported the loss failed: $(cat "$tmp/err")"
read_block 5 || fail "a read after the loss failed"
cmp -s "$tmp/rb" "$tmp/new" && fail "the lost write reads back: the test lost nothing"
same_bytes "$tmp/rb" 0 "$tmp/orig" $((5 * 4096)) 4096 || fail "the disk reads neither old nor new data"

say "every write flushed, the server killed: no fsync fails"
write_block 7 || fail "a write failed"
fsync_disk || fail "fsync failed: $(cat "$tmp/err")"
same_bytes "$tmp/img" $((7 * 4096)) "$tmp/new" 0 4096 || fail "the flushed write is not in the file"
stop_nbdkit KILL
start_cached
fsync_disk || fail "fsync after a drop that lost nothing failed: $(cat "$tmp/err")"
stop_rqdisk

say "the exit with the server gone and a write no flush covered: said, exit status 1"
start_rqdisk --nbd-timeout 3 "$uri" "$tmp/mnt" 2>"$tmp/rqerr"
write_block 9 || fail "a write failed"
stop_nbdkit KILL
fusermount3 -u "$tmp/mnt" || fail "cannot unmount"
wait_rqdisk
[ "$rqdisk_status" = 1 ] || fail "exit status $rqdisk_status, not 1: $(cat "$tmp/rqerr")"
grep -q "nbd: $uri: the last flush failed: the server is gone; writes since the last flush may be lost" \
	"$tmp/rqerr" || fail "no word of the last flush: $(cat "$tmp/rqerr")"
echo "PASS"
