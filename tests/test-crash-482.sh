#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-crash-482.sh - contrib/crash/generic-482's smoke mode: for each of
# ext4, xfs and btrfs whose mkfs is installed, a tiny workload logged
# through rqdisk's log-writes filter, then every flush's state checked by
# check-fs: a row per file system with its states, none failed, and the
# exit status 0.  The full run (a metadata-heavy workload) is not part of
# make check: it takes minutes.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires_loop
requires mount umount blkid mkfs.ext4 e2fsck

script=$top_srcdir/contrib/crash/generic-482
make_tmpdir tmp

say "generic-482 --smoke: every state at every flush consistent"
status=0
"$script" --smoke "$top_builddir" >"$tmp/out" 2>&1 || status=$?
cat "$tmp/out"
[ "$status" = 0 ] || fail "generic-482 --smoke: status $status"
grep -q "^fs  *states  *failed  *folded  *seconds$" "$tmp/out" || fail "no header line"
for fs in ext4 xfs btrfs; do
	if ! command -v "mkfs.$fs" >/dev/null; then
		grep -qx "$fs: no mkfs.$fs, not run" "$tmp/out" || fail "$fs: not said that it did not run"
		continue
	fi
	row=$(awk -v fs="$fs" '$1 == fs' "$tmp/out")
	[ -n "$row" ] || fail "$fs: no row"
	read -r _ states failed folded seconds <<<"$row"
	((states > 0)) || fail "$fs: no state checked"
	[ "$failed" = 0 ] || fail "$fs: $failed states failed"
	((folded < states)) || fail "$fs: every state folded"
done
echo "PASS: generic-482 smoke"
