#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-crash-marks.sh - a checker is told the marks a state has passed
# (RQDISK_CRASH_MARKS: NAME=COUNT in the order the names first appear, NAME
# spelled as in a state ID) at every kind of point, whatever the caller's
# environment held; and states of the same bytes at points with different
# marks before them are never folded, so a checker that holds the bytes to
# the application's promises gets the same verdict for every state with
# dedup as without: the promise that never reached the disk fails the run.
# The first part needs neither root nor FUSE (states as copies); the
# application's runs go through a mounted rqdisk disk.
source "$(dirname "$0")/functions.sh"
source "$(dirname "$0")/crash-functions.sh"

crash=$top_builddir/src/crash/rqdisk-crash
gen=$top_builddir/tests/crash-gen-log
commit=$top_srcdir/contrib/crash/commit-records
durable=$top_srcdir/contrib/crash/check-durability
[ -x "$crash" ] || fail "$crash is not built"
[ -x "$gen" ] || fail "$gen is not built"

make_tmpdir tmp
mkdir "$tmp/t"
export TMPDIR=$tmp/t
head -c $((16 * 512)) /dev/urandom >"$tmp/base"

# ---------------------------------------------------------------- what a checker sees

# Entries: 0 w, 1 mark a, 2 w, 3 F, 4 w fua, 5 mark b, 6 mark a, 7 w, 8 F,
# 9 mark "x,y" (spelled x%2Cy), 10 w, 11 w, 12 mark a, 13 w: every point
# at a position of its own.
cat >"$tmp/marks.script" <<'EOS'
write 0 1 0x10
mark a
write 1 1 0x11
flush
write 1 1 0x20 fua
mark b
mark a
write 2 1 0x30
flush
mark x,y
write 3 1 0x40
write 4 1 0x41
mark a
write 5 1 0x50
EOS
"$gen" <"$tmp/marks.script" >"$tmp/marks.log"
cat >"$tmp/tell" <<EOS
#!/bin/bash
echo "\$RQDISK_CRASH_STATE:\$RQDISK_CRASH_MARKS" >>"$tmp/told"
EOS
chmod +x "$tmp/tell"

say "RQDISK_CRASH_MARKS at flush, FUA, mark, entry and end points"
RQDISK_CRASH_MARKS=inherited run told --via copy --no-dedup --at flush --at fua --at mark:a \
	--at mark:x,y --at 11 "$tmp/base" "$tmp/marks.log" -- "$tmp/tell"
[ "$status" = 0 ] || fail "status $status"
cat >"$tmp/told.want" <<'EOS'
mark:a:a=1
flush:1:a=1
fua:1:a=1
mark:a#2:a=2 b=1
flush:2:a=2 b=1
mark:x%2Cy:a=2 b=1 x%2Cy=1
entry:11:a=2 b=1 x%2Cy=1
mark:a#3:a=3 b=1 x%2Cy=1
end:a=3 b=1 x%2Cy=1
EOS
sort "$tmp/told" >"$tmp/told.sorted"
sort "$tmp/told.want" >"$tmp/told.want.sorted"
diff -u "$tmp/told.want.sorted" "$tmp/told.sorted" || fail "the checkers were told other marks"
nothing_left

say "no marks passed: RQDISK_CRASH_MARKS is set and empty"
rm -f "$tmp/told"
run told0 --via copy --at 1 "$tmp/base" "$tmp/marks.log" -- "$tmp/tell"
[ "$status" = 0 ] || fail "status $status"
grep -qx "entry:1:" "$tmp/told" || fail "entry:1 was not told an empty RQDISK_CRASH_MARKS"

# ---------------------------------------------------------------- the same bytes, other promises

