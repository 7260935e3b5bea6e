#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-log-writes.sh - the log-writes filter on a mounted disk: writes with
# O_DIRECT, an fsync, a mark through log/mark, more writes; after the daemon
# stops, tests/log-writes-dump (a reader written from the format alone)
# finds the entries and flags dm-log-writes would log, the mark, the end
# mark last; replaying the whole log onto the base copy gives the final
# image, replaying up to the mark the image as it was then.  mkfs.ext4 on
# a loop device over the disk: the replayed log is a file system e2fsck
# finds clean, and rqdisk-crash's end state is the image, as it is after a
# FUA write over a write no flush covered yet.  Bad arguments: one line, no
# log file made; nor is one kept when the start fails later; a file= or
# base= that is there, or a symlink, is refused and left as it was, and so
# is write-cache below log-writes.  enable=0 leaves a gap from the start,
# and rqdisk-crash exits 3.  A log whose file system fills, or whose
# daemon is killed, ends without its end mark: log/stats says it stopped,
# the daemon exits 1, and rqdisk-crash checks its states but exits 3.
# 256 MiB written with no flush do not stay in the daemon's memory.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires dd cmp python3

dump=$top_builddir/tests/log-writes-dump
[ -x "$dump" ] || fail "$dump is not built"
crash=$top_builddir/src/crash/rqdisk-crash

make_tmpdir tmp
mkdir "$tmp/mnt"
truncate -s 64M "$tmp/img"
random_file "$tmp/head" $((1024 * 1024))
write_at "$tmp/head" "$tmp/img" 0 # a base image that is not all zeros
cp "$tmp/img" "$tmp/img.before"

say "bad arguments: one line naming the problem, status 2, no log file"
# refused STATUS PATTERN FILTER: rqdisk --filter FILTER is refused so
refused()
{
	local status=0

	timeout 15 "$RQDISK" -f --filter "$3" "$tmp/img" "$tmp/mnt" 2>"$tmp/err" || status=$?
	echo "--filter $3: status $status: $(cat "$tmp/err")"
	[ "$status" = "$1" ] || fail "--filter $3: status $status, not $1"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "--filter $3: not one line: $(cat "$tmp/err")"
	grep -Eq "$2" "$tmp/err" || fail "--filter $3: '$(cat "$tmp/err")' lacks '$2'"
	is_mounted "$tmp/mnt" && fail "--filter $3 mounted the disk"
	[ ! -e "$tmp/bad.log" ] || fail "--filter $3 left $tmp/bad.log behind"
	[ ! -e "$tmp/bad.base" ] || fail "--filter $3 left $tmp/bad.base behind"
}
refused 2 "log-writes: give file=LOG" log-writes
refused 2 "log-writes: no key 'fil'" "log-writes:fil=$tmp/bad.log"
refused 2 "log-writes: enable must be 0 or 1, not 'yes'" "log-writes:file=$tmp/bad.log,enable=yes"
refused 2 "log-writes: file= and base= are the same file" \
	"log-writes:file=$tmp/bad.log,base=$tmp/bad.log"
refused 1 "log-writes: base=$tmp/no/such/dir/base: No such file or directory" \
	"log-writes:file=$tmp/bad.log,base=$tmp/no/such/dir/base"
refused 1 "log-writes: file=$tmp/img is the image itself" "log-writes:file=$tmp/img"
# write-cache below log-writes: a power cut drops writes the log keeps
status=0
timeout 15 "$RQDISK" -f --filter "log-writes:file=$tmp/bad.log" --filter write-cache "$tmp/img" \
	"$tmp/mnt" 2>"$tmp/err" || status=$?
[ "$status" = 1 ] || fail "write-cache below log-writes: status $status, not 1"
[ "$(wc -l <"$tmp/err")" = 1 ] && grep -qF "log-writes: a power cut below it loses writes" "$tmp/err" ||
	fail "write-cache below log-writes: '$(cat "$tmp/err")'"
[ ! -e "$tmp/bad.log" ] || fail "write-cache below log-writes left $tmp/bad.log behind"
# a start that fails after the stack opened (the trace cannot be made) takes back the files
status=0
timeout 15 "$RQDISK" -f --trace "$tmp/no/such/dir/t" \
	--filter "log-writes:file=$tmp/bad.log,base=$tmp/bad.base" "$tmp/img" "$tmp/mnt" \
	2>"$tmp/err" || status=$?
