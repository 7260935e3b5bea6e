#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-disks.sh - one daemon serves several images (--disk): each is MOUNTPOINT/diskN
# with today's whole layout (disk, queue/, stat, ...) and its own queue: switching one
# disk's elevator leaves the other's; each disk's writes reach its own image.  They
# stop together: the unmount of one disk, or SIGTERM, ends the daemon with status 0,
# every mount and every diskN directory gone.  A disk that cannot start undoes them
# all: status 1, no mount, no directory, no image made by --create.  Refused with one
# line: a regular file as MOUNTPOINT, one image twice, a log or trace NAME with no %d.
source "$(dirname "$0")/functions.sh"
source "$(dirname "$0")/disks-functions.sh"
requires_root
requires_fuse
requires dd cmp head

make_tmpdir tmp
mkdir "$tmp/mnt"
truncate -s 64M "$tmp/a"
truncate -s 32M "$tmp/b"
head -c 1M /dev/urandom >"$tmp/pat"
MiB=1048576

say "two disks: disk0 is IMAGE, disk1 the --disk one, each with its own tree"
start_disks 2 --disk "$tmp/b" "$tmp/a" "$tmp/mnt"
[ "$(stat -c %s "$tmp/mnt/disk0/disk")" = $((64 * MiB)) ] || fail "disk0/disk is not a's size"
[ "$(stat -c %s "$tmp/mnt/disk1/disk")" = $((32 * MiB)) ] || fail "disk1/disk is not b's size"
for n in 0 1; do
	for f in queue/scheduler queue/max_sectors_kb stat size device/stack; do
		[ -e "$tmp/mnt/disk$n/$f" ] || fail "no disk$n/$f"
	done
done
grep -q "\[deadline\]" "$tmp/mnt/disk1/queue/scheduler" || fail "disk1's elevator is not deadline"

say "each disk its own elevator"
echo none >"$tmp/mnt/disk1/queue/scheduler"
grep -q "^\[none\]" "$tmp/mnt/disk1/queue/scheduler" || fail "disk1 did not switch"
grep -q "\[deadline\]" "$tmp/mnt/disk0/queue/scheduler" || fail "disk0 switched with disk1"

say "each disk's writes reach its own image"
dd if="$tmp/pat" of="$tmp/mnt/disk1/disk" bs=64k seek=16 oflag=direct conv=notrunc,fsync status=none
cmp -s -n $MiB "$tmp/pat" "$tmp/b" 0 $MiB || fail "disk1's write is not on b"
cmp -s -n $MiB /dev/zero "$tmp/a" 0 $MiB || fail "disk1's write reached a"
grep -q "^ *[1-9]" <(awk '{ print $5 }' "$tmp/mnt/disk1/stat") || fail "disk1/stat counts no write"
[ "$(awk '{ print $5 }' "$tmp/mnt/disk0/stat")" = 0 ] || fail "disk0/stat counts disk1's writes"

say "unmounting one disk stops the daemon: status 0, nothing left under MOUNTPOINT"
fusermount3 -u "$tmp/mnt/disk1"
wait_disks_gone "$tmp/mnt"
[ "$rqdisk_status" = 0 ] || fail "rqdisk exited with status $rqdisk_status"

say "SIGTERM stops every disk"
truncate -s 16M "$tmp/c"
start_disks 3 --disk "$tmp/b" --disk "$tmp/c" "$tmp/a" "$tmp/mnt"
[ "$(stat -c %s "$tmp/mnt/disk2/disk")" = $((16 * MiB)) ] || fail "disk2/disk is not c's size"
kill -TERM "$rqdisk_pid"
wait_disks_gone "$tmp/mnt"
[ "$rqdisk_status" = 0 ] || fail "rqdisk exited with status $rqdisk_status after SIGTERM"

say "a disk that cannot start undoes them all, the image --create made too"
"$RQDISK" -f --create 32M --disk "$tmp/a" "$tmp/new" "$tmp/mnt" 2>"$tmp/err" &&
	fail "rqdisk started with disk1 the wrong size for --create"
grep -q "image $tmp/a exists with" "$tmp/err" || fail "the failure is not said: $(cat "$tmp/err")"
no_mount_under "$tmp/mnt" || fail "a mount is left under $tmp/mnt"
[ -z "$(ls -A "$tmp/mnt")" ] || fail "left in $tmp/mnt: $(ls -A "$tmp/mnt")"
[ ! -e "$tmp/new" ] || fail "the image --create made for disk0 is left behind"
"$RQDISK" -f --disk "$tmp/missing" "$tmp/a" "$tmp/mnt" 2>"$tmp/err" &&
	fail "rqdisk started with disk1 missing"
grep -q "image $tmp/missing: No such file" "$tmp/err" || fail "not said: $(cat "$tmp/err")"
no_mount_under "$tmp/mnt" || fail "a mount is left under $tmp/mnt"
[ -z "$(ls -A "$tmp/mnt")" ] || fail "left in $tmp/mnt: $(ls -A "$tmp/mnt")"

say "daemonized (no -f): returns once every disk is mounted"
"$RQDISK" --fuse-uring=off --disk "$tmp/b" "$tmp/a" "$tmp/mnt" || fail "rqdisk failed to start"
is_mounted "$tmp/mnt/disk0" && is_mounted "$tmp/mnt/disk1" || fail "not every disk is mounted"
fusermount3 -u "$tmp/mnt/disk0"
for ((i = 0; i < 100; i++)); do
	no_mount_under "$tmp/mnt" && [ -z "$(ls -A "$tmp/mnt")" ] && break
	sleep 0.1
done
no_mount_under "$tmp/mnt" || fail "disk1 stayed mounted after disk0's unmount"
[ -z "$(ls -A "$tmp/mnt")" ] || fail "left in $tmp/mnt: $(ls -A "$tmp/mnt")"

say "refused with one line"
# refused MESSAGE STATUS ARGS...: rqdisk ARGS exits with STATUS and says MESSAGE on one line.
refused()
{
	local msg=$1 want=$2 status=0

	shift 2
	"$RQDISK" -f "$@" 2>"$tmp/err" || status=$?
	[ "$status" = "$want" ] || fail "rqdisk $*: status $status, not $want"
	[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q -- "$msg" "$tmp/err" ||
		fail "rqdisk $*: said $(cat "$tmp/err")"
	no_mount_under "$tmp/mnt" && [ -z "$(ls -A "$tmp/mnt")" ] || fail "rqdisk $*: left something"
}
touch "$tmp/file"
refused "with --disk it must be a directory" 1 --disk "$tmp/b" "$tmp/a" "$tmp/file"
refused "disk0 and disk1 are one image" 1 --disk "$tmp/a" "$tmp/a" "$tmp/mnt"
refused "the log's file needs %d" 2 --filter "log-writes:file=$tmp/log" --disk "$tmp/b" "$tmp/a" "$tmp/mnt"
refused "the NAME needs %d" 2 --trace "$tmp/t" --disk "$tmp/b" "$tmp/a" "$tmp/mnt"
refused "--disk: the IMAGE is empty" 2 --disk "" "$tmp/a" "$tmp/mnt"
[ ! -e "$tmp/log" ] || fail "a log was made for a refused command line"
exit 0
