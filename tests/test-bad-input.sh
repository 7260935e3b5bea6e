#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-bad-input.sh - every bad command line or bad file is refused with one
# line on stderr that names the problem (usage errors end it with "; try
# 'rqdisk --help'"), nothing on stdout, no mount and no image left behind -
# both in the foreground and when daemonizing.  The exit status follows one
# rule: 2 for a command line that is wrong in itself (an option, a value, an
# elevator or model that does not exist), 1 for one the system refused (a
# file that is not there or not right).
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires timeout

make_tmpdir tmp
mkdir "$tmp/mnt" "$tmp/dir-image"
echo "a file to mount over" >"$tmp/over"
truncate -s 1M "$tmp/img"
truncate -s 1000 "$tmp/img-1000"
truncate -s 6K "$tmp/img-6k"
: >"$tmp/img-empty"
# should a refusal mount after all, the mount goes at exit
cleanup_fn _unmount "$tmp/mnt"
cleanup_fn _unmount "$tmp/over"

hint="; try 'rqdisk --help'\$"
cases=0

# refused STATUS PATTERN ARGS...: rqdisk ARGS exits with STATUS, with one line
# on stderr that matches the extended regular expression PATTERN.
refused()
{
	local want=$1 pattern=$2 mode status first

	shift 2
	for mode in -f ""; do
		status=0
		# shellcheck disable=SC2086 # mode is no word or one
		timeout 15 "$RQDISK" $mode "$@" >"$tmp/out" 2>"$tmp/err" || status=$?
		echo "rqdisk $mode $*: status $status: $(cat "$tmp/err")"
		[ $status != 0 ] || fail "rqdisk $mode $* succeeded"
		[ $status != 124 ] || fail "rqdisk $mode $* did not return"
		[ $status = "$want" ] || fail "rqdisk $mode $*: exit status $status, not $want"
		[ ! -s "$tmp/out" ] || fail "rqdisk $mode $* wrote to stdout: $(cat "$tmp/out")"
		[ "$(wc -l <"$tmp/err")" = 1 ] ||
			fail "rqdisk $mode $*: $(wc -l <"$tmp/err") lines on stderr, not one"
		first=$(head -n 1 "$tmp/err")
		[[ $first =~ ^(rqdisk|.*/rqdisk):\  ]] ||
			fail "rqdisk $mode $*: the message does not start with the program's name"
		[[ $first =~ $pattern ]] ||
			fail "rqdisk $mode $*: the message does not match '$pattern'"
		no_mount_under "$tmp" || fail "rqdisk $mode $* left a mount under $tmp"
		[ ! -e "$tmp/new" ] || fail "rqdisk $mode $* left an image $tmp/new behind"
		[ "$(stat -c %s "$tmp/img")" = 1048576 ] || fail "rqdisk $mode $* changed $tmp/img"
	done
	cases=$((cases + 1))
}

say "files that are not there or not right"
refused 1 "image .*/nope: No such file or directory" "$tmp/nope" "$tmp/mnt"
refused 1 "mount point .*/nope: No such file or directory" "$tmp/img" "$tmp/nope"
refused 1 "/dev/null is neither a directory nor a regular file" "$tmp/img" /dev/null
refused 1 "image .*/img-1000: size 1000 is not .*multiple of the logical block size 512" \
	"$tmp/img-1000" "$tmp/mnt"
refused 1 "image .*/img-6k: size 6144 is not .*multiple of the logical block size 4096" \
	--logical-block-size 4096 "$tmp/img-6k" "$tmp/mnt"
refused 1 "image .*/img-empty: size 0 is not a non-zero multiple" "$tmp/img-empty" "$tmp/over"
refused 1 "image .*/dir-image is not a regular file" "$tmp/dir-image" "$tmp/mnt"

say "queue limits out of range"
refused 2 "logical block size 1000 is not a power of two" \
	--logical-block-size 1000 "$tmp/img" "$tmp/mnt"
