#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-crash-aim.sh - crashes aimed at one file: rqdisk-extents and
# rqdisk-crash --only.  An ext4 made 1 MiB into an rqdisk disk logged with
# log-writes, loop-attached at that offset; a file of sectors each holding
# a numbered pattern is written and fsynced, beside another file.
#  - rqdisk-extents gives exactly the sectors where the file's pattern lies
#    in the disk image (the loop's offset counted), and --metadata the rest.
#  - rqdisk-crash --only @EXTENTS makes fewer states than the unaimed run,
#    some losing or tearing the file's writes; each differs from the state
#    that loses nothing at its point only inside the extents.
#  - A checker that wants the file's sectors all written or none fails the
#    states that tear or lose part of it, and the report names the file's
#    lost writes at sectors inside the extents.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires_loop
requires mkfs.ext4 mount umount cmp dd

crash=$top_builddir/src/crash/rqdisk-crash
extents=$top_builddir/src/extents/rqdisk-extents
[ -x "$crash" ] || fail "$crash is not built"
[ -x "$extents" ] || fail "$extents is not built"

make_tmpdir tmp
mkdir "$tmp/mnt" "$tmp/fs" "$tmp/t"
export TMPDIR=$tmp/t
offset=1048576
sectors=256 # of the file: 128 KiB

# ranges_sectors FILE: the sectors the ranges of FILE name, one a line
ranges_sectors()
{
	tr '/' '\n' <"$1" | awk -F- 'NF { e = NF == 2 ? $2 : $1; for (s = $1; s <= e; s++) print s }'
}

