#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-replay.sh - rqdisk-replay's command line on a fio iolog: byte-identical
# output run after run, one row per elevator, the seek order of the textbook,
# every latency written out, and bad input refused in one line.  No root.
source "$(dirname "$0")/functions.sh"

replay=$top_builddir/src/tools/rqdisk-replay
[ -x "$replay" ] || fail "$replay is not built"
no_uring_no_fuse "$replay"
make_tmpdir tmp

source "$(dirname "$0")/replay-functions.sh"

# column CSV ELEVATOR NAME: one number of the CSV output.
column()
{
	awk -F, -v e="$2" -v c="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == e { print $col[c] }' "$1"
}

write_iolog 3000
nr_data=$(grep -cE ' (read|write) ' "$tmp/job.iolog")
nr_sync=$(grep -c ' sync ' "$tmp/job.iolog")

say "the same input gives the same bytes, table and CSV"
"$replay" -q "$tmp/job.iolog" >"$tmp/a.txt"
"$replay" -q "$tmp/job.iolog" >"$tmp/b.txt"
cmp "$tmp/a.txt" "$tmp/b.txt" || fail "two runs of the table differ"
"$replay" --csv --depth 16 --latencies "$tmp/lat-a" "$tmp/job.iolog" >"$tmp/a.csv"
"$replay" --csv --depth 16 --latencies "$tmp/lat-b" "$tmp/job.iolog" >"$tmp/b.csv"
cmp "$tmp/a.csv" "$tmp/b.csv" || fail "two runs of the CSV differ"
cmp "$tmp/lat-a" "$tmp/lat-b" || fail "two runs' latencies differ"
cat "$tmp/a.txt" "$tmp/a.csv"

say "the numbers are those recorded in tests/replay-expected.csv, on any architecture"
# Built with -ffp-contract=off, the models round alike on x86-64, arm64 and
# the rest.  A change that means to move these numbers (a model, an
# elevator, the report) writes the file anew with the two commands below.
{
	"$replay" --csv "$tmp/job.iolog"
	"$replay" --csv --depth 16 --model ssd "$tmp/job.iolog"
} >"$tmp/now.csv"
diff -u "$top_srcdir/tests/replay-expected.csv" "$tmp/now.csv" ||
	fail "the replay's numbers moved from tests/replay-expected.csv"

say "one row per elevator, every column filled"
elevators=$(foreach_elevator | xargs)
[ "$(head -1 "$tmp/a.csv")" = "elevator,requests,merges,MB/s,read_mean_ms,read_p50_ms,read_p99_ms,read_max_ms,write_mean_ms,write_p50_ms,write_p99_ms,write_max_ms,seek_sectors,barriers,errors" ] ||
	fail "CSV header: $(head -1 "$tmp/a.csv")"
[ "$(tail -n +2 "$tmp/a.csv" | cut -d, -f1 | xargs)" = "$elevators" ] || fail "rows are not $elevators"
awk -F, 'NF != 15 { exit 1 }' "$tmp/a.csv" || fail "a row without 15 columns"
grep -q "^# .*job.iolog: 3000 I/Os, issued at the trace's times; model hdd .*rpm=7200" "$tmp/a.txt" ||
	fail "the table's heading does not name the trace and the model"

say "barriers counted, every read and write's latency written once per elevator"
for e in $elevators; do
	[ "$(column "$tmp/a.csv" "$e" barriers)" = "$nr_sync" ] || fail "$e: barriers are not $nr_sync"
	[ "$(column "$tmp/a.csv" "$e" errors)" = 0 ] || fail "$e: errors in a good trace"
	[ "$(grep -c "^$e,\(read\|write\)," "$tmp/lat-a")" = "$nr_data" ] ||
		fail "$e: not $nr_data latencies"
done

say "sstf and clook move the head less than noop"
noop=$(column "$tmp/a.csv" noop seek_sectors)
for e in sstf clook; do
	seek=$(column "$tmp/a.csv" "$e" seek_sectors)
	[ "$seek" -lt "$noop" ] || fail "$e seeks $seek sectors, noop $noop"
done

say "a chosen elevator list and model; CSV has no comment"
"$replay" --csv -e deadline,sstf -m ssd:channels=4 "$tmp/job.iolog" >"$tmp/c.csv"
[ "$(tail -n +2 "$tmp/c.csv" | cut -d, -f1 | xargs)" = "deadline sstf" ] || fail "-e deadline,sstf"
grep -q '^#' "$tmp/c.csv" && fail "a comment in the CSV"

