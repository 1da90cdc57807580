#!/usr/bin/env bats
# lock --owner TOKEN --extend DURATION: a later job lengthens the hold an
# earlier one took, without a hold of its own, on one server and across
# three masters; a semaphore's permit and a read-write lock's holds are
# extended each as its own kind.

load helpers

setup_file() {
	for m in R M1 M2 M3; do start_redis "$m"; done
	export URLS="redis://127.0.0.1:$M1_PORT,redis://127.0.0.1:$M2_PORT,redis://127.0.0.1:$M3_PORT"
}
teardown_file() {
	for m in R M1 M2 M3; do stop_redis "$(pid_of "$m")"; done
}
setup() {
	for m in R M1 M2 M3; do
		redis-cli -p "$(eval echo "\$${m}_PORT")" flushall >/dev/null
	done
}

rlm() { "$RL" -u "$URLS" "$@"; }
mcli() { local m=$1; shift; redis-cli -p "$(eval echo "\$${m}_PORT")" "$@"; }
# A well-formed token that holds nothing.
STRANGER=00000000-0000-4000-8000-000000000000:1
# state CLI NAME: what a hold is made of, but its leases (which run
# down): the lock's hash and the holder records, sorted.
state() {
	local c=$1
	{
		$c hgetall "$2"
		$c hgetall "redlock_holder:{$2}"
	} | paste - - | sort
}

@test "lock in one job, extend from another, unlock from a third: held past the first lease" {
	# Each job is a process of its own, sharing nothing but the token.
	# (A first lease of 2 s: the extend comes well within it, however
	# slow the box.)
	tok=$(sh -c '"$1" -u "$2" lock -t 2s job' sh "$RL" "redis://127.0.0.1:$R_PORT")
	[ -n "$tok" ]
	run -0 --separate-stderr sh -c '"$1" -u "$2" lock --owner "$3" --extend 20s job' \
	    sh "$RL" "redis://127.0.0.1:$R_PORT" "$tok"
	assert_output ''
	assert_equal "$stderr" ''
	left=$(rcli pttl job)
	[ "$left" -gt 15000 ] && [ "$left" -le 20000 ]
	[ "$(rcli pttl 'redlock_holder:{job}')" -gt 15000 ]
	# The first lease has ended; the hold has not.
	nap 2.2
	run -0 rl status job
	assert_equal "$(rcli hget job "$tok")" 1
	run -0 --separate-stderr sh -c '"$1" -u "$2" unlock --owner "$3" job' \
	    sh "$RL" "redis://127.0.0.1:$R_PORT" "$tok"
	key_gone job
	key_gone 'redlock_holder:{job}'
}

@test "extend by a wrong token exits 1 with one line, and changes nothing" {
	tok=$(rl lock -t 5s x)
	before=$(state rcli x)
	p0=$(rcli pttl x)
	h0=$(rcli pttl 'redlock_holder:{x}')
	run -1 --separate-stderr rl lock --owner "$STRANGER" --extend 60s x
	assert_output ''
	[ "$(printf '%s\n' "$stderr" | wc -l)" = 1 ]
	[[ "$stderr" == *"x is not held by that owner"*"nothing was changed"* ]]
	assert_equal "$(state rcli x)" "$before"
	[ "$(rcli pttl x)" -le "$p0" ]
	[ "$(rcli pttl 'redlock_holder:{x}')" -le "$h0" ]
	rl unlock --owner "$tok" x
}

@test "extend of a free name exits 1 and creates nothing" {
	run -1 --separate-stderr rl lock --owner "$STRANGER" --extend 10s free
	[[ "$stderr" == *"free is not held by that owner"* ]]
	assert_equal "$(rcli dbsize)" 0
	# Nor after its lease ran out.
	tok=$(rl lock -t 50ms gone)
	wait_for 5 key_gone gone
	run -1 --separate-stderr rl lock --owner "$tok" --extend 10s gone
	key_gone gone
	key_gone 'redlock_holder:{gone}'
}

@test "extend of a key of another type exits 65 and leaves it alone" {
	rcli rpush x a >/dev/null
	run -65 --separate-stderr rl lock --owner "$STRANGER" --extend 10s x
	[[ "$stderr" == *"x is not a lock: key x holds a list; nothing was changed"* ]]
	assert_equal "$(rcli lrange x 0 -1)" a
	assert_equal "$(rcli pttl x)" -1
}

@test "extend never adds a hold: one unlock still frees NAME" {
	tok=$(rl lock -t 5s x)
	before=$(state rcli x)
	for _ in 1 2 3; do rl lock --owner "$tok" --extend 10s x; done
	assert_equal "$(state rcli x)" "$before"
	assert_equal "$(rcli hget x "$tok")" 1
	rl unlock --owner "$tok" x
	key_gone x
	# A re-entered hold keeps its two, and two unlocks free it.
	tok=$(rl lock -t 5s y)
	rl lock --owner "$tok" y >/dev/null
	rl lock --owner "$tok" --extend 10s y
	assert_equal "$(rcli hget y "$tok")" 2
	rl unlock --owner "$tok" y
	rl unlock --owner "$tok" y
	key_gone y
}

