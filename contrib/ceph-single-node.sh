#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# ceph-single-node.sh - a throwaway one-node Ceph (a monitor, a memstore OSD) on loopback for tests.
#
#   contrib/ceph-single-node.sh start [DIR] [POOL/IMAGE] [SIZE]
#       starts the cluster in DIR (a new temporary directory when not given),
#       creates POOL (default rqdisk) and IMAGE (default disk, SIZE default
#       256M) in it, and prints the path of its ceph.conf on standard output.
#       Everything else goes to DIR/log/.  On failure nothing is left running
#       and a directory the script made is removed.
#   contrib/ceph-single-node.sh stop DIR
#       stops the daemons started in DIR and removes DIR.
#
# No manager runs: the monitor and the OSD are all that I/O needs.  The OSD
# keeps its objects in memory (memstore), so no disk or device is used and
# nothing survives a stop.  Authentication is off: the monitor listens on
# 127.0.0.1 only.  Needs ceph-mon, ceph-osd and ceph-common (Debian 12:
# contrib/install-deps.sh --ceph).
set -eu

die() {
	echo "ceph-single-node: $*" >&2
	exit 1
}

# The pids the daemons wrote: each told to stop, killed after 10 s (they are
# not our children).  The OSD goes first: without a monitor to tell, it
# waits seconds more.
stop_daemons() {
	local dir=$1 pidfile pid i

	for pidfile in "$dir"/run/osd.*.pid "$dir"/run/mon.*.pid; do
		[ -f "$pidfile" ] || continue
		pid=$(cat "$pidfile")
		[ -n "$pid" ] && kill "$pid" 2>/dev/null || continue
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null || true
	done
}

stop() {
	local dir=${1:-}

	[ -n "$dir" ] || die "usage: $0 stop DIR"
	[ -f "$dir/ceph.conf" ] && grep -q '^# ceph-single-node' "$dir/ceph.conf" ||
		die "$dir: not a directory this script made (no ceph.conf of its own)"
	stop_daemons "$dir"
	rm -rf "$dir"
}

# start failed: the ends of the logs on stderr, then nothing left running or on disk.
failed() {
	local dir=$1 made=$2 log

	for log in "$dir"/log/*.log; do
		[ -s "$log" ] || continue
		echo "--- the end of ${log##*/}:"
		tail -n 5 "$log"
	done >&2
	stop_daemons "$dir"
	if [ "$made" = 1 ]; then
		rm -rf "$dir"
	else
		rm -rf "${dir:?}"/*
	fi
}

# A TCP port on 127.0.0.1 that nothing listens on.
free_port() {
	local port

	for ((i = 0; i < 50; i++)); do
		port=$((20000 + RANDOM % 20000))
		ss -Hltn "sport = :$port" 2>/dev/null | grep -q . || { echo "$port"; return 0; }
	done
	return 1
}

# Up to $1 tenths of a second for "$@" to succeed.
wait_for() {
	local tenths=$1 i

	shift
	for ((i = 0; i < tenths; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

start() {
	local dir=${1:-} spec=${2:-rqdisk/disk} size=${3:-256M}
	local pool=${spec%%/*} image=${spec#*/}
	local made=0 port fsid osd_uuid

	[ "$pool" != "$spec" ] && [ -n "$pool" ] && [ -n "$image" ] ||
		die "POOL/IMAGE: $spec: give both, as rqdisk/disk"
	for tool in ceph-mon ceph-osd ceph monmaptool ceph-authtool rbd uuidgen ss; do
		command -v "$tool" >/dev/null || die "$tool is not installed (contrib/install-deps.sh --ceph)"
	done
	if [ -z "$dir" ]; then
		dir=$(mktemp -d /tmp/ceph-single-node.XXXXXX)
		made=1
	elif [ -e "$dir" ]; then
		[ -d "$dir" ] && [ -z "$(ls -A "$dir")" ] || die "$dir: not an empty directory"
	else
		mkdir -p "$dir"
		made=1
	fi
	dir=$(cd "$dir" && pwd)
	# from here on a failure stops what started and removes the directory
	# (a directory given empty is emptied again; the logs' ends are shown first)
	trap 'failed "$dir" $made' EXIT
	mkdir -p "$dir/run" "$dir/log" "$dir/mon.a" "$dir/osd.0"
	port=$(free_port) || die "no free port on 127.0.0.1"
	fsid=$(uuidgen)
	osd_uuid=$(uuidgen)
	cat >"$dir/ceph.conf" <<EOF
