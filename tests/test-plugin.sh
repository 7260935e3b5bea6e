#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-plugin.sh - elevators from shared objects: contrib/elevator-example built
# out of tree by its own Makefile runs the disk (named in queue/scheduler, its
# tunable under queue/iosched, every byte intact); a path written to
# queue/scheduler loads another; and one built for another API version is
# refused in one line, on the command line before anything is mounted or
# created, and on a switch with EINVAL.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires make cc dd cmp python3

make_tmpdir tmp
mkdir "$tmp/mnt"
modules=$top_builddir/tests/.libs
for m in idler broken-version; do
	[ -f "$modules/$m.so" ] || fail "$modules/$m.so is not built (make check builds it)"
done
header=$top_srcdir/include/rqdisk/elevator.h
api=$(sed -n 's/^#define ELV_API_VERSION \([0-9]*\)$/\1/p' "$header")
[ -n "$api" ] || fail "no ELV_API_VERSION in include/rqdisk/elevator.h"

say "contrib/elevator-example builds with its own Makefile against <rqdisk/elevator.h>"
cp -R "$top_srcdir/contrib/elevator-example" "$tmp/example"
chmod -R u+w "$tmp/example" # distcheck's source tree is read-only
bsd_cflags=
command -v pkg-config >/dev/null && bsd_cflags=$(pkg-config --cflags libbsd 2>/dev/null || :)
# not the jobserver of a make check that runs this test
unset MAKEFLAGS MFLAGS MAKELEVEL
make -C "$tmp/example" RQDISK_CFLAGS="-I$top_srcdir/include $bsd_cflags" \
	CFLAGS="-O2 -g -Wall -Wextra -Werror" >"$tmp/make.out" 2>&1 ||
	{ cat "$tmp/make.out"; fail "the example does not build"; }
so=$tmp/example/lifo.so
[ -f "$so" ] || fail "make built no lifo.so"

say "rqdisk --elevator $so: the example runs the disk"
size=$((32 * 1024 * 1024))
random_file "$tmp/img" $size
cp "$tmp/img" "$tmp/ref"
start_rqdisk --elevator "$so" "$tmp/img" "$tmp/mnt"
q=$tmp/mnt/queue
sched=$(cat "$q/scheduler")
echo "$sched"
[[ "$sched" == *"[lifo]"* ]] || fail "lifo is not the running elevator: $sched"
[ "$(ls "$q/iosched")" = expire ] || fail "lifo's tunables are: $(ls "$q/iosched")"
[ "$(cat "$q/iosched/expire")" = 1000 ] || fail "expire is $(cat "$q/iosched/expire"), not 1000"
echo 20 >"$q/iosched/expire"
[ "$(cat "$q/iosched/expire")" = 20 ] || fail "expire did not take 20"
write_fails "$q/iosched/expire" -1
[ "$(cat "$q/iosched/expire")" = 20 ] || fail "expire changed after a refused write"

# write_read TAG: four writers at once (buffered, so many requests queue
# together) and one O_DIRECT; what each wrote reads back.  The same writes
# go to ref, what the image must hold.
write_read()
{
	local i off len pids=() offs=()

	for i in 0 1 2 3; do
		random_file "$tmp/piece$i" $((3 * 1024 * 1024 + 512 * i + 1))
	done
	for i in 0 1 2 3; do
		offs[i]=$((i * 7 * 1024 * 1024 + 4096 * i + 1))
		write_at "$tmp/piece$i" "$tmp/ref" ${offs[i]}
		write_at "$tmp/piece$i" "$rqdisk_disk" ${offs[i]} &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || fail "$1: writer $i failed"
	done
	random_file "$tmp/direct" $((1024 * 1024))
	dd if="$tmp/direct" of="$rqdisk_disk" bs=64k seek=$((30 * 16)) oflag=direct conv=notrunc \
		status=none || fail "$1: the O_DIRECT write failed"
	write_at "$tmp/direct" "$tmp/ref" $((30 * 1024 * 1024))
	for i in 0 1 2 3; do
		same_bytes "$tmp/piece$i" 0 "$rqdisk_disk" ${offs[i]} "$(stat -c %s "$tmp/piece$i")" ||
			fail "$1: writer $i's bytes do not read back"
	done
	same_bytes "$tmp/direct" 0 "$rqdisk_disk" $((30 * 1024 * 1024)) $((1024 * 1024)) ||
		fail "$1: the O_DIRECT write does not read back"
}

say "lifo: concurrent writes read back, and every byte of the disk is right"
write_read lifo
cmp "$rqdisk_disk" "$tmp/ref" || fail "the disk differs from what was written"

say "a path written to queue/scheduler loads that elevator (it calls elv_schedule_dispatch)"
echo "$modules/idler.so" >"$q/scheduler" || fail "switching to $modules/idler.so failed"
sched=$(cat "$q/scheduler")
[[ "$sched" == *"[idler]"* ]] || fail "idler is not running: $sched"
[[ " ${sched//[\[\]]/} " == *" lifo "* ]] || fail "lifo is no longer listed: $sched"
echo 1 >"$q/iosched/idle" # it holds every request back this long: 1 ms, not 10
write_read idler

say "a loaded elevator switches back by name"
echo lifo >"$q/scheduler" || fail "switching back to lifo by name failed"
[[ "$(cat "$q/scheduler")" == *"[lifo]"* ]] || fail "lifo is not running: $(cat "$q/scheduler")"
[ "$(cat "$q/iosched/expire")" = 1000 ] || fail "a new lifo instance kept an old expire"

say "switching to an elevator for API version 99 is refused and changes nothing"
write_fails "$q/scheduler" "$modules/broken-version.so"
[[ "$(cat "$q/scheduler")" == *"[lifo]"* ]] || fail "a refused switch changed the elevator"
[[ "$(cat "$q/scheduler")" != *broken* ]] || fail "a refused elevator is listed"
write_read "lifo again"

stop_rqdisk
say "after unmount the image holds every write"
cmp "$tmp/img" "$tmp/ref" || fail "the image differs from what was written"

say "--elevator with an elevator for API version 99: one line naming both versions, no mount"
cleanup_fn _unmount "$tmp/mnt" # should it mount after all
status=0
"$RQDISK" --elevator "$modules/broken-version.so" --create 8M "$tmp/bad.img" "$tmp/mnt" \
	>"$tmp/out" 2>"$tmp/err" || status=$?
cat "$tmp/err"
[ $status != 0 ] || fail "rqdisk took an elevator for API version 99"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "the error is not one line"
grep -q "version 99" "$tmp/err" || fail "the error does not name version 99"
grep -q "speaks $api\$" "$tmp/err" || fail "the error does not name version $api"
[ ! -s "$tmp/out" ] || fail "rqdisk wrote to stdout: $(cat "$tmp/out")"
no_mount_under "$tmp/mnt" || fail "the refused elevator left a mount"
[ ! -e "$tmp/bad.img" ] || fail "the refused elevator left the image it would have created"

say "make clean removes what the example's Makefile built"
make -C "$tmp/example" clean >/dev/null
[ ! -e "$so" ] || fail "make clean left $so"
echo PASS
