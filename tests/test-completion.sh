#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-completion.sh - the bash completion of contrib/bash-completion/rqdisk,
# loaded with bash-completion's helpers, completes each program's options,
# the elevators, filters and backends rqdisk --list prints, each filter's
# keys as rqdisk --help-filter prints them (the same set its man page
# documents), the image schemes and the forms of rqdisk-crash's state IDs.
# What it offers of those it asks the rqdisk being completed when it
# completes: a stand-in rqdisk with other lists gets those.  No root, no FUSE.
source "$(dirname "$0")/functions.sh"

bash_completion=/usr/share/bash-completion/bash_completion
[ -f "$bash_completion" ] || skip "no $bash_completion (Debian: bash-completion)"
completion=$(realpath "$top_srcdir/contrib/bash-completion/rqdisk")
tools=$(realpath "$top_builddir/src/tools"):$(realpath "$top_builddir/src/crash"):$(realpath "$top_builddir/src/extents")
man=$top_srcdir/man
make_tmpdir tmp

# A bash of its own, as an interactive one completes: bash-completion loaded,
# then the completion; the line split into COMP_WORDS at spaces, ":" and "=",
# as readline splits it, the cursor at its end.  Prints the replies, one a line.
cat >"$tmp/complete.sh" <<'SH'
source "$1"
source "$2"
PATH=$3:$PATH
func=$4
line=$5
compopt() { :; } # needs a completion in progress; nothing to show here
set -f
COMP_WORDS=($(sed -E 's/([:=])/ \1 /g' <<<"$line"))
[[ $line == *[\ :=] ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMP_LINE=$line
COMP_POINT=${#line}
COMPREPLY=()
"$func" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
printf '%s\n' "${COMPREPLY[@]}"
SH
# complete FUNC LINE: the replies for LINE, its program in the build tree
# (or the rqdisk in $daemon_dir, if set).
complete()
{
	(cd "$tmp" && bash --norc --noprofile "$tmp/complete.sh" "$bash_completion" "$completion" \
		"${daemon_dir:-$(dirname "$RQDISK")}:$tools" "$1" "$2")
}
# expect FUNC LINE WORD...: each WORD is among the replies for LINE.
expect()
{
	local func=$1 line=$2 replies w
	shift 2
	replies=$(complete "$func" "$line")
	for w in "$@"; do
		grep -qxF -- "$w" <<<"$replies" ||
			fail "'$line<TAB>' does not offer '$w': $(echo $replies)"
	done
}

say "each program's options"
expect _rqdisk "rqdisk --el" --elevator
expect _rqdisk "rqdisk --fi" --filter
expect _rqdisk "rqdisk -" --model --create --foreground --read-only --version
expect _rqdisk_replay "rqdisk-replay --" --elevator --model --depth --latencies --csv
expect _rqdisk_checkorder "rqdisk-checkorder --" --quiet --help --version
expect _rqdisk_crash "rqdisk-crash --" --at --drop --state --output --via --loop --only --except
expect _rqdisk_extents "rqdisk-extents --" --metadata --help --version
expect _rqdisk_crash "rqdisk-crash --drop 1 base log --" --

expect _rqdisk "rqdisk --" --list --help-filter --help-backend
expect _rqdisk "rqdisk --hw" --hw-queues --hw-queue-depth
expect _rqdisk "rqdisk --queue-mode " rq mq
expect _rqdisk_replay "rqdisk-replay --hw" --hw-queues --hw-queue-depth
expect _rqdisk_replay "rqdisk-replay --queue-mode " rq mq

say "every elevator rqdisk --list names, after --elevator and -e"
elevators=$(foreach_elevator)
expect _rqdisk "rqdisk --elevator " $elevators
expect _rqdisk "rqdisk -e dead" deadline
expect _rqdisk_replay "rqdisk-replay -e deadline,cf" deadline,cfq
expect _rqdisk_replay "rqdisk-replay -e " all

say "every filter and backend rqdisk --list names, after --filter, --help-filter, --help-backend"
filters=$("$RQDISK" --list filters | awk '{ print $1 }')
backends=$("$RQDISK" --list backends | awk '{ print $1 }')
[ -n "$filters" ] && [ -n "$backends" ] || fail "rqdisk --list names no filters or no backends"
expect _rqdisk "rqdisk --filter " $filters
expect _rqdisk "rqdisk --filter log" log-writes
expect _rqdisk "rqdisk --help-filter " $filters
expect _rqdisk "rqdisk --help-backend " $backends
expect _rqdisk "rqdisk --list " elevators filters backends

say "each filter's keys: a key, a key's value, and the set its man page documents"
expect _rqdisk "rqdisk --filter fault:corrupt_o" corrupt_on=
expect _rqdisk "rqdisk --filter fault:error=write,sti" write,sticky=
expect _rqdisk "rqdisk --filter fault:corrupt_on=r" read read/write
expect _rqdisk "rqdisk --filter model:" none hdd ssd
expect _rqdisk "rqdisk --filter model:hdd:rp" rpm=
expect _rqdisk "rqdisk --model ssd:read_us=100,ch" 100,channels=
expect _rqdisk_replay "rqdisk-replay --filter delay:m" ms=

say "the null backend's keys after --null=, as --help-backend null lists them"
expect _rqdisk "rqdisk --null=" irqmode= completion_nsec=
expect _rqdisk "rqdisk --null=irqmode=t" timer
expect _rqdisk "rqdisk --null=irqmode=timer,comp" timer,completion_nsec=
expect _rqdisk "rqdisk --null " complete.sh # the IMAGE, not a key

# The tag lines of a man page section (the line after .TP), fonts undone.
tags()
{
	sed -n "/^\.SH $2\$/,/^\.SH /p" "$1" | awk 'tp { print; tp = 0 } /^\.TP/ { tp = 1 }' |
		sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' -e 's/^\.[BIR]*[[:space:]]*//' -e 's/"//g'
}
# same WHAT A B [WHO]: the two word lists hold the same words (B is what
# WHO, the man page unless said, has).
same()
{
	local a b
	a=$(tr ' ' '\n' <<<"$2" | grep . | sort -u)
	b=$(tr ' ' '\n' <<<"$3" | grep . | sort -u)
	[ "$a" = "$b" ] ||
		fail "$1: the completion offers [$(echo $a)], ${4:-the man page documents} [$(echo $b)]"
}
offered()
{
	complete _rqdisk "rqdisk --filter $1" | sed 's/=$//'
}
# listed FILTER [WORD]: the keys rqdisk --help-filter FILTER prints (of WORD).
listed()
{
	"$RQDISK" --help-filter "$1" | awk -v w="${2-}" '/^  [^ ]/ {
		if (w == "" && $1 !~ /:/) print $1
		else if (w != "" && index($1, w ":") == 1) print substr($1, length(w) + 2) }'
}
say "each filter's keys are what rqdisk --help-filter lists"
for f in $filters; do
	if [ "$f" = model ]; then
		models=$(listed model)
		same "model:" "$(offered model:)" "none $models" "--help-filter lists" # none: --model's
		for m in $models; do
			same "model:$m:" "$(offered "model:$m:")" "$(listed model "$m")" \
				"--help-filter lists"
		done
		continue
	fi
	same "$f" "$(offered "$f:")" "$(listed "$f")" "--help-filter lists"
done

say "the completion asks the rqdisk it completes, when it completes"
daemon_dir=$tmp/standin
mkdir "$daemon_dir"
cat >"$daemon_dir/rqdisk" <<'SH'
#!/bin/sh
# a stand-in rqdisk with lists of its own
case "$1 ${2-}" in
"--list elevators") printf 'none  no elevator\nzigzag  a stand-in\n' ;;
"--list filters") printf 'scramble  a stand-in\n' ;;
"--list backends") printf 'tape  a stand-in\n' ;;
"--help-filter scramble") printf 'scramble - a stand-in\nKeys:\n  twist  how much\n' ;;
"--help-filter model") printf 'model - a stand-in\nKeys:\n  flash  a model\n  flash:cells  its cells\n' ;;
*) exit 1 ;;
esac
SH
chmod +x "$daemon_dir/rqdisk"
expect _rqdisk "rqdisk --elevator z" zigzag
expect _rqdisk "rqdisk --filter sc" scramble
expect _rqdisk "rqdisk --filter scramble:tw" twist=
expect _rqdisk "rqdisk --help-backend t" tape
expect _rqdisk "rqdisk --model fl" flash
expect _rqdisk "rqdisk --model flash:ce" cells=
[ -z "$(complete _rqdisk "rqdisk --filter delay:m")" ] ||
	fail "the completion offers delay's keys that the stand-in rqdisk does not have"
