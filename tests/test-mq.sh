#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-mq.sh - the multi-queue mode (--queue-mode=mq): bad values of its
# options are refused with one line and status 2; queue/queue_mode,
# queue/nr_hw_queues and mq/N/ show the hardware queues, their tags, CPUs
# and counts; queue/nr_requests resizes the scheduler tags, or without an
# elevator the driver tags (mq/N/nr_tags), up to their number, and
# deadline's async_depth follows it; fio's random writes with verify, two jobs at once, pass on
# one and on two hardware queues under every elevator, switched through
# queue/scheduler; the image is opened once per hardware queue (once on the
# 2.6 queue); and the 2.6 queue (the default) shows queue_mode rq and no
# mq/.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires fio python3 timeout

engines=$(fio --enghelp 2>/dev/null || :)
grep -qw io_uring <<<"$engines" || skip "this fio has no io_uring engine"

make_tmpdir tmp
mkdir "$tmp/mnt"
size=$((32 * 1024 * 1024))
truncate -s $size "$tmp/img"
cleanup_fn _unmount "$tmp/mnt"

# refused PATTERN ARGS...: rqdisk ARGS exits 2 with one line matching PATTERN, mounting nothing.
refused()
{
	local pattern=$1 status=0

	shift
	timeout 15 "$RQDISK" -f "$@" "$tmp/img" "$tmp/mnt" >"$tmp/out" 2>"$tmp/err" || status=$?
	echo "rqdisk $*: status $status: $(cat "$tmp/err")"
	[ $status = 2 ] || fail "rqdisk $*: exit status $status, not 2"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "rqdisk $*: not one line on stderr"
	[[ $(cat "$tmp/err") =~ ^rqdisk:\ .*$pattern ]] ||
		fail "rqdisk $*: the message does not match '$pattern'"
	[ ! -s "$tmp/out" ] || fail "rqdisk $*: wrote to stdout"
	no_mount_under "$tmp" || fail "rqdisk $* left a mount"
}

say "bad values of the multi-queue options"
refused "--queue-mode: 'blk' is not rq or mq" --queue-mode=blk
refused "--queue-mode: '' is not rq or mq" --queue-mode=
refused "--hw-queues: '0' is not a number from 1 to 64" --queue-mode=mq --hw-queues 0
refused "--hw-queues: '65' is not a number from 1 to 64" --queue-mode=mq --hw-queues 65
refused "--hw-queues: 'two' is not a number" --queue-mode=mq --hw-queues two
refused "--hw-queue-depth: '0' is not a number from 1 to 4096" --queue-mode=mq --hw-queue-depth 0
refused "--hw-queue-depth: '4097' is not a number" --queue-mode=mq --hw-queue-depth 4097
refused "--hw-queues is for --queue-mode=mq" --hw-queues 2
refused "--hw-queue-depth is for --queue-mode=mq" --queue-mode=rq --hw-queue-depth 8

say "the 2.6 queue: queue_mode rq, one hardware queue, no mq/"
start_rqdisk "$tmp/img" "$tmp/mnt"
[ "$(cat "$tmp/mnt/queue/queue_mode")" = rq ] || fail "queue_mode is not rq by default"
[ "$(cat "$tmp/mnt/queue/nr_hw_queues")" = 1 ] || fail "nr_hw_queues is not 1 on the 2.6 queue"
[ ! -e "$tmp/mnt/mq" ] || fail "the 2.6 queue shows mq/"
stop_rqdisk

cpus=$(getconf _NPROCESSORS_CONF)
online=$(getconf _NPROCESSORS_ONLN)
[ "$online" -le 64 ] || online=64

# expect_cpu_list N NR: the CPUs whose software queues feed hardware queue N of NR.
expect_cpu_list()
{
	local c list=

	for ((c = $1; c < cpus; c += $2)); do
		list+="${list:+, }$c"
	done
	printf '%s\n' "$list"
}

say "the mq tree: the default hardware queues, their tags and CPUs"
start_rqdisk --queue-mode=mq "$tmp/img" "$tmp/mnt"
m=$tmp/mnt
[ "$(cat "$m/queue/queue_mode")" = mq ] || fail "queue_mode is not mq"
[ "$(cat "$m/queue/nr_hw_queues")" = "$online" ] ||
	fail "nr_hw_queues is $(cat "$m/queue/nr_hw_queues"), not the $online CPUs online"
[ "$(ls "$m/mq" | sort -n | tr '\n' ' ')" = "$(seq -s ' ' 0 $((online - 1))) " ] ||
	fail "mq/ holds $(ls "$m/mq")"
[ "$(ls "$m/mq/0" | tr '\n' ' ')" = "cpu_list dispatched merged nr_tags run " ] ||
	fail "mq/0/ holds $(ls "$m/mq/0")"
[ "$(cat "$m/mq/0/nr_tags")" = 64 ] || fail "nr_tags is not 64 by default"
echo 1 >"$m/mq/0/run" 2>/dev/null && fail "mq/0/run could be written"
echo 1 >"$m/queue/queue_mode" 2>/dev/null && fail "queue_mode could be written"

say "nr_requests sets the scheduler tags, or without an elevator the driver tags"
echo 3 >"$m/queue/iosched/async_depth" || fail "deadline's async_depth took no 3"
echo 16 >"$m/queue/nr_requests" || fail "nr_requests took no 16 under deadline"
[ "$(cat "$m/queue/nr_requests")" = 16 ] || fail "nr_requests reads $(cat "$m/queue/nr_requests")"
[ "$(cat "$m/queue/iosched/async_depth")" = 16 ] ||
	fail "deadline's async_depth is $(cat "$m/queue/iosched/async_depth") after nr_requests 16, not 16"
