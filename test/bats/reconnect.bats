#!/usr/bin/env bats
# Waiters that lose the server (CLIENT KILL, a restart) reconnect,
# resubscribe and check the lock again until --wait runs out.

load helpers

setup_file() {
	start_redis R
	for m in M1 M2 M3; do start_redis "$m"; done
	export URLS="redis://127.0.0.1:$M1_PORT,redis://127.0.0.1:$M2_PORT,redis://127.0.0.1:$M3_PORT"
}
teardown_file() {
	for m in R M1 M2 M3; do stop_redis "$(pid_of "$m")"; done
}
setup() {
	D=$BATS_TEST_TMPDIR
	if dead "$(pid_of R)"; then restart_redis R; fi
	rm -f "$R_DIR/dump.rdb"
	rcli flushall >/dev/null
}
teardown() {
	kill_ours KILL ${epid-}
	stop_strays
}

Q='redisson_lock_queue:{x}'
Z='redisson_lock_timeout:{x}'
qlen_is() { [ "$(rcli llen "$Q")" = "$1" ]; }

# The ids of the pub/sub clients of the server on port $1, one a line.
pubsub_ids() { redis-cli -p "$1" client list type pubsub | sed -n 's/^id=\([0-9]*\) .*/\1/p' | sort; }
# N pub/sub clients on port $1, none of them among the ids in file $2.
resubscribed() {
	local now
	now=$(pubsub_ids "$1")
	[ "$(echo "$now" | grep -c .)" -ge "$3" ] || return 1
	! echo "$now" | grep -qxFf "$2"
}
# Kill the pub/sub clients on port $1 and wait for N ($2) new ones.
kill_subs_and_wait() {
	local port=$1 n=$2 before=$BATS_TEST_TMPDIR/subs.$1
	pubsub_ids "$port" >"$before"
	[ "$(grep -c . "$before")" -ge "$n" ]
	redis-cli -p "$port" client kill type pubsub >/dev/null
	wait_for 10 resubscribed "$port" "$before" "$n"
}

ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

@test "a waiter survives CLIENT KILL TYPE pubsub and is woken by the release" {
	tok=$(rl lock -t 60s x)
	rl exec -w 20s x -- sh -c 'date +%s%N >"$0/start"' "$D" 3>&- &
	epid=$!
	wait_for 5 has_subscribers x 1
	kill_subs_and_wait "$R_PORT" 1
	! dead "$epid" || false
	t0=$(date +%s%N)
	rl unlock --owner "$tok" x
	st=0
	reap "$epid" || st=$?
	[ "$st" -eq 0 ]
	woke=$((($(cat "$D/start") - t0) / 1000000))
	echo "started $woke ms after the release" >&3
	# A 60 s lease: only a pushed wake-up brings it in this soon.
	[ "$woke" -lt 5000 ]
	key_gone x
}

@test "a waiter survives a server restart and runs COMMAND once it is back" {
	tok=$(rl lock -t 60s x)
	rl exec -w 20s x -- sh -c 'echo ran >"$0/ran"' "$D" 3>&- &
	epid=$!
	wait_for 5 has_subscribers x 1
	kill -9 "$(pid_of R)"
	wait_for 5 dead "$(pid_of R)"
	sleep 1
	! dead "$epid" || false
	restart_redis R
	t0=$(date +%s%N)
	st=0
	reap "$epid" || st=$?
	[ "$st" -eq 0 ]
	echo "done $(ms_since "$t0") ms after the restart" >&3
	[ "$(cat "$D/ran")" = ran ]
	key_gone x
}

@test "waiting forever: -v says it keeps reconnecting, and it acquires once the server is back" {
	tok=$(rl lock -t 60s x)
	timeout 20 "$RL" -u "redis://127.0.0.1:$R_PORT" exec -v x -- true \
	    2>"$D/err" 3>&- &
	epid=$!
	wait_for 5 has_subscribers x 1
	kill -9 "$(pid_of R)"
	wait_for 10 grep -q "reconnecting until it is back (--wait is forever)" "$D/err"
	sleep 0.5
	! dead "$epid" || false
	restart_redis R
	st=0
	reap "$epid" || st=$?
	[ "$st" -eq 0 ]
	run cat "$D/err"
	assert_output --partial "acquired x"
}

