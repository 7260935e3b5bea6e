#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# package-test.sh - build the Debian packages of the committed tree (HEAD) in a
# copy of it, lint them, install them, try what they installed, and purge them
# again, leaving the machine's packages as they were.  As root, on Debian 12.
#
#   contrib/package-test.sh
#
# Fails on a build error, a lintian error (E:), a program whose --version is
# not the package's version, a smoke test of the installed rqdisk that fails,
# or a systemd-analyze verify of the installed unit that fails.  Where
# systemd-analyze cannot run at all, that step is skipped and says so.
set -eu -o pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
started=$SECONDS
PACKAGES=(rqdisk rqdisk-backend-nbd rqdisk-backend-rbd librqdisk-elevator-dev)

say()
{
	echo "package-test: $*"
}
die()
{
	echo "package-test: FAIL: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "run as root: it installs and purges packages"
for p in "${PACKAGES[@]}"; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		die "$p is installed already: this test would replace it, and purge it after"
	fi
done

work=$(mktemp -d /tmp/rqdisk-package-test.XXXXXX)
installed_before=$work/installed-before
installed()
{
	dpkg-query -W -f='${db:Status-Abbrev} ${Package}:${Architecture}\n' | awk '$1 == "ii" { print $2 }' | sort
}
installed >"$installed_before"
pid=
nbdkit_pid=
# Whatever happened, no mount, no daemon and no package of this run stays.
cleanup()
{
	local status=$? extra

	set +e
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	[ -n "$nbdkit_pid" ] && kill "$nbdkit_pid" 2>/dev/null
	mountpoint -q "$work/mnt" 2>/dev/null && fusermount3 -u "$work/mnt"
	[ -n "$pid" ] && wait "$pid" 2>/dev/null
	[ -n "$nbdkit_pid" ] && wait "$nbdkit_pid" 2>/dev/null
	apt-get purge -y -qq "${PACKAGES[@]}" >/dev/null 2>&1
	# and what apt-get pulled in for them
	extra=$(installed | comm -13 "$installed_before" -)
	[ -z "$extra" ] || apt-get purge -y -qq $extra >/dev/null 2>&1
	rm -rf "$work"
	exit $status
}
trap cleanup EXIT

say "building the packages of $(git -C "$top" rev-parse --short HEAD) (uncommitted changes are not in them)"
mkdir "$work/src"
git -C "$top" archive --prefix=rqdisk/ HEAD | tar -x -C "$work/src"
(cd "$work/src/rqdisk" && dpkg-buildpackage -us -uc -b -j"$(nproc)") >"$work/build.log" 2>&1 || {
	tail -50 "$work/build.log"
	die "dpkg-buildpackage failed"
}
debs=()
for p in "${PACKAGES[@]}"; do
	deb=$(ls "$work/src/${p}"_*.deb) || die "no package $p was built"
	debs+=("$deb")
done
say "built in $((SECONDS - started)) s: ${debs[*]##*/}"

lintian "$work/src"/rqdisk_*.changes >"$work/lintian.log" 2>&1 || true
grep -E '^[EW]: ' "$work/lintian.log" || true
if grep -q '^E: ' "$work/lintian.log"; then
	die "lintian reports errors"
fi
say "lintian: no errors ($(grep -c '^W: ' "$work/lintian.log" || true) warnings)"

apt-get install -y -qq "${debs[@]}" >"$work/install.log" 2>&1 || {
	cat "$work/install.log"
	die "apt-get install of the packages failed"
}
version=$(dpkg-query -W -f='${Version}' rqdisk)
upstream=${version#*:}
upstream=${upstream%-*}
say "installed rqdisk $version"

# Every program the package installs says the package's version.
programs=$(dpkg -L rqdisk | grep -E '^/usr/s?bin/[^/]+$')
[ -n "$programs" ] || die "the rqdisk package installs no program"
for prog in $programs; do
	line=$("$prog" --version) || die "$prog --version failed"
	[ "$line" = "${prog##*/} $upstream" ] ||
		die "$prog --version says '$line', the package is $version"
done
say "--version: $(echo $programs | wc -w) programs say $upstream"

# The installed daemon serves an image: the modules from the package's
# directory, not a build tree's.
unset RQDISK_BACKEND_DIR
rqdisk=$(dpkg -L rqdisk | grep -E '/sbin/rqdisk$')
mounted()
{
	local i

	for ((i = 0; i < 300; i++)); do
		mountpoint -q "$1" && return 0
		kill -0 "$pid" 2>/dev/null || die "rqdisk exited before mounting $1"
		sleep 0.1
	done
	die "rqdisk did not mount $1 in 30 s"
}
unmount()
{
	local status=0

	fusermount3 -u "$work/mnt" || die "fusermount3 -u failed"
	wait "$pid" || status=$?
	pid=
	[ $status = 0 ] || die "rqdisk exited with status $status after the unmount"
}
if [ ! -c /dev/fuse ]; then
	say "SKIP the smoke test: no /dev/fuse"
else
	mkdir "$work/mnt"
	"$rqdisk" --foreground --fuse-uring=off --create 64M "$work/disk.img" "$work/mnt" &
	pid=$!
	mounted "$work/mnt"
	head -c 1M /dev/urandom >"$work/data"
	dd if="$work/data" of="$work/mnt/disk" bs=64k seek=16 oflag=direct conv=notrunc status=none
	cmp <(dd if="$work/mnt/disk" bs=64k skip=16 count=16 iflag=direct status=none) "$work/data" ||
		die "the disk did not read back what was written"
	echo cfq >"$work/mnt/queue/scheduler"
	grep -q '\[cfq\]' "$work/mnt/queue/scheduler" ||
		die "queue/scheduler did not switch to cfq: $(cat "$work/mnt/queue/scheduler")"
	dd if="$work/data" of="$work/mnt/disk" bs=64k seek=64 oflag=direct conv=notrunc status=none
	unmount
	cmp <(dd if="$work/disk.img" bs=64k skip=64 count=16 status=none) "$work/data" ||
		die "the image does not hold what was written after the switch"
	say "smoke test: mounted, wrote, read back, switched to cfq, wrote, unmounted, image checked"

	# The nbd module of rqdisk-backend-nbd, as installed.
	if command -v nbdkit >/dev/null; then
		nbdkit -f -U "$work/nbd.sock" memory 16M &
		nbdkit_pid=$!
		for ((i = 0; i < 100; i++)); do
			[ -S "$work/nbd.sock" ] && break
			sleep 0.1
		done
		"$rqdisk" --foreground --fuse-uring=off "nbd+unix:///?socket=$work/nbd.sock" "$work/mnt" &
		pid=$!
		mounted "$work/mnt"
		dd if="$work/data" of="$work/mnt/disk" bs=64k oflag=direct conv=notrunc status=none
		cmp <(dd if="$work/mnt/disk" bs=64k count=16 iflag=direct status=none) "$work/data" ||
			die "the NBD disk did not read back what was written"
		unmount
		kill "$nbdkit_pid"
		wait "$nbdkit_pid" || true
		nbdkit_pid=
		say "smoke test: an NBD export through the installed backend-nbd module"
	else
		say "SKIP the NBD smoke test: no nbdkit"
	fi
fi

# The unit as installed.  systemd-analyze needs no running systemd, but some
# sandboxes keep it from running at all: a unit known to be good tells.
unit=$(dpkg -L rqdisk | grep -E '/systemd/system/rqdisk@\.service$') ||
	die "the rqdisk package installs no rqdisk@.service"
if ! command -v systemd-analyze >/dev/null; then
	say "SKIP systemd-analyze verify: no systemd-analyze (contrib/install-deps.sh installs systemd)"
else
	printf '[Service]\nType=oneshot\nExecStart=/bin/true\n' >"$work/known-good.service"
	if ! systemd-analyze verify "$work/known-good.service" >"$work/analyze.log" 2>&1; then
		say "SKIP systemd-analyze verify: it cannot run here: $(head -1 "$work/analyze.log")"
	else
		systemd-analyze verify "$unit" || die "systemd-analyze verify $unit failed"
		say "systemd-analyze verify $unit: passed"
	fi
fi

say "passed in $((SECONDS - started)) s; purging the packages"
