#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-filter.sh - the device stack below the queue, live: device/stack shows
# the layers nearest the queue first, over the file backend; two filters, the
# model and delay, stacked in either order give different devices; bad
# --filter specs are one line, exit 2, and no mount.
#
# Eight 4 KiB reads at once, no merging, on an ssd model that serves one at a
# time (depth=1) and a delay of 200 ms:
#   model over delay: the model lets one down at a time, and each waits out
#     the delay below it: at least 8 x 200 ms, by construction;
#   delay over model: all eight wait out the delay together, then the model
#     serves them 1 ms each: about 200 ms.
# The first is a floor no machine can beat; the second only needs to be
# under half of it, a margin of about four on a loaded machine.  Both are
# fio's latencies, from submission to the last completion.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires fio

make_tmpdir tmp
mkdir "$tmp/mnt"
truncate -s 64M "$tmp/img"
model="model:ssd:depth=1,read_us=1000"
delay="delay:ms=200"

# ms until the last of eight 4 KiB O_DIRECT reads of distinct blocks, issued
# at once, completed: fio's own latency, from submission, so that a loaded
# machine's slow start of fio is not counted
eight_reads()
{
	echo 2 >"$tmp/mnt/queue/nomerges" || fail "cannot turn merging off"
	fio --name=r --filename="$rqdisk_disk" --rw=randread --bs=4k --size=32k \
		--norandommap --randrepeat=0 --direct=1 --ioengine=io_uring --iodepth=8 \
		--iodepth_batch_submit=8 --output-format=json --output="$tmp/fio.json" ||
		fail "fio failed"
	python3 - "$tmp/fio.json" <<'PY' || fail "no latency in fio's report"
import json, sys
text = open(sys.argv[1]).read()
read = json.loads(text[text.index("{"):])["jobs"][0]["read"] # after any warnings fio printed
assert read["io_bytes"] == 32768
print(read["lat_ns"]["max"] // 1000000)
PY
}

say "no filter: device/stack is the file backend alone, with the image's path"
start_rqdisk "$tmp/img" "$tmp/mnt"
stack=$(cat "$tmp/mnt/device/stack")
[ "$stack" = "file:$tmp/img" ] || fail "device/stack: '$stack'"
stop_rqdisk

say "--null: the null backend"
start_rqdisk --null "$tmp/img" "$tmp/mnt"
stack=$(cat "$tmp/mnt/device/stack")
[ "$stack" = "null:$tmp/img" ] || fail "device/stack under --null: '$stack'"
stop_rqdisk

say "model over delay: one at a time through the delay"
start_rqdisk -e noop --filter "$model" --filter "$delay" "$tmp/img" "$tmp/mnt"
stack=$(cat "$tmp/mnt/device/stack")
[[ $stack == "model:ssd "*" depth=1 -> delay:read=200 write=200 -> file:$tmp/img" ]] ||
	fail "device/stack: '$stack'"
[[ $(cat "$tmp/mnt/queue/model") == "ssd "* ]] || fail "queue/model: $(cat "$tmp/mnt/queue/model")"
slow=$(eight_reads)
stop_rqdisk
say "model over delay: $slow ms"
[ "$slow" -ge 1600 ] || fail "eight reads took $slow ms: the model let more than one through the delay"

say "delay over model: the delays overlap"
start_rqdisk -e noop --filter "$delay" --filter "$model" "$tmp/img" "$tmp/mnt"
stack=$(cat "$tmp/mnt/device/stack")
[[ $stack == "delay:read=200 write=200 -> model:ssd "*" -> file:$tmp/img" ]] ||
	fail "device/stack: '$stack'"
fast=$(eight_reads)
stop_rqdisk
say "delay over model: $fast ms"
[ "$fast" -ge 200 ] || fail "eight reads took $fast ms, less than the delay"
[ $((fast * 2)) -lt "$slow" ] ||
	fail "delay over model ($fast ms) is not under half of model over delay ($slow ms)"

say "--model is the model filter where it stands"
start_rqdisk -e noop --filter "$delay" --model ssd:depth=1 "$tmp/img" "$tmp/mnt"
stack=$(cat "$tmp/mnt/device/stack")
[[ $stack == "delay:"*" -> model:ssd "*" -> file:$tmp/img" ]] || fail "device/stack: '$stack'"
stop_rqdisk

say "data stays whole under both filters"
start_rqdisk --filter "$delay" --filter "$model" "$tmp/img" "$tmp/mnt"
fio --name=v --filename="$rqdisk_disk" --rw=randwrite --bs=4k --size=1M --direct=1 \
	--ioengine=io_uring --iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1 \
	--verify_state_save=0 \
	--output="$tmp/fio.out" || { cat "$tmp/fio.out"; fail "fio verify failed under two filters"; }
stop_rqdisk

say "bad filters: one line naming the problem, exit 2, no mount, no image"
for spec in nosuch delay delay:ms=x delay:x=1 delay:ms=1,,y=2 model model:none model:flash \
	"model:hdd:rpm=0"; do
	status=0
	"$RQDISK" --create 8M --filter "$spec" "$tmp/new.img" "$tmp/mnt" 2>"$tmp/err" || status=$?
	[ "$status" = 2 ] || fail "--filter $spec: exit $status, not 2"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "--filter $spec: not one line: $(cat "$tmp/err")"
	grep -q -- "--filter" "$tmp/err" || fail "--filter $spec: the error does not say --filter"
	say "--filter $spec: $(cat "$tmp/err")"
	! is_mounted "$tmp/mnt" || fail "--filter $spec left a mount"
	[ ! -e "$tmp/new.img" ] || fail "--filter $spec left an image"
done
say "a URI for IMAGE: no backend claims it yet: one line, exit 2"
status=0
"$RQDISK" iscsi://localhost/disk "$tmp/mnt" 2>"$tmp/err" || status=$?
[ "$status" = 2 ] || fail "iscsi://: exit $status, not 2"
[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "iscsi://" "$tmp/err" || fail "iscsi://: $(cat "$tmp/err")"
! is_mounted "$tmp/mnt" || fail "iscsi:// left a mount"
"$RQDISK" --filter nosuch "$tmp/img" "$tmp/mnt" 2>"$tmp/err" && fail "--filter nosuch started"
filters=$("$RQDISK" --list filters | awk '{ print $1 }' | paste -sd, | sed 's/,/, /g')
grep -qF "there are: $filters)" "$tmp/err" || fail "an unknown filter's error does not list them: $filters"
exit 0
