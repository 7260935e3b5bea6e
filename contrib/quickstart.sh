#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# quickstart.sh - install what is needed, build rqdisk, create an image and mount it.
# Usage: contrib/quickstart.sh [IMAGE [MOUNTPOINT [SIZE]]]
# It builds in _build/quickstart, out of the source tree, as contrib/run-tests.sh builds in
# _build/plain and _build/sanitizers: the two run in either order.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
image=${1:-$top/rqdisk.img}
mnt=${2:-$top/mnt}
size=${3:-1G}
build=$top/_build/quickstart

"$top/contrib/install-deps.sh"
"$top/contrib/unconfigure-tree.sh"
cd "$top"
[ -x configure ] || autoreconf -fi >/dev/null 2>&1
mkdir -p "$build"
cd "$build"
[ -f Makefile ] || "$top/configure" -q
make -j"$(nproc)" >/dev/null
mkdir -p "$mnt"
if mountpoint -q "$mnt"; then
	echo "quickstart: $mnt is already mounted" >&2
	exit 1
fi
"$build/src/daemon/rqdisk" --create "$size" "$image" "$mnt"
cat <<MSG
rqdisk is running: $image is the disk $mnt/disk ($(stat -c %s "$mnt/disk") bytes).
  the daemon:      $build/src/daemon/rqdisk (man -l $top/man/rqdisk.8)
  loop-attach it:  losetup -f --show --direct-io=on $mnt/disk
  make a file system on it:  mkfs.ext4 \$(losetup -j $mnt/disk -O NAME -n)
  take it down:    losetup -j $mnt/disk -O NAME -n | xargs -r losetup -d; fusermount3 -u $mnt
MSG
