#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-crash-scale.sh - a run of rqdisk-crash split into N shards checks
# exactly the states of the whole run: the shards' CSVs joined are the
# whole run's CSV (N = 1, 2, 3 and more shards than states), --list names
# the states of the run or of a shard, bad K/N is refused in one line.
# Byte-identical states are folded, as many as the log was built to have,
# each folded state's bytes are those of the state it was folded into
# (cmp), and --no-dedup checks every state to the same verdicts.  The
# options of --help and of rqdisk-crash(1) are the same.  The tasks of
# contrib/crash/slurm-shards.sbatch, run by hand with Slurm's variables,
# and, with GNU parallel installed, contrib/crash/parallel-shards on the
# local host, split the run the same way.  100,000 mark points are listed
# in seconds.  States are copies (no root, no FUSE).
source "$(dirname "$0")/functions.sh"
source "$(dirname "$0")/crash-functions.sh"

crash=$top_builddir/src/crash/rqdisk-crash
gen=$top_builddir/tests/crash-gen-log
[ -x "$crash" ] || fail "$crash is not built"
[ -x "$gen" ] || fail "$gen is not built"

make_tmpdir tmp
mkdir "$tmp/t"
export TMPDIR=$tmp/t

# Points flush:1 (entries 0, 1 volatile), flush:2 (3, 4, 5), end (7, 8, 9).
# Entry 4 writes again, whole, the sectors of entry 3: at flush:2, entry 3
# lost (+drop:3) or torn after its first sector (+torn:3@512/1) reads as
# flush:2 itself, and those two fold into it.  Entry 8 writes again the
# second of entry 7's four sectors: entry 7 torn after two sectors
# (+torn:7@512/2) reads as torn after one, and folds into that one.  Nothing
# else does: every other lost or torn write leaves a sector that no later
# write of the state covers.
cat >"$tmp/script" <<'EOS'
write 0 2 0x10
write 4 4 0x20
flush
write 8 2 0x30
write 8 2 0x31
write 12 1 0x40
flush
write 0 4 0x50
write 1 1 0x60
write 16 8 0x70
EOS
"$gen" <"$tmp/script" >"$tmp/log"
head -c $((64 * 512)) /dev/urandom >"$tmp/base"
folded_expected=3

# The checker fails a state where entry 3's data shows (entry 4 lost or torn):
# some states fail, so that verdicts, not only rows, must join right.
cat >"$tmp/check" <<'EOS'
#!/bin/bash
[ "$(od -An -tx1 -j $((8 * 512)) -N1 "$1" | tr -d ' ')" != 30 ]
EOS
chmod +x "$tmp/check"

opts=(--via copy --drop 1 --torn)

# rows CSV: its rows without the header and the seconds column, sorted
rows()
{
	tail -n +2 "$1" | cut -d, -f1-4,6 | LC_ALL=C sort
}

say "the whole run: states made, $folded_expected folded, some failed"
run whole "${opts[@]}" --csv "$tmp/whole.csv" "$tmp/base" "$tmp/log" -- "$tmp/check" {}
[ "$status" = 1 ] || fail "the whole run: status $status, not 1 (some state fails)"
made=$(awk '$1 ~ /^(prefix|drop|torn|sample)$/ { n += $2 } END { print n }' "$tmp/whole.out")
folded=$(awk '$1 ~ /^(prefix|drop|torn|sample)$/ { n += $5 } END { print n }' "$tmp/whole.out")
checked=$((made - folded))
[ "$folded" = "$folded_expected" ] || fail "the whole run: $folded folded, not $folded_expected"
grep -qx "dedup: $made states, $folded folded into earlier identical states (same bytes, same marks passed)" "$tmp/whole.out" ||
	fail "the whole run: the dedup line is wrong"
[ "$(rows "$tmp/whole.csv" | wc -l)" = "$made" ] || fail "the whole run: not $made CSV rows"
grep -qx 'flush:2+drop:3,drop,ok,0,0.000,flush:2' "$tmp/whole.csv" ||
	fail "the whole run: flush:2+drop:3 is not folded into flush:2"
grep -qx 'flush:2+torn:3@512/1,torn,ok,0,0.000,flush:2' "$tmp/whole.csv" ||
	fail "the whole run: flush:2+torn:3@512/1 is not folded into flush:2"
