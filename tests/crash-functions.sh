# crash-functions.sh - what the rqdisk-crash scripts share: sourced after
# functions.sh, with $crash the program and $tmp a directory of the test's.

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
