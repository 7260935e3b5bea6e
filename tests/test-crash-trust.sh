#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-crash-trust.sh - rqdisk-crash never reads as an all-clear what it did
# not check: points past a gap in the log (logging off, from the start
# too; a flush that failed) are skipped, said, and the exit status is 3;
# an rqdisk log that stopped, or lacks its end mark, has its states
# checked and exits 3, saying so; a log of no rqdisk's is read as before;
# a requested point that matches nothing (a mark that is not there, no FUA
# entries, an empty mark name) is refused; a log truncated during the run
# ends it in one line, not with SIGBUS; bad state IDs say what is wrong
# with them.  States are copies here (no root, no
# FUSE); the truncation is tried through FUSE too where it works.
source "$(dirname "$0")/functions.sh"
source "$(dirname "$0")/crash-functions.sh"

crash=$top_builddir/src/crash/rqdisk-crash
gen=$top_builddir/tests/crash-gen-log
[ -x "$crash" ] || fail "$crash is not built"
[ -x "$gen" ] || fail "$gen is not built"

make_tmpdir tmp
mkdir "$tmp/t"
export TMPDIR=$tmp/t

head -c $((64 * 512)) /dev/urandom >"$tmp/base"

# ---------------------------------------------------------------- gaps

# Logging off from entry 4 to entry 5: the write the daemon did meanwhile
# is not in the log, so every state after entry 5 misses it.
cat >"$tmp/gap.script" <<'EOS'
write 0 2 0x10
flush
write 4 1 0x20
flush
mark rqdisk-log-disabled
mark rqdisk-log-enabled
write 8 1 0x30
flush
write 9 1 0x40
EOS
"$gen" <"$tmp/gap.script" >"$tmp/gap.log"

say "points past a gap are not checked, the run says so, and exits 3"
run gap --via copy "$tmp/base" "$tmp/gap.log" -- true
[ "$status" = 3 ] || fail "a gap: status $status, not 3"
grep -qxF "rqdisk-crash: 2 points after entry 4 skipped: logging was off from entry 4 to 5 (writes missing); --past-gaps checks them" \
	"$tmp/gap.err" || fail "a gap: the skip is not said on stderr"
[ "$(count gap prefix 3)" = 2 ] || fail "a gap: not 2 states checked"
grep -q "^not checked: 2 points past a gap" "$tmp/gap.out" || fail "a gap: the summary does not say what was not checked"
nothing_left

say "--past-gaps checks them all, but their states miss writes: not an all-clear, exit 3"
run pastgaps --via copy --past-gaps "$tmp/base" "$tmp/gap.log" -- true
[ "$status" = 3 ] || fail "--past-gaps: status $status, not 3"
[ "$(count pastgaps prefix 3)" = 4 ] || fail "--past-gaps: not 4 states checked"
grep -q "^not checked" "$tmp/pastgaps.out" && fail "--past-gaps: says something was not checked"
grep -qxF "not an all-clear: 2 states past a gap in the log checked (logging was off from entry 4 to 5): they miss writes" \
	"$tmp/pastgaps.out" || fail "--past-gaps: the summary does not say the states past the gap miss writes"
for k in 1 2; do
	run pastgaps-shard$k --via copy --past-gaps --shard $k/2 "$tmp/base" "$tmp/gap.log" -- true
	grep -q "^not an all-clear: 1 state past a gap" "$tmp/pastgaps-shard$k.out" ||
		fail "--past-gaps --shard $k/2: not its own 1 state past the gap counted"
done
say "--list says, by exit 3, that it lists not all or states past a gap; 0 when all is there"
run listgap --list "$tmp/base" "$tmp/gap.log"
[ "$status" = 3 ] || fail "--list of a log with points skipped past a gap: status $status, not 3"
[ "$(wc -l <"$tmp/listgap.out")" = 2 ] || fail "--list past a gap: not the 2 states before it"
run listpast --list --past-gaps "$tmp/base" "$tmp/gap.log"
[ "$status" = 3 ] || fail "--list --past-gaps: status $status, not 3"
run pastgaps1 --via copy --past-gaps --state end "$tmp/base" "$tmp/gap.log" -- true
[ "$status" = 3 ] || fail "--state end --past-gaps with a checker: status $status, not 3"
run beforegap --via copy --state flush:1 "$tmp/base" "$tmp/gap.log" -- true
[ "$status" = 0 ] || fail "--state flush:1, before the gap: status $status"

say "--state past a gap is refused unless --past-gaps; before it, it is built"
refused gapstate "state end is past a gap in the log: logging was off from entry 4 to 5" \
	--state end -o "$tmp/x.img" "$tmp/base" "$tmp/gap.log"
