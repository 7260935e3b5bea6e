#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-filter-control.sh - each layer of the device stack with files of its own has a
# directory device/NAME/ (NAME.2 for a second of that name): the delay's read_ms and
# write_ms show the spec's values and take new ones at run time (a bad one refused with
# EINVAL and nothing changed), the model's in_flight and held follow a request through
# it, read-only files refuse writers even root; a change is a message note in the trace
# that blkparse prints and rqdisk-checkorder passes over.
#
# Eight sequential 4 KiB O_DIRECT reads under a 200 ms read delay take 1.6 s at least,
# by construction; with read_ms 0 they need only be under 1 s, a margin of more than
# ten on a loaded machine.
source "$(dirname "$0")/functions.sh"
export LC_ALL=C # ls sorts as the expected lists do
requires_root
requires_fuse
requires dd blkparse python3

checkorder=$top_builddir/src/tools/rqdisk-checkorder
[ -x "$checkorder" ] || fail "$checkorder is not built"

make_tmpdir tmp
mkdir "$tmp/mnt"
truncate -s 64M "$tmp/img"
dev=$tmp/mnt/device

# ms for eight sequential 4 KiB O_DIRECT reads
eight_reads()
{
	local t0 t1

	t0=$(date +%s%N)
	dd if="$rqdisk_disk" of=/dev/null bs=4k count=8 skip="$1" iflag=direct status=none ||
		fail "dd failed"
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}

# open_fails FILE FLAGS ERRNO: os.open(FILE, FLAGS) fails with ERRNO (names from errno).
open_fails()
{
	python3 - "$@" <<'PY' || fail "opening $1 ($2) did not fail with $3"
import errno, os, sys
try:
    os.open(sys.argv[1], getattr(os, sys.argv[2]))
except OSError as e:
    sys.exit(0 if e.errno == getattr(errno, sys.argv[3]) else 1)
sys.exit(1)
PY
}

# wait_for FILE VALUE: FILE shows VALUE within 3 s.
wait_for()
{
	local i

	for ((i = 0; i < 30; i++)); do
		[ "$(cat "$1")" = "$2" ] && return 0
		sleep 0.1
	done
	fail "$1 is $(cat "$1"), not $2, after 3 s"
}

say "delay:ms=200: device/delay/ has read_ms and write_ms, both 200"
start_rqdisk -e noop --filter delay:ms=200 --trace "$tmp/tr" "$tmp/img" "$tmp/mnt"
[ "$(ls "$dev")" = "$(printf 'delay\nlost_writes\nstack')" ] || fail "device/ holds: $(ls "$dev")"
[ "$(ls "$dev/delay")" = "$(printf 'read_ms\nwrite_ms')" ] || fail "delay/ holds: $(ls "$dev/delay")"
[ "$(cat "$dev/delay/read_ms")" = 200 ] || fail "read_ms is $(cat "$dev/delay/read_ms")"
[ "$(cat "$dev/delay/write_ms")" = 200 ] || fail "write_ms is $(cat "$dev/delay/write_ms")"
[ "$(stat -c %a "$dev/delay/read_ms")" = 644 ] || fail "read_ms has mode $(stat -c %a "$dev/delay/read_ms")"
[ -d "$dev/delay" ] && [ "$(stat -c %a "$dev/delay")" = 755 ] || fail "device/delay is no directory"
open_fails "$dev/delay" O_WRONLY EISDIR

slow=$(eight_reads 0)
say "eight reads with read_ms 200: $slow ms"
[ "$slow" -ge 1600 ] || fail "eight reads took $slow ms under a 200 ms delay"

say "bad values are refused with EINVAL and change nothing"
for v in -1 x 3600001 18446744073709551616 " 5" "5 " +5 0x10 1e3 "" "1,2"; do
	write_fails "$dev/delay/read_ms" "$v"
done
[ "$(cat "$dev/delay/read_ms")" = 200 ] || fail "a refused value changed read_ms to $(cat "$dev/delay/read_ms")"
[[ $(cat "$dev/stack") == "delay:read=200 write=200 -> file:"* ]] || fail "device/stack: $(cat "$dev/stack")"

say "read_ms 0: reads are fast again; writes keep their delay"
echo 0 >"$dev/delay/read_ms" || fail "writing 0 to read_ms failed"
[ "$(cat "$dev/delay/read_ms")" = 0 ] || fail "read_ms is $(cat "$dev/delay/read_ms") after writing 0"
[ "$(cat "$dev/delay/write_ms")" = 200 ] || fail "write_ms changed with read_ms"
[[ $(cat "$dev/stack") == "delay:read=0 write=200 -> file:"* ]] || fail "device/stack: $(cat "$dev/stack")"
fast=$(eight_reads 8)
say "eight reads with read_ms 0: $fast ms"
[ "$fast" -lt 1000 ] || fail "eight reads took $fast ms with read_ms 0"
printf 3600000 >"$dev/delay/write_ms" || fail "write_ms does not take its maximum without a newline"
[ "$(cat "$dev/delay/write_ms")" = 3600000 ] || fail "write_ms is $(cat "$dev/delay/write_ms")"
echo 200 >"$dev/delay/write_ms"
stop_rqdisk