[ "$status" = 1 ] || fail "a start failing at the trace: status $status, not 1"
[ ! -e "$tmp/bad.log" ] || fail "a failed start left $tmp/bad.log behind"
[ ! -e "$tmp/bad.base" ] || fail "a failed start left $tmp/bad.base behind"
cmp -s "$tmp/img" "$tmp/img.before" || fail "a refused filter changed the image"

say "rqdisk-replay refuses it: its backend has no data"
printf 'fio version 3 iolog\n0 /dev/x add\n0 /dev/x open\n1 /dev/x write 0 4096\n2 /dev/x close\n' \
	>"$tmp/job.iolog"
status=0
"$top_builddir/src/tools/rqdisk-replay" --filter "log-writes:file=$tmp/bad.log" "$tmp/job.iolog" \
	>"$tmp/out" 2>"$tmp/err" || status=$?
[ "$status" = 2 ] || fail "rqdisk-replay --filter log-writes: status $status"
[ "$(cat "$tmp/err")" = "rqdisk-replay: --filter: log-writes: the device below has no data to log" ] ||
	fail "rqdisk-replay --filter log-writes said '$(cat "$tmp/err")'"
[ ! -s "$tmp/out" ] && [ ! -e "$tmp/bad.log" ] || fail "rqdisk-replay wrote a table or a log"

say "writes, an fsync, a mark, more writes"
start_rqdisk --trace "$tmp/trace" --filter "log-writes:file=$tmp/log,base=$tmp/base" "$tmp/img" \
	"$tmp/mnt"
stack=$(cat "$tmp/mnt/device/stack")
[[ $stack == "log-writes:file=$tmp/log base=$tmp/base enable=1 -> file:"* ]] ||
	fail "device/stack is '$stack'"
cmp "$tmp/base" "$tmp/img.before" || fail "base= is not the image as it was"
[ "$(stat -c %a "$tmp/log")" = 600 ] || fail "the log has mode $(stat -c %a "$tmp/log")"
random_file "$tmp/a" $((64 * 1024))
random_file "$tmp/b" $((128 * 1024))
random_file "$tmp/c" 4096
dd if="$tmp/a" of="$rqdisk_disk" bs=64k seek=16 oflag=direct conv=notrunc,fsync status=none ||
	fail "dd of a failed"
echo first >"$tmp/mnt/log/mark" || fail "writing log/mark failed"
[ "$(cat "$tmp/mnt/log/mark")" = first ] || fail "log/mark shows '$(cat "$tmp/mnt/log/mark")'"
cp "$rqdisk_disk" "$tmp/at-mark"
dd if="$tmp/b" of="$rqdisk_disk" bs=128k seek=32 oflag=direct conv=notrunc status=none ||
	fail "dd of b failed"
dd if="$tmp/c" of="$rqdisk_disk" bs=4k seek=7 oflag=direct conv=notrunc status=none ||
	fail "dd of c failed"
# one write each, as a program makes it: a newline or a NUL inside, or nothing but a newline
python3 - "$tmp/mnt/log/mark" <<'PY' || fail "log/mark took a bad name"
import errno, os, sys
for bad in (b"two\nlines\n", b"nul\0inside\n", b"\n"):
    fd = os.open(sys.argv[1], os.O_WRONLY)
    try:
        os.write(fd, bad)
        sys.exit("took %r" % bad)
    except OSError as e:
        if e.errno != errno.EINVAL:
            raise
    finally:
        os.close(fd)
PY
grep -qx "marks 1" "$tmp/mnt/log/stats" || fail "log/stats: $(cat "$tmp/mnt/log/stats")"
grep -qx "error none" "$tmp/mnt/device/log-writes/stats" || fail "log/stats has an error"
entries=$(cat "$tmp/mnt/log/entries")
[ "$entries" -ge 3 ] || fail "log/entries is $entries after a write, a flush and a mark"
cp "$rqdisk_disk" "$tmp/final"
stop_rqdisk
cmp -s "$tmp/final" "$tmp/img" || fail "the image is not what the disk showed"
if command -v blkparse >/dev/null; then
	blkparse -i "$tmp/trace" >"$tmp/parsed" || fail "blkparse failed"
	grep -q " m   N log-writes: mark first$" "$tmp/parsed" || fail "the trace has no note of the mark"
fi

