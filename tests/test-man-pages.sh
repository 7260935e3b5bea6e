#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-man-pages.sh - every filter rqdisk takes has a page, rqdisk-NAME-filter(8),
# that names each key the filter's code takes; every backend has a page named
# in rqdisk(8)'s index; every page is installed; no page runs words
# together with a font-alternating macro; and every page says the
# version configure gave the programs, from its source man/PAGE.in (which
# names none).  No root, no FUSE.
source "$(dirname "$0")/functions.sh"

man=$top_srcdir/man
src=$top_srcdir/src

# The tag lines of a page (the line after .TP), font escapes and \- undone:
# a key documented as a key is in one.
tags()
{
	awk 'tp { print; tp = 0 } /^\.TP/ { tp = 1 }' "$1" |
		sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' -e 's/^\.[BIR]*[[:space:]]*//' -e 's/"//g'
}

# The keys of a filter, from its code's table (a new filter needs a line here).
keys_of()
{
	local table file
	case $1 in
	model) grep -rhoE '^[[:space:]]*(HDD|SSD)_KEY\([a-z_]+' "$src" | sed 's/.*(//'; echo preset; return ;;
	delay) table=delay_keys ;;
	write-cache) table=wc_keys ;;
	log-writes) table=lw_keys ;;
	fault) table=fault_keys ;;
	*) fail "no way to read the keys of the filter $1: teach keys_of" ;;
	esac
	file=$(grep -rlE "${table}\[\] = \{" "$src" | head -1)
	[ -n "$file" ] || fail "$1: no table $table under src/"
	sed -n "/${table}\[\] = {/,/^};/p" "$file" | grep -oE '"[a-z_-]+"' | tr -d '"'
}

say "every filter --filter takes has its page, and each of its keys is a tag there"
filters=$({ "$RQDISK" --filter no-such-filter img mnt 2>&1 || true; } | sed -n 's/.*(there are: \(.*\))$/\1/p' | tr -d ,)
[ -n "$filters" ] || fail "rqdisk --filter names no filters"
for f in $filters; do
	page=$man/rqdisk-$f-filter.8.in
	[ -f "$page" ] || fail "$f: no page man/rqdisk-$f-filter.8.in"
	keys=$(keys_of "$f" | sort -u)
	[ -n "$keys" ] || fail "$f: no keys read from the code"
	for k in $keys; do
		tags "$page" | grep -qE "(^|[^a-z_])$k([^a-z_]|$)" ||
			fail "$f: key $k is not a tag in rqdisk-$f-filter(8)"
	done
	grep -qF "rqdisk\\-${f//-/\\-}\\-filter (8)" "$man/rqdisk.8.in" ||
		fail "$f: rqdisk(8) does not name rqdisk-$f-filter(8)"
	grep -qE "man/rqdisk-$f-filter\.8( |$)" "$top_srcdir/man/local.mk" ||
		fail "$f: rqdisk-$f-filter.8 is not installed"
done

say "every backend has a page that rqdisk(8)'s BACKENDS names"
# (the registry, src/backend/backend.c's backends[], one .scheme each; the
# replay's sim backend is not in it but has its entry in BACKENDS as well)
backends=$(sed -n 's/^[[:space:]]*{ \.scheme = "\([a-z]*\)".*/\1/p' "$src/backend/backend.c" | sort -u)
[ -n "$backends" ] || fail "no backend read from the code"
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
