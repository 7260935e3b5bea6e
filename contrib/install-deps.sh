#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# install-deps.sh - install what building and testing rqdisk needs on Debian 12 (as root).
#
#   install-deps.sh [--ceph]
#
# --ceph adds librbd (the rbd backend) and a Ceph monitor and OSD for
# tests/test-rbd.sh and contrib/ceph-single-node.sh: about 100 packages, a
# minute more; without them the rbd backend is not built and that test skips.
# The packages' build (contrib/package-test.sh, debian/) needs --ceph as well:
# rqdisk-backend-rbd is built against librbd-dev.
set -eu
PACKAGES=(
	build-essential autoconf automake libtool pkg-config
	libfuse3-dev fuse3 liburing-dev check libbsd-dev
	e2fsprogs xfsprogs btrfs-progs util-linux fio python3 man-db blktrace
	gnuplot-nox bsdextrautils
	parallel procps sqlite3
	libnbd-dev nbdkit libnbd-bin iproute2 libcap2-bin
	debhelper dpkg-dev lintian fakeroot bash-completion systemd
)
case "${1:-}" in
--ceph) PACKAGES+=(librbd-dev ceph-mon ceph-osd ceph-common uuid-runtime iproute2) ;;
"") ;;
*)
	echo "usage: $0 [--ceph]" >&2
	exit 2
	;;
esac
missing=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "install-deps: run as root to install: ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
