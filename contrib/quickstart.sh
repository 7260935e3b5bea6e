#!/bin/bash
# quickstart.sh - install what is needed, build rqdisk, create an image and mount it.
# Usage: contrib/quickstart.sh [IMAGE [MOUNTPOINT [SIZE]]]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
image=${1:-$top/rqdisk.img}
mnt=${2:-$top/mnt}
size=${3:-1G}

"$top/contrib/install-deps.sh"
cd "$top"
[ -x configure ] || autoreconf -fi >/dev/null 2>&1
[ -f Makefile ] || ./configure -q
make -j"$(nproc)" >/dev/null
mkdir -p "$mnt"
if mountpoint -q "$mnt"; then
	echo "quickstart: $mnt is already mounted" >&2
	exit 1
fi
./src/rqdisk --create "$size" "$image" "$mnt"
cat <<MSG
rqdisk is running: $image is the disk $mnt/disk ($(stat -c %s "$mnt/disk") bytes).
  loop-attach it:  losetup -f --show --direct-io=on $mnt/disk
  make a file system on it:  mkfs.ext4 \$(losetup -j $mnt/disk -O NAME -n)
  take it down:    losetup -j $mnt/disk -O NAME -n | xargs -r losetup -d; fusermount3 -u $mnt
MSG
