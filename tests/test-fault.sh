#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-fault.sh - the fault filter, live: a bad sector fails with EIO while its
# neighbours read their bytes, a read across it returns its good prefix (a short
# read, the image's bytes), and the trace's completion of that request carries
# the error (blkparse prints it); an error rule switched
# on and off through fault/enable and fault/error_file's presence; bad rules: one
# line and exit 2 on the command line, EINVAL and nothing changed in the tree.
source "$(dirname "$0")/functions.sh"
source "$(dirname "$0")/fault-functions.sh"
requires_root
requires_fuse
requires dd blkparse python3

make_tmpdir tmp
mkdir "$tmp/mnt"
random_file "$tmp/img" $((4 << 20))
cp "$tmp/img" "$tmp/orig"
ctl=$tmp/mnt/fault

# dread OFFSET LEN: an O_DIRECT read of the disk into $tmp/got; prints "ok" or the errno's name.
dread()
{
	python3 - "$rqdisk_disk" "$1" "$2" "$tmp/got" <<'PY'
import errno, mmap, os, sys
path, off, n, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
buf = mmap.mmap(-1, n)
fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
try:
    got = os.preadv(fd, [buf], off)
except OSError as e:
    print(errno.errorcode[e.errno])
    sys.exit(0)
open(out, "wb").write(buf[:got])
print("ok" if got == n else "short %d" % got)
PY
}


say "bad sector 100: EIO there; sectors 99 and 101 read their bytes"
start_rqdisk -e noop --filter fault:badblocks=100 --trace "$tmp/tr" "$tmp/img" "$tmp/mnt"
[ -d "$ctl" ] || fail "no fault/ at the top of the control tree"
[ "$(ls "$ctl" | tr '\n' ' ')" = "badblocks enable rules sectors stats " ] || fail "fault/ holds: $(ls "$ctl")"
[ "$(cat "$ctl/badblocks")" = 100-100 ] || fail "fault/badblocks: $(cat "$ctl/badblocks")"
expected=ok expect dread $((99 * 512)) 512
same_bytes "$tmp/got" 0 "$tmp/orig" $((99 * 512)) 512 || fail "sector 99 is not the image's"
expected=ok expect dread $((101 * 512)) 512
same_bytes "$tmp/got" 0 "$tmp/orig" $((101 * 512)) 512 || fail "sector 101 is not the image's"
expected=EIO expect dread $((100 * 512)) 512

say "a 4 KiB read of sectors 96..103 returns 96..99, a short read; its completion in the trace carries EIO"
expected="short 2048" expect dread $((96 * 512)) 4096
same_bytes "$tmp/got" 0 "$tmp/orig" $((96 * 512)) 2048 || fail "the short read's bytes are not the image's"
[ "$(stat -c %s "$tmp/got")" = 2048 ] || fail "the short read returned $(stat -c %s "$tmp/got") bytes"
expected=ok expect dread $((104 * 512)) 4096
grep -q "^badblock_errors 2$" "$ctl/stats" || fail "fault/stats: $(cat "$ctl/stats")"

say "fault/badblocks: +, -, clear; a bad command is EINVAL and changes nothing"
echo +200-207 >"$ctl/badblocks" || fail "+200-207 refused"
echo -202-203 >"$ctl/badblocks" || fail "-202-203 refused"
[ "$(cat "$ctl/badblocks" | tr '\n' ' ')" = "100-100 200-201 204-207 " ] ||
	fail "fault/badblocks: $(cat "$ctl/badblocks")"
for v in 5 + +9-8 +x +8192 "clear now"; do
	write_fails "$ctl/badblocks" "$v"
done
[ "$(cat "$ctl/badblocks" | tr '\n' ' ')" = "100-100 200-201 204-207 " ] ||
	fail "a refused command changed fault/badblocks: $(cat "$ctl/badblocks")"
