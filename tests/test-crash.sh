#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-crash.sh - rqdisk-crash end to end on a log tests/crash-gen-log writes:
# every state's bytes checked by a checker that knows them from the ID
# alone (via FUSE and via copies, two checkers at a time), the counts of the
# summary, failures and timeouts reported, --state -o, and bad input refused
# in one line with nothing left behind (no file, no mount).
source "$(dirname "$0")/functions.sh"
source "$(dirname "$0")/crash-functions.sh"
requires_root
requires_fuse

crash=$top_builddir/src/crash/rqdisk-crash
gen=$top_builddir/tests/crash-gen-log
[ -x "$crash" ] || fail "$crash is not built"
[ -x "$gen" ] || fail "$gen is not built"
ldd "$crash" | grep -q liburing && fail "rqdisk-crash links liburing"

make_tmpdir tmp
# rqdisk-crash's own temporary files go here, to see that none is left
mkdir "$tmp/t"
export TMPDIR=$tmp/t

cat >"$tmp/script" <<'EOS'
write 0 2 0x10
write 4 4 0x20
flush
write 2 2 0x30 fua
write 8 1 0x40
mark after-rename
discard 4 2
write 0 1 0x50
flush
write 1 1 0x60
EOS
"$gen" <"$tmp/script" >"$tmp/log"
head -c $((64 * 512)) /dev/urandom >"$tmp/base"

# The checker: the state's bytes must be the ones the ID names, replayed naively.
cat >"$tmp/check" <<EOS
#!/bin/bash
"$gen" --expect "\$RQDISK_CRASH_STATE" "$tmp/base" <"$tmp/script" >"\$2.\$\$"
cmp -s "\$1" "\$2.\$\$"
status=\$?
rm -f "\$2.\$\$"
[ \$status = 0 ] || echo "\$RQDISK_CRASH_STATE: wrong bytes"
exit \$status
EOS
chmod +x "$tmp/check"

# Points flush:1 (entries 0, 1 volatile), flush:2 (4, 6, 7; 3 is FUA), end (9):
# 3 prefix states, 2 + 3 + 1 with one write lost, and torn: entry 0 (2 units)
# after 1 unit, entry 1 (4 units) after 1, 2, 3.  end+drop:9 is entries 0 to
# 8 applied, as flush:2 is (entry 8 is a flush without data): folded into it.
for via in fuse copy; do
	say "every state right via $via, two checkers at a time"
	run "$via" --via "$via" -j 2 --drop 1 --torn --csv "$tmp/$via.csv" "$tmp/base" "$tmp/log" -- \
		"$tmp/check" {} "$tmp/t/expected"
	[ "$status" = 0 ] || fail "via $via: status $status"
	grep -q "states via $via, 2 checkers" "$tmp/$via.out" || fail "via $via: not said"
	[ "$(count "$via" prefix 2)/$(count "$via" prefix 3)/$(count "$via" prefix 4)" = 3/3/0 ] ||
		fail "via $via: prefix states miscounted"
	[ "$(count "$via" drop 2)/$(count "$via" drop 3)/$(count "$via" drop 4)/$(count "$via" drop 5)" = 6/5/0/1 ] ||
		fail "via $via: drop states miscounted"
	grep -qx "dedup: 13 states, 1 folded into earlier identical states (same bytes, same marks passed)" "$tmp/$via.out" ||
		fail "via $via: the folded state is not said"
	grep -q '^end+drop:9,drop,ok,0,0.000,flush:2$' "$tmp/$via.csv" ||
		fail "via $via: no row for the folded end+drop:9"
	[ "$(count "$via" torn 2)/$(count "$via" torn 4)" = 4/0 ] || fail "via $via: torn states miscounted"
	grep -q "^time: 13 states in" "$tmp/$via.out" || fail "via $via: no timing line"
	[ "$(wc -l <"$tmp/$via.csv")" = 14 ] || fail "via $via: not 13 CSV rows"
	grep -qx '"flush:2+drop:4",drop,ok,0,.*' "$tmp/$via.csv" && fail "via $via: a lone ID quoted"
	grep -q '^flush:2+drop:4,drop,ok,0,' "$tmp/$via.csv" || fail "via $via: no row for flush:2+drop:4"
	grep -q '^flush:1+torn:1@512/2,torn,ok,0,' "$tmp/$via.csv" || fail "via $via: no torn row"
	nothing_left
done

# Writes that start and end inside 4 KiB units: torn at the disk's units,
# each all old or all new.  Entry 0 touches units 0 and 1, entry 1 (aligned)
# unit 1 alone, entry 2 units 0 to 2: torn states 0@4096/1, 2@4096/1 and
# 2@4096/2, each as crash-gen-log --expect (written apart) builds it.
cat >"$tmp/unaligned" <<'EOS'
write 1 8 0x70
write 8 8 0x80
write 6 12 0x90
EOS
"$gen" <"$tmp/unaligned" >"$tmp/unaligned.log"
sed "s|$tmp/script|$tmp/unaligned|" "$tmp/check" >"$tmp/check-unaligned"
chmod +x "$tmp/check-unaligned"
say "--torn --atomic 4096 tears at the disk's aligned units"
run unaligned --via copy --torn --atomic 4096 --no-dedup --csv "$tmp/unaligned.csv" "$tmp/base" \
	"$tmp/unaligned.log" -- "$tmp/check-unaligned" {} "$tmp/t/expected"