[ ! -e "$tmp/x.img" ] || fail "a refused --state left its output"
run gapstate2 --state end --past-gaps -o "$tmp/x.img" "$tmp/base" "$tmp/gap.log"
[ "$status" = 0 ] || fail "--state end --past-gaps: status $status"
run gapstate3 --state flush:2 -o "$tmp/x.img" "$tmp/base" "$tmp/gap.log"
[ "$status" = 0 ] || fail "--state flush:2 before the gap: status $status"

# Logging off until the end: every point past the mark is skipped.
printf 'write 0 1 1\nflush\nmark rqdisk-log-disabled\nwrite 2 1 2\nflush\n' | "$gen" >"$tmp/gapend.log"
run gapend --via copy "$tmp/base" "$tmp/gapend.log" -- true
[ "$status" = 3 ] || fail "a gap to the end: status $status, not 3"
grep -qF "logging was off from entry 2 to the end" "$tmp/gapend.err" || fail "a gap to the end: not said"

# Logging off from the open, with no mark that says so (a log of an
# older rqdisk): an enabled mark alone is a gap from the start.
printf 'mark rqdisk-log-enabled\nwrite 2 1 2\nflush\n' | "$gen" >"$tmp/offstart.log"
run offstart --via copy "$tmp/base" "$tmp/offstart.log" -- true
[ "$status" = 3 ] || fail "an enabled mark alone: status $status, not 3"
grep -qxF "rqdisk-crash: 2 points after the start skipped: logging was off from the start to entry 0 (writes missing); --past-gaps checks them" \
	"$tmp/offstart.err" || fail "an enabled mark alone: the gap from the start is not said"
[ "$(count offstart prefix 3)" = 0 ] || fail "an enabled mark alone: states past it checked"

# A flush failed below (an NBD server lost its cache): the writes before
# it may be lost, though a later FLUSH entry covers them.
printf 'write 0 1 1\nflush\nwrite 2 1 2\nmark rqdisk-flush-failed\nwrite 3 1 3\nflush\n' |
	"$gen" >"$tmp/flushfail.log"
say "a failed flush: the points after it are not checked, exit 3"
run flushfail --via copy "$tmp/base" "$tmp/flushfail.log" -- true
[ "$status" = 3 ] || fail "a failed flush: status $status, not 3"
grep -qxF "rqdisk-crash: 2 points after entry 3 skipped: a flush failed at entry 3 (writes before it may be lost); --past-gaps checks them" \
	"$tmp/flushfail.err" || fail "a failed flush: the skip is not said"
grep -qF "not checked: 2 points past a gap in the log (a flush failed at entry 3)" "$tmp/flushfail.out" ||
	fail "a failed flush: the summary does not say what was not checked"
[ "$(count flushfail prefix 3)" = 1 ] || fail "a failed flush: not 1 state checked"

# ---------------------------------------------------------------- logs cut short

say "an rqdisk log that stopped: its states are checked, the run is not called clean (exit 3)"
printf 'rqdisk stopped 28\nwrite 0 1 1\nflush\nwrite 2 1 2\nflush\n' | "$gen" >"$tmp/stopped.log"
run stopped --via copy "$tmp/base" "$tmp/stopped.log" -- true
[ "$status" = 3 ] || fail "a stopped log: status $status, not 3"
[ "$(count stopped prefix 2)" = 3 ] || fail "a stopped log: not its 3 states made"
grep -qxF "rqdisk-crash: $tmp/stopped.log: logging stopped after entry 3: No space left on device; writes after it are not in the log, nor checked" \
	"$tmp/stopped.err" || fail "a stopped log: not said on stderr"
grep -qxF "not checked: writes after the log's last entry (logging stopped after entry 3: No space left on device)" \
	"$tmp/stopped.out" || fail "a stopped log: the summary does not say what was not checked"
nothing_left

say "--list of a stopped log exits 3; of a whole one, 0"
run stoppedlist --list "$tmp/base" "$tmp/stopped.log"
[ "$status" = 3 ] || fail "--list of a stopped log: status $status, not 3"

say "one state of a stopped log, checked: the run says the log stopped, exit 3"
run stopped1 --via copy --state flush:1 "$tmp/base" "$tmp/stopped.log" -- true
[ "$status" = 3 ] || fail "--state on a stopped log: status $status, not 3"
grep -qF "logging stopped after entry 3" "$tmp/stopped1.err" || fail "--state on a stopped log: not said"

say "an rqdisk log without its end mark (its daemon was killed): exit 3"
printf 'rqdisk\nwrite 0 1 1\nflush\nwrite 2 1 2\n' | "$gen" >"$tmp/killed.log"
run killed --via copy "$tmp/base" "$tmp/killed.log" -- true
[ "$status" = 3 ] || fail "a log without its end mark: status $status, not 3"
grep -qxF "rqdisk-crash: $tmp/killed.log: the log ends after entry 2 without its end mark (its writer was killed, or stopped logging); writes after it are not in the log, nor checked" \
	"$tmp/killed.err" || fail "a log without its end mark: not said on stderr"