@test "a fair waiter survives CLIENT KILL of its subscription and keeps its place" {
	tok=$(rl lock -t 60s x)
	for w in a b; do
		"$RL" -u "redis://127.0.0.1:$R_PORT" exec --fair -w 20s x -- \
		    sh -c 'echo "$1" >>"$0/order"' "$D" "$w" 3>&- &
		eval "p_$w=\$!"
		wait_for 5 qlen_is "$([ "$w" = a ] && echo 1 || echo 2)"
	done
	queue=$(rcli lrange "$Q" 0 -1)
	kill_subs_and_wait "$R_PORT" 2
	! dead "$p_a" || false
	! dead "$p_b" || false
	[ "$(rcli lrange "$Q" 0 -1)" = "$queue" ]
	t0=$(date +%s%N)
	rl unlock --owner "$tok" x
	reap "$p_a"
	reap "$p_b"
	echo "both served $(ms_since "$t0") ms after the release" >&3
	[ "$(ms_since "$t0")" -lt 5000 ]
	run cat "$D/order"
	assert_output "$(printf 'a\nb')"
	[ "$(rcli exists "$Q" "$Z" x)" = 0 ]
}

@test "--wait still runs out (75) while the server stays down" {
	tok=$(rl lock -t 60s x)
	t0=$(date +%s%N)
	rl exec -w 3s x -- true 2>"$D/err" 3>&- &
	epid=$!
	wait_for 5 has_subscribers x 1
	kill -9 "$(pid_of R)"
	st=0
	reap "$epid" || st=$?
	took=$(ms_since "$t0")
	echo "gave up after $took ms" >&3
	[ "$st" -eq 75 ]
	[ "$took" -ge 2900 ]
	# -w plus one connect attempt (--connect-timeout 2s), with margin.
	[ "$took" -lt 10000 ]
	run cat "$D/err"
	assert_output --partial "gave up on x after waiting"
	assert_output --partial "out of reach"
}

@test "SIGINT while reconnecting: exit 130 at once; the fair entry is gone once the server is back" {
	tok=$(rl lock -t 60s x)
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec -v --fair -w 60s \
	    --waiter-timeout 1s x -- true 2>"$D/err" 3>&- &
	epid=$!
	wait_for 5 qlen_is 1
	# Keep the queue over the restart: the entry must go on its own.
	rcli save >/dev/null
	kill -9 "$(pid_of R)"
	wait_for 10 grep -q "reconnecting until --wait runs out" "$D/err"
	sleep 0.5
	! dead "$epid" || false
	t0=$(date +%s%N)
	kill -INT "$epid"
	st=0
	reap "$epid" || st=$?
	took=$(ms_since "$t0")
	echo "exited $took ms after SIGINT" >&3
	[ "$st" -eq 130 ]
	[ "$took" -lt 2000 ]
	restart_redis R
	[ "$(rcli exists x)" = 1 ]	# the dump was loaded
	# Nobody refreshes the entry: the next fair attempt drops it.
	sleep 1.1
	run -75 rl lock --fair -n x
	[ "$(rcli llen "$Q")" = 0 ]
	[ "$(rcli zcard "$Z")" = 0 ]
}

@test "several masters: a waiter survives CLIENT KILL TYPE pubsub on every master" {
	for m in M1 M2 M3; do redis-cli -p "$(eval echo "\$${m}_PORT")" flushall >/dev/null; done
	tok=$("$RL" -u "$URLS" lock -t 60s x)
	"$RL" -u "$URLS" exec -w 20s x -- sh -c 'date +%s%N >"$0/start"' "$D" 3>&- &
	epid=$!
	for m in M1 M2 M3; do
		port=$(eval echo "\$${m}_PORT")
		wait_for 5 eval "[ \"\$(pubsub_ids $port | grep -c .)\" -ge 1 ]"
	done
	for m in M1 M2 M3; do
		kill_subs_and_wait "$(eval echo "\$${m}_PORT")" 1
	done
	! dead "$epid" || false
	t0=$(date +%s%N)
	"$RL" -u "$URLS" unlock --owner "$tok" x
	st=0
	reap "$epid" || st=$?
	[ "$st" -eq 0 ]
	woke=$((($(cat "$D/start") - t0) / 1000000))
	echo "started $woke ms after the release" >&3
	[ "$woke" -lt 5000 ]
}
