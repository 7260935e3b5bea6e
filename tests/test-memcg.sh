#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-memcg.sh - a loop device on the disk under memory pressure, set up as
# rqdisk(8) says is safe: ext4 on the disk loop-attached with direct I/O, a
# writer in a memory cgroup limited to 160 MiB writing 1.5 GB, and the daemon
# outside that cgroup, as a service manager runs it.  Without --direct and
# with it, the write and its fsync must end, e2fsck find the file system
# clean, and no I/O buffer have come from malloc.  A watchdog aborts the FUSE
# connection and kills the writer if they do not end in time, so that a
# deadlock fails the test instead of holding the machine.  Never
# --fuse-uring here: a hang there frees nothing.
#
# MEMCG_LIMIT_MIB and MEMCG_WRITE_MB change the limit and the amount written.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires_loop
requires mkfs.ext4 e2fsck mountpoint dd
RQDISK_TEST_OPTS=--fuse-uring=off # never the ring, whatever the caller or the kernel says

limit_mib=${MEMCG_LIMIT_MIB:-160}
write_mb=${MEMCG_WRITE_MB:-1500}
deadline=${MEMCG_DEADLINE:-90} # seconds for each write and fsync

# ---------------------------------------------------------------- the cgroup

cg=
# make_memcg: a memory cgroup limited to $limit_mib MiB in $cg (v1, or v2's
# memory.max), removed at exit; skip where none can be made.
make_memcg()
{
	local v1=/sys/fs/cgroup/memory parent limit_file

	if [ -w "$v1/cgroup.procs" ]; then
		parent=$v1$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup)
		[ -d "$parent" ] || parent=$v1
		limit_file=memory.limit_in_bytes
	else
		parent=$(grep -m1 ' - cgroup2 ' /proc/self/mountinfo | awk '{ print $5 }')
		[ -n "$parent" ] && grep -qw memory "$parent/cgroup.controllers" 2>/dev/null ||
			skip "no cgroup v1 memory controller and no cgroup v2 one"
		parent=$parent$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
		grep -qw memory "$parent/cgroup.subtree_control" 2>/dev/null ||
			skip "cgroup v2: memory is not enabled below $parent"
		limit_file=memory.max
	fi
	cg=$parent/rqdisk-test-memcg.$$
	mkdir "$cg" 2>/dev/null || skip "cannot make a memory cgroup under $parent"
	cleanup_fn _remove_memcg
	echo $((limit_mib * 1024 * 1024)) >"$cg/$limit_file" || fail "cannot limit $cg"
	echo "memory cgroup $cg: $(cat "$cg/$limit_file") bytes"
}

_remove_memcg()
{
	local p

	for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do
		kill -KILL "$p" 2>/dev/null
	done
	sleep 0.5
	rmdir "$cg" 2>/dev/null || echo "warning: $cg not removed" >&2
}

# ---------------------------------------------------------------- the watchdog

# watchdog PID: after $deadline s, unless $tmp/done exists, abort the FUSE
# connection of the disk's mount (its writeback then ends in errors) and
# kill PID.  Leaves $tmp/fired behind if it fired.
watchdog()
{
	local pid=$1 conn i

	conn=$(mountpoint -d "$tmp/mnt") || fail "no device number for $tmp/mnt"
	conn=${conn#*:}
	[ -e "$fusectl/$conn/abort" ] || fail "no FUSE connection $conn"
	rm -f "$tmp/done" "$tmp/fired"
	(
		for ((i = 0; i < deadline; i++)); do
			[ -e "$tmp/done" ] && exit 0
			sleep 1
		done
		echo "watchdog: $deadline s passed: aborting FUSE connection $conn" >&2
		touch "$tmp/fired"
		echo 1 >"$fusectl/$conn/abort" || :
		kill -KILL "$pid" 2>/dev/null
	) &
	cleanup_fn touch "$tmp/done"
}

# ---------------------------------------------------------------- the run

# run RQDISK-OPTIONS...: the whole scenario with the daemon so started.
run()
{
	local dev writer status=0 start

	say "rqdisk $* outside the cgroup; ${write_mb} MB written from inside it"
	rm -f "$tmp/img"
	truncate -s $((write_mb + 512))M "$tmp/img"
	start_rqdisk "$@" "$tmp/img" "$tmp/mnt" 2>"$tmp/daemon.err"
	loop_attach dev "$rqdisk_disk" --direct-io=on
	mkfs.ext4 -q -F "$dev" || fail "mkfs.ext4 failed"
	mount_at "$dev" "$tmp/fs"
	start=$SECONDS
	sh -c 'echo $$ >"$1/cgroup.procs" && exec dd if=/dev/zero of="$2" bs=1M count="$3" \
		conv=fsync status=none' sh "$cg" "$tmp/fs/file" "$write_mb" &
	writer=$!
	watchdog "$writer"
	wait "$writer" || status=$?
	touch "$tmp/done"
	[ -e "$tmp/fired" ] && fail "the write did not end in $deadline s: a deadlock"
	[ $status = 0 ] || fail "the writer failed (status $status)"
	echo "written and synced in $((SECONDS - start)) s;" \
		"cgroup peak $(($(cat "$cg/memory.max_usage_in_bytes" 2>/dev/null ||
			cat "$cg/memory.peak" 2>/dev/null || echo 0) >> 20)) MiB"
	[ "$(stat -c %s "$tmp/fs/file")" = $((write_mb * 1024 * 1024)) ] ||
		fail "the file is not ${write_mb} MB"
	umount "$tmp/fs" || fail "umount failed"
	e2fsck -fn "$dev" || fail "e2fsck found errors (status $?)"
	loop_detach "$dev"
	stop_rqdisk
	cat "$tmp/daemon.err"
	# backpressure: with requests in flight no more are read while the arena is short
	grep -q "ran short" "$tmp/daemon.err" && fail "buffers came from malloc: the locked arena ran short"
	return 0
}

# The watchdog aborts through fusectl: mounted for the test if it was not, and
# unmounted again at exit, after everything else.
fusectl=/sys/fs/fuse/connections
if ! mountpoint -q "$fusectl"; then
	mount -t fusectl fusectl "$fusectl" 2>/dev/null || skip "cannot mount fusectl on $fusectl"
	cleanup_fn umount "$fusectl"
fi

make_odirect_tmpdir tmp
[ -n "$tmp" ] || skip "no file system here takes O_DIRECT"
mkdir "$tmp/mnt" "$tmp/fs"
make_memcg
run
run --direct
echo "PASS"