grep -qx 'end+torn:7@512/2,torn,ok,0,0.000,end+torn:7@512/1' "$tmp/whole.csv" ||
	fail "the whole run: end+torn:7@512/2 is not folded into end+torn:7@512/1"
grep -q '^flush:2+drop:4,drop,failed,1,' "$tmp/whole.csv" ||
	fail "the whole run: flush:2+drop:4 did not fail"
rows "$tmp/whole.csv" >"$tmp/whole.rows"
nothing_left

say "--list names the states of the whole run's CSV, in a stable order"
run list --list "${opts[@]}" "$tmp/base" "$tmp/log"
[ "$status" = 0 ] || fail "--list: status $status"
[ ! -s "$tmp/list.err" ] || fail "--list: said something on stderr"
cut -d, -f1 "$tmp/whole.rows" | LC_ALL=C sort >"$tmp/whole.ids"
LC_ALL=C sort "$tmp/list.out" | cmp - "$tmp/whole.ids" || fail "--list is not the CSV's IDs"
run list2 --list "${opts[@]}" "$tmp/base" "$tmp/log"
cmp "$tmp/list.out" "$tmp/list2.out" || fail "--list: another order the second time"
run listnd --list --no-dedup "${opts[@]}" "$tmp/base" "$tmp/log"
cmp "$tmp/list.out" "$tmp/listnd.out" || fail "--list --no-dedup: not the same states"

# More shards than states to check: some shards have none.
prime=$checked
is_prime()
{
	local d

	for ((d = 2; d * d <= $1; d++)); do
		(($1 % d)) || return 1
	done
	(($1 > 1))
}
until ((prime > made)) && is_prime "$prime"; do
	prime=$((prime + 1))
done

for n in 1 2 3 "$prime"; do
	say "$n shards: their CSVs joined are the whole run's, each shard's --list its rows"
	: >"$tmp/joined.rows"
	: >"$tmp/joined.ids"
	worst=0
	empty=0
	for ((k = 1; k <= n; k++)); do
		run "s$k" --shard "$k/$n" "${opts[@]}" --csv "$tmp/s$k.csv" "$tmp/base" "$tmp/log" -- \
			"$tmp/check" {} >/dev/null
		[ "$status" = 0 ] || [ "$status" = 1 ] || fail "shard $k/$n: status $status"
		((status > worst)) && worst=$status
		head -n 1 "$tmp/s$k.csv" | cmp - <(head -n 1 "$tmp/whole.csv") ||
			fail "shard $k/$n: another CSV header"
		rows "$tmp/s$k.csv" >"$tmp/s$k.rows"
		cat "$tmp/s$k.rows" >>"$tmp/joined.rows"
		# the shard's exit status is that of its states
		if grep -q ',failed,' "$tmp/s$k.rows"; then
			[ "$status" = 1 ] || fail "shard $k/$n: a state failed, status $status"
		else
			[ "$status" = 0 ] || fail "shard $k/$n: no state failed, status $status"
		fi
		if [ ! -s "$tmp/s$k.rows" ]; then
			empty=$((empty + 1))
			grep -qF "rqdisk-crash: shard $k/$n has no states" "$tmp/s$k.err" ||
				fail "shard $k/$n: empty, and not said"
		fi
		grep -q "^shard $k/$n: " "$tmp/s$k.out" || fail "shard $k/$n: the summary does not say it"
		run "l$k" --list --shard "$k/$n" "${opts[@]}" "$tmp/base" "$tmp/log"
		[ "$status" = 0 ] || fail "--list --shard $k/$n: status $status"
		LC_ALL=C sort "$tmp/l$k.out" | cmp - <(cut -d, -f1 "$tmp/s$k.rows" | LC_ALL=C sort) ||
			fail "--list --shard $k/$n: not the IDs of the shard's CSV"
		cat "$tmp/l$k.out" >>"$tmp/joined.ids"
	done
	LC_ALL=C sort "$tmp/joined.rows" | cmp - "$tmp/whole.rows" ||
		fail "$n shards: joined, not the whole run's CSV"
	LC_ALL=C sort "$tmp/joined.ids" | cmp - "$tmp/whole.ids" ||
		fail "$n shards: their lists joined are not the whole run's"
	[ "$worst" = 1 ] || fail "$n shards: none exits 1 as the whole run does"
	if [ "$n" = "$prime" ]; then
		[ "$empty" = $((n - checked)) ] || fail "$n shards: $empty empty, not $((n - checked))"
	fi
	nothing_left