say "the log, as a reader of the format finds it"
"$dump" "$tmp/log" >"$tmp/dump" || fail "log-writes-dump refused the log"
cat "$tmp/dump"
# a's 64 KiB (in requests of at most max_sectors_kb), its flush, the mark, then b and c unflushed
awk 'NR > 1 { print $2 }' "$tmp/dump" | uniq >"$tmp/kinds"
[ "$(tr '\n' ' ' <"$tmp/kinds")" = "WRITE FLUSH MARK WRITE MARK " ] ||
	fail "entries are $(tr '\n' ' ' <"$tmp/kinds")"
awk 'NR > 1 && $2 == "FLUSH" { exit } NR > 1 && $2 == "WRITE" { n += $4 } END { exit n != 128 }' \
	"$tmp/dump" ||
	fail "a's writes do not cover 128 sectors before the flush"
grep -q "^[0-9]* MARK 0 0 first$" "$tmp/dump" || fail "no mark 'first'"
[ "$(tail -n 1 "$tmp/dump" | cut -d' ' -f2-)" = "MARK 0 0 dm-log-writes-end" ] ||
	fail "the last entry is not the end mark"
[ "$(grep -c MARK "$tmp/dump")" = 2 ] || fail "marks other than first and the end mark"

say "replayed onto the base: the whole log gives the final image, up to the mark the image then"
cp "$tmp/base" "$tmp/replay"
"$dump" replay "$tmp/log" "$tmp/replay" || fail "replaying the log failed"
cmp "$tmp/replay" "$tmp/final" || fail "the replayed log is not the final image"
cp "$tmp/base" "$tmp/replay"
"$dump" replay "$tmp/log" "$tmp/replay" @first || fail "replaying up to the mark failed"
cmp "$tmp/replay" "$tmp/at-mark" || fail "the log replayed to the mark is not the image then"
cmp -s "$tmp/replay" "$tmp/final" && fail "the log replayed to the mark is the final image"

say "4 KiB logical blocks: the log counts them, as the kernel counts the device's"
cp "$tmp/img.before" "$tmp/img4k"
start_rqdisk --logical-block-size 4096 --filter "log-writes:file=$tmp/log4k,base=$tmp/base4k" \
	"$tmp/img4k" "$tmp/mnt"
dd if="$tmp/b" of="$rqdisk_disk" bs=128k seek=5 oflag=direct conv=notrunc,fsync status=none ||
	fail "dd of b failed"
stop_rqdisk
"$dump" "$tmp/log4k" >"$tmp/dump4k" || fail "log-writes-dump refused the 4 KiB log"
head -n 1 "$tmp/dump4k" | grep -q "^sectorsize 4096 " || fail "the 4 KiB log: $(head -n 1 "$tmp/dump4k")"
awk 'NR > 1 && $2 == "WRITE" { if (!first) first = $3; n += $4 }
	END { exit !(first == 160 && n == 32) }' "$tmp/dump4k" ||
	fail "b is not 32 blocks of 4 KiB from block 160: $(cat "$tmp/dump4k")"
cp "$tmp/base4k" "$tmp/replay4k"
"$dump" replay "$tmp/log4k" "$tmp/replay4k" || fail "replaying the 4 KiB log failed"
cmp "$tmp/replay4k" "$tmp/img4k" || fail "the replayed 4 KiB log is not the image"

say "a daemon killed: its log is read up to the last super block, the mark in it"
cp "$tmp/img.before" "$tmp/img2"
start_rqdisk --filter "log-writes:file=$tmp/log2,base=$tmp/base2" "$tmp/img2" "$tmp/mnt"
dd if="$tmp/a" of="$rqdisk_disk" bs=64k seek=3 oflag=direct conv=notrunc,fsync status=none ||
	fail "dd of a failed"
echo before-kill >"$tmp/mnt/log/mark" || fail "writing log/mark failed"
cp "$rqdisk_disk" "$tmp/at-kill-mark"
for ((i = 0; i < 50; i++)); do # the log's own thread writes it: 5 s at most
	"$dump" "$tmp/log2" 2>/dev/null | grep -q " MARK 0 0 before-kill$" && break
	sleep 0.1
done
kill -KILL "$rqdisk_pid"
_reap_rqdisk
"$dump" "$tmp/log2" >"$tmp/dump2" || fail "log-writes-dump refused the log of a killed daemon"
grep -q " MARK 0 0 before-kill$" "$tmp/dump2" || fail "the killed daemon's log lacks its mark"
grep -q "dm-log-writes-end" "$tmp/dump2" && fail "a killed daemon's log has the end mark"
cp "$tmp/base2" "$tmp/replay2"
"$dump" replay "$tmp/log2" "$tmp/replay2" @before-kill || fail "replaying the killed log failed"
cmp "$tmp/replay2" "$tmp/at-kill-mark" || fail "the killed log replayed to its mark is not the image"
# rqdisk-crash checks its states but does not call the run clean: what came after is not there
status=0
TMPDIR=$tmp "$crash" --via copy "$tmp/base2" "$tmp/log2" -- true >"$tmp/crash2.out" \
	2>"$tmp/crash2.err" || status=$?
