#!/usr/bin/env bats
# --supersede: a newer --supersede waiter for a name makes every older one
# give up at once (exit 80, a status of their own that -E does not change,
# naming its successor), out of the
# room and the fair queue; the holder is not disturbed, and waiters
# without --supersede are neither superseded nor supersede. Pushed: the
# newer waiter's call wakes the older ones on their own channels.

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
	bg=()
}
teardown() {
	local p
	kill_ours KILL "${bg[@]}"
	for p in "${bg[@]}"; do wait "$p" 2>/dev/null || :; done
	[ -z "${M2_PID-}" ] || stop_redis "$M2_PID"
	[ -z "${M3_PID-}" ] || stop_redis "$M3_PID"
	stop_strays
}

SUP='redlock_supersede:{x}'
HOST=$(hostname)

# The script calls since CONFIG RESETSTAT (as herd.bats counts them).
calls() {
	rcli info commandstats |
	    sed -n 's/^cmdstat_eval\(sha\)\{0,1\}:calls=\([0-9]*\),.*/\2/p' |
	    awk '{ n += $1 } END { print n + 0 }'
}
# The waiter labelled $1 waits with --supersede (its first call is done).
registered() { rcli hvals "$SUP" | grep -q "\"cmd\":\"$1\""; }
# holder SECONDS: exec holds x for SECONDS, its output and exit status
# (7) in $D/holder.out and $D/holder.st; returns once x is held. URL in
# the environment: the masters (default: R).
holder() {
	(
		s=0
		"$RL" -u "${URL:-redis://127.0.0.1:$R_PORT}" exec -t 60s x -- \
		    sh -c "echo holder start; sleep $1; echo holder end; exit 7" \
		    >"$D/holder.out" 2>"$D/holder.err" 3>&- || s=$?
		echo "$s" >"$D/holder.st"
	) &
	bg+=($!)
	wait_for 30 eval '[ "$(rcli exists x)" = 1 ]'
}
# waiter LABEL OPTS...: exec -w 60s OPTS x, labelled LABEL, in the
# background; its stderr in $D/LABEL.err, COMMAND's output in
# $D/LABEL.out, and "STATUS END_MS" (the local clock) in $D/LABEL.st.
# URL in the environment: the masters (default: R).
waiter() {
	local label=$1
	shift
	(
		s=0
		"$RL" -u "${URL:-redis://127.0.0.1:$R_PORT}" exec -w 60s \
		    --label "$label" "$@" x -- echo "$label ran" \
		    >"$D/$label.out" 2>"$D/$label.err" 3>&- || s=$?
		echo "$s $(now_ms)" >"$D/$label.st"
	) &
	bg+=($!)
}
# The holder's exit status, once it has ended.
holder_st() { wait_for 30 eval '[ -s "$D/holder.st" ]' && cat "$D/holder.st"; }
# st LABEL: the waiter's exit status; end_ms LABEL: when it ended.
st() { cut -d' ' -f1 "$D/$1.st"; }
end_ms() { cut -d' ' -f2 "$D/$1.st"; }
done_() { [ -s "$D/$1.st" ]; }
# superseded_ms LABEL: when the waiter labelled LABEL was superseded
# (server clock, ms: its successor's first call), from the history.
superseded_ms() {
	rl log --json x | grep '"event":"superseded"' |
	    grep "\"cmd\":\"$1\",\"fence\"" | sed 's/.*"time_ms":\([0-9]*\),.*/\1/'
}

