#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-crash-sqlite.sh - contrib/crash/sqlite-journal in small: SQLite in
# rollback-journal mode on ext4 on a logged rqdisk disk, a few commits each
# acknowledged in the log, crashes aimed at the database file (rqdisk-crash
# --only its rqdisk-extents) and checked by check-sqlite.
#  - synchronous=OFF: some aimed state that loses a write of the database
#    fails (a transaction's pages written in part with no durable journal
#    to roll them back: integrity_check fails, or an acknowledged row is
#    gone), and the first failing state is named with the checker's reason.
#  - synchronous=FULL: every aimed state passes.
#  - --ack fsync with synchronous=OFF: the commits stay in the page cache,
#    and a state past an acknowledgement fails for the rows it lacks, which
#    check-sqlite names.
# The unaimed runs and the full-size workload take minutes: not here.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires_loop
requires mkfs.ext4 mount umount losetup sqlite3

script=$top_srcdir/contrib/crash/sqlite-journal
for p in src/crash/rqdisk-crash src/extents/rqdisk-extents; do
	[ -x "$top_builddir/$p" ] || fail "$top_builddir/$p is not built"
done
make_tmpdir tmp

# row OUT SYNC AIM: the fields "states failed lost first" of that run's line
row()
{
	awk -v s="$2" -v a="$3" '$1 == s && $2 == a { print $3, $4, $5, $6 }' "$1"
}

say "synchronous=OFF and FULL, crashes aimed at the database"
status=0
"$script" --commits 6 --aimed-only "$top_builddir" >"$tmp/out" 2>&1 || status=$?
cat "$tmp/out"
[ $status = 0 ] || fail "sqlite-journal: status $status"
read -r states failed lost first <<<"$(row "$tmp/out" off aimed)"
((states > 0)) || fail "OFF: no state made"
((failed >= 1)) || fail "OFF: no aimed state failed"
# a prefix may fail with OFF too (ext4's flush came while the pages were
# being written back): the aim is what makes states that lose the database's writes
((lost >= 1)) || fail "OFF: no state that loses a write of the database failed"
[ "$first" != - ] || fail "OFF: no first failing state"
grep -A1 '^off ' "$tmp/out" | grep -q 'first failing: .*\(integrity_check\|rows missing\|is gone\|failed\)' ||
	fail "OFF: the first failing state is not named with the checker's reason"
read -r states failed lost first <<<"$(row "$tmp/out" full aimed)"
((states > 0)) || fail "FULL: no state made"
[ "$failed" = 0 ] || fail "FULL: $failed aimed states failed"
[ "$first" = - ] || fail "FULL: a first failing state, $first"

say "synchronous=OFF, acknowledged by an fsync of another file: the rows are not there"
status=0
"$script" --sync off --ack fsync --commits 3 --aimed-only "$top_builddir" >"$tmp/out" 2>&1 || status=$?
cat "$tmp/out"
[ $status = 0 ] || fail "sqlite-journal --ack fsync: status $status"
read -r states failed lost first <<<"$(row "$tmp/out" off aimed)"
((failed >= 1)) || fail "--ack fsync: no state lacks an acknowledged row"
grep -q 'first failing: .*commits acknowledged, rows missing: 1\b' "$tmp/out" ||
	fail "--ack fsync: the first failing state is not one that lacks row 1"
echo "PASS: crash-sqlite"
