#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-fuse-uring-auto.sh - --fuse-uring=auto, the default: FUSE requests
# come on io_uring where the kernel offers it (the fuse module's
# enable_uring is Y) and on /dev/fuse, with nothing said, where not;
# fuse/transport says which, and the daemon's reads of /dev/fuse agree.
# off never takes the ring; on (and the bare option) refuses to start in
# one line where the kernel does not offer it.  A kernel that turns the
# ring down after the start (no offer in its INIT; EOPNOTSUPP for the
# entries) leaves auto on /dev/fuse, unsaid, and is said under on.
# enable_uring is put back as it was at exit.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires cmp dd
lock_fuse_uring # no other test turns enable_uring while this one does
set_fuse_uring N 2>/dev/null || skip "cannot turn off $fuse_uring_param"
set_fuse_uring Y 2>/dev/null || skip "cannot turn on $fuse_uring_param"
RQDISK_TEST_OPTS= # every daemon here runs with the options its case names

make_tmpdir tmp
mkdir "$tmp/mnt"
truncate -s 16M "$tmp/img"
requests=256 # 4 KiB direct reads
random_file "$tmp/data" $((requests * 4096))

daemon_reads()
{
	awk '$1 == "syscr:" { print $2 }' "/proc/$rqdisk_pid/io"
}

# AddressSanitizer makes mlock() a no-op: the ring's locked memory is not seen.
asan=
[[ $(ldd "$RQDISK" 2>/dev/null) == *libasan* ]] && asan=1

# transport WANT [OPTIONS...]: with enable_uring as it is now, a daemon
# started with OPTIONS (none: the default) takes requests on WANT, "uring"
# or "dev": fuse/transport says so, and it reads /dev/fuse for none of
# $requests reads or for every one.  The data reads back as written; what
# the daemon said on stderr is in $tmp/err, its VmLck in $locked (kB).
transport()
{
	local want=$1 got before reads

	shift
	start_rqdisk "$@" "$tmp/img" "$tmp/mnt" 2>"$tmp/err"
	dd if="$tmp/data" of="$rqdisk_disk" bs=64k oflag=direct conv=notrunc status=none ||
		fail "writing through the disk failed"
	got=$(cat "$tmp/mnt/fuse/transport") || fail "fuse/transport cannot be read"
	before=$(daemon_reads)
	dd if="$rqdisk_disk" of="$tmp/back" bs=4k count=$requests iflag=direct status=none ||
		fail "reading through the disk failed"
	reads=$(($(daemon_reads) - before))
	locked=$(awk '$1 == "VmLck:" { print $2 }' "/proc/$rqdisk_pid/status")
	stop_rqdisk
	cat "$tmp/err"
	echo "enable_uring $(cat "$fuse_uring_param"), rqdisk $*: transport $got;" \
		"$reads reads of /dev/fuse for $requests requests; VmLck $locked kB"
	cmp "$tmp/data" "$tmp/back" || fail "rqdisk $*: the data read back differs"
	[ "$got" = "$want" ] || fail "rqdisk $*: fuse/transport says $got, not $want"
	if [ "$want" = uring ]; then
		[ "$reads" -lt $((requests / 20)) ] || fail "rqdisk $*: $reads reads of /dev/fuse on the ring"
	else
		[ "$reads" -ge $requests ] || fail "rqdisk $*: $reads reads for $requests requests on /dev/fuse"
	fi
}

# unsaid: the daemon said nothing (a refused PR_SET_IO_FLUSHER aside,
# which depends on the capabilities the tests run with).
unsaid()
{
	! grep -v "warning: PR_SET_IO_FLUSHER" "$tmp/err" || fail "the daemon said the above"
}

say "enable_uring=Y: the default and auto take the ring, saying nothing"
set_fuse_uring Y
transport uring
unsaid
transport uring --fuse-uring=auto
unsaid
say "enable_uring=Y: off stays on /dev/fuse; on and the bare option take the ring"
transport dev --fuse-uring=off
transport uring --fuse-uring=on
transport uring --fuse-uring

say "enable_uring=N: the default and auto stay on /dev/fuse, saying nothing, with no ring"
set_fuse_uring N
transport dev --fuse-uring=off
unsaid
off_locked=$locked
transport dev
unsaid
# the ring's entries are 32 MiB or more, locked at start where it is set up
[ -n "$asan" ] || [ "$locked" -lt $((off_locked + 16 * 1024)) ] ||
	fail "the default locked $locked kB, off $off_locked kB: a ring was set up for nothing"
transport dev --fuse-uring=auto
unsaid

say "enable_uring=N: on and the bare option are refused in one line, with no mount"
for opt in --fuse-uring=on --fuse-uring; do
	for mode in -f ""; do
		status=0
		# shellcheck disable=SC2086 # mode is no word or one
		timeout 30 "$RQDISK" $mode "$opt" "$tmp/img" "$tmp/mnt" 2>"$tmp/err" || status=$?
		echo "rqdisk $mode $opt: status $status: $(cat "$tmp/err")"
		if [ $status = 0 ]; then
			_unmount "$tmp/mnt"
			fail "rqdisk $mode $opt started although the kernel does not offer the ring"
		fi
		[ $status = 1 ] || fail "rqdisk $mode $opt: exit status $status, not 1"
		[ "$(wc -l <"$tmp/err")" = 1 ] || fail "rqdisk $mode $opt: the refusal is not one line"
		grep -q "^rqdisk: --fuse-uring: .*enable_uring" "$tmp/err" ||
			fail "rqdisk $mode $opt: the refusal does not name the problem"
		no_mount_under "$tmp" || fail "rqdisk $mode $opt left a mount"
	done
done

# The kernel turning the ring down after the start, as when enable_uring
# goes off between the daemon's look and the mount: the daemon is made to
# take the kernel's N for Y (RQDISK_TEST_FUSE_URING, tests only).
# ringed: the daemon just run set up a ring (so that its quiet was the ring's).
ringed()
{
	[ -n "$asan" ] || [ "$locked" -ge $((off_locked + 16 * 1024)) ] ||
		fail "locked $locked kB, off $off_locked kB: no ring was set up"
}

say "no offer in the kernel's INIT: auto stays on /dev/fuse unsaid; on says so"
RQDISK_TEST_FUSE_URING=available transport dev
unsaid
ringed
RQDISK_TEST_FUSE_URING=available transport dev --fuse-uring=on
grep -q "did not offer io_uring" "$tmp/err" || fail "--fuse-uring=on: the missing offer is unsaid"

say "the ring's entries refused (EOPNOTSUPP): auto stays on /dev/fuse unsaid; on says so"
RQDISK_TEST_FUSE_URING=offered transport dev
unsaid
ringed
RQDISK_TEST_FUSE_URING=offered transport dev --fuse-uring=on
grep -q "FUSE over io_uring: Operation not supported" "$tmp/err" ||
	fail "--fuse-uring=on: the refused entries are unsaid"

no_mount_under "$tmp" || fail "a mount is left under $tmp"
echo "PASS"
