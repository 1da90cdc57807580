#!/usr/bin/env bats
# --min-hold DURATION: a hold given back before DURATION has passed since
# its acquisition stays, finished, until then, so that a fleet's runs of
# one schedule run once; for every kind and with several masters.

load helpers

setup_file() {
	start_redis R
	start_redis M2
	start_redis M3
	export URLS="redis://127.0.0.1:$R_PORT,redis://127.0.0.1:$M2_PORT,redis://127.0.0.1:$M3_PORT"
}
teardown_file() {
	for m in R M2 M3; do stop_redis "$(pid_of "$m")"; done
}
setup() {
	for m in R M2 M3; do
		redis-cli -p "$(eval echo "\$${m}_PORT")" flushall >/dev/null
	done
	D=$BATS_TEST_TMPDIR
	bg=()
}
teardown() { stop_bg; stop_strays; }

# The URL(s) a "host" of the schedule runs against: one server, or the
# three masters with SCHED_URL=multi.
url() { if [ "${SCHED_URL-}" = multi ]; then echo "$URLS"; else echo "redis://127.0.0.1:$R_PORT"; fi; }
# host N ARGS...: one host's run of the schedule, a 0.2 s job that notes
# the run in $D/runs; its own process, so its own owner token. Exit
# status in $D/hN.rc, stderr in $D/hN.err.
host() {
	local n=$1 rc=0
	shift
	"$RL" -u "$(url)" exec -n --min-hold 5s "$@" sched -- \
	    sh -c 'echo "run $0" >>"$1"; sleep 0.2' "$n" "$D/runs" \
	    2>"$D/h$n.err" || rc=$?
	echo "$rc" >"$D/h$n.rc"
}
rc_of() { cat "$D/h$1.rc" 2>/dev/null; }
done_host() { [ -s "$D/h$1.rc" ]; }
# The end of the finished hold of sched, from status --json.
held_until() {
	"$RL" -u "$(url)" status --json sched | jq -er '.held_until_ms // .permits[0].held_until_ms'
}
past() { [ "$(server_ms)" -gt "$1" ]; }

# Three hosts 0.5 s apart (each starts once the one before it has ended,
# and 0.5 s after it started): the first runs, the others exit 75 naming
# it as finished; once its minimum hold has ended, the next one runs.
schedule() {
	local t
	t=$(now_ms)
	host 1 "$@"
	[ "$(rc_of 1)" = 0 ]
	for n in 2 3; do
		wait_for 5 eval "[ \$((\$(now_ms) - $t)) -ge 500 ]"
		t=$(now_ms)
		host "$n" "$@"
		echo "host $n: $(cat "$D/h$n.err")" >&3
		[ "$(rc_of "$n")" = 75 ]
		grep -q "is busy: .*finished, held until .* (--min-hold)" "$D/h$n.err"
	done
	[ "$(grep -c run "$D/runs")" = 1 ]
	until=$(held_until)
	# The minimum hold ends 5 s after the first acquisition.
	wait_for 30 past "$until"
	host 4 "$@"
	[ "$(rc_of 4)" = 0 ]
	[ "$(grep -c run "$D/runs")" = 2 ]
	[ "$(grep -c 'run 4' "$D/runs")" = 1 ]
}

@test "three hosts of one schedule with --min-hold 5s: one runs, the others skip (75) naming it finished; after 5s the next runs" {
	schedule
	[ "$(rcli exists sched)" = 1 ]	# host 4's own minimum hold
}

@test "the same with --fair" {
	schedule --fair
}

@test "the same with --limit 1" {
	schedule --limit 1
	# The finished permit is still a permit taken, until its end.
	[ "$(rcli zcard '{sched}:timeout')" = 1 ]
	[ "$(rcli get sched)" = 0 ]
}

@test "the same with 3 masters" {
	SCHED_URL=multi schedule
	for m in R M2 M3; do
		[ "$(redis-cli -p "$(eval echo "\$${m}_PORT")" exists sched)" = 1 ]
	done
}

@test "exec -v says the hold stays; the hold is kept with its lease cut to what is left of the minimum hold" {
	run -0 --separate-stderr rl exec -v -t 30s --min-hold 3s mh -- true
	[[ $stderr == *"finished true; mh stays held until "*"Z (--min-hold)"* ]]
	pttl=$(rcli pttl mh)
	[ "$pttl" -gt 0 ]
	[ "$pttl" -le 3000 ]
	rcli hget 'redlock_holder:{mh}' "$(rcli hkeys mh | grep -v mode)" | grep -q '"finished":true'
	# Nothing stays running for it.
	run -75 --separate-stderr rl exec -n mh -- true
	wait_for 15 key_gone mh
	run -0 rl exec -n mh -- true
}