grep -q "^not checked: writes after the log's last entry" "$tmp/killed.out" ||
	fail "a log without its end mark: the summary does not say so"

say "the same log whole, and a log with no record (QEMU's, the kernel's) without one: exit 0"
printf 'rqdisk\nwrite 0 1 1\nflush\nwrite 2 1 2\nmark dm-log-writes-end\n' | "$gen" >"$tmp/whole.log"
run whole --via copy "$tmp/base" "$tmp/whole.log" -- true
[ "$status" = 0 ] || fail "a whole rqdisk log: status $status"
grep -q "^not checked" "$tmp/whole.out" && fail "a whole rqdisk log: says something was not checked"
printf 'write 0 1 1\nflush\nwrite 2 1 2\n' | "$gen" >"$tmp/norecord.log"
run norecord --via copy "$tmp/base" "$tmp/norecord.log" -- true
[ "$status" = 0 ] || fail "a log with no record and no end mark: status $status"
[ ! -s "$tmp/norecord.err" ] || fail "a log with no record: something said: $(cat "$tmp/norecord.err")"
run wholelist --list "$tmp/base" "$tmp/whole.log"
[ "$status" = 0 ] || fail "--list of a whole log: status $status"

# ---------------------------------------------------------------- points that match nothing

cat >"$tmp/plain.script" <<'EOS'
write 0 2 0x10
flush
write 4 4 0x20
mark after-create
write 8 1 0x30
flush
mark after-rename
write 1 1 0x40
EOS
"$gen" <"$tmp/plain.script" >"$tmp/plain.log"

say "a requested point that matches nothing is refused, not an all-clear"
refused nosuchmark "--at mark:nosuch: LOG has no mark of that name (its marks: after-create, after-rename)" \
	--via copy --at mark:nosuch "$tmp/base" "$tmp/plain.log" -- true
refused emptymark "--at mark: needs a NAME" --via copy --at mark: "$tmp/base" "$tmp/plain.log" -- true
refused nofua "--at fua: LOG has no FUA entries" --via copy --at fua "$tmp/base" "$tmp/plain.log" -- true
grep -qF "loop device" "$tmp/nofua.err" || fail "--at fua: the loop device is not named as a cause"
grep -qF "use --at flush" "$tmp/nofua.err" || fail "--at fua: --at flush is not suggested"
refused farentry "--at 100: LOG has only 8 entries" --via copy --at 100 "$tmp/base" "$tmp/plain.log" -- true
run goodmark --via copy --at mark:after-rename "$tmp/base" "$tmp/plain.log" -- true
[ "$status" = 0 ] || fail "--at mark:after-rename: status $status"
[ "$(count goodmark prefix 3)" = 2 ] || fail "--at mark:after-rename: not 2 states"

# A log shaped like QEMU's blklogwrites (no mark, no FUA entry ever).
printf 'write 0 1 1\nflush\nwrite 2 1 2\nflush\n' | "$gen" >"$tmp/qemu.log"
refused qemufua "--at fua: LOG has no FUA entries" --via copy --at fua "$tmp/base" "$tmp/qemu.log" -- true
grep -qF "blklogwrites" "$tmp/qemufua.err" || fail "--at fua on a QEMU-shaped log: QEMU is not named"

# ---------------------------------------------------------------- messages

say "bad state IDs say what is wrong"
refused flush0 "bad state ID 'flush:0' at '0': flush and fua count from 1" \
	--state flush:0 -o "$tmp/x.img" "$tmp/base" "$tmp/plain.log"
refused notrising "bad state ID 'flush:2+drop:4,2' at '2': the dropped entries must rise" \
	--state flush:2+drop:4,2 -o "$tmp/x.img" "$tmp/base" "$tmp/plain.log"

# ---------------------------------------------------------------- the log truncated

# The checker truncates LOG at its first call and reads every state whole:
# the next state's reads reach the log's pages past its new end.
cat >"$tmp/truncating" <<EOS
#!/bin/bash
[ -e "$tmp/truncated" ] || { touch "$tmp/truncated"; truncate -s 4096 "$tmp/cut.log"; }
cat "\$1" >/dev/null
EOS
chmod +x "$tmp/truncating"
vias=copy
[ "$(id -u)" = 0 ] && [ -c /dev/fuse ] && vias="copy fuse"
for via in $vias; do
	say "the log truncated during a run (via $via): one line, exit 2, no SIGBUS"
	rm -f "$tmp/truncated"
	# big enough that the states read pages of the log past its first 4 KiB
	printf 'write 0 32 1\nflush\nwrite 32 32 2\nflush\nwrite 0 16 3\nflush\n' | "$gen" >"$tmp/cut.log"
	refused "cut-$via" "rqdisk-crash: $tmp/cut.log: the log was truncated while it was read" \
		--via "$via" --drop 1 "$tmp/base" "$tmp/cut.log" -- "$tmp/truncating" {}
done
echo "PASS: test-crash-trust.sh"
