#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-checkorder.sh - rqdisk-checkorder's command line on traces tests/bt-gen
# writes: the order kept (exit 0, one summary line), broken either way
# round a barrier or by a record that matches nothing (exit 1, one line
# naming the records), and malformed traces and bad usage (exit 2).
source "$(dirname "$0")/functions.sh"

checkorder=$top_builddir/src/tools/rqdisk-checkorder
gen=$top_builddir/tests/bt-gen
[ -x "$checkorder" ] || fail "$checkorder is not built"
no_uring_no_fuse "$checkorder"
[ -x "$gen" ] || fail "$gen is not built"

make_tmpdir tmp

# run NAME ARGS...: the checker's status in $status, its output in $tmp/NAME.out and .err.
run()
{
	local name=$1

	shift
	status=0
	"$checkorder" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || status=$?
	echo "+ rqdisk-checkorder $*: status $status"
	cat "$tmp/$name.out" "$tmp/$name.err"
}

# expect STATUS STREAM NAME TEXT...: that status, and one line on STREAM (out or err)
# holding every TEXT, the other stream empty.
expect()
{
	local want=$1 stream=$2 name=$3 other=err text

	shift 3
	[ "$stream" = err ] && other=out
	[ "$status" = "$want" ] || fail "$name: status $status, not $want"
	[ "$(wc -l <"$tmp/$name.$stream")" = 1 ] || fail "$name: not one line on std$stream"
	[ -s "$tmp/$name.$other" ] && fail "$name: something on std$other"
	for text in "$@"; do
		grep -qF -- "$text" "$tmp/$name.$stream" || fail "$name: no '$text' in the line"
	done
	return 0
}

say "a trace that keeps the order: flushes, a barrier write, a split, merges, a requeue"
cat >"$tmp/good.txt" <<'EOF'
# a write and a read, then an fsync's flush
Q WS 100+8
Q RS 500+8
D WS 100+8
D RS 500+8
C RS 500+8
C WS 100+8
Q FWS 0+0
G FWS 0+0
I FWS 0+0
D FWS 0+0
C FWS 0+0
# a bio split in two, its halves done out of order; three bios merged
Q W 1000+16
X W 1000+8 1008
D W 1008+8
D W 1000+8
C W 1000+8
C W 1008+8
Q W 2008+8
Q W 2016+8
M W 2016+8
Q W 2000+8
F W 2000+8
D W 2000+24
R W 2000+24
D W 2000+24
C W 2000+24
# a barrier write: the preflush, then the data as FUA
Q FWS 3000+8
D FWS 0+0
C FWS 0+0
D FWFS 3000+8
C FWFS 3000+8
Q WS 4000+8
D WS 4000+8
C WS 4000+8
EOF
"$gen" "$tmp/good.blktrace.0" <"$tmp/good.txt"
run good "$tmp/good"
expect 0 out good "rqdisk-checkorder: $tmp/good: 9 bios, 2 barriers, order kept"
run good-q -q "$tmp/good"
[ "$status" = 0 ] || fail "-q: status $status"
[ -s "$tmp/good-q.out" ] || [ -s "$tmp/good-q.err" ] && fail "-q printed something"

say "the same trace from a host of the other byte order, named by its one file"
"$gen" -s "$tmp/swapped" <"$tmp/good.txt"
cmp -s "$tmp/swapped" "$tmp/good.blktrace.0" && fail "bt-gen -s wrote the host's byte order"
run swapped "$tmp/swapped"
expect 0 out swapped "$tmp/swapped: 9 bios, 2 barriers, order kept"

say "a write queued before a flush completes after the flush was issued"
"$gen" "$tmp/late.blktrace.0" <<'EOF'
Q WS 100+8
D WS 100+8
Q FWS 0+0
D FWS 0+0
C WS 100+8
C FWS 0+0
EOF
run late "$tmp/late"
expect 1 out late "$tmp/late: order broken:" "barrier Q #3" "D #4" "Q #1 at 0.000001000 WS 100+8"

say "a write queued after a flush was issued before the flush completed"
"$gen" "$tmp/early.blktrace.0" <<'EOF'
Q FWS 0+0
D FWS 0+0
Q W 100+8
D W 100+8
C FWS 0+0
C W 100+8
EOF
run early "$tmp/early"
expect 1 out early "order broken:" "Q #3 at 0.000003000 W 100+8" "barrier Q #1" "D #4"

say "a completion of something never queued"
"$gen" "$tmp/stray.blktrace.0" <<'EOF'
Q W 100+8
D W 100+8
C W 100+16
EOF
run stray "$tmp/stray"
expect 1 out stray "C #3" "completion of something never queued (sectors 108+8)"

say "malformed traces"
head -c -5 "$tmp/good.blktrace.0" >"$tmp/short.blktrace.0"
run short "$tmp/short"
expect 2 err short "$tmp/short.blktrace.0: byte " "truncated record"
printf 'not a trace at all, but long enough to hold one record...\n' >"$tmp/text"
run text "$tmp/text"
expect 2 err text "$tmp/text: byte 0: bad magic"
run missing "$tmp/missing"
expect 2 err missing "$tmp/missing: no such trace"

say "usage"
run none
expect 2 err none "a TRACE is needed"
run two "$tmp/good" "$tmp/late"
expect 2 err two "only one TRACE at a time, not $tmp/late"
run bogus --bogus "$tmp/good"
expect 2 err bogus "unrecognized option '--bogus'; try 'rqdisk-checkorder --help'"
run bogus-short -x "$tmp/good"
expect 2 err bogus-short "invalid option -- 'x'"
run bogus-arg --quiet=yes "$tmp/good"
expect 2 err bogus-arg "option '--quiet' doesn't allow an argument"
run help --help
[ "$status" = 0 ] && grep -q '^Usage: rqdisk-checkorder' "$tmp/help.out" || fail "--help"
run version --version
expect 0 out version "rqdisk-checkorder "
echo PASS