# Two commits marked, the second never written: the bytes at mark:c and at
# mark:c#2 are the same, the promises are not; end (past the last flush)
# has the bytes and the marks of mark:c#2.
cat >"$tmp/lie.script" <<'EOS'
write 0 1 0x31
flush
mark c
mark c
flush
EOS
"$gen" <"$tmp/lie.script" >"$tmp/lie.log"
truncate -s $((16 * 512)) "$tmp/zero"
cat >"$tmp/records" <<'EOS'
#!/bin/bash
# a state must hold a record (a sector not all zeros) per commit marked
k=0
for kv in $RQDISK_CRASH_MARKS; do [ "${kv%=*}" = c ] && k=${kv##*=}; done
n=$(od -An -v -tx1 -w512 "$1" | grep -c '[1-9a-f]')
[ "$n" -ge "$k" ] || { echo "$k commits, $n records"; exit 1; }
EOS
chmod +x "$tmp/records"
for dedup in "" --no-dedup; do
	say "a promise that never reached the disk fails the run ${dedup:-with dedup}"
	run lie$dedup --via copy --at mark:c $dedup --csv "$tmp/lie$dedup.csv" "$tmp/zero" "$tmp/lie.log" -- \
		"$tmp/records" {}
	[ "$status" = 1 ] || fail "${dedup:-dedup}: status $status, not 1"
	grep -qx "failed: mark:c#2 (exit 1)" "$tmp/lie$dedup.out" || fail "${dedup:-dedup}: mark:c#2 not named"
	grep -q "^mark:c,prefix,ok," "$tmp/lie$dedup.csv" || fail "${dedup:-dedup}: mark:c not ok"
done
grep -qx "dedup: 3 states, 1 folded into earlier identical states (same bytes, same marks passed)" \
	"$tmp/lie.out" || fail "the dedup line does not say what was folded, or what the key is"
grep -q '^end,prefix,failed,1,[0-9.]*,mark:c#2$' "$tmp/lie.csv" || fail "end not folded into mark:c#2"

# ---------------------------------------------------------------- the application's pattern

requires_root
requires_fuse
requires dd od

# commits N [FORGET]: base.N and log.N of commit-records N (forgetting FORGET)
commits()
{
	local name=$1 n=$2

	shift 2
	truncate -s 1M "$tmp/img.$name"
	rm -f "$tmp/base.$name" "$tmp/log.$name"
	mkdir -p "$tmp/mnt"
	start_rqdisk --filter "log-writes:file=$tmp/log.$name,base=$tmp/base.$name" "$tmp/img.$name" "$tmp/mnt"
	"$commit" "$@" "$tmp/mnt" "$n" || fail "commit-records $* $n failed"
	stop_rqdisk
}

# csv_verdicts FILE: ID,result per state, sorted
csv_verdicts()
{
	tail -n +2 "$1" | cut -d, -f1,3 | sort
}

say "the promise that never reached the disk, through the daemon: exit 1, mark:c#2 named"
truncate -s 16M "$tmp/img.c"
mkdir -p "$tmp/mnt"
start_rqdisk --filter "log-writes:file=$tmp/log.c,base=$tmp/base.c" "$tmp/img.c" "$tmp/mnt"
printf 1 | dd of="$tmp/mnt/disk" bs=512 conv=notrunc,fsync status=none
echo c >"$tmp/mnt/log/mark"
echo c >"$tmp/mnt/log/mark" # commit 2 "returns" but nothing reached the disk
stop_rqdisk
for dedup in "" --no-dedup; do
	run daemon$dedup --at mark:c $dedup "$tmp/base.c" "$tmp/log.c" -- "$tmp/records" {}
	[ "$status" = 1 ] || fail "the daemon's log ${dedup:-with dedup}: status $status, not 1"
	grep -qx "failed: mark:c#2 (exit 1)" "$tmp/daemon$dedup.out" ||
		fail "the daemon's log ${dedup:-with dedup}: mark:c#2 not named"
done

say "commit-records, every commit written: check-durability passes, dedup or not"
commits good 5
for dedup in "" --no-dedup; do
	run good$dedup --at flush --at mark:commit --drop 2 $dedup "$tmp/base.good" "$tmp/log.good" -- "$durable" {}
	[ "$status" = 0 ] || fail "good${dedup}: status $status"
done

say "commit-records forgets commits 3, 7 and 8 of 11: the same verdict for every state, dedup or not"
commits lie 11 --forget 3,7,8
for dedup in "" --no-dedup; do
	run lie11$dedup --at flush --at mark:commit --drop 2 $dedup --csv "$tmp/lie11$dedup.csv" \
		"$tmp/base.lie" "$tmp/log.lie" -- "$durable" {}
	[ "$status" = 1 ] || fail "lie11${dedup}: status $status, not 1"
	grep -qx "failed: mark:commit#3 (exit 1)" "$tmp/lie11$dedup.out" ||
		fail "lie11${dedup}: the first broken promise, mark:commit#3, is not named"
	grep -q "3 commits promised, record 3 is not on the disk" "$tmp/lie11$dedup.out" ||
		fail "lie11${dedup}: the checker's word is not shown"
done
diff -u <(csv_verdicts "$tmp/lie11--no-dedup.csv") <(csv_verdicts "$tmp/lie11.csv") ||
	fail "a state's verdict with dedup differs from its own"
[ "$(grep -c ',failed,' "$tmp/lie11.csv")" -gt 8 ] || fail "too few states failed to tell anything"
grep -q "^dedup: .* [1-9][0-9]* folded" "$tmp/lie11.out" || fail "nothing was folded: the test shows nothing"
