#!/bin/bash
# torture/run.sh: workers take turns with `redlock exec` on one lock while
# an injector kill -9's holders, pauses them past their lease, deletes the
# lock behind their backs and kill -9's the server (appendonly, fsync
# always) and starts it again. Critical sections write through a fenced
# store; the checker proves that no two accepted sections overlap.
# usage: test/torture/run.sh path/to/redlock [SECONDS]
# Each kind of fault must happen at least SECONDS/30 times (at least once).
set -u
rl=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
seconds=${2:-30}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
workers=4
ttl=600ms
server=
cleanup() {
	touch "$dir/stop"
	pkill -CONT -f "exec -w 5s --ttl $ttl --kill-after 200ms torture" 2>/dev/null
	[ -n "$server" ] && kill -9 "$server" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

start_server() {
	local pid
	"${REDLOCK_TEST_SERVER:-redis-server}" --port "$port" --bind 127.0.0.1 --save '' \
	    --appendonly yes --appendfsync always --dir "$dir" \
	    --logfile "$dir/redis.log" >/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 1 250); do
		if redis-cli -p "$port" info server 2>/dev/null |
		    grep -q "^process_id:$pid"; then
			server=$pid
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.02
	done
	return 1
}
for _ in $(seq 1 20); do
	port=$((20000 + RANDOM % 12000))
	redis-cli -p "$port" ping >/dev/null 2>&1 && continue
	start_server && break
done
[ -n "$server" ] || { echo "torture: cannot start ${REDLOCK_TEST_SERVER:-redis-server}" >&2; exit 1; }
export REDLOCK_URL=redis://127.0.0.1:$port
cli() { redis-cli -p "$port" "$@"; }

# Each worker takes turns, each turn a critical section through the store.
for _ in $(seq 1 "$workers"); do
	"$here/worker" "$dir" "$rl" exec -w 5s --ttl "$ttl" \
	    --kill-after 200ms torture 2>>"$dir/workers.err" &
done

# The injector.
holder_pid() {
	"$rl" status --json torture 2>/dev/null | jq -r '.pid // empty'
}
end=$(($(date +%s) + seconds))
while [ "$(date +%s)" -lt "$end" ]; do
	sleep "0.$((RANDOM % 4 + 2))"
	p=$(holder_pid)
	case $((RANDOM % 4)) in
	0)	[ -n "$p" ] || continue
		kill -9 "$p" 2>/dev/null && echo kill9 >>"$dir/faults" ;;
	1)	[ -n "$p" ] || continue
		w=$(pgrep -P "$p" | head -n 1)
		c=$([ -n "$w" ] && pgrep -P "$w" | head -n 1)
		kill -STOP "$p" $w ${c:+-$c} 2>/dev/null || continue
		echo stop >>"$dir/faults"
		sleep 0.9	# past the 600ms lease
		kill -CONT ${c:+-$c} $w "$p" 2>/dev/null ;;
	2)	[ "$(cli del torture 2>/dev/null)" = 1 ] &&
		    echo del >>"$dir/faults" ;;
	3)	kill -9 "$server"
		wait "$server" 2>/dev/null
		server=
		start_server || { echo "torture: restart failed" >&2; exit 1; }
		echo restart >>"$dir/faults" ;;
	esac
done
touch "$dir/stop"
wait $(jobs -p | grep -v "^$server\$") 2>/dev/null

# The checker (check.sh): accepted sections sorted by their begin must not
# overlap, and their fencing tokens must rise in that order. A section
# that begins while an earlier one is still open preempts it: only a fault
# (a holder killed, paused or robbed of its key) may cause that, once per
# fault. A lock that let two holders in would show there even though the
# fence keeps the store consistent.
violations=$("$here/check.sh" violations "$dir/store.log")
accepted=$("$here/check.sh" accepted "$dir/store.log")
preempted=$("$here/check.sh" preempted "$dir/store.log")
faulted=$(grep -c -e '^kill9$' -e '^stop$' -e '^del$' "$dir/faults")
min=$((seconds / 30))
[ "$min" -ge 1 ] || min=1
echo "torture: $seconds s, $workers workers, ttl $ttl"
echo "faults:   $(sort "$dir/faults" | uniq -c | awk '{printf "%s %s  ", $2, $1}')"
echo "outcomes: $(sort -n "$dir/outcomes" | uniq -c | awk '{printf "exit %s: %s  ", $2, $1}')"
echo "store:    $accepted sections accepted, $(grep -c '^reject-begin' "$dir/store.log") begins and $(grep -c '^reject-end' "$dir/store.log") ends refused"
echo "          $preempted sections preempted, by $faulted holder faults"
status=0
if [ "$preempted" -gt "$faulted" ]; then
	echo "torture: more preemptions than holder faults: two holders at once"
	status=1
fi
if [ -n "$violations" ]; then
	echo "$violations"
	status=1
fi
for f in kill9 stop del restart; do
	n=$(grep -c "^$f\$" "$dir/faults")
	if [ "$n" -lt "$min" ]; then
		echo "torture: only $n $f faults (want $min)"
		status=1
	fi
done
[ "$accepted" -gt 0 ] || { echo "torture: no section was accepted"; status=1; }
if grep -q -e 'AddressSanitizer' -e 'runtime error' "$dir/stderr"; then
	grep -m 5 -e 'AddressSanitizer' -e 'runtime error' "$dir/stderr"
	status=1
fi
echo "$( [ $status = 0 ] && echo "0 violations: passed" || echo "FAILED")"
exit $status