[ "$status" = 0 ] || fail "--atomic 4096: status $status"
[ "$(tail -n +2 "$tmp/unaligned.csv" | cut -d, -f1 | sort | tr '\n' ' ')" = \
	"end end+torn:0@4096/1 end+torn:2@4096/1 end+torn:2@4096/2 " ] ||
	fail "--atomic 4096: not the torn states of the disk's units"
nothing_left

say "--progress: a line on stderr"
run progress --progress --drop 1 "$tmp/base" "$tmp/log" -- true
[ "$status" = 0 ] || fail "--progress: status $status"
grep -qx "rqdisk-crash: 9 of 9 states checked, 0 failed" "$tmp/progress.err" ||
	fail "--progress: no final progress line"

if command -v unshare >/dev/null; then
	say "no FUSE: one line says so, and the states are copies"
	status=0
	unshare -m bash -c 'mount --bind /dev/null /dev/fuse && exec "$@"' _ \
		"$crash" -j 2 --drop 1 "$tmp/base" "$tmp/log" -- "$tmp/check" {} "$tmp/t/expected" \
		>"$tmp/nofuse.out" 2>"$tmp/nofuse.err" || status=$?
	cat "$tmp/nofuse.out" "$tmp/nofuse.err"
	[ "$status" = 0 ] || fail "no FUSE: status $status"
	[ "$(wc -l <"$tmp/nofuse.err")" = 1 ] || fail "no FUSE: not one line on stderr"
	grep -q "FUSE is not available (.*): states are written as copies" "$tmp/nofuse.err" ||
		fail "no FUSE: the fallback is not said"
	grep -q "states via copy" "$tmp/nofuse.out" || fail "no FUSE: not via copy"
	nothing_left
	run fuseonly --via fuse "$tmp/base" "$tmp/log" -- true
	[ "$status" = 0 ] || fail "--via fuse where FUSE works: status $status"
fi

say "a checker that finds a state wrong: exit 1, the IDs and its last lines printed"
cat >"$tmp/picky" <<'EOS'
#!/bin/bash
echo "looking at $RQDISK_CRASH_STATE"
case $RQDISK_CRASH_STATE in *drop:*6*) echo "state lost entry 6"; exit 3 ;; esac
exit 0
EOS
chmod +x "$tmp/picky"
run picky -j 2 --drop 2 "$tmp/base" "$tmp/log" -- "$tmp/picky"
[ "$status" = 1 ] || fail "a failing checker: status $status, not 1"
[ "$(count picky drop 4)" = 3 ] || fail "not 3 drop states failed"
for id in "flush:2+drop:6" "flush:2+drop:4,6" "flush:2+drop:6,7"; do
	grep -qxF "failed: $id (exit 3)" "$tmp/picky.out" || fail "$id not reported"
done
grep -qxF "    | state lost entry 6" "$tmp/picky.out" || fail "the checker's last lines are missing"
nothing_left

say "a checker that hangs is killed at the timeout, its process group too"
cat >"$tmp/hang" <<'EOS'
#!/bin/bash
sleep 300 &
echo $! >"$1"
case $RQDISK_CRASH_STATE in flush:1) sleep 300 ;; esac
EOS
chmod +x "$tmp/hang"
run hang --timeout 3 "$tmp/base" "$tmp/log" -- "$tmp/hang" "$tmp/sleeper"
[ "$status" = 1 ] || fail "a hung checker: status $status, not 1"
grep -qxF "failed: flush:1 (timeout)" "$tmp/hang.out" || fail "the timeout is not reported"
[ "$(count hang prefix 4)" = 1 ] || fail "not one state failed"
sleep 0.5
# a zombie waiting for a reaper that does not come is dead enough
state=$(awk '{ print $3 }' "/proc/$(cat "$tmp/sleeper")/stat" 2>/dev/null || :)
[ -z "$state" ] || [ "$state" = Z ] || fail "the checker's background child survived ($state)"
nothing_left

say "--state ID -o FILE: the image of that state"
for id in flush:2 "flush:2+drop:4,7" "fua:1" "mark:after-rename" "end+drop:9" "flush:1+torn:1@512/3" entry:0; do
	run state --state "$id" -o "$tmp/state.img" "$tmp/base" "$tmp/log"
	[ "$status" = 0 ] || fail "--state $id: status $status"
	"$gen" --expect "$id" "$tmp/base" <"$tmp/script" >"$tmp/want.img"
	cmp "$tmp/state.img" "$tmp/want.img" || fail "--state $id: wrong bytes"
