#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-backend-modules.sh - the nbd and rbd backends are modules in
# RQDISK_BACKEND_DIR: a file image needs neither; a module that is not
# there, whose library is not there, or that is no backend stops rqdisk
# with one line naming it and dlopen's reason, status 1, nothing mounted,
# in the foreground and when daemonizing.  The build tree's modules load
# (every symbol they need from rqdisk is exported): with no server, the
# backend itself is what refuses; an nbd image maps its module.  Untold, an
# rqdisk run from its build tree maps the module built beside it, but never
# one that another user could have changed, nor that directory's users.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires timeout

# as /proc/PID/maps names it: top_builddir is DIR/src/daemon/../.. where a test runs alone
built=$(realpath -m "$RQDISK_BACKEND_DIR")
have_nbd=
have_rbd=
grep -q nbd+unix <<<"$("$RQDISK" --help)" && have_nbd=1
grep -q "rbd:POOL" <<<"$("$RQDISK" --help)" && have_rbd=1
[ -n "$have_nbd$have_rbd" ] || skip "rqdisk was built without libnbd and librbd: no modules"

make_tmpdir tmp
mkdir "$tmp/mnt" "$tmp/empty" "$tmp/nolib" "$tmp/wrong"
truncate -s 16M "$tmp/img"
cleanup_fn _unmount "$tmp/mnt"

# refused DIR PATTERN IMAGE: with RQDISK_BACKEND_DIR=DIR, rqdisk IMAGE exits
# with status 1 and one line on stderr matching PATTERN, and mounts nothing.
refused()
{
	local dir=$1 pattern=$2 image=$3 mode status

	for mode in -f ""; do
		status=0
		# shellcheck disable=SC2086 # mode is no word or one
		RQDISK_BACKEND_DIR=$dir timeout 30 "$RQDISK" $mode "$image" "$tmp/mnt" \
			2>"$tmp/err" || status=$?
		echo "rqdisk $mode $image: status $status: $(cat "$tmp/err")"
		[ $status = 1 ] || fail "rqdisk $mode $image with modules in $dir: status $status, not 1"
		[ "$(wc -l <"$tmp/err")" = 1 ] || fail "rqdisk $mode $image: not one line on stderr"
		[[ $(cat "$tmp/err") =~ $pattern ]] ||
			fail "rqdisk $mode $image: the message does not match '$pattern'"
		no_mount_under "$tmp" || fail "rqdisk $mode $image left a mount under $tmp"
	done
}

# patched NAME LIB GONE: backend-NAME.so in $tmp/nolib, needing the library
# GONE (no such file) where it needed LIB, as if LIB were not installed.
patched()
{
	local so=$tmp/nolib/backend-$1.so

	LC_ALL=C sed "s/$2/$3/" "$built/backend-$1.so" >"$so"
	cmp -s "$built/backend-$1.so" "$so" && fail "backend-$1.so names no $2 to patch"
	return 0
}

# not_from_tree WHAT: $RQDISK (a copy in $tmp/tree), given no
# RQDISK_BACKEND_DIR, loads no module from its tree: it stops, naming
# another (none is installed), or serves with another (one is).
not_from_tree()
{
	local pid i

	"$RQDISK" -f "$uri" "$tmp/mnt" 2>"$tmp/err" &
	pid=$!
	for ((i = 0; i < 300; i++)); do
		is_mounted "$tmp/mnt" || kill -0 $pid 2>/dev/null || break
		is_mounted "$tmp/mnt" && break
		sleep 0.1
	done
	if is_mounted "$tmp/mnt"; then
		# the module, not the copied binary, which is in the tree too
		grep " $tmp/tree/src/backend/" "/proc/$pid/maps" && fail "$1: its module was loaded"
		fusermount3 -u "$tmp/mnt"
	fi
	wait $pid || true
	echo "$1: $(cat "$tmp/err")"
	grep -q "$tmp/tree" "$tmp/err" && fail "$1: its module was tried"
	return 0
}

say "a file image loads no module: it starts with none to be had"
RQDISK_BACKEND_DIR=$tmp/empty start_rqdisk "$tmp/img" "$tmp/mnt"
dd if="$rqdisk_disk" of=/dev/null bs=64k count=4 iflag=direct status=none ||
	fail "reading the disk failed"
grep -E 'backend-|libnbd|librbd' "/proc/$rqdisk_pid/maps" &&
	fail "a file image's daemon maps a backend module or its library"
stop_rqdisk

# a shared object that is no backend: an elevator's
[ -f "$top_builddir/tests/.libs/lifo.so" ] ||
	fail "tests/.libs/lifo.so is not built (make check builds it)"
cp "$top_builddir/tests/.libs/lifo.so" "$tmp/wrong/backend-nbd.so"
cp "$top_builddir/tests/.libs/lifo.so" "$tmp/wrong/backend-rbd.so"

