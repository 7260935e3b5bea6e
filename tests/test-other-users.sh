#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-other-users.sh - with --allow-other, a user other than the owner reads what the
# modes let him read and writes nothing: not the disk, not a control file, not even
# through a handle the owner opened; no shared object is loaded for him.  Root still can.
source "$(dirname "$0")/functions.sh"
requires_root
requires_fuse
requires python3 setpriv
id nobody >/dev/null 2>&1 || skip "there is no user nobody"
getent group nogroup >/dev/null || skip "there is no group nogroup"

modules=$top_builddir/tests/.libs
[ -f "$modules/idler.so" ] || fail "$modules/idler.so is not built (make check builds it)"

# as_nobody CMD...: run CMD as nobody, keeping the open file descriptors.
as_nobody()
{
	setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
}
as_nobody true || skip "cannot run commands as nobody"
# a python3 nobody may run (python3 on root's PATH may live in root's home)
for py in "$(command -v python3)" /usr/bin/python3 /usr/local/bin/python3 ""; do
	[ -n "$py" ] && as_nobody "$py" -c '' 2>/dev/null && break
done
[ -n "$py" ] || skip "nobody can run no python3"

make_tmpdir tmp
chmod 0755 "$tmp" # nobody must reach the mount point
mkdir "$tmp/mnt"
# two filters: the layers' own files (device/delay/read_ms ...) are among the control files
start_rqdisk --allow-other --filter delay:ms=0 --filter model:ssd --create 16M "$tmp/img" "$tmp/mnt"
mnt=$tmp/mnt
q=$mnt/queue

# refused_open FILE: as nobody, opening FILE for writing fails with EACCES or EPERM.
refused_open()
{
	as_nobody "$py" - "$1" <<'PY' || fail "nobody opened $1 for writing"
import errno, os, sys
try:
    os.open(sys.argv[1], os.O_WRONLY)
except OSError as e:
    sys.exit(0 if e.errno in (errno.EACCES, errno.EPERM) else 1)
sys.exit(1)
PY
}

# refused_write FD VALUE: as nobody, a write through the owner's FD fails with EACCES or EPERM.
refused_write()
{
	as_nobody "$py" - "$1" "$2" <<'PY' || fail "nobody wrote '$2' through the owner's handle"
import errno, os, sys
try:
    os.write(int(sys.argv[1]), sys.argv[2].encode() + b"\n")
except OSError as e:
    sys.exit(0 if e.errno in (errno.EACCES, errno.EPERM) else 1)
sys.exit(1)
PY
}

# loaded NAME: the daemon has a shared object NAME mapped.
loaded()
{
	grep -q "/$1\$" "/proc/$rqdisk_pid/maps"
}

say "nobody may read the disk, but not open it for writing, nor see it writable"
as_nobody dd if="$mnt/disk" of=/dev/null bs=4096 count=1 status=none || fail "nobody cannot read the disk"
refused_open "$mnt/disk"
as_nobody test -w "$mnt/disk" && fail "the disk is writable for nobody (no default_permissions?)"

mapfile -t writable < <(cd "$mnt" &&
	{ find . -path ./disk -prune -o -type f -perm -u+w -print; ls -d ./queue/iosched/*; } |
	sort -u)
[ ${#writable[@]} -ge 8 ] || fail "only ${#writable[@]} writable control files: ${writable[*]}"
[[ " ${writable[*]} " == *" ./device/delay/read_ms "* ]] || fail "device/delay/read_ms is not writable"
say "nobody opens no writable control file for writing: ${writable[*]}"
for f in "${writable[@]}"; do
	refused_open "$mnt/$f"
	as_nobody test -w "$mnt/$f" && fail "$f is writable for nobody"
done

say "nobody reads every control file the modes let him"
for f in $(cd "$mnt" && find . -path ./disk -prune -o -type f -perm -o+r -print); do
	as_nobody cat "$mnt/$f" >/dev/null || fail "nobody cannot read $f"
done

say "nobody writes nothing through handles the owner opened"
nr=$(cat "$q/nr_requests")
expire=$(cat "$q/iosched/read_expire")
name=$(cat "$mnt/trace/name")
exec 3>"$q/nr_requests" 4>"$q/iosched/read_expire" 5>"$mnt/trace/name" 6>"$q/scheduler" \
	8>"$mnt/device/delay/read_ms"
refused_write 3 7
refused_write 4 7
refused_write 5 "$tmp/nobodys-trace"
refused_write 6 "$modules/idler.so"
refused_write 6 noop
refused_write 8 7
exec 3>&- 4>&- 5>&- 6>&- 8>&-
[ "$(cat "$mnt/device/delay/read_ms")" = 0 ] || fail "device/delay/read_ms changed"
[ "$(cat "$q/nr_requests")" = "$nr" ] || fail "nr_requests changed to $(cat "$q/nr_requests")"
[ "$(cat "$q/iosched/read_expire")" = "$expire" ] || fail "read_expire changed"
[ "$(cat "$mnt/trace/name")" = "$name" ] || fail "trace/name changed to $(cat "$mnt/trace/name")"
[[ "$(cat "$q/scheduler")" == *"[deadline]"* ]] || fail "the elevator changed: $(cat "$q/scheduler")"
loaded idler.so && fail "a path nobody wrote was loaded"

say "nobody writes, discards or zeroes nothing on the disk through the owner's handle"
printf 'owners-block' | dd of="$mnt/disk" bs=4096 conv=notrunc,sync status=none
cp "$mnt/disk" "$tmp/before"
exec 7<>"$mnt/disk"
as_nobody "$py" - 7 <<'PY' || fail "nobody changed the disk through the owner's handle"
import ctypes, errno, os, sys
fd = int(sys.argv[1])
def refused(what, f):
    try:
        f()
    except OSError as e:
        if e.errno in (errno.EACCES, errno.EPERM):
            return
        sys.exit(f"{what}: {os.strerror(e.errno)}, not EACCES")
    sys.exit(f"{what} went through")
refused("pwrite", lambda: os.pwrite(fd, b"x" * 4096, 0))
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
def falloc(mode):
    if libc.fallocate(fd, mode, 0, 4096):
        raise OSError(ctypes.get_errno(), "fallocate")
refused("punch hole", lambda: falloc(0x01 | 0x02))   # FALLOC_FL_PUNCH_HOLE | KEEP_SIZE
refused("zero range", lambda: falloc(0x10 | 0x01))   # FALLOC_FL_ZERO_RANGE | KEEP_SIZE
PY
exec 7>&-
cmp -s "$tmp/before" "$mnt/disk" || fail "the disk changed"

say "root still writes everything, and loads a shared object by path"
echo 7 >"$q/nr_requests" && [ "$(cat "$q/nr_requests")" = 7 ] || fail "root cannot set nr_requests"
echo 7 >"$mnt/device/delay/read_ms" && [ "$(cat "$mnt/device/delay/read_ms")" = 7 ] ||
	fail "root cannot set device/delay/read_ms"
echo "$tmp/roots-trace" >"$mnt/trace/name" || fail "root cannot name a trace"
echo "$modules/idler.so" >"$q/scheduler" || fail "root cannot load idler.so"
[[ "$(cat "$q/scheduler")" == *"[idler]"* ]] || fail "idler is not running"
loaded idler.so || fail "idler.so is running but not among the daemon's maps: the check is blind"
echo deadline >"$q/scheduler"
dd if=/dev/zero of="$mnt/disk" bs=4096 count=1 conv=notrunc status=none || fail "root cannot write"

stop_rqdisk
echo PASS
