#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-layering.sh - a layer knows only the layer below: no file of the device
# stack (src/device, src/backend) names the request queue or reaches the block
# core's blkdev.h, not even through a header it includes.  What a layer needs
# of the queue above is a call of device.h, answered by the host.  No root, no
# FUSE.
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
for f in $files; do
	grep -n 'request_queue' "$f" && fail "${f#$top_srcdir/} names the request queue"
	seen=()
	for h in $(walk "$f"); do
		case $h in
		*/blkdev.h | */blktrace.h) fail "${f#$top_srcdir/} reaches ${h#$top_srcdir/}" ;;
		esac
	done
done
echo "PASS: layering"