[ -z "$(complete _rqdisk "rqdisk --elevator dead")" ] ||
	fail "the completion offers deadline, which the stand-in rqdisk does not have"
unset daemon_dir

say "each filter's keys are the set its man page documents"
for f in $filters; do
	page=$man/rqdisk-$f-filter.8.in
	[ -f "$page" ] || fail "$f: no man/rqdisk-$f-filter.8.in"
	if [ "$f" = model ]; then
		# SPECS: a tag hdd, its keys, a tag ssd, its keys; preset=NAME is hdd's
		specs=$(tags "$page" SPECS | tr -s ', ' '\n\n' | sed 's/=.*//')
		same "model:hdd" "$(offered model:hdd:)" \
			"$(sed -n '/^hdd$/,/^ssd$/p' <<<"$specs" | grep -E '^[a-z_]+$' | grep -vx -e hdd -e ssd)"
		same "model:ssd" "$(offered model:ssd:)" \
			"$(sed -n '/^ssd$/,$p' <<<"$specs" | grep -E '^[a-z_]+$' | grep -vx ssd)"
		continue
	fi
	same "$f" "$(offered "$f:")" "$(tags "$page" KEYS | grep -oE '[a-z_]+ ?=' | tr -d ' =')"
done

say "IMAGE's schemes"
expect _rqdisk "rqdisk nbd+" nbd+unix:///
expect _rqdisk "rqdisk nb" nbd:// nbds://
expect _rqdisk "rqdisk rb" rbd:

say "rqdisk-crash: the forms of a state ID, --at's points, and the check after --"
expect _rqdisk_crash "rqdisk-crash --state " flush: fua: mark: entry: end
expect _rqdisk_crash "rqdisk-crash --state flush:12" 12+drop: 12+torn:
expect _rqdisk_crash "rqdisk-crash --state end" end+drop: end+torn:
expect _rqdisk_crash "rqdisk-crash --at " flush fua mark:
expect _rqdisk_crash "rqdisk-crash --via " fuse copy auto
expect _rqdisk_crash "rqdisk-crash base log -- bas" bash
say "rqdisk-crash: numbers and --shard's K/N are not file names"
expect _rqdisk_crash "rqdisk-crash --" --list --shard --no-dedup
for opt in --shard --drop --jobs; do
	replies=$(complete _rqdisk_crash "rqdisk-crash $opt ")
	[ -z "$replies" ] || fail "'rqdisk-crash $opt <TAB>' offers $(echo $replies)"
done
echo "PASS: completion"
