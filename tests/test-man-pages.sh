#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-man-pages.sh - every filter rqdisk --list names has a page,
# rqdisk-NAME-filter(8), with a tag for each key rqdisk --help-filter lists
# (the table the filter parses with); every backend has a page named in
# rqdisk(8)'s index, with a tag for each key --help-backend lists; every
# tunable a shipped elevator lists is a tag in rqdisk-elevators(7); every
# page is installed; every rqdisk-replay option is a tag of its page, and
# rqdisk(8)'s TRACES has a tag for each --queue-mode; no page runs words
# together with a font-alternating macro; and every page says the version
# configure gave the programs, from its source man/PAGE.in (which names
# none).  No root, no FUSE.
source "$(dirname "$0")/functions.sh"

man=$top_srcdir/man

# The tag lines of a page (the line after .TP), font escapes and \- undone:
# a key documented as a key is in one.
tags()
{
	awk 'tp { print; tp = 0 } /^\.TP/ { tp = 1 }' "$1" |
		sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' -e 's/^\.[BIR]*[[:space:]]*//' -e 's/"//g'
}

# keys_of filter|backend NAME: the keys rqdisk --help-filter (or
# --help-backend) NAME lists, "  KEY  HELP" (a model's "  hdd:rpm  ..." as
# rpm): the table the layer parses with, so a new layer needs no line here.
keys_of()
{
	"$RQDISK" "--help-$1" "$2" | awk '/^  [^ ]/ { sub(/.*:/, "", $1); print $1 }'
}

# Each key NAME's code takes is a tag of PAGE.
keys_are_tags()
{
	local kind=$1 name=$2 page=$3 keys k

	keys=$(keys_of "$kind" "$name" | sort -u) || fail "rqdisk --help-$kind $name failed"
	for k in $keys; do
		tags "$page" | grep -qE "(^|[^a-z_])$k([^a-z_]|$)" ||
			fail "$name: key $k is not a tag in ${page##*/}"
	done
	echo "$name: $(echo $keys)"
}

say "every filter rqdisk --list names has its page, and each key --help-filter lists is a tag there"
filters=$("$RQDISK" --list filters | awk '{ print $1 }')
[ -n "$filters" ] || fail "rqdisk --list filters names no filters"
for f in $filters; do
	page=$man/rqdisk-$f-filter.8.in
	[ -f "$page" ] || fail "$f: no page man/rqdisk-$f-filter.8.in"
	[ -n "$(keys_of filter "$f")" ] || fail "$f: rqdisk --help-filter $f lists no keys"
	keys_are_tags filter "$f" "$page"
	grep -qF "rqdisk\\-${f//-/\\-}\\-filter (8)" "$man/rqdisk.8.in" ||
		fail "$f: rqdisk(8) does not name rqdisk-$f-filter(8)"
	grep -qE "man/rqdisk-$f-filter\.8( |$)" "$top_srcdir/man/local.mk" ||
		fail "$f: rqdisk-$f-filter.8 is not installed"
done

