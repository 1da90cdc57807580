#!/bin/bash
# torture/run.sh: workers take turns with `redlock exec` on three names, one
# per kind of lock: an exclusive lock, a semaphore (--limit) and a
# read-write lock (-s and --write), while an injector kill -9's holders,
# pauses them past their lease, deletes their keys behind their backs and
# kill -9's the server (appendonly, fsync always) and starts it again. The
# critical sections write through a fenced store per name; the checker
# proves that no accepted sections break the kind's rule (lock: one at a
# time; permits: at most LIMIT at once; rwlock: a writer alone, readers
# together), and that every overlap in time is one that a fault explains.
# usage: test/torture/run.sh path/to/redlock [SECONDS]
# With TORTURE_KEEP set, the logs are kept (the last line names them).
# The kinds share the SECONDS. Each fault must hit each kind at least
# SECONDS/30 times (at least once), and the server restart happen as often.
set -u
rl=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
seconds=${2:-30}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
kinds="lock permits rwlock"
ttl=600ms
limit=2
server=
stopped=
cleanup() {
	local k
	for k in $kinds; do touch "$dir/$k/stop"; done
	[ -n "$stopped" ] && kill -CONT $stopped 2>/dev/null
	[ -n "$server" ] && kill -9 "$server" 2>/dev/null
	wait 2>/dev/null
	if [ -n "${TORTURE_KEEP-}" ]; then
		echo "torture: the logs are in $dir"
	else
		rm -rf "$dir"
	fi
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

# Each kind has a name, workers and a fenced store of its own, in
# $dir/KIND. Each worker takes turns, each turn a critical section through
# the store; TORTURE_KIND tells the store how the section holds the name.
# workers KIND TORTURE_KIND COUNT [EXEC OPTIONS]: start COUNT workers.
declare -A name=([lock]=torture [permits]=torture-permits [rwlock]=torture-rw)
workers() {
	local k=$1 tk=$2 n=$3
	shift 3
	for _ in $(seq 1 "$n"); do
		TORTURE_KIND=$tk "$here/worker" "$dir/$k" "$rl" exec "$@" \
		    -w 5s --ttl "$ttl" --kill-after 200ms "${name[$k]}" \
		    2>>"$dir/$k/workers.err" &
	done
}
for k in $kinds; do mkdir "$dir/$k"; touch "$dir/$k/store.log" "$dir/$k/hits"; done
workers lock lock 4
workers permits "permits:$limit" 4 --limit "$limit"
workers rwlock read 3 -s
workers rwlock write 2 --write

# The injector. Faults come in rounds: each round every fault on every
# kind, and as many server restarts as kinds, in a random order. A fault
# on a holder hits one holder (a permit, a reader, a writer); deleting
# the keys robs every holder of the name. The owners hit go to
# $dir/KIND/hits, one per holder, for the checker; $dir/faults gets
# "KIND FAULT" per fault ("restart" for a restart).
# holder KIND: "pid owner" of a holder of KIND's name, at random.
holder() {
	"$rl" status --json "${name[$1]}" 2>/dev/null | jq -r '
		[., .permits[]?, .readers[]? | select(.pid != null)
		 | "\(.pid) \(.owner)"] | .[]' | shuf -n 1
}
# hit KIND OWNER...: note the owners as hit, by their UUID's hex digits.
hit() {
	local k=$1 o
	shift
	for o in "$@"; do
		o=${o%%:*}
		echo "${o//-/}" >>"$dir/$k/hits"
	done
}
# rob KIND: delete the keys that hold KIND's name, in one script that
# answers the owners that held it, one a line.
rob() {
	local n=${name[$1]}
	case $1 in
	lock)	cli eval "local o = redis.call('HKEYS', KEYS[1])
		    redis.call('DEL', KEYS[1]) return o" 1 "$n" ;;
	permits) cli eval "local t = redis.call('TIME')
		    local now = t[1] * 1000 + math.floor(t[2] / 1000)
		    local o = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. now, '+inf')
		    redis.call('DEL', KEYS[1], KEYS[2]) return o" \
		    2 "$n" "{$n}:timeout" ;;
	rwlock)	cli eval "local o = {}
		    for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
		      if f ~= 'mode' then o[#o + 1] = f end
		    end
		    redis.call('DEL', KEYS[1]) return o" 1 "$n" ;;
	esac 2>/dev/null
}
# fault KIND FAULT: inject one; fails when there was nothing to hit.
fault() {
	local k=$1 p o w c robbed
	case $2 in
	kill9)	read -r p o < <(holder "$k")
		[ -n "${p-}" ] && kill -9 "$p" 2>/dev/null || return 1
		hit "$k" "$o" ;;
	stop)	read -r p o < <(holder "$k")
		[ -n "${p-}" ] || return 1
		w=$(pgrep -P "$p" | head -n 1)
		c=$([ -n "$w" ] && pgrep -P "$w" | head -n 1)
		stopped="$p $w ${c:+-$c}"
		kill -STOP $stopped 2>/dev/null || { stopped=; return 1; }
		hit "$k" "$o"
		sleep 0.9	# past the 600ms lease
		kill -CONT ${c:+-$c} $w "$p" 2>/dev/null
		stopped= ;;
	del)	robbed=$(rob "$k")
		[ -n "$robbed" ] || return 1
		hit "$k" $robbed ;;
	restart)
		kill -9 "$server"
		wait "$server" 2>/dev/null
		server=
		start_server || { echo "torture: restart failed" >&2; exit 1; }
		echo restart >>"$dir/faults"
		echo "$(date +%s%N) restart" >>"$dir/faults.log"
		return 0 ;;
	esac
	echo "$k $2" >>"$dir/faults"
	echo "$(date +%s%N) $k $2" ${o-} ${robbed-} >>"$dir/faults.log"
}
end=$(($(date +%s) + seconds))
round=()
while [ "$(date +%s)" -lt "$end" ]; do
	if [ ${#round[@]} = 0 ]; then
		mapfile -t round < <({
			for k in $kinds; do
				printf '%s\n' "$k kill9" "$k stop" "$k del" "- restart"
			done; } | shuf)
		tries=0
	fi
	sleep "0.$((RANDOM % 4 + 2))"
	# A fault with nothing to hit is tried again, 5 times at most.
	if fault ${round[0]} || [ $((tries += 1)) -ge 5 ]; then
		round=("${round[@]:1}")
		tries=0
	fi
done
for k in $kinds; do touch "$dir/$k/stop"; done
wait $(jobs -p | grep -v "^$server\$") 2>/dev/null

# The checker (check.sh), per kind: accepted sections must keep the kind's
# rule and their fencing tokens must rise (violations). A section that
# begins while one it may not run beside is still open displaces that one
# (preempted). Only a fault may cause that: a holder killed, paused past
# its lease or robbed of its keys (hits). A holder whose watchdog gave up
# the lease while the server was down terminates its section, which says
# so (abort) before the lease can run out: a restart explains nothing.
# Each displacement must involve a section of a holder hit (unexplained
# otherwise), and there must be no more of them than holders hit: a kind
# that let too many holders in shows there even though the store, which
# refuses the stale holder's begin or end, stays consistent. Overlaps
# that the store refused are the faults' doing and are only counted.
min=$((seconds / 30))
[ "$min" -ge 1 ] || min=1
echo "torture: $seconds s, ttl $ttl; lock: 4 workers; permits: 4 workers, --limit $limit; rwlock: 3 -s and 2 --write workers"
echo "faults:   $(sort "$dir/faults" | uniq -c | awk '{printf "%s%s: %s  ", $2, $3 == "" ? "" : " " $3, $1}')"
status=0
for k in $kinds; do
	d=$dir/$k
	violations=$("$here/check.sh" violations "$d/store.log")
	accepted=$("$here/check.sh" accepted "$d/store.log")
	preempted=$("$here/check.sh" preempted "$d/store.log")
	unexplained=$("$here/check.sh" unexplained "$d/store.log" "$d/hits")
	hits=$(wc -l <"$d/hits")
	nv=$(printf '%s' "$violations" | grep -c .)
	nu=$(printf '%s' "$unexplained" | grep -c .)
	excess=$((preempted - hits))
	[ "$excess" -gt 0 ] || excess=0
	echo "$k: $(grep -c -e '^begin' -e '^reject-begin' "$d/store.log") sections, $((nv + nu + excess)) violations ($nv accepted, $nu unexplained overlaps, $excess preemptions beyond the holders hit)"
	echo "  outcomes: $(sort -n "$d/outcomes" | uniq -c | awk '{printf "exit %s: %s  ", $2, $1}')"
	echo "  store:    $accepted sections accepted, $(grep -c '^reject-begin' "$d/store.log") begins and $(grep -c '^reject-end' "$d/store.log") ends refused"
	echo "            $preempted sections preempted, $hits holders hit"
	if [ "$excess" -gt 0 ]; then
		echo "torture: $k: more preemptions than holders hit: too many holders at once"
		status=1
	fi
	# The first 10 of each, with how many there were.
	for v in "$unexplained" "$violations"; do
		[ -n "$v" ] || continue
		echo "$v" | sed -n "1,10s/^/torture: $k: /p"
		[ "$(echo "$v" | wc -l)" -le 10 ] ||
		    echo "torture: $k: ... $(echo "$v" | wc -l) in all"
		status=1
	done
	for f in kill9 stop del; do
		n=$(grep -c "^$k $f\$" "$dir/faults")
		if [ "$n" -lt "$min" ]; then
			echo "torture: $k: only $n $f faults (want $min)"
			status=1
		fi
	done
	[ "$accepted" -gt 0 ] || { echo "torture: $k: no section was accepted"; status=1; }
	if grep -q -e 'AddressSanitizer' -e 'runtime error' "$d/stderr"; then
		grep -m 5 -e 'AddressSanitizer' -e 'runtime error' "$d/stderr"
		status=1
	fi
done
n=$(grep -c '^restart$' "$dir/faults")
if [ "$n" -lt "$min" ]; then
	echo "torture: only $n restart faults (want $min)"
	status=1
fi
echo "$( [ $status = 0 ] && echo "0 violations: passed" || echo "FAILED")"
exit $status
