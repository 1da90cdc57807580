#!/bin/bash
# demo.sh: two contenders for one lock on a private redis-server.
# usage: tools/demo.sh path/to/redlock
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
say 'tok=$(redlock lock -t 1m backup)      # job A takes the lock'
tok=$(rl lock -t 1m backup)
echo "$tok"
say 'redlock status backup'
rl status backup || true
say 'redlock lock -n backup                  # job B: busy, exit 75'
rl lock -n backup 2>&1 || echo "(exit $?)"
say 'redlock lock -w 10s backup &            # job C waits for the lock'
start=$(date +%s%N)
rl lock -w 10s backup >"$dir/c" &
waiter=$!
until [ "$(redis-cli -p "$port" pubsub numsub 'redisson_lock__channel:{backup}' | sed -n 2p)" = 1 ]; do
	sleep 0.01
done
sleep 1
say 'redlock unlock --owner "$tok" backup   # A is done; C is woken at once'
t0=$(date +%s%N)
rl unlock --owner "$tok" backup
wait "$waiter"
t1=$(date +%s%N)
echo "C acquired $(( (t1 - t0) / 1000000 )) ms after A's unlock began (waited $(( (t1 - start) / 1000000 )) ms in all)"
say 'redlock status --json backup'
rl status --json backup
say 'redlock unlock --owner "$(cat c)" backup && redlock status backup'
rl unlock --owner "$(cat "$dir/c")" backup
rl status backup || echo "(exit $?: free)"
echo
echo "demo done; redis-server stopped"
