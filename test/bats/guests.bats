#!/usr/bin/env bats
# queue names the waiters of a lock without --fair (issue 48, point 9):
# each joins the room with a record in redlock_guest:{NAME}, which lives
# no longer than the room and goes when the waiter leaves.

load helpers
bats_require_minimum_version 1.5.0

GUEST='redlock_guest:{x}'

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
	export REDLOCK_URL=redis://127.0.0.1:$R_PORT
}

# in_room N: N waiters in x's room.
in_room() { [ "$(rcli zcard 'redlock_room:{x}')" = "$1" ]; }

@test "queue names each waiter without --fair: host and pid, how long it waited, when it gives up, its command or label" {
	tok=$(rl lock -t 1m x)
	"$RL" exec -w 30s --label 'nightly backup' x -- true 3>&- &
	a=$!
	"$RL" exec x -- sleep 1 3>&- &
	b=$!
	wait_for 10 in_room 2
	run -0 rl queue x
	assert_line --index 1 '2 waiting without --fair, in no order:'
	assert_line --index 2 --regexp '^POS WAITER +WAITING +GIVES UP +COMMAND$'
	assert_line --regexp "^-   $(hostname) $a +[0-9.]+m?s +(2[0-9]|30)\\.[0-9]s +nightly backup\$"
	assert_line --regexp "^-   $(hostname) $b +[0-9.]+m?s +forever +sleep 1\$"
	[ "${#lines[@]}" = 5 ]
	run -0 rl queue --json x
	echo "$output" | jq -e --arg h "$(hostname)" --argjson a "$a" '
	    .unordered == 2 and .waiters == [] and
	    (.unordered_waiters | length == 2) and
	    (.unordered_waiters[] | select(.pid == $a) |
	     .host == $h and .cmd == "nightly backup" and .waiting_ms >= 0 and
	     .gives_up_ms > 20000 and .deadline_ms > 0 and
	     (.owner | endswith(":\($a)")))'
	# The record lives no longer than the room.
	g=$(rcli pttl "$GUEST")
	[ "$g" -gt 0 ] && [ "$g" -le $(($(rcli pttl 'redlock_room:{x}') + 100)) ]
	rl unlock --owner "$tok" x
	reap "$a"
	reap "$b"
	# Both took it and left the room: no record is left.
	[ "$(rcli exists "$GUEST")" = 0 ]
}

@test "a waiter that gives up or is signalled takes its record away" {
	tok=$(rl lock -t 1m x)
	"$RL" exec -w 1s x -- true 3>&- &
	a=$!
	"$RL" exec x -- true 3>&- &
	b=$!
	wait_for 10 in_room 2
	[ "$(rcli hlen "$GUEST")" = 2 ]
	st=0
	reap "$a" || st=$?
	assert_equal "$st" 75
	assert_equal "$(rcli hlen "$GUEST")" 1
	kill -TERM "$b"
	st=0
	reap "$b" || st=$?
	assert_equal "$st" 143
	assert_equal "$(rcli exists "$GUEST")" 0
	rl unlock --owner "$tok" x
}

@test "waiters killed in the room leave records that go with its expiry, and are dropped once they outnumber the waiters" {
	tok=$(rl lock -t 1m x)
	p=()
	for i in $(seq 1 20); do
		"$RL" exec --waiter-timeout 4s x -- true 3>&- &
		p+=($!)
	done
	wait_for 20 in_room 20
	# The whole tree, so that nothing of them leaves the room.
	kill -9 $(proc_tree "${p[@]}")
	[ "$(rcli hlen "$GUEST")" = 20 ]
	# Three waiter timeouts at most.
	(( $(rcli pttl "$GUEST") <= 12000 ))
	reap "${p[@]}" || :
	# Past their deadlines a release drops them from the room (done here
	# by hand, not to wait 12 s); the next waiter to join finds the
	# records of 20 gone waiters beside 1 and drops them.
	rcli zremrangebyscore 'redlock_room:{x}' -inf +inf >/dev/null
	"$RL" exec x -- true 3>&- &
	q=$!
	wait_for 10 in_room 1
	assert_equal "$(rcli hlen "$GUEST")" 1
	rl unlock --owner "$tok" x
	reap "$q"
}

@test "a key of another type where the record goes: the waiter waits unnamed and the key is untouched" {
	rcli set "$GUEST" "an application's" >/dev/null
	tok=$(rl lock -t 1m x)
	"$RL" exec x -- true 3>&- &
	a=$!
	wait_for 10 in_room 1
	run -0 rl queue x
	assert_line --index 1 '1 waiting without --fair, in no order:'
	assert_line --regexp '^-   [0-9a-f-]+:[0-9]+ +- +- +-$'
	rl unlock --owner "$tok" x
	reap "$a"
	assert_equal "$(rcli get "$GUEST")" "an application's"
	assert_equal "$(rcli pttl "$GUEST")" -1
}

@test "a user who may not write the record waits unnamed: none is written" {
	rcli acl setuser nohsetnx on '>pw' '~*' '&*' '+@all' -hsetnx >/dev/null
	tok=$(rl lock -t 1m x)
	"$RL" -u "redis://nohsetnx:pw@127.0.0.1:$R_PORT" exec x -- true 3>&- &
	a=$!
	wait_for 10 in_room 1
	assert_equal "$(rcli exists "$GUEST")" 0
	rl unlock --owner "$tok" x
	reap "$a"
	rcli acl deluser nohsetnx >/dev/null
}

@test "a room of another type (nobody joins it): the waiter waits on the channel and writes no record" {
	rcli set 'redlock_room:{x}' "an application's" >/dev/null
	tok=$(rl lock -t 1m x)
	"$RL" exec x -- true 3>&- &
	a=$!
	wait_for 10 eval '[ "$(subscribers x)" -ge 1 ]'
	sleep 0.3
	assert_equal "$(rcli exists "$GUEST")" 0
	rl unlock --owner "$tok" x
	reap "$a"
	assert_equal "$(rcli get 'redlock_room:{x}')" "an application's"
}
