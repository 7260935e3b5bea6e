# SPDX-License-Identifier: BSD-3-Clause
# crash-functions.sh - what the rqdisk-crash scripts share: sourced after
# functions.sh, with $crash the program, $tmp a directory of the test's and
# $tmp/t the TMPDIR rqdisk-crash runs with.

# run NAME ARGS...: status in $status, output in $tmp/NAME.out, .err
run()
{
	local name=$1

	shift
	status=0
	timeout -s KILL 120 "$crash" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || status=$?
	echo "+ rqdisk-crash $*: status $status"
	cat "$tmp/$name.out" "$tmp/$name.err"
}

# count NAME CLASS COLUMN: a number of the summary (made 2, checked 3, failed 4)
count()
{
	awk -v c="$2" -v k="$3" '$1 == c { print $k }' "$tmp/$1.out"
}

# nothing_left: rqdisk-crash left no file in its TMPDIR and no mount there
nothing_left()
{
	[ -z "$(ls -A "$tmp/t")" ] || fail "left behind in TMPDIR: $(ls -A "$tmp/t")"
	# this test's own mounts only: another rqdisk-crash may run beside it
	! grep -qF " $tmp/t/" /proc/mounts || fail "a mount is left: $(grep -F " $tmp/t/" /proc/mounts)"
}

# refused NAME TEXT ARGS...: exit 2, one line on stderr holding TEXT, nothing left
refused()
{
	local name=$1 text=$2

	shift 2
	run "$name" "$@"
	[ "$status" = 2 ] || fail "$name: status $status, not 2"
	[ "$(wc -l <"$tmp/$name.err")" = 1 ] || fail "$name: not one line on stderr"
	grep -qF -- "$text" "$tmp/$name.err" || fail "$name: no '$text'"
	nothing_left
}
