#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-ioprio.sh - cfq and bfq serve a real-time reader before idle-class readers:
# the daemon reads each FUSE caller's priority (ioprio_get of its pid), its
# bios carry it, and cfq on a modelled hdd keeps the real-time reader's
# latency near what it is alone while the idle readers wait (bfq: the same); once the disk
# is free, an idle reader is served.  Margins are ratios of runs on the same
# machine, loaded or not: the real-time reader's mean latency with two idle
# readers at most 1.5 times its latency alone (without priorities, three
# readers sharing 100 ms slices, it is about 3 times), and the idle readers
# together complete under a quarter of its reads (without priorities, about
# twice as many).
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires fio ionice

make_tmpdir tmp
mkdir "$tmp/mnt"
truncate -s 256M "$tmp/img"
ionice -c1 -n4 true 2>/dev/null || skip "ionice -c1 is not allowed here"
ionice -c3 true 2>/dev/null || skip "ionice -c3 is not allowed here"

# fio_read CLASS OUT RUNTIME: 4 KiB O_DIRECT random reads, one at a time, at ionice
# class CLASS (level 4), terse v3 in OUT.  It execs: run it in a subshell.
fio_read()
{
	exec ionice -c "$1" fio --name=r --filename="$rqdisk_disk" --rw=randread --bs=4k \
		--direct=1 --ioengine=psync --runtime="$3" --time_based --randseed=$RANDOM \
		--output-format=terse --terse-version=3 --output="$2"
}

# reads and mean completion latency (µs) from a terse v3 file: fields 6 (KiB read) and 16;
# a fio stopped by a signal says so on lines of its own
fio_stats()
{
	awk -F';' '$1 == 3 { printf "%d %d\n", $6 / 4, $16; n++ } END { exit n != 1 }' "$1" ||
		fail "no fio results in $1"
}

kill_quietly()
{
	kill "$@" 2>/dev/null || true
}

for elv in cfq bfq; do
	start_rqdisk --model hdd -e "$elv" "$tmp/img" "$tmp/mnt"
	[[ $(cat "$tmp/mnt/queue/scheduler") == *"[$elv]"* ]] ||
		fail "queue/scheduler: $(cat "$tmp/mnt/queue/scheduler")"

	say "$elv: the real-time reader alone"
	(fio_read 1 "$tmp/alone" 3) || fail "fio failed"
	stats=$(fio_stats "$tmp/alone")
	read -r alone_ios alone_lat <<<"$stats"
	say "alone: $alone_ios reads, $alone_lat µs each"
	[ "$alone_ios" -ge 20 ] || fail "the real-time reader alone did only $alone_ios reads"

	say "$elv: the real-time reader with two idle-class readers"
	idle_pids=()
	for i in 1 2; do
		(fio_read 3 "$tmp/idle$i" 60) &
		idle_pids+=($!)
	done
	cleanup_fn kill_quietly "${idle_pids[@]}"
	(fio_read 1 "$tmp/rt" 3) || fail "fio failed"
	# fio stops on SIGINT and writes what it did so far
	kill -INT "${idle_pids[@]}"
	for i in 1 2; do
		wait "${idle_pids[i - 1]}" || true
		[ -s "$tmp/idle$i" ] || fail "an idle-class fio wrote no results"
	done
	stats=$(fio_stats "$tmp/rt")
	read -r rt_ios rt_lat <<<"$stats"
	stats=$(fio_stats "$tmp/idle1")
	read -r idle1_ios idle1_lat <<<"$stats"
	stats=$(fio_stats "$tmp/idle2")
	read -r idle2_ios idle2_lat <<<"$stats"
	idle_ios=$((idle1_ios + idle2_ios))
	say "real time: $rt_ios reads, $rt_lat µs each; idle: $idle1_ios + $idle2_ios reads"
	[ $((rt_lat * 2)) -le $((alone_lat * 3)) ] ||
		fail "$elv: the real-time reader's reads take $rt_lat µs beside idle readers, over 1.5 times its $alone_lat µs alone"
	[ $((idle_ios * 4)) -lt "$rt_ios" ] ||
		fail "$elv: the idle readers did $idle_ios reads while the real-time one did $rt_ios: they did not wait"

	say "$elv: with the disk free, an idle-class reader is served"
	timeout 20 ionice -c3 dd if="$rqdisk_disk" of=/dev/null bs=4k count=50 iflag=direct status=none ||
		fail "$elv: an idle-class reader alone did not finish 50 reads in 20 seconds"
	stop_rqdisk
done