say "ext4 1 MiB into a logged rqdisk disk: a file of patterned sectors, fsynced"
truncate -s 32M "$tmp/img"
mkfs.ext4 -q -F -E offset=$offset "$tmp/img" 31M || fail "mkfs.ext4 failed"
start_rqdisk --filter "log-writes:file=$tmp/log,base=$tmp/base" "$tmp/img" "$tmp/mnt"
loop_attach dev "$rqdisk_disk" --direct-io=on --offset $offset
mount_at "$dev" "$tmp/fs"
for ((i = 0; i < sectors; i++)); do printf 'AIMPATTERN %05d %-494s\n' $i x; done >"$tmp/pattern"
[ "$(stat -c %s "$tmp/pattern")" = $((sectors * 512)) ] || fail "the pattern is not $sectors sectors"
head -c 65536 /dev/urandom >"$tmp/fs/other"
dd if="$tmp/pattern" of="$tmp/fs/file" bs=64K conv=fsync status=none || fail "writing the file failed"
sync "$tmp/fs/other"
"$extents" "$tmp/fs/file" >"$tmp/extents" || fail "rqdisk-extents failed"
"$extents" --metadata "$tmp/fs/file" >"$tmp/metadata" || fail "rqdisk-extents --metadata failed"
status=0
"$extents" "$tmp/pattern" 2>"$tmp/err" || status=$?
[ $status = 1 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q 'not an attached loop device\|no block device' "$tmp/err" ||
	fail "a file not on a loop device: status $status, $(cat "$tmp/err")"
umount "$tmp/fs" || fail "umount failed"
loop_detach "$dev"
stop_rqdisk
echo "extents: $(cat "$tmp/extents")  metadata: $(cat "$tmp/metadata")"

say "the extents are the sectors of the image where the file's pattern lies"
ranges_sectors "$tmp/extents" >"$tmp/ext.list"
sort "$tmp/ext.list" >"$tmp/ext.lex" # as comm wants it
grep -aob 'AIMPATTERN [0-9]\{5\}' "$tmp/img" | awk -F: '{ print int($1 / 512) }' | sort -n >"$tmp/found"
[ "$(wc -l <"$tmp/found")" = $sectors ] || fail "the image holds $(wc -l <"$tmp/found") pattern sectors, not $sectors"
cmp -s "$tmp/found" "$tmp/ext.list" || fail "the extents are not where the pattern lies: $(diff "$tmp/found" "$tmp/ext.list" | head -5)"
# --metadata: the rest of the disk, exactly
total=$(( $(wc -l <"$tmp/ext.list") + $(ranges_sectors "$tmp/metadata" | wc -l) ))
[ $total = $((32 * 2048)) ] || fail "extents and metadata cover $total sectors, not the disk's $((32 * 2048))"
[ -z "$(ranges_sectors "$tmp/metadata" | sort | comm -12 - "$tmp/ext.lex")" ] ||
	fail "--metadata holds sectors of the file"

say "--only @extents: fewer states, each differing from its point's prefix only inside the extents"
"$crash" --list --drop 1 --torn "$tmp/base" "$tmp/log" >"$tmp/all" || fail "--list failed"
"$crash" --list --drop 1 --torn --only @"$tmp/extents" "$tmp/base" "$tmp/log" >"$tmp/aimed" ||
	fail "--list --only failed"
all=$(wc -l <"$tmp/all")
aimed=$(wc -l <"$tmp/aimed")
lossy=$(grep -c '+' "$tmp/aimed" || true)
echo "states: $all unaimed, $aimed aimed ($lossy losing some of the file's writes)"
[ "$aimed" -lt "$all" ] || fail "--only made $aimed states, the unaimed run $all"
[ "$lossy" -ge 2 ] || fail "no state loses the file's writes"
[ -z "$(sort "$tmp/aimed" | comm -23 - <(sort "$tmp/all"))" ] || fail "--only made states the unaimed run has not"
for id in $(grep '+' "$tmp/aimed" | head -4); do
	point=${id%%+*}
	"$crash" --state "$id" -o "$tmp/s.img" "$tmp/base" "$tmp/log" || fail "--state $id failed"
	"$crash" --state "$point" -o "$tmp/p.img" "$tmp/base" "$tmp/log" || fail "--state $point failed"
	{ cmp -l "$tmp/s.img" "$tmp/p.img" || true; } | awk '{ print int(($1 - 1) / 512) }' |
		sort -u >"$tmp/diff"
	[ -s "$tmp/diff" ] || fail "$id is the same image as $point"
	outside=$(comm -23 "$tmp/diff" "$tmp/ext.lex")
	[ -z "$outside" ] || fail "$id differs from $point outside the extents: sectors $(echo $outside | head -c 200)"
done

say "a checker of the file's sectors: the states that lose part of it fail, named by the file"
cat >"$tmp/all-or-none" <<SH
#!/bin/bash
# the file's sectors in the state: all hold the pattern, or none does
n=\$(for r in \$(tr / ' ' <"$tmp/extents"); do
	s=\${r%-*} e=\${r#*-}
	dd if="\$1" bs=512 skip=\$s count=\$((e - s + 1)) status=none
done | grep -ao AIMPATTERN | wc -l)
[ \$n = 0 ] || [ \$n = $sectors ]
SH
chmod +x "$tmp/all-or-none"
status=0
"$crash" --drop 1 --torn --only @"$tmp/extents" -j 2 --csv "$tmp/csv" "$tmp/base" "$tmp/log" \
	-- "$tmp/all-or-none" {} >"$tmp/out" 2>&1 || status=$?
cat "$tmp/out"
[ $status = 1 ] || fail "rqdisk-crash --only exited $status, not 1"
grep -q "^  lost in $tmp/extents: entry [0-9]* (sectors [0-9]*-[0-9]*)" "$tmp/out" ||
	fail "no failing state is named by the file"
for r in $(grep -o "sectors [0-9]*-[0-9]*" "$tmp/out" | awk '{ print $2 }'); do
	for ((s = ${r%-*}; s <= ${r#*-}; s++)); do
		grep -qx "$s" "$tmp/ext.list" || fail "the report names sector $s, outside the extents"
	done
done
# every failing state lost or tore some of the file: a prefix keeps it whole or has none of it
! grep -v '^id,' "$tmp/csv" | grep ',failed,' | grep -v '+' ||
	fail "a state that loses nothing failed"
[ -z "$(ls -A "$tmp/t")" ] || fail "left behind in TMPDIR: $(ls -A "$tmp/t")"
echo PASS
