#!/usr/bin/env bats
# --replicas N: after each acquisition and renewal, WAIT for N replicas
# (pipelined behind the script). One master and two real replicas.

load helpers

# The master's writes reach N replicas, and they acknowledge them: a
# write, then WAIT (state=online alone comes before the first ack).
replicas_up() {
	rcli set replicas-sync 1 >/dev/null &&
	    [ "$(rcli wait "$1" 200)" -ge "$1" ] &&
	    rcli del replicas-sync >/dev/null
}

# Calls of WAIT the master has served.
wait_calls() {
	rcli info commandstats | tr -d '\r' |
	    sed -n 's/^cmdstat_wait:calls=\([0-9]*\),.*/\1/p' | grep . || echo 0
}

setup_file() {
	start_redis R --repl-diskless-sync-delay 0
	start_redis S1 --replicaof 127.0.0.1 "$R_PORT"
	start_redis S2 --replicaof 127.0.0.1 "$R_PORT"
	wait_for 20 replicas_up 2 || {
		rcli info replication >&2
		return 1
	}
}
teardown_file() {
	stop_redis "$S1_PID"
	stop_redis "$S2_PID"
	stop_redis "$R_PID"
}
setup() {
	kill -CONT "$S1_PID" "$S2_PID" 2>/dev/null || true
	rcli flushall >/dev/null
	wait_for 20 replicas_up 2
	rcli config resetstat >/dev/null
	D=$BATS_TEST_TMPDIR
}
teardown() {
	kill -CONT "$S1_PID" "$S2_PID" 2>/dev/null || true
	kill_ours KILL ${epid-}
	stop_strays
}

@test "--replicas 2 with two healthy replicas: COMMAND runs, and its renewals WAIT too" {
	# A 3s lease renews every 1s: a 3.5s COMMAND sees several. Healthy
	# replicas get the time a loaded machine needs to acknowledge.
	run -0 --separate-stderr rl --reply-timeout 2s exec -t 3s --replicas 2 \
	    x -- sh -c 'redis-cli -p "$0" info commandstats |
	    sed -n "s/^cmdstat_wait:calls=\([0-9]*\),.*/\1/p" >"$1/w0";
	    sleep 3.5' "$R_PORT" "$D"
	assert_output ''
	assert_equal "$stderr" ''
	w0=$(tr -d '\r' <"$D/w0")
	w1=$(wait_calls)
	echo "WAIT calls: $w0 when COMMAND started, $w1 after" >&3
	# One for the acquisition, before COMMAND started ...
	[ "$w0" -ge 1 ]
	# ... and at least two more for renewals while it ran.
	[ "$w1" -ge $((w0 + 2)) ]
	run -0 rcli exists x
	assert_output 0
}

@test "--replicas 3 with two replicas: released, exit 69 naming 2 of 3, COMMAND never ran" {
	run -69 --separate-stderr rl --reply-timeout 2s exec --replicas 3 x -- \
	    touch "$D/ran"
	assert_output ''
	assert_equal "$stderr" "redlock: acquired x but only 2 of 3 replicas acknowledged it within 2.0s; released it. Check the replicas (INFO replication) or lower --replicas"
	[ ! -e "$D/ran" ]
	run -0 rcli exists x redlock_holder:{x}
	assert_output 0
	# Released with the release script: it published to wake waiters.
	run -0 rcli info commandstats
	assert_output --partial cmdstat_wait:calls=1,
}

@test "lock --replicas 3 with two replicas: exit 69, nothing held, no token printed" {
	run -69 --separate-stderr rl --reply-timeout 2s lock --replicas 3 x
	assert_output ''
	assert_equal "$stderr" "redlock: acquired x but only 2 of 3 replicas acknowledged it within 2.0s; released it. Check the replicas (INFO replication) or lower --replicas"
	run -0 rcli exists x
	assert_output 0
}

@test "a server without the script cached: the script goes whole with the WAIT behind it, which blocks once, not twice" {
	rcli script flush >/dev/null
	kill -STOP "$S2_PID"
	t0=$(now_ms)
	run -69 --separate-stderr rl --reply-timeout 1500ms exec --replicas 2 x -- true
	t1=$(now_ms)
	kill -CONT "$S2_PID"
	[[ $stderr == *"1 of 2 replicas"* ]]
	# One WAIT: none behind a refused EVALSHA.
	run -0 wait_calls
	assert_output 1
	# One WAIT's timeout (a NOSCRIPT would add another: 3 s).
	echo "$((t1 - t0)) ms" >&3
	[ $((t1 - t0)) -lt 2900 ]
}

@test "a replica stopped at acquisition: --replicas 2 gives up after --reply-timeout with 1 of 2" {
	kill -STOP "$S2_PID"
	t0=$(now_ms)
	run -69 --separate-stderr rl --reply-timeout 2s exec --replicas 2 x -- \
	    touch "$D/ran"
	t1=$(now_ms)
	kill -CONT "$S2_PID"
	assert_equal "$stderr" "redlock: acquired x but only 1 of 2 replicas acknowledged it within 2.0s; released it. Check the replicas (INFO replication) or lower --replicas"
	[ ! -e "$D/ran" ]
	[ $((t1 - t0)) -ge 2000 ]
	run -0 rcli exists x
	assert_output 0
}

