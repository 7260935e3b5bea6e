#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# unconfigure-tree.sh - undo a configure run inside the source tree, if there was one.
# The build scripts configure out of the tree (_build/...), and automake refuses
# that while the tree itself is configured ("source directory already configured").
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
[ -f config.status ] || exit 0
echo "note: the source tree was configured in place; running 'make distclean' there first" >&2
if [ -f Makefile ]; then
	make distclean >/dev/null 2>&1 || true
fi
rm -f config.status config.log config.h stamp-h1 libtool rqdisk.pc Makefile