refused 2 "logical block size 8192 is not a power of two from 512 to 4096" \
	--logical-block-size 8192 "$tmp/img" "$tmp/mnt"
refused 2 "max sectors 4 is below one page" --max-sectors 4 "$tmp/img" "$tmp/mnt"
refused 2 "max segment size 1024 is below one page" --max-segment-size 1024 "$tmp/img" "$tmp/mnt"
refused 2 "segment boundary 0x7ff is not" --segment-boundary 0x7ff "$tmp/img" "$tmp/mnt"
refused 2 "max segments must be at least 1" --max-segments 0 "$tmp/img" "$tmp/mnt"
refused 2 "nr requests must be at least 1" --nr-requests 0 "$tmp/img" "$tmp/mnt"
refused 2 "dma alignment 0x3e8 is not" --dma-alignment 1000 "$tmp/img" "$tmp/mnt"
refused 2 "--max-sectors: 'abc' is not a number" --max-sectors abc "$tmp/img" "$tmp/mnt"
refused 2 "--max-segments: '100000' is not a number from 0 to 65535" \
	--max-segments 100000 "$tmp/img" "$tmp/mnt"
refused 2 "--idle-poll: '5ms' is not a number" --idle-poll 5ms "$tmp/img" "$tmp/mnt"
refused 2 "--idle-poll: '1000001' is not a number from 0 to 1000000" \
	--idle-poll 1000001 "$tmp/img" "$tmp/mnt"

say "unknown elevator, unknown option, wrong arguments"
refused 2 "unknown elevator 'bogus' \\(available: none .*deadline" \
	--elevator bogus "$tmp/img" "$tmp/mnt"
refused 2 "unrecognized option '--bogus'$hint" --bogus "$tmp/img" "$tmp/mnt"
refused 2 "model: 'bogus' is not none, hdd or ssd" --model bogus "$tmp/img" "$tmp/mnt"
refused 2 "nope.so: cannot open shared object file" --elevator "$tmp/nope.so" "$tmp/img" "$tmp/mnt"
refused 2 "--max-sectors: ' 300' is not a number" --max-sectors " 300" "$tmp/img" "$tmp/mnt"
refused 2 "invalid option -- 'x'$hint" -x "$tmp/img" "$tmp/mnt"
refused 2 "option '--elevator' requires an argument$hint" --elevator
refused 2 "option '--direct' doesn't allow an argument$hint" --direct=1 "$tmp/img" "$tmp/mnt"
refused 2 "an IMAGE and a MOUNTPOINT are needed$hint" "$tmp/img"
refused 2 "too many arguments: only IMAGE and MOUNTPOINT$hint" "$tmp/img" "$tmp/mnt" "$tmp/over"

say "--create: no image is left behind when it is refused"
refused 2 "--create: '12Q' is not a size" --create 12Q "$tmp/new" "$tmp/mnt"
refused 2 "--create: '0' is not a size" --create 0 "$tmp/new" "$tmp/mnt"
refused 1 ".*/nodir/new: cannot create: No such file or directory" \
	--create 4M "$tmp/nodir/new" "$tmp/mnt"
[ ! -e "$tmp/nodir" ] || fail "--create made the missing directory"
refused 2 "--create: 1000 bytes is not a multiple of the logical block size 512" \
	--create 1000 "$tmp/new" "$tmp/mnt"
refused 2 "--create: 6144 bytes is not a multiple of the logical block size 4096" \
	--logical-block-size 4096 --create 6K "$tmp/new" "$tmp/mnt"
refused 1 "mount point .*/nope: No such file or directory" --create 4M "$tmp/new" "$tmp/nope"
# an image that is there, of another size: not served at its own size in silence
refused 1 "image .*/img exists with 1048576 bytes: --create 1073741824 would not make it that size" \
	--create 1G "$tmp/img" "$tmp/mnt"

echo "PASS: $cases bad inputs refused, in the foreground and daemonizing"
