# SPDX-License-Identifier: BSD-3-Clause
# functions.sh - what every integration test sources: requirements, cleanup, rqdisk start and stop.
#
# A test script does:
#
#   source "$(dirname "$0")/functions.sh"
#   requires_root
#   requires_fuse
#   make_tmpdir tmp
#   start_rqdisk "$tmp/img" "$tmp/mnt"
#   ...
#   stop_rqdisk
#
# Exit 0 passes, 77 skips, anything else fails.  Everything registered with
# cleanup_fn runs when the script exits, whatever the reason, last first.
# The Makefile sets RQDISK (the daemon), top_srcdir and top_builddir; run by
# hand from the build directory, they are found from there.

set -e
set -u
set -o pipefail
set -E
trap '_status=$?; echo "ERROR: ${0##*/} line $LINENO: status $_status: $BASH_COMMAND" >&2' ERR

# The daemon under test, and the build directory's helper programs.
if [ -z "${RQDISK:-}" ]; then
	for RQDISK in "$PWD/src/daemon/rqdisk" "$PWD/../src/daemon/rqdisk" "$(dirname "$0")/../src/daemon/rqdisk"; do
		[ -x "$RQDISK" ] && break
	done
fi
RQDISK=$(realpath -m "$RQDISK")
: "${top_builddir:=$(dirname "$RQDISK")/../..}" # RQDISK is src/daemon/rqdisk
: "${top_srcdir:=$(dirname "$0")/..}"
export RQDISK top_builddir top_srcdir
# The nbd and rbd backends: the build tree's modules, not the installed ones.
: "${RQDISK_BACKEND_DIR:=$top_builddir/src/backend/.libs}"
export RQDISK_BACKEND_DIR

# Give up on the test: it found the behaviour broken.
fail()
{
	echo "FAIL: $(basename "$0"): $*" >&2
	exit 1
}

# Not testable here: exit 77, which the harness reports as SKIP.
skip()
{
	echo "SKIP: $(basename "$0"): $*" >&2
	exit 77
}

# What the test is about to check, for the log.
say()
{
	echo "--- $*"
}

# ---------------------------------------------------------------- cleanup

_cleanup_cmds=()

# cleanup_fn CMD [ARGS...]: run CMD ARGS when the script exits.
cleanup_fn()
{
	_cleanup_cmds+=("$(printf '%q ' "$@")")
}