@test "4 --supersede waiters in turn: the first three give up at once, naming their successor; only the last runs" {
	holder 6
	for i in 1 2 3 4; do
		waiter "w$i" --supersede --waiter-timeout 60s
		wait_for 30 registered "w$i"
		[ "$i" = 1 ] || wait_for 5 done_ "w$((i - 1))"
		nap 0.3
	done
	wait_for 30 done_ w4
	for i in 1 2 3; do
		next=w$((i + 1))
		# 80, at once after its successor's arrival, which it names:
		# pushed, some 20 ms here; unpushed, it would wait out the
		# holder's 6 s (4 s or more from the last arrival). 800 ms
		# tells the two apart on a starved box.
		[ "$(st "w$i")" = 80 ]
		tail -n 1 "$D/w$i.err" | grep -E "^redlock: gave up on x after waiting [0-9.]+m?s: superseded by $HOST pid [0-9]+ \($next\)\$"
		[ "$(grep -c superseded "$D/w$i.err")" = 1 ]
		at=$(superseded_ms "w$i")
		[ -n "$at" ]
		lag=$(($(end_ms "w$i") - at))
		echo "w$i gave up ${lag}ms after $next arrived" >&3
		[ "$lag" -lt 800 ]
		[ ! -s "$D/w$i.out" ]
	done
	# In arrival order.
	[ "$(end_ms w1)" -le "$(end_ms w2)" ]
	[ "$(end_ms w2)" -le "$(end_ms w3)" ]
	# Only the last one ran, after the holder, which ran undisturbed.
	[ "$(st w4)" = 0 ]
	[ "$(cat "$D/w4.out")" = "w4 ran" ]
	[ "$(holder_st)" = 7 ]
	[ "$(cat "$D/holder.out")" = "holder start
holder end" ]
	[ ! -s "$D/holder.err" ]
	# The history says who superseded whom; the registry is left empty.
	run rl log x
	assert_line --regexp "superseded: $HOST pid [0-9]+ \(w1\) stopped waiting after .*: superseded by $HOST pid [0-9]+ \(w2\)"
	assert_line --regexp "superseded: .*\(w3\) stopped waiting after .*: superseded by $HOST pid [0-9]+ \(w4\)"
	refute_line --partial gave_up
	[ "$(rcli exists "$SUP")" = 0 ]
}

@test "--supersede --fair: the older entries leave the queue, the newest keeps its place at the tail" {
	holder 3
	waiter f1 --supersede --fair
	wait_for 30 registered f1
	waiter plain --fair
	wait_for 30 eval '[ "$(rcli llen "redisson_lock_queue:{x}")" = 2 ]'
	waiter f2 --supersede --fair
	wait_for 30 registered f2
	wait_for 5 done_ f1
	[ "$(st f1)" = 80 ]
	grep -q "superseded by $HOST pid [0-9]* (f2)" "$D/f1.err"
	# The fair waiter without --supersede keeps its place, first.
	run rl queue --json x
	assert_success
	[ "$(grep -o '"cmd":"[a-z0-9]*"' <<<"$output" | tr '\n' ' ')" = \
	    '"cmd":"plain" "cmd":"f2" ' ]
	[ "$(rcli llen "redisson_lock_queue:{x}")" = 2 ]
	[ "$(rcli zcard "redisson_lock_timeout:{x}")" = 2 ]
	# A third: f2 leaves, f3 is the tail, the queue only plain and f3.
	waiter f3 --supersede --fair
	wait_for 30 registered f3
	wait_for 5 done_ f2
	[ "$(st f2)" = 80 ]
	run rl queue --json x
	[ "$(grep -o '"cmd":"[a-z0-9]*"' <<<"$output" | tr '\n' ' ')" = \
	    '"cmd":"plain" "cmd":"f3" ' ]
	wait_for 30 done_ f3
	[ "$(st plain)" = 0 ]
	[ "$(st f3)" = 0 ]
	[ "$(holder_st)" = 7 ]
	[ "$(rcli exists "redisson_lock_queue:{x}")" = 0 ]
}

@test "--supersede: waiters without it are not superseded, and do not supersede" {
	holder 2
	waiter p1
	wait_for 30 eval '[ "$(rcli zcard "redlock_room:{x}")" = 1 ]'
	waiter s1 --supersede
	wait_for 30 registered s1
	waiter p2
	wait_for 30 eval '[ "$(rcli zcard "redlock_room:{x}")" = 3 ]'
	nap 0.3
	# Nobody gave up: s1 superseded nothing older, p2 is no superseder.
	! done_ p1
	! done_ s1
	wait_for 30 done_ p1
	wait_for 30 done_ s1
	wait_for 30 done_ p2
	[ "$(st p1)" = 0 ]
	[ "$(st s1)" = 0 ]
	[ "$(st p2)" = 0 ]
	run rl log x
	refute_line --partial superseded
}

@test "--supersede -n: supersedes the older waiters, then gives up at once when busy" {
	holder 2
	waiter s1 --supersede
	wait_for 30 registered s1
	run -75 rl exec -n --supersede --label now x -- echo ran
	assert_output --partial "x is busy: held by $HOST"
	wait_for 5 done_ s1
	[ "$(st s1)" = 80 ]
	grep -q "superseded by $HOST pid [0-9]* (now)" "$D/s1.err"
	# The -n caller does not wait: it is not registered, not in the room.
	[ "$(rcli exists "$SUP")" = 0 ]
	[ "$(rcli zcard "redlock_room:{x}")" = 0 ]
	# On lock too; -E changes the busy status, not the superseded one
	# (once 3 here: -E's code), so that CI tells the two apart.
	waiter s2 --supersede -E 3
	wait_for 30 registered s2
	run -75 rl lock -n --supersede --label now2 x
	wait_for 5 done_ s2
	[ "$(st s2)" = 80 ]
	grep -q "superseded by $HOST pid [0-9]* (now2)" "$D/s2.err"
	[ "$(holder_st)" = 7 ]
}

@test "--supersede is pushed, not polled: no script call while waiting, one wake-up per waiter superseded" {
	holder 8
	# Heartbeats a minute apart: only a message can end a wait sooner.
	waiter s1 --supersede --waiter-timeout 60s
	wait_for 30 registered s1
	waiter s2 --supersede --waiter-timeout 60s
	wait_for 30 registered s2
	wait_for 5 done_ s1
	# Both subscribed (each tries once more then), then a quiet second.
	wait_for 30 eval '[ "$(rcli pubsub numsub "redisson_lock__channel:{x}:$(rcli hkeys "$SUP")" | sed -n 2p)" = 1 ]'
	nap 0.5
	rcli config resetstat >/dev/null
	nap 1
	[ "$(calls)" = 0 ]
	t0=$(now_ms)
	waiter s3 --supersede --waiter-timeout 60s
	wait_for 5 done_ s2
	[ "$(st s2)" = 80 ]
	[ $(($(end_ms s2) - t0)) -lt 2000 ]
	wait_for 30 registered s3
	nap 0.5
	# s3's first call and its calls once subscribed (its own channel,
	# and the name's as the room's listener), s2's call that found
	# itself superseded and its leaving the room: no more.
	n=$(calls)
	echo "script calls: $n" >&3
	[ "$n" -le 6 ]
	wait_for 30 done_ s3
	[ "$(st s3)" = 0 ]
}

@test "--supersede on several masters" {
	start_redis M2
	start_redis M3
	urls="redis://127.0.0.1:$R_PORT,redis://127.0.0.1:$M2_PORT,redis://127.0.0.1:$M3_PORT"
	URL=$urls holder 2
	wait_for 30 eval '[ "$(redis-cli -p "$M3_PORT" exists x)" = 1 ]'
	URL=$urls waiter m1 --supersede
	wait_for 30 registered m1
	URL=$urls waiter m2 --supersede
	wait_for 5 done_ m1
	[ "$(st m1)" = 80 ]
	grep -q "superseded by $HOST pid [0-9]* (m2)" "$D/m1.err"
	for p in "$M2_PORT" "$M3_PORT"; do
		redis-cli -p "$p" hvals "$SUP" | grep -q '"cmd":"m2"'
		! redis-cli -p "$p" hvals "$SUP" | grep -q '"cmd":"m1"'
	done
	wait_for 30 done_ m2
	[ "$(holder_st)" = 7 ]
	[ "$(cat "$D/holder.out")" = "holder start
holder end" ]
	[ "$(st m2)" = 0 ]
	[ "$(cat "$D/m2.out")" = "m2 ran" ]
}

@test "--supersede with -s, --write, --limit or --any is refused" {
	for k in -s --write "--limit 2"; do
		# shellcheck disable=SC2086
		run -64 rl exec --supersede $k x -- true
		assert_output --partial "--supersede and"
		assert_output --partial "do not go together"
		# shellcheck disable=SC2086
		run -64 rl lock --supersede $k x
	done
	# A pool's waiters are not superseded: --any with it is refused too.
	run -64 rl exec --supersede --any x y -- true
	assert_output --partial "--supersede and --any do not go together"
	run -64 rl lock --any x y --supersede
	[ "$(rcli dbsize)" = 0 ]
}

@test "--supersede: a waiter superseded between its first attempt and its subscription still gives up at once" {
	command -v python3 >/dev/null || skip "python3 is needed for the proxy"
	holder 8
	# The older waiter's SUBSCRIBE (its second command of 2 arguments,
	# after the INFO memory of its first connection: classic pub/sub
	# sends no HELLO) is held 1 s by a proxy; the newer one arrives
	# meanwhile, and its message finds nobody listening.
	start_proxy "$D/proxy" 1 --hold 2 2 "$D/forwarded" "0:$R_PORT"
	p=${proxy_ports[0]}
	bg+=("$proxy")
	URL=redis://127.0.0.1:$p waiter old --supersede --pubsub classic \
	    --waiter-timeout 60s
	wait_for 30 registered old
	waiter new --supersede --waiter-timeout 60s
	wait_for 30 registered new
	t0=$(now_ms)
	[ ! -e "$D/forwarded" ]
	# Only the newer one listens yet.
	[ "$(rcli client list | grep -c ' sub=[1-9]')" = 1 ]
	# Its attempt once subscribed finds the mark: not its heartbeat a
	# minute later, nor the holder's release.
	wait_for 10 done_ old
	[ "$(st old)" = 80 ]
	grep -q "superseded by $HOST pid [0-9]* (new)" "$D/old.err"
	[ -e "$D/forwarded" ]
	echo "gave up $(($(end_ms old) - t0))ms after the newer one's arrival" >&3
	[ $(($(end_ms old) - t0)) -lt 3000 ]
	! done_ new
	[ "$(holder_st)" = 7 ]
	wait_for 30 done_ new
	[ "$(st new)" = 0 ]
}

@test "--supersede: a waiter stopped (SIGSTOP), superseded, then continued gives up at once (80)" {
	holder 8
	waiter old --supersede --waiter-timeout 60s
	wait_for 30 registered old
	wait_for 30 eval '[ "$(rcli pubsub numsub "redisson_lock__channel:{x}:$(rcli hkeys "$SUP")" | sed -n 2p)" = 1 ]'
	# The redlock process itself (the waiter's subshell's child).
	p=$(cat /proc/"${bg[1]}"/task/*/children)
	kill -STOP "$p"
	waiter new --supersede --waiter-timeout 60s
	wait_for 30 registered new
	nap 0.5
	! done_ old
	t0=$(now_ms)
	kill -CONT "$p"
	wait_for 5 done_ old
	[ "$(st old)" = 80 ]
	grep -q "superseded by $HOST pid [0-9]* (new)" "$D/old.err"
	echo "gave up $(($(end_ms old) - t0)) ms after SIGCONT" >&3
	[ $(($(end_ms old) - t0)) -lt 1000 ]
	[ ! -s "$D/old.out" ]
	! done_ new
	wait_for 30 done_ new
	[ "$(st new)" = 0 ]
	[ "$(holder_st)" = 7 ]
}

@test "--supersede: a waiter killed (SIGKILL) is superseded all the same; its mark goes, and the newest runs" {
	holder 3
	waiter old --supersede --waiter-timeout 2s
	wait_for 30 registered old
	p=$(cat /proc/"${bg[1]}"/task/*/children)
	kill -9 "$p"
	waiter new --supersede --waiter-timeout 2s
	wait_for 30 registered new
	# The dead one's entry is out of the room at once.
	[ "$(rcli zcard 'redlock_room:{x}')" = 1 ]
	wait_for 30 done_ new
	[ "$(st new)" = 0 ]
	[ "$(cat "$D/new.out")" = "new ran" ]
	[ "$(holder_st)" = 7 ]
}

# stopped_past OPTS...: a --supersede waiter (OPTS, a 1 s waiter
# timeout: its record lasts 3 s past its last call) is stopped, a newer
# one supersedes it, runs and ends, and the record with the mark for the
# older one expires; then the older one is continued.
stopped_past() {
	holder 2
	waiter old --supersede --waiter-timeout 1s "$@"
	wait_for 30 registered old
	# The redlock process (the waiter's subshell's child) and what it
	# started (its watchdog, forked ahead), as a paused VM stops them.
	p=$(cat /proc/"${bg[1]}"/task/*/children)
	p="$p $(cat /proc/"${p% }"/task/*/children)"
	# shellcheck disable=SC2086
	kill -STOP $p
	waiter new --supersede --waiter-timeout 1s "$@"
	wait_for 30 done_ new
	[ "$(st new)" = 0 ]
	[ "$(cat "$D/new.out")" = "new ran" ]
	wait_for 30 eval '[ "$(rcli exists "$SUP")" = 0 ]'
	# shellcheck disable=SC2086
	kill -CONT $p
	wait_for 30 done_ old
}

@test "--supersede: a waiter stopped past its mark's life, superseded meanwhile, never runs (80)" {
	stopped_past
	[ "$(st old)" = 80 ]
	[ ! -s "$D/old.out" ]
	grep -q "this --supersede waiter was stopped for longer than its place lasts (3 x --waiter-timeout), so a newer one may have superseded it; run it again if it is still wanted" "$D/old.err"
	# Acquired twice in all: the holder and the newer waiter.
	[ "$(rl log --json x | grep -c '"event":"acquired"')" = 2 ]
	[ "$(holder_st)" = 7 ]
}

@test "--supersede --fair: a waiter stopped past its mark's life, superseded meanwhile, never runs (80)" {
	stopped_past --fair
	[ "$(st old)" = 80 ]
	[ ! -s "$D/old.out" ]
	grep -q "was stopped for longer than its place lasts" "$D/old.err"
	[ "$(rl log --json x | grep -c '"event":"acquired"')" = 2 ]
	# It left nothing behind in the queue.
	[ "$(rcli llen 'redisson_lock_queue:{x}')" = 0 ]
}

@test "--supersede: a waiter that waits many times its waiter timeout, not stopped, runs" {
	holder 6
	waiter long --supersede --waiter-timeout 1s
	wait_for 30 registered long
	waiter longfair --supersede --waiter-timeout 1s --fair
	wait_for 60 done_ long
	wait_for 60 done_ longfair
	# One of them was superseded by the other: the newer one runs.
	[ "$(st long)" = 80 ]
	grep -q "superseded by $HOST pid [0-9]* (longfair)" "$D/long.err"
	[ "$(st longfair)" = 0 ]
	[ "$(cat "$D/longfair.out")" = "longfair ran" ]
	[ "$(holder_st)" = 7 ]
}
