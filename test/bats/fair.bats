#!/usr/bin/env bats
# --fair: FIFO queues, heartbeats, eviction, leaving, and the queue command.

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
}

Q='redisson_lock_queue:{x}'
Z='redisson_lock_timeout:{x}'
qlen() { rcli llen "$Q"; }
qlen_is() { [ "$(qlen)" = "$1" ]; }

# fair_exec TAG ARGS...: a fair exec of x in the background, recording when
# COMMAND started and ended; its pid is in $fpid.
fair_exec() {
	local tag=$1
	shift
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec --fair "$@" x -- \
	    sh -c 'date +%s%N >"$0/$1.start"; echo "$1" >>"$0/order"; date +%s%N >"$0/$1.end"' \
	    "$D" "$tag" 3>&- &
	fpid=$!
}

# interrupt_stopped PID: SIGINT to the exec PID, stopped whole (redlock and
# the watchdog that waits for it), which then runs again: redlock first,
# until it has passed the signal on to the stopped watchdog. Continued
# together, the watchdog could run first, find the lock free and start
# COMMAND before redlock had passed the signal on (seen with two suites
# at once): the signal then went to COMMAND, which had already run.
interrupt_stopped() {
	local wd
	wd=$(descendants "$1")
	[ "$(wc -w <<<"$wd")" = 1 ]
	kill -INT "$1"
	kill -CONT "$1"
	wait_for 10 int_pending "$wd"
	kill -CONT "$wd"
}
# int_pending PID: a SIGINT sent to PID waits for it to run.
int_pending() {
	local m
	m=$(awk '/^ShdPnd:/ { print $2 }' /proc/"$1"/status) &&
	    [ $((0x$m & 2)) != 0 ]
}

# queue_fair N WAIT [ARGS...]: N fair execs, each started once the previous
# one is in the queue; their pids in $pids.
queue_fair() {
	local i n=$1 wait=$2
	shift 2
	pids=
	for i in $(seq 1 "$n"); do
		fair_exec "$i" -w "$wait" "$@"
		pids="$pids $fpid"
		wait_for 5 qlen_is "$i"
	done
}

@test "FIFO: 20 waiters acquire in exactly the order they queued" {
	tok=$(rl lock x)
	queue_fair 20 60s
	rl unlock --owner "$tok" x
	for p in $pids; do reap "$p"; done
	run cat "$D/order"
	assert_output "$(seq 1 20)"
	[ "$(rcli exists "$Q" "$Z" 'redlock_waiter:{x}' x)" = 0 ]
}

@test "a plain attempt never jumps a fair queue; -n --fair does not join it" {
	tok=$(rl lock x)
	fair_exec a -w 30s
	wait_for 5 qlen_is 1
	rl unlock --owner "$tok" x
	reap "$fpid"
	tok=$(rl lock x)
	run -75 --separate-stderr rl lock --fair -n x
	qlen_is 0
	[ "$(rcli zcard "$Z")" = 0 ]
}

@test "kill -9 of the head and of a middle waiter: the queue moves past both within waiter-timeout + 2 s" {
	tok=$(rl lock x)
	n=0
	for w in a b c d; do
		fair_exec "$w" -w 30s --waiter-timeout 1s
		eval "p_$w=$fpid"
		n=$((n + 1))
		wait_for 5 qlen_is "$n"
	done
	kill -9 "$p_a" "$p_c"
	t_kill=$(date +%s%N)
	rl unlock --owner "$tok" x
	reap "$p_b" "$p_d"
	b=$((($(cat "$D/b.start") - t_kill) / 1000000))
	d=$((($(cat "$D/d.start") - t_kill) / 1000000))
	echo "b started $b ms, d $d ms after the kill" >&3
	# Without eviction both would wait out their 30 s --wait.
	[ "$b" -lt $((1000 + 2000)) ]
	[ "$d" -lt $((1000 + 2000)) ]
	run cat "$D/order"
	assert_output $'b\nd'
	[ "$(rcli exists "$Q" "$Z")" = 0 ]
}

