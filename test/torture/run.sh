#!/bin/bash
# torture/run.sh: workers take turns with `redlock exec` on four names, one
# per kind of lock: an exclusive lock, a semaphore (--limit, shared with
# a client speaking Redisson's RPermitExpirableSemaphore), a read-write
# lock (-s and --write, shared with clients speaking Redisson's RReadLock
# and RWriteLock), and a lock that redlock workers share with clients
# speaking Redisson's RLock and RFairLock (mixed: plain, --fair and
# --min-hold redlock workers, and redisson-exec workers), and on the first
# three names nested sections too (an exec inside an exec's COMMAND, of
# every pair of kinds that re-enters: see nested), while an injector
# kill -9's holders, pauses them past their lease, deletes their keys
# behind their backs and kill -9's the server (appendonly, fsync always)
# and starts it again. Beside them, failover.sh runs workers through
# failovers on servers of their own (TORTURE_TOPOLOGIES, default
# "sentinel cluster": a Sentinel failover; a cluster's slot migration and
# replica takeover), each with plain workers and with --replicas 1 ones.
# The critical sections write through a fenced store per name; the
# checker proves that no accepted sections break the kind's rule (lock:
# one at a time; permits: at most LIMIT at once; rwlock: a writer alone,
# readers together), and that every overlap in time is one that a fault
# explains. It ends with a summary: per kind of fault, the overlaps the
# store refused and those it would have accepted (must be 0), and for
# the failovers the same with --replicas 1.
# usage: test/torture/run.sh path/to/redlock [SECONDS]
# With TORTURE_KEEP set, the logs are kept (the last line names them).
# The kinds share the SECONDS (the failovers' set-up, some seconds,
# included). Each fault must hit each kind at least SECONDS/30 times (at
# least once), and the server restart happen as often.
set -u
# No LeakSanitizer exit check (see the Makefile): under it an ASan `exec`
# cost three times the CPU, and two tortures side by side on 2 cores ran
# some 10 sections a kind in 30 s, too few for the injector's rounds.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
rl=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
seconds=${2:-30}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
kinds="lock permits rwlock mixed"
topologies=${TORTURE_TOPOLOGIES-sentinel cluster}
# The kinds of failover.sh: each topology's plain group and its other
# one: --replicas 0 through Sentinel (whose default WAITs), --replicas 1
# on the cluster.
alt() { if [ "$1" = sentinel ]; then echo "$1-r0"; else echo "$1-r1"; fi; }
fkinds=$(for t in $topologies; do echo "$t $(alt "$t")"; done)
ttl=600ms
limit=2
server=
stopped=
cleanup() {
	local k
	for k in $kinds; do touch "$dir/$k/stop"; done
	[ -n "$stopped" ] && kill -CONT $stopped 2>/dev/null
	# failover.sh stops its workers and servers when it ends.
	[ -z "${fpids-}" ] || kill $fpids 2>/dev/null
	[ -n "$server" ] && kill -9 "$server" 2>/dev/null
	wait 2>/dev/null
	if [ -n "${TORTURE_KEEP-}" ]; then
		echo "torture: the logs are in $dir"
	else
		rm -rf "$dir"
	fi
}
trap cleanup EXIT

# The box stalls now and then (a loaded 2-core CI runner): a holder that is
# not scheduled can outlive its 600 ms lease before its watchdog's signal
# lands, as a paused one does, with no fault to blame. This monitor asks to
# sleep 20 ms, over and over, and logs every gap of more than 150 ms as
# "START END" in ns; the checker counts an overlap during one as stalled,
# not unexplained, and reports it (the store still refuses the stale one).
stall_monitor() {
	local fd a b
	exec {fd}<> <(:)
	while [ ! -e "$dir/stall.stop" ]; do
		a=${EPOCHREALTIME/./}
		read -r -t 0.02 -u "$fd" _ || :
		b=${EPOCHREALTIME/./}
		[ $((b - a)) -le 150000 ] || echo "${a}000 ${b}000" >>"$dir/stalls"
	done
}
: >"$dir/stalls"
stall_monitor &
monitor=$!

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
declare -A name=([lock]=torture [permits]=torture-permits [rwlock]=torture-rw
    [mixed]=torture-mixed)
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
workers mixed lock 2
workers mixed lock 1 --fair
# One whose hold stays, finished, for 250 ms after its acquisition
# (--min-hold): the others wait for it, and faults may find it so.
workers mixed lock 1 --min-hold 250ms
# Nested sections: a worker on each of three names goes through the pairs
# of kinds that re-enter (the manual's NESTED CALLS), the inner exec run
# as the outer one's COMMAND; the store is told how the chain holds the
# name and checks the inner exec's fencing token.
# nested KIND PAIR...: start that worker (see nested for PAIR).
nested() {
	local k=$1
	shift
	"$here/nested" "$dir/$k" "$rl" "${name[$k]}" \
	    "-w 5s --ttl $ttl --kill-after 200ms" "$@" \
	    2>>"$dir/$k/workers.err" &
}
nested lock "||lock" "|--fair|lock" "|-s|lock" "|--write|lock" \
    "--fair||lock" "--fair|--fair|lock" "--fair|-s|lock" "--fair|--write|lock"
