#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-options.sh - --help (exit 0, every long option in it) and --version;
# --fuse-uring's values, a bad one refused in one line; and each queue
# limit, elevator and option, alone and combined, still gives a disk that
# reads back what was written.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires dd cmp

make_tmpdir tmp
mkdir "$tmp/mnt"

say "--help exits 0, on stdout, and mentions every long option"
"$RQDISK" --help >"$tmp/help" 2>"$tmp/err" || fail "--help exited with status $?"
[ ! -s "$tmp/err" ] || fail "--help wrote to stderr"
grep -q "^Usage: rqdisk .*IMAGE MOUNTPOINT" "$tmp/help" || fail "--help has no usage line"
options=(elevator logical-block-size max-sectors max-segments max-segment-size
	 segment-boundary dma-alignment nr-requests direct read-only create allow-other
	 foreground help version)
# and whatever long option the source defines, should the list above fall behind
if [ -r "$top_srcdir/src/daemon/options.c" ]; then
	while read -r name; do
		options+=("$name")
	done < <(sed -n 's/^[[:space:]]*{ "\([a-z-]*\)", \(no\|required\|optional\)_argument.*/\1/p' \
		"$top_srcdir/src/daemon/options.c")
fi
for o in "${options[@]}"; do
	grep -q -- "--$o\b" "$tmp/help" || fail "--help does not mention --$o"
done
echo "--help mentions all of: $(printf '%s\n' "${options[@]}" | sort -u | tr '\n' ' ')"
"$RQDISK" -h | cmp -s - "$tmp/help" || fail "-h differs from --help"

say "--list elevators|filters|backends: a name a line with what it is, from the registries"
for what in elevators filters backends; do
	"$RQDISK" --list $what >"$tmp/list.$what" 2>"$tmp/err" || fail "--list $what: status $?"
	[ ! -s "$tmp/err" ] || fail "--list $what wrote to stderr: $(cat "$tmp/err")"
	awk 'NF < 2 || $1 !~ /^[a-z][a-z0-9-]*$/ { bad = 1 } END { exit bad }' "$tmp/list.$what" ||
		fail "--list $what: a line is not NAME DESCRIPTION: $(cat "$tmp/list.$what")"
	[ "$(awk '{ print $1 }' "$tmp/list.$what" | sort | uniq -d)" = "" ] ||
		fail "--list $what names one twice"
done
# the names each one's own lookup knows: elevator_get's, --filter's and the images' refusals
elevators=$(awk '{ print $1 }' "$tmp/list.elevators")
filters=$(awk '{ print $1 }' "$tmp/list.filters")
want=$({ "$RQDISK" -e no-such img mnt 2>&1 || true; } | sed -n 's/.*(available: \(.*\))$/\1/p')
[ "$(echo $elevators)" = "$want" ] || fail "--list elevators: '$(echo $elevators)', -e knows '$want'"
want=$({ "$RQDISK" --filter no-such img mnt 2>&1 || true; } | sed -n 's/.*(there are: \(.*\))$/\1/p')
[ "$(echo $filters | sed 's/ /, /g')" = "$want" ] ||
	fail "--list filters: '$(echo $filters)', --filter knows '$want'"
grep -qw file "$tmp/list.backends" && grep -qw null "$tmp/list.backends" ||
	fail "--list backends names no file or null backend"

say "--help names every elevator and filter --list does"
for name in $elevators $filters; do
	grep -Eq "[ :]$name[ ,]" "$tmp/help" || fail "--help does not name $name"
done
echo "--help names all of: $(echo $elevators $filters)"

say "--help-filter NAME: each key a line, '  KEY  HELP'; --help-backend the same"
for f in $filters; do
	"$RQDISK" --help-filter "$f" >"$tmp/keys" || fail "--help-filter $f: status $?"
	head -1 "$tmp/keys" | grep -q "^$f - ." || fail "--help-filter $f: no '$f - WHAT' line first"
	grep -Eq '^  [a-z][a-z0-9_:]*  +[^ ]' "$tmp/keys" || fail "--help-filter $f: no key with its help"
done
"$RQDISK" --help-filter delay | grep -Eq '^  ms  +milliseconds' || fail "--help-filter delay: no ms"
"$RQDISK" --help-filter model | grep -Eq '^  hdd:rpm  +' || fail "--help-filter model: no hdd:rpm"
for b in $(awk '{ print $1 }' "$tmp/list.backends"); do
	grep -q "^$b  *(" "$tmp/list.backends" && continue # a module that did not load here
	"$RQDISK" --help-backend "$b" | head -1 | grep -q "^$b - ." || fail "--help-backend $b"
done

say "--version prints the version and exits 0"
version=$("$RQDISK" --version) || fail "--version exited with status $?"
echo "$version"
[[ $version =~ ^rqdisk\ [0-9]+\.[0-9]+(\.[0-9]+)?$ ]] || fail "--version printed '$version'"
if [ -r "$top_srcdir/configure.ac" ]; then
	want=$(sed -n 's/^AC_INIT(\[rqdisk\], \[\([^]]*\)\].*/\1/p' "$top_srcdir/configure.ac")
	[ -z "$want" ] || [ "$version" = "rqdisk $want" ] ||
		fail "--version says '$version', configure.ac says $want"
fi
[ "$("$RQDISK" -V)" = "$version" ] || fail "-V differs from --version"