@test "a live waiter waiting 4x its waiter timeout is never evicted and acquires in its turn" {
	tok=$(rl lock -t 10s x)
	fair_exec first -w 30s --waiter-timeout 500ms
	p1=$fpid
	wait_for 5 qlen_is 1
	fair_exec second -w 30s --waiter-timeout 500ms
	p2=$fpid
	wait_for 5 qlen_is 2
	head=$(rcli lindex "$Q" 0)
	for _ in $(seq 1 10); do
		sleep 0.2
		[ "$(rcli lindex "$Q" 0)" = "$head" ]
		qlen_is 2
	done
	rl unlock --owner "$tok" x
	reap "$p1" "$p2"
	run cat "$D/order"
	assert_output $'first\nsecond'
}

@test "--wait running out and SIGINT both leave nothing in the list or the zset" {
	tok=$(rl lock x)
	fair_exec late -w 300ms
	p=$fpid
	status=0
	reap "$p" || status=$?
	[ "$status" -eq 75 ]
	[ "$(rcli exists "$Q" "$Z" 'redlock_waiter:{x}')" = 0 ]
	fair_exec cut -w 30s
	wait_for 5 qlen_is 1
	kill -INT "$fpid"
	status=0
	reap "$fpid" || status=$?
	[ "$status" -eq 130 ]
	[ "$(rcli exists "$Q" "$Z" 'redlock_waiter:{x}')" = 0 ]
	[ ! -e "$D/cut.start" ]
	"$RL" -u "redis://127.0.0.1:$R_PORT" lock --fair -w 30s x 3>&- &
	lp=$!
	wait_for 5 qlen_is 1
	kill -TERM "$lp"
	status=0
	reap "$lp" || status=$?
	[ "$status" -eq 143 ]
	[ "$(rcli exists "$Q" "$Z" 'redlock_waiter:{x}')" = 0 ]
}

@test "when the head leaves a free lock, the next waiter is woken at once, not by its heartbeat" {
	# Heartbeats every 20 s: only the wake-up can start b sooner.
	tok=$(rl lock x)
	fair_exec a -w 60s --waiter-timeout 60s
	pa=$fpid
	wait_for 5 qlen_is 1
	fair_exec b -w 60s --waiter-timeout 60s
	pb=$fpid
	wait_for 5 qlen_is 2
	# a stopped whole: redlock and the watchdog that waits for it.
	kill -STOP $(proc_tree "$pa")
	rl unlock --owner "$tok" x	# wakes a, which is stopped
	sleep 0.2
	t0=$(date +%s%N)
	interrupt_stopped "$pa"
	reap "$pb"
	took=$((($(cat "$D/b.start") - t0) / 1000000))
	echo "b started $took ms after a left" >&3
	[ "$took" -lt 3000 ]
	reap "$pa" || true
}

# dead_head OWNER MS: a waiter that will never come back, in Redisson's
# layout, at the tail, with a deadline MS from now on the server's clock.
dead_head() {
	rcli rpush "$Q" "$1" >/dev/null
	rcli zadd "$Z" $(($(server_ms) + $2)) "$1" >/dev/null
}

@test "a release that finds at the head a Java waiter nobody hears, within its deadline, frees the lock: no script error" {
	tok=$(rl lock -t 60s x)
	# Redisson's waiters have no record of redlock's: that one is
	# judged by its deadline alone, and woken (its channel may be on
	# another connection of its client). A redlock waiter behind it
	# has a record.
	dead_head 'java-quiet:1' 60000
	fair_exec b -w 60s --waiter-timeout 60s
	pb=$fpid
	wait_for 5 qlen_is 2
	run -0 --separate-stderr rl unlock --owner "$tok" x
	assert_equal "$stderr" ""
	key_gone x
	[ "$(rcli lindex "$Q" 0)" = java-quiet:1 ]
	kill -TERM "$pb"
	reap "$pb" || :
	[ ! -e "$D/b.start" ]
}

@test "unlock --force skips a dead head and wakes the first live waiter at once" {
	tok=$(rl lock -t 60s x)
	dead_head 'java-dead:1' 1000
	# A heartbeat every 10 s: only a wake-up brings it in sooner.
	fair_exec live -w 60s --waiter-timeout 30s
	wait_for 5 qlen_is 2
	sleep 1.1	# the dead head's deadline passes
	t0=$(date +%s%N)
	rl unlock --force x
	reap "$fpid"
	took=$((($(cat "$D/live.start") - t0) / 1000000))
	echo "the live waiter started $took ms after the forced unlock" >&3
	[ "$took" -lt 5000 ]
	[ "$(rcli exists "$Q" "$Z")" = 0 ]
}