# ceph-single-node: a one-node test cluster; 'contrib/ceph-single-node.sh stop $dir' ends it
[global]
fsid = $fsid
mon host = v2:127.0.0.1:$port
public network = 127.0.0.0/8
auth cluster required = none
auth service required = none
auth client required = none
run dir = $dir/run
admin socket = $dir/run/\$name.asok
pid file = $dir/run/\$name.pid
log file = $dir/log/\$name.log
keyring = $dir/keyring
osd pool default size = 1
osd pool default min size = 1
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
# a test machine's disk may be fuller than a monitor likes: only its writes matter here
mon data avail warn = 1
mon data avail crit = 0
# a client that cannot reach the monitor gives up instead of waiting for ever
client mount timeout = 15
rados mon op timeout = 15

[mon]
mon data = $dir/mon.\$id
mon cluster log file = $dir/log/cluster.log

[osd]
osd data = $dir/osd.\$id
osd objectstore = memstore
memstore device bytes = 1073741824
osd max object name len = 256
osd max object namespace len = 64
EOF
	local conf=$dir/ceph.conf
	ceph-authtool --create-keyring "$dir/keyring" --gen-key -n mon. --cap mon 'allow *' \
		>>"$dir/log/setup.log" 2>&1 || die "ceph-authtool failed"
	monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$port]" "$dir/monmap" \
		>>"$dir/log/setup.log" 2>&1 || die "monmaptool failed"
	ceph-mon -c "$conf" -i a --mkfs --monmap "$dir/monmap" --keyring "$dir/keyring" \
		>>"$dir/log/setup.log" 2>&1 || die "ceph-mon --mkfs failed"
	ceph-mon -c "$conf" -i a >>"$dir/log/setup.log" 2>&1 || die "ceph-mon did not start"
	wait_for 300 ceph -c "$conf" --connect-timeout 5 mon stat || die "the monitor does not answer"
	local id
	id=$(ceph -c "$conf" osd new "$osd_uuid" 2>>"$dir/log/setup.log") || die "ceph osd new failed"
	[ "$id" = 0 ] || die "ceph osd new gave id $id, not 0"
	ceph-osd -c "$conf" -i 0 --mkfs --osd-uuid "$osd_uuid" >>"$dir/log/setup.log" 2>&1 ||
		die "ceph-osd --mkfs failed"
	ceph-osd -c "$conf" -i 0 >>"$dir/log/setup.log" 2>&1 || die "ceph-osd did not start"
	wait_for 600 sh -c "ceph -c '$conf' osd dump 2>/dev/null | grep -q '^osd.0 up'" ||
		die "the OSD did not come up"
	ceph -c "$conf" osd pool create "$pool" 8 8 >>"$dir/log/setup.log" 2>&1 ||
		die "cannot create pool $pool"
	ceph -c "$conf" osd pool application enable "$pool" rbd >>"$dir/log/setup.log" 2>&1 ||
		die "cannot tag pool $pool for rbd"
	# waits for the pool's placement groups to go active, but not for ever
	timeout 120 rbd -c "$conf" create --size "$size" "$pool/$image" >>"$dir/log/setup.log" 2>&1 ||
		die "cannot create image $pool/$image"
	trap - EXIT
	echo "$conf"
}

case "${1:-}" in
start)
	shift
	start "$@"
	;;
stop)
	shift
	stop "$@"
	;;
*)
	echo "usage: $0 start [DIR] [POOL/IMAGE] [SIZE] | stop DIR" >&2
	exit 2
	;;
esac
