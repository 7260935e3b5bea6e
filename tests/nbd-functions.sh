# SPDX-License-Identifier: BSD-3-Clause
# nbd-functions.sh - what the NBD tests source after functions.sh: nbdkit servers on Unix sockets.

# requires_nbd: skip unless nbdkit is here and rqdisk was built with libnbd.
requires_nbd()
{
	requires nbdkit nbdcopy
	grep -q nbd+unix <<<"$("$RQDISK" --help)" || skip "rqdisk was built without libnbd"
}

_stop_pid()
{
	kill "$1" 2>/dev/null || true
}

# start_nbdkit SOCK NBDKIT-ARGS...: serve on the Unix socket SOCK, in the
# foreground of a background job (its pid in nbdkit_pid), stopped at exit;
# returns once the socket is there.
start_nbdkit()
{
	local sock=$1 i

	shift
	rm -f "$sock"
	nbdkit -U "$sock" -f "$@" &
	nbdkit_pid=$!
	cleanup_fn _stop_pid "$nbdkit_pid"
	for ((i = 0; i < 100; i++)); do
		[ -S "$sock" ] && return 0
		kill -0 "$nbdkit_pid" 2>/dev/null || fail "nbdkit $* exited before serving"
		sleep 0.1
	done
	fail "nbdkit $* did not make its socket"
}

# stop_nbdkit [SIGNAL]: stop the last server start_nbdkit started (SIGKILL:
# at once, its clients' sockets closed under them), and wait for it.
stop_nbdkit()
{
	kill "-${1:-TERM}" "$nbdkit_pid" 2>/dev/null || true
	wait "$nbdkit_pid" 2>/dev/null || true
}

# nbd_log_conns LOG WORD: how many connections nbdkit's log filter shows
# lines naming WORD on (Read, Write, Flush).
nbd_log_conns()
{
	grep -o "connection=[0-9]* $2 " "$1" | sort -u | wc -l
}

# round_trip DISK PAT BACK WHAT: PAT (4 MiB) written to DISK in 64 KiB direct
# writes, an fsync, and read back into BACK, which must equal it; WHAT says
# through what, in the failures.
round_trip()
{
	dd if="$2" of="$1" bs=64k oflag=direct conv=notrunc status=none || fail "writes $4 failed"
	dd if=/dev/null of="$1" conv=notrunc,fsync status=none || fail "fsync $4 failed"
	dd if="$1" of="$3" bs=64k count=64 iflag=direct status=none || fail "reads $4 failed"
	cmp "$2" "$3" || fail "what was written $4 does not read back"
}
