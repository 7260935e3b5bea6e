#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-compare.sh - contrib/compare-elevators in replay mode: one row per elevator in
# rqdisk-replay's columns, a CDF file per elevator that ends at 1 with one point per
# I/O, and the two plots as PNG files; a bad option is one line and exit 1.  With
# no RQDISK_REPLAY it finds the program as a checkout's user has it: in the
# directory it is run from (a build directory), in a build directory of the
# checkout it is in (_build/quickstart, as contrib/quickstart.sh builds), then
# on PATH; and it says which it took.
source "$(dirname "$0")/functions.sh"
requires gnuplot column

compare=$top_srcdir/contrib/compare-elevators
export RQDISK_REPLAY=$top_builddir/src/tools/rqdisk-replay
make_tmpdir tmp

# 600 I/Os, 4 KiB, 70% reads, one every 5 ms, a sync every 100
awk 'BEGIN {
	x = 1
	print "fio version 3 iolog"
	print "0 /dev/disk add"
	for (i = 1; i <= 600; i++) {
		x = (x * 16807) % 2147483647
		if (i % 100 == 0)
			print i * 5000, "/dev/disk", "sync", 0, 0
		else
			print i * 5000, "/dev/disk", (x % 10 < 7) ? "read" : "write", (x % 262144) * 4096, 4096
	}
}' >"$tmp/job.iolog"

say "compare-elevators --replay: noop, sstf and deadline on the default hdd"
"$compare" -e noop,sstf,deadline --replay "$tmp/job.iolog" -o "$tmp/out" ||
	fail "compare-elevators failed"
out=$tmp/out
head -1 "$out/summary.csv" | grep -q '^elevator,requests,merges,MB/s,read_mean_ms,' ||
	fail "summary.csv header: $(head -1 "$out/summary.csv")"
[ "$(cut -d, -f1 "$out/summary.csv" | tail -n +2 | tr '\n' ' ')" = "noop sstf deadline " ] ||
	fail "summary.csv rows: $(cut -d, -f1 "$out/summary.csv" | tr '\n' ' ')"
for e in noop sstf deadline; do
	[ "$(wc -l <"$out/cdf-$e.dat")" = 594 ] || fail "cdf-$e.dat has not 594 points"
	[ "$(tail -1 "$out/cdf-$e.dat" | cut -d' ' -f2)" = 1 ] || fail "cdf-$e.dat does not end at 1"
done
for p in latency-cdf throughput; do
	[ "$(head -c 8 "$out/$p.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
		fail "$p.png is not a PNG"
done
grep -q '^sstf ' "$out/summary.txt" || fail "summary.txt has no sstf line"

say "compare-elevators --replay with no -e: every elevator of the registry, in a row each"
"$compare" --replay "$tmp/job.iolog" -o "$tmp/all" -t 1 >/dev/null || fail "compare-elevators (all) failed"
want=$(foreach_elevator | sort | tr '\n' ' ')
got=$(cut -d, -f1 "$tmp/all/summary.csv" | tail -n +2 | sort | tr '\n' ' ')
[ "$got" = "$want" ] || fail "default rows '$got', not the registry's '$want'"
for e in $want; do
	[ -s "$tmp/all/lat-$e.txt" ] || fail "no latencies for $e"
done

# A build directory may be anywhere (distcheck's is not under the sources),
# so the checkout's layout is copied: the script in contrib/ of a directory
# whose _build/quickstart holds the programs, run from elsewhere.
replayer=$RQDISK_REPLAY
unset RQDISK_REPLAY
# uses NAME: stderr of the last run names NAME as the replayer it took
uses()
{
	grep -qF "rqdisk-replay: $1" "$tmp/err" || fail "did not take $1: $(cat "$tmp/err")"
}
# compare DIR: compare-elevators run from DIR with no variables, PATH without rqdisk
compare()
{
	(cd "$1" && PATH=$tmp/path "$tmp/co/contrib/compare-elevators" -e noop \
		--replay "$tmp/job.iolog" -o "$tmp/out2") >/dev/null 2>"$tmp/err" ||
		fail "compare-elevators from $1 with no RQDISK_REPLAY failed: $(cat "$tmp/err")"
}
mkdir -p "$tmp/co/contrib" "$tmp/co/_build/quickstart/src/tools" "$tmp/path" "$tmp/elsewhere"
cp "$compare" "$tmp/co/contrib/"
for p in awk bash cat column cut dirname gnuplot grep mkdir python3 rm sort tr; do
	ln -s "$(command -v "$p")" "$tmp/path/$p"
done

say "no RQDISK_REPLAY, run from a build directory: that directory's"
compare "$top_builddir"
uses "$(realpath "$top_builddir/src/tools/rqdisk-replay")"

say "no RQDISK_REPLAY, run from elsewhere: the checkout's _build/quickstart"
ln -s "$(realpath "$replayer")" "$tmp/co/_build/quickstart/src/tools/rqdisk-replay"
compare "$tmp/elsewhere"
uses "$tmp/co/_build/quickstart/src/tools/rqdisk-replay"
grep -q '^noop,' "$tmp/out2/summary.csv" || fail "no noop row from the found replayer"

say "no build directory: PATH's"
rm "$tmp/co/_build/quickstart/src/tools/rqdisk-replay"
ln -s "$(realpath "$replayer")" "$tmp/path/rqdisk-replay"
compare "$tmp/elsewhere"
uses "$tmp/path/rqdisk-replay"

say "none at all: one line naming the program and the variable, exit 1"
rm "$tmp/path/rqdisk-replay"
status=0
(cd "$tmp/elsewhere" && PATH=$tmp/path "$tmp/co/contrib/compare-elevators" -e noop \
	--replay "$tmp/job.iolog" -o "$tmp/out2") 2>"$tmp/err" || status=$?
[ "$status" = 1 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q 'rqdisk-replay.*RQDISK_REPLAY' "$tmp/err" ||
	fail "no replayer: status $status, $(cat "$tmp/err")"

say "--help says where the programs are looked for"
grep -q '_build/quickstart' <<<"$("$compare" --help)" || fail "--help does not say where it looks"

say "a bad option: one line, exit 1"
status=0
"$compare" --bogus 2>"$tmp/err" || status=$?
[ "$status" = 1 ] && [ "$(wc -l <"$tmp/err")" = 1 ] || fail "--bogus: status $status, $(cat "$tmp/err")"
