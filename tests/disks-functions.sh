# SPDX-License-Identifier: BSD-3-Clause
# disks-functions.sh - what the tests of several disks in one daemon (--disk) share:
# the daemon started over MOUNTPOINT/disk0, disk1, ... and waited for.

# start_disks NR [OPTIONS] IMAGE MOUNTPOINT: rqdisk -f in the background with the
# options (--disk ones among them), back once MOUNTPOINT/disk0 ... disk(NR-1) are
# all mounted.  Sets rqdisk_pid (reaped at exit with every mount under MOUNTPOINT).
start_disks()
{
	local nr=$1 mnt=${!#} i n extra=()

	shift
	read -r -a extra <<<"${RQDISK_TEST_OPTS:-}"
	requires_fuse_uring_if "${extra[@]}"
	echo "+ rqdisk -f${extra[*]:+ ${extra[*]}} $*"
	"$RQDISK" -f "${extra[@]}" "$@" &
	rqdisk_pid=$!
	rqdisk_mnt=$mnt/disk0
	if [ -z "${_disks_reap:-}" ]; then
		cleanup_fn _reap_disks "$mnt"
		_disks_reap=1
	fi
	for ((i = 0; i < 300; i++)); do
		for ((n = 0; n < nr; n++)); do
			is_mounted "$mnt/disk$n" || break
		done
		[ $n = "$nr" ] && return 0
		rqdisk_fail_if_gone "$mnt/disk*"
		sleep 0.1
	done
	fail "rqdisk did not mount $nr disks under $mnt within 30 seconds"
}

# At exit: a daemon still there is killed, and what it left mounted is taken away.
_reap_disks()
{
	local m

	if [ -n "$rqdisk_pid" ]; then
		kill -TERM "$rqdisk_pid" 2>/dev/null
		sleep 1
		kill -KILL "$rqdisk_pid" 2>/dev/null
		wait "$rqdisk_pid" 2>/dev/null
		rqdisk_pid=
	fi
	for m in "$1"/disk*; do
		_unmount "$m"
	done
	return 0
}

# wait_disks_gone MOUNTPOINT: the daemon exited (status in rqdisk_status) and
# left nothing under MOUNTPOINT: no mount, no diskN directory.
wait_disks_gone()
{
	wait_rqdisk
	no_mount_under "$1" || fail "rqdisk exited with a mount left under $1"
	[ -z "$(ls -A "$1")" ] || fail "rqdisk left $(ls -A "$1") in $1"
}
