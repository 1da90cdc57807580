#!/bin/bash
# test/bench/fair.sh: fair handoff through queues of 10, 100 and 1000 waiters.
# usage: test/bench/fair.sh path/to/redlock PORT
# Prints one markdown table row per queue length: the median and p90 gap
# from one COMMAND's end to the next one's start, and the server's
# usec_per_call for EVALSHA (acquire attempts and heartbeats with the whole
# queue waiting, then releases) from INFO commandstats.
set -eu
rl=$1
port=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export REDLOCK_URL=redis://127.0.0.1:$port
cli() { redis-cli -p "$port" "$@"; }

for n in 10 100 1000; do
	cli del fair >/dev/null
	rm -f "$dir"/*.t
	tok=$("$rl" lock -t 300s fair)
	for i in $(seq 1 "$n"); do
		"$rl" exec --fair -w 600s fair -- \
		    bash -c 'echo "$EPOCHREALTIME" >"$0/$1.s.t"
			echo "$EPOCHREALTIME" >"$0/$1.e.t"' \
		    "$dir" "$i" &
	done
	until [ "$(cli llen 'redisson_lock_queue:{fair}')" = "$n" ]; do
		sleep 0.05
	done
	cli config resetstat >/dev/null
	# The busy path every waiter's heartbeat takes, with N queued.
	for _ in $(seq 1 200); do
		"$rl" lock --fair -n -q fair >/dev/null || :
	done
	busy=$(cli info commandstats | sed -n 's/^cmdstat_evalsha:.*usec_per_call=\([0-9.]*\).*/\1/p')
	cli config resetstat >/dev/null
	"$rl" unlock --owner "$tok" fair
	wait
	call=$(cli info commandstats | sed -n 's/^cmdstat_evalsha:.*usec_per_call=\([0-9.]*\).*/\1/p')
	# Gaps between consecutive COMMANDs, in the order they ran.
	for f in "$dir"/*.s.t; do
		i=${f##*/}
		i=${i%.s.t}
		echo "$(cat "$f") $(cat "$dir/$i.e.t")"
	done | awk '{ split($1, s, "."); split($2, e, ".")
	    printf "%.0f %.0f\n", s[1] * 1000000 + s[2], e[1] * 1000000 + e[2] }' |
	    sort -n | awk 'NR > 1 { printf "%.0f\n", $1 - prev } { prev = $2 }' |
	    sort -n >"$dir/gaps"
	gm=$(awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }' "$dir/gaps")
	gp=$(awk '{ v[NR] = $1 } END { print v[int(NR * 0.99 + 0.999)] }' "$dir/gaps")
	echo "| $n | ${gm} us | ${gp} us | ${busy} us | ${call} us |"
done
