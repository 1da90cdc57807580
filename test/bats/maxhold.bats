#!/usr/bin/env bats
# exec --max-hold: COMMAND stopped once it has held NAME that long, as for a
# lost lease; the lock renewed until COMMAND's process group is gone, then
# released; exit 124.

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
}
teardown() {
	kill_ours KILL ${epid-}
	stop_strays
}

@test "--max-hold 1s on sleep 30: SIGTERM at 1s, exit 124 with one line, well within 1s + --kill-after, lock free" {
	t0=$(now_ms)
	run -124 --separate-stderr rl exec -t 3s --max-hold 1s x -- sleep 30
	took=$(($(now_ms) - t0))
	echo "exited $took ms after the start" >&3
	assert_equal "$stderr" "redlock: COMMAND held x for --max-hold 1s: it was stopped and the lock released"
	[ "$took" -ge 1000 ]
	[ "$took" -lt 6000 ]
	key_gone x
	key_gone "redlock_holder:{x}"
}

@test "--max-hold: a COMMAND that ignores SIGTERM gets SIGKILL --kill-after later, with its whole group" {
	t0=$(now_ms)
	# shellcheck disable=SC2016
	run -124 --separate-stderr rl exec -t 3s --max-hold 1s --kill-after 1s x -- \
	    sh -c 'trap "" TERM; sleep 30 & echo $! >"$0/kid"; wait; wait' "$D"
	took=$(($(now_ms) - t0))
	echo "exited $took ms after the start (SIGTERM at 1 s, SIGKILL at 2 s)" >&3
	assert_equal "$stderr" "redlock: COMMAND held x for --max-hold 1s: it was stopped and the lock released"
	[ "$took" -ge 2000 ]
	[ "$took" -lt 10000 ]
	dead "$(cat "$D/kid")"
	key_gone x
}

@test "--max-hold: the lock stays held and renewed until COMMAND's process group is gone, not only COMMAND" {
	# COMMAND dies of SIGTERM at 1 s; a process of its group that ignores
	# it lives until SIGKILL at 1 s + --kill-after 5s, past the 1 s lease.
	# shellcheck disable=SC2016
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec -t 1s --max-hold 1s \
	    --kill-after 5s x -- sh -c '(trap "" TERM; exec sleep 30) &
	    echo $! >"$0/kid"; echo $$ >"$0/cmd"; exec sleep 30' "$D" \
	    2>"$D/err" 3>&- &
	epid=$!
	t0=$(now_ms)
	wait_for 10 test -s "$D/cmd"
	wait_for 10 dead "$(cat "$D/cmd")"
	# COMMAND is gone; what is left of its group still runs: held.
	nap 1.5
	kill -0 "$(cat "$D/kid")"
	[ "$(rcli exists x)" = 1 ]
	[ "$(rcli pttl x)" -gt 0 ]
	st=0
	reap -t 30 "$epid" || st=$?
	took=$(($(now_ms) - t0))
	echo "exited $took ms after the start (SIGKILL due at 6 s)" >&3
	[ "$st" = 124 ]
	[ "$took" -ge 5500 ]
	dead "$(cat "$D/kid")"
	key_gone x
	[ "$(cat "$D/err")" = "redlock: COMMAND held x for --max-hold 1s: it was stopped and the lock released" ]
}

@test "--max-hold with --limit 2 and --on-lost kill: SIGKILL at once, the permit given back, 124" {
	t0=$(now_ms)
	run -124 --separate-stderr rl exec --limit 2 -t 1s --max-hold 1s \
	    --on-lost kill x -- sh -c 'trap "" TERM; sleep 30'
	took=$(($(now_ms) - t0))
	echo "exited $took ms after the start, with no --kill-after" >&3
	# Not after --kill-after (5 s by default).
	[ "$took" -ge 1000 ]
	[ "$took" -lt 5500 ]
	[[ $stderr == "redlock: COMMAND held x for --max-hold 1s: it was stopped and the lock released" ]]
	[ "$(rcli zcard "{x}:timeout")" = 0 ]
}

