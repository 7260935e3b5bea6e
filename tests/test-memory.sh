#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-memory.sh - the daemon's memory under pressure: its I/O buffers (and
# with --fuse-uring the ring entries' payloads) are locked in memory at start
# (VmLck covers them); a request whose buffer cannot be had fails with ENOMEM
# and the daemon goes on; a refused PR_SET_IO_FLUSHER is said once, not once
# by the parent and once by the child, with what to do about it.  A file image's daemon maps neither
# libnbd nor librbd (their backends are modules), so locks little past the arena.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires dd cmp
RQDISK_TEST_OPTS=--fuse-uring=off # /dev/fuse, but where a part says --fuse-uring

pool_mib=32 # FE_POOL_SIZE
make_tmpdir tmp
mkdir "$tmp/mnt"
truncate -s 64M "$tmp/img"

# locked_kib: the running daemon's VmLck.
locked_kib()
{
	awk '$1 == "VmLck:" { print $2 }' "/proc/$rqdisk_pid/status"
}

# AddressSanitizer makes mlock() a no-op: nothing is locked to be seen.
asan=
[[ $(ldd "$RQDISK" 2>/dev/null) == *libasan* ]] && asan=1

say "the I/O buffers' arena is locked: VmLck is at least $pool_mib MiB"
start_rqdisk --direct "$tmp/img" "$tmp/mnt" 2>"$tmp/err"
kib=$(locked_kib)
echo "VmLck $kib kB"
[ -n "$asan" ] || [ "$kib" -ge $((pool_mib * 1024)) ] ||
	fail "VmLck is $kib kB, less than the $pool_mib MiB arena"
grep -q "mlock" "$tmp/err" && fail "root with CAP_IPC_LOCK was told mlock was refused"
say "a file image: no backend module nor its libraries mapped, VmLck under $((pool_mib + 32)) MiB"
# with librbd linked in, about 250 MiB were locked here; libnbd alone, 85 MiB
maps=$(grep -E 'libnbd|librbd|librados|backend-(nbd|rbd)' "/proc/$rqdisk_pid/maps" || :)
[ -z "$maps" ] || fail "a file image's daemon maps: $(awk '{ print $6 }' <<<"$maps" | sort -u)"
[ -n "$asan" ] || [ "$kib" -lt $(((pool_mib + 32) * 1024)) ] ||
	fail "VmLck is $kib kB for a file image, $((pool_mib + 32)) MiB or more"
dd if=/dev/urandom of="$tmp/data" bs=1M count=8 status=none
dd if="$tmp/data" of="$rqdisk_disk" bs=1M oflag=direct conv=notrunc status=none
cmp -n 8M "$tmp/data" "$rqdisk_disk" || fail "data read back differs"
[ "$(locked_kib)" = "$kib" ] || fail "VmLck changed with I/O: $kib kB, then $(locked_kib) kB"
stop_rqdisk

if [ -w "$fuse_uring_param" ]; then
	requires_fuse_uring
	ncpu=$(possible_cpus)
	# fring_alloc(): 64 entries of 1 MiB a possible CPU, fewer (2 at least) to keep under 128 MiB
	per_cpu=$((128 / ncpu < 64 ? 128 / ncpu : 64))
	ring_mib=$((ncpu * (per_cpu < 2 ? 2 : per_cpu)))
	say "--fuse-uring: the ring's $ring_mib MiB of payloads are locked too"
	start_rqdisk --fuse-uring "$tmp/img" "$tmp/mnt"
	kib=$(locked_kib)
	echo "VmLck $kib kB"
	[ -n "$asan" ] || [ "$kib" -ge $(((pool_mib + ring_mib) * 1024)) ] ||
		fail "VmLck is $kib kB, less than the arena and the ring's payloads"
	cmp -n 8M "$tmp/data" "$rqdisk_disk" || fail "data read back through the ring differs"
	stop_rqdisk
else
	say "no FUSE over io_uring in this kernel: the ring's part is not run"
fi

say "no buffer for a request: that request fails with ENOMEM, the daemon goes on"
# RQDISK_TEST_BUFPOOL (tests only): a 2 MiB arena and no malloc past it.
# The spare input buffer takes 1 MiB + 8 KiB of it: every request is read
# into the spare, small ones find a buffer, 1 MiB ones none.
RQDISK_TEST_BUFPOOL=$((2 * 1024 * 1024)) start_rqdisk "$tmp/img" "$tmp/mnt"
dd if="$tmp/data" of="$rqdisk_disk" bs=4k count=1 seek=100 oflag=direct conv=notrunc \
	status=none || fail "a 4 KiB write failed with a buffer to be had"
if dd if="$tmp/data" of="$rqdisk_disk" bs=1M count=1 oflag=direct conv=notrunc \
	status=none 2>"$tmp/err"; then
	fail "a 1 MiB write succeeded with no buffer to be had"
fi
cat "$tmp/err"
grep -q "Cannot allocate memory" "$tmp/err" || fail "the 1 MiB write did not fail with ENOMEM"
if dd if="$rqdisk_disk" of=/dev/null bs=1M count=1 iflag=direct status=none 2>"$tmp/err"; then
	fail "a 1 MiB read succeeded with no buffer to be had"
fi
grep -q "Cannot allocate memory" "$tmp/err" || fail "the 1 MiB read did not fail with ENOMEM"
kill -0 "$rqdisk_pid" || fail "the daemon exited"
dd if="$rqdisk_disk" of="$tmp/back" bs=4k count=1 skip=100 iflag=direct status=none ||
	fail "a 4 KiB read failed after the ENOMEMs"
cmp -n 4096 "$tmp/data" "$tmp/back" || fail "the 4 KiB written reads back different"
stop_rqdisk

say "PR_SET_IO_FLUSHER refused (no CAP_SYS_RESOURCE): one warning, from parent and child together"
requires capsh
mkdir "$tmp/mnt2"
capsh --drop=cap_sys_resource -- -c '"$0" "$1" "$2"' "$RQDISK" "$tmp/img" "$tmp/mnt2" \
	2>"$tmp/err" || { cat "$tmp/err"; fail "rqdisk did not start in the background"; }
cleanup_fn _unmount "$tmp/mnt2"
cat "$tmp/err"
n=$(grep -c "PR_SET_IO_FLUSHER" "$tmp/err" || :)
[ "$n" = 1 ] || fail "the PR_SET_IO_FLUSHER warning came $n times"
grep "PR_SET_IO_FLUSHER" "$tmp/err" | grep -q "CAP_SYS_RESOURCE" ||
	fail "the warning does not name CAP_SYS_RESOURCE"
# and says what to do: the service unit, or the capability granted
grep "PR_SET_IO_FLUSHER" "$tmp/err" | grep -q "rqdisk@.service" ||
	fail "the warning does not name the service unit"
grep "PR_SET_IO_FLUSHER" "$tmp/err" | grep -q "setcap cap_sys_resource" ||
	fail "the warning does not say how to grant the capability"
fusermount3 -u "$tmp/mnt2" || fail "fusermount3 -u failed"
echo "PASS"