expected=ok expect dread $((202 * 512)) 1024
echo clear >"$ctl/badblocks"
[ -z "$(cat "$ctl/badblocks")" ] || fail "clear left $(cat "$ctl/badblocks")"
expected=ok expect dread $((96 * 512)) 4096
same_bytes "$tmp/got" 0 "$tmp/orig" $((96 * 512)) 4096 || fail "sectors 96..103 are not the image's"
stop_rqdisk

blkparse -i "$tmp/tr" >"$tmp/parsed" || fail "blkparse failed"
# the kernel's 16-bit error field: -EIO reads 65531
grep -Eq " C +RS? +96 \+ 8 \[65531\]" "$tmp/parsed" ||
	fail "no failed completion of 96 + 8: $(grep ' C ' "$tmp/parsed" | head)"
grep -Eq " C +RS? +104 \+ 8 \[0\]" "$tmp/parsed" || fail "no good completion of 104 + 8"
grep -q " m  *N fault: bad sector 100: EIO" "$tmp/parsed" || fail "no note of the bad sector"

say "an error rule: off, on through fault/enable (ENOSPC on writes), off again"
start_rqdisk -e noop --filter fault:error=write,errno=ENOSPC,enable=0 "$tmp/img" "$tmp/mnt"
expected=ok expect dwrite 0 4096
echo 1 >"$ctl/enable" || fail "enable 1 refused"
expected=ENOSPC expect dwrite 0 4096
expected=ok expect dread 0 4096
echo 0 >"$ctl/enable"
expected=ok expect dwrite 0 4096
grep -q "^errors 1$" "$ctl/stats" || fail "fault/stats: $(cat "$ctl/stats")"

say "error_file: the rule holds while the file exists"
echo "enable=1,error_file=$tmp/fail-now" >"$ctl/rules" || fail "error_file refused"
expected=ok expect dwrite 0 4096
touch "$tmp/fail-now"
sleep 0.2 # the file is looked at every 10 ms
expected=ENOSPC expect dwrite 0 4096
rm "$tmp/fail-now"
sleep 0.2
expected=ok expect dwrite 0 4096

say "fault/rules: a bad rule is EINVAL and changes nothing"
before=$(cat "$ctl/rules")
[ "$before" = "error=write,errno=ENOSPC,error_file=$tmp/fail-now" ] || fail "fault/rules: $before"
for v in prob=1000001 errno=EWHAT error=reed nosuch=1 start=8192 "up=1,down=1,x=1" \
	error_file=relative "start=5,end=4" interval=0; do
	write_fails "$ctl/rules" "$v"
done
[ "$(cat "$ctl/rules")" = "$before" ] || fail "a refused rule changed fault/rules: $(cat "$ctl/rules")"
[[ $(cat "$tmp/mnt/device/stack") == "fault:$before -> file:"* ]] ||
	fail "device/stack: $(cat "$tmp/mnt/device/stack")"
stop_rqdisk

say "bad rules on the command line: one line, exit 2, no mount"
for spec in fault:prob=x fault:errno=EWHAT fault:badblocks=9-8 fault:down=5 fault:nosuch; do
	status=0
	"$RQDISK" --filter "$spec" "$tmp/img" "$tmp/mnt" 2>"$tmp/err" || status=$?
	[ "$status" = 2 ] || fail "--filter $spec: exit $status, not 2"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "--filter $spec: not one line: $(cat "$tmp/err")"
	grep -q "fault: " "$tmp/err" || fail "--filter $spec: $(cat "$tmp/err")"
	! is_mounted "$tmp/mnt" || fail "--filter $spec left a mount"
done
say "a bad sector past the disk's end: known once the disk is open: one line, exit 1, no mount"
status=0
"$RQDISK" --filter fault:badblocks=8192 "$tmp/img" "$tmp/mnt" 2>"$tmp/err" || status=$?
[ "$status" = 1 ] || fail "badblocks=8192 on a disk of 8192 sectors: exit $status"
[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "badblocks must be START-END sector ranges inside the disk" "$tmp/err" ||
	fail "badblocks=8192: $(cat "$tmp/err")"
! is_mounted "$tmp/mnt" || fail "badblocks=8192 left a mount"
echo PASS
