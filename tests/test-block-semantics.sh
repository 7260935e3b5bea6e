#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-block-semantics.sh - the disk file behaves as a block device: a fixed
# size (truncate refused with EINVAL, same size accepted, O_TRUNC ignored),
# fallocate PUNCH_HOLE|KEEP_SIZE and ZERO_RANGE zero whole blocks and refuse
# unaligned ranges, writes at the end fail with ENOSPC and reads there return
# nothing, fsync works, and --read-only refuses writes with EROFS but reads.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires python3 fallocate dd cmp

make_tmpdir tmp
size=$((8 * 1024 * 1024))
random_file "$tmp/img" $size
cp "$tmp/img" "$tmp/ref"
mkdir "$tmp/mnt"

# py CODE...: run python3 with the disk's path, size and errno at hand.
py()
{
	python3 -c "import errno, os, sys
disk, size = sys.argv[1], int(sys.argv[2])
def refused(want, what, f, *args):
    try:
        f(*args)
    except OSError as e:
        if e.errno != want:
            sys.exit(f'{what}: {e.strerror}, not {os.strerror(want)}')
        return
    sys.exit(f'{what} succeeded')
$1" "$rqdisk_disk" "$size" || fail "python check failed"
}

# zeroes OFF LEN: the same range in the reference becomes zeros.
zeroes()
{
	dd if=/dev/zero of="$tmp/ref" bs=512 seek="$1" count="$2" \
		iflag=count_bytes oflag=seek_bytes conv=notrunc status=none
}

start_rqdisk "$tmp/img" "$tmp/mnt"
disk=$rqdisk_disk

say "truncate to another size fails with EINVAL, to the same size succeeds"
py "refused(errno.EINVAL, 'truncate smaller', os.truncate, disk, size - 512)
refused(errno.EINVAL, 'truncate larger', os.truncate, disk, size + 512)
refused(errno.EINVAL, 'truncate to zero', os.truncate, disk, 0)
os.truncate(disk, size)
fd = os.open(disk, os.O_RDWR)
refused(errno.EINVAL, 'ftruncate', os.ftruncate, fd, 4096)
os.ftruncate(fd, size)
os.close(fd)
assert os.stat(disk).st_size == size, 'the size changed'"
! truncate -s 4M "$disk" 2>/dev/null || fail "truncate -s 4M succeeded"

say "opening with O_TRUNC changes nothing"
py "os.close(os.open(disk, os.O_WRONLY | os.O_TRUNC))
assert os.stat(disk).st_size == size, 'O_TRUNC changed the size'"
cmp "$disk" "$tmp/ref" || fail "O_TRUNC changed the contents"

say "fallocate --punch-hole --keep-size on whole blocks reads back as zeros"
fallocate --punch-hole --keep-size -o 1M -l 64K "$disk" || fail "punching a hole failed"
zeroes $((1024 * 1024)) $((64 * 1024))
fallocate --punch-hole --keep-size -o 512 -l 512 "$disk" || fail "punching one sector failed"
zeroes 512 512
cmp "$disk" "$tmp/ref" || fail "the punched ranges do not read as zeros (or more changed)"

say "fallocate --zero-range (with and without --keep-size) reads back as zeros"
fallocate --zero-range -o 2M -l 128K "$disk" || fail "zeroing a range failed"
zeroes $((2 * 1024 * 1024)) $((128 * 1024))
fallocate --zero-range --keep-size -o $((size - 4096)) -l 4096 "$disk" ||
	fail "zeroing the last blocks failed"
zeroes $((size - 4096)) 4096
cmp "$disk" "$tmp/ref" || fail "the zeroed ranges do not read as zeros (or more changed)"
[ "$(stat -c %s "$disk")" = $size ] || fail "fallocate changed the size"

say "unaligned or unsupported fallocate fails and changes nothing"
for args in "-p -o 100 -l 512" "-p -o 512 -l 100" "-z -o 1 -l 4096" "-z -o 4096 -l 4095"; do
	# shellcheck disable=SC2086 # args are words
	! fallocate $args "$disk" 2>"$tmp/err" || fail "fallocate $args succeeded"
	grep -q "Invalid argument" "$tmp/err" || fail "fallocate $args: $(cat "$tmp/err"), not EINVAL"
