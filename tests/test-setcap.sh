#!/bin/bash
# test-setcap.sh - an rqdisk given capabilities with setcap (as rqdisk(8)
# suggests for CAP_IPC_LOCK and CAP_SYS_RESOURCE) and started by a user who
# lacks them loads no code of that user's: an elevator named by path is
# refused in one line, RQDISK_BACKEND_DIR is not heeded, and an RBD image
# (whose Ceph configuration can name plugins to load) is refused.  The same
# binary without capabilities, started by the same user, takes both: what
# refuses is the privilege, not the user.
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

if "$RQDISK" --help | grep -q nbd+unix; then
	say "setcap: RQDISK_BACKEND_DIR is not heeded; without capabilities it is"
	# no backend (an elevator): what loads it says so, naming where it was
	cp "$tmp/lifo.so" "$tmp/mods/backend-nbd.so"
	uri="nbd+unix:///?socket=$tmp/nosuch.sock"
	# the module is loaded once /dev/fuse is found usable: let nobody use it
	if ! setpriv --reuid=nobody --regid=nogroup --clear-groups test -w /dev/fuse; then
		fuse_mode=$(stat -c %a /dev/fuse)
		cleanup_fn chmod "$fuse_mode" /dev/fuse
		chmod o+rw /dev/fuse
	fi
	as_nobody env RQDISK_BACKEND_DIR="$tmp/mods" "$tmp/rqdisk-cap" -f "$uri" "$tmp/mnt" || true
	grep -q "$tmp/mods" "$tmp/err" && fail "a setcap rqdisk looked for its module in the user's directory"
	grep -q "backend module\|nosuch.sock" "$tmp/err" ||
		fail "a setcap rqdisk did not get as far as its module: $(cat "$tmp/err")"
	as_nobody env RQDISK_BACKEND_DIR="$tmp/mods" "$tmp/rqdisk-plain" -f "$uri" "$tmp/mnt" || true
	grep -q "$tmp/mods/backend-nbd.so is not" "$tmp/err" ||
		fail "a plain rqdisk did not look in RQDISK_BACKEND_DIR: $(cat "$tmp/err")"
fi
if "$RQDISK" --help | grep -q "rbd:POOL"; then
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
echo "PASS"
