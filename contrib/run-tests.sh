#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# run-tests.sh - every test: make distcheck with warnings as errors (the tarball
# built in a tree of its own, with read-only sources, and every unit and
# integration test run there, once), then the unit tests again under ASan and
# UBSan, and the multi-queue core's threaded tests under ThreadSanitizer.  Integration tests need root, /dev/fuse and loop devices, and skip (77)
# without them.  It says each step as it starts, each test's result as it
# ends, and at the end why each skipped test skipped.
set -eu -o pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)
start=$SECONDS

# step WHAT: say what starts now, with the minutes and seconds since the start.
step()
{
	local t=$((SECONDS - start))

	printf 'run-tests: [%d:%02d] %s\n' $((t / 60)) $((t % 60)) "$*"
}

echo "run-tests: about 17 minutes on an idle 2-core machine (25 under load, less with more cores):"
echo "run-tests: distcheck builds for 3-5 minutes before its first test ends, then the tests run, each one line as it ends (then the sanitizers' unit tests, and ThreadSanitizer's)."
step "installing what is missing (contrib/install-deps.sh)"
"$top/contrib/install-deps.sh"
"$top/contrib/unconfigure-tree.sh"
cd "$top"
step "autoreconf"
autoreconf -fi >/dev/null 2>&1
# Only this script's own builds: _build/quickstart may hold a running daemon.
rm -rf _build/plain _build/sanitizers _build/tsan
mkdir -p _build/plain _build/sanitizers _build/tsan

# Each skipped test's reason, written by the test driver as the test ends
# (distcheck removes its tests' logs with its build).
skips=$top/_build/plain/skip-reasons.txt
export RQDISK_SKIP_REASONS=$skips
driver="bash $top/contrib/skip-reason-driver"

cd "$top/_build/plain"
step "configure (_build/plain)"
../../configure -q --enable-werror
# Each test's line as it ends; the summary's counts kept for the closing line.
# distcheck's own test-suite.log names each failed test and holds its output:
# print it whole, since the tail of distcheck.log says only that a test failed.
step "make distcheck: the tarball, its build, then every test (log: _build/plain/distcheck.log)"
if ! make -j"$jobs" distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror LOG_DRIVER="$driver" 2>&1 |
	tee distcheck.log |
	{ grep --line-buffered -E '^(PASS|FAIL|ERROR|XPASS|SKIP):' || true; }; then
	tail -100 distcheck.log
	find . -path '*/_build/sub/test-suite.log' -exec cat {} +
	exit 1
fi
grep -E '^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):' distcheck.log >test-suite.log.summary
step "distcheck: passed"

cd "$top/_build/sanitizers"
step "configure and build with ASan and UBSan (_build/sanitizers)"
../../configure -q --enable-werror --enable-sanitizers
make -j"$jobs" >/dev/null
step "the unit tests under ASan and UBSan"
RQDISK_PROPERTY_SEEDS=4 make -j"$jobs" check-unit LOG_DRIVER="$driver" | tee check.out ||
	{ cat test-suite.log; exit 1; }
grep '^# ' check.out >test-suite.log.summary

# ThreadSanitizer cannot run beside ASan: a build of its own, for the tests
# whose submitters and completers run on threads of their own.
cd "$top/_build/tsan"
step "configure with ThreadSanitizer (_build/tsan)"
../../configure -q --enable-werror --enable-sanitizers=thread
step "the multi-queue core's threaded tests under ThreadSanitizer"
make -j"$jobs" check TESTS='tests/check_mq tests/check_mq_barrier tests/check_mq_threads' \
	LOG_DRIVER="$driver" | tee check.out || { cat test-suite.log; exit 1; }
grep '^# ' check.out >test-suite.log.summary

# Why each test skipped, then one closing line for every run, from the
# harness's own counts.
[ ! -s "$skips" ] || sort -u "$skips"
count()
{
	awk -v k="$1" '$1 == "#" && $2 == k ":" { n += $3 } END { print n + 0 }' \
		"$top"/_build/plain/test-suite.log.summary "$top"/_build/sanitizers/test-suite.log.summary \
		"$top"/_build/tsan/test-suite.log.summary
}
step "done"
echo "tests: $(count PASS) passed, $(count FAIL) failed, $(count SKIP) skipped"
