#!/bin/bash
# torture/edges.sh: two operator's edges, each as workers beside an
# injector, for SECONDS each, against a private server.
#  nested: workers take turns with `exec -t 3s x`, and each section
#    runs a nested `exec x` or `lock x` (which re-enter through
#    REDLOCK_HELD: a lock's hold outlives the section), while
#    the injector runs `unlock --force x` every few hundred ms. A
#    violation: a nested call that ran with a fence other than its
#    exec's (it took x afresh), two sections of different fences that
#    overlap while both their execs exited 0 (a double holder reported as
#    success: the forced-away one must exit 79), or one fence given to
#    two execs.
#  supersede: workers wait with `exec --supersede --waiter-timeout 300ms`
#    behind a holder that comes back again and again, while the injector
#    stops (SIGSTOP) a waiting one and what it started for 1.2 to 2.5 s,
#    past its record's life (3 x 300 ms). A violation: an owner that the
#    history shows superseded and then acquiring.
# It prints what it counted and exits 1 on any violation, or when a part
# saw too few of its faults to prove anything.
# usage: test/torture/edges.sh path/to/redlock [SECONDS]
set -u
rl=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
seconds=${2:-15}
dir=$(mktemp -d)
server=
cleanup() {
	touch "$dir/stop"
	kill $(jobs -p) 2>/dev/null
	[ -z "$server" ] || kill -CONT $(pgrep -f -- "--label edge-") 2>/dev/null
	wait 2>/dev/null
	[ -z "$server" ] || kill -9 "$server" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

for _ in $(seq 1 20); do
	port=$((20000 + RANDOM % 12000))
	redis-cli -p "$port" ping >/dev/null 2>&1 && continue
	"${REDLOCK_TEST_SERVER:-redis-server}" --port "$port" --bind 127.0.0.1 \
	    --save '' --appendonly no --dir "$dir" >/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 1 250); do
		redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && break
		sleep 0.02
	done
	if redis-cli -p "$port" info server 2>/dev/null | grep -q "^process_id:$pid"; then
		server=$pid
		break
	fi
	kill "$pid" 2>/dev/null
done
[ -n "$server" ] || { echo "edges: cannot start a server" >&2; exit 1; }
export REDLOCK_URL=redis://127.0.0.1:$port REDLOCK_HISTORY=100000
now_ns() { echo "${EPOCHREALTIME/./}000"; }
export -f now_ns
export rl dir

# The nested part's section: "sec EXEC_PID FENCE START END NESTED_STATUS
# NESTED_FENCE", END when it ended or was stopped (SIGTERM: lost).
section='
exec_pid=$(cut -d" " -f4 /proc/$PPID/stat)
t0=$(now_ns) st=killed nf=none
trap "echo \"sec $exec_pid $REDLOCK_FENCE $t0 \$(now_ns) lost none\" >>$dir/nested.log; exit 5" TERM
sleep 0.0$((RANDOM % 9 + 1)) & wait $!
if [ $((RANDOM % 2)) = 0 ]; then
	nf=$("$rl" exec x -- sh -c "echo \$REDLOCK_FENCE" 2>/dev/null)
	st=$?
else
	"$rl" lock -q x >/dev/null 2>&1
	st=$? nf=$REDLOCK_FENCE
fi
sleep 0.0$((RANDOM % 9 + 1)) & wait $!
echo "sec $exec_pid $REDLOCK_FENCE $t0 $(now_ns) $st ${nf:-none}" >>$dir/nested.log
'
nested_worker() {
	local p st
	while [ ! -e "$dir/stop" ]; do
		"$rl" exec -q -t 3s -w 5s x -- bash -c "$section" 2>/dev/null &
		p=$!
		wait "$p"
		st=$?
		echo "exit $p $st" >>"$dir/nested.log"
	done
}
nested_part() {
	local i pids=()
	for i in 1 2 3; do
		nested_worker &
		pids+=($!)
	done
	local end=$((SECONDS + seconds)) forced=0
	while [ $SECONDS -lt $end ]; do
		sleep 0.$((RANDOM % 5 + 2))
		"$rl" unlock --force x >/dev/null 2>&1 && forced=$((forced + 1))
	done
	touch "$dir/stop"
	wait "${pids[@]}"
	rm -f "$dir/stop"
	echo "nested: $forced holds forced away"
	awk -v forced="$forced" '
	$1 == "exit" { st[$2] = $3; next }
	$1 == "sec" {
		n++; pid[n] = $2; f[n] = $3; a[n] = $4; b[n] = $5
		if ($6 == 0 && $7 != $3) {
			print "violation: nested call of fence " $3 " ran with fence " $7
			bad++
		}
		if ($6 == 79) gone++
		if (($3 in owner) && owner[$3] != $2) {
			print "violation: fence " $3 " given to two execs"
			bad++
		}
		owner[$3] = $2
	}
	END {
		for (i = 1; i <= n; i++)
			for (j = i + 1; j <= n; j++) {
				if (f[i] == f[j] || a[i] >= b[j] || a[j] >= b[i])
					continue
				overlaps++
				if (st[pid[i]] == 0 && st[pid[j]] == 0) {
					print "violation: fences " f[i] " and " f[j] " overlap, both execs exited 0"
					bad++
				}
			}
		printf "nested: %d sections, %d nested calls found the hold gone (79), %d overlaps after a force, %d violations\n", n, gone, overlaps, bad
		if (bad > 0 || n < 10 || forced < 3) exit 1
	}' "$dir/nested.log"
}