nested rwlock "-s|-s|read" "--write|-s|write" "--write||write" \
    "--write|--fair|write" "--write|--write|write"
nested permits "--limit $limit|--limit $limit|permits:$limit"
# The Redisson clients (redisson-exec): leases of 600 ms renewed every
# 200 ms, as the redlock workers' --ttl. RLock and RFairLock on the mixed
# name; an RReadLock and an RWriteLock on the read-write lock's; an
# RPermitExpirableSemaphore client on the semaphore's, whose permits are
# leased and renewed by updateLeaseTime. TORTURE_KIND tells the store
# each one's role.
# redisson KIND TORTURE_KIND [REDISSON-EXEC OPTIONS]: start one.
redisson() {
	local k=$1 tk=$2
	shift 2
	TORTURE_KIND=$tk "$here/worker" "$dir/$k" "$here/redisson-exec" \
	    --port "$port" "$@" --watchdog 600 --wait 5 --holding "$dir/$k" \
	    "${name[$k]}" 2>>"$dir/$k/workers.err" &
}
redisson mixed lock
redisson mixed lock --fair
redisson rwlock read --read
redisson rwlock write --write
redisson permits "permits:$limit" --permits "$limit"
# The failovers, on servers of their own, for the same SECONDS.
fpids=
for t in $topologies; do
	"$here/failover.sh" "$t" "$dir" "$rl" "$seconds" 2>"$dir/$t.err" &
	fpids="$fpids $!"
done

