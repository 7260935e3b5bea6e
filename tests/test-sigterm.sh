#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-sigterm.sh - SIGTERM in the middle of writes: rqdisk finishes what it
# took, exits 0 and unmounts, and every write it acknowledged is in the image.
# tests/ack-writer keeps 32 numbered 4 KiB records in flight at random places
# and logs a record only once its write has completed.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse

ack=${ACK_WRITER:-$top_builddir/tests/ack-writer}
[ -x "$ack" ] || fail "$ack is not built (make check builds it)"

make_tmpdir tmp
mkdir "$tmp/mnt"
slots=4096 # 16 MiB of records
truncate -s $((slots * 4096)) "$tmp/img"

writer_pid=
# At exit: stop the writer if it still runs.
stop_writer()
{
	if [ -n "$writer_pid" ]; then
		kill "$writer_pid" 2>/dev/null || :
		wait "$writer_pid" 2>/dev/null || :
	fi
	writer_pid=
}
cleanup_fn stop_writer

acked()
{
	wc -l <"$tmp/log"
}

say "SIGTERM while idle: exit 0, no mount left"
start_rqdisk "$tmp/img" "$tmp/mnt"
kill -TERM "$rqdisk_pid"
wait_rqdisk
[ "$rqdisk_status" = 0 ] || fail "rqdisk exited with status $rqdisk_status on SIGTERM"

say "SIGTERM to a daemon started with relative paths: it unmounts from / too"
name=$(basename "$tmp")
read -r -a extra <<<"${RQDISK_TEST_OPTS:-}" # what start_rqdisk would add
(cd "$tmp/.." && "$RQDISK" "${extra[@]}" "$name/img" "$name/mnt") || fail "rqdisk did not start"
rqdisk_pid=$(pgrep -n -f -- "$name/img $name/mnt") || fail "the daemon is not running"
rqdisk_mnt=$tmp/mnt
is_mounted "$tmp/mnt" || fail "$tmp/mnt is not mounted"
kill -TERM "$rqdisk_pid"
for ((i = 0; i < 100; i++)); do
	kill -0 "$rqdisk_pid" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$rqdisk_pid" 2>/dev/null && fail "the daemon did not exit on SIGTERM"
rqdisk_pid=
is_mounted "$tmp/mnt" && fail "the daemon exited but left $tmp/mnt mounted"

for elevator in deadline none; do
	say "SIGTERM during writes, 32 in flight, elevator $elevator"
	: >"$tmp/log"
	start_rqdisk --elevator $elevator "$tmp/img" "$tmp/mnt"
	"$ack" write "$rqdisk_disk" $slots 32 "$tmp/log" &
	writer_pid=$!
	for ((i = 0; i < 400; i++)); do
		[ "$(acked)" -ge 3000 ] && break
		kill -0 $writer_pid 2>/dev/null || break
		sleep 0.05
	done
	kill -0 $writer_pid 2>/dev/null || fail "the writer stopped before SIGTERM"
	echo "$(acked) records acknowledged: SIGTERM"
	kill -TERM "$rqdisk_pid"
	wait_rqdisk
	[ "$rqdisk_status" = 0 ] || fail "rqdisk exited with status $rqdisk_status on SIGTERM"
	no_mount_under "$tmp" || fail "a mount is left under $tmp"

	say "the writer stops, told by an error"
	for ((i = 0; i < 200; i++)); do
		kill -0 $writer_pid 2>/dev/null || break
		sleep 0.1
	done
	kill -0 $writer_pid 2>/dev/null && fail "the writer still runs 20 s after rqdisk exited"
	status=0
	wait $writer_pid || status=$?
	writer_pid=
	[ $status = 77 ] && skip "ack-writer cannot run here (no Linux AIO or O_DIRECT)"
	[ $status = 0 ] || fail "the writer failed (status $status)"
	[ "$(acked)" -ge 300 ] || fail "only $(acked) records were written: the test proves nothing"

	say "every acknowledged record is in the image"
	"$ack" check "$tmp/img" $slots "$tmp/log" || fail "acknowledged records are missing"
done
echo "PASS"