say "every backend has a page that rqdisk(8)'s BACKENDS names, and each of its keys is a tag there"
# (rqdisk --list backends, the registry; the replay's sim backend is not
# in it but has its entry in BACKENDS as well)
backends=$("$RQDISK" --list backends | awk '{ print $1 }')
[ -n "$backends" ] || fail "rqdisk --list backends names no backends"
index=$(sed -n '/^\.SH BACKENDS/,/^\.SH /p' "$man/rqdisk.8.in")
for b in $backends; do
	entry=$(printf '%s\n' "$index" | awk -v b=".B $b" '$0 == b { on = 1; next } /^\.TP/ { on = 0 } on')
	[ -n "$entry" ] || fail "$b: not in rqdisk(8)'s BACKENDS"
	ref=$(printf '%s\n' "$entry" | grep -oE 'rqdisk[a-z\\-]*[[:space:]]*\([0-9]\)' | head -1 | tr -d '\\ ')
	[ -n "$ref" ] || fail "$b: rqdisk(8)'s BACKENDS names no page for it"
	name=${ref%(*}
	sect=${ref#*(}
	sect=${sect%)}
	[ -f "$man/$name.$sect.in" ] || fail "$b: rqdisk(8) names $ref, which is not in man/"
	grep -qE "man/$name\.$sect( |$)" "$top_srcdir/man/local.mk" || fail "$b: $name.$sect is not installed"
	if "$RQDISK" --list backends | grep -q "^$b  *("; then
		echo "$b: a module that does not load here: its keys are not checked"
		continue
	fi
	keys_are_tags backend "$b" "$man/$name.$sect.in"
done
say "every tunable of a shipped elevator (its ELV_ATTR table in sched/) is a tag in rqdisk-elevators(7)"
# (the table the control tree's queue/iosched/ shows, read from the
# source: listing it otherwise needs a mount)
tunables=$(find "$top_srcdir/sched" -name '*.c' -exec \
	sed -nE 's/.*ELV_(TEXT_|RO_)?ATTR\([a-z_]+, *([a-z_0-9]+)\).*/\2/p' {} + | sort -u)
[ "$(wc -w <<<"$tunables")" -ge 20 ] || fail "sched/ lists only these tunables: $tunables"
for t in $tunables; do
	tags "$man/rqdisk-elevators.7.in" | grep -qE "(^|[^a-z_])$t([^a-z_]|$)" ||
		fail "tunable $t is not a tag in rqdisk-elevators.7.in"
done
echo "tunables: $(echo $tunables)"

say "every option rqdisk-replay --help lists is a tag of rqdisk-replay(1)"
replay=$top_builddir/src/tools/rqdisk-replay
opts=$("$replay" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u)
[ -n "$opts" ] || fail "rqdisk-replay --help lists no options"
for opt in $opts; do
	tags "$man/rqdisk-replay.1.in" | grep -qE -- "(^|[^a-z-])$opt([^a-z-]|\$)" ||
		fail "rqdisk-replay: $opt is not a tag in rqdisk-replay.1.in"
done
echo "rqdisk-replay: $(echo $opts)"

say "rqdisk(8)'s TRACES says what the cpu field holds under each --queue-mode"
for mode in $("$RQDISK" --help | sed -n 's/.*--queue-mode MODE *\(rq\).*\(mq\):.*/\1 \2/p'); do
	tags <(sed -n '/^\.SH TRACES/,/^\.SH SIGNALS/p' "$man/rqdisk.8.in") |
		grep -qx -- "--queue-mode=$mode" || fail "rqdisk(8): TRACES has no tag --queue-mode=$mode"
	echo "TRACES: --queue-mode=$mode"
done

say "no .BR, .BI, .IR, ... runs two words of prose together"
# Such a macro prints its arguments with no space between them: two
# unquoted words in a row (quoted ones stand as "Q") come out as one.
for page in "$man"/*.[0-9].in; do
	glued=$(grep -nE '^\.(BR|BI|IR|RB|RI|IB)[[:space:]]' "$page" |
		sed -E 's/"([^"]|"")*"/"Q"/g' |
		grep -E '(^|[[:space:]])[a-z]{2,}[,;:.]? [a-z]{2,}([[:space:]]|$)' || true)
	[ -z "$glued" ] || fail "${page##*/}: words run together by a font-alternating macro: $glued"
done

say "every page's .TH says the programs' version, which its source leaves to configure"
version=$("$RQDISK" --version | awk '{ print $2 }')
[ -n "$version" ] || fail "rqdisk --version says no version"
pages=$(sed -n 's/^[[:space:]]*\(man\/[^ ]*\.[1-8]\) \\$/\1/p' "$top_srcdir/man/local.mk")
[ "$(wc -w <<<"$pages")" -ge 15 ] || fail "man/local.mk lists only: $pages"
for p in $pages; do
	src=$top_srcdir/$p.in
	[ -f "$src" ] || fail "$p: no source $p.in"
	grep -E '^\.TH ' "$src" | grep -qF '"rqdisk @PACKAGE_VERSION@"' ||
		fail "$p.in: its .TH does not leave the version to configure: $(grep '^\.TH' "$src")"
	built=$top_builddir/$p
	[ -f "$built" ] || built=$top_srcdir/$p
	[ -f "$built" ] || fail "$p is not built"
	th=$(grep -E '^\.TH ' "$built")
	[[ $th == *"\"rqdisk $version\""* ]] || fail "$p says '$th', not rqdisk $version"
	! grep -q '@[A-Z_]*@' "$built" || fail "$p keeps a placeholder: $(grep '@[A-Z_]*@' "$built")"
done
echo "PASS: man pages"
