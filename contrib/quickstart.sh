#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# quickstart.sh - install what is needed, build rqdisk, install it into /usr/local,
# create an image and mount it.
# Usage: contrib/quickstart.sh [IMAGE [MOUNTPOINT [SIZE]]]
# It builds in _build/quickstart, out of the source tree, as contrib/run-tests.sh builds in
# _build/plain, _build/sanitizers and _build/tsan: the two run in either order.  make install puts
# rqdisk in /usr/local/sbin and the tools in /usr/local/bin, on root's PATH, so that the
# README's commands run as written; the mount point is quickstart/, not the mnt/ the
# README's examples use.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
image=${1:-$top/rqdisk.img}
mnt=${2:-$top/quickstart}
size=${3:-1G}
build=$top/_build/quickstart
prefix=/usr/local

"$top/contrib/install-deps.sh"
"$top/contrib/unconfigure-tree.sh"
cd "$top"
[ -x configure ] || autoreconf -fi >/dev/null 2>&1
mkdir -p "$build"
cd "$build"
[ -f Makefile ] || "$top/configure" -q --prefix="$prefix"
make -j"$(nproc)" >/dev/null
echo "quickstart: make install into $prefix"
make install >/dev/null
for p in rqdisk rqdisk-crash rqdisk-replay rqdisk-checkorder; do
	if [ "$(command -v "$p")" != "$(find "$prefix/sbin" "$prefix/bin" -name "$p" -print -quit)" ]; then
		echo "quickstart: $p is not the one in $prefix on this PATH; put it first:" >&2
		echo "  export PATH=$prefix/sbin:$prefix/bin:\$PATH" >&2
		break
	fi
done
mkdir -p "$mnt"
if mountpoint -q "$mnt"; then
	echo "quickstart: $mnt is already mounted" >&2
	exit 1
fi
"$prefix/sbin/rqdisk" --create "$size" "$image" "$mnt"
cat <<MSG
rqdisk is installed in $prefix (man rqdisk; make uninstall in $build takes it away)
and running: $image is the disk $mnt/disk ($(stat -c %s "$mnt/disk") bytes).
  loop-attach it:  losetup -f --show --direct-io=on $mnt/disk
  make a file system on it:  mkfs.ext4 \$(losetup -j $mnt/disk -O NAME -n)
  take it down:    losetup -j $mnt/disk -O NAME -n | xargs -r losetup -d; fusermount3 -u $mnt
MSG
