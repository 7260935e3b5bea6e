#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-switch-pending.sh - a write to queue/scheduler with a request in flight is answered
# once the new elevator runs, while the daemon goes on serving; a second switch waits
# for the first; SIGTERM with a switch pending answers it and exits cleanly.
# The model makes each read take 4 s, so a switch stays pending that long.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires dd

make_tmpdir tmp
mkdir "$tmp/mnt"
model=ssd:read_us=4000000,depth=1
q=$tmp/mnt/queue

bg_pids=()
# At exit: nothing started here outlives the test.
stop_bg()
{
	local p

	for p in "${bg_pids[@]}"; do
		kill "$p" 2>/dev/null || :
		wait "$p" 2>/dev/null || :
	done
	return 0
}
cleanup_fn stop_bg

# slow_read: one direct read in the background, in flight on the model once this returns.
slow_read()
{
	local i

	dd if="$rqdisk_disk" of=/dev/null bs=4096 count=1 iflag=direct status=none &
	reader=$!
	bg_pids+=("$reader")
	for ((i = 0; i < 100; i++)); do
		[ "$(tr -s ' ' <"$tmp/mnt/inflight")" = " 1 0" ] && return 0
		sleep 0.02
	done
	fail "the read is not in flight: inflight is $(cat "$tmp/mnt/inflight")"
}

# switch_to NAME TAG: write NAME to queue/scheduler in the background; its
# status goes to $tmp/TAG.rc, its pid to $writer.  The file is opened
# first ($tmp/TAG.open says so), so that a wait for the daemon's answer
# seen after that is the write's, not the open's.
switch_to()
{
	rm -f "$tmp/$2.open"
	(
		st=0
		exec 3>"$q/scheduler" && touch "$tmp/$2.open" && echo "$1" >&3 || st=$?
		echo $st >"$tmp/$2.rc"
	) &
	writer=$!
	writer_tag=$2
	bg_pids+=("$writer")
}

# parked PID: PID, the last switch_to's, has opened the file and waits for
# the daemon's answer to its write (up to 5 s to get there), and the daemon
# has taken that write.  A writer in request_wait_answer may still be in the
# kernel's queue, unread (SIGTERM would then abort it, rightly); the device
# hands requests over in order to the one thread reading it, so a control
# file read answered after that was read after the write (on /dev/fuse,
# which these tests use unless RQDISK_TEST_OPTS says otherwise).
parked()
{
	local i w

	for ((i = 0; i < 250; i++)); do
		w=$(cat "/proc/$1/wchan" 2>/dev/null) || w=
		if [ -e "$tmp/$writer_tag.open" ] && [ "$w" = request_wait_answer ]; then
			cat "$tmp/mnt/inflight" >/dev/null || return 1
			return 0
		fi
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.02
	done
	return 1
}

# running: the elevator in brackets.
running()
{
	sed 's/.*\[\(.*\)\].*/\1/' "$q/scheduler"
}

start_rqdisk --model "$model" --create 16M "$tmp/img" "$tmp/mnt"

say "a switch with a read in flight is answered only once the read has ended"
slow_read
switch_to noop first
parked "$writer" || fail "the switch was answered with the read still in flight"
say "meanwhile the daemon serves: the control tree reads at once"
[ "$(running)" = deadline ] || fail "the new elevator runs before the read ended: $(running)"
[ "$(tr -s ' ' <"$tmp/mnt/inflight")" = " 1 0" ] || fail "the read is no longer in flight"
kill -0 "$writer" 2>/dev/null || fail "the switch was answered before the read ended"
wait "$writer"
[ "$(cat "$tmp/first.rc")" = 0 ] || fail "the switch failed: status $(cat "$tmp/first.rc")"
[ "$(running)" = noop ] || fail "noop does not run after the answer: $(running)"
[ "$(tr -s ' ' <"$tmp/mnt/inflight")" = " 0 0" ] || fail "answered with a request in flight"
wait "$reader" || fail "the read failed"

say "a second switch while one is pending waits for it, then switches again"
slow_read
switch_to deadline second
parked "$writer" || fail "the first switch was not parked"
first=$writer
switch_to cfq third
second=$writer
sleep 0.5
kill -0 "$first" 2>/dev/null || fail "the first switch was answered with the read in flight"
[ -e "$tmp/third.rc" ] && fail "the second switch was answered before the first"
wait "$first" "$second" "$reader"
[ "$(cat "$tmp/second.rc")" = 0 ] || fail "the first switch failed"
[ "$(cat "$tmp/third.rc")" = 0 ] || fail "the second switch failed"
[ "$(running)" = cfq ] || fail "cfq does not run after both switches: $(running)"

say "SIGTERM with a switch pending: the switch is answered and rqdisk exits 0"
slow_read
switch_to deadline last
parked "$writer" || fail "the switch was not parked"
kill -TERM "$rqdisk_pid"
wait "$writer"
[ "$(cat "$tmp/last.rc")" = 0 ] || fail "the pending switch failed at exit"
wait_rqdisk
[ "$rqdisk_status" = 0 ] || fail "rqdisk exited with status $rqdisk_status"
wait "$reader" 2>/dev/null || : # its close may come after the unmount
bg_pids=()
echo PASS