@test "a head that leaves a free lock skips a dead waiter behind it and wakes the live one" {
	tok=$(rl lock -t 60s x)
	fair_exec a -w 60s --waiter-timeout 30s
	pa=$fpid
	wait_for 5 qlen_is 1
	dead_head 'java-dead:1' 1000
	fair_exec b -w 60s --waiter-timeout 30s
	pb=$fpid
	wait_for 5 qlen_is 3
	# a stopped whole: redlock and the watchdog that waits for it.
	kill -STOP $(proc_tree "$pa")
	rl unlock --owner "$tok" x	# wakes a, which is stopped
	sleep 1.1	# the dead waiter's deadline passes
	t0=$(date +%s%N)
	interrupt_stopped "$pa"
	reap "$pb"
	took=$((($(cat "$D/b.start") - t0) / 1000000))
	echo "b started $took ms after a left" >&3
	[ "$took" -lt 5000 ]
	reap "$pa" || true
	run cat "$D/order"
	assert_output b
}

@test "giving up behind one dead waiter says one waiter is ahead, as -n does" {
	dead_head 'java-dead:1' 20000
	run -75 --separate-stderr rl lock --fair -n x
	[[ $stderr == *"x is busy: free, but 1 fair waiter is ahead;"* ]]
	run -75 --separate-stderr rl lock --fair -w 500ms x
	[[ $stderr == *"gave up on x after waiting "*": free, but 1 fair waiter is ahead;"* ]]
	run -0 rcli lrange "$Q" 0 -1
	assert_output 'java-dead:1'
}

@test "a waiter paused past its timeout is evicted, then rejoins at the tail and says so with -v" {
	tok=$(rl lock x)
	"$RL" -u "redis://127.0.0.1:$R_PORT" lock -v --fair --waiter-timeout 300ms -w 30s x \
	    >"$D/a.out" 2>"$D/a.err" 3>&- &
	pa=$!
	wait_for 5 qlen_is 1
	kill -STOP "$pa"
	fair_exec b -w 30s --waiter-timeout 300ms
	pb=$fpid
	# a's deadline passes while it is stopped; b's heartbeat evicts it
	# (or b's own joining does, when b starts later than 300 ms after
	# the stop on a busy box): b waits alone.
	only_b() {
		local q
		q=$(rcli lrange "$Q" 0 -1)
		[[ $q == *":$pb" ]] && [ "$(wc -l <<<"$q")" = 1 ]
	}
	wait_for 10 only_b
	[ "$(rcli zscore "$Z" "$(rcli lindex "$Q" 0)")" != "" ]
	kill -CONT "$pa"
	wait_for 5 grep -q 'queued again at the tail' "$D/a.err"
	rl unlock --owner "$tok" x
	reap "$pb"
	reap "$pa"
	run cat "$D/order"
	assert_output b
	[ -s "$D/a.out" ]
}

@test "-v says a rejoin once, not again on the ticks between heartbeats" {
	tok=$(rl lock -t 60s x)
	# A heartbeat every 1.2s: the waiting line's 1s tick comes between.
	"$RL" -u "redis://127.0.0.1:$R_PORT" lock -v --fair --waiter-timeout 3600ms -w 60s x \
	    >"$D/a.out" 2>"$D/a.err" 3>&- &
	pa=$!
	wait_for 5 qlen_is 1
	kill -STOP "$pa"
	fair_exec b -w 60s --waiter-timeout 300ms
	pb=$fpid
	wait_for 5 qlen_is 2
	wait_for 10 qlen_is 1	# a's deadline passed; b's heartbeat evicted it
	kill -CONT "$pa"
	wait_for 5 grep -q 'queued again at the tail' "$D/a.err"
	# Past a's next heartbeat, and so past the tick before it.
	atok=$(rcli lindex "$Q" 1)
	[ -n "$atok" ]
	s0=$(rcli zscore "$Z" "$atok")
	wait_for 10 eval '[ "$(rcli zscore "$Z" "$atok")" != "$s0" ]'
	rl unlock --owner "$tok" x
	reap "$pb"
	reap "$pa"
	run -0 grep -c 'was dropped from the queue of x' "$D/a.err"
	assert_output 1
	[ "$(cat "$D/a.out")" = "$atok" ]
	[ "$(rcli hget x "$atok")" = 1 ]
}