cat "$tmp/crash2.out" "$tmp/crash2.err"
[ "$status" = 3 ] || fail "rqdisk-crash on a killed daemon's log: status $status, not 3"
grep -qF "without its end mark (its writer was killed, or stopped logging)" "$tmp/crash2.err" ||
	fail "rqdisk-crash does not say the killed daemon's log lacks its end mark"

say "enable=0 from the start: a write flushed then is a gap, rqdisk-crash exits 3"
truncate -s 16M "$tmp/off.img"
start_rqdisk --filter "log-writes:file=$tmp/off.log,base=$tmp/off.base,enable=0" "$tmp/off.img" \
	"$tmp/mnt"
dd if="$tmp/a" of="$rqdisk_disk" bs=64k oflag=direct conv=notrunc,fsync status=none ||
	fail "dd of a failed"
echo 1 >"$tmp/mnt/log/enable" || fail "writing log/enable failed"
dd if="$tmp/c" of="$rqdisk_disk" bs=4k seek=100 oflag=direct conv=notrunc,fsync status=none ||
	fail "dd of c failed"
stop_rqdisk
"$dump" "$tmp/off.log" >"$tmp/off.dump" || fail "log-writes-dump refused the log"
[ "$(sed -n 2p "$tmp/off.dump" | cut -d' ' -f2-)" = "MARK 0 0 rqdisk-log-disabled" ] ||
	fail "the log of enable=0 does not begin with rqdisk-log-disabled: $(cat "$tmp/off.dump")"
status=0
TMPDIR=$tmp "$crash" --via copy "$tmp/off.base" "$tmp/off.log" -- true >"$tmp/off.out" \
	2>"$tmp/off.err" || status=$?
cat "$tmp/off.out" "$tmp/off.err"
[ "$status" = 3 ] || fail "rqdisk-crash on a log of enable=0: status $status, not 3"
grep -qF "logging was off from entry 0 to 1" "$tmp/off.err" || fail "rqdisk-crash does not say the gap"

say "a fault filter below that drops writes: the log marks it before the write, rqdisk-crash exits 3"
truncate -s 16M "$tmp/drop.img"
start_rqdisk --filter "log-writes:file=$tmp/drop.log,base=$tmp/drop.base" \
	--filter fault:up=1,down=600000,drop_writes=1 "$tmp/drop.img" "$tmp/mnt"
sleep 0.2 # past up=1 (ms): every write from now on is dropped
dd if="$tmp/c" of="$rqdisk_disk" bs=4k seek=100 oflag=direct conv=notrunc,fsync status=none ||
	fail "dd of c failed"
grep -qx "dropped_writes 1" "$tmp/mnt/device/fault/stats" ||
	fail "fault did not drop the write: $(cat "$tmp/mnt/device/fault/stats")"
stop_rqdisk
"$dump" "$tmp/drop.log" >"$tmp/drop.dump" || fail "log-writes-dump refused the log"
cat "$tmp/drop.dump"
[ "$(awk 'NR > 1 { print $2 }' "$tmp/drop.dump" | tr '\n' ' ')" = "MARK WRITE FLUSH MARK " ] ||
	fail "the dropped write is not marked before it: $(cat "$tmp/drop.dump")"
status=0
TMPDIR=$tmp "$crash" --via copy "$tmp/drop.base" "$tmp/drop.log" -- true >"$tmp/drop.out" \
	2>"$tmp/drop.err" || status=$?
cat "$tmp/drop.out" "$tmp/drop.err"
[ "$status" = 3 ] || fail "rqdisk-crash on a log over dropped writes: status $status, not 3"

say "the same fault filter above log-writes: what it drops never reaches the log, which stays whole"
rm -f "$tmp/drop.log" "$tmp/drop.base"
start_rqdisk --filter fault:up=1,down=600000,drop_writes=1 \
	--filter "log-writes:file=$tmp/drop.log,base=$tmp/drop.base" "$tmp/drop.img" "$tmp/mnt"