if [ -n "$have_nbd" ]; then
	uri="nbd+unix:///?socket=$tmp/sock"
	say "nbd: no module, no libnbd, or no backend: one line, status 1, nothing mounted"
	refused "$tmp/empty" "^rqdisk: IMAGE nbd\+unix:.*: cannot load the nbd backend module \
$tmp/empty/backend-nbd.so: .*cannot open shared object file" "$uri"
	patched nbd 'libnbd\.so\.0' 'libnbX.so.0'
	refused "$tmp/nolib" "cannot load the nbd backend module $tmp/nolib/backend-nbd.so: \
libnbX\.so\.0: cannot open shared object file" "$uri"
	refused "$tmp/wrong" \
		"$tmp/wrong/backend-nbd.so is not rqdisk's nbd backend module: it has no dev_nbd_ops" "$uri"

	refused "$built" "^rqdisk: nbd: .*: connect: No such file or directory" "$uri"

	if command -v nbdkit >/dev/null; then
		source "$(dirname "$0")/nbd-functions.sh"
		say "nbd: the module is loaded from RQDISK_BACKEND_DIR, with libnbd"
		start_nbdkit "$tmp/sock" memory 16M
		start_rqdisk "$uri" "$tmp/mnt"
		dd if=/dev/zero of="$rqdisk_disk" bs=64k count=4 oflag=direct conv=notrunc \
			status=none || fail "writing the nbd disk failed"
		grep -q " $built/backend-nbd.so\$" "/proc/$rqdisk_pid/maps" ||
			fail "the daemon does not map $built/backend-nbd.so"
		grep -q "libnbd" "/proc/$rqdisk_pid/maps" || fail "the daemon does not map libnbd"
		grep -q "librbd" "/proc/$rqdisk_pid/maps" && fail "an nbd image's daemon maps librbd"
		stop_rqdisk

		say "nbd: a build tree's rqdisk finds the module built beside it, untold"
		dir=$RQDISK_BACKEND_DIR
		unset RQDISK_BACKEND_DIR
		start_rqdisk "$uri" "$tmp/mnt"
		grep -q " $built/backend-nbd.so\$" "/proc/$rqdisk_pid/maps" ||
			fail "with no RQDISK_BACKEND_DIR, the daemon does not map $built/backend-nbd.so"
		stop_rqdisk

		# the same layout elsewhere: BUILD/src/daemon/rqdisk, BUILD/src/backend/.libs
		mkdir -p "$tmp/tree/src/daemon" "$tmp/tree/src/backend/.libs"
		cp "$RQDISK" "$tmp/tree/src/daemon/rqdisk"
		cp "$built/backend-nbd.so" "$tmp/tree/src/backend/.libs/"
		rqdisk=$RQDISK
		RQDISK=$tmp/tree/src/daemon/rqdisk
		start_rqdisk "$uri" "$tmp/mnt"
		grep -q " $tmp/tree/src/backend/.libs/backend-nbd.so\$" "/proc/$rqdisk_pid/maps" ||
			fail "a copy of the build tree's layout does not map its own module"
		stop_rqdisk

		say "nbd: never from a build tree that another may change"
		chmod o+w "$tmp/tree/src/backend/.libs"
		not_from_tree "a world-writable .libs"
		chmod o-w "$tmp/tree/src/backend/.libs"
		chmod g+w "$tmp/tree/src"
		not_from_tree "a group-writable src"
		chmod g-w "$tmp/tree/src"
		chown nobody "$tmp/tree/src/backend/.libs/backend-nbd.so"
		not_from_tree "a module of another user's"
		RQDISK=$rqdisk
		export RQDISK_BACKEND_DIR=$dir
		stop_nbdkit
	fi
fi

if [ -n "$have_rbd" ]; then
	spec="rbd:pool/image"
	say "rbd: no module, no librbd, or no backend: one line, status 1, nothing mounted"
	refused "$tmp/empty" "^rqdisk: IMAGE rbd:pool/image: cannot load the rbd backend module \
$tmp/empty/backend-rbd.so: .*cannot open shared object file" "$spec"
	patched rbd 'librbd\.so\.1' 'librbX.so.1'
	refused "$tmp/nolib" "cannot load the rbd backend module $tmp/nolib/backend-rbd.so: \
librbX\.so\.1: cannot open shared object file" "$spec"
	refused "$tmp/wrong" \
		"$tmp/wrong/backend-rbd.so is not rqdisk's rbd backend module: it has no dev_rbd_ops" "$spec"
	refused "$built" "^rqdisk: rbd: cannot reach the Ceph cluster" \
		"rbd:pool/image:mon_host=127.0.0.1\\:1:client_mount_timeout=1"
fi
echo "PASS"
