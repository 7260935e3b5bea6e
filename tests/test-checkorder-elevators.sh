#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-checkorder-elevators.sh - every elevator keeps the barrier order under load: a
# traced disk takes random reads and writes of up to 256 KiB (split at max_sectors) with
# an fsync every 8 writes, and sequential 4 KiB writes (merged), for a couple of seconds;
# rqdisk-checkorder must find the order kept, with barriers in the trace.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires fio

checkorder=$top_builddir/src/tools/rqdisk-checkorder
[ -x "$checkorder" ] || fail "$checkorder is not built"

make_tmpdir tmp
mkdir "$tmp/mnt"
elevators=$(foreach_elevator) # every elevator, from the registry
mapfile -t names <<<"$elevators"
say "elevators: ${names[*]}"
[ ${#names[@]} -ge 6 ] || fail "fewer than six elevators: ${names[*]}"

for e in "${names[@]}"; do
	say "$e: fio with fsync through a traced disk"
	start_rqdisk -e "$e" --trace "$tmp/$e" --create 64M "$tmp/$e.img" "$tmp/mnt"
	fio --ioengine=io_uring --direct=1 --filename="$rqdisk_disk" --runtime=2 --time_based \
		--verify_state_save=0 --output="$tmp/fio.out" \
		--name=random --rw=randrw --rwmixread=30 --bsrange=4k-256k --iodepth=16 \
		--fsync=8 --size=48M \
		--name=sequential --rw=write --bs=4k --iodepth=8 --fsync=8 --offset=48M \
		--size=16M ||
		{ cat "$tmp/fio.out"; fail "fio failed under $e"; }
	stop_rqdisk

	status=0
	out=$("$checkorder" "$tmp/$e") || status=$?
	echo "$out"
	[ "$status" = 0 ] || fail "rqdisk-checkorder: status $status under $e"
	[[ $out =~ ([0-9]+)\ bios,\ ([0-9]+)\ barriers,\ order\ kept ]] ||
		fail "no summary from rqdisk-checkorder under $e"
	[ "${BASH_REMATCH[2]}" -gt 0 ] || fail "no barrier in the trace under $e"
	[ "${BASH_REMATCH[1]}" -gt "${BASH_REMATCH[2]}" ] || fail "no bio but barriers under $e"
	rm -f "$tmp/$e.img" "$tmp/$e".blktrace.*
done
echo PASS