sleep 0.2
dd if="$tmp/c" of="$rqdisk_disk" bs=4k seek=100 oflag=direct conv=notrunc,fsync status=none ||
	fail "dd of c failed"
stop_rqdisk
"$dump" "$tmp/drop.log" >"$tmp/drop.dump" || fail "log-writes-dump refused the log"
grep -q "rqdisk-flush-failed" "$tmp/drop.dump" &&
	fail "a write dropped above log-writes marked its log: $(cat "$tmp/drop.dump")"
status=0
TMPDIR=$tmp "$crash" --via copy "$tmp/drop.base" "$tmp/drop.log" -- true >"$tmp/drop.out" \
	2>"$tmp/drop.err" || status=$?
[ "$status" = 0 ] || fail "rqdisk-crash on a whole log under a fault filter: status $status"

say "the log's file system fills: log/stats says so, the daemon exits 1, rqdisk-crash exits 3"
mkdir "$tmp/small"
mount -t tmpfs -o size=1m rqdisk-test "$tmp/small" || fail "mounting a tmpfs failed"
cleanup_fn umount -l "$tmp/small"
truncate -s 16M "$tmp/full.img"
start_rqdisk --filter "log-writes:file=$tmp/small/log,base=$tmp/full.base" "$tmp/full.img" \
	"$tmp/mnt" 2>"$tmp/full.rqerr"
dd if="$tmp/a" of="$rqdisk_disk" bs=64k oflag=direct conv=notrunc,fsync status=none ||
	fail "dd of a failed"
dd if=/dev/zero of="$rqdisk_disk" bs=1M count=2 seek=1 oflag=direct conv=notrunc status=none ||
	fail "the disk failed writes when its log filled: it goes on"
for ((i = 0; i < 50; i++)); do # the log's own thread writes it: 5 s at most
	grep -qx "stopped 1" "$tmp/mnt/log/stats" && break
	sleep 0.1
done
cat "$tmp/mnt/log/stats"
grep -qx "stopped 1" "$tmp/mnt/log/stats" || fail "log/stats does not say the log stopped"
grep -qx "error No space left on device" "$tmp/mnt/log/stats" || fail "log/stats does not say why"
echo late >"$tmp/mnt/log/mark" 2>/dev/null && fail "a mark was taken by a stopped log"
fusermount3 -u "$rqdisk_mnt" || fail "unmounting failed"
wait_rqdisk
cat "$tmp/full.rqerr"
[ "$rqdisk_status" = 1 ] || fail "the daemon whose log stopped exited with status $rqdisk_status, not 1"
grep -q "log-writes: writing $tmp/small/log: No space left on device; logging stops" \
	"$tmp/full.rqerr" || fail "the daemon did not say the log stopped"
status=0
TMPDIR=$tmp "$crash" --via copy "$tmp/full.base" "$tmp/small/log" -- true >"$tmp/full.out" \
	2>"$tmp/full.err" || status=$?
cat "$tmp/full.out" "$tmp/full.err"
[ "$status" = 3 ] || fail "rqdisk-crash on a log that stopped: status $status, not 3"
grep -qF ": No space left on device; writes after it are not in the log, nor checked" \
	"$tmp/full.err" || fail "rqdisk-crash does not say the log stopped"
grep -q "^not checked: writes after the log's last entry (logging stopped after entry" \
	"$tmp/full.out" || fail "rqdisk-crash's summary does not say what was not checked"
umount "$tmp/small" || fail "unmounting the tmpfs failed"

say "mkfs.ext4 through a loop device: the replayed log is a clean file system"
requires_loop
requires mkfs.ext4 e2fsck
truncate -s 128M "$tmp/fs.img"
start_rqdisk --filter "log-writes:file=$tmp/fs.log,base=$tmp/fs.base" "$tmp/fs.img" "$tmp/mnt"
loop_attach dev "$rqdisk_disk"
mkfs.ext4 -q -F "$dev" || fail "mkfs.ext4 failed"
sync
loop_detach "$dev"
stop_rqdisk
"$dump" "$tmp/fs.log" | awk 'NR > 1 { print $2 }' | sort | uniq -c
cp "$tmp/fs.base" "$tmp/fs.replay"
"$dump" replay "$tmp/fs.log" "$tmp/fs.replay" || fail "replaying the mkfs log failed"
e2fsck -fn "$tmp/fs.replay" || fail "e2fsck finds the replayed file system broken"
cmp "$tmp/fs.replay" "$tmp/fs.img" || fail "the replayed mkfs log is not the image"