done
! fallocate -o 0 -l 4096 "$disk" 2>"$tmp/err" || fail "plain fallocate (mode 0) succeeded"
grep -q "not supported" "$tmp/err" || fail "plain fallocate: $(cat "$tmp/err"), not EOPNOTSUPP"
cmp "$disk" "$tmp/ref" || fail "a refused fallocate changed the disk"

say "writes at or past the end fail with ENOSPC; one across it is cut there"
! dd if=/dev/zero of="$disk" bs=512 count=1 seek=$((size / 512)) conv=notrunc 2>"$tmp/err" ||
	fail "dd past the end succeeded"
grep -q "No space left on device" "$tmp/err" || fail "dd past the end: $(cat "$tmp/err")"
py "fd = os.open(disk, os.O_RDWR)
refused(errno.ENOSPC, 'pwrite at the end', os.pwrite, fd, b'x' * 512, size)
refused(errno.ENOSPC, 'pwrite past the end', os.pwrite, fd, b'x', size + 4096)
n = os.pwrite(fd, b'E' * 1024, size - 512)
assert n == 512, f'a write across the end wrote {n} bytes, not 512'
assert os.pread(fd, 4096, size - 512) == b'E' * 512, 'the last sector is wrong'
assert os.pread(fd, 512, size) == b'', 'a read at the end returned data'
assert os.pread(fd, 1, size + 10000) == b'', 'a read past the end returned data'
os.close(fd)"
printf 'E%.0s' $(seq 512) | dd of="$tmp/ref" bs=512 seek=$((size / 512 - 1)) conv=notrunc status=none
[ "$(dd if="$disk" bs=4096 skip=$((size / 4096)) status=none | wc -c)" = 0 ] ||
	fail "dd read data at the end"
cmp "$disk" "$tmp/ref" || fail "the disk is wrong after the writes at the end"

say "fsync and fdatasync on the disk succeed; sync too"
py "fd = os.open(disk, os.O_RDWR)
os.pwrite(fd, b'synced', 4096 * 3 + 5)
os.fsync(fd)
os.fdatasync(fd)
os.close(fd)"
printf 'synced' | dd of="$tmp/ref" bs=1 seek=$((4096 * 3 + 5)) conv=notrunc status=none
sync "$disk" || fail "sync $disk failed"
sync -d "$disk" || fail "sync -d $disk failed"
cmp "$disk" "$tmp/ref" || fail "the disk is wrong after the synced write"
stop_rqdisk
cmp "$tmp/img" "$tmp/ref" || fail "the image is wrong after unmount"

say "--read-only: writes refused with EROFS, reads work"
start_rqdisk --read-only "$tmp/img" "$tmp/mnt"
disk=$rqdisk_disk
py "refused(errno.EROFS, 'open O_RDWR', os.open, disk, os.O_RDWR)
refused(errno.EROFS, 'open O_WRONLY', os.open, disk, os.O_WRONLY)
fd = os.open(disk, os.O_RDONLY)
refused(errno.EBADF, 'pwrite on a read-only descriptor', os.pwrite, fd, b'x', 0)
os.close(fd)"
! fallocate -p -o 0 -l 4096 "$disk" 2>/dev/null || fail "punching a hole read-only succeeded"
cmp "$disk" "$tmp/ref" || fail "reading the read-only disk gives wrong data"
stop_rqdisk
cmp "$tmp/img" "$tmp/ref" || fail "the image changed under --read-only"

say "4096-byte logical blocks: fallocate must cover whole 4 KiB blocks"
start_rqdisk --logical-block-size 4096 "$tmp/img" "$tmp/mnt"
disk=$rqdisk_disk
! fallocate -p -o 512 -l 4096 "$disk" 2>/dev/null || fail "punching half a block succeeded"
! fallocate -z -o 4096 -l 512 "$disk" 2>/dev/null || fail "zeroing part of a block succeeded"
fallocate -p -o 8192 -l 8192 "$disk" || fail "punching two blocks failed"
zeroes 8192 8192
cmp "$disk" "$tmp/ref" || fail "the disk is wrong after fallocate on 4 KiB blocks"
stop_rqdisk
cmp "$tmp/img" "$tmp/ref" || fail "the image is wrong after fallocate on 4 KiB blocks"
echo "PASS"
