#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-nbd-lost-writes-files.sh - a loss of writes the NBD server answered
# and no flush covered (nbdkit's cache filter in writeback mode, kill -9)
# is told to every file open on the disk, once each, as the kernel's
# errseq tells a writeback error: two processes that each wrote a block
# through their own descriptor both get EIO from their next fsync, then 0;
# a file opened once the loss has been told gets 0; one opened before
# anyone was told gets EIO too.  An O_DSYNC write tells its file as an
# fsync does.  device/lost_writes counts the losses, and each is said in
# the system log (LOG_DAEMON, LOG_WARNING) where this test can listen.
source "$(dirname "$0")/functions.sh"
source "$(dirname "$0")/nbd-functions.sh"
requires_root
requires_fuse
requires dd cmp timeout mkfifo python3
requires_nbd
nbdkit --filter=cache null --version >/dev/null 2>&1 || skip "no nbdkit cache filter"
holder=${FD_HOLDER:-$top_builddir/tests/fd-holder}
[ -x "$holder" ] || fail "$holder is not built"

make_tmpdir tmp
mkdir "$tmp/mnt"
sock=$tmp/sock
uri="nbd+unix:///?socket=$sock"
random_file "$tmp/img" $((16 << 20))
cp "$tmp/img" "$tmp/orig"

# The file plugin under a cache that keeps writes until a flush: kill -9 loses them.
start_cached()
{
	start_nbdkit "$sock" --filter=cache file "$tmp/img" cache=writeback
}

# The server dies with what it caches, and comes back with the same export.
kill_server()
{
	stop_nbdkit KILL
	start_cached
}

# ------------------------------------------------------------ the system log

# The system log: heard where no logger runs (listen_syslog in
# functions.sh); where one runs, the log is its: that check is left out.
syslog_file=

# ------------------------------------------------------------ the holders

# Each holder is a process of its own that holds one open file of the disk
# (tests/fd-holder), given commands through a FIFO.
declare -A holder_in holder_out holder_pid

# holder_open NAME: a new process opens the disk.
holder_open()
{
	local in out

	mkfifo "$tmp/$1.in" "$tmp/$1.out"
	"$holder" "$rqdisk_disk" <"$tmp/$1.in" >"$tmp/$1.out" &
	holder_pid[$1]=$!
	exec {in}>"$tmp/$1.in" {out}<"$tmp/$1.out"
	holder_in[$1]=$in
	holder_out[$1]=$out
	read -r -t 120 reply <&"$out" || fail "$1: fd-holder did not start"
	[ "$reply" = ok ] || fail "$1: cannot open the disk: $reply"
}

# holder NAME COMMAND: what NAME's process answers, in $reply.
holder()
{
	echo "$2" >&"${holder_in[$1]}"
	read -r -t 120 reply <&"${holder_out[$1]}" || fail "$1: no answer to $2"
}

# holder_is NAME ANSWER COMMAND: NAME's process answers COMMAND with ANSWER.
holder_is()
{
	holder "$1" "$3"
	[ "$reply" = "$2" ] || fail "$1: $3 answered '$reply', not '$2'"
}

# holder_close NAME: its file is closed, its process gone.  (Its FIFOs
# may be open in a process started since, which would keep it from
# seeing the end of its input: it is told to close.)
holder_close()
{
	holder_is "$1" ok close
	exec {holder_in[$1]}>&- {holder_out[$1]}<&-
	wait "${holder_pid[$1]}" || fail "$1: fd-holder exited with $?"
	rm -f "$tmp/$1.in" "$tmp/$1.out"
	unset "holder_in[$1]" "holder_out[$1]" "holder_pid[$1]"
}

# At exit: no holder keeps the disk open under the unmount.
_close_holders()
{
	local n

	for n in "${!holder_pid[@]}"; do
		kill "${holder_pid[$n]}" 2>/dev/null
		wait "${holder_pid[$n]}" 2>/dev/null
	done
	return 0
}

EIO="Input/output error"

