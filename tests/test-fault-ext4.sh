#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-fault-ext4.sh - ext4 over a loop device (--direct-io=on) on a disk with the
# fault filter:
#  - mounted errors=remount-ro, a write error rule switched on makes ext4 abort
#    its journal and go read-only (ro, or emergency_ro on newer kernels), within 30 s and with nothing hung; once the
#    rule is off it unmounts and e2fsck runs on it;
#  - flakey's drop_writes while down: metadata changes acknowledged and checkpointed
#    (fsfreeze) but never written, then more changes after the disk is up again,
#    leave an fs e2fsck -fn finds corrupt; the same steps with nothing dropped
#    leave it clean.  (Flakey down with no feature fails every request, as dm-flakey.)
# Every step that could hang has a timeout.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires_loop
requires mkfs.ext4 e2fsck fsfreeze timeout mount umount

make_tmpdir tmp
mkdir "$tmp/mnt" "$tmp/fs"
ctl=$tmp/mnt/fault

# fs_opts MOUNTPOINT: the options /proc/mounts shows for it
fs_opts()
{
	awk -v m="$1" '$2 == m { print $4 }' /proc/mounts
}

# read_only MOUNTPOINT: mounted ro, or (newer kernels) rw with ext4's emergency_ro
read_only()
{
	[[ ,$(fs_opts "$1"), == *,ro,* || ,$(fs_opts "$1"), == *,emergency_ro,* ]]
}

say "errors=remount-ro: a write error makes ext4 read-only"
truncate -s 64M "$tmp/img"
mkfs.ext4 -q -F "$tmp/img" || fail "mkfs.ext4 failed"
start_rqdisk --filter fault "$tmp/img" "$tmp/mnt"
loop_attach dev "$rqdisk_disk" --direct-io=on
mount_at "$dev" "$tmp/fs" -o errors=remount-ro
mkdir "$tmp/fs/d" && echo before >"$tmp/fs/d/f" && timeout 30 sync -f "$tmp/fs" ||
	fail "writing before the fault failed"
[[ ,$(fs_opts "$tmp/fs"), == *,rw,* ]] || fail "not mounted rw: $(fs_opts "$tmp/fs")"
echo error=write/flush >"$ctl/rules" || fail "the error rule was refused"
for i in $(seq 1 20); do echo "$i" >"$tmp/fs/d/g$i" || true; done 2>/dev/null
timeout 60 sync -f "$tmp/fs" 2>/dev/null && say "sync reported no error"
for ((i = 0; i < 300; i++)); do
	read_only "$tmp/fs" && break
	touch "$tmp/fs/d/h$i" 2>/dev/null || true
	timeout 10 sync -f "$tmp/fs" 2>/dev/null || true
	sleep 0.1
done
read_only "$tmp/fs" || fail "ext4 is still rw after write errors: $(fs_opts "$tmp/fs")"
touch "$tmp/fs/d/after" 2>"$tmp/touch.err" && fail "a read-only ext4 took a new file"
grep -q "Read-only file system" "$tmp/touch.err" || fail "a new file: $(cat "$tmp/touch.err")"
errors=$(awk '$1 == "errors" { print $2 }' "$ctl/stats")
[ "$errors" -gt 0 ] || fail "fault/stats counts no error: $(cat "$ctl/stats")"
say "read-only after $errors write errors; the rule off, unmount, e2fsck"
echo error=none >"$ctl/rules" || fail "clearing the rule was refused"
timeout 60 umount "$tmp/fs" || fail "umount failed or hung after the fault was cleared"
status=0
timeout 120 e2fsck -fy "$dev" >"$tmp/fsck.out" 2>&1 || status=$?
[ "$status" -lt 4 ] || fail "e2fsck -fy could not repair the fs (status $status): $(cat "$tmp/fsck.out")"
timeout 120 e2fsck -fn "$dev" >"$tmp/fsck.out" 2>&1 || fail "not clean after repair: $(cat "$tmp/fsck.out")"
loop_detach "$dev"
stop_rqdisk

# drop_run RULES: fresh ext4; RULES set, changes checkpointed; then flakey never down,
# more changes; e2fsck -fn's status.
drop_run()
{
	local status=0

	truncate -s 64M "$tmp/img2"
	mkfs.ext4 -q -F "$tmp/img2" || fail "mkfs.ext4 failed"
	start_rqdisk --filter fault "$tmp/img2" "$tmp/mnt"
	loop_attach dev "$rqdisk_disk" --direct-io=on
	mount "$dev" "$tmp/fs" || fail "mount failed"
	mkdir "$tmp/fs/a" && for i in $(seq 1 50); do echo "$i" >"$tmp/fs/a/f$i"; done
	timeout 30 sync -f "$tmp/fs" || fail "sync failed"
	echo "$1" >"$ctl/rules" || fail "the flakey rule was refused"
	sleep 0.01
	rm -r "$tmp/fs/a" && mkdir "$tmp/fs/b" && for i in $(seq 1 50); do
		mkdir "$tmp/fs/b/d$i" && echo "$i" >"$tmp/fs/b/d$i/f"
	done || fail "changes while down failed"
	timeout 30 fsfreeze -f "$tmp/fs" && fsfreeze -u "$tmp/fs" || fail "fsfreeze failed"
	echo up=0,down=0 >"$ctl/rules" || fail "up again was refused"
	mkdir "$tmp/fs/c" && for i in $(seq 1 50); do echo "$i" >"$tmp/fs/c/f$i"; done
	timeout 60 umount "$tmp/fs" || fail "umount failed or hung"
	dropped=$(awk '$1 == "dropped_writes" { print $2 }' "$ctl/stats")
	loop_detach "$dev"
	stop_rqdisk
	timeout 120 e2fsck -fn "$tmp/img2" >"$tmp/fsck.out" 2>&1 || status=$?
	return $status
}

say "drop_writes=1 but never down: the same steps leave ext4 clean"
drop_run drop_writes=1 || fail "e2fsck found errors with nothing dropped: $(head -20 "$tmp/fsck.out")"
[ "$dropped" = 0 ] || fail "$dropped writes dropped while never down"

say "flakey with drop_writes while down: e2fsck finds the fs corrupt"
status=0
drop_run up=1,down=3600000,drop_writes=1 || status=$?
[ "$dropped" -gt 0 ] || fail "no write was dropped"
say "$dropped writes dropped; e2fsck -fn exit $status"
[ $((status & 4)) = 4 ] || fail "e2fsck -fn found nothing wrong (status $status) after dropped writes"
head -5 "$tmp/fsck.out"
echo PASS
