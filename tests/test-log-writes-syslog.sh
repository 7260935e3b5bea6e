#!/bin/bash
# test-log-writes-syslog.sh - a log that stops while rqdisk runs in the
# background, its stderr gone to /dev/null, is still said: in syslog,
# facility daemon, both when it stops and when the daemon ends.  A socket
# of the test's own stands for /dev/log, bound over it in a mount
# namespace of its own, as are the small tmpfs the log fills and the mount.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires unshare python3 dd

make_tmpdir tmp
mkdir "$tmp/mnt" "$tmp/small"
truncate -s 16M "$tmp/img"

# every datagram to the socket, one a line, until the file stop is there (60 s at most)
python3 - "$tmp/log.sock" "$tmp/syslog" "$tmp/stop" <<'PY' &
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(0.2)
end = time.time() + 60
with open(sys.argv[2], "a") as out:
    while time.time() < end and not os.path.exists(sys.argv[3]):
        try:
            out.write(s.recv(4096).decode(errors="replace").rstrip("\0\n") + "\n")
            out.flush()
        except socket.timeout:
            pass
PY
listener=$!
stop_listener() { kill "$listener" 2>/dev/null || :; }
cleanup_fn stop_listener
for ((i = 0; i < 50; i++)); do
	[ -S "$tmp/log.sock" ] && break
	sleep 0.1
done
[ -S "$tmp/log.sock" ] || fail "the test's syslog socket is not there"

say "the log's file system fills under a daemon in the background: syslog hears it"
export tmp
unshare -m --propagation private bash -c '
	set -e
	mount --bind "$tmp/log.sock" /dev/log
	mount -t tmpfs -o size=1m rqdisk-test "$tmp/small"
	"$RQDISK" --fuse-uring=off --filter "log-writes:file=$tmp/small/log" "$tmp/img" "$tmp/mnt"
	dd if=/dev/zero of="$tmp/mnt/disk" bs=1M count=2 oflag=direct conv=notrunc status=none
	for ((i = 0; i < 50; i++)); do
		grep -qx "stopped 1" "$tmp/mnt/log/stats" && break
		sleep 0.1
	done
	fusermount3 -u "$tmp/mnt"
	for ((i = 0; i < 100; i++)); do
		grep -q "log-writes: the log .* stopped" "$tmp/syslog" && break
		sleep 0.1
	done
' || fail "the daemon's run in its own mount namespace failed"
touch "$tmp/stop"
wait "$listener" || :
cat "$tmp/syslog"
# facility daemon (3), severity err (3): <27>
grep -q "^<27>.*rqdisk\[[0-9]*\]: log-writes: writing $tmp/small/log: No space left on device; logging stops" \
	"$tmp/syslog" || fail "syslog did not hear that the log stopped"
grep -q "^<27>.*rqdisk\[[0-9]*\]: log-writes: the log $tmp/small/log stopped (No space left on device)" \
	"$tmp/syslog" || fail "syslog did not hear it again as the daemon ended"
echo "PASS: test-log-writes-syslog.sh"
