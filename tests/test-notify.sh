#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-notify.sh - with $NOTIFY_SOCKET set (a systemd unit of Type=notify),
# rqdisk sends READY=1 only once the mount is up, STOPPING=1 as it goes,
# and nothing at all for a start that fails.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires python3

make_tmpdir tmp
mkdir "$tmp/mnt"
truncate -s 16M "$tmp/img"

# listen SOCKET LOG MNT: each datagram on its own line of LOG, and for
# READY=1 whether MNT was mounted the moment it came.
cat >"$tmp/listen.py" <<'PY'
import socket, sys
sock, log, mnt = sys.argv[1:]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sock)
with open(log, "w") as out:
    while True:
        msg = s.recv(4096).decode()
        line = msg.replace("\n", " ")
        if "READY=1" in msg.split("\n"):
            mounted = any(l.split()[4] == mnt for l in open("/proc/self/mountinfo"))
            line += " mounted=%d" % mounted
        out.write(line + "\n")
        out.flush()
        if msg == "STOPPING=1":
            break
PY
listen()
{
	rm -f "$tmp/sock" "$tmp/log"
	python3 "$tmp/listen.py" "$tmp/sock" "$tmp/log" "$tmp/mnt" &
	listener=$!
	for ((i = 0; i < 50; i++)); do
		[ -S "$tmp/sock" ] && return 0
		sleep 0.1
	done
	fail "the listener did not bind $tmp/sock"
}
stop_listener()
{
	[ -n "${listener:-}" ] && kill "$listener" 2>/dev/null
	return 0
}
cleanup_fn stop_listener

say "READY=1 once the mount is up, with the daemon's pid; STOPPING=1 on SIGTERM"
listen
NOTIFY_SOCKET=$tmp/sock start_rqdisk "$tmp/img" "$tmp/mnt"
for ((i = 0; i < 100; i++)); do
	grep -q READY=1 "$tmp/log" 2>/dev/null && break
	sleep 0.1
done
grep -qx "READY=1 MAINPID=$rqdisk_pid mounted=1" "$tmp/log" ||
	fail "no READY=1 with the mount up: $(cat "$tmp/log" 2>/dev/null)"
[ "$(cat "$tmp/mnt/queue/scheduler")" != "" ] || fail "the mount does not answer"
kill -TERM "$rqdisk_pid"
wait_rqdisk
[ "$rqdisk_status" = 0 ] || fail "rqdisk exited with status $rqdisk_status"
wait "$listener" || fail "the listener failed"
listener=
[ "$(tail -1 "$tmp/log")" = STOPPING=1 ] || fail "no STOPPING=1 last: $(cat "$tmp/log")"

say "a start that fails says nothing"
listen
status=0
NOTIFY_SOCKET=$tmp/sock "$RQDISK" -f "$tmp/missing.img" "$tmp/mnt" 2>/dev/null || status=$?
[ $status = 1 ] || fail "a missing image: status $status, not 1"
sleep 0.5
[ ! -s "$tmp/log" ] || fail "a failed start notified: $(cat "$tmp/log")"

say "a socket nobody listens on: a warning, and the daemon serves"
NOTIFY_SOCKET=$tmp/nobody start_rqdisk "$tmp/img" "$tmp/mnt" 2>"$tmp/err"
stop_rqdisk
grep -q "NOTIFY_SOCKET" "$tmp/err" || fail "no warning for an unreachable socket"
echo PASS
