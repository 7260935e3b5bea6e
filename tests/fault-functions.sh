# SPDX-License-Identifier: BSD-3-Clause
# fault-functions.sh - what the live fault tests share: an O_DIRECT write
# through the disk file that says which errno it got, and a check of a
# helper's answer.  Sourced after functions.sh, with rqdisk_disk set.

# dwrite OFFSET LEN: an O_DIRECT write of LEN bytes of 0x5a; prints "ok" or the errno's name.
dwrite()
{
	python3 - "$rqdisk_disk" "$1" "$2" <<'PY'
import errno, mmap, os, sys
path, off, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
buf = mmap.mmap(-1, n)
buf.write(b"\x5a" * n)
fd = os.open(path, os.O_WRONLY | os.O_DIRECT)
try:
    os.pwritev(fd, [buf], off)
except OSError as e:
    print(errno.errorcode[e.errno])
    sys.exit(0)
print("ok")
PY
}

expect()
{
	local got

	got=$("$@") || fail "$*: the helper failed"
	[ "$got" = "${expected}" ] || fail "$*: $got, not $expected"
}