@test "replicas stopped while COMMAND runs: renewals fail, COMMAND is terminated before the lease ends, exit 79" {
	# 3s lease: renewals every 1s, each WAITing at most 400ms.
	rl --reply-timeout 400ms exec -v -t 3s --replicas 1 x -- \
	    sh -c 'echo $$ >"$0/c"; exec sleep 30' "$D" 2>"$D/err" 3>&- &
	epid=$!
	wait_for 5 test -s "$D/c"
	wait_for 5 grep -q "renewed x" "$D/err"
	kill -STOP "$S1_PID" "$S2_PID"
	t0=$(now_ms)
	left=$(rcli pttl x)
	wait_for 10 dead "$epid"
	t1=$(now_ms)
	status=0
	reap "$epid" || status=$?
	cat "$D/err" >&3
	[ "$status" -eq 79 ]
	# Terminated before the server would have let the lease go.
	[ "$t1" -lt $((t0 + left)) ]
	grep -q "only 0 of 1 replicas acknowledged it" "$D/err"
	grep -q "lost the lock on x while COMMAND ran (too few replicas acknowledged its renewals (--replicas); lease last confirmed" "$D/err"
	# The master still answered: the lock was given back at once, not
	# left to run out.
	grep -q "released x" "$D/err"
	[ "$(rcli exists x)" = 0 ]
	dead "$(cat "$D/c")"
}

@test "a renewal that gets its acknowledgements again recovers" {
	# 6s lease: renewals every 2s, each WAITing at most 500ms.
	rl --reply-timeout 500ms exec -v -t 6s --replicas 1 x -- \
	    sh -c 'echo $$ >"$0/c"; exec sleep 7' "$D" 2>"$D/err" 3>&- &
	epid=$!
	wait_for 5 test -s "$D/c"
	wait_for 5 grep -q "renewed x" "$D/err"
	kill -STOP "$S1_PID" "$S2_PID"
	wait_for 5 grep -q "only 0 of 1 replicas" "$D/err"
	kill -CONT "$S1_PID" "$S2_PID"
	wait_for 10 dead "$epid"
	status=0
	reap "$epid" || status=$?
	cat "$D/err" >&3
	[ "$status" -eq 0 ]
	[ "$(grep -c "renewed x" "$D/err")" -ge 2 ]
	run -0 rcli exists x
	assert_output 0
}

@test "without --replicas a stopped replica disturbs nothing" {
	kill -STOP "$S1_PID" "$S2_PID"
	run -0 --separate-stderr rl --reply-timeout 200ms exec -t 300ms x -- sleep 0.5
	assert_equal "$stderr" ''
	run -0 rcli info commandstats
	refute_output --partial cmdstat_wait
}

@test "re-entry with --replicas WAITs too" {
	run -0 --separate-stderr rl --reply-timeout 2s exec --replicas 2 x -- \
	    "$RL" -u "redis://127.0.0.1:$R_PORT" --reply-timeout 2s exec \
	    --replicas 2 x -- true
	assert_equal "$stderr" ''
	[ "$(wait_calls)" -ge 2 ]
	# The nested exec's acquisition too few acknowledged: it gives back
	# its hold (the outer one stays until the outer exec releases it).
	run -69 --separate-stderr rl --reply-timeout 2s exec --replicas 2 x -- \
	    "$RL" -u "redis://127.0.0.1:$R_PORT" --reply-timeout 2s exec \
	    --replicas 3 x -- touch "$D/ran"
	assert_equal "$stderr" "redlock: acquired x but only 2 of 3 replicas acknowledged it within 2.0s; released it. Check the replicas (INFO replication) or lower --replicas"
	[ ! -e "$D/ran" ]
	run -0 rcli exists x
	assert_output 0
}

@test "--fair --replicas: the first attempt and a handoff WAIT, heartbeats do not" {
	rl --reply-timeout 2s exec --fair --replicas 2 x -- \
	    sh -c 'touch "$0/held"; sleep 1.5' "$D" 3>&- &
	epid=$!
	wait_for 5 test -e "$D/held"
	rcli config resetstat >/dev/null
	# Waiting 1.5s with a 300ms waiter timeout: a heartbeat every 100ms.
	run -0 --separate-stderr rl --reply-timeout 2s exec --fair \
	    --waiter-timeout 300ms --replicas 2 x -- true
	reap "$epid"
	calls=$(rcli info commandstats | tr -d '\r' |
	    sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),.*/\1/p')
	echo "evalsha calls $calls, WAIT calls $(wait_calls)" >&3
	# Many heartbeats, but WAIT for the first attempt and the handoff
	# only (and none for the holder's release).
	[ "$calls" -ge 8 ]
	[ "$(wait_calls)" -le 3 ]
	[ "$(wait_calls)" -ge 2 ]
}

@test "--replicas: bad values are usage errors" {
	run -64 --separate-stderr rl exec --replicas -1 x -- true
	assert_equal "$stderr" "redlock: --replicas: '-1' is not a number from 0 to 1000; usage: redlock exec [OPTIONS] NAME -- COMMAND [ARG...] (see redlock exec --help)"
	run -64 --separate-stderr rl exec --replicas x x -- true
	run -64 --separate-stderr rl lock --replicas 1x x
	run -64 --separate-stderr rl lock --replicas '' x
	run -0 rcli exists x
	assert_output 0
}

@test "--replicas 0 sends no WAIT" {
	run -0 rl exec --replicas 0 x -- true
	run -0 rcli info commandstats
	refute_output --partial cmdstat_wait
}

@test "an ACL user that may not WAIT: exit 69 with the rule that grants it, nothing held" {
	rcli acl setuser nowait on '>pw' '~*' '&*' '+@all' '-wait' >/dev/null
	run -69 --separate-stderr "$RL" -u "redis://nowait:pw@127.0.0.1:$R_PORT" \
	    exec --replicas 1 x -- echo ran
	rcli acl deluser nowait >/dev/null
	assert_output ''
	[[ $stderr == *"refused WAIT for user nowait ("*"): --replicas needs it; grant it with ACL SETUSER nowait +wait"* ]]
	[ "$(rcli exists x)" = 0 ]
}