@test "extend with less than the lease left keeps the longer lease" {
	tok=$(rl lock -t 60s x)
	run -0 rl lock --owner "$tok" --extend 2s x
	[ "$(rcli pttl x)" -gt 50000 ]
	[ "$(rcli pttl 'redlock_holder:{x}')" -gt 50000 ]
	# And more than is left lengthens it.
	run -0 rl lock --owner "$tok" --extend 90s x
	[ "$(rcli pttl x)" -gt 80000 ]
	rl unlock --owner "$tok" x
}

@test "extend of a plain lock is one script call, by the server's clock" {
	tok=$(rl lock -t 5s warm)
	rl lock --owner "$tok" --extend 10s warm
	tok=$(rl lock -t 5s x)
	rcli config resetstat >/dev/null
	rl lock --owner "$tok" --extend 10s x
	[[ " $(commandstats)" == *" evalsha=1 "* ]]
	[[ "$(commandstats)" != *eval=* ]]
	run -0 toplevel rl lock --owner "$tok" --extend 10s x
	assert_output $'HELLO\nEVALSHA'
	rl unlock --owner "$tok" x
}

@test "three masters: extend on a quorum, one script call each; a wrong token changes none" {
	tok=$(rlm lock -t 10s x)
	# The renewal script loaded on each master: no NOSCRIPT below.
	rlm lock --owner "$tok" --extend 1s x
	for m in M1 M2 M3; do
		mcli "$m" config resetstat >/dev/null
	done
	run -0 --separate-stderr rlm lock --owner "$tok" --extend 20s x
	for m in M1 M2 M3; do
		[ "$(mcli "$m" pttl x)" -gt 15000 ]
		assert_equal "$(mcli "$m" hget x "$tok")" 1
		# Two script calls: the client's check that the three are
		# three servers (runid, on every start with several masters),
		# and the renewal: one run of renew.lua (its one HMGET).
		stats=" $(commandstats -p "$(eval echo "\$${m}_PORT")") "
		[[ "$stats" == *" evalsha=2 "* && "$stats" == *" hmget=1 "* ]]
	done
	before=$(state "mcli M2" x)
	run -1 --separate-stderr rlm lock --owner "$STRANGER" --extend 60s x
	[[ "$stderr" == *"not held by that owner"* ]]
	assert_equal "$(state "mcli M2" x)" "$before"
	for m in M1 M2 M3; do [ "$(mcli "$m" pttl x)" -le 20000 ]; done
	# Lost on one master: two of three are a quorum, and it is extended.
	mcli M3 del x >/dev/null
	run -0 rlm lock --owner "$tok" --extend 30s x
	[ "$(mcli M1 pttl x)" -gt 25000 ]
	assert_equal "$(mcli M3 exists x)" 0
	# Lost on two: no quorum holds it, exit 1, and nothing is made
	# again where it is gone (M1's script runs on its own, as a
	# renewal's does: its minority hold ends with its lease).
	mcli M2 del x >/dev/null
	run -1 --separate-stderr rlm lock --owner "$tok" --extend 60s x
	[[ "$stderr" == *"x is not held by that owner"* ]]
	assert_equal "$(mcli M2 exists x)" 0
	assert_equal "$(mcli M3 exists x)" 0
	run -0 rlm unlock --owner "$tok" x
	for m in M1 M2 M3; do assert_equal "$(mcli "$m" exists x)" 0; done
}

@test "a semaphore: extend lengthens the owner's permit only, by the server's TIME" {
	a=$(rl lock --limit 2 -t 3s sem)
	b=$(rl lock --limit 2 -t 3s sem)
	before=$(rcli zrange '{sem}:timeout' 0 -1 withscores | paste - - | sort)
	run -0 --separate-stderr rl lock --owner "$a" --extend 20s sem
	now=$(server_ms)
	# One permit now ends 20 s from the server's now, the other as it was.
	last=$(rcli zrange '{sem}:timeout' -1 -1 withscores | tail -n 1)
	first=$(rcli zrange '{sem}:timeout' 0 0 withscores | tail -n 1)
	[ $((last - now)) -gt 18000 ] && [ $((last - now)) -le 20000 ]
	[ $((first - now)) -le 3000 ]
	[[ "$before" == *"$first"* ]]
	# The lease outlives b's: b's permit runs out, a's stays.
	wait_for 8 eval '[ "$(server_ms)" -gt "$first" ]'
	run -0 rl lock --owner "$a" --extend 20s sem
	run -1 --separate-stderr rl lock --owner "$b" --extend 20s sem
	[[ "$stderr" == *"sem is not held by that owner"* ]]
	run -1 rl lock --owner "$STRANGER" --extend 20s sem
	rl unlock --owner "$a" sem
	run -1 rl lock --owner "$a" --extend 20s sem
}

