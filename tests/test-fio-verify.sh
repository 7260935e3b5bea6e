#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-fio-verify.sh - fio writes through the disk with io_uring and O_DIRECT at
# depth 32, then reads everything back and checks every block's crc32c: 4 KiB
# random writes; a random read/write mix of 512 B to 64 KiB blocks on a disk of
# 4 KiB logical blocks and of unaligned sizes on 512 B sectors (both
# read-modify-write); and random writes on an image opened with --direct.
# After each run the image itself must verify too.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires fio python3

engines=$(fio --enghelp 2>/dev/null || :)
grep -qw io_uring <<<"$engines" || skip "this fio has no io_uring engine"

make_tmpdir tmp
mkdir "$tmp/mnt"
size=$((64 * 1024 * 1024))

# check_json FILE MIN_WRITE MIN_READ: fio reported no error, wrote at least
# MIN_WRITE bytes, and read back (verified) at least MIN_READ.
check_json()
{
	python3 - "$@" <<'EOF' || fail "fio's report says the run went wrong"
import json, sys
text = open(sys.argv[1]).read()
report = json.loads(text[text.index("{"):]) # after any warnings fio printed
for job in report["jobs"]:
    name, err = job["jobname"], job["error"]
    wrote, read = job["write"]["io_bytes"], job["read"]["io_bytes"]
    print(f"{name}: error {err}, wrote {wrote} bytes, read {read} bytes")
    if err or wrote < int(sys.argv[2]) or read < int(sys.argv[3]):
        sys.exit(1)
EOF
}

# run_fio NAME IMAGE-DIR MIN_WRITE RQDISK-OPTIONS... -- FIO-OPTIONS...
run_fio()
{
	local name=$1 dir=$2 min=$3 ropts=() fopts status

	shift 3
	while [ "$1" != -- ]; do
		ropts+=("$1")
		shift
	done
	shift
	fopts=(--name="$name" --ioengine=io_uring --direct=1 --iodepth=32 --size="$size"
	       --verify=crc32c --do_verify=1 --verify_fatal=1 --verify_state_save=0 "$@")

	say "fio $name through rqdisk ${ropts[*]}: ${fopts[*]}"
	truncate -s 0 "$dir/img"
	truncate -s $size "$dir/img"
	start_rqdisk "${ropts[@]}" "$dir/img" "$tmp/mnt"
	status=0
	(cd "$tmp" && fio "${fopts[@]}" --filename="$rqdisk_disk" --output-format=json \
		--output="$tmp/$name.json") || status=$?
	[ $status = 0 ] || { cat "$tmp/$name.json"; fail "fio $name failed (status $status)"; }
	check_json "$tmp/$name.json" "$min" "$min"
	stop_rqdisk

	say "fio $name: the image itself verifies"
	(cd "$tmp" && fio "${fopts[@]}" --direct=0 --verify_only --filename="$dir/img" \
		--output-format=json --output="$tmp/$name-image.json") ||
		{ cat "$tmp/$name-image.json"; fail "the image does not verify after $name"; }
	check_json "$tmp/$name-image.json" 0 "$min"
}

run_fio randwrite "$tmp" $size -- --rw=randwrite --bs=4k
run_fio mixed-4k-blocks "$tmp" $((size / 4)) --logical-block-size 4096 -- \
	--rw=randrw --bsrange=512-64k
run_fio mixed-unaligned "$tmp" $((size / 4)) -- \
	--rw=randrw --bsrange=1000-64k --bs_unaligned=1

make_odirect_tmpdir dtmp
if [ -n "$dtmp" ]; then
	run_fio randwrite-direct "$dtmp" $size --direct -- --rw=randwrite --bs=4k
	# writes up to max_write are written from the buffer FUSE read them into
	run_fio big-direct "$dtmp" $size --direct -- --rw=randwrite --bsrange=4k-1m --iodepth=8
else
	echo "NOTE: neither ${TMPDIR:-/tmp} nor /var/tmp takes O_DIRECT: --direct not tested"
fi
echo "PASS"