@test "handoff through 50 fair waiters is pushed: the unlock and each release start the next COMMAND long before a heartbeat" {
	# Heartbeats every 40 s, the first one 40 s after a waiter joined: a
	# handoff that waited for one would show as a gap of many seconds.
	# How fast handoffs are is measured by test/bench/, not here.
	tok=$(rl lock -t 300s x)
	queue_fair 50 300s --waiter-timeout 120s
	date +%s%N >"$D/0.end"
	rl unlock --owner "$tok" x
	for p in $pids; do reap "$p"; done
	run cat "$D/order"
	assert_output "$(seq 1 50)"
	worst=0
	for i in $(seq 1 50); do
		gap=$((($(cat "$D/$i.start") - $(cat "$D/$((i - 1)).end")) / 1000000))
		[ "$gap" -gt "$worst" ] && worst=$gap
	done
	echo "worst gap from the unlock or a COMMAND's end to the next start: $worst ms" >&3
	[ "$worst" -lt 3000 ]
}

@test "queue: holder line, then position, host and pid, waiting, gives up in, command, in 80 columns" {
	tok=$(rl lock x)
	run -0 rl queue x
	assert_line --index 0 --regexp "^x: held by $(hostname) pid [0-9]+ \(.*\) for [0-9.]+m?s, lease [0-9.]+s left$"
	assert_line --index 1 'no one waiting'
	fair_exec a -w 30s
	pa=$fpid
	wait_for 5 qlen_is 1
	fair_exec b -w 30s
	pb=$fpid
	wait_for 5 qlen_is 2
	run -0 rl queue x
	assert_line --index 1 --regexp '^POS +WAITER +WAITING +GIVES UP +COMMAND$'
	# GIVES UP: the waiter's own -w 30s, not its heartbeat's deadline.
	assert_line --index 2 --regexp "^1 +$(hostname) [0-9]+ +[0-9.]+m?s +(2[0-9]|30)\.[0-9]s +sh -c "
	assert_line --index 3 --regexp "^2 +$(hostname) [0-9]+ +[0-9.]+m?s +(2[0-9]|30)\.[0-9]s +sh -c "
	# 80 columns on a terminal (script's, which has no size), where a
	# pipe gets every line whole.
	run -0 script -qec "'$RL' -u redis://127.0.0.1:$R_PORT queue x" /dev/null
	assert_line --index 2 --regexp '….$'
	for l in "${lines[@]}"; do l=${l%$'\r'}; (( $(printf %s "$l" | LC_ALL=C.UTF-8 wc -m) <= 80 )); done
	run -0 rl status --json x
	echo "$output" | jq -e '.waiting == 2'
	rl unlock --owner "$tok" x
	reap "$pa" "$pb"
	run -0 rl queue x
	assert_output $'x: free\nno one waiting'
}

@test "queue --json follows its schema" {
	# lock without --keepalive: no process renews the hold, so whether
	# its holder runs is not judged (null).
	tok=$(rl lock x)
	fair_exec a -w 30s
	wait_for 5 qlen_is 1
	run -0 rl queue --json x
	echo "$output" | jq -e --arg h "$(hostname)" '
	    (keys == ["held", "holder", "name", "unordered", "unordered_waiters", "waiters"]) and .name == "x" and .held
	    and .unordered == 0 and .unordered_waiters == []
	    and (.holder | keys == ["cmd", "finished", "held_ms", "held_until_ms", "host", "lease_ms", "owner", "pid", "running", "user"]) and .holder.running == null and .holder.finished == false
	    and (.waiters | length == 1)
	    and (.waiters[0] | keys == ["cmd", "deadline_ms", "gives_up_ms", "host", "owner", "pid", "position", "user", "waiting_ms"])
	    and .waiters[0].gives_up_ms > 20000 and .waiters[0].gives_up_ms <= 30000
	    and .waiters[0].position == 1 and .waiters[0].host == $h
	    and (.waiters[0].pid | type) == "number" and .waiters[0].deadline_ms > 0
	    and .waiters[0].waiting_ms >= 0'
	rl unlock --owner "$tok" x
	reap "$fpid"
	run -0 rl queue --json x
	echo "$output" | jq -e '.held == false and .holder == null and .waiters == [] and .unordered == 0'
}

