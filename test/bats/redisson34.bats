#!/usr/bin/env bats
# The features of issue 34 beside Java services using Redisson
# (test/bats/redisson.py): a pool takes another name than the one a Java
# client holds, and a Java release wakes a pool's waiter by a message; a
# Java fair waiter is neither removed nor disturbed by --supersede
# arrivals; lock --extend of a token on a name a Java client holds exits
# 1 and changes nothing.

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
	: >"$D/events"
	bg=()
}
teardown() { stop_bg; stop_strays; }

RSN=$BATS_TEST_DIRNAME/redisson.py
rsn() { python3 "$RSN" --port "$R_PORT" "$@"; }
rsn_bg() {
	python3 "$RSN" --port "$R_PORT" "$@" >>"$D/events" 2>>"$D/err" 3>&- &
	bg+=($!)
}
rlx() { exec "$RL" -u "redis://127.0.0.1:$R_PORT" "$@"; }
when_ms() {
	awk -v l="$1" -v e="${2:-acquired}" \
	    '$1 == e && $(NF - 1) == l { printf "%.0f\n", $NF * 1000; exit }' \
	    "$D/events"
}
had() { [ -n "$(when_ms "$@")" ]; }
java_holds() { [ "$(rcli hget "$1" "$2")" = 1 ]; }
STRANGER=00000000-0000-4000-8000-000000000000:1
# The Java client's owner: UUID:thread.
JID=11111111-2222-4333-8444-555555555555:1
JID2=11111111-2222-4333-8444-666666666666:1
# state NAME: NAME's hash and its holder records, sorted (no leases).
state() {
	{
		rcli hgetall "$1"
		rcli hgetall "redlock_holder:{$1}"
	} | paste - - | sort
}

@test "a pool beside a Java holder: it takes another name; the Java release wakes its waiter by a message" {
	# Java holds p1 (watchdog lease 30 s), keeping it 3 s.
	rsn_bg --id "$JID" --label j lock p1 --hold 3
	wait_for 10 java_holds p1 "$JID"
	run -0 rl exec -n --any p1 p2 -- sh -c 'echo $REDLOCK_NAME'
	assert_output p2
	[ "$(rcli hget p1 "$JID")" = 1 ]
	# Both busy (p2 by redlock for 60 s): the pool waits; only the
	# Java release, 3 s in, ends the wait, long before p1's lease.
	t2=$(rl lock -t 60s p2)
	rlx exec -q -w 30s --waiter-timeout 30s --any p1 p2 -- \
	    sh -c 'echo "$REDLOCK_NAME $(date +%s%3N)" >"$0"' "$D/got" 3>&- &
	bg+=($!)
	wait_for 10 had j released
	rel=$(when_ms j released)
	wait_for 10 test -s "$D/got"
	read -r n at <"$D/got"
	[ "$n" = p1 ]
	echo "pool took p1 $((at - rel)) ms after the Java release" >&3
	[ $((at - rel)) -lt 1000 ]
	# It left p2's room, and p2 is still the other lock's.
	[ "$(rcli zcard 'redlock_room:{p2}')" = 0 ]
	[ "$(rcli hget p2 "$t2")" = 1 ]
	rl unlock --owner "$t2" p2
}

@test "a Java fair waiter is neither removed nor disturbed by --supersede arrivals, plain or --fair" {
	tok=$(rl lock -t 60s x)
	rsn_bg --id "$JID" --fair --label jf lock x --wait 30
	wait_for 10 eval '[ "$(rcli llen "redisson_lock_queue:{x}")" = 1 ]'
	score=$(rcli zscore 'redisson_lock_timeout:{x}' "$JID")
	for i in 1 2 3; do
		rlx exec -q -w 30s --supersede --label "s$i" x -- true \
		    2>"$D/s$i.err" 3>&- &
		bg+=($!)
		wait_for 10 eval "rcli hvals 'redlock_supersede:{x}' | grep -q '\"cmd\":\"s$i\"'"
	done
	for i in 1 2 3; do
		rlx exec -q -w 30s --supersede --fair --label "f$i" x -- true \
		    2>"$D/f$i.err" 3>&- &
		bg+=($!)
		wait_for 10 eval "rcli hvals 'redlock_supersede:{x}' | grep -q '\"cmd\":\"f$i\"'"
	done
	# Every --supersede waiter but the newest gave up; the Java waiter
	# is the head of the queue as it was, its deadline unchanged, and
	# was woken by nothing; the newest waits behind it.
	for i in 1 2 3; do wait_for 10 dead "${bg[i]}"; done
	for i in 1 2; do wait_for 10 dead "${bg[i + 3]}"; done
	! dead "${bg[6]}"
	run -0 rcli lrange 'redisson_lock_queue:{x}' 0 -1
	[ "${lines[0]}" = "$JID" ]
	[ "${#lines[@]}" = 2 ]
	[ "$(rcli zscore 'redisson_lock_timeout:{x}' "$JID")" = "$score" ]
	! grep -q woken "$D/events"
	! had jf
	# The release: the Java waiter first, then the newest.
	rl unlock --owner "$tok" x
	wait_for 10 had jf
	reap -t 30 "${bg[6]}"
	wait_for 10 had jf released
}

@test "extend of a token on a name a Java client holds exits 1 and changes nothing: RLock, RFairLock, RReadWriteLock, semaphore" {
	rsn --id "$JID" lock x --lease 20000 --keep
	rsn --id "$JID" --fair lock f --lease 20000 --keep
	rsn --id "$JID2" rwlock rw read --lease 20000 --keep
	rsn --id "$JID" rwlock w write --lease 20000 --keep
	rsn semaphore s set-permits 2 >/dev/null
	rsn semaphore s acquire --lease 20000 --keep >/dev/null
	# A redlock token that holds nothing, one that holds another name,
	# and a token of the Java client's form but not its own thread.
	mine=$(rl lock -t 30s other)
	for n in x f rw w s; do
		before=$(state "$n")
		b2=$(rcli zrange "{$n}:timeout" 0 -1 withscores)
		p0=$(rcli pttl "$n")
		for t in "$STRANGER" "$mine" "${JID%:1}:2"; do
			run -1 --separate-stderr rl lock --owner "$t" --extend 60s "$n"
			[[ "$stderr" == *"$n is not held by that owner"* ]]
		done
		assert_equal "$(state "$n")" "$before"
		assert_equal "$(rcli zrange "{$n}:timeout" 0 -1 withscores)" "$b2"
		[ "$(rcli pttl "$n")" -le "$p0" ]
	done
	# Nothing of redlock's was made beside them.
	run -0 rcli keys 'redlock_holder:*'
	assert_output 'redlock_holder:{other}'
}
