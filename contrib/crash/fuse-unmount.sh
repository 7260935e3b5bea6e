# SPDX-License-Identifier: BSD-3-Clause
# fuse-unmount.sh - sourced by the crash scenarios that loop-attach an rqdisk disk.

# fuse_unmount DIR: fusermount3 -u DIR, again while it is busy, for up to
# 10 s: a loop device detached a moment ago may still hold the disk open,
# as the kernel lets go of a loop device's file after losetup -d returns.
fuse_unmount()
{
	local i

	for i in $(seq 50); do
		fusermount3 -u "$1" 2>/dev/null && return 0
		mountpoint -q "$1" || return 0
		sleep 0.2
	done
	fusermount3 -u "$1" # the last try says why
}
