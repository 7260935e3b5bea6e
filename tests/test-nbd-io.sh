#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-nbd-io.sh - real I/O on an NBD export through rqdisk: fio writes at
# depth 32 and verifies every block's crc32c, through the disk and then on
# the server's copy; a discard frees the range on the server (nbdkit's
# memory plugin maps it as a hole); nbdkit's error filter is EIO through
# the disk while its trigger file exists, and nothing after; its delay
# filter is latency the disk's reads take.
source "$(dirname "$0")/functions.sh"
source "$(dirname "$0")/nbd-functions.sh"
requires_root
requires_fuse
requires dd cmp fio python3 nbdinfo fallocate
requires_nbd
grep -qw io_uring <<<"$(fio --enghelp 2>/dev/null || :)" || skip "this fio has no io_uring engine"

make_tmpdir tmp
mkdir "$tmp/mnt"
sock=$tmp/sock
uri="nbd+unix:///?socket=$sock"
size=$((32 << 20))

# fio_verify NAME FILE FIO-OPTIONS...: write and verify (or only verify) FILE.
fio_verify()
{
	local name=$1 file=$2

	shift 2
	(cd "$tmp" && fio --name="$name" --filename="$file" --ioengine=io_uring --iodepth=32 \
		--size=$size --verify=crc32c --do_verify=1 --verify_fatal=1 --verify_state_save=0 \
		--output-format=json --output="$tmp/$name.json" "$@") ||
		{ cat "$tmp/$name.json"; fail "fio $name failed"; }
	python3 - "$tmp/$name.json" <<'EOF' || fail "fio $name: its report says the run went wrong"
import json, sys
text = open(sys.argv[1]).read()
for job in json.loads(text[text.index("{"):])["jobs"]:
    print(f'{job["jobname"]}: error {job["error"]}, read {job["read"]["io_bytes"]} bytes')
    if job["error"] or not job["read"]["io_bytes"]:
        sys.exit(1)
EOF
}

say "fio at depth 32, crc32c verified through the disk and on the server"
start_nbdkit "$sock" memory 64M
start_rqdisk --connections 2 "$uri" "$tmp/mnt"
fio_verify randwrite "$tmp/mnt/disk" --direct=1 --rw=randwrite --bs=4k
fio_verify mixed "$tmp/mnt/disk" --direct=1 --rw=randrw --bsrange=512-64k --offset=$size
stop_rqdisk
nbdcopy "$uri" "$tmp/server" || fail "nbdcopy from the server failed"
fio_verify randwrite-server "$tmp/server" --verify_only --rw=randwrite --bs=4k

say "a discard frees the range on the server"
start_rqdisk "$uri" "$tmp/mnt"
# the range was written above: data there, a hole after the discard
map_at_4m()
{
	nbdinfo --map "$uri" | awk '$1 <= 4194304 && 4194304 < $1 + $2 { print $4; exit }'
}
[ "$(map_at_4m)" = data ] || fail "4 MiB is not data on the server before: $(map_at_4m)"
fallocate -p -o $((4 << 20)) -l $((1 << 20)) "$tmp/mnt/disk" || fail "the discard failed"
[[ "$(map_at_4m)" == hole* ]] || fail "the discarded range is not a hole on the server: $(map_at_4m)"
cmp -n $((1 << 20)) -i $((4 << 20)):0 "$tmp/mnt/disk" /dev/zero ||
	fail "the discarded range does not read zeros"
stop_rqdisk
stop_nbdkit

say "nbdkit's error filter: EIO through the disk while it fails reads, none after"
start_nbdkit "$sock" --filter=error memory 16M error-pread=EIO error-pread-rate=1 \
	error-file="$tmp/fail-now"
start_rqdisk "$uri" "$tmp/mnt"
random_file "$tmp/a" 65536
dd if="$tmp/a" of="$tmp/mnt/disk" bs=64k oflag=direct conv=notrunc status=none ||
	fail "a write failed with no read failing"
touch "$tmp/fail-now"
dd if="$tmp/mnt/disk" of=/dev/null bs=64k count=1 iflag=direct status=none 2>"$tmp/err" &&
	fail "a read succeeded while the server fails every read"
grep -q "Input/output error" "$tmp/err" || fail "a failed read: $(cat "$tmp/err"), not EIO"
rm "$tmp/fail-now"
dd if="$tmp/mnt/disk" of="$tmp/back" bs=64k count=1 iflag=direct status=none ||
	fail "a read failed once the server no longer fails them"
cmp "$tmp/a" "$tmp/back" || fail "the data read after the errors differs"
stop_rqdisk
stop_nbdkit

say "nbdkit's delay filter: reads take its delay through the disk"
start_nbdkit "$sock" --filter=delay memory 16M rdelay=700ms
start_rqdisk "$uri" "$tmp/mnt"
for n in 1 4; do
	start=$(date +%s%N)
	dd if="$tmp/mnt/disk" of=/dev/null bs=4k count=$n iflag=direct status=none ||
		fail "a delayed read failed"
	ms=$((($(date +%s%N) - start) / 1000000))
	echo "$n reads of 4 KiB, one after another: $ms ms"
	[ $ms -ge $((n * 700)) ] || fail "$n reads took $ms ms, below $n x 700 ms"
done
stop_rqdisk
echo "PASS"
