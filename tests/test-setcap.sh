#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-setcap.sh - an rqdisk given capabilities with setcap (as rqdisk(8)
# suggests for CAP_IPC_LOCK and CAP_SYS_RESOURCE) and started by a user who
# lacks them loads no code of that user's: an elevator named by path is
# refused in one line, RQDISK_BACKEND_DIR is not heeded, and an RBD image
# (whose Ceph configuration can name plugins to load) is refused.  The same
# binary without capabilities, started by the same user, takes both: what
# refuses is the privilege, not the user.  Nor does it heed the tests'
# RQDISK_TEST_BUFPOOL, which sizes memory it locks.
# Every path such an rqdisk (or a set-user-ID root copy) is given, it
# reaches with its caller's rights: IMAGE, --create, --trace, trace/name,
# the log-writes filter's file= and base=, and the mount point (through
# fusermount3, which also keeps --allow-other to /etc/fuse.conf's word).
# A refusal fails with status 1, names the path, and leaves nothing: no
# file, no mount.
source "$(dirname "$0")/functions.sh"
requires_root
requires setcap setpriv timeout
id nobody >/dev/null 2>&1 || skip "no user nobody"

lifo=$top_builddir/tests/.libs/lifo.so
[ -e "$lifo" ] || skip "tests/lifo.so is not built (make check builds it)"
make_tmpdir tmp
chmod 755 "$tmp"
mkdir "$tmp/mnt" "$tmp/mods"
truncate -s 16M "$tmp/img"
chown nobody "$tmp/img" "$tmp/mnt"
cp "$lifo" "$tmp/lifo.so"
cp "$RQDISK" "$tmp/rqdisk-plain"
cp "$RQDISK" "$tmp/rqdisk-cap"
chmod 755 "$tmp/rqdisk-plain" "$tmp/rqdisk-cap"
setcap cap_ipc_lock+ep "$tmp/rqdisk-cap" 2>"$tmp/err" ||
	skip "setcap: $(cat "$tmp/err") (a file system without capabilities?)"
# exec grants file capabilities only where the mount allows it (not nosuid,
# as TMPDIR may be): a copy of cat given one says what nobody gets from it
cp "$(command -v cat)" "$tmp/cat-cap"
chmod 755 "$tmp/cat-cap"
setcap cap_ipc_lock+ep "$tmp/cat-cap" || skip "setcap cannot give $tmp/cat-cap a capability"
eff=$(setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all "$tmp/cat-cap" \
	/proc/self/status | awk '$1 == "CapEff:" { print $2 }')
