#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-trace-model.sh - under --model hdd (depth 1), eight 4 KiB reads at once are eight
# issues, no requeue and eight completions in the trace, whatever the elevator: what the
# device cannot take yet waits in the elevator and is issued once, when it can.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires dd blkparse

make_tmpdir tmp
mkdir "$tmp/mnt"
truncate -s 64M "$tmp/img"

# count TEXT ACTION: blkparse's lines of that action (Q, D, R, C) for the disk.
count()
{
	awk -v a="$2" '$6 == a' <<<"$1" | wc -l
}

# most_queued TEXT: the most reads queued and not yet complete at once.
most_queued()
{
	awk '$6 == "Q" { n++ } $6 == "C" { n-- } n > m { m = n } END { print m + 0 }' <<<"$1"
}

elevators=$(foreach_elevator)
for e in $elevators; do
	say "-e $e --model hdd: eight reads 1 MiB apart, all at once"
	rm -f "$tmp/run.blktrace.0"
	start_rqdisk --model hdd -e "$e" --trace "$tmp/run" "$tmp/img" "$tmp/mnt"
	pids=()
	for i in 0 1 2 3 4 5 6 7; do
		dd if="$rqdisk_disk" of=/dev/null bs=4K count=1 skip=$((i * 256)) iflag=direct \
			status=none &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || fail "-e $e: a read failed"
	done
	stop_rqdisk
	out=$(blkparse -i "$tmp/run") || fail "blkparse -i $tmp/run failed"
	q=$(count "$out" Q) d=$(count "$out" D) r=$(count "$out" R) c=$(count "$out" C)
	most=$(most_queued "$out")
	say "-e $e: $q Q, $d D, $r R, $c C; at most $most queued at once"
	[ "$q" = 8 ] || fail "-e $e: $q reads queued, not 8"
	[ "$d" = 8 ] && [ "$r" = 0 ] && [ "$c" = 8 ] ||
		fail "-e $e: $d issues, $r requeues, $c completions, not 8, 0, 8"
	# else no read had to wait in the elevator, and the test would show nothing
	[ "$most" -ge 2 ] || fail "-e $e: the reads never overlapped (at most $most queued)"
done
exit 0
