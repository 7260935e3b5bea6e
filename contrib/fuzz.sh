#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# fuzz.sh - build the fuzz targets with clang's libFuzzer and run each for a while.
#
#   contrib/fuzz.sh [SECONDS [TARGET...]]
#
# SECONDS per target (default 300); TARGETs are the names under tests/fuzz/corpus/
# (default: all).  The build is _build/fuzz (FUZZ_BUILD overrides it), configured
# with --enable-fuzzing.  Each target starts from its corpus in the tree and keeps
# what it learns in BUILD/fuzz-corpus/TARGET; an input that crashes, hangs past
# TIMEOUT seconds (default 10) or runs out of memory is kept in
# BUILD/fuzz-crashes/TARGET/, and fuzzing goes on.  How to make one a regression
# case is printed at the end.
set -eu -o pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-300}
shift || true
build=${FUZZ_BUILD:-$top/_build/fuzz}
timeout=${TIMEOUT:-10}

case $seconds in
'' | *[!0-9]*) echo "fuzz.sh: SECONDS must be a number, not '$seconds'" >&2; exit 2 ;;
esac
if [ $# -eq 0 ]; then
	set -- $(cd "$top/tests/fuzz/corpus" && ls)
fi
for t in "$@"; do
	[ -d "$top/tests/fuzz/corpus/$t" ] || { echo "fuzz.sh: no fuzz target '$t'" >&2; exit 2; }
done

mkdir -p "$build"
cd "$build"
if [ ! -f Makefile ]; then
	[ -x "$top/configure" ] || (cd "$top" && autoreconf -fi >/dev/null 2>&1)
	"$top/configure" -q --enable-fuzzing
fi
make -j"$(nproc)" >/dev/null

for t in "$@"; do
	corpus=$build/fuzz-corpus/$t
	crashes=$build/fuzz-crashes/$t
	mkdir -p "$corpus" "$crashes" "$build/fuzz-logs"
	echo "fuzz.sh: $t for ${seconds}s (log: $build/fuzz-logs/$t.log)"
	# -fork=1 keeps fuzzing past a crash or a hang, each kept in $crashes
	nice -n 19 "$build/tests/fuzz/fuzz-$t" -max_total_time="$seconds" -timeout="$timeout" \
		-rss_limit_mb=2048 -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
		-artifact_prefix="$crashes/" "$corpus" "$top/tests/fuzz/corpus/$t" \
		>"$build/fuzz-logs/$t.log" 2>&1 || true
	tail -1 "$build/fuzz-logs/$t.log"
done

found=$(find "$build/fuzz-crashes" -type f | sort)
if [ -z "$found" ]; then
	echo "fuzz.sh: no crashes, hangs or leaks found"
	exit 0
fi
echo "fuzz.sh: inputs that crashed, hung or ran out of memory:"
echo "$found" | sed 's/^/  /'
cat <<EOM
Reproduce one:     $build/tests/fuzz/fuzz-TARGET FILE
Once it is fixed, keep it as a regression case that every make check runs:
  cp FILE $top/tests/fuzz/corpus/TARGET/crash-WHAT-IT-BROKE   (or hang-...)
  make check TESTS=tests/fuzz/fuzz-TARGET                      (in a plain build)
EOM
exit 1