[ -n "$eff" ] && [ $((16#$eff)) != 0 ] ||
	skip "exec grants no file capabilities in $tmp (a nosuid mount?)"
cleanup_fn _unmount "$tmp/mnt"

# as_nobody BINARY ARGS...: BINARY run as nobody for at most 20 s; its status
as_nobody()
{
	local status=0

	timeout 20 setpriv --reuid=nobody --regid=nogroup --clear-groups \
		--inh-caps=-all "$@" 2>"$tmp/err" </dev/null || status=$?
	_unmount "$tmp/mnt"
	echo "$* (as nobody): status $status: $(head -3 "$tmp/err")"
	return $status
}

# rqdisk goes on once /dev/fuse is found usable: let nobody use it
if ! setpriv --reuid=nobody --regid=nogroup --clear-groups test -w /dev/fuse; then
	fuse_mode=$(stat -c %a /dev/fuse)
	cleanup_fn chmod "$fuse_mode" /dev/fuse
	chmod o+rw /dev/fuse
fi

# as_nobody_mount BINARY ARGS...: BINARY, daemonizing, as nobody, has mounted
as_nobody_mount()
{
	timeout 20 setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
		"$@" 2>"$tmp/err" </dev/null || fail "$* (as nobody) did not mount: $(cat "$tmp/err")"
}

say "setcap: --elevator PATH is refused in one line, nothing mounted"
status=0
as_nobody "$tmp/rqdisk-cap" -f --elevator "$tmp/lifo.so" "$tmp/img" "$tmp/mnt" || status=$?
[ $status != 0 ] || fail "a setcap rqdisk run by nobody took an elevator by path"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "not one line: $(cat "$tmp/err")"
grep -q "not loaded by a privileged" "$tmp/err" || fail "the refusal does not say why"
no_mount_under "$tmp" || fail "a refused rqdisk left a mount"

say "without capabilities the same user's elevator is taken: the refusal is the privilege's"
as_nobody "$tmp/rqdisk-plain" -f --elevator "$tmp/lifo.so" "$tmp/img" "$tmp/mnt" || true
grep -q "not loaded by a privileged" "$tmp/err" && fail "a plain rqdisk refused the elevator"
# a refusal names the elevator; a dlopen() failure names the file
grep -qi "elevator\|lifo\.so" "$tmp/err" &&
	fail "a plain rqdisk could not take the elevator: $(cat "$tmp/err")"

if grep -q nbd+unix <<<"$("$RQDISK" --help)"; then
	say "setcap: RQDISK_BACKEND_DIR is not heeded; without capabilities it is"
	# no backend (an elevator): what loads it says so, naming where it was
	cp "$tmp/lifo.so" "$tmp/mods/backend-nbd.so"
	uri="nbd+unix:///?socket=$tmp/nosuch.sock"
	as_nobody env RQDISK_BACKEND_DIR="$tmp/mods" "$tmp/rqdisk-cap" -f "$uri" "$tmp/mnt" || true
	grep -q "$tmp/mods" "$tmp/err" && fail "a setcap rqdisk looked for its module in the user's directory"
	grep -q "backend module\|nosuch.sock" "$tmp/err" ||
		fail "a setcap rqdisk did not get as far as its module: $(cat "$tmp/err")"
	as_nobody env RQDISK_BACKEND_DIR="$tmp/mods" "$tmp/rqdisk-plain" -f "$uri" "$tmp/mnt" || true
	grep -q "$tmp/mods/backend-nbd.so is not" "$tmp/err" ||
		fail "a plain rqdisk did not look in RQDISK_BACKEND_DIR: $(cat "$tmp/err")"
fi
if grep -q "rbd:POOL" <<<"$("$RQDISK" --help)"; then
	say "setcap: an RBD image is refused in one line (Ceph's configuration names plugins); plain, it is parsed"
	spec="rbd:pool/image:plugin_dir=$tmp/mods"
	status=0
	as_nobody "$tmp/rqdisk-cap" -f "$spec" "$tmp/mnt" || status=$?
	[ $status != 0 ] || fail "a setcap rqdisk opened an RBD image"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "not one line: $(cat "$tmp/err")"
	grep -q "opens no RBD image" "$tmp/err" || fail "the refusal does not say why: $(cat "$tmp/err")"
	as_nobody "$tmp/rqdisk-plain" -f "$spec" "$tmp/mnt" || true
	grep -q "opens no RBD image" "$tmp/err" && fail "a plain rqdisk refused the RBD image"
fi

say "setcap, set up: no thread holds an effective capability, the serving one none at all"
# the log's writer thread starts before the memory is set up: it must not write past quotas
mkdir "$tmp/nobodys"
chown nobody "$tmp/nobodys"
as_nobody_mount "$tmp/rqdisk-cap" --filter "log-writes:file=$tmp/nobodys/cap.log" "$tmp/img" \
	"$tmp/mnt"
pid=$(pgrep -n -f "$tmp/rqdisk-cap --filter")
[ "$(ls "/proc/$pid/task" | wc -l)" -ge 2 ] || fail "no writer thread beside the serving one"
for t in /proc/"$pid"/task/*; do
	eff=$(awk '$1 == "CapEff:" { print $2 }' "$t/status")
	[ "$eff" = 0000000000000000 ] || fail "thread ${t##*/} of a setcap rqdisk has CapEff $eff"
done
prm=$(awk '$1 == "CapPrm:" { print $2 }' "/proc/$pid/task/$pid/status")
[ "$prm" = 0000000000000000 ] || fail "the serving thread of a setcap rqdisk has CapPrm $prm"
_unmount "$tmp/mnt"

say "setcap: the tests' RQDISK_TEST_BUFPOOL is not heeded (it sizes memory that is locked)"
# a 2 MiB pool leaves no buffer for a 1 MiB write: plain, the write fails.
# The pool is /dev/fuse's (a ring brings its own buffers), whatever the
# kernel offers new mounts while another test turns enable_uring on.
for p in rqdisk-cap rqdisk-plain; do
	as_nobody_mount env RQDISK_TEST_BUFPOOL=$((2 << 20)) "$tmp/$p" --fuse-uring=off "$tmp/img" \
		"$tmp/mnt"
	# set up, it holds no capability: CAP_SYS_RESOURCE would pass quotas for nobody's files
	pid=$(pgrep -n -f "$tmp/$p --fuse-uring=off $tmp/img")
	caps=$(awk '$1 == "CapEff:" || $1 == "CapPrm:" { printf "%s ", $2 }' "/proc/$pid/status")
	[ "$caps" = "0000000000000000 0000000000000000 " ] ||
		fail "$p, mounted, still holds capabilities (CapPrm CapEff): $caps"
	status=0
	setpriv --reuid=nobody --regid=nogroup --clear-groups dd if=/dev/zero of="$tmp/mnt/disk" \
		bs=1M count=1 oflag=direct conv=notrunc status=none 2>"$tmp/err" || status=$?
	_unmount "$tmp/mnt"
	echo "$p: a 1 MiB write under RQDISK_TEST_BUFPOOL=2M: status $status $(cat "$tmp/err")"
	if [ $p = rqdisk-cap ]; then
		[ $status = 0 ] || fail "a setcap rqdisk took RQDISK_TEST_BUFPOOL from nobody"
	else
		[ $status != 0 ] || fail "a plain rqdisk did not take RQDISK_TEST_BUFPOOL (the check proves nothing)"
	fi
done

# Root's: a directory nobody may not enter, a file nobody may not read, a
# file nobody may not write (a mount point), and an image in root's directory.
mkdir -m 700 "$tmp/root"
truncate -s 16M "$tmp/secret" "$tmp/root/img"
chmod 600 "$tmp/secret"
echo "root's" >"$tmp/rootfile"
chmod 644 "$tmp/rootfile"
mknod -m 600 "$tmp/rootdev" c 1 3 # /dev/null's numbers: harmless if written
cleanup_fn _unmount "$tmp/rootfile"
chown nobody "$tmp"

# A set-user-ID root copy, and one given capabilities that pass file
# modes (CAP_DAC_OVERRIDE) and mount (CAP_SYS_ADMIN): each is its caller
# for every path.  Where exec grants neither, that copy is left out.
privileged=()
cp "$RQDISK" "$tmp/rqdisk-suid"
cp "$(command -v id)" "$tmp/id-suid"
chown root:root "$tmp/rqdisk-suid" "$tmp/id-suid"
chmod 4755 "$tmp/rqdisk-suid" "$tmp/id-suid"
if [ "$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$tmp/id-suid" -u)" = 0 ]; then
	privileged+=("$tmp/rqdisk-suid")
else
	echo "exec does not honour set-user-ID in $tmp: that copy is not tried"
fi
cp "$RQDISK" "$tmp/rqdisk-dac"
chmod 755 "$tmp/rqdisk-dac"
setcap cap_ipc_lock,cap_dac_override,cap_sys_admin+ep "$tmp/rqdisk-dac" &&
	privileged+=("$tmp/rqdisk-dac")

# refused WHAT BINARY ARGS...: BINARY, daemonizing, as nobody, fails with
# status 1 in a line naming WHAT, and mounts nothing.
refused()
{
	local what=$1 status=0

	shift
	as_nobody "$@" || status=$?
	[ $status = 1 ] || fail "$*: status $status, not 1 (refused)"
	grep -qF "$what" "$tmp/err" || fail "$*: the error does not name $what: $(cat "$tmp/err")"
	grep -q "/dev/fuse" "$tmp/err" && fail "$*: refused for /dev/fuse, not for $what"
	no_mount_under "$tmp" || fail "$*: a refused rqdisk left a mount"
}

# one_line: the last refusal said it in one line.
one_line()
{
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "not one line: $(cat "$tmp/err")"
}

# mount_refusal: the last refusal was fusermount3's reason and rqdisk's line, no more
mount_refusal()
{
	grep -q "^fusermount3: " "$tmp/err" || fail "fusermount3 did not say why"
	grep -q "^rqdisk: cannot mount on " "$tmp/err" || fail "rqdisk did not say it could not mount"
	[ "$(wc -l <"$tmp/err")" = 2 ] || fail "not two lines: $(cat "$tmp/err")"
}

for p in "${privileged[@]}"; do
	say "$(basename "$p"): --create in root's directory is refused, nothing made"
	refused "$tmp/root/new" "$p" --create 16M "$tmp/root/new" "$tmp/mnt"
	one_line
	[ -e "$tmp/root/new" ] && fail "$p made $tmp/root/new for nobody"

	say "$(basename "$p"): IMAGE that nobody may not read is refused"
	refused "$tmp/secret" "$p" "$tmp/secret" "$tmp/mnt"
	one_line
	refused "$tmp/root/img" "$p" "$tmp/root/img" "$tmp/mnt"
	one_line

	say "$(basename "$p"): --trace into root's directory is refused, nothing made"
	refused "$tmp/root/t" "$p" --trace "$tmp/root/t" "$tmp/img" "$tmp/mnt"
	one_line
	[ -e "$tmp/root/t.blktrace.0" ] && fail "$p made a trace in root's directory"

	say "$(basename "$p"): log-writes file= and base= in root's directory are refused"
	refused "$tmp/root/log" "$p" --filter "log-writes:file=$tmp/root/log" "$tmp/img" "$tmp/mnt"
	one_line
	[ -e "$tmp/root/log" ] && fail "$p made a log in root's directory"
	refused "$tmp/root/base" "$p" --filter "log-writes:file=$tmp/log,base=$tmp/root/base" \
		"$tmp/img" "$tmp/mnt"
	one_line
	[ -e "$tmp/root/base" ] && fail "$p made a base in root's directory"
	[ -e "$tmp/log" ] && fail "$p left the log of a refused start behind"
	# a device is taken as the log (as dm-log-writes logs to one): not root's
	refused "$tmp/rootdev" "$p" --filter "log-writes:file=$tmp/rootdev" "$tmp/img" "$tmp/mnt"
	one_line

	say "$(basename "$p"): a mount point nobody may not write is refused"
	refused "$tmp/rootfile" "$p" "$tmp/img" "$tmp/rootfile"
	mount_refusal
	[ "$(cat "$tmp/rootfile")" = "root's" ] || fail "$tmp/rootfile changed"
	if ! grep -q "^user_allow_other" /etc/fuse.conf 2>/dev/null; then
		say "$(basename "$p"): --allow-other, which /etc/fuse.conf does not allow users, is refused"
		refused "$tmp/mnt" "$p" --allow-other "$tmp/img" "$tmp/mnt"
		mount_refusal
	fi

	say "$(basename "$p"): trace/name in root's directory: trace/enable fails, nothing made"
	as_nobody_mount "$p" "$tmp/img" "$tmp/mnt"
	setpriv --reuid=nobody --regid=nogroup --clear-groups sh -c \
		"echo $tmp/root/ctl >$tmp/mnt/trace/name" || fail "nobody could not set trace/name"
	setpriv --reuid=nobody --regid=nogroup --clear-groups sh -c \
		"echo 1 >$tmp/mnt/trace/enable" 2>"$tmp/err" &&
		fail "$p started a trace in root's directory for nobody"
	cat "$tmp/err"
	_unmount "$tmp/mnt"
	[ -e "$tmp/root/ctl.blktrace.0" ] && fail "$p made a trace in root's directory"
done
echo "PASS"