@test "-s: a finished shared hold stays a read hold; plain and --write callers get 75, shared ones come in" {
	run -0 rl exec -s --min-hold 4s rw -- true
	[ "$(rcli hget rw mode)" = read ]
	owner=$(rcli hkeys rw | grep -v mode)
	left=$(rcli pttl "{rw}:$owner:rwlock_timeout:1")
	[ "$left" -gt 0 ]
	[ "$left" -le 4000 ]
	[ "$(rcli pttl rw)" -le 4000 ]
	run -75 --separate-stderr rl exec -n rw -- true
	[[ $stderr == *"finished, held until"* ]]
	run -75 --separate-stderr rl exec -n --write rw -- true
	[[ $stderr == *"finished, held until"* ]]
	run -0 rl exec -n -s rw -- true
	run -0 rl status --json rw
	echo "$output" | jq -e --arg o "$owner" '.mode == "read" and
	    (.readers[] | select(.owner == $o) | .finished == true and
	     (.held_until_ms | type) == "number")'
	wait_for 15 key_gone rw
	run -0 rl exec -n --write rw -- true
}

@test "--write: a finished write hold keeps shared and plain callers out until its end" {
	run -0 rl exec --write --min-hold 4s rw -- true
	[ "$(rcli hget rw mode)" = write ]
	run -75 --separate-stderr rl exec -n -s rw -- true
	[[ $stderr == *"finished, held until"* ]]
	run -75 rl exec -n rw -- true
	run -75 rl exec -n --write rw -- true
	wait_for 15 key_gone rw
	run -0 rl exec -n -s rw -- true
}

@test "unlock --owner before the end leaves the hold until the end, and says so" {
	tok=$(rl lock -t 30s --min-hold 3s ul)
	run -0 --separate-stderr rl unlock --owner "$tok" ul
	[[ $stderr == "redlock: ul stays held until "*"Z: its minimum hold (--min-hold) has not ended; unlock --force removes it now" ]]
	pttl=$(rcli pttl ul)
	[ "$pttl" -gt 0 ]
	[ "$pttl" -le 3000 ]
	run -0 rl status ul
	# Given back again: still finished, nothing changed.
	run -0 rl unlock --owner "$tok" ul
	run -75 rl exec -n ul -- true
	until=$(rl status --json ul | jq -er .held_until_ms)
	wait_for 15 key_gone ul
	[ "$(server_ms)" -ge "$until" ]
	run -1 rl status ul
}