done

say "bad K/N is refused in one line, exit 2"
refused shard0 "--shard: K counts from 1, not 0, in 0/3" --shard 0/3 "${opts[@]}" \
	"$tmp/base" "$tmp/log" -- true
refused shard4 "--shard: K is past N in 4/3" --shard 4/3 "${opts[@]}" "$tmp/base" "$tmp/log" -- true
refused shardn0 "--shard: N, the number of shards, is 0 in 1/0" --shard 1/0 "${opts[@]}" \
	"$tmp/base" "$tmp/log" -- true
for junk in x 1 1/ /3 1/3x " 1/3" -1/3 1/-3 1.0/3 1//3 1/99999999999999999999; do
	refused junk "--shard takes K/N" --shard "$junk" "${opts[@]}" "$tmp/base" "$tmp/log" -- true
done
refused empty "N up to 1000000), not ''; try" --list --shard "" "$tmp/base" "$tmp/log"
refused withstate "--shard does not go with --state" --shard 1/2 --state end -o "$tmp/x.img" \
	"$tmp/base" "$tmp/log"
refused liststate "--list does not go with --state" --list --state end "$tmp/base" "$tmp/log"

say "every folded state has the bytes of the state it was folded into"
n=0
while IFS=, read -r id class result exit seconds same_as; do
	[ -n "$same_as" ] || continue
	run a --state "$id" -o "$tmp/a.img" "$tmp/base" "$tmp/log"
	[ "$status" = 0 ] || fail "--state $id: status $status"
	run b --state "$same_as" -o "$tmp/b.img" "$tmp/base" "$tmp/log"
	[ "$status" = 0 ] || fail "--state $same_as: status $status"
	cmp "$tmp/a.img" "$tmp/b.img" || fail "$id is folded into $same_as, but their bytes differ"
	rm -f "$tmp/a.img" "$tmp/b.img"
	n=$((n + 1))
done < <(tail -n +2 "$tmp/whole.csv")
[ "$n" = "$folded_expected" ] || fail "$n folded states compared, not $folded_expected"

say "--no-dedup checks every state, to the same verdicts"
run nodedup --no-dedup "${opts[@]}" --csv "$tmp/nodedup.csv" "$tmp/base" "$tmp/log" -- \
	"$tmp/check" {}
[ "$status" = 1 ] || fail "--no-dedup: status $status"
grep -q '^dedup:' "$tmp/nodedup.out" && fail "--no-dedup: a dedup line"
awk '$1 ~ /^(prefix|drop|torn|sample)$/ { m += $2; c += $3; f += $5 } END { print m, c, f }' \
	"$tmp/nodedup.out" | grep -qx "$made $made 0" || fail "--no-dedup: not $made states, all checked"
cut -d, -f1-4 "$tmp/whole.rows" | cmp - <(rows "$tmp/nodedup.csv" | cut -d, -f1-4) ||
	fail "--no-dedup: other verdicts"
[ -z "$(rows "$tmp/nodedup.csv" | cut -d, -f5 | sort -u)" ] || fail "--no-dedup: a same_as"
nothing_left

say "the options of --help are those of rqdisk-crash(1)"
"$crash" --help | grep -oE '^ +(-[a-zA-Z], )?--[a-z-]+' | grep -oE -- '--[a-z-]+' | sort -u \
	>"$tmp/help.opts"
man=$top_srcdir/man/rqdisk-crash.1.in
sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$man" | awk 'tp { print; tp = 0 } /^\.TP/ { tp = 1 }' |
	sed -e 's/\\-/-/g' | grep -oE -- '--[a-z-]+' | sort -u >"$tmp/man.opts"
diff "$tmp/help.opts" "$tmp/man.opts" || fail "--help and rqdisk-crash(1)'s OPTIONS differ"
[ -s "$tmp/help.opts" ] || fail "no options read from --help"

