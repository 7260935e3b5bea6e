#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# run-tests.sh - every test: make distcheck with warnings as errors (the tarball
# built in a tree of its own, with read-only sources, and every unit and
# integration test run there, once), then the unit tests again under ASan and
# UBSan.  Integration tests need root, /dev/fuse and loop devices, and skip (77)
# without them.
set -eu -o pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)
"$top/contrib/install-deps.sh"
"$top/contrib/unconfigure-tree.sh"
cd "$top"
autoreconf -fi >/dev/null 2>&1
# Only this script's own builds: _build/quickstart may hold a running daemon.
rm -rf _build/plain _build/sanitizers
mkdir -p _build/plain _build/sanitizers

cd "$top/_build/plain"
../../configure -q --enable-werror
# Each test's line as it ends; the summary's counts kept for the closing line.
# distcheck's own test-suite.log names each failed test and holds its output:
# print it whole, since the tail of distcheck.log says only that a test failed.
if ! make -j"$jobs" distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror 2>&1 | tee distcheck.log |
	{ grep --line-buffered -E '^(PASS|FAIL|ERROR|XPASS|SKIP):' || true; }; then
	tail -100 distcheck.log
	find . -path '*/_build/sub/test-suite.log' -exec cat {} +
	exit 1
fi
grep -E '^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):' distcheck.log >test-suite.log.summary
echo "distcheck: passed"

cd "$top/_build/sanitizers"
../../configure -q --enable-werror --enable-sanitizers
make -j"$jobs" >/dev/null
RQDISK_PROPERTY_SEEDS=4 make -j"$jobs" check-unit | tee check.out || { cat test-suite.log; exit 1; }
grep '^# ' check.out >test-suite.log.summary

# One closing line for both runs, from the harness's own counts.
count()
{
	awk -v k="$1" '$1 == "#" && $2 == k ":" { n += $3 } END { print n + 0 }' \
		"$top"/_build/plain/test-suite.log.summary "$top"/_build/sanitizers/test-suite.log.summary
}
echo "tests: $(count PASS) passed, $(count FAIL) failed, $(count SKIP) skipped"