say "a FUA write over a write no flush covered yet: the log's end state is the image"
truncate -s 16M "$tmp/fua.img"
start_rqdisk --filter "log-writes:file=$tmp/fua.log,base=$tmp/fua.base" "$tmp/fua.img" "$tmp/mnt"
head -c 4096 /dev/zero | tr '\0' A >"$tmp/A"
head -c 4096 /dev/zero | tr '\0' B >"$tmp/B"
dd if="$tmp/A" of="$rqdisk_disk" bs=4k oflag=direct conv=notrunc status=none || fail "dd of A failed"
dd if="$tmp/B" of="$rqdisk_disk" bs=4k oflag=direct,dsync conv=notrunc status=none ||
	fail "dd of B (O_DSYNC) failed"
sync "$rqdisk_disk"
stop_rqdisk
cmp -n 4096 "$tmp/fua.img" "$tmp/B" || fail "the image does not hold B"
grep -q FUA <<<"$("$dump" "$tmp/fua.log")" ||
	fail "no FUA entry in the log: $("$dump" "$tmp/fua.log")"
"$crash" --state end -o "$tmp/fua.end" "$tmp/fua.base" "$tmp/fua.log" ||
	fail "rqdisk-crash --state end failed"
cmp "$tmp/fua.end" "$tmp/fua.img" || fail "the log's end state is not the image"
cp "$tmp/fua.base" "$tmp/fua.replay"
"$dump" replay "$tmp/fua.log" "$tmp/fua.replay" || fail "replaying the FUA log failed"
cmp "$tmp/fua.replay" "$tmp/fua.img" || fail "the replayed FUA log is not the image"
"$crash" --state end -o "$tmp/fs.end" "$tmp/fs.base" "$tmp/fs.log" ||
	fail "rqdisk-crash --state end of the mkfs log failed"
cmp "$tmp/fs.end" "$tmp/fs.img" || fail "the mkfs log's end state is not the image"

say "file= and base= are made new: a file that is there, or a symlink, is refused and untouched"
printf theirs >"$tmp/theirs"
# refused_over PATTERN FILTER: refused in one line, status 1, nothing mounted, theirs untouched
refused_over()
{
	local status=0

	timeout 15 "$RQDISK" -f --filter "$2" "$tmp/img" "$tmp/mnt" 2>"$tmp/err" || status=$?
	echo "--filter $2: status $status: $(cat "$tmp/err")"
	[ "$status" = 1 ] || fail "--filter $2: status $status, not 1"
	[ "$(wc -l <"$tmp/err")" = 1 ] && grep -qF "$1" "$tmp/err" ||
		fail "--filter $2: '$(cat "$tmp/err")' lacks '$1'"
	is_mounted "$tmp/mnt" && fail "--filter $2 mounted the disk"
	[ "$(cat "$tmp/theirs")" = theirs ] || fail "--filter $2 wrote over the file it was pointed at"
}
ln -s "$tmp/theirs" "$tmp/link.log"
refused_over "log-writes: file=$tmp/link.log is a symbolic link: name a new file" \
	"log-writes:file=$tmp/link.log"
refused_over "log-writes: base=$tmp/link.log is a symbolic link: name a new file" \
	"log-writes:file=$tmp/new.log,base=$tmp/link.log"
[ ! -e "$tmp/new.log" ] || fail "a refused base= left file= behind"
refused_over "log-writes: file=$tmp/theirs exists: name a new file, or a device" \
	"log-writes:file=$tmp/theirs"

say "256 MiB written with no flush: the daemon's memory grows by less than 160 MiB"
# Each write is logged as it completes; at most 64 MiB wait for the log's
# writer.  The filter held every write until a flush: this grew by 256 MiB.
truncate -s 300M "$tmp/big.img"
start_rqdisk --filter "log-writes:file=$tmp/big.log" "$tmp/big.img" "$tmp/mnt"
rss_kib() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$rqdisk_pid/status"; }
before=$(rss_kib)
dd if=/dev/zero of="$rqdisk_disk" bs=1M count=256 oflag=direct conv=notrunc status=none ||
	fail "dd of 256 MiB failed"
after=$(rss_kib)
echo "VmRSS $before kB before, $after kB after"
[ $((after - before)) -lt $((160 * 1024)) ] ||
	fail "VmRSS grew by $(((after - before) / 1024)) MiB for 256 MiB of writes no flush covered"
stop_rqdisk
rm -f "$tmp/big.img" "$tmp/big.log"