_run_cleanups()
{
	local status=$? i

	set +e
	trap - ERR
	for ((i = ${#_cleanup_cmds[@]} - 1; i >= 0; i--)); do
		eval "${_cleanup_cmds[i]}"
	done
	exit $status
}
trap _run_cleanups EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- requirements

# requires CMD...: skip unless every CMD is a program we can run.
requires()
{
	local c

	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || skip "$c is not installed"
	done
}

requires_root()
{
	[ "$(id -u)" = 0 ] || skip "needs root"
}

# /dev/fuse must open read-write, and fusermount3 must be there to unmount.
requires_fuse()
{
	requires fusermount3 mountpoint
	[ -c /dev/fuse ] || skip "no /dev/fuse"
	( exec 3<>/dev/fuse ) 2>/dev/null || skip "/dev/fuse cannot be opened"
	[ -x "$RQDISK" ] || fail "the daemon $RQDISK is not built"
}

# listen_syslog FILE: what daemons say to the system log, one datagram a
# line, goes to FILE while the test runs (a socket of the test's own,
# $syslog_sock).  Where no system logger runs, /dev/log is made a link to
# it (removed at exit) and syslog_global is 1: every daemon's syslog comes
# here.  Where one runs, /dev/log is its: syslog_global is empty, and a
# daemon is heard only run in a mount namespace of its own with
# $syslog_sock bound over /dev/log.  Every test that listens takes one
# lock, so that none takes /dev/log from under another.
syslog_sock=
syslog_global=
listen_syslog()
{
	local out=$1 i

	requires_root
	requires flock python3
	exec {_syslog_lock}>"${TMPDIR:-/tmp}/rqdisk-dev-log.lock"
	flock "$_syslog_lock"
	syslog_sock=$tmp/syslog.sock
	python3 - "$syslog_sock" "$out" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a") as out:
    while True:
        out.write(s.recv(4096).decode(errors="replace").rstrip("\0\n") + "\n")
        out.flush()
PY
	_syslog_pid=$!
	cleanup_fn _stop_syslog
	for ((i = 0; i < 100; i++)); do
		[ -S "$syslog_sock" ] && break
		sleep 0.1
	done
	[ -S "$syslog_sock" ] || fail "cannot listen on $syslog_sock"
	if [ ! -e /dev/log ] && [ ! -L /dev/log ]; then
		ln -s "$syslog_sock" /dev/log
		syslog_global=1
	fi
}

_stop_syslog()
{
	kill "$_syslog_pid" 2>/dev/null
	wait "$_syslog_pid" 2>/dev/null
	[ -n "$syslog_global" ] && [ "$(readlink /dev/log)" = "$syslog_sock" ] && rm -f /dev/log
	return 0
}

# lock_fuse_uring: take the lock every test that turns the fuse module's
# enable_uring takes, so that none turns it under another, and put its
# value back at exit.  Skips where the kernel has no FUSE over io_uring.
fuse_uring_param=/sys/module/fuse/parameters/enable_uring
lock_fuse_uring()
{
	[ -n "${_fuse_uring_lock:-}" ] && return 0
	requires_root
	requires flock
	[ -e "$fuse_uring_param" ] || skip "this kernel has no FUSE over io_uring (Linux 6.14+)"
	exec {_fuse_uring_lock}>"${TMPDIR:-/tmp}/rqdisk-fuse-uring.lock"
	flock "$_fuse_uring_lock"
	cleanup_fn _restore_fuse_uring "$(cat "$fuse_uring_param")"
}

_restore_fuse_uring()
{
	[ "$(cat "$fuse_uring_param")" = "$1" ] || set_fuse_uring "$1"
}

# The kernel must carry FUSE requests on io_uring (Linux 6.14+): the fuse
# module's enable_uring is turned on for the test and put back at exit.
requires_fuse_uring()
{
	lock_fuse_uring
	[ "$(cat "$fuse_uring_param")" = Y ] && return 0
	set_fuse_uring Y 2>/dev/null || skip "cannot turn on $fuse_uring_param"
}

# requires_fuse_uring_if OPTIONS...: requires_fuse_uring if they ask for
# the ring whatever the kernel offers (--fuse-uring, --fuse-uring=on).
requires_fuse_uring_if()
{
	local o

	for o in "$@"; do
		case $o in --fuse-uring | --fuse-uring=on) requires_fuse_uring ;; esac
	done
	return 0
}

# set_fuse_uring Y|N: the kernel offers FUSE over io_uring to new mounts, or not.
set_fuse_uring()
{
	echo "$1" >"$fuse_uring_param"
}

# A free loop device must be found (or made) by losetup.
requires_loop()
{
	requires_root
	requires losetup
	losetup -f >/dev/null 2>&1 || skip "no free loop device"
}

# ---------------------------------------------------------------- the registries

# foreach_elevator: every elevator rqdisk has, one a line: none, then each
# built-in one, as its registry lists them (rqdisk --list elevators).  A
# test that runs over every elevator takes them from here, so a new
# built-in one is in it with no edit:
#
#   elevators=$(foreach_elevator)   # an assignment: a failure here ends the test
#   for e in $elevators; do ...
foreach_elevator()
{
	local list

	list=$("$RQDISK" --list elevators) || fail "rqdisk --list elevators: status $?"
	list=$(awk '{ print $1 }' <<<"$list")
	[[ $list == none$'\n'?* ]] || fail "rqdisk --list elevators: no none, then the built-ins"
	printf '%s\n' "$list"
}

# ---------------------------------------------------------------- temp files

# make_tmpdir VAR: a fresh directory under $TMPDIR, removed at exit, its path in VAR.
make_tmpdir()
{
	local _d

	_d=$(mktemp -d "${TMPDIR:-/tmp}/rqdisk-test.XXXXXXXX") || fail "mktemp -d failed"
	cleanup_fn rm -rf --one-file-system "$_d"
	printf -v "$1" '%s' "$_d"
}

# supports_odirect DIR: whether files in DIR can be opened with O_DIRECT.
supports_odirect()
{
	dd if=/dev/zero of="$1/.odirect-probe" bs=4096 count=1 oflag=direct status=none 2>/dev/null
	local ret=$?

	rm -f "$1/.odirect-probe"
	return $ret
}

# make_odirect_tmpdir VAR: like make_tmpdir, on a file system that takes
# O_DIRECT (tmpfs does not): $TMPDIR, else /var/tmp.  VAR is empty if none does.
make_odirect_tmpdir()
{
	local _base _d

	printf -v "$1" '%s' ""
	for _base in "${TMPDIR:-/tmp}" /var/tmp; do
		[ -d "$_base" ] || continue
		_d=$(mktemp -d "$_base/rqdisk-test.XXXXXXXX") || continue
		if supports_odirect "$_d"; then
			cleanup_fn rm -rf --one-file-system "$_d"
			printf -v "$1" '%s' "$_d"
			return 0
		fi
		rmdir "$_d"
	done
	return 0
}

# random_file FILE SIZE: SIZE bytes of random data.
random_file()
{
	head -c "$2" /dev/urandom >"$1"
	[ "$(stat -c %s "$1")" = "$2" ] || fail "cannot make $1 of $2 bytes"
}

# write_at FROM TO OFFSET: FROM's bytes into TO at OFFSET in one write, nothing truncated.
write_at()
{
	dd if="$1" of="$2" bs="$(stat -c %s "$1")" count=1 seek="$3" iflag=fullblock \
		oflag=seek_bytes conv=notrunc status=none
}

# same_bytes FILE1 OFF1 FILE2 OFF2 LEN: the ranges hold the same bytes.
same_bytes()
{
	cmp -s -n "$5" -i "$2:$4" "$1" "$3"
}

# ---------------------------------------------------------------- mounts

# is_mounted PATH: PATH is a mount point now (for a directory or a file).
is_mounted()
{
	local p

	p=$(realpath -m "$1")
	awk -v p="$p" '$5 == p { found = 1 } END { exit !found }' /proc/self/mountinfo
}

# no_mount_under DIR: nothing is mounted at or below DIR.
no_mount_under()
{
	local p

	p=$(realpath -m "$1")
	! awk -v p="$p" '$5 == p || index($5, p "/") == 1 { found = 1 } END { exit !found }' \
		/proc/self/mountinfo
}

# Detach whatever is still mounted at PATH: FUSE first politely, then lazily.
_unmount()
{
	is_mounted "$1" || return 0
	fusermount3 -u -q "$1" 2>/dev/null || umount "$1" 2>/dev/null || umount -l "$1" 2>/dev/null
	is_mounted "$1" && umount -l "$1" 2>/dev/null
	return 0
}

# ---------------------------------------------------------------- the daemon

: "${RQDISK_TEST_OPTS=--fuse-uring=off}"
rqdisk_pid=
rqdisk_mnt=
rqdisk_disk=
rqdisk_status=

# At exit: kill a daemon that outlived its test, and take its mount away.
_reap_rqdisk()
{
	local i

	[ -n "$rqdisk_pid" ] || return 0
	_unmount "$rqdisk_mnt"
	for ((i = 0; i < 50; i++)); do
		kill -0 "$rqdisk_pid" 2>/dev/null || break
		[ $i = 10 ] && kill -TERM "$rqdisk_pid" 2>/dev/null
		sleep 0.1
	done
	kill -KILL "$rqdisk_pid" 2>/dev/null || :
	wait "$rqdisk_pid" 2>/dev/null || :
	rqdisk_pid=
	_unmount "$rqdisk_mnt"
	return 0
}
_reap_registered=

# possible_cpus: how many CPUs /sys/devices/system/cpu/possible lists ("0-3,8,10-11": 7).
possible_cpus()
{
	awk -F, '{ n = 0; for (i = 1; i <= NF; i++) { split($i, r, "-"); n += (r[2] == "" ? r[1] : r[2]) - r[1] + 1 }; print n }' \
		/sys/devices/system/cpu/possible
}

# requires_cpus_0_1: skip unless CPUs 0 and 1 are online and may be pinned to.
requires_cpus_0_1()
{
	requires taskset
	[ "$(getconf _NPROCESSORS_ONLN)" -ge 2 ] || skip "two CPUs online are needed"
	taskset -c 0,1 true 2>/dev/null || skip "CPUs 0 and 1 are not both usable"
}

# rqdisk_hwq_sleeps: how often the daemon's hardware queues' threads have
# slept (their voluntary context switches): its threads named rqdisk but
# the loop's (its pid), so not io_uring's workers (iou-wrk-*).
rqdisk_hwq_sleeps()
{
	local t n=0

	for t in /proc/"$rqdisk_pid"/task/*; do
		[ "${t##*/}" = "$rqdisk_pid" ] && continue
		[ "$(cat "$t/comm")" = rqdisk ] || continue
		n=$((n + $(awk '$1 == "voluntary_ctxt_switches:" { print $2 }' "$t/status")))
	done
	echo $n
}

# rqdisk_fail_if_gone WHAT: fail, with its exit status, if the daemon is gone
# before WHAT was mounted
rqdisk_fail_if_gone()
{
	kill -0 "$rqdisk_pid" 2>/dev/null && return 0
	rqdisk_status=0
	wait "$rqdisk_pid" || rqdisk_status=$?
	rqdisk_pid=
	fail "rqdisk exited with status $rqdisk_status before mounting $1"
}

# start_rqdisk [OPTIONS] IMAGE MOUNTPOINT: run the daemon in the foreground,
# in the background of this shell, and return once the disk is mounted.
# Sets rqdisk_pid, rqdisk_mnt and rqdisk_disk (the path of the disk file).
# RQDISK_TEST_OPTS goes before OPTIONS (which win where they disagree).
# Unset, it is --fuse-uring=off: a test means /dev/fuse whatever the
# kernel offers.  RQDISK_TEST_OPTS=--fuse-uring make check runs every such
# daemon with FUSE requests on io_uring, RQDISK_TEST_OPTS= with the default.
start_rqdisk()
{
	local mnt=${!#} i extra=()

	[ -n "$rqdisk_pid" ] && fail "start_rqdisk: a daemon is already running"
	read -r -a extra <<<"${RQDISK_TEST_OPTS:-}"
	requires_fuse_uring_if "${extra[@]}"
	echo "+ rqdisk -f${extra[*]:+ ${extra[*]}} $*"
	"$RQDISK" -f "${extra[@]}" "$@" &
	rqdisk_pid=$!
	rqdisk_mnt=$mnt
	if [ -z "$_reap_registered" ]; then
		cleanup_fn _reap_rqdisk
		_reap_registered=1
	fi
	for ((i = 0; i < 300; i++)); do
		if is_mounted "$mnt"; then
			if [ -d "$mnt" ]; then rqdisk_disk=$mnt/disk; else rqdisk_disk=$mnt; fi
			return 0
		fi
		rqdisk_fail_if_gone "$mnt"
		sleep 0.1
	done
	fail "rqdisk did not mount $mnt within 30 seconds"
}

# wait_rqdisk: wait (up to 60 s) for the daemon to exit; its status is in
# rqdisk_status.  Fails if it does not exit or leaves its mount behind.
wait_rqdisk()
{
	local i

	[ -n "$rqdisk_pid" ] || fail "wait_rqdisk: no daemon running"
	for ((i = 0; i < 600; i++)); do
		kill -0 "$rqdisk_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$rqdisk_pid" 2>/dev/null && fail "rqdisk (pid $rqdisk_pid) did not exit"
	rqdisk_status=0
	wait "$rqdisk_pid" || rqdisk_status=$?
	is_mounted "$rqdisk_mnt" && fail "rqdisk exited but $rqdisk_mnt is still mounted"
	rqdisk_pid=
	return 0
}

# stop_rqdisk: unmount as a user would, and wait for the daemon to exit 0.
stop_rqdisk()
{
	local i

	[ -n "$rqdisk_pid" ] || fail "stop_rqdisk: no daemon running"
	# a just-detached loop device may hold the disk open for a moment
	for ((i = 0; ; i++)); do
		fusermount3 -u "$rqdisk_mnt" && break
		[ $i -lt 50 ] || fail "fusermount3 -u $rqdisk_mnt failed"
		sleep 0.2
	done
	wait_rqdisk
	[ "$rqdisk_status" = 0 ] || fail "rqdisk exited with status $rqdisk_status after unmount"
}

# ---------------------------------------------------------------- loop devices

declare -A _loops=()
_loops_registered=

# At exit: detach the loop devices still attached, if still ours.
_detach_loops()
{
	local dev

	for dev in "${!_loops[@]}"; do
		[[ $(losetup -n -O BACK-FILE "$dev" 2>/dev/null) == "${_loops[$dev]}"* ]] &&
			losetup -d "$dev"
	done
	return 0
}

# loop_attach VAR FILE [LOSETUP-OPTIONS...]: attach FILE to a free loop
# device (detached again at exit); the device in VAR.
loop_attach()
{
	local _var=$1 _file=$2 _dev

	shift 2
	if [ -z "$_loops_registered" ]; then
		cleanup_fn _detach_loops
		_loops_registered=1
	fi
	_dev=$(losetup -f --show "$@" "$_file") || fail "losetup $* $_file failed"
	_loops[$_dev]=$(realpath "$_file")
	echo "+ losetup $* $_file: $_dev"
	printf -v "$_var" '%s' "$_dev"
}

# loop_detach DEV: detach now.
loop_detach()
{
	losetup -d "$1" || fail "losetup -d $1 failed"
	unset "_loops[$1]"
}

# mount_at DEV DIR [MOUNT-OPTIONS...]: mount, unmounted again at exit.
mount_at()
{
	local dev=$1 dir=$2

	shift 2
	mount "$@" "$dev" "$dir" || fail "mount $dev $dir failed"
	cleanup_fn _unmount "$dir"
}

# write_fails FILE VALUE: writing VALUE and a newline to FILE is refused with EINVAL.
write_fails()
{
	python3 - "$1" "$2" <<'PY' || fail "writing '$2' to $1 was not refused with EINVAL"
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
try:
    os.write(fd, sys.argv[2].encode() + b"\n")
except OSError as e:
    sys.exit(0 if e.errno == errno.EINVAL else 1)
sys.exit(1)
PY
}

# no_uring_no_fuse PROGRAM: the program links neither liburing nor libfuse
# (the tools promise "no FUSE, no io_uring"); skipped where ldd is missing.
no_uring_no_fuse()
{
	local libs

	command -v ldd >/dev/null || return 0
	libs=$(ldd "$1") || fail "ldd $1 failed: not a dynamic program?"
	! grep -E "liburing|libfuse" <<<"$libs" || fail "$1 links liburing or libfuse"
}