done
run state-check --state "flush:2+drop:6" "$tmp/base" "$tmp/log" -- "$tmp/check" {} "$tmp/t/expected"
[ "$status" = 0 ] || fail "--state with a checker: status $status"
[ "$(count state-check drop 3)" = 1 ] || fail "--state with a checker: not one drop state checked"
nothing_left


say "bad input and usage: one line, exit 2, nothing left behind"
cp "$tmp/log" "$tmp/badmagic"
printf 'XXXXXXXX' | dd of="$tmp/badmagic" bs=1 conv=notrunc status=none
cp "$tmp/log" "$tmp/badflags"
printf '\x40' | dd of="$tmp/badflags" bs=1 seek=$((512 * 4 + 16)) conv=notrunc status=none
head -c $((512 * 6)) "$tmp/log" >"$tmp/short"
refused badmagic "bad magic" "$tmp/base" "$tmp/badmagic" -- true
refused badflags "entry 1: unknown flags" "$tmp/base" "$tmp/badflags" -- true
refused short "entry 1: its 2048 bytes of data end past the log" "$tmp/base" "$tmp/short" -- true
head -c 2048 /dev/zero >"$tmp/smallbase"
refused smallbase "entry 1: sectors 4+4 end past the image" "$tmp/smallbase" "$tmp/log" -- true
refused badid "bad state ID 'flush:x'" --state flush:x -o "$tmp/x" "$tmp/base" "$tmp/log"
refused noid "state flush:9: no such point" --state flush:9 -o "$tmp/x" "$tmp/base" "$tmp/log"
refused notvolatile "not a volatile write" --state flush:2+drop:3 -o "$tmp/x" "$tmp/base" "$tmp/log"
sum=$(md5sum <"$tmp/base")
logsum=$(md5sum <"$tmp/log")
refused outbase "-o $tmp/base is BASE itself" --state flush:1 -o "$tmp/base" "$tmp/base" "$tmp/log"
ln "$tmp/log" "$tmp/loglink"
refused outlog "-o $tmp/loglink is LOG itself" \
	--state flush:1 -o "$tmp/loglink" "$tmp/base" "$tmp/log"
rm "$tmp/loglink"
[ "$(md5sum <"$tmp/base")" = "$sum" ] || fail "-o BASE changed BASE"
[ "$(md5sum <"$tmp/log")" = "$logsum" ] || fail "-o LOG changed LOG"
refused nocheck "a CHECK is needed" "$tmp/base" "$tmp/log"
# --state without a CHECK: what is wrong with the ID is said first, its
# syntax before any file is read, then whether the log has that state
refused badid-nocheck "bad state ID 'flush:x'" --state flush:x "$tmp/base" "$tmp/log"
refused badid-nolog "bad state ID 'flush:x'" --state flush:x "$tmp/base" "$tmp/nolog"
refused noid-nocheck "state flush:9: no such point" --state flush:9 "$tmp/base" "$tmp/log"
refused state-nocheck "a CHECK is needed" --state flush:1 "$tmp/base" "$tmp/log"
refused emptycheck "a CHECK is needed after --" "$tmp/base" "$tmp/log" --
refused nolog "BASE and LOG are needed" "$tmp/base" -- true
refused noprog "no-such-checker: no such program" "$tmp/base" "$tmp/log" -- no-such-checker
refused badat "--at takes" --at sometimes "$tmp/base" "$tmp/log" -- true
refused badatomic "--atomic must be a power of two" --atomic 1000 "$tmp/base" "$tmp/log" -- true
refused badvia "--via takes" --via nfs "$tmp/base" "$tmp/log" -- true
refused missing "No such file" "$tmp/base" "$tmp/nolog" -- true

say "SIGTERM in the middle: the checker killed, the mount and the files gone"
printf '#!/bin/bash\necho $$ >"$1"\nexec sleep 300\n' >"$tmp/sleeper.sh"
chmod +x "$tmp/sleeper.sh"
rm -f "$tmp/sleeper"
status=0
"$crash" --drop 2 "$tmp/base" "$tmp/log" -- "$tmp/sleeper.sh" "$tmp/sleeper" >"$tmp/term.out" 2>&1 &
pid=$!
for ((i = 0; i < 100; i++)); do
	[ -s "$tmp/sleeper" ] && break
	sleep 0.1
done
[ -s "$tmp/sleeper" ] || fail "the checker did not start"
grep -qF " $tmp/t/" /proc/mounts || fail "no FUSE mount while a checker runs"
kill -TERM $pid
wait $pid || status=$?
[ "$status" = 143 ] || fail "SIGTERM: status $status, not 143"
state=$(awk '{ print $3 }' "/proc/$(cat "$tmp/sleeper")/stat" 2>/dev/null || :)
[ -z "$state" ] || [ "$state" = Z ] || fail "the checker outlived SIGTERM ($state)"
nothing_left
echo "PASS: test-crash.sh"
