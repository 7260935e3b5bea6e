#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-rmw-concurrent.sh - eight threads write their own unaligned pieces of
# the same sectors, all in flight at once (tests/rmw-writers): no
# read-modify-write may lose another writer's bytes, on 512 B and 4 KiB
# logical blocks and with no elevator.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires dd cmp

rmw=${RMW_WRITERS:-$top_builddir/tests/rmw-writers}
[ -x "$rmw" ] || fail "$rmw is not built (make check builds it)"

make_tmpdir tmp
mkdir "$tmp/mnt"
truncate -s 4M "$tmp/img"

sectors=64
for opts in "" "--logical-block-size 4096" "--elevator none"; do
	# a region that starts in the middle of a 4 KiB block
	offset=$(((RANDOM % 64 * 8 + 3) * 512))
	say "8 writers, $sectors sectors from byte $offset, rqdisk ${opts:-(defaults)}"
	# shellcheck disable=SC2086 # opts are words
	start_rqdisk $opts "$tmp/img" "$tmp/mnt"
	status=0
	"$rmw" "$rqdisk_disk" $offset $sectors 100 || status=$?
	[ $status = 77 ] && skip "rmw-writers cannot run here (no Linux AIO or O_DIRECT)"
	[ $status = 0 ] || fail "rmw-writers found lost updates or errors (status $status)"
	dd if="$rqdisk_disk" of="$tmp/region" bs=512 skip=$((offset / 512)) count=$sectors status=none
	stop_rqdisk
	say "the image holds what the disk showed"
	cmp -n $((sectors * 512)) -i "0:$offset" "$tmp/region" "$tmp/img" ||
		fail "the image differs from what the disk read"
done
echo "PASS"
