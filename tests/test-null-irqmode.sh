#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-null-irqmode.sh - rqdisk --null=KEYS takes null_blk's completion
# modes: --help-backend null lists them, device/stack shows them, with
# irqmode=timer,completion_nsec=1000000 each 4 KiB read at queue depth 1
# takes at least a millisecond, with irqmode=none every request still
# succeeds, and bad keys are refused with one line before anything starts.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires dd date grep

make_tmpdir tmp
random_file "$tmp/img" $((8 * 1024 * 1024))
cp "$tmp/img" "$tmp/ref"
mkdir "$tmp/mnt"

say "--help-backend null lists both keys"
help=$("$RQDISK" --help-backend null)
for key in irqmode completion_nsec; do
	grep -q "^  $key " <<<"$help" || fail "--help-backend null does not list $key: $help"
done

say "bad keys are refused with one line, status 2, nothing mounted"
for keys in irqmode=bogus irqmode=timer,completion_nsec=1000000001 completion_nsec=1000 nokey=1; do
	status=0
	"$RQDISK" -f "--null=$keys" "$tmp/img" "$tmp/mnt" 2>"$tmp/err" || status=$?
	[ "$status" = 2 ] || fail "--null=$keys: status $status, not 2"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "--null=$keys: not one line: $(cat "$tmp/err")"
	grep -q "^rqdisk: --null: " "$tmp/err" || fail "--null=$keys: $(cat "$tmp/err")"
	no_mount_under "$tmp" || fail "--null=$keys left a mount"
done

# reads N: N 4 KiB direct reads one after another; the microseconds they took.
reads()
{
	local start end

	start=$(date +%s%N)
	dd if="$rqdisk_disk" of=/dev/null bs=4k count="$1" iflag=direct status=none ||
		fail "direct reads of the disk failed"
	end=$(date +%s%N)
	echo $(((end - start) / 1000))
}

say "irqmode=timer,completion_nsec=1000000: each QD1 read takes a millisecond at least"
start_rqdisk --null=irqmode=timer,completion_nsec=1000000 "$tmp/img" "$tmp/mnt"
stack=$(cat "$tmp/mnt/device/stack")
[ "$stack" = "null:irqmode=timer,completion_nsec=1000000 $tmp/img" ] ||
	fail "device/stack: $stack"
us=$(reads 50)
echo "50 reads: $us us"
# the timer never fires early: 50 ms is a floor, not a guess
[ "$us" -ge 50000 ] || fail "50 reads took $us us, under 1 ms each"
dd if=/dev/urandom of="$rqdisk_disk" bs=4k count=8 oflag=direct,sync conv=notrunc status=none ||
	fail "O_SYNC writes under irqmode=timer failed"
stop_rqdisk

say "irqmode=none: writes, a flush and reads succeed and are counted"
start_rqdisk --null=irqmode=none "$tmp/img" "$tmp/mnt"
dd if=/dev/urandom of="$rqdisk_disk" bs=64k count=16 oflag=direct conv=notrunc,fsync \
	status=none || fail "direct writes under irqmode=none failed"
reads 32 >/dev/null
read -r -a st <"$tmp/mnt/stat"
[ "${st[0]}" -ge 32 ] || fail "stat counts ${st[0]} reads, not at least 32"
[ "${st[4]}" -ge 16 ] || fail "stat counts ${st[4]} writes, not at least 16"
[ "${st[8]}" = 0 ] || fail "stat shows ${st[8]} requests in flight with none running"
stop_rqdisk

say "the image is as it was"
cmp "$tmp/img" "$tmp/ref" || fail "--null changed the image"
echo "PASS"