# parsed STATUS PATTERN ARGS...: rqdisk ARGS exits with STATUS, saying one
# line that matches PATTERN (extended), with no mount left.
parsed()
{
	local want=$1 pattern=$2 status=0

	shift 2
	"$RQDISK" "$@" >"$tmp/out" 2>"$tmp/err" || status=$?
	echo "rqdisk $*: status $status: $(cat "$tmp/err")"
	[ "$status" != 0 ] || _unmount "$tmp/mnt" # started after all: nothing left behind
	[ "$status" = "$want" ] || fail "rqdisk $*: exit status $status, not $want"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "rqdisk $*: not one line on stderr"
	grep -Eq -- "$pattern" "$tmp/err" || fail "rqdisk $*: the message does not match '$pattern'"
	[ ! -s "$tmp/out" ] || fail "rqdisk $*: wrote to stdout"
	no_mount_under "$tmp" || fail "rqdisk $*: left a mount"
}

say "--list, --help-filter, --help-backend with a name they do not know: refused (2) in one line"
parsed 2 "^rqdisk: --list: 'things' is not elevators, filters or backends$" --list things
parsed 2 "^rqdisk: --help-filter: no filter 'no-such' \(rqdisk --list filters\)$" \
	--help-filter no-such
parsed 2 "^rqdisk: --help-backend: no backend 'no-such' \(rqdisk --list backends\)$" \
	--help-backend no-such

say "--fuse-uring=auto|on|off, or bare (on): parsed, then the missing mount point refused (1)"
truncate -s 1M "$tmp/small"
for o in --fuse-uring=auto --fuse-uring=on --fuse-uring=off --fuse-uring; do
	parsed 1 "^rqdisk: mount point .*/nope: No such file" "$o" "$tmp/small" "$tmp/nope"
done
say "--fuse-uring with another value: refused (2) in one line naming it"
for bad in maybe ON yes 1 "" "auto " "on,off"; do
	parsed 2 "^rqdisk: --fuse-uring: '$bad' is not auto, on or off\$" \
		--fuse-uring="$bad" "$tmp/small" "$tmp/mnt"
done
parsed 2 "^rqdisk: too many arguments" --fuse-uring on "$tmp/small" "$tmp/mnt"

# works OPTIONS...: the disk, run with OPTIONS, reads back an unaligned write
# of 3 MiB and a few small ones, and the image holds them after unmount.
size=$((16 * 1024 * 1024))
random_file "$tmp/img" $size
cp "$tmp/img" "$tmp/ref"
works()
{
	local w off len

	say "rqdisk $*: a working disk"
	start_rqdisk "$@" "$tmp/img" "$tmp/mnt"
	[ "$(stat -c %s "$rqdisk_disk")" = $size ] || fail "the disk has the wrong size"
	for w in $((RANDOM * 97 + 13)):$((3 * 1024 * 1024)) $((RANDOM * 7)):1 \
		 $((RANDOM * 11 + 4090)):9000 $((size - 600)):600; do
		off=${w%:*} len=${w#*:}
		random_file "$tmp/piece" "$len"
		write_at "$tmp/piece" "$rqdisk_disk" "$off" || fail "writing $len bytes at $off failed"
		write_at "$tmp/piece" "$tmp/ref" "$off"
	done
	cmp "$rqdisk_disk" "$tmp/ref" || fail "rqdisk $*: the disk reads back wrong"
	stop_rqdisk
	cmp "$tmp/img" "$tmp/ref" || fail "rqdisk $*: the image is wrong after unmount"
}

works --max-sectors 8
works --max-sectors 2048
works --max-segments 1
works --max-segment-size 4096
works --segment-boundary 0xffff
works --segment-boundary 0xfff --max-segment-size 4096
works --dma-alignment 4095
works --dma-alignment 0
works --nr-requests 1
works --nr-requests 1024
works --elevator noop
works --elevator none
works --elevator deadline
works -e noop
works --logical-block-size 4096
works --logical-block-size 1024
works --max-sectors 8 --max-segments 2 --max-segment-size 4096 --segment-boundary 0xfff \
	--nr-requests 4 --dma-alignment 4095 --elevator deadline
works --idle-poll 0
works --idle-poll 1000000
works --allow-other
works --fuse-uring=off
works --fuse-uring=auto
start_rqdisk --allow-other "$tmp/img" "$tmp/mnt"
[[ $(awk -v m="$tmp/mnt" '$2 == m' /proc/self/mounts) == *allow_other* ]] ||
	fail "--allow-other: the mount has no allow_other"
stop_rqdisk
if supports_odirect "$tmp"; then
	works --direct
	works --direct --logical-block-size 4096
else
	echo "NOTE: ${TMPDIR:-/tmp} does not take O_DIRECT: --direct is tested in test-fio-verify.sh"
fi

say "--create SIZE makes the image, of that size"
start_rqdisk --create 4M "$tmp/created" "$tmp/mnt"
[ "$(stat -c %s "$rqdisk_disk")" = 4194304 ] || fail "the created disk is not 4 MiB"
echo "written" | dd of="$rqdisk_disk" conv=notrunc status=none || fail "writing the created disk failed"
stop_rqdisk
[ "$(stat -c %s "$tmp/created")" = 4194304 ] || fail "the created image is not 4 MiB"
[ "$(head -c 8 "$tmp/created")" = "written" ] || fail "the created image lacks the write"
say "--create on an existing image of that size leaves it as it is"
start_rqdisk --create 4M "$tmp/created" "$tmp/mnt"
[ "$(stat -c %s "$rqdisk_disk")" = 4194304 ] || fail "--create resized an existing image"
[ "$(head -c 8 "$rqdisk_disk")" = "written" ] || fail "--create changed an existing image"
stop_rqdisk
echo "PASS"
