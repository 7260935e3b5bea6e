#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-compare-live.sh - contrib/compare-elevators live, through rqdisk and fio: the
# named workloads are contrib/fio's jobs, a line each; --workload runs one, with a
# row per elevator and fio reporting group in groups.csv; the figure a job names is
# tabled and plotted with each elevator's value over the best (the highest MB/s, the
# lowest runtime); an unknown or malformed name is one line and exit 1.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires fio gnuplot column python3

compare=$top_srcdir/contrib/compare-elevators
export RQDISK
make_tmpdir tmp

say "--list-workloads: every contrib/fio job, by name, with its title"
want=$(cd "$top_srcdir/contrib/fio" && ls -- *.fio | sed 's/\.fio$//' | tr '\n' ' ')
got=$("$compare" --list-workloads | awk '{ printf "%s ", $1 }')
[ "$got" = "$want" ] || fail "--list-workloads names '$got', not '$want'"
for w in comm_startup_lat interleaved_io seq_readers; do
	"$compare" --list-workloads | grep -q "^$w  *the S suite's" || fail "$w is not listed as the S suite's"
done

say "--workload interleaved_io, noop and bfq: a row per elevator and group, the figure"
"$compare" -w interleaved_io -e noop,bfq -t 1 -s 64M -m ssd -o "$tmp/out" >/dev/null 2>"$tmp/err" ||
	fail "compare-elevators -w interleaved_io failed: $(cat "$tmp/err")"
out=$tmp/out
[ "$(head -1 "$out/groups.csv")" = "elevator,group,MB/s,ios,runtime_ms,clat_p50_ms,clat_p99_ms" ] ||
	fail "groups.csv header: $(head -1 "$out/groups.csv")"
[ "$(tail -n +2 "$out/groups.csv" | cut -d, -f1,2 | tr '\n' ' ')" = \
	"noop,one-reader noop,interleaved bfq,one-reader bfq,interleaved " ] ||
	fail "groups.csv rows: $(tail -n +2 "$out/groups.csv" | cut -d, -f1,2 | tr '\n' ' ')"
awk -F, 'NR > 1 && !($3 > 0 && $4 > 0) { exit 1 }' "$out/groups.csv" ||
	fail "a group did no I/O: $(cat "$out/groups.csv")"
# the figure: the interleaved group's MB/s, read back from groups.csv
for e in noop bfq; do
	g=$(awk -F, -v e="$e" '$1 == e && $2 == "interleaved" { print $3 }' "$out/groups.csv")
	f=$(awk -F, -v e="$e" '$1 == e { print $2 }' "$out/figure.csv")
	[ -n "$g" ] && [ "$g" = "$f" ] || fail "figure.csv has $e at '$f', groups.csv '$g'"
done
best=$(awk -F, 'NR > 1 && (!n++ || $2 > b) { b = $2; e = $1 } END { print e }' "$out/figure.csv")
[ "$(awk -F, -v e="$best" '$1 == e { print $3 }' "$out/figure.csv")" = 1.00 ] ||
	fail "the best elevator, $best, is not at 1.00: $(cat "$out/figure.csv")"
awk -F, 'NR > 1 && $3 > 1 { exit 1 }' "$out/figure.csv" || fail "a value above the best: $(cat "$out/figure.csv")"
[ "$(head -1 "$out/figure.csv")" = "elevator,MB/s,x_best" ] || fail "figure.csv header: $(head -1 "$out/figure.csv")"
grep -q '^bfq ' "$out/figure.txt" || fail "figure.txt has no bfq line"
for p in figure latency-cdf throughput; do
	[ "$(head -c 8 "$out/$p.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
		fail "$p.png is not a PNG"
done

say "a runtime figure: the lowest is the best"
cat >"$tmp/think.fio" <<JOB
# think.fio - two groups of 8 reads; the figure is the second's runtime
# figure: thinker runtime_ms
[global]
filename=\${DISK}
ioengine=psync
direct=1
bs=4k
[first]
rw=read
number_ios=8
[thinker]
stonewall
new_group
rw=read
number_ios=8
thinktime=5000
JOB
"$compare" -e noop,deadline -t 1 -s 64M -m ssd -o "$tmp/think" "$tmp/think.fio" >/dev/null 2>"$tmp/err" ||
	fail "compare-elevators on think.fio failed: $(cat "$tmp/err")"
awk -F, 'NR > 1 && $2 < 40 { exit 1 }' "$tmp/think/figure.csv" ||
	fail "8 reads with 5 ms of thought each took under 40 ms: $(cat "$tmp/think/figure.csv")"
best=$(awk -F, 'NR > 1 && (!n++ || $2 < b) { b = $2; e = $1 } END { print e }' "$tmp/think/figure.csv")
[ "$(awk -F, -v e="$best" '$1 == e { print $3 }' "$tmp/think/figure.csv")" = 1.00 ] ||
	fail "the fastest, $best, is not at 1.00: $(cat "$tmp/think/figure.csv")"
awk -F, 'NR > 1 && $3 < 1 { exit 1 }' "$tmp/think/figure.csv" ||
	fail "a runtime below the best: $(cat "$tmp/think/figure.csv")"

say "a figure naming a group fio did not report: one line, exit 1"
sed 's/^# figure: thinker/# figure: nobody/' "$tmp/think.fio" >"$tmp/nobody.fio"
status=0
"$compare" -e noop -t 1 -s 64M -m ssd -o "$tmp/nobody" "$tmp/nobody.fio" >/dev/null 2>"$tmp/err" || status=$?
[ "$status" = 1 ] && tail -1 "$tmp/err" | grep -q "names group 'nobody', which fio did not report" ||
	fail "a figure of no group: status $status, $(cat "$tmp/err")"

say "an unknown or malformed workload name: one line, exit 1"
for w in nope ../contrib/fio/seq_readers 'a b'; do
	status=0
	"$compare" -w "$w" 2>"$tmp/err" >/dev/null || status=$?
	[ "$status" = 1 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "no workload" "$tmp/err" ||
		fail "-w '$w': status $status, $(cat "$tmp/err")"
done
echo PASS
