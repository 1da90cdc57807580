#!/bin/sh
# suites.sh: the bats suite and the torture run against redis-server and,
# when it is installed, against valkey-server too: both bats runs side by
# side, then one torture after the other. Each writes to a log of its
# own, shown whole when it ends. The torture's
# failovers need servers of their own (a master, a replica and three
# sentinels; a cluster of six): to keep the two runs' length even, the
# Sentinel failover runs against redis-server and the cluster's against
# valkey-server, or both against redis-server when valkey is missing.
# The files whose tests do not depend on the server (the build, usage
# errors, completions, the demo, packaging, the harness itself) run once,
# against redis-server: the suite is bound by the CPU (every ASan process
# costs some 60 ms of it, and LeakSanitizer's exit check 40 ms more).
# The suite against valkey-server runs without LeakSanitizer's exit check
# (see the Makefile); RELEASE, a release build, runs herd.bats' drains.
# usage: test/suites.sh path/to/redlock LOGDIR [RELEASE]
set -u
rl=$1
logs=$2
export REDLOCK_RELEASE_BIN=${3-}
mkdir -p "$logs"
agnostic="build cli completion demo package harness"

# files SERVER: the bats files to run against SERVER.
files() {
	local f
	for f in test/bats/*.bats; do
		case " $agnostic " in
		*" $(basename "$f" .bats) "*) [ "$1" = redis-server ] || continue ;;
		esac
		echo "$f"
	done
}

# suite bats|torture SERVER [TOPOLOGIES]: the bats files, or the torture
# with the failovers of TOPOLOGIES, against SERVER; its log is
# LOGDIR/SERVER.log and a failure is marked by LOGDIR/SERVER.failed.
# Both servers' bats runs go side by side, then the tortures: a torture
# beside the other server's bats (the first to end its bats no longer
# waits for the other) saw its 600 ms leases run out under a CPU that the
# bats run kept busy.
suite() {
	(
		[ "$2" = redis-server ] ||
		    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
		if [ "$1" = bats ]; then
			# shellcheck disable=SC2046
			REDLOCK_TEST_SERVER=$2 REDLOCK_BIN=$rl \
			    bats --timing --print-output-on-failure $(files "$2")
		else
			REDLOCK_TEST_SERVER=$2 TORTURE_TOPOLOGIES=$3 \
			    test/torture/run.sh "$rl" 30
		fi || touch "$logs/$2.failed"
	) >>"$logs/$2.log" 2>&1
}

servers=redis-server
if command -v valkey-server >/dev/null; then
	servers="$servers valkey-server"
else
	echo "== valkey-server is not installed: the suite runs against redis-server only"
fi
for srv in $servers; do
	rm -f "$logs/$srv.failed" "$logs/$srv.log"
	echo "== bats and torture against $($srv --version | cut -d' ' -f1-3), log in $logs/$srv.log"
	suite bats "$srv" &
done
wait
# The tortures one after the other: each keeps both cores busy for its
# SECONDS, and two side by side ran too few sections and faults (some 10
# sections a kind, a cluster's slot never migrated) to prove anything.
for srv in $servers; do
	case $srv:$servers in
	redis-server:*valkey-server) topologies=sentinel ;;
	redis-server:*) topologies="sentinel cluster" ;;
	valkey-server:*) topologies=cluster ;;
	esac
	suite torture "$srv" "$topologies"
done
status=0
for srv in $servers; do
	echo "== against $srv"
	cat "$logs/$srv.log"
	[ ! -e "$logs/$srv.failed" ] || {
		echo "== FAILED against $srv"
		status=1
	}
done
exit $status