# The injector. Faults come in rounds: each round every fault on every
# kind, and as many server restarts as kinds, in a random order. A fault
# on a holder hits one holder (a permit, a reader, a writer); deleting
# the keys robs every holder of the name. The owners hit go to
# $dir/KIND/hits, one per holder, for the checker; $dir/faults gets
# "KIND FAULT" per fault ("restart" for a restart).
# holder KIND: "pid owner" of a holder of KIND's name, at random; for a
# Redisson client, which leaves no pid in Redis, "pid owner redisson"
# from the file it writes while it holds (a permit's owner is its id). It looks with the release build
# when there is one (REDLOCK_RELEASE_BIN; make test builds it): a section
# holds for some 100 ms, and an ASan `status` (as long, on a busy box)
# found holders that had left by the time the fault came: the stop fault
# was seen to miss 15 times in a row, and the run failed for want of it.
holder() {
	{
		"${REDLOCK_RELEASE_BIN:-$rl}" status --json "${name[$1]}" 2>/dev/null | jq -r '
			[., .permits[]?, .readers[]?
			 | select(.pid != null and .finished != true)
			 | "\(.pid) \(.owner)"] | .[]'
		sed 's/$/ redisson/' "$dir/$1"/holding.* 2>/dev/null
	} | shuf -n 1
}
# hit KIND OWNER...: note the owners as hit, by their UUID's hex digits
# (an owner token's, or the first 32 of a permit's id).
hit() {
	local k=$1 o
	shift
	for o in "$@"; do
		o=${o%%:*}
		o=${o//-/}
		echo "${o:0:32}" >>"$dir/$k/hits"
	done
}
# rob KIND: delete the keys that hold KIND's name, in one script that
# answers the owners that held it, one a line (a permit by the owner
# token its holder record names, else, Redisson's, by its id in hex).
rob() {
	local n=${name[$1]}
	case $1 in
	lock | mixed)	cli eval "local o = redis.call('HKEYS', KEYS[1])
		    redis.call('DEL', KEYS[1]) return o" 1 "$n" ;;
	permits) cli eval "local t = redis.call('TIME')
		    local now = t[1] * 1000 + math.floor(t[2] / 1000)
		    local o = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. now, '+inf')
		    for i, id in ipairs(o) do
		      local j = redis.call('HGET', KEYS[3], id)
		      local owner = j and string.match(j, '\"owner\":\"([^\"]*)\"')
		      if owner then
		        o[i] = owner
		      elseif not string.find(id, '^[0-9a-f]+$') then
		        o[i] = (string.gsub(id, '.', function(c)
		          return string.format('%02x', string.byte(c)) end))
		      end
		    end
		    redis.call('DEL', KEYS[1], KEYS[2]) return o" \
		    3 "$n" "{$n}:timeout" "redlock_holder:{$n}" ;;
	rwlock)	cli eval "local o = {}
		    for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
		      if f ~= 'mode' then o[#o + 1] = f end
		    end
		    redis.call('DEL', KEYS[1]) return o" 1 "$n" ;;
	esac 2>/dev/null
}
# fault KIND FAULT: inject one; fails when there was nothing to hit.
fault() {
	local k=$1 p o r w c robbed
	case $2 in
	kill9)	read -r p o r < <(holder "$k")
		[ -n "${p-}" ] && kill -9 "$p" 2>/dev/null || return 1
		[ -z "$r" ] || rm -f "$dir/$k/holding.$p"
		hit "$k" "$o" ;;
	stop)	read -r p o r < <(holder "$k")
		# The holder first, while it holds (finding the others takes
		# processes of its own); then, for redlock, its watchdog and
		# COMMAND's process group under it; for a Redisson client,
		# COMMAND's process group under it.
		[ -n "${p-}" ] && kill -STOP "$p" 2>/dev/null || return 1
		stopped=$p
		if [ -z "$r" ]; then
			w=$(pgrep -P "$p" | head -n 1)
			c=$([ -n "$w" ] && pgrep -P "$w" | head -n 1)
		else
			w='' c=$(pgrep -P "$p" | head -n 1)
		fi
		stopped="$p $w ${c:+-$c}"
		kill -STOP $w ${c:+-$c} 2>/dev/null
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
# soon KIND FAULT: fault, tried again every 30 ms for up to a second while
# there is nothing to hit: under load a kind's sections are rare and
# short, and a holder found may have left before the signal lands.
soon() {
	local until=$((${EPOCHREALTIME/./} + 1000000))
	until fault "$@"; do
		[ "${EPOCHREALTIME/./}" -lt "$until" ] || return 1
		sleep 0.03
	done
}
end=$(($(date +%s) + seconds))
# A round goes through every fault once: on a loaded box a round may take
# longer than a short run, so the last one is finished (within twice as
# long again at most) rather than leaving a kind of fault untried. (As
# long again was too little once: beside two busy loops, valkey-server's
# run with the cluster's took 60 s and still left three faults untried.)
hard_end=$((end + 2 * seconds))
round=()
while [ "$(date +%s)" -lt "$end" ] ||
    { [ ${#round[@]} -gt 0 ] && [ "$(date +%s)" -lt "$hard_end" ]; }; do
	if [ ${#round[@]} = 0 ]; then
		mapfile -t round < <({
			for k in $kinds; do
				printf '%s\n' "$k kill9" "$k stop" "$k del" "- restart"
			done; } | shuf)
		tries=0
	fi
	sleep "0.$((RANDOM % 4 + 2))"
	# A fault that finds nothing to hit for a second (soon) is tried
	# again, 5 times in a row; then it goes to the end of the round, to be
	# tried 5 times again later, three times in all before it is dropped:
	# a kind whose sections are
	# rare on a loaded box (one a second, of some 50 ms) was found with no
	# holder 5 times in a row, in every round, and got none of that fault.
	if soon ${round[0]}; then
		round=("${round[@]:1}")
		tries=0
	elif [ $((tries += 1)) -ge 15 ]; then
		round=("${round[@]:1}")
		tries=0
	elif [ $((tries % 5)) = 0 ] && [ ${#round[@]} -gt 1 ]; then
		round=("${round[@]:1}" "${round[0]}|$tries")
		tries=0
	fi
	# A fault put back carries its tries: "KIND FAULT|TRIES".
	if [ ${#round[@]} -gt 0 ] && [[ ${round[0]} == *"|"* ]]; then
		tries=${round[0]#*|}
		round[0]=${round[0]%|*}
	fi
done
for k in $kinds; do touch "$dir/$k/stop"; done
touch "$dir/stall.stop"
wait $(jobs -p | grep -v "^$server\$") 2>/dev/null
for t in $topologies; do
	[ -s "$dir/$t.err" ] && sed "s/^/torture: /" "$dir/$t.err"
done

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
# A failover kind's holders hit: the owners of the sections that began or
# ended from a second before a failover's window (the replica cut off)
# to a second after it (the old master demoted): a section lasts 90 ms at
# most, a lease 600 ms.
# window_hits STORE_LOG WINDOWS
window_hits() {
	awk 'FILENAME == ARGV[1] { lo[++n] = $2 - 1e9; hi[n] = $3 + 1e9; next }
	    $1 != "displace" { for (i = 1; i <= n; i++)
		if ($4 >= lo[i] && $4 <= hi[i]) { print $6; break } }' "$2" "$1" |
	    sort -u
}
# redisson_sections DIR: the sections (begun, accepted or refused) of the
# Redisson clients of DIR, by their owners.
redisson_sections() {
	[ -e "$1/redisson.owners" ] || { echo 0; return; }
	awk 'FILENAME == ARGV[1] { r[$1] = 1; next }
	    ($1 == "begin" || $1 == "reject-begin") && ($6 in r) { c++ }
	    END { print c + 0 }' "$1/redisson.owners" "$1/store.log"
}
# twice STORE_LOG: fencing tokens that began more than one section
# (accepted or refused), each counted once.
twice() {
	awk '$1 == "begin" || $1 == "reject-begin" { if (n[$2]++ == 1) c++ }
	    END { print c + 0 }' "$1"
}
# refused STORE_LOG [WINDOWS in|out]: the writes the store refused (a
# begin or an end of a holder its tokens proved stale); with WINDOWS,
# only those within a second of a window (in) or not (out).
refused() {
	if [ $# = 1 ]; then
		grep -c '^reject' "$1"
		return
	fi
	awk -v want="$3" 'FILENAME == ARGV[1] { lo[++n] = $2 - 1e9; hi[n] = $3 + 1e9; next }
	    $1 ~ /^reject/ { w = 0; for (i = 1; i <= n; i++)
		if ($4 >= lo[i] && $4 <= hi[i]) w = 1
		c += (w == (want == "in")) }
	    END { print c + 0 }' "$2" "$1"
}
echo "torture: $seconds s, ttl $ttl; lock: 4 workers; permits: 4 workers, --limit $limit, and 1 Redisson RPermitExpirableSemaphore worker;"
echo "  rwlock: 3 -s and 2 --write workers, and 1 Redisson RReadLock and 1 RWriteLock worker;"
echo "  nested: 1 worker each on lock (plain, --fair), permits and rwlock (-s, --write), every pair that re-enters;"
echo "  mixed: 2 redlock, 1 redlock --fair, 1 redlock --min-hold 250ms, 1 Redisson RLock and 1 RFairLock worker${topologies:+; $(echo $topologies | sed 's/ / and /'): 2 workers, and 2 with --replicas 0 (Sentinel) or 1 (cluster)}"
fault_logs=("$dir/faults")
for t in $topologies; do fault_logs+=("$dir/$t/faults"); done
echo "faults:   $(cat "${fault_logs[@]}" | sort | uniq -c | awk '{printf "%s%s: %s  ", $2, $3 == "" ? "" : " " $3, $1}')"
status=0
declare -A nvs
for k in $kinds $fkinds; do
	d=$dir/$k
	case $k in
	sentinel*) faults="failover"; t=sentinel ;;
	cluster*) faults="migrate takeover"; t=cluster ;;
	*) faults="kill9 stop del"; t= ;;
	esac
	[ -z "$t" ] || window_hits "$d/store.log" "$d/windows" >"$d/hits"
	violations=$("$here/check.sh" violations "$d/store.log")
	accepted=$("$here/check.sh" accepted "$d/store.log")
	preempted=$("$here/check.sh" preempted "$d/store.log")
	unexplained=$("$here/check.sh" unexplained "$d/store.log" "$d/hits" "$dir/stalls")
	stalled=$(printf '%s' "$unexplained" | grep '^stalled: ' || :)
	unexplained=$(printf '%s' "$unexplained" | grep -v '^stalled: ' || :)
	hits=$(wc -l <"$d/hits")
	nv=$(printf '%s' "$violations" | grep -c .)
	nu=$(printf '%s' "$unexplained" | grep -c .)
	ns=$(printf '%s' "$stalled" | grep -c .)
	nvs[$k]=$nv
	excess=$((preempted - hits - ns))
	[ "$excess" -gt 0 ] || excess=0
	echo "$k: $(grep -c -e '^begin' -e '^reject-begin' "$d/store.log") sections, $((nv + nu + excess)) violations ($nv accepted, $nu unexplained overlaps, $excess preemptions beyond the holders hit)"
	echo "  outcomes: $(sort -n "$d/outcomes" | uniq -c | awk '{printf "exit %s: %s  ", $2, $1}')"
	if [ -e "$d/redisson.owners" ]; then
		echo "  Redisson: $(redisson_sections "$d") sections by its clients"
	fi
	echo "  store:    $accepted sections accepted, $(grep -c '^reject-begin' "$d/store.log") begins and $(grep -c '^reject-end' "$d/store.log") ends refused"
	echo "            $preempted sections preempted, $hits holders hit${t:+ (in the failovers)}, $ns during a stall of the box"
	if [ "$excess" -gt 0 ]; then
		echo "torture: $k: more preemptions than holders hit: too many holders at once"
		status=1
	fi
	# The first 10 of each, with how many there were; overlaps during a
	# stall of the box are said, and fail nothing.
	for v in "$stalled" "$unexplained" "$violations"; do
		[ -n "$v" ] || continue
		echo "$v" | sed -n "1,10s/^/torture: $k: /p"
		[ "$(echo "$v" | wc -l)" -le 10 ] ||
		    echo "torture: $k: ... $(echo "$v" | wc -l) in all"
		[ "$v" = "$stalled" ] || status=1
	done
	for f in $faults; do
		if [ -z "$t" ]; then
			n=$(grep -c "^$k $f\$" "$dir/faults")
		else
			n=$(grep -c "^$t $f\$" "$d/faults")
		fi
		if [ "$n" -lt "$min" ]; then
			echo "torture: $k: only $n $f faults (want $min)"
			status=1
		fi
	done
	[ "$accepted" -gt 0 ] || { echo "torture: $k: no section was accepted"; status=1; }
	# Every nested turn's inner exec re-entered: none was refused (64)
	# or gave up waiting for its own ancestor (86, see nested).
	n=$(grep -cx -e 64 -e 86 "$d/outcomes" 2>/dev/null)
	if [ "${n:-0}" -gt 0 ]; then
		echo "torture: $k: $n turns refused (exit 64) or whose nested exec waited for its own ancestor (exit 86)"
		status=1
	fi
	# Through Sentinel, by default, no token is given twice and no
	# overlap happens at all, refused or not (what --replicas 0 shows).
	if [ "$k" = sentinel ]; then
		n=$(twice "$d/store.log")
		r=$(refused "$d/store.log")
		if [ "$n" -gt 0 ] || [ "$r" -gt 0 ]; then
			echo "torture: $k: $n tokens given twice, $r writes refused as stale under the Sentinel default"
			status=1
		fi
	fi
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
# The summary: per kind of fault, "refused/accepted" overlaps.
echo "summary: overlaps the fenced store refused / would have accepted (must be 0)"
echo "  holders killed, paused, robbed; restarts: lock $(refused "$dir/lock/store.log")/${nvs[lock]}  rwlock $(refused "$dir/rwlock/store.log")/${nvs[rwlock]}"
echo "  semaphores, --limit $limit (same faults):   $(refused "$dir/permits/store.log")/${nvs[permits]}"
echo "  Redisson RLock, RFairLock and redlock:   $(refused "$dir/mixed/store.log")/${nvs[mixed]}  (same faults)"
# the rwlock's and the semaphore's figures again, with the Redisson
# clients' share of their sections
echo "  Redisson RReadLock, RWriteLock and redlock:   $(refused "$dir/rwlock/store.log")/${nvs[rwlock]}  (the rwlock's; $(redisson_sections "$dir/rwlock") sections Redisson's)"
echo "  Redisson RPermitExpirableSemaphore and redlock:   $(refused "$dir/permits/store.log")/${nvs[permits]}  (the semaphore's; $(redisson_sections "$dir/permits") sections Redisson's)"
for t in $topologies; do
	case $t in
	sentinel) rows="failover:in:Sentinel failover" ;;
	cluster) rows="takeover:in:cluster replica takeover
migrate:out:cluster slot migration (and all outside the takeovers)" ;;
	esac
	a=$(alt "$t")
	while IFS=: read -r f io label; do
		printf '  %-40s %s/%s  with --replicas %s: %s/%s  (%s faults)\n' "$label:" \
		    "$(refused "$dir/$t/store.log" "$dir/$t/windows" "$io")" "${nvs[$t]}" \
		    "${a##*-r}" \
		    "$(refused "$dir/$a/store.log" "$dir/$a/windows" "$io")" "${nvs[$a]}" \
		    "$(grep -c "^$t $f\$" "$dir/$t/faults")"
	done <<<"$rows"
	printf '  %-40s %s  with --replicas %s: %s\n' "tokens given twice:" \
	    "$(twice "$dir/$t/store.log")" "${a##*-r}" "$(twice "$dir/$a/store.log")"
done
echo "$( [ $status = 0 ] && echo "0 violations: passed" || echo "FAILED")"
exit $status