say "the trace: blkparse prints the changes as message notes; rqdisk-checkorder reads it"
blkparse -i "$tmp/tr" >"$tmp/parsed" || fail "blkparse failed"
grep -q " m  *N delay: read_ms 200 -> 0\$" "$tmp/parsed" ||
	fail "blkparse shows no note of read_ms 200 -> 0: $(grep " m " "$tmp/parsed" || true)"
grep -q " m  *N delay: write_ms 200 -> 3600000\$" "$tmp/parsed" || fail "no note of write_ms"
[ "$(grep -c " m  *N delay: " "$tmp/parsed")" = 3 ] ||
	fail "not three notes (a refused value or a read made one?): $(grep " m " "$tmp/parsed" || true)"
out=$("$checkorder" "$tmp/tr") || fail "rqdisk-checkorder failed on a trace with notes: $out"
[[ $out =~ ([0-9]+)\ bios,\ [0-9]+\ barriers,\ order\ kept ]] && [ "${BASH_REMATCH[1]}" -ge 16 ] ||
	fail "rqdisk-checkorder: $out"

say "two delays and a model: device/delay, device/delay.2, device/model"
start_rqdisk -e noop --filter delay:read=1,write=2 --filter model:ssd:depth=1 \
	--filter delay:ms=3 "$tmp/img" "$tmp/mnt"
[ "$(ls "$dev")" = "$(printf 'delay\ndelay.2\nlost_writes\nmodel\nstack')" ] || fail "device/ holds: $(ls "$dev")"
[ "$(cat "$dev/delay/read_ms") $(cat "$dev/delay/write_ms")" = "1 2" ] || fail "device/delay is not the first"
[ "$(cat "$dev/delay.2/read_ms") $(cat "$dev/delay.2/write_ms")" = "3 3" ] || fail "device/delay.2 is not the second"
echo 7 >"$dev/delay.2/read_ms"
[ "$(cat "$dev/delay/read_ms") $(cat "$dev/delay.2/read_ms")" = "1 7" ] || fail "delay.2/read_ms set the wrong layer"
[[ $(cat "$dev/stack") == "delay:read=1 write=2 -> model:"*" -> delay:read=7 write=3 -> file:"* ]] ||
	fail "device/stack: $(cat "$dev/stack")"
for f in delay.3 nosuch delay/nosuch model/read_ms; do
	[ ! -e "$dev/$f" ] || fail "device/$f exists"
done
ls "$dev/delay/read_ms/" 2>/dev/null && fail "ls of a file listed something"

say "model: in_flight and held, 0 when idle, read-only even for root"
[ "$(ls "$dev/model")" = "$(printf 'held\nin_flight')" ] || fail "model/ holds: $(ls "$dev/model")"
[ "$(cat "$dev/model/in_flight") $(cat "$dev/model/held")" = "0 0" ] ||
	fail "idle: in_flight $(cat "$dev/model/in_flight"), held $(cat "$dev/model/held")"
[ "$(stat -c %a "$dev/model/in_flight")" = 444 ] || fail "in_flight has mode $(stat -c %a "$dev/model/in_flight")"
open_fails "$dev/model/in_flight" O_WRONLY EACCES
open_fails "$dev/model/held" O_RDWR EACCES
stop_rqdisk

say "every node of the tree has an inode of its own"
start_rqdisk --filter delay:ms=1 --filter model:ssd --filter delay:ms=1 "$tmp/img" "$tmp/mnt"
nodes=$(find "$tmp/mnt" -mindepth 1 -printf '%i %P\n' | sort -n)
[ "$(cut -d' ' -f1 <<<"$nodes" | uniq -d)" = "" ] || fail "inodes shared: $nodes"
[ "$(grep -c ' device/' <<<"$nodes")" = 11 ] || fail "not 11 nodes in device/: $nodes"
stop_rqdisk

# A read through a model that ends it 2.5 s after it came, over a delay of 1.2 s:
# first it is below the model (in_flight 1), then ended below and held (held 1).
say "model: in_flight, then held, follow a read through it"
start_rqdisk -e noop --filter model:ssd:depth=1,read_us=2500000 --filter delay:ms=1200 \
	"$tmp/img" "$tmp/mnt"
dd if="$rqdisk_disk" of=/dev/null bs=4k count=1 iflag=direct status=none &
reader=$!
wait_for "$dev/model/in_flight" 1
[ "$(cat "$dev/model/held")" = 0 ] || fail "held while below"
wait_for "$dev/model/held" 1
[ "$(cat "$dev/model/in_flight")" = 0 ] || fail "in_flight still 1 while held"
wait "$reader" || fail "the read failed"
[ "$(cat "$dev/model/in_flight") $(cat "$dev/model/held")" = "0 0" ] || fail "not idle after the read"
stop_rqdisk
echo PASS
