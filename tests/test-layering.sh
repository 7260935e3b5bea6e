#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-layering.sh - a layer knows only the layer below: no file of the device
# stack (src/device, src/backend) names the request queue or reaches a header
# of the block core (src/block), of the daemon (src/daemon) or of the tools
# (src/tools, src/crash), not even through a header it includes.  What a
# layer needs of the queue above, or of the loop it runs on, is a call of
# device.h, answered by the host; the block types device.h needs are the
# public blk_types.h (include/rqdisk).  No root, no FUSE.
source "$(dirname "$0")/functions.sh"

src=$top_srcdir/src
dirs="$src/common $src/block $src/device $(ls -d "$src"/device/*/) $src/backend $src/daemon $src/tools $src/crash $top_srcdir/include/rqdisk"

# Where a quoted include resolves, as the build's -iquote list finds it.
resolve()
{
	local d
	for d in $(dirname "$1") $dirs; do
		[ -f "$d/$2" ] && { echo "$d/$2"; return; }
	done
}

# Every header file $1 includes with quotes, and theirs, once each.
declare -A seen
walk()
{
	local h path
	for h in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$1"); do
		path=$(resolve "$1" "$h")
		[ -n "$path" ] || continue
		[ -n "${seen[$path]:-}" ] && continue
		seen[$path]=1
		echo "$path"
		walk "$path"
	done
}

files=$(find "$src/device" "$src/backend" -name "*.[ch]")
[ -n "$files" ] || fail "no file of the stack found under $src"
# every crossing is said, then the test fails
bad=0
for f in $files; do
	if grep -n 'request_queue' "$f"; then
		echo "${f#$top_srcdir/} names the request queue"
		bad=$((bad + 1))
	fi
	seen=()
	for h in $(walk "$f"); do
		case $h in
		"$src"/block/* | "$src"/daemon/* | "$src"/tools/* | "$src"/crash/*)
			echo "${f#$top_srcdir/} reaches ${h#$top_srcdir/}"
			bad=$((bad + 1))
			;;
		esac
	done
done
[ $bad = 0 ] || fail "$bad crossings of the stack's layering (above)"
echo "PASS: layering"
