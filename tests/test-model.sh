#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-model.sh - --model through the real mount: an hdd's random reads take
# milliseconds and its one head makes the elevator's order pay (sstf beats noop);
# an ssd's read latency is what its read_us says; data stays whole under a model;
# the control tree shows the model; a bad spec is one line, exit 2, and no mount.
# A model never ends a request early, so its times are floors; what it adds on top
# of the same reads without a model is bounded by its slowest request, with margins
# that a loaded machine (or a sanitizer build) keeps: both runs pay the same overhead.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires fio

make_tmpdir tmp
mkdir "$tmp/mnt"
truncate -s 256M "$tmp/img"

# read IOPS and mean completion latency (µs) of a 4 KiB O_DIRECT random read run
randread()
{
	fio --name=r --filename="$rqdisk_disk" --rw=randread --bs=4k --direct=1 \
		--runtime="$1" --time_based --ioengine="$2" --iodepth="$3" \
		--output-format=terse --terse-version=3 --output="$tmp/fio.out" ||
		fail "fio failed"
	# terse v3: field 8 is read IOPS, field 16 the mean read completion latency in µs
	awk -F';' '{ printf "%d %d\n", $8, $16 }' "$tmp/fio.out"
}

say "--model none (the default): no timing, not rotational"
start_rqdisk "$tmp/img" "$tmp/mnt"
[ "$(cat "$tmp/mnt/queue/model")" = none ] || fail "queue/model: $(cat "$tmp/mnt/queue/model")"
[ "$(cat "$tmp/mnt/queue/rotational")" = 0 ] || fail "rotational is not 0 without a model"
read -r iops none_lat <<<"$(randread 2 psync 1)"
say "none: $iops IOPS, $none_lat µs"
stop_rqdisk

say "--model hdd: milliseconds a random read, rotational, every key shown"
start_rqdisk --model hdd -e noop "$tmp/img" "$tmp/mnt"
model=$(cat "$tmp/mnt/queue/model")
[[ $model == "hdd cylinders=100000 rpm=7200 "*" depth=1" ]] || fail "queue/model: $model"
[ "$(cat "$tmp/mnt/queue/rotational")" = 1 ] || fail "an hdd is not rotational"
read -r iops lat <<<"$(randread 3 psync 1)"
say "hdd, one at a time: $iops IOPS, $lat µs"
# 7200 rpm: 4.2 ms half a turn plus a seek over a quarter of the disk or so; at most
# a full-stroke seek (16 ms) and a full turn (8.3 ms) more than without a model
[ "$lat" -ge 6000 ] || fail "hdd random reads take $lat µs, less than 6 ms"
[ "$lat" -le $((none_lat + 30000)) ] ||
	fail "hdd random reads take $lat µs, over 30 ms more than without a model ($none_lat µs)"
read -r noop_iops lat <<<"$(randread 3 io_uring 16)"
stop_rqdisk

say "hdd: sstf, choosing the nearest of sixteen, outruns noop's arrival order"
start_rqdisk --model hdd -e sstf "$tmp/img" "$tmp/mnt"
read -r sstf_iops lat <<<"$(randread 3 io_uring 16)"
stop_rqdisk
say "sixteen deep: noop $noop_iops IOPS, sstf $sstf_iops IOPS"
[ $((sstf_iops * 10)) -ge $((noop_iops * 12)) ] ||
	fail "sstf ($sstf_iops IOPS) is not 1.2 times noop ($noop_iops) on a one-head disk"

say "--model ssd:read_us=2000: a read takes its 2 ms, an ssd does not rotate"
start_rqdisk --model ssd:read_us=2000 "$tmp/img" "$tmp/mnt"
[[ $(cat "$tmp/mnt/queue/model") == "ssd read_us=2000 "* ]] || fail "queue/model is not the ssd"
[ "$(cat "$tmp/mnt/queue/rotational")" = 0 ] || fail "an ssd is rotational"
read -r iops lat <<<"$(randread 2 psync 1)"
say "ssd: $iops IOPS, $lat µs"
[ "$lat" -ge 2000 ] || fail "2 ms ssd reads take $lat µs"
[ "$lat" -lt $((none_lat + 8000)) ] ||
	fail "2 ms ssd reads take $lat µs, 8 ms or more over no model ($none_lat µs)"
[ "$none_lat" -lt "$lat" ] ||
	fail "reads without a model ($none_lat µs) are no faster than 2 ms ssd reads ($lat µs)"
stop_rqdisk

say "data stays whole under the hdd model: fio verify with fsync, 8 deep"
start_rqdisk --model hdd "$tmp/img" "$tmp/mnt"
fio --name=v --filename="$rqdisk_disk" --rw=randwrite --bsrange=4k-128k --direct=1 \
	--ioengine=io_uring --iodepth=8 --fsync=4 --size=8M --verify=crc32c \
	--verify_state_save=0 --output="$tmp/fio.out" ||
	{ cat "$tmp/fio.out"; fail "fio verify failed under --model hdd"; }
stop_rqdisk

say "bad specs: one line naming the problem, exit 2, no mount, no image"
for spec in flash hdd:rpm=0 hdd:rpm=x hdd:heads=4 ssd:channels= "hdd:preset=nope"; do
	status=0
	"$RQDISK" --create 8M --model "$spec" "$tmp/new.img" "$tmp/mnt" 2>"$tmp/err" || status=$?
	[ "$status" = 2 ] || fail "--model $spec: exit $status, not 2"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "--model $spec: not one line: $(cat "$tmp/err")"
	grep -q "model" "$tmp/err" || fail "--model $spec: the error does not say model"
	say "--model $spec: $(cat "$tmp/err")"
	! is_mounted "$tmp/mnt" || fail "--model $spec left a mount"
	[ ! -e "$tmp/new.img" ] || fail "--model $spec left an image"
done
