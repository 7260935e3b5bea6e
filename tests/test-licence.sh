#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-licence.sh - every source file of the tree says its licence in an SPDX
# line near its top (after a #! line where there is one), and COPYING, the
# licence itself, is shipped.  No root, no FUSE.
source "$(dirname "$0")/functions.sh"

[ -f "$top_srcdir/COPYING" ] || fail "COPYING is missing"
grep -q '^BSD 3-Clause License' "$top_srcdir/COPYING" || fail "COPYING is not the BSD 3-Clause licence"

n=0
while IFS= read -r f; do
	n=$((n + 1))
	head -n 3 "$f" | grep -q 'SPDX-License-Identifier: BSD-3-Clause' ||
		fail "${f#$top_srcdir/} has no SPDX line at its top"
done < <(find "$top_srcdir/src" "$top_srcdir/sched" "$top_srcdir/include" \
	"$top_srcdir/tests" "$top_srcdir/man" "$top_srcdir/contrib" \
	-path '*/corpus' -prune -o -type f \
	\( -name '*.[ch]' -o -name '*.sh' -o -name '*.mk' -o -name '*.[1-8]' -o -name '*.[1-8].in' \
	   -o -name '*.syms' -o -perm -u+x \) -print;
	echo "$top_srcdir/Makefile.am"; echo "$top_srcdir/configure.ac")
[ "$n" -gt 300 ] || fail "only $n source files found under $top_srcdir"
echo "PASS: licence ($n files)"