say "bad input: one line, exit 2"
expect_refusal "no-such.iolog" "$tmp/no-such.iolog"
expect_refusal "model: 'tape' is not none, hdd or ssd" -m tape "$tmp/job.iolog"
expect_refusal "model: hdd has no key 'heads'" -m hdd:heads=2 "$tmp/job.iolog"
expect_refusal "unknown elevator 'bogus'" -e deadline,bogus "$tmp/job.iolog"
expect_refusal "--depth: '0' is not a number" --depth 0 "$tmp/job.iolog"
expect_refusal "--capacity is below the trace's extent" --capacity 1M "$tmp/job.iolog"
expect_refusal "a TRACE is needed; try 'rqdisk-replay --help'"
expect_refusal "only one TRACE at a time, not b" a b
expect_refusal "unrecognized option '--bogus'; try 'rqdisk-replay --help'" --bogus "$tmp/job.iolog"
expect_refusal "option '--depth' requires an argument" "$tmp/job.iolog" --depth
printf 'fio version 3 iolog\n10 /dev/disk read 100 4096\n' >"$tmp/bad.iolog"
expect_refusal "bad.iolog:2: offset 100 length 4096 are not whole 512-byte sectors" "$tmp/bad.iolog"

say "hostile traces: refused in one line naming the file and line, never a hang"
printf 'fio version 3 iolog\n0 /f add\n2000 /f read 0 4096\n1000 /f read 8192 4096\n' >"$tmp/back.iolog"
expect_refusal "back.iolog:4: time 1000 us goes back before 2000 us" "$tmp/back.iolog"
printf 'fio version 2 iolog\n/f read 0 4096\n/f wait %s 0\n/f wait %s 0\n/f read 8192 4096\n' \
	18446744073709551 18446744073709551 >"$tmp/wrap.iolog"
expect_refusal "wrap.iolog:3: the waits add up past the longest trace replayed" "$tmp/wrap.iolog"
printf 'fio version 2 iolog\n/f read -512 4096\n' >"$tmp/neg.iolog"
expect_refusal "neg.iolog:2: '-512' is not a number" "$tmp/neg.iolog"
printf 'Q R 36028797018963960+16\n' | "$top_builddir/tests/bt-gen" "$tmp/far.blktrace.0"
expect_refusal "ends past 2^64 bytes" "$tmp/far"

say "an I/O the queue refuses is an error, not a latency"
printf 'Q R 0+8\nQ R 64+0\nQ W 128+8\n' | "$top_builddir/tests/bt-gen" "$tmp/zero.blktrace.0"
timeout 60 "$replay" --csv -e noop,deadline --latencies "$tmp/zero-lat" "$tmp/zero" >"$tmp/zero.csv" ||
	fail "a zero-length read stopped the replay"
for e in noop deadline; do
	[ "$(column "$tmp/zero.csv" "$e" errors)" = 1 ] || fail "$e: the refused read is not an error"
	[ "$(grep -c "^$e," "$tmp/zero-lat")" = 2 ] || fail "$e: the refused read has a latency"
done

say "--help and the man page name the same options"
"$replay" --help >"$tmp/help"
"$replay" --version | grep -q '^rqdisk-replay ' || fail "--version"
for opt in $(grep -oE -- '--[a-z-]+' "$tmp/help" | sort -u); do
	grep -qF -- "${opt//-/\\-}" "$top_srcdir/man/rqdisk-replay.1.in" ||
		fail "$opt is in --help but not in rqdisk-replay(1)"
done

say "--filter: the stack's order matters, and the same stack gives the same bytes"
# 200 I/Os, one every 2 ms, on an ssd that takes one at a time, 100 ms of delay.
write_iolog 200
md="--filter model:ssd:depth=1 --filter delay:ms=100"
dm="--filter delay:ms=100 --filter model:ssd:depth=1"
for order in md dm; do
	for run in 1 2; do
		# shellcheck disable=SC2086
		"$replay" -q --csv -e noop ${!order} --latencies "$tmp/$order-lat$run" \
			"$tmp/job.iolog" >"$tmp/$order-$run.csv" || fail "--filter $order: status $?"
	done
	cmp "$tmp/$order-1.csv" "$tmp/$order-2.csv" || fail "two runs of $order differ"
	cmp "$tmp/$order-lat1" "$tmp/$order-lat2" || fail "two runs of $order's latencies differ"
done
cmp -s "$tmp/md-1.csv" "$tmp/dm-1.csv" && fail "model over delay and delay over model agree"
# The model over the delay keeps its one request below for 100 ms each: the
# last of the 200 waits for nearly all the others, 20 s in all.
awk -F, '$3 > m { m = $3 } END { exit !(m >= 19000) }' "$tmp/md-lat1" ||
	fail "model over delay: the longest latency is below 19 s"
# The delay over the model delays them all at once: each 100 ms, and at most
# two more (a sync before it drains what came before, then its flush waits
# 100 ms); the ssd's 80 us each hardly adds to it.
awk -F, '$3 < 100 || $3 >= 400 { bad = 1 } END { exit bad }' "$tmp/dm-lat1" ||
	fail "delay over model: a latency outside 100-400 ms"
