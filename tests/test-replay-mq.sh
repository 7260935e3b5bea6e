#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-replay-mq.sh - rqdisk-replay on the multi-queue queue: byte-identical output run after
# run with two hardware queues; with one, the numbers of tests/replay-expected.csv (the 2.6
# queue's) and every request on hardware queue 0; a column of dispatched requests per
# hardware queue that adds up to the requests; an iolog's I/Os taking the queues in turn and
# a blktrace trace's on the queue of their cpu; bad options, and an elevator the multi-queue
# queue cannot run, refused in one line before any row.  No root.
source "$(dirname "$0")/functions.sh"

replay=$top_builddir/src/tools/rqdisk-replay
[ -x "$replay" ] || fail "$replay is not built"
make_tmpdir tmp

source "$(dirname "$0")/replay-functions.sh"

# refused TEXT ARGS...: expect_refusal, and before any row: nothing on stdout.
refused()
{
	expect_refusal "$@"
	shift
	[ ! -s "$tmp/out" ] || fail "rqdisk-replay $*: wrote to stdout"
}

# column CSV ELEVATOR NAME: one number of the CSV output.
column()
{
	awk -F, -v e="$2" -v c="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == e { print $col[c] }' "$1"
}

header="elevator,requests,merges,MB/s,read_mean_ms,read_p50_ms,read_p99_ms,read_max_ms,write_mean_ms,write_p50_ms,write_p99_ms,write_max_ms,seek_sectors,barriers,errors"
write_iolog 3000
elevators=$(foreach_elevator | xargs)

say "two hardware queues: the same input gives the same bytes, table, CSV and latencies"
"$replay" -q --hw-queues 2 "$tmp/job.iolog" >"$tmp/a.txt"
"$replay" -q --hw-queues 2 "$tmp/job.iolog" >"$tmp/b.txt"
cmp "$tmp/a.txt" "$tmp/b.txt" || fail "two runs of the table differ"
for run in a b; do
	"$replay" --csv --hw-queues 2 --depth 16 --model ssd --latencies "$tmp/lat-$run" \
		"$tmp/job.iolog" >"$tmp/$run.csv" || fail "--hw-queues 2 --depth 16: status $?"
done
cmp "$tmp/a.csv" "$tmp/b.csv" || fail "two runs of the CSV differ"
cmp "$tmp/lat-a" "$tmp/lat-b" || fail "two runs' latencies differ"
cat "$tmp/a.txt" "$tmp/a.csv"
grep -q "^# .*job.iolog: 3000 I/Os, .*; queue mq, 2 hardware queues of 64 tags$" "$tmp/a.txt" ||
	fail "the table's heading does not name the queue: $(head -1 "$tmp/a.txt")"

say "a column per hardware queue; they add up to the requests; under none the iolog alternates"
[ "$(head -1 "$tmp/a.csv")" = "$header,hctx0_dispatched,hctx1_dispatched" ] ||
	fail "CSV header: $(head -1 "$tmp/a.csv")"
[ "$(tail -n +2 "$tmp/a.csv" | cut -d, -f1 | xargs)" = "$elevators" ] || fail "rows are not $elevators"
for e in $elevators; do
	d0=$(column "$tmp/a.csv" "$e" hctx0_dispatched) d1=$(column "$tmp/a.csv" "$e" hctx1_dispatched)
	[ $((d0 + d1)) = "$(column "$tmp/a.csv" "$e" requests)" ] ||
		fail "$e: $d0 + $d1 dispatched, $(column "$tmp/a.csv" "$e" requests) requests"
done
# 3000 I/Os, numbered 0 to 2999, none merged: the even ones on queue 0, the odd on queue 1
[ "$(column "$tmp/a.csv" none hctx0_dispatched),$(column "$tmp/a.csv" none hctx1_dispatched)" = \
	1500,1500 ] || fail "none: the iolog's I/Os did not take the two queues in turn"

say "one hardware queue: the numbers of tests/replay-expected.csv, all on queue 0"
{
	"$replay" --csv --hw-queues 1 "$tmp/job.iolog"
	"$replay" --csv --queue-mode=mq --depth 16 --model ssd "$tmp/job.iolog"
} >"$tmp/mq1.csv"
grep -v '^elevator,' "$tmp/mq1.csv" | awk -F, '$2 != $16 { exit 1 }' ||
	fail "with one hardware queue, queue 0 did not dispatch every request"
grep -qx "$header,hctx0_dispatched" "$tmp/mq1.csv" || fail "no hctx0_dispatched column alone"
cut -d, -f1-15 "$tmp/mq1.csv" | diff -u "$top_srcdir/tests/replay-expected.csv" - ||
	fail "one hardware queue does not give the 2.6 queue's numbers"
"$replay" --csv --queue-mode=rq "$tmp/job.iolog" | head -1 | grep -qx "$header" ||
	fail "--queue-mode=rq has hardware queue columns"

say "a blktrace trace: each Q record on the hardware queue of its cpu"
printf 'Q R 0+8\nQ R 4096+8\nQ W 8192+8\n' | "$top_builddir/tests/bt-gen" -c 0 "$tmp/t.blktrace.0"
printf 'Q R 100000+8\n' | "$top_builddir/tests/bt-gen" -c 1 "$tmp/t.blktrace.1"
printf 'Q R 200000+8\nQ R 300000+8\n' | "$top_builddir/tests/bt-gen" -c 2 "$tmp/t.blktrace.2"
"$replay" -q --csv -e none --hw-queues 2 "$tmp/t" >"$tmp/t.csv" || fail "the blktrace replay failed"
cat "$tmp/t.csv"
[ "$(column "$tmp/t.csv" none hctx0_dispatched),$(column "$tmp/t.csv" none hctx1_dispatched)" = \
	5,1 ] || fail "cpus 0 and 2 are not on queue 0 and cpu 1 on queue 1"
"$replay" -q --csv -e none --hw-queues 3 "$tmp/t" >"$tmp/t3.csv" || fail "three queues failed"
[ "$(tail -1 "$tmp/t3.csv" | cut -d, -f16-)" = 3,1,2 ] ||
	fail "three queues: $(tail -1 "$tmp/t3.csv" | cut -d, -f16-), not 3,1,2"

say "bad options: one line, exit 2"
refused "--queue-mode: 'blk' is not rq or mq" --queue-mode=blk "$tmp/job.iolog"
refused "--hw-queues: '0' is not a number from 1 to 64" --hw-queues 0 "$tmp/job.iolog"
refused "--hw-queues: '65' is not a number from 1 to 64" --hw-queues 65 "$tmp/job.iolog"
refused "--hw-queue-depth: '0' is not a number from 1 to 4096" --hw-queue-depth 0 \
	"$tmp/job.iolog"
refused "--hw-queue-depth: '4097' is not a number" --hw-queue-depth 4097 "$tmp/job.iolog"
refused "--hw-queues is for --queue-mode=mq" --queue-mode=rq --hw-queues 2 "$tmp/job.iolog"
refused "--hw-queue-depth is for --queue-mode=mq" --hw-queue-depth 8 --queue-mode=rq \
	"$tmp/job.iolog"
# an elevator of the API before the multi-queue hooks: refused before any row, not after noop's
prev=$top_builddir/tests/.libs/prev.so
[ -f "$prev" ] || fail "tests/.libs/prev.so is not built (make check builds it)"
refused "elevator prev speaks API version 3, which has no multi-queue hooks" \
	--hw-queues 2 -e "noop,$prev" "$tmp/job.iolog"
exit 0
