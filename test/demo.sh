#!/bin/bash
# demo.sh: contending exec runs, status, and a fair queue on a private
# redis-server.
# usage: test/demo.sh path/to/redlock
set -eu
rl_bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
dir=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

for _ in $(seq 1 20); do
	port=$((20000 + RANDOM % 12000))
	redis-cli -p "$port" ping >/dev/null 2>&1 && continue
	redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
	    --dir "$dir" --logfile "$dir/log" >/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 1 100); do
		redis-cli -p "$port" info server 2>/dev/null |
		    grep -q "^process_id:$pid" && break 2
		sleep 0.02
	done
	kill "$pid" 2>/dev/null || true
	pid=
done
[ -n "$pid" ] || { echo "demo: cannot start redis-server" >&2; exit 1; }
export REDLOCK_URL=redis://127.0.0.1:$port
if [ -t 1 ]; then bold=$(printf '\033[1m') off=$(printf '\033[0m'); else bold= off=; fi
say() { printf '\n%s$ %s%s\n' "$bold" "$*" "$off"; }
rl() { "$rl_bin" "$@"; }

echo "redis-server on 127.0.0.1:$port (private, in $dir)"
numsub() {
	redis-cli -p "$port" pubsub numsub "$1" | sed -n 2p
}

say 'redlock exec backup -- sh -c "echo A: backing up; sleep 2" &    # job A'
rl exec backup -- sh -c 'echo "A: backing up"; sleep 2' &
a=$!
until [ "$(redis-cli -p "$port" exists backup)" = 1 ]; do sleep 0.01; done
say 'redlock exec -n backup -- echo never        # job B: busy, gives up (75)'
rl exec -n backup -- echo never 2>&1 || echo "(exit $?)"
say 'redlock exec -w 10s backup -- echo C: my turn &   # job C waits'
rl exec -w 10s backup -- sh -c 'echo "C: my turn"' &
c=$!
until [ "$(numsub 'redisson_lock__channel:{backup}')" = 1 ]; do sleep 0.01; done
say 'redlock status backup'
rl status backup || true
t0=$(date +%s%N)
wait "$a"
wait "$c"
echo "(A ended; C was woken by the release, not by polling)"

say 'redlock lock -t 1m deploy; three fair waiters queue up: redlock exec --fair ...'
tok=$(rl lock -t 1m deploy)
waiters=
for who in 1 2 3; do
	rl exec --fair -w 30s deploy -- sh -c "echo deploy $who" &
	waiters="$waiters $!"
	until [ "$(redis-cli -p "$port" llen 'redisson_lock_queue:{deploy}')" = "$who" ]; do
		sleep 0.01
	done
done
say 'redlock queue deploy'
rl queue deploy
say 'redlock unlock --owner "$tok" deploy       # they run in arrival order'
rl unlock --owner "$tok" deploy
for w in $waiters; do wait "$w"; done
say 'redlock status deploy'
rl status deploy || echo "(exit $?: free)"
echo
echo "demo done; redis-server stopped"