@test "queue --watch shows snapshots until SIGINT, then exits 0" {
	"$RL" -u "redis://127.0.0.1:$R_PORT" queue --watch=200ms x >"$D/watch" 3>&- &
	p=$!
	wait_for 5 eval '[ "$(grep -c "redlock queue x" "$D/watch")" -ge 2 ]'
	kill -INT "$p"
	status=0
	reap "$p" || status=$?
	[ "$status" -eq 0 ]
	grep -q 'x: free' "$D/watch"
	run -64 --separate-stderr rl queue --watch=0 x
	run -64 --separate-stderr rl queue
}

@test "queue --watch rides out a server killed and restarted: the snapshots in between say why, the watch goes on" {
	start_redis S
	"$RL" -u "redis://127.0.0.1:$S_PORT" --reply-timeout 300ms \
	    queue --watch=200ms x >"$D/watch" 2>"$D/err" 3>&- &
	p=$!
	wait_for 5 grep -q 'x: free' "$D/watch"
	kill -9 "$S_PID"
	wait_for 10 grep -q "cannot connect to redis://127.0.0.1:$S_PORT" "$D/err"
	kill -0 "$p"
	restart_redis S
	"$RL" -u "redis://127.0.0.1:$S_PORT" lock -t 60s x >/dev/null
	wait_for 10 grep -q 'x: held' "$D/watch"
	kill -INT "$p"
	status=0
	reap "$p" || status=$?
	stop_redis "$(pid_of S)"
	[ "$status" -eq 0 ]
}

@test "a queue written in Redisson's layout is shown, and its expired entry evicted at the next acquisition" {
	tok=$(rl lock x)
	now=$(server_ms)
	rcli rpush "$Q" 'java-a:41' 'java-b:42' >/dev/null
	rcli zadd "$Z" $((now - 1000)) 'java-a:41' $((now + 60000)) 'java-b:42' >/dev/null
	run -0 rl queue x
	assert_line --index 2 --regexp '^1 +java-a:41 +- +expired +-$'
	assert_line --index 3 --regexp '^2 +java-b:42 +- +- +-$'
	run -0 rl queue --json x
	echo "$output" | jq -e '.waiters[0] | .owner == "java-a:41" and .host == null and .pid == null and .deadline_ms < 0 and .gives_up_ms == null'
	run -75 rl lock --fair -n x
	run -0 rcli lrange "$Q" 0 -1
	assert_output 'java-b:42'
	[ "$(rcli zscore "$Z" 'java-a:41')" = "" ]
}

@test "the waiting line shows the place in the queue on a terminal" {
	command -v script >/dev/null || skip "script(1) is needed for a terminal"
	tok=$(rl lock -t 1500ms x)
	fair_exec a -w 30s
	wait_for 5 qlen_is 1
	run -0 script -qfec "$RL -u redis://127.0.0.1:$R_PORT exec --fair -w 10s x -- true" /dev/null
	assert_output --partial "waiting for x (2nd of 2): held by "
}

@test "--fair usage: --waiter-timeout takes a duration of at least 30ms" {
	run -64 --separate-stderr rl lock --fair --waiter-timeout 10ms x
	[[ $stderr == *"--waiter-timeout must be at least 30ms"* ]]
	run -64 --separate-stderr rl lock --fair --waiter-timeout soon x
	[ "$(rcli dbsize)" = 0 ]
}

