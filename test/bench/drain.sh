#!/bin/bash
# test/bench/drain.sh: draining 10, 100 and 1000 waiters of one name, plain
# and --fair: N `exec -w` waiters behind a held lock, all waiting, then one
# release; each takes the lock in turn and runs true.
# usage: test/bench/drain.sh path/to/redlock PORT
# Prints one markdown table row per N: for plain and for --fair waiters,
# the script calls (EVALSHA and EVAL, from INFO commandstats) from the
# release to the last waiter's end, per handoff, the server's time in them,
# and the wall time of the drain.
set -eu
rl=$1
port=$2
export REDLOCK_URL=redis://127.0.0.1:$port
cli() { redis-cli -p "$port" "$@"; }
# Clients subscribed to something: one per waiting redlock.
subs() { cli client list | grep -c -E ' (s?sub)=[1-9]' || :; }

drain() {	# drain N OPTS...: "calls usec wall_ms"
	local n=$1 tok i t0 c u
	local -a pids=()
	shift
	cli del d >/dev/null
	tok=$("$rl" lock -t 600s d)
	for i in $(seq 1 "$n"); do
		"$rl" exec -q -w 600s "$@" d -- true &
		pids+=($!)
	done
	until [ "$(subs)" -ge "$n" ]; do sleep 0.05; done
	# Each waiter tries once more when its subscription is confirmed.
	sleep 1
	cli config resetstat >/dev/null
	t0=$(date +%s%N)
	"$rl" unlock --owner "$tok" d
	wait "${pids[@]}"
	read -r c u < <(cli info commandstats | awk -F'[:,=]' '
	    /^cmdstat_eval(sha)?:/ { c += $3; u += $5 }
	    END { printf "%d %d\n", c, u }')
	echo "$c $u $((($(date +%s%N) - t0) / 1000000))"
}

for n in 10 100 1000; do
	read -r pc pu pw < <(drain "$n")
	read -r fc fu fw < <(drain "$n" --fair)
	awk -v n="$n" -v pc="$pc" -v pu="$pu" -v pw="$pw" -v fc="$fc" \
	    -v fu="$fu" -v fw="$fw" 'BEGIN {
		printf "| %d | %d (%.2f per handoff) | %.1f ms | %.2f s | %d (%.2f) | %.1f ms | %.2f s |\n",
		    n, pc, pc / n, pu / 1000, pw / 1000, fc, fc / n, fu / 1000,
		    fw / 1000 }'
done