supersede_worker() {
	local i=0 s
	while [ ! -e "$dir/stop" ]; do
		i=$((i + 1))
		s=0
		"$rl" exec -q --supersede -w 20s --waiter-timeout 300ms \
		    --label "edge-$1-$i" x -- true 2>>"$dir/supersede.err" || s=$?
		echo "$s" >>"$dir/supersede.exits"
		sleep 0.0$((RANDOM % 9 + 1))
	done
}
supersede_part() {
	local i end=$((SECONDS + seconds)) stops=0 p kids pids=()
	( while [ ! -e "$dir/stop" ]; do
		"$rl" exec -q -t 5s -w 20s y -- true 2>/dev/null
		"$rl" exec -q -t 5s -w 20s x -- sleep 1.$((RANDOM % 5)) 2>/dev/null
	done ) &
	pids+=($!)
	for i in 1 2 3 4; do
		supersede_worker "$i" &
		pids+=($!)
	done
	while [ $SECONDS -lt $end ]; do
		sleep 0.$((RANDOM % 5 + 3))
		p=$(pgrep -f -- "--label edge-" | shuf -n 1)
		[ -n "$p" ] || continue
		kids=$(cat /proc/"$p"/task/*/children 2>/dev/null)
		# shellcheck disable=SC2086
		kill -STOP "$p" $kids 2>/dev/null || continue
		stops=$((stops + 1))
		sleep "1.$((RANDOM % 14 + 2))"
		# shellcheck disable=SC2086
		kill -CONT "$p" $kids 2>/dev/null
	done
	touch "$dir/stop"
	wait "${pids[@]}"
	"$rl" log --json -n 100000 x | awk -v stops="$stops" '
	{
		owner = $0; sub(/.*"owner":"/, "", owner); sub(/".*/, "", owner)
		ev = $0; sub(/.*"event":"/, "", ev); sub(/".*/, "", ev)
	}
	ev == "superseded" { sup[owner] = 1; nsup++ }
	ev == "acquired" { acq++; if (owner in sup) { print "violation: " owner " acquired after it was superseded"; bad++ } }
	END {
		printf "supersede: %d stops, %d superseded, %d acquired, %d violations\n", stops, nsup, acq, bad
		if (bad > 0 || stops < 3 || nsup < 3) exit 1
	}'
	local s=$?
	echo "supersede: $(grep -c 'was stopped for longer than its place lasts' "$dir/supersede.err") waiters gave up having lost their record"
	# Exits: 0 (ran), 80 (superseded, or its record lost: never 75,
	# which is busy or timed out), at least one 80 per superseded
	# event of the history; 75 only for a -w 20s that ran out.
	"$rl" log --json -n 100000 x | grep -c '"event":"superseded"' |
	    awk -v f="$dir/supersede.exits" '
	{ nsup = $1 }
	END {
		while ((getline st < f) > 0) { n[st]++; all++ }
		for (st in n) if (st != 0 && st != 75 && st != 80) { print "violation: a --supersede waiter exited " st " (" n[st] " times)"; bad++ }
		printf "supersede exits: %d runs, %d ran (0), %d superseded (80), %d timed out (75)\n", all, n[0], n[80], n[75]
		if (n[80] < nsup) { print "violation: " nsup " superseded in the history, but " n[80] + 0 " exits 80"; bad++ }
		exit (bad > 0)
	}' || s=1
	return $s
}

st=0
nested_part || st=1
supersede_part || st=1
exit $st
