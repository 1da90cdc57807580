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
# Each job prints one line as it ends (ok, FAILED, TIMED OUT, and its
# seconds), so that a run shows where its time goes while it goes.
# usage: test/suites.sh path/to/redlock LOGDIR [RELEASE]
# Settings: SUITE_JOBS (6), SUITE_JOB_LIMIT (900 s a job), SUITE_DEADLINE
# (2700 s to begin every bats job), SUITE_SERVERS (the servers to run
# against; redis-server and valkey-server when it is installed).
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
# minhold 49 on a quiet box, then 46 and less; churn, four runs of 20 s
# under chaos, some 100), so that no long file starts last; files not
# named here come after them, in name order.
longest="sentinel redisson churn herd redlock redisson_matrix shared lock cluster \
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

# Every job is bounded: a bats file or a torture still running after
# SUITE_JOB_LIMIT seconds (900 unless told: the longest file takes some
# 200 s on a quiet 2-core machine, 400 beside busy loops) is failed, with
# what it was running then, and killed, so that one hang costs a file,
# not the whole run, and says where it was. bats' own BATS_TEST_TIMEOUT
# (helpers.bash) ends a test that runs too long; this ends what that
# cannot: a setup_file, a teardown, or bats waiting at the end of a file
# for a process that holds its output open.
limit=${SUITE_JOB_LIMIT:-900}
case $logs in /*) ;; *) logs=$(pwd -P)/$logs ;; esac

# bounded LOG CMD...: CMD in a session of its own, its output added to
# LOG; after $limit seconds, the session's processes are listed in LOG,
# sent SIGTERM, and SIGKILL 10 s later. Then whatever CMD started and is
# still running, in that session or having left it (a process of a
# test's that made a session of its own, as the keepalive of `lock
# --keepalive` does, holding bats' output open), is named there and
# killed: each is found by SUITE_JOB in its environment, which only CMD
# and what it starts have. CMD's exit status, 124 when it was ended.
bounded() {
	local log=$1 pid timer st
	shift
	SUITE_JOB=$log setsid "$@" >>"$log" 2>&1 &
	pid=$!
	# The timer: a session of its own too, so that one SIGKILL of its
	# group ends it and its sleep, whenever it comes (a trap would leave
	# the sleep running, holding the output, if the signal came before
	# the shell knew the sleep's pid).
	setsid sh -c '
	    sleep "$1"
	    echo "== timed out after $1 s, still running:"
	    ps -o pid,ppid,pgid,stat,etime,args -s "$2"
	    touch "$3.timeout"
	    kill -15 "-$2" 2>/dev/null
	    sleep 10
	    kill -9 "-$2" 2>/dev/null' timer "$limit" "$pid" "$log" \
	    </dev/null >>"$log" 2>&1 &
	timer=$!
	wait "$pid" 2>/dev/null
	st=$?
	# Ended in time: the timer goes (its shell first, so that it starts
	# nothing more, then its group). Else it ends after its SIGKILL.
	[ -e "$log.timeout" ] || kill -9 "$timer" "-$timer" 2>/dev/null
	wait "$timer" 2>/dev/null
	[ ! -e "$log.timeout" ] || st=124
	leftovers "$log"
	return "$st"
}

# leftovers LOG: name in LOG and SIGKILL each process whose environment
# has SUITE_JOB=LOG.
leftovers() {
	local f pid pids=
	for f in $(grep -lsxz "SUITE_JOB=$1" /proc/[0-9]*/environ); do
		pid=${f#/proc/}
		pids="$pids ${pid%%/*}"
	done
	[ -n "$pids" ] || return 0
	# shellcheck disable=SC2086
	{
		echo "== left running after the job, killed:"
		ps -o pid,ppid,pgid,stat,etime,args -p "$(echo $pids | tr ' ' ,)"
	} >>"$1" 2>&1
	kill -9 $pids 2>/dev/null
}

# done_line SERVER JOB SECONDS: one line as each job ends, so that a run
# shows its progress (the logs are shown whole only at the end).
done_line() {
	local how=ok
	[ ! -e "$logs/$1/$2.failed" ] || how=FAILED
	[ ! -e "$logs/$1/$2.log.timeout" ] || how="TIMED OUT"
	echo "== $2 against $1: $how in $3 s"
}

# bats_job SERVER FILE: FILE's tests against SERVER, its output in
# LOGDIR/SERVER/FILE.log, a failure marked by LOGDIR/SERVER/FILE.failed.
bats_job() {
	local t0
	t0=$(date +%s)
	: >"$logs/$1/$2.log"
	(
		[ "$1" = redis-server ] ||
		    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
		export REDLOCK_TEST_SERVER=$1 REDLOCK_BIN=$rl
		bounded "$logs/$1/$2.log" \
		    bats --timing --print-output-on-failure "test/bats/$2.bats" ||
		    touch "$logs/$1/$2.failed"
	)
	done_line "$1" "$2" $(($(date +%s) - t0))
}

# worker: take the jobs in turn (a job is taken by making its claim
# directory, which only one worker can) and run those it took. A job not
# begun SUITE_DEADLINE seconds (2700 unless told) after the first is
# failed, not run: with hangs each ended by $limit, the whole of make test
# still ends within CI's 90 minutes, and says what it did not run.
worker() {
	local n srv
	for n in $(order); do
		for srv in $servers; do
			case " $agnostic " in
			*" $n "*) [ "$srv" = redis-server ] || continue ;;
			esac
			mkdir "$logs/$srv/$n.claim" 2>/dev/null || continue
			if [ "$(date +%s)" -ge "$deadline" ]; then
				echo "== not run: the suite's $((deadline - start)) s had gone by" \
				    >"$logs/$srv/$n.log"
				touch "$logs/$srv/$n.failed"
				done_line "$srv" "$n" 0
				continue
			fi
			bats_job "$srv" "$n"
		done
	done
}

# torture SERVER TOPOLOGIES: the torture with the failovers of
# TOPOLOGIES, against SERVER; its log is LOGDIR/SERVER/torture.log.
torture() {
	local t0
	t0=$(date +%s)
	: >"$logs/$1/torture.log"
	(
		[ "$1" = redis-server ] ||
		    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
		export REDLOCK_TEST_SERVER=$1 TORTURE_TOPOLOGIES=$2
		bounded "$logs/$1/torture.log" test/torture/run.sh "$rl" 30 ||
		    touch "$logs/$1/torture.failed"
		# An operator's edges: unlock --force beside nested calls,
		# --supersede waiters stopped past their record's life.
		bounded "$logs/$1/torture.log" test/torture/edges.sh "$rl" 15 ||
		    touch "$logs/$1/torture.failed"
	)
	done_line "$1" torture $(($(date +%s) - t0))
}

start=$(date +%s)
deadline=$((start + ${SUITE_DEADLINE:-2700}))
servers=redis-server
if [ -n "${SUITE_SERVERS-}" ]; then
	servers=$SUITE_SERVERS
elif command -v valkey-server >/dev/null; then
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
		[ ! -e "$logs/$srv/$n.log.timeout" ] ||
		    echo "== (it ran out of its $limit s)"
	done
done
exit $status