say "contrib/crash/slurm-shards.sbatch, its tasks run by hand as Slurm would run them"
for ((k = 1; k <= 3; k++)); do
	status=0
	(cd "$tmp" && SLURM_ARRAY_TASK_ID=$k SLURM_ARRAY_TASK_COUNT=3 SLURM_CPUS_PER_TASK=2 \
		CHECK=$tmp/check RQDISK_CRASH=$crash \
		"$top_srcdir/contrib/crash/slurm-shards.sbatch" base log "${opts[@]}") \
		>"$tmp/slurm.out" 2>&1 || status=$?
	[ "$status" = 0 ] || [ "$status" = 1 ] || { cat "$tmp/slurm.out"; fail "slurm task $k: status $status"; }
	grep -q "^shard $k/3: " "$tmp/slurm.out" || fail "slurm task $k: not shard $k/3"
done
tail -q -n +2 "$tmp"/crash-shard-{1,2,3}.csv | cut -d, -f1-4,6 | LC_ALL=C sort |
	cmp - "$tmp/whole.rows" || fail "slurm-shards.sbatch: the tasks' CSVs are not the whole run's"
nothing_left

say "contrib/crash/parallel-shards on the local host"
if ! command -v parallel >/dev/null; then
	echo "SKIP (that part): GNU parallel is not installed"
else
	for n in 3 "$prime"; do
		rm -f "$tmp/par.csv"
		status=0
		RQDISK_CRASH=$crash "$top_srcdir/contrib/crash/parallel-shards" -S : -n "$n" -o "$tmp/par.csv" \
			"${opts[@]}" "$tmp/base" "$tmp/log" -- "$tmp/check" {} >"$tmp/par.out" 2>&1 ||
			status=$?
		cat "$tmp/par.out"
		[ "$status" = 1 ] || fail "parallel-shards -n $n: status $status, not 1"
		head -n 1 "$tmp/par.csv" | cmp - <(head -n 1 "$tmp/whole.csv") ||
			fail "parallel-shards -n $n: another CSV header"
		rows "$tmp/par.csv" | cmp - "$tmp/whole.rows" ||
			fail "parallel-shards -n $n: not the whole run's CSV"
		nothing_left
	done
fi
# 100,000 marks, a write every ten and a flush every thousand: each mark
# point is found, and its key taken, without a walk of every mark or of the
# whole image (quadratic, that took minutes: 40,000 marks took 34 s).
say "100,000 mark points list in seconds, with dedup and without"
awk 'BEGIN { for (i = 0; i < 100000; i++) { if (i % 10 == 0) print "write " i % 2000 " 1 " i % 250;
	print "mark c"; if (i % 1000 == 999) print "flush" } }' | "$gen" >"$tmp/marks.log"
truncate -s 2M "$tmp/marks.base"
for dedup in "" --no-dedup; do
	start=$(date +%s)
	n=$(timeout 60 "$crash" --list --at mark:c $dedup "$tmp/marks.base" "$tmp/marks.log" | grep -c '^mark:c') ||
		fail "--list of 100,000 marks ${dedup:-with dedup}: did not end within 60 s"
	secs=$(($(date +%s) - start))
	echo "100,000 marks listed ${dedup:-with dedup} in $secs s"
	[ "$n" = 100000 ] || fail "--list of 100,000 marks ${dedup:-with dedup}: $n mark points"
	[ "$secs" -le 20 ] || fail "--list of 100,000 marks ${dedup:-with dedup}: $secs s, not seconds"
done
rm -f "$tmp/marks.log"

# A flush, then 3,000 writes no flush covers: --drop 2 lists 4.5 million states.
# (SIGTERM: a shell without job control starts a job in the background with SIGINT ignored)
say "SIGTERM ends a long --list at once, as it ends any tool"
awk 'BEGIN { print "flush"; for (i = 0; i < 3000; i++) print "write " i % 1000 " 1 1" }' |
	"$gen" >"$tmp/many.log"
"$crash" --list --drop 2 "$tmp/marks.base" "$tmp/many.log" >/dev/null &
lister=$!
sleep 0.5
kill -TERM "$lister"
for ((i = 0; i < 100; i++)); do
	kill -0 "$lister" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$lister" 2>/dev/null; then
	kill -KILL "$lister"
	fail "--list went on for 10 s after SIGTERM"
fi
status=0
wait "$lister" || status=$?
[ "$status" = 143 ] || fail "--list ended by SIGTERM: status $status, not 143"
rm -f "$tmp/many.log"

echo "PASS: crash shards and dedup"
