# SPDX-License-Identifier: BSD-3-Clause
# replay-functions.sh - what the rqdisk-replay tests share, sourced after
# functions.sh with $replay (the program) and $tmp set.

# A v3 iolog in $tmp/job.iolog: NR random 4 KiB I/Os over 1 GiB, 7 in 10
# reads, a sync every 100, one every 2 ms (tests/replay-expected.csv's
# trace).  awk's numbers are exact below 2^53: 16807 * 2^31 is.
write_iolog()
{
	awk -v nr="$1" 'BEGIN {
		x = 1
		print "fio version 3 iolog"
		print "0 /dev/disk add"
		for (i = 1; i <= nr; i++) {
			x = (x * 16807) % 2147483647
			off = (x % 262144) * 4096
			op = (x % 10 < 7) ? "read" : "write"
			if (i % 100 == 0)
				print i * 2000, "/dev/disk", "sync", 0, 0
			else
				print i * 2000, "/dev/disk", op, off, 4096
		}
	}' >"$tmp/job.iolog"
}

# expect_refusal TEXT ARGS...: exit 2 and one line on stderr holding TEXT, soon
# (a trace that once hung the replay must not hang the test: 124 is timeout's).
expect_refusal()
{
	local text=$1 status=0

	shift
	timeout 60 "$replay" "$@" >"$tmp/out" 2>"$tmp/err" || status=$?
	[ "$status" = 2 ] || fail "rqdisk-replay $*: status $status, not 2"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "rqdisk-replay $*: not one line: $(cat "$tmp/err")"
	grep -qF -- "$text" "$tmp/err" || fail "rqdisk-replay $*: '$(cat "$tmp/err")' lacks '$text'"
}
