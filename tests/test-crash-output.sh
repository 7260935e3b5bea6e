#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-crash-output.sh - rqdisk-crash's -o FILE and --csv FILE, run (as
# root, say) in a directory anyone may write to: a symbolic link planted
# there is refused in one line naming the option, exit 2, and the file it
# points to is neither written nor truncated, nor made where it dangles;
# a FIFO there with no reader is refused, not waited on for ever; a file
# another user put there (a sticky directory anyone may write to, as
# /tmp) is refused too, or that user would read the state or the table.
# A plain file is still written (-o) or replaced (--csv).  States are
# copies here (no root, no FUSE).
source "$(dirname "$0")/functions.sh"
source "$(dirname "$0")/crash-functions.sh"

crash=$top_builddir/src/crash/rqdisk-crash
gen=$top_builddir/tests/crash-gen-log
[ -x "$crash" ] || fail "$crash is not built"
[ -x "$gen" ] || fail "$gen is not built"

make_tmpdir tmp
mkdir "$tmp/t"
export TMPDIR=$tmp/t

printf 'write 0 2 0x10\nflush\nwrite 4 1 0x20\n' | "$gen" >"$tmp/log"
head -c $((64 * 512)) /dev/urandom >"$tmp/base"
echo "someone else's" >"$tmp/victim"
victim_sum=$(md5sum <"$tmp/victim")

# victim_intact: the file the links name is as it was
victim_intact()
{
	[ "$(md5sum <"$tmp/victim")" = "$victim_sum" ] || fail "$1 wrote through the link: $(head -c 80 "$tmp/victim")"
}

say "-o: a symlink to another file is refused, the file untouched"
ln -s "$tmp/victim" "$tmp/out.img"
refused olink "-o $tmp/out.img" --via copy --state flush:1 -o "$tmp/out.img" "$tmp/base" "$tmp/log"
grep -qi "symbolic link" "$tmp/olink.err" || fail "-o: the refusal does not say why"
victim_intact "-o"
[ -L "$tmp/out.img" ] || fail "-o: the link was replaced"

say "-o: a dangling symlink is refused, nothing made where it points"
ln -s "$tmp/made" "$tmp/dangling.img"
refused odangling "-o $tmp/dangling.img" --via copy --state flush:1 -o "$tmp/dangling.img" \
	"$tmp/base" "$tmp/log"
[ -e "$tmp/made" ] && fail "-o: made the file a dangling link names"

say "--csv: a symlink to another file is refused, the file untouched"
ln -s "$tmp/victim" "$tmp/out.csv"
refused csvlink "--csv $tmp/out.csv" --via copy --csv "$tmp/out.csv" "$tmp/base" "$tmp/log" -- true
grep -qi "symbolic link" "$tmp/csvlink.err" || fail "--csv: the refusal does not say why"
victim_intact "--csv"
ln -s "$tmp/made" "$tmp/dangling.csv"
refused csvdangling "--csv $tmp/dangling.csv" --via copy --csv "$tmp/dangling.csv" \
	"$tmp/base" "$tmp/log" -- true
[ -e "$tmp/made" ] && fail "--csv: made the file a dangling link names"

say "a FIFO nobody reads (planted as -o or --csv) is refused, not waited on"
mkfifo "$tmp/fifo"
refused ofifo "-o $tmp/fifo" --via copy --state flush:1 -o "$tmp/fifo" "$tmp/base" "$tmp/log"
refused csvfifo "--csv $tmp/fifo" --via copy --csv "$tmp/fifo" "$tmp/base" "$tmp/log" -- true
grep -q "nothing reads it" "$tmp/csvfifo.err" || fail "a FIFO: the refusal does not say why"

if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	say "a file another user put in a sticky shared directory is refused, not written"
	mkdir -m 1777 "$tmp/shared"
	echo "nobody's" >"$tmp/shared/state.img"
	chmod 666 "$tmp/shared/state.img"
	chown nobody "$tmp/shared/state.img"
	cp "$tmp/shared/state.img" "$tmp/shared/out.csv"
	chown nobody "$tmp/shared/out.csv"
	# with fs.protected_regular on, the kernel refuses first (EACCES): refused all the same
	refused oplanted "-o $tmp/shared/state.img" --via copy --state flush:1 \
		-o "$tmp/shared/state.img" "$tmp/base" "$tmp/log"
	grep -qE "another user|Permission denied" "$tmp/oplanted.err" ||
		fail "-o: the refusal does not say why"
	[ "$(cat "$tmp/shared/state.img")" = "nobody's" ] || fail "-o: wrote the state into nobody's file"
	refused csvplanted "--csv $tmp/shared/out.csv" --via copy --csv "$tmp/shared/out.csv" \
		"$tmp/base" "$tmp/log" -- true
	grep -q "^id," "$tmp/shared/out.csv" && fail "--csv: wrote the table into nobody's file"
	say "a second name there of a file elsewhere (a hard link) is refused, the file untouched"
	echo "root's" >"$tmp/precious"
	if ln "$tmp/precious" "$tmp/shared/link.img" 2>/dev/null; then
		refused olink "-o $tmp/shared/link.img" --via copy --state flush:1 \
			-o "$tmp/shared/link.img" "$tmp/base" "$tmp/log"
		[ "$(cat "$tmp/precious")" = "root's" ] || fail "-o: wrote through a hard link"
	fi
	say "the same in a directory another user owns (not sticky): a hard link there is refused"
	mkdir "$tmp/theirs"
	chown nobody "$tmp/theirs"
	if ln "$tmp/precious" "$tmp/theirs/link.img" 2>/dev/null; then
		refused olink2 "-o $tmp/theirs/link.img" --via copy --state flush:1 \
			-o "$tmp/theirs/link.img" "$tmp/base" "$tmp/log"
		[ "$(cat "$tmp/precious")" = "root's" ] || fail "-o: wrote through a hard link"
	fi
	say "root's own file there is taken"
	run oshared --via copy --state flush:1 -o "$tmp/shared/mine.img" "$tmp/base" "$tmp/log"
	[ "$status" = 0 ] || fail "-o to a new file in a sticky directory: status $status"
fi

say "plain files are still taken: -o written, --csv replaced"
run oplain --via copy --state flush:1 -o "$tmp/plain.img" "$tmp/base" "$tmp/log"
[ "$status" = 0 ] || fail "-o to a new file: status $status"
[ "$(stat -c %s "$tmp/plain.img")" = $((64 * 512)) ] || fail "-o: not the whole image"
head -c 100000 /dev/zero | tr '\0' x >"$tmp/plain.csv"
run csvplain --via copy --csv "$tmp/plain.csv" "$tmp/base" "$tmp/log" -- true
[ "$status" = 0 ] || fail "--csv to a file that is there: status $status"
head -1 "$tmp/plain.csv" | grep -q "^id,class,result" || fail "--csv: no header"
grep -q xxx "$tmp/plain.csv" && fail "--csv: the old contents were not truncated"
nothing_left
exit 0