# lost_writes LOSSES: device/lost_writes says that many losses.
lost_writes_is()
{
	local fields

	read -r -a fields <"$tmp/mnt/device/lost_writes" || fail "device/lost_writes cannot be read"
	[ "${fields[0]}" = "$1" ] || fail "device/lost_writes: ${fields[*]}, not $1 losses"
}

listen_syslog "$tmp/syslog"
[ -n "$syslog_global" ] && syslog_file=$tmp/syslog
start_cached
start_rqdisk --nbd-timeout 20 "$uri" "$tmp/mnt" 2>"$tmp/rqerr"
cleanup_fn _close_holders

say "no loss: device/lost_writes is all zeros"
read -r -a fields <"$tmp/mnt/device/lost_writes" || fail "no device/lost_writes"
[ "${fields[*]}" = "0 0 0" ] || fail "device/lost_writes before any loss: ${fields[*]}"

say "two processes write a block each, the server loses both: each one's fsync fails once"
holder_open a
holder_open b
holder_open reader # opened before the loss, writes nothing
holder_is a ok "write 5"
holder_is b ok "write 7"
kill_server
holder_is a "$EIO" fsync
holder_is b "$EIO" fsync
holder_is a ok fsync
holder_is b ok fsync
holder_is reader "$EIO" fsync # the kernel's rule: every file open at the loss
holder_is reader ok fsync
lost_writes_is 1
read -r -a fields <"$tmp/mnt/device/lost_writes"
[ "${fields[1]}" = 2 ] || fail "device/lost_writes: ${fields[*]}, not 2 writes lost"
[ "${fields[2]}" = 16 ] || fail "device/lost_writes: ${fields[*]}, not 16 sectors lost"

say "a file opened after the loss was told gets 0"
holder_open late
holder_is late ok fsync
dd if=/dev/null of="$rqdisk_disk" conv=notrunc,fsync status=none 2>"$tmp/err" ||
	fail "a new open's fsync after the loss was told: $(cat "$tmp/err")"

say "the lost blocks read as they were"
for b in 5 7; do
	dd if="$rqdisk_disk" of="$tmp/rb" bs=4k skip=$b count=1 iflag=direct status=none ||
		fail "a read after the loss failed"
	same_bytes "$tmp/rb" 0 "$tmp/orig" $((b * 4096)) 4096 || fail "block $b does not read old data"
done

say "a writer that closed and opened again before anyone was told is told"
holder_close late
holder_is a ok "write 9"
holder_close a
kill_server
holder_open a
holder_is b "$EIO" fsync
holder_is a "$EIO" fsync
holder_is a ok fsync
lost_writes_is 2

say "an O_DSYNC write tells its file as an fsync does, and the others still are"
holder_is b ok "write 11"
kill_server
holder_is a "$EIO" "dsync-write 13"
holder_is a ok fsync
holder_is b "$EIO" fsync
holder_is reader "$EIO" fsync
holder_is b ok fsync
lost_writes_is 3

say "every loss said on stderr, and in the system log"
n=$(grep -c "nbd: $uri: .* no flush covered may be lost" "$tmp/rqerr") || true
[ "$n" = 3 ] || fail "$n losses said on stderr, not 3: $(cat "$tmp/rqerr")"
if [ -n "$syslog_file" ]; then
	# <28>: LOG_DAEMON (3) * 8 + LOG_WARNING (4)
	n=$(grep -c "^<28>.*rqdisk\[[0-9]*\]: .*nbd: $uri: .*no flush covered may be lost" \
		"$syslog_file") || true
	[ "$n" = 3 ] || fail "$n losses in the system log, not 3: $(cat "$syslog_file")"
	grep -q "2 writes (16 sectors)" "$syslog_file" ||
		fail "the system log does not say what was lost: $(cat "$syslog_file")"
else
	say "(a system logger runs here: its log is not read)"
fi

holder_close a
holder_close b
holder_close reader
stop_rqdisk
echo "PASS"
