#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-readme.sh - the README's examples run as written.  Every ```sh block
# of README.md runs, in the order written, as a bash script with -e and
# pipefail, in one directory of its own that stands for the top of a
# checkout (contrib/ is the sources'), with the build's programs first on
# PATH and its rqdisk.pc on PKG_CONFIG_PATH, as after contrib/quickstart.sh's
# make install.  A block must end with status 0 (or the status its fence
# names, ```sh exit=1) and leave nothing mounted or loop-attached.  A block
# whose fence says needs=PROG,... is skipped (and said so) where a PROG is
# missing; needs=nbd where rqdisk was built without its nbd backend.  Blocks
# not fenced ```sh (the quick start, the packages' build, fuzzing) are not
# run.  Root, FUSE and loop devices.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires_loop
requires mkfs.ext4 e2fsck losetup timeout awk

readme=$top_srcdir/README.md
make_tmpdir tmp
work=$(realpath "$tmp")/checkout
mkdir -p "$work" "$tmp/bin" "$tmp/pkgconfig" "$tmp/blocks"
ln -s "$(realpath "$top_srcdir/contrib")" "$work/contrib"

# The build's programs, by the names the README uses.
for p in src/daemon/rqdisk src/tools/rqdisk-replay src/tools/rqdisk-checkorder src/crash/rqdisk-crash \
	src/extents/rqdisk-extents; do
	[ -x "$top_builddir/$p" ] || fail "$p is not built"
	ln -s "$(realpath "$top_builddir/$p")" "$tmp/bin/${p##*/}"
done
export PATH=$tmp/bin:$PATH
# What make install would put in $(libdir)/pkgconfig, pointing at the sources.
sed -e "s|^includedir=.*|includedir=$(realpath "$top_srcdir/include")|" \
	"$top_builddir/rqdisk.pc" >"$tmp/pkgconfig/rqdisk.pc"
export PKG_CONFIG_PATH=$tmp/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}

# At exit, whatever a failed block left: the loop devices over its files
# (first: a lazily unmounted file no longer shows its path), then the mounts
# under the directory, the file systems before the disks below them.
_leftovers()
{
	local m dev

	losetup -n -O NAME,BACK-FILE | awk -v p="$work/" 'index($2, p) == 1 { print $1 }' |
		while read -r dev; do
			umount "$dev" 2>/dev/null
			losetup -d "$dev"
		done
	awk -v p="$work/" 'index($5, p) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
		while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done
	[ ! -f "$work/nbdkit.pid" ] || kill "$(cat "$work/nbdkit.pid")" 2>/dev/null
	return 0
}
cleanup_fn _leftovers

# The blocks: block-N.sh, and block-N.fence with the words after ```sh.
awk -v dir="$tmp/blocks" '
	/^```sh( |$)/ { n++; f = dir "/block-" n; sub(/^```sh */, ""); print > (f ".fence");
		printf "" > (f ".sh"); in_block = 1; next }
	in_block && /^```/ { in_block = 0; next }
	in_block { print > (f ".sh") }
	END { if (in_block) exit 1 }' "$readme" || fail "README.md has a \`\`\`sh block that does not end"
n=$(find "$tmp/blocks" -name '*.sh' | wc -l)
# As many as README.md had when this was written: none may go unseen.
[ "$n" -ge 10 ] || fail "only $n \`\`\`sh blocks in README.md"

# fence_value BLOCK KEY: the value of KEY=VALUE on the block's fence.
fence_value()
{
	tr ' ' '\n' <"$tmp/blocks/block-$1.fence" | sed -n "s/^$2=//p"
}

# missing NEED: what is missing for NEED, or nothing.
missing()
{
	case $1 in
	nbd) [ -f "$RQDISK_BACKEND_DIR/backend-nbd.so" ] || echo "rqdisk's nbd backend" ;;
	*) command -v "$1" >/dev/null 2>&1 || echo "$1" ;;
	esac
}

ran=0
for ((i = 1; i <= n; i++)); do
	block=$tmp/blocks/block-$i.sh
	first=$(grep -m1 . "$block")
	lacking=
	for need in $(fence_value "$i" needs | tr , ' '); do
		lacking+=$(missing "$need")
	done
	if [ -n "$lacking" ]; then
		say "block $i ($first): not run, no $lacking"
		continue
	fi
	want=$(fence_value "$i" exit)
	say "block $i: $first"
	status=0
	(cd "$work" && timeout 300 bash -e -o pipefail -x "$block") || status=$?
	[ "$status" = "${want:-0}" ] ||
		fail "README.md's block $i ($first) exited with $status, not ${want:-0}"
	! awk -v p="$work/" 'index($5, p) == 1 { f = 1 } END { exit !f }' /proc/self/mountinfo ||
		fail "README.md's block $i ($first) left $(awk -v p="$work/" 'index($5, p) == 1 { print $5 }' /proc/self/mountinfo) mounted"
	! losetup -n -O BACK-FILE | grep -qF "$work/" ||
		fail "README.md's block $i ($first) left a loop device attached"
	ran=$((ran + 1))
done
say "$ran of $n blocks ran"
[ "$ran" -gt 0 ] || skip "no block of README.md could run here"
echo PASS
