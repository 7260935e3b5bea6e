#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-log-writes-syslog.sh - a log that stops while rqdisk runs in the
# background, its stderr gone to /dev/null, is still said: in syslog,
# facility daemon, both when it stops and when the daemon ends.  A socket
# of the test's own stands for /dev/log (listen_syslog), bound over it in a
# mount namespace of its own where a system logger runs; the small tmpfs
# the log fills and the mount are the namespace's.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires unshare python3 dd

make_tmpdir tmp
mkdir "$tmp/mnt" "$tmp/small"
truncate -s 16M "$tmp/img"

listen_syslog "$tmp/syslog"

say "the log's file system fills under a daemon in the background: syslog hears it"
export tmp syslog_sock syslog_global
unshare -m --propagation private bash -c '
	set -e
	[ -n "$syslog_global" ] || mount --bind "$syslog_sock" /dev/log
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
cat "$tmp/syslog"
# facility daemon (3), severity err (3): <27>
grep -q "^<27>.*rqdisk\[[0-9]*\]: log-writes: writing $tmp/small/log: No space left on device; logging stops" \
	"$tmp/syslog" || fail "syslog did not hear that the log stopped"
grep -q "^<27>.*rqdisk\[[0-9]*\]: log-writes: the log $tmp/small/log stopped (No space left on device)" \
	"$tmp/syslog" || fail "syslog did not hear it again as the daemon ended"
echo "PASS: test-log-writes-syslog.sh"