echo 17 >"$m/queue/iosched/async_depth" 2>/dev/null && fail "async_depth took 17 above nr_requests 16"
[ "$(cat "$m/mq/0/nr_tags")" = 64 ] || fail "under deadline nr_requests changed the driver tags"
echo none >"$m/queue/scheduler" || fail "queue/scheduler took no none"
[ "$(cat "$m/queue/nr_requests")" = 64 ] ||
	fail "under none nr_requests reads $(cat "$m/queue/nr_requests"), not the 64 driver tags"
echo 8 >"$m/queue/nr_requests" || fail "nr_requests took no 8 under none"
[ "$(cat "$m/mq/0/nr_tags")" = 8 ] || fail "mq/0/nr_tags is $(cat "$m/mq/0/nr_tags") after nr_requests 8"
[ "$(cat "$m/queue/nr_requests")" = 8 ] || fail "nr_requests reads $(cat "$m/queue/nr_requests")"
echo 65 >"$m/queue/nr_requests" 2>/dev/null &&
	fail "nr_requests took 65 under none, above the 64 driver tags"
dd if=/dev/zero of="$rqdisk_disk" bs=4k count=256 oflag=direct conv=notrunc status=none ||
	fail "writing with 8 driver tags failed"
echo deadline >"$m/queue/scheduler" || fail "queue/scheduler took no deadline"
[ "$(cat "$m/mq/0/nr_tags")" = 64 ] || fail "deadline did not give the driver tags back their 64"
[ "$(cat "$m/queue/nr_requests")" = 16 ] || fail "deadline's nr_requests is not the 16 it had"
stop_rqdisk

# image_files: the daemon's open files of the image, by their open file descriptions.
image_files()
{
	local fd n=0

	for fd in /proc/"$rqdisk_pid"/fd/*; do
		[ "$(readlink "$fd")" = "$tmp/img" ] && n=$((n + 1))
	done
	echo $n
}

say "the file backend opens the image once per hardware queue, once on the 2.6 queue"
for nr in 1 3; do
	start_rqdisk --queue-mode=mq --hw-queues $nr "$tmp/img" "$tmp/mnt"
	[ "$(image_files)" = $nr ] || fail "$(image_files) open files of the image for $nr hardware queues"
	dd if=/dev/zero of="$rqdisk_disk" bs=4k count=64 oflag=direct conv=notrunc status=none ||
		fail "writing through $nr hardware queues failed"
	stop_rqdisk
done
start_rqdisk "$tmp/img" "$tmp/mnt"
[ "$(image_files)" = 1 ] || fail "$(image_files) open files of the image on the 2.6 queue"
stop_rqdisk

# verify NR ELEVATOR: fio's random writes with verify through the disk, two jobs.
verify()
{
	local nr=$1 e=$2 n dispatched=0 status=0

	say "fio verify on $nr hardware queue(s) under $e"
	truncate -s 0 "$tmp/img"
	truncate -s $size "$tmp/img"
	start_rqdisk --queue-mode=mq --hw-queues "$nr" --hw-queue-depth 16 "$tmp/img" "$tmp/mnt"
	[ "$(cat "$m/queue/nr_hw_queues")" = "$nr" ] || fail "nr_hw_queues is not $nr"
	echo "$e" >"$m/queue/scheduler" || fail "queue/scheduler took no $e"
	[[ $(cat "$m/queue/scheduler") == *"[$e]"* ]] || fail "$e does not run"
	for ((n = 0; n < nr; n++)); do
		[ "$(cat "$m/mq/$n/nr_tags")" = 16 ] || fail "mq/$n/nr_tags is not 16"
		[ "$(cat "$m/mq/$n/cpu_list")" = "$(expect_cpu_list "$n" "$nr")" ] ||
			fail "mq/$n/cpu_list is '$(cat "$m/mq/$n/cpu_list")'"
	done
	(cd "$tmp" && fio --name="mq$nr-$e" --filename="$rqdisk_disk" --ioengine=io_uring \
		--direct=1 --iodepth=16 --numjobs=2 --size=$((size / 2)) \
		--offset_increment=$((size / 2)) --rw=randwrite --bs=4k --verify=crc32c \
		--do_verify=1 --verify_fatal=1 --verify_state_save=0 --output-format=json \
		--output="$tmp/fio.json") || status=$?
	[ $status = 0 ] || { cat "$tmp/fio.json"; fail "fio failed (status $status)"; }
	python3 - "$tmp/fio.json" $((size / 2)) <<'PY' || fail "fio's report says the run went wrong"
import json, sys
text = open(sys.argv[1]).read()
for job in json.loads(text[text.index("{"):])["jobs"]:
    print(job["jobname"], "error", job["error"], "wrote", job["write"]["io_bytes"],
          "read", job["read"]["io_bytes"])
    if job["error"] or job["write"]["io_bytes"] < int(sys.argv[2]) or \
       job["read"]["io_bytes"] < int(sys.argv[2]):
        sys.exit(1)
PY
	for ((n = 0; n < nr; n++)); do
		dispatched=$((dispatched + $(cat "$m/mq/$n/dispatched")))
		[ "$(cat "$m/mq/$n/run")" -gt 0 ] || fail "mq/$n/run is 0"
	done
	# the writes and the reads, each at least once (merges only lower it)
	[ "$dispatched" -ge $((size / 4096 / 4)) ] ||
		fail "the hardware queues dispatched only $dispatched requests"
	stop_rqdisk
}

elevators=$(foreach_elevator)
for nr in 1 2; do
	for e in $elevators; do
		verify "$nr" "$e"
	done
done
echo "PASS: test-mq.sh"