@test "Redisson's score arithmetic (its wait time taken off every score at a handoff) does not evict live waiters" {
	tok=$(rl lock -t 30s x)
	fair_exec 1 -w 30s --waiter-timeout 900ms
	p1=$fpid
	wait_for 5 qlen_is 1
	# A Redisson waiter behind it, 600 s ahead on the server's clock.
	now=$(rcli time | head -n 1)
	rcli rpush "$Q" java:1 >/dev/null
	rcli zadd "$Z" $(((now + 600) * 1000)) java:1 >/dev/null
	fair_exec 2 -w 30s --waiter-timeout 900ms
	p2=$fpid
	wait_for 5 qlen_is 3
	before=$(rcli lrange "$Q" 0 -1)
	# What a Redisson RFairLock acquisition does to the others.
	for w in $before; do rcli zincrby "$Z" -300000 "$w" >/dev/null; done
	sleep 1.2	# past heartbeats (300 ms) and the waiter timeout
	[ "$(rcli lrange "$Q" 0 -1)" = "$before" ]
	rcli lrem "$Q" 0 java:1 >/dev/null
	rcli zrem "$Z" java:1 >/dev/null
	rl unlock --owner "$tok" x
	reap "$p1"
	reap "$p2"
	[ "$(tr '\n' ' ' <"$D/order")" = "1 2 " ]
}

@test "a live waiter that a Redisson client evicted from the head goes back to the head, not the tail" {
	tok=$(rl lock -t 30s x)
	queue_fair 2 30s --waiter-timeout 900ms
	head=$(rcli lindex "$Q" 0)
	# Redisson evicts a head whose score its client clock finds passed.
	rcli lpop "$Q" >/dev/null
	rcli zrem "$Z" "$head" >/dev/null
	wait_for 5 qlen_is 2
	[ "$(rcli lindex "$Q" 0)" = "$head" ]
	rl unlock --owner "$tok" x
	for p in $pids; do reap "$p"; done
	[ "$(tr '\n' ' ' <"$D/order")" = "1 2 " ]
}

@test "a Redisson RLock's release, on the lock's channel only, wakes the head fair waiter at once" {
	python3 "$BATS_TEST_DIRNAME/redisson.py" --port "$R_PORT" lock x \
	    --hold 1 >"$D/java" 2>&1 3>&- &
	jpid=$!
	wait_for 10 grep -q '^acquired ' "$D/java"
	# A waiter timeout of 60 s: its heartbeat would come only after 20 s.
	fair_exec 1 -w 30s --waiter-timeout 60s
	wait_for 5 qlen_is 1
	reap "$jpid"
	t0=$(date +%s%N)
	reap "$fpid"
	ms=$((($(cat "$D/1.start") - t0) / 1000000))
	echo "the fair waiter started $ms ms after the Redisson client ended" >&3
	[ "$ms" -lt 4000 ]
}

@test "a plain waiter behind a Java holder queues, so that a Redisson RFairLock's release (to the head only) wakes it at once" {
	# An RFairLock holder: Redisson's hash, no redlock metadata.
	rcli hset x 5f1e7c1a-0000-4000-8000-000000000000:41 1 >/dev/null
	rcli pexpire x 30000 >/dev/null
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec -w 20s x -- \
	    sh -c 'date +%s%N >"$0/ran"' "$D" 3>&- &
	epid=$!
	wait_for 5 qlen_is 1
	head=$(rcli lindex "$Q" 0)
	# RFairLock's unlock: the hash goes, and only the head is told.
	t0=$(date +%s%N)
	rcli del x >/dev/null
	rcli publish "redisson_lock__channel:{x}:$head" 0 >/dev/null
	reap "$epid"
	ms=$((($(cat "$D/ran") - t0) / 1000000))
	echo "the plain waiter ran $ms ms after the release (lease had 30 s left)" >&3
	[ "$ms" -lt 4000 ]
	# It took the lock as a plain lock does and left the queue.
	[ "$(qlen)" = 0 ]
	[ "$(rcli exists "$Z" 'redlock_waiter:{x}')" = 0 ]
}

@test "a plain waiter behind a Java holder that gives up leaves the queue; behind a redlock holder it does not queue" {
	rcli hset x 5f1e7c1a-0000-4000-8000-000000000000:41 1 >/dev/null
	rcli pexpire x 30000 >/dev/null
	run -75 --separate-stderr rl exec -w 500ms x -- true
	[ "$(qlen)" = 0 ]
	rcli del x >/dev/null
	tok=$(rl lock -t 30s x)
	rl exec -w 20s x -- true 3>&- &
	epid=$!
	sleep 0.5
	[ "$(qlen)" = 0 ]
	rl unlock --owner "$tok" x
	reap "$epid"
}