@test "a read-write lock: extend lengthens a reader's own lease keys, and a writer's hold" {
	r=$(rl lock -s -t 3s rw)
	lease="{rw}:$r:rwlock_timeout:1"
	[ "$(rcli pttl "$lease")" -le 3000 ]
	run -0 --separate-stderr rl lock --owner "$r" --extend 20s rw
	[ "$(rcli pttl "$lease")" -gt 15000 ]
	[ "$(rcli pttl rw)" -gt 15000 ]
	assert_equal "$(rcli hget rw "$r")" 1
	# The read hold outlives its first lease.
	nap 3.2
	assert_equal "$(rcli exists "$lease")" 1
	rl unlock --owner "$r" rw
	key_gone rw
	w=$(rl lock --write -t 3s rw)
	run -0 --separate-stderr rl lock --owner "$w" --extend 20s rw
	[ "$(rcli pttl rw)" -gt 15000 ]
	assert_equal "$(rcli hget rw "$w:write")" 1
	run -1 rl lock --owner "$STRANGER" --extend 20s rw
	rl unlock --owner "$w" rw
	key_gone rw
}

@test "bad input: nothing is sent, nothing changes" {
	tok=$(rl lock -t 5s x)
	before=$(state rcli x)
	rcli config resetstat >/dev/null
	run -64 --separate-stderr rl lock --owner "$tok" --extend 3x x
	[[ "$stderr" == *"--extend: bad duration '3x'"* ]]
	run -64 --separate-stderr rl lock --owner "$tok" --extend 10ms x
	[[ "$stderr" == *"--extend must be at least 30ms"* ]]
	run -64 --separate-stderr rl lock --owner "$tok" --extend 99999999h x
	run -64 --separate-stderr rl lock --owner "$tok" -t 5s --extend 10s x
	[[ "$stderr" == *"--ttl does not go with --extend"* ]]
	for o in -n --fair --keepalive -s --write '--limit 2' '--min-hold 1s' \
	    '--label l' '-w 1s'; do
		# shellcheck disable=SC2086
		run -64 --separate-stderr rl lock --owner "$tok" $o --extend 10s x
		[[ "$stderr" == *"does not go with --extend"* ]]
	done
	# A pool's names: --extend is of one hold.
	run -64 --separate-stderr rl lock --owner "$tok" --any --extend 10s x y
	[[ "$stderr" == *"--any does not go with --extend"* ]]
	# Without --owner, no hold is known: exit 1, as the issue says.
	run -1 --separate-stderr rl lock --extend 10s x
	[[ "$stderr" == *"lock --extend needs --owner TOKEN"* ]]
	[ "$(printf '%s\n' "$stderr" | wc -l)" = 1 ]
	# Nothing reached the server: no script, no connection.
	assert_equal "$(commandstats)" ''
	assert_equal "$(state rcli x)" "$before"
	[ "$(rcli pttl x)" -le 5000 ]
	rl unlock --owner "$tok" x
}

@test "extend while the master hangs, is down, and after it restarted empty: 69, then 0, then 1, nothing made" {
	start_redis X
	xu="redis://127.0.0.1:$X_PORT"
	tok=$("$RL" -u "$xu" lock -t 10s x)
	# Hung (SIGSTOP): no answer within --reply-timeout, 69; the hold is
	# as it was, and once the master answers again, extended.
	kill -STOP "$X_PID"
	run -69 --separate-stderr "$RL" -u "$xu" --reply-timeout 500ms lock \
	    --owner "$tok" --extend 30s x
	[[ "$stderr" == *"no answer from $xu"* ]]
	kill -CONT "$X_PID"
	[ "$(redis-cli -p "$X_PORT" pttl x)" -le 10000 ]
	run -0 "$RL" -u "$xu" lock --owner "$tok" --extend 30s x
	[ "$(redis-cli -p "$X_PORT" pttl x)" -gt 25000 ]
	# Down: 69 at once. Restarted without its data: the hold is gone,
	# 1, and nothing is made again.
	kill -9 "$X_PID"
	wait "$X_PID" 2>/dev/null || :
	run -69 --separate-stderr "$RL" -u "$xu" lock --owner "$tok" --extend 30s x
	restart_redis X
	run -1 --separate-stderr "$RL" -u "$xu" lock --owner "$tok" --extend 30s x
	[[ "$stderr" == *"x is not held by that owner"* ]]
	[ "$(redis-cli -p "$X_PORT" dbsize)" = 0 ]
	stop_redis "$(pid_of X)"
}

@test "a pool's token (lock --any) extends the name it took, and no other name of the pool" {
	other=$(rl lock -t 60s a1)
	run -0 rl lock -t 2s --any a1 a2 a3
	tok=${lines[0]}
	[ "${lines[1]}" = a2 ]
	run -0 rl lock --owner "$tok" --extend 60s a2
	[ "$(rcli pttl a2)" -gt 55000 ]
	before=$(state rcli a1)
	for n in a1 a3; do
		run -1 --separate-stderr rl lock --owner "$tok" --extend 60s "$n"
		[[ "$stderr" == *"$n is not held by that owner"* ]]
	done
	assert_equal "$(state rcli a1)" "$before"
	key_gone a3
	rl unlock --owner "$tok" a2
	rl unlock --owner "$other" a1
}
