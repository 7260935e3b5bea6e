#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-elevators.sh - every elevator carries a real file system and a verified fio run:
# loop-attach, mkfs.ext4, copy a tree, fsck clean, checksums intact, fio crc32c verify.
#
# test-elevators-*.sh run this with other rqdisk options: they set
# elevators_configs (an array, one rqdisk option string per run of every
# elevator), may define elevators_check (called with those options once the
# disk is up), and source this file.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires_loop
requires fio mkfs.ext4 e2fsck sha256sum

make_tmpdir tmp
mkdir "$tmp/mnt" "$tmp/fs"
elevators=$(foreach_elevator) # every elevator, from the registry
mapfile -t names <<<"$elevators"
say "elevators: ${names[*]}"
[[ " ${names[*]} " == *" bfq "* ]] || fail "bfq is not listed: ${names[*]}"

[ -n "${elevators_configs+set}" ] || elevators_configs=("")
src=/usr/include

# run_elevator E [OPTION...]: fio verify, then a file system, under elevator E
run_elevator()
{
	local e=$1

	shift
	say "$e${*:+ ($*)}: fio verify"
	start_rqdisk -e "$e" "$@" --create 96M "$tmp/$e.img" "$tmp/mnt"
	# a variant's check that its options took (elevators_check OPTION...)
	! declare -F elevators_check >/dev/null || elevators_check "$@"
	fio --name="$e" --filename="$rqdisk_disk" --ioengine=io_uring --direct=1 --rw=randrw \
		--bsrange=4k-64k --iodepth=16 --size=32M --verify=crc32c --do_verify=1 \
		--verify_fatal=1 --verify_state_save=0 --output="$tmp/fio.out" || { cat "$tmp/fio.out"; fail "fio verify failed under $e"; }

	say "$e: mkfs.ext4, copy, fsck"
	loop_attach dev "$rqdisk_disk"
	mkfs.ext4 -q -F "$dev" || fail "mkfs.ext4 failed under $e"
	mount_at "$dev" "$tmp/fs"
	tar -C "$src" -cf - . 2>/dev/null | head -c 40M | tar -C "$tmp/fs" -xf - 2>/dev/null || true
	(cd "$tmp/fs" && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$tmp/sums"
	[ -s "$tmp/sums" ] || fail "nothing was copied under $e"
	umount "$tmp/fs"
	e2fsck -fn "$dev" >"$tmp/fsck.out" 2>&1 || { cat "$tmp/fsck.out"; fail "fsck found errors under $e"; }
	mount "$dev" "$tmp/fs"
	(cd "$tmp/fs" && sha256sum --quiet -c "$tmp/sums") || fail "checksums differ under $e"
	umount "$tmp/fs"
	loop_detach "$dev"
	stop_rqdisk
	rm -f "$tmp/$e.img"
}

for config in "${elevators_configs[@]}"; do
	read -r -a opts <<<"$config"
	for e in "${names[@]}"; do
		run_elevator "$e" "${opts[@]}"
	done
done
echo PASS
