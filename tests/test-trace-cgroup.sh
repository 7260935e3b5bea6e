#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-trace-cgroup.sh - with trace/cgroup 1 (Linux's blk_cgroup trace
# option) rqdisk's trace records each I/O's cgroup as Linux's blktrace does
# (4.14 on): a process's writes from a cgroup (v2) are marked __BLK_TA_CGROUP
# with the cgroup's id (its directory's inode) ahead of the pdu, and I/O
# from elsewhere does not carry that id; by default (0) no record is marked
# and blkparse reads the trace whole.  Skips where no cgroup v2 hierarchy is
# mounted or it cannot be written.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires dd blkparse python3

cg_root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$cg_root" ] || skip "no cgroup v2 hierarchy is mounted"
make_tmpdir tmp
mkdir "$tmp/mnt"
cg=/rqdisk-trace-$$
remove_cgroup()
{
	rmdir "$cg_root$cg" 2>/dev/null
}
mkdir "$cg_root$cg" 2>/dev/null || skip "cannot make a cgroup under $cg_root"
cleanup_fn remove_cgroup
id=$(stat -c %i "$cg_root$cg") || fail "no inode for $cg_root$cg"

# traced_io NAME [CGROUP-OPTION]: two writes from $cg, a read from outside
# it, traced to NAME with trace/cgroup set to CGROUP-OPTION (unset: the default).
traced_io()
{
	start_rqdisk --create 16M --trace "$1" "$tmp/img" "$tmp/mnt"
	if [ -n "${2-}" ]; then
		echo 2 >"$tmp/mnt/trace/cgroup" 2>/dev/null && fail "trace/cgroup took 2"
		echo "$2" >"$tmp/mnt/trace/cgroup" || fail "trace/cgroup refused $2"
	fi
	[ "$(cat "$tmp/mnt/trace/cgroup")" = "${2:-0}" ] ||
		fail "trace/cgroup reads $(cat "$tmp/mnt/trace/cgroup"), not ${2:-0}"
	(
		echo $BASHPID >"$cg_root$cg/cgroup.procs" || exit 1
		grep -qx "0::$cg" /proc/$BASHPID/cgroup || exit 1
		dd if=/dev/zero of="$rqdisk_disk" bs=64k count=2 oflag=direct conv=notrunc status=none
	) || fail "the writer could not join $cg or write"
	dd if="$rqdisk_disk" of=/dev/null bs=4k count=1 skip=1000 iflag=direct status=none ||
		fail "the read failed"
	stop_rqdisk
	rm -f "$tmp/img"
}

# queued FILE: each Q record as "sector+sectors cgroup-id" (0 where it is not marked).
queued()
{
	python3 - "$1" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
off = 0
while off < len(data):
    magic, seq, time, sector, nbytes, action, pid, dev, cpu, err, pdu_len = \
        struct.unpack_from("=IIQQIIIIIHH", data, off)
    pdu = data[off + 48:off + 48 + pdu_len]
    off += 48 + pdu_len
    if action & 0xff == 1 and not action & (1 << 31):  # __BLK_TA_QUEUE, not a note
        cg = struct.unpack_from("=Q", pdu)[0] if action & (1 << 8) else 0
        print("%d+%d %d" % (sector, nbytes // 512, cg))
PY
}

say "trace/cgroup 1: two writes from $cg (id $id), a read from outside it"
traced_io "$tmp/cg" 1
q=$(queued "$tmp/cg.blktrace.0") || fail "the trace could not be read"
echo "$q"
[ "$(grep -c " $id\$" <<<"$q")" = 2 ] || fail "not two Q records with $cg's id $id: $q"
grep -qx "0+128 $id" <<<"$q" || fail "the first write does not carry id $id: $q"
grep -qx "128+128 $id" <<<"$q" || fail "the second write does not carry id $id: $q"
grep -q "^8000+8 $id\$" <<<"$q" && fail "the read from outside $cg carries its id: $q"
[ "$(wc -l <<<"$q")" = 3 ] || fail "not three Q records: $q"

say "by default no record is marked, and blkparse reads the trace whole"
traced_io "$tmp/plain"
q=$(queued "$tmp/plain.blktrace.0") || fail "the trace could not be read"
[ "$(awk '$2 != 0' <<<"$q")" = "" ] || fail "records marked with a cgroup by default: $q"
out=$(blkparse -i "$tmp/plain") || fail "blkparse -i failed"
head -20 <<<"$out"
for a in Q G I D C; do
	n=$(awk -v a=$a '$1 == "240,0" && $6 == a' <<<"$out" | wc -l)
	[ "$n" = 3 ] || fail "blkparse shows $n $a records, not 3"
done
grep -q "^Events (plain): 15 entries" <<<"$out" || fail "blkparse did not count 15 events"
exit 0