@test "--max-hold with -s: the read hold is given back, 124" {
	run -124 --separate-stderr rl exec -s -t 3s --max-hold 1s x -- sleep 30
	key_gone x
	key_gone "redlock_holder:{x}"
}

@test "--max-hold counts from the acquisition, not from the start of the wait" {
	rl lock -t 1500ms x >/dev/null
	t0=$(now_ms)
	run -124 --separate-stderr rl exec -t 3s -w 10s --max-hold 1s x -- sleep 30
	took=$(($(now_ms) - t0))
	echo "exited $took ms after the start of a 1.5 s wait" >&3
	[ "$took" -ge 2400 ]
	key_gone x
}

@test "--max-hold: a COMMAND that ends first exits with its own status; 0 is off" {
	run -3 --separate-stderr rl exec -t 3s --max-hold 5s x -- sh -c 'exit 3'
	assert_equal "$stderr" ""
	run -0 --separate-stderr rl exec --max-hold 0 x -- sleep 0.1
	assert_equal "$stderr" ""
	key_gone x
}

@test "--max-hold: bad input is a usage error (64) that says why, and writes nothing" {
	run -64 --separate-stderr rl exec --max-hold 5q x -- touch "$D/ran"
	[[ $stderr == "redlock: --max-hold: bad duration '5q'"* ]]
	run -64 --separate-stderr rl exec --max-hold -1 x -- touch "$D/ran"
	run -64 --separate-stderr rl exec --max-hold '' x -- touch "$D/ran"
	run -64 --separate-stderr rl exec --max-hold x -- touch "$D/ran"
	# Shorter than the renewal period: a third of --ttl (30 s by default).
	run -64 --separate-stderr rl exec --max-hold 1s x -- touch "$D/ran"
	[[ $stderr == "redlock: --max-hold 1s is shorter than the renewal period (10.0s, for --ttl 30.0s): "*"give --ttl 3.0s or less, or a longer --max-hold;"* ]]
	run -64 --separate-stderr rl exec -t 3s --max-hold 999ms x -- touch "$D/ran"
	[[ $stderr == *"is shorter than the renewal period (1.0s, for --ttl 3.0s)"* ]]
	# A read hold is renewed at least every 9 s, whatever its lease.
	run -64 --separate-stderr rl exec -s -t 60s --max-hold 8s x -- touch "$D/ran"
	[[ $stderr == *"is shorter than the renewal period (9.0s, for --ttl 1m00s)"* ]]
	# Nothing would stop COMMAND.
	run -64 --separate-stderr rl exec --on-lost ignore --max-hold 1m x -- touch "$D/ran"
	[[ $stderr == "redlock: --max-hold with --on-lost ignore: nothing would stop COMMAND"* ]]
	# lock runs nothing.
	run -64 --separate-stderr rl lock --max-hold 1m x
	[[ $stderr == "redlock: --max-hold is for exec: lock runs no COMMAND to stop"* ]]
	run -64 --separate-stderr rl lock --keepalive --max-hold 1m x
	[ ! -e "$D/ran" ]
	[ "$(rcli dbsize)" = 0 ]
}

@test "--max-hold with a longer --min-hold: exit 124, and the line says the lock stays held until the end of the minimum hold, not released" {
	run -124 --separate-stderr rl exec -t 3s --max-hold 1s --min-hold 20s x -- sleep 30
	until=$(rl status --json x | jq -er .held_until_ms)
	when=$(date -u -d "@$((until / 1000)).$(printf %03d $((until % 1000)))" +%Y-%m-%dT%H:%M:%S.%3NZ)
	assert_equal "$stderr" "redlock: COMMAND held x for --max-hold 1s: it was stopped; the lock stays held until $when, the end of its minimum hold (--min-hold)"
	[ "$(rcli exists x)" = 1 ]
	run -0 rl status --json x
	echo "$output" | jq -e '.finished == true'
}
