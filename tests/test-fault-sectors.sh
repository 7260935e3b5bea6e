#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-fault-sectors.sh - the fault filter aimed at sectors, live: error=write
# with sectors= fails writes there with EIO through the disk file while writes
# elsewhere land in the image; sectors_file= through fault/rules moves the aim,
# fault/sectors shows it; a bad file is EINVAL and changes nothing, and on the
# command line one line naming its line, exit 2.
source "$(dirname "$0")/functions.sh"
source "$(dirname "$0")/fault-functions.sh"
requires_root
requires_fuse
requires dd python3 cmp

make_tmpdir tmp
mkdir "$tmp/mnt"
random_file "$tmp/img" $((4 << 20))
cp "$tmp/img" "$tmp/orig"
ctl=$tmp/mnt/fault

# image_is SECTOR COUNT 5a|orig: the image's sectors hold the writes' bytes, or the original's.
image_is()
{
	if [ "$3" = 5a ]; then
		head -c $(($2 * 512)) /dev/zero | tr '\0' '\132' >"$tmp/want"
	else
		dd if="$tmp/orig" of="$tmp/want" bs=512 skip="$1" count="$2" status=none
	fi
	cmp -s -i $(($1 * 512)):0 -n $(($2 * 512)) "$tmp/img" "$tmp/want"
}

say "error=write aimed at 100..107 and 200: writes there fail with EIO, writes elsewhere land"
start_rqdisk -e noop --filter fault:error=write,sectors=100-107/200 "$tmp/img" "$tmp/mnt"
[ "$(cat "$ctl/sectors" | tr '\n' ' ')" = "100-107 200-200 " ] || fail "fault/sectors: $(cat "$ctl/sectors")"
[ "$(cat "$ctl/rules")" = "error=write,sectors=100-107/200-200" ] || fail "fault/rules: $(cat "$ctl/rules")"
expected=EIO expect dwrite $((100 * 512)) 4096
expected=EIO expect dwrite $((200 * 512)) 512
expected=ok expect dwrite 0 4096
expected=ok expect dwrite $((108 * 512)) 4096
expected=ok expect dwrite $((201 * 512)) 512
cat "$rqdisk_disk" >/dev/null || fail "a read of the whole disk failed: reads are not aimed at"
grep -q "^errors 2$" "$ctl/stats" || fail "fault/stats: $(cat "$ctl/stats")"

say "sectors_file through fault/rules: the aim moves to its ranges"
printf '# the ranges of one file\n300-303\n\n400/402\n' >"$tmp/ranges"
echo "sectors_file=$tmp/ranges" >"$ctl/rules" || fail "sectors_file refused"
[ "$(cat "$ctl/sectors" | tr '\n' ' ')" = "300-303 400-400 402-402 " ] || fail "fault/sectors: $(cat "$ctl/sectors")"
[ "$(cat "$ctl/rules")" = "error=write,sectors_file=$tmp/ranges" ] || fail "fault/rules: $(cat "$ctl/rules")"
expected=ok expect dwrite $((107 * 512)) 512 # aimed at no longer
expected=EIO expect dwrite $((302 * 512)) 512

say "a bad sectors_file or sectors= is EINVAL and changes nothing"
before=$(cat "$ctl/rules")
printf '1-2\nfive\n' >"$tmp/bad"
: >"$tmp/empty"
for v in "sectors_file=$tmp/bad" "sectors_file=$tmp/empty" "sectors_file=$tmp" \
	sectors_file=relative "sectors_file=$tmp/none" sectors=9-8 sectors=8192 sectors=1/; do
	write_fails "$ctl/rules" "$v"
done
[ "$(cat "$ctl/rules")" = "$before" ] || fail "a refused rule changed fault/rules: $(cat "$ctl/rules")"
stop_rqdisk

image_is 0 8 5a || fail "sectors 0..7 were not written"
image_is 108 8 5a || fail "sectors 108..115 were not written"
image_is 201 1 5a || fail "sector 201 was not written"
image_is 100 7 orig || fail "aimed sectors 100..106 were written"
image_is 107 1 5a || fail "sector 107 was not written once no longer aimed at"
image_is 302 1 orig || fail "aimed sector 302 was written"
image_is 200 1 orig || fail "aimed sector 200 was written"
image_is 96 4 orig || fail "sectors 96..99 were written"

say "a bad sectors_file on the command line: one line naming its line, exit 2, no mount"
status=0
"$RQDISK" --filter "fault:error=write,sectors_file=$tmp/bad" "$tmp/img" "$tmp/mnt" 2>"$tmp/err" ||
	status=$?
[ "$status" = 2 ] || fail "a bad sectors_file: exit $status, not 2"
[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "sectors_file $tmp/bad line 2:" "$tmp/err" ||
	fail "a bad sectors_file: $(cat "$tmp/err")"
! is_mounted "$tmp/mnt" || fail "a bad sectors_file left a mount"
echo PASS