[ "$(wc -l <"$tmp/dm-lat1")" = "$(grep -cE ' (read|write) ' "$tmp/job.iolog")" ] ||
	fail "delay over model: not every latency written"

say "--model stands where it is given among the filters; the default model hdd is below them"
"$replay" -e noop --filter delay:ms=5 "$tmp/job.iolog" | head -1 >"$tmp/head1"
grep -q "; device delay:read=5 write=5 -> model:hdd .* -> sim$" "$tmp/head1" ||
	fail "default model not below the filter: $(cat "$tmp/head1")"
"$replay" -e noop --model ssd --filter delay:ms=5 "$tmp/job.iolog" | head -1 >"$tmp/head2"
grep -q "; device model:ssd .* -> delay:read=5 write=5 -> sim$" "$tmp/head2" ||
	fail "--model first is not the top: $(cat "$tmp/head2")"
"$replay" -e noop --model none --filter delay:ms=5 "$tmp/job.iolog" | head -1 >"$tmp/head3"
grep -q "; model none; device delay:read=5 write=5 -> sim$" "$tmp/head3" ||
	fail "--model none still has a model: $(cat "$tmp/head3")"

say "a bad --filter: one line, exit 2, naming every filter rqdisk --list does"
filters=$("$RQDISK" --list filters | awk '{ print $1 }' | paste -sd, | sed 's/,/, /g')
expect_refusal "--filter: no filter 'nosuch' (there are: $filters)" --filter nosuch "$tmp/job.iolog"
expect_refusal "--filter: delay: no key 'x'" --filter delay:x=1 "$tmp/job.iolog"
expect_refusal "--filter: delay: give ms=N" --filter delay "$tmp/job.iolog"
expect_refusal "--filter: write-cache: the device below moves no data" --filter write-cache "$tmp/job.iolog"
expect_refusal "--filter: model: 'tape' is not none, hdd or ssd" --filter model:tape "$tmp/job.iolog"
expect_refusal "--filter: more than 7 filters" $(printf -- '--filter delay:ms=1 %.0s' 1 2 3 4 5 6 7 8) \
	"$tmp/job.iolog"

say "requests at the same sector sort the same in every run: each elevator alone as among all"
# 400 4 KiB I/Os on five offsets, 32 at a time: the elevators' trees hold many ties
awk 'BEGIN {
	print "fio version 2 iolog"; print "/dev/x add"; print "/dev/x open"
	split("0 4096 8192 65536 1048576", offs, " "); x = 7
	for (i = 0; i < 400; i++) {
		x = (x * 1103515245 + 12345) % 2147483648
		printf "/dev/x %s %d 4096\n", (x % 2 ? "read" : "write"), offs[int(x / 2) % 5 + 1]
	}
	print "/dev/x close"
}' >"$tmp/ties.iolog"
"$replay" -q --csv -d 32 -e all "$tmp/ties.iolog" >"$tmp/ties-all" || fail "the ties trace failed"
for e in $elevators; do
	"$replay" -q --csv -d 32 -e "$e" "$tmp/ties.iolog" | tail -1 >"$tmp/ties-one"
	grep -qxF -f "$tmp/ties-one" "$tmp/ties-all" ||
		fail "$e alone: $(cat "$tmp/ties-one"); among all: $(grep "^$e," "$tmp/ties-all")"
done

say "the fault filter: the same seed fails the same requests, run after run; another seed others"
fault=fault:error=read,prob=100000
"$replay" -q --csv -e noop --filter "$fault,seed=1" "$tmp/job.iolog" >"$tmp/fault1" || fail "fault seed 1"
"$replay" -q --csv -e noop --filter "$fault,seed=1" "$tmp/job.iolog" >"$tmp/fault1b" || fail "fault again"
"$replay" -q --csv -e noop --filter "$fault,seed=2" "$tmp/job.iolog" >"$tmp/fault2" || fail "fault seed 2"
cmp -s "$tmp/fault1" "$tmp/fault1b" || fail "the same seed gave: $(cat "$tmp/fault1" "$tmp/fault1b")"
cmp -s "$tmp/fault1" "$tmp/fault2" && fail "seeds 1 and 2 failed the same requests"
errs=$(column "$tmp/fault1" noop errors)
nr_reads=$(grep -c ' read ' "$tmp/job.iolog")
# 10% of the reads, within a margin no seed should miss (binomial sigma about 14)
[ "$errs" -ge $((nr_reads / 10 - 60)) ] && [ "$errs" -le $((nr_reads / 10 + 60)) ] ||
	fail "$errs of $nr_reads reads failed at 10%"
expect_refusal "fault: drop_writes, corruption and error_file need data and files, which the device below has not" \
	--filter fault:up=1,down=1,drop_writes=1 "$tmp/job.iolog"
