#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-switch-fio.sh - switching among every elevator in a loop while fio writes and
# verifies at QD32 through io_uring: nothing is lost, nothing waits forever.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires fio timeout

make_tmpdir tmp
mkdir "$tmp/mnt"
start_rqdisk --create 128M "$tmp/img" "$tmp/mnt"
read -r -a names <<<"$(tr -d '[]' <"$tmp/mnt/queue/scheduler")"
say "elevators: ${names[*]}"

timeout 300 fio --name=switch --filename="$tmp/mnt/disk" --ioengine=io_uring --direct=1 \
	--rw=randwrite --bs=4k --iodepth=32 --size=64M --verify=crc32c --do_verify=1 \
	--verify_fatal=1 --verify_state_save=0 --output="$tmp/fio.out" &
fio_pid=$!
cleanup_fn sh -c "kill $fio_pid 2>/dev/null || true"

switches=0
while kill -0 "$fio_pid" 2>/dev/null; do
	e=${names[switches % ${#names[@]}]}
	timeout 30 sh -c "echo $e >'$tmp/mnt/queue/scheduler'" ||
		fail "switching to $e failed or hung under load"
	switches=$((switches + 1))
	sleep 0.05
done
fio_status=0
wait "$fio_pid" || fio_status=$?
cat "$tmp/fio.out"
[ "$fio_status" = 0 ] || fail "fio exited with $fio_status while elevators switched"
grep -q "err= 0" "$tmp/fio.out" || fail "fio reported errors"
say "$switches switches during the run"
[ "$switches" -ge "${#names[@]}" ] || fail "only $switches switches: the loop did not cover every elevator"
stop_rqdisk
echo PASS
