#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-cgroup-groups.sh - bfq and cfq place two processes of two real
# cgroups (v2), one of them at a path over 300 bytes long, in two groups:
# the daemon resolves each FUSE caller's cgroup,
# its bios carry it, and the elevator's read-only queue/iosched/groups
# lists both groups, each with the weight group_weights gave it.  Skips
# where no cgroup v2 hierarchy is mounted or it cannot be written.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires dd

cg_root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$cg_root" ] || skip "no cgroup v2 hierarchy is mounted"
make_tmpdir tmp
mkdir "$tmp/mnt"
truncate -s 64M "$tmp/img"

# A child of the v2 root, and a cgroup two levels under another whose path
# is over 300 bytes (the daemon and the elevators once kept 255); their
# paths as /proc/PID/cgroup names them.
name=rqdisk-test-$$
a=/$name-a
b_top=/$name-b
b_mid=$b_top/$(printf 'm%.0s' {1..200})
b=$b_mid/$(printf 'l%.0s' {1..100})
readers=()
remove_cgroups()
{
	local pid

	for pid in "${readers[@]}"; do
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	rmdir "$cg_root$a" "$cg_root$b" "$cg_root$b_mid" "$cg_root$b_top" 2>/dev/null
}
mkdir "$cg_root$a" 2>/dev/null || skip "cannot make a cgroup under $cg_root"
cleanup_fn remove_cgroups
mkdir -p "$cg_root$b" || fail "cannot make a cgroup of ${#b} bytes under $cg_root"

# reader CGROUP: joins the cgroup, then reads the disk (direct I/O, so that
# the reads are its own) until killed; its dd goes with it.
reader()
{
	(
		echo $BASHPID >"$cg_root$1/cgroup.procs" || exit 1
		grep -qx "0::$1" /proc/$BASHPID/cgroup || exit 1
		trap 'kill $! 2>/dev/null; wait $! 2>/dev/null || true; exit 0' TERM
		while :; do
			dd if="$rqdisk_disk" of=/dev/null bs=64k count=256 iflag=direct status=none &
			wait $! || exit 1
		done
	) &
	readers+=($!)
}

# wait_groups FILE: until FILE lists both groups (10 s at most); prints it.
wait_groups()
{
	local i text

	for ((i = 0; i < 100; i++)); do
		text=$(cat "$1")
		if grep -q "^$a " <<<"$text" && grep -q "^$b " <<<"$text"; then
			echo "$text"
			return 0
		fi
		sleep 0.1
	done
	echo "$text"
	return 1
}

for elv in bfq cfq; do
	say "$elv: two readers, in $a and $b"
	start_rqdisk --model hdd -e "$elv" "$tmp/img" "$tmp/mnt"
	iosched=$tmp/mnt/queue/iosched
	[ -r "$iosched/groups" ] || fail "$elv has no queue/iosched/groups"
	[ -z "$(cat "$iosched/groups")" ] || fail "$elv: groups before any I/O: $(cat "$iosched/groups")"
	echo "$b 300" >"$iosched/group_weights" || fail "$elv: group_weights refused '$b 300'"
	reader "$a"
	reader "$b"
	groups=$(wait_groups "$iosched/groups") ||
		fail "$elv: the groups file does not list $a and $b: '$groups'"
	say "$elv groups:"
	echo "$groups"
	grep -qE "^$a 100 [1-9][0-9]*$" <<<"$groups" || fail "$elv: $a is not at weight 100: '$groups'"
	grep -qE "^$b 300 [1-9][0-9]*$" <<<"$groups" || fail "$elv: $b is not at weight 300: '$groups'"
	[ "$(wc -l <<<"$groups")" -eq 2 ] || fail "$elv: groups besides $a and $b: '$groups'"
	echo "$a 1" >"$iosched/groups" 2>/dev/null && fail "$elv: a write to groups was taken"
	for pid in "${readers[@]}"; do
		kill -0 "$pid" 2>/dev/null || fail "$elv: a reader stopped (it could not join its cgroup?)"
		kill "$pid"
		wait "$pid" 2>/dev/null || true
	done
	readers=()
	stop_rqdisk
done
