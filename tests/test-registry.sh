#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-registry.sh - a built-in elevator, filter or backend is its own file
# or folder and one registry line: each name rqdisk --list prints is
# registered in its own file (sched/NAME.c, src/device/NAME/,
# src/backend/backend_NAME.c) and named in exactly one registry line outside
# it (ELV(NAME) in src/block/elevator.c, FILTER(SYMBOL) in
# src/device/device.c, { .scheme = "NAME" in src/backend/backend.c), besides
# its man page and its build list (local.mk); and no other code holds a copy
# of a list of them (a few lines that name most of one kind), which a new
# one would have to be added to.  Counted, by name.  No root, no FUSE.
source "$(dirname "$0")/functions.sh"

src=$top_srcdir
make_tmpdir tmp

# The code: sources, headers, scripts, makefiles and the contrib programs,
# not the documentation (README.md, man/, debian/), which names them on
# purpose, nor the recorded outputs of tests.
(cd "$src" && find src sched include tests contrib -type f \
	\( -name '*.[ch]' -o -name '*.sh' -o -name '*.mk' -o -name '*.fio' -o -path '*/bash-completion/*' \
	-o -path 'contrib/crash/*' -o -path 'contrib/bench/*' -o -path 'contrib/compare-elevators' \) \
	-not -path 'tests/fuzz/corpus/*' | sort) >"$tmp/code"
[ -s "$tmp/code" ] || fail "no code found under $src"

# lines PATTERN: the code's lines that match PATTERN (extended), as FILE:LINE:TEXT.
lines()
{
	(cd "$src" && xargs grep -nE -- "$1" <"$tmp/code") || true
}

# once WHAT PATTERN FILE: exactly one line of the code matches PATTERN, in FILE.
once()
{
	local found

	found=$(lines "$2")
	[ "$(grep -c . <<<"$found")" = 1 ] && [ "${found%%:*}" = "$3" ] ||
		fail "$1: not one line in $3 but: ${found:-none}"
}

elevators=$(foreach_elevator | grep -vx none) # none is the core's, not a plugin
filters=$("$RQDISK" --list filters | awk '{ print $1 }')
backends=$("$RQDISK" --list backends | awk '{ print $1 }')
[ -n "$elevators" ] && [ -n "$filters" ] && [ -n "$backends" ] ||
	fail "rqdisk --list names no elevators, filters or backends"

say "each elevator: sched/NAME.c registers it, ELV(NAME) in elevator.c is its one line"
for e in $elevators; do
	file=sched/$e.c
	grep -qE "^ELEVATOR_REGISTER\($e," "$src/$file" || fail "$e: $file does not register it"
	once "$e" "^[[:space:]]*ELV\($e\)" src/block/elevator.c
	lines "elv_builtin_$e\b" | grep -v "^$file:" && fail "$e: its entry point is named outside $file"
	grep -qE "^[[:space:]]*$file \\\\$" "$src/sched/local.mk" || fail "$e: $file is not in sched/local.mk"
	grep -qx "\.SH $e" "$src/man/rqdisk-elevators.7.in" || fail "$e: no section in rqdisk-elevators(7)"
done

say "each filter: src/device/NAME/ registers it, FILTER(SYMBOL) in device.c is its one line"
for f in $filters; do
	sym=${f//-/_}
	dir=src/device/$f
	grep -qE "^DEV_REGISTER\($sym, \"$f\"," "$src/$dir"/*.c || fail "$f: nothing in $dir/ registers it"
	once "$f" "^[[:space:]]*FILTER\($sym\)" src/device/device.c
	lines "dev_${sym}_ops\b" | grep -v "^$dir/" && fail "$f: dev_${sym}_ops is named outside $dir/"
	grep -qE "^[[:space:]]*$dir/" "$src/src/device/local.mk" || fail "$f: $dir/ is not in src/device/local.mk"
	[ -f "$src/man/rqdisk-$f-filter.8.in" ] || fail "$f: no man/rqdisk-$f-filter.8.in"
done

say "each backend: src/backend/backend_NAME.c registers it, its .scheme line in backend.c is its one line"
for b in $backends; do
	grep -qE "^BACKEND_REGISTER\($b," "$src/src/backend/backend_$b.c" ||
		fail "$b: src/backend/backend_$b.c does not register it"
	once "$b" "\.scheme = \"$b\"" src/backend/backend.c
	[ -f "$src/man/rqdisk-$b-backend.8.in" ] || fail "$b: no man/rqdisk-$b-backend.8.in"
done

# copies KIND NAMES...: no four lines of the code outside the registries and
# build lists name more than half of the NAMES (at least four): a list of
# them kept by hand, which a new one would miss.
copies()
{
	local kind=$1 n min found
	shift
	n=$#
	min=$((n / 2 + 1))
	[ $min -ge 4 ] || min=4
	# Not copies: fuzz_control.c stacks every filter with arguments of its
	# own (a new filter goes there to have its control files fuzzed).
	found=$(grep -vE '^(src/block/elevator\.c|src/device/device\.c|src/backend/backend\.c|.*local\.mk|tests/fuzz/fuzz_control\.c)$' \
		"$tmp/code" | (cd "$src" && xargs awk -v names="$*" -v min=$min -v kind="$kind" '
		BEGIN { n = split(names, nm, " ") }
		FNR == 1 { delete buf }
		{
			# a comment describes, as the documentation does: not a list
			buf[FNR % 4] = $0 ~ /^[ \t]*(\/\*|\*|\/\/|#( |$))/ ? "" : $0
			text = " " buf[0] " " buf[1] " " buf[2] " " buf[3] " "
			c = 0
			for (j = 1; j <= n; j++)
				if (text ~ "[^A-Za-z0-9_-]" nm[j] "[^A-Za-z0-9_-]")
					c++
			if (c >= min) { print FILENAME ":" FNR ": " c " " kind "s"; nextfile }
		}'))
	[ -z "$found" ] || fail "a hand-kept list of ${kind}s (use the registry, rqdisk --list): $found"
	echo "no list of ${kind}s outside the registry (at least $min of $n named near each other)"
}
say "no copy of a list of elevators, filters or backends outside the registries"
copies elevator none $elevators
copies filter $filters
copies backend $backends
echo PASS