@test "a finished hold found busy says when that run ended and that unlock --force NAME runs the job again now" {
	# The kind of the run, and of the caller that finds it busy (a
	# finished shared hold lets shared callers in: a plain one).
	for k in ":" "--limit=1:--limit=1" "-s:"; do
		rcli flushall >/dev/null
		b=${k#*:}
		k=${k%%:*}
		# shellcheck disable=SC2086
		run -0 rl exec $k --min-hold 60s fin -- true
		ended=$(rl log --json -n 1 fin | jq -r .time)
		# shellcheck disable=SC2086
		run -75 --separate-stderr rl exec $b -n fin -- true
		[[ $stderr == "redlock: fin is busy: "*"finished, held until "*" (--min-hold): that run ended at $ended; to run the job again now: redlock unlock --force fin" ]]
		# shellcheck disable=SC2086
		run -75 --separate-stderr rl exec $b -w 200ms fin -- true
		[[ $stderr == *"redlock: gave up on fin after waiting "*"(--min-hold): that run ended at $ended; to run the job again now: redlock unlock --force fin" ]]
		# What it says works: the job runs again now.
		run -0 rl unlock --force fin
		# shellcheck disable=SC2086
		run -0 --separate-stderr rl exec $k -n fin -- echo again
		assert_output again
	done
}

@test "unlock --force removes a finished hold at once, of every kind" {
	for k in "" --fair "--limit 1" -s --write; do
		run -0 rl exec $k --min-hold 30s f -- true
		run -0 rl status f
		run -0 --separate-stderr rl unlock --force f
		[ "$(rcli exists f)" = 0 ]
		run -0 rl exec -n $k f -- true
		rcli flushall >/dev/null
	done
}

@test "lock --keepalive: the release when its process ends leaves the hold until the end" {
	sleep 30 3>&- &
	sp=$!
	bg+=($sp)
	tok=$(rl lock --keepalive --pid "$sp" -t 3s --min-hold 4s ka)
	[ -n "$tok" ]
	kill "$sp"
	# The watchdog releases; the hold stays, finished, not renewed.
	wait_for 10 eval 'rl status --json ka | jq -e .finished >/dev/null'
	run -75 rl exec -n ka -- true
	wait_for 15 key_gone ka
}

@test "status: the finished hold's line, its state, and the JSON's finished and held_until_ms" {
	run -0 rl exec --min-hold 5s st -- true
	run -0 rl status st
	[[ $output == *"  state    finished, held until "*"Z (--min-hold)"* ]]
	run -0 rl status
	[[ $output == "st: held by "*", finished, held until "*"Z (--min-hold), lease "*" left, "* ]]
	run -0 rl status --json st
	echo "$output" | jq -e '.finished == true and
	    .held_until_ms - .since_ms == 5000'
	run -0 rl exec --limit 2 --min-hold 5s sem -- true
	run -0 rl status sem
	[[ $output == *"finished, held until "*"Z (--min-hold)"* ]]
	run -0 rl status --json sem
	echo "$output" | jq -e '.permits[0].finished == true and
	    (.permits[0].held_until_ms | type) == "number"'
	# A hold that is not finished says so.
	tok=$(rl lock -t 30s --min-hold 5s other)
	run -0 rl status --json other
	echo "$output" | jq -e '.finished == false and .held_until_ms == null'
	run -0 rl status other
	# Its state is that nothing renews it (lock without --keepalive).
	[[ $output != *"  state    finished"* ]]
	[[ $output == *"  state    held by lock, no process renews it, "* ]]
}

@test "a finished hold is no dead holder: status and queue call it finished, not 'not running', with no unlock line; running is null" {
	# The exec that took it has exited, on this host: the hold is meant
	# to stay with nothing running.
	run -0 rl exec --min-hold 5s fin -- true
	run -0 rl exec -s --min-hold 5s finr -- true
	run -0 rl exec --limit 2 --min-hold 5s fins -- true
	for n in fin finr fins; do
		run -0 rl status "$n"
		[[ $output == *"finished, held until "* ]]
		[[ $output != *"not running"* ]]
		[[ $output != *"unlock --force"* ]]
	done
	run -0 rl status --json fin
	echo "$output" | jq -e '.finished == true and .running == null'
	run -0 rl status --json finr
	echo "$output" | jq -e '.readers[0].finished == true and .readers[0].running == null'
	run -0 rl status --json fins
	echo "$output" | jq -e '.permits[0].finished == true and .permits[0].running == null'
	run -0 rl queue fin
	[[ $output == "fin: held by "*", finished, held until "*"Z (--min-hold), lease "* ]]
	[[ $output != *"not running"* ]]
	run -0 rl queue --json fin
	echo "$output" | jq -e '.holder.finished == true and .holder.running == null and
	    (.holder.held_until_ms | type) == "number"'
}

@test "a -w waiter waits for the end of the minimum hold and gets in right after it" {
	run -0 rl exec --min-hold 3s w -- true
	until=$(rl status --json w | jq -er .held_until_ms)
	run -0 --separate-stderr rl exec -w 30s w -- bash -c 'echo "${EPOCHREALTIME/./}" >"$0"' "$D/in"
	# Its log line (stderr is no terminal) names the holder as finished.
	[[ $stderr == "redlock: "20[0-9][0-9]-*"Z waiting for w: held by "*", finished, held until "*"Z (--min-hold)"* ]]
	got=$(($(cat "$D/in") / 1000))
	echo "in $((got - until)) ms after the end" >&3
	[ "$got" -ge "$((until - 5))" ]
	# Right after: the waiter retries when the lease it was told runs
	# out (a 5x margin on a loaded box).
	[ "$got" -le "$((until + 2500))" ]
}

@test "a nested call's --min-hold holds the outer hold until its own end" {
	run -0 rl exec mx -- sh -c '"$0" -u "$1" exec --min-hold 3s mx -- true' "$RL" "redis://127.0.0.1:$R_PORT"
	run -0 rl status --json mx
	echo "$output" | jq -e '.finished == true'
	run -75 rl exec -n mx -- true
}

@test "bad --min-hold: a usage error (64) saying why, nothing written; other subcommands refuse it" {
	run -64 --separate-stderr rl exec --min-hold 25h x -- true
	[[ $stderr == "redlock: --min-hold: '25h' is longer than a day"* ]]
	run -64 --separate-stderr rl lock --keepalive --min-hold 86401s x
	[[ $stderr == *"longer than a day"* ]]
	run -64 --separate-stderr rl exec --min-hold soon x -- true
	[[ $stderr == "redlock: --min-hold: bad duration 'soon'"* ]]
	run -64 --separate-stderr rl exec --min-hold -1s x -- true
	run -64 --separate-stderr rl lock -t 5s --min-hold 10s x
	[[ $stderr == *"--min-hold is longer than the lease (--ttl)"* ]]
	run -64 --separate-stderr rl unlock --min-hold 5s x
	run -64 --separate-stderr rl status --min-hold 5s x
	run -64 --separate-stderr rl queue --min-hold 5s x
	[ "$(rcli dbsize)" = 0 ]
	# 24h is taken; 0 is off: the release frees the lock.
	run -0 rl exec --min-hold 24h x -- true
	run -0 rl unlock --force x
	run -0 rl exec --min-hold 0 x -- true
	[ "$(rcli exists x)" = 0 ]
}

@test "a hold never used (lock's token not printed: stdout full) keeps no minimum hold" {
	[ -w /dev/full ] || skip "no /dev/full"
	run -70 --separate-stderr sh -c '"$0" -u "$1" lock -t 10s --min-hold 5s nu >/dev/full' \
	    "$RL" "redis://127.0.0.1:$R_PORT"
	[ "$(rcli exists nu)" = 0 ]
	run -0 rl exec -n nu -- true
}

@test "a finished hold is not renewed: unlock --owner from inside COMMAND ends the hold's renewals, its lease stays what is left" {
	run -79 --separate-stderr rl exec -t 900ms --min-hold 3s rn -- \
	    sh -c '"$0" -u "$1" unlock --owner "$REDLOCK_OWNER" rn; sleep 2' "$RL" "redis://127.0.0.1:$R_PORT"
	[[ $stderr == *"rn stays held until"* ]]
	[[ $stderr == *"lost rn"* || $stderr == *"lost the lock on rn"* ]]
	# Renewals every 300 ms would have kept it at 900 ms or more past
	# the minimum hold; it ends with it.
	until=$(rl status --json rn | jq -er .held_until_ms)
	[ "$(rcli pttl rn)" -le 3000 ]
	wait_for 15 key_gone rn
	[ "$(server_ms)" -ge "$until" ]
}

# finished_wake "HOLDER ARGS" "WAITER ARGS": a waiter that waits while
# COMMAND runs (a fair waiter in the queue, a plain one in the room),
# COMMAND ending before its minimum hold does; the waiter's acquisition
# and the hold's end, from the history (server clock), in $got and $until.
finished_wake() {
	local w h
	rm -f "$D/go" "$D/w.err"
	rl exec $1 -t 30s --min-hold 2s fw -- sh -c \
	    'i=0; while [ ! -e "$0" ] && [ $i -lt 2000 ]; do sleep 0.01; i=$((i+1)); done' \
	    "$D/go" 3>&- &
	h=$!
	bg+=($h)
	wait_for 10 eval '[ "$(rcli exists fw)" = 1 ]'
	# Its heartbeat (a third of the waiter timeout) would come after
	# 10 s, its lease's end after 30 s.
	rl exec $2 --waiter-timeout 30s -t 30s fw -- true 2>"$D/w.err" 3>&- &
	w=$!
	bg+=($w)
	# Its line once its first attempt has found fw held (and queued it).
	wait_for 10 grep -q 'waiting for fw' "$D/w.err"
	touch "$D/go"
	reap -t 60 "$h"
	reap -t 60 "$w"
	until=$(rl log --json fw | jq -se '[.[] | select(.event == "released" and .held_until_ms != null)][0].held_until_ms')
	got=$(rl log --json fw | jq -se '[.[] | select(.event == "acquired")][1].time_ms')
	echo "${1:-plain} / ${2:-plain}: in $((got - until)) ms after the end of the minimum hold" >&3
}

@test "a waiter that waited before a --min-hold hold finished is woken by its release and gets in when the minimum hold ends, not at its heartbeat, for every kind" {
	for k in "--fair|--fair" "|" "--limit 1|--limit 1" "--write|--write" \
	    "-s|--write" "--write|-s"; do
		finished_wake "${k%|*}" "${k#*|}"
		[ "$got" -ge "$((until - 5))" ]
		# Right after the end: no heartbeat (10 s) nor lease (30 s).
		[ "$got" -le "$((until + 3000))" ]
		rcli flushall >/dev/null
	done
}
