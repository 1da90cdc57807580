#!/bin/sh
# suites.sh: the bats suite and the torture run against redis-server and,
# when it is installed, against valkey-server too. The bats files of both
# servers are jobs that SUITE_JOBS workers (4 unless told) take in turn,
# the longest first, each a bats run with a log of its own; then one
# torture after the other. What a run prints is shown whole, per server
# and file in order, when everything has ended. The torture's failovers
# need servers of their own (a master, a replica and three sentinels; a
# cluster of six): to keep the two runs' length even, the Sentinel
# failover runs against redis-server and the cluster's against
# valkey-server, or both against redis-server when valkey is missing.
# The files whose tests do not depend on the server (the build, usage
# errors, completions, the demo, packaging, the harness itself) run once,
# against redis-server.
# Why workers: most of a bats file's time is spent waiting (for leases to
# run out, failovers, heartbeats), and one run per server left both
# cores two-thirds idle on a quiet machine (a fresh clone's make test
# took 13 minutes there, 21 beside busy loops); several files at once
# keep them busy, and beside busy loops more runnable tests get more of
# the CPU than two. Six, since the Redisson interop tests (the kinds'
# matrix, the emulation's checks, pub/sub modes) made the suite a third
# longer: with five, a fresh clone's make test took 942 s beside two busy
# loops.
# The suite against valkey-server runs without LeakSanitizer's exit check
# (see the Makefile); RELEASE, a release build, runs herd.bats' drains.
# usage: test/suites.sh path/to/redlock LOGDIR [RELEASE]
set -u
rl=$1
logs=$2
export REDLOCK_RELEASE_BIN=${3-}
jobs=${SUITE_JOBS:-6}
# emulation.bats checks test/bats/redisson.py against Redisson's scripts,
# which run the same on either server; redisson_matrix.bats, every kind
# of redlock's beside every kind of Redisson's, starts some 500 Python
# clients (150 s of a loaded box's time) for what redisson.bats,
# redisson_kinds.bats and redisson_wake.bats show against each server.
agnostic="build cli completion demo package harness emulation redisson_matrix"
# The longest files first (seconds in a run of the whole suite on a
# 2-core machine: sentinel 195, redisson 100, herd 94, redlock 68,
# redisson_matrix 65, shared 64, lock 60, cluster 60, redisson_kinds 53,
# minhold 49 on a quiet box, then 46 and less), so that no long file
# starts last; files not named here come after them, in name order.
longest="sentinel redisson herd redlock redisson_matrix shared lock cluster \
redisson_kinds minhold exec emulation completion pubsub fair replicas watchdog tls \
harness"

# order: every bats file's name, the longest first.
order() {
	local n
	for n in $longest; do
		[ -e "test/bats/$n.bats" ] && echo "$n"
	done
	for n in test/bats/*.bats; do
		n=$(basename "$n" .bats)
		case " $longest " in *" $n "*) ;; *) echo "$n" ;; esac
	done
}

# bats_job SERVER FILE: FILE's tests against SERVER, its output in
# LOGDIR/SERVER/FILE.log, a failure marked by LOGDIR/SERVER/FILE.failed.
bats_job() {
	(
		[ "$1" = redis-server ] ||
		    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
		REDLOCK_TEST_SERVER=$1 REDLOCK_BIN=$rl \
		    bats --timing --print-output-on-failure "test/bats/$2.bats" ||
		    touch "$logs/$1/$2.failed"
	) >"$logs/$1/$2.log" 2>&1
}

# worker: take the jobs in turn (a job is taken by making its claim
# directory, which only one worker can) and run those it took.
worker() {
	local n srv
	for n in $(order); do
		for srv in $servers; do
			case " $agnostic " in
			*" $n "*) [ "$srv" = redis-server ] || continue ;;
			esac
			mkdir "$logs/$srv/$n.claim" 2>/dev/null || continue
			bats_job "$srv" "$n"
		done
	done
}

# torture SERVER TOPOLOGIES: the torture with the failovers of
# TOPOLOGIES, against SERVER; its log is LOGDIR/SERVER/torture.log.
torture() {
	(
		[ "$1" = redis-server ] ||
		    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
		REDLOCK_TEST_SERVER=$1 TORTURE_TOPOLOGIES=$2 \
		    test/torture/run.sh "$rl" 30 || touch "$logs/$1/torture.failed"
	) >"$logs/$1/torture.log" 2>&1
}

servers=redis-server
if command -v valkey-server >/dev/null; then
	servers="$servers valkey-server"
else
	echo "== valkey-server is not installed: the suite runs against redis-server only"
fi
for srv in $servers; do
	rm -rf "${logs:?}/$srv"
	mkdir -p "$logs/$srv"
	echo "== bats and torture against $($srv --version | cut -d' ' -f1-3), logs in $logs/$srv/"
done
echo "== $jobs bats files at a time"
i=0
while [ "$i" -lt "$jobs" ]; do
	worker &
	i=$((i + 1))
done
wait
# The tortures one after the other, after the bats files: each keeps both
# cores busy for its SECONDS, and two side by side (or one beside bats
# runs) ran too few sections and faults (some 10 sections a kind, a
# cluster's slot never migrated) to prove anything, and saw their 600 ms
# leases run out under a CPU that others kept busy.
for srv in $servers; do
	case $srv:$servers in
	redis-server:*valkey-server) topologies=sentinel ;;
	redis-server:*) topologies="sentinel cluster" ;;
	valkey-server:*) topologies=cluster ;;
	esac
	torture "$srv" "$topologies"
done
status=0
for srv in $servers; do
	for n in $(order) torture; do
		[ -e "$logs/$srv/$n.log" ] || continue
		echo "== $n against $srv"
		cat "$logs/$srv/$n.log"
		[ ! -e "$logs/$srv/$n.failed" ] || {
			echo "== FAILED: $n against $srv"
			status=1
		}
	done
done
for srv in $servers; do
	for n in $(order) torture; do
		[ ! -e "$logs/$srv/$n.failed" ] || echo "== FAILED: $n against $srv"
	done
done
exit $status
