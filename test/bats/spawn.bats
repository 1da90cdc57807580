#!/usr/bin/env bats
# exec's processes: the watchdog is forked before anything is sent, acquires
# (waiting as long as it must), and spawns COMMAND once it holds NAME;
# redlock itself relays signals and reports the exit status.

load helpers

setup_file() {
	start_redis R
	start_redis M2
	start_redis M3
}
teardown_file() {
	stop_redis "$R_PID"
	stop_redis "$M2_PID"
	stop_redis "$M3_PID"
}
setup() {
	kill -CONT "$R_PID"
	rcli flushall >/dev/null
	redis-cli -p "$M2_PORT" flushall >/dev/null
	redis-cli -p "$M3_PORT" flushall >/dev/null
	D=$BATS_TEST_TMPDIR
}
teardown() { stop_strays; }

# exec in the background with its pid in $epid: redlock itself.
bg_exec() {
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec "$@" 3>&- &
	epid=$!
}
# The process under redlock: its watchdog.
watchdog_of() {
	local c
	read -r c _ < <(cat /proc/"$1"/task/*/children 2>/dev/null)
	echo "$c"
}
# Sockets PID has open.
sockets() { ls -l /proc/"$1"/fd 2>/dev/null | grep -c 'socket:' || :; }
qlen() { rcli llen 'redisson_lock_queue:{x}'; }
waiting_in_queue() { [ "$(qlen)" = "$1" ]; }

@test "while exec waits, its watchdog is the waiter: redlock holds no connection, and COMMAND is the watchdog's child" {
	tok=$(rl lock -t 20s x)
	bg_exec -w 20s x -- sh -c 'echo $PPID >'"$D"'/ppid; exec sleep 0.3'
	wait_for 10 has_subscribers x 1
	wd=$(watchdog_of "$epid")
	[ -n "$wd" ]
	echo "redlock $epid: $(sockets "$epid") sockets; its watchdog $wd: $(sockets "$wd")" >&3
	[ "$(sockets "$epid")" = 0 ]
	[ "$(sockets "$wd")" -ge 2 ]	# its connection and its subscription
	rl unlock --owner "$tok" x
	reap "$epid"
	[ "$(cat "$D/ppid")" = "$wd" ]
	key_gone x
}

@test "kill -9 of redlock while it waits in a fair queue: its watchdog leaves the queue at once, and COMMAND never runs" {
	tok=$(rl lock -t 20s x)
	bg_exec --fair -w 60s --waiter-timeout 60s x -- touch "$D/ran"
	wait_for 10 waiting_in_queue 1
	wd=$(watchdog_of "$epid")
	kill -9 "$epid"
	t0=$(now_ms)
	# Not at its waiter timeout (60 s): now.
	wait_for 5 waiting_in_queue 0
	echo "left the queue $(($(now_ms) - t0)) ms after the kill" >&3
	wait_for 5 dead "$wd"
	rl unlock --owner "$tok" x
	nap 0.3
	[ ! -e "$D/ran" ]
	key_gone x
	# Its history says it gave up.
	run -0 rl log x
	assert_line --partial gave_up
}

@test "SIGTERM to redlock while it waits: exit 143, its watchdog gone, nobody left in the queue, COMMAND never runs" {
	tok=$(rl lock -t 20s x)
	bg_exec --fair -w 60s x -- touch "$D/ran"
	wait_for 10 waiting_in_queue 1
	wd=$(watchdog_of "$epid")
	kill -TERM "$epid"
	status=0
	reap "$epid" || status=$?
	[ "$status" = 143 ]
	wait_for 5 dead "$wd"
	waiting_in_queue 0
	rl unlock --owner "$tok" x
	[ ! -e "$D/ran" ]
}

@test "kill -9 of redlock at each moment of the hand-over: COMMAND never outlives it past --kill-after, and NAME is released" {
	for i in $(seq 0 11); do
		rcli del x >/dev/null
		tok=$(rl lock -t 20s x)
		bg_exec -w 20s --kill-after 1s x -- sh -c 'echo $$ >>'"$D"'/started; exec sleep 30'
		wait_for 10 has_subscribers x 1
		# 0 to 55 ms after the release begins (unlock, a process of its
		# own, takes some of that): before the acquisition, during it,
		# while COMMAND starts, and after.
		rl unlock --owner "$tok" x &
		u=$!
		[ "$i" = 0 ] || nap "$(printf '0.%03d' $((i * 5)))"
		kill -9 "$epid"
		wait "$u"
		wait "$epid" 2>/dev/null || :
		# Whatever it had, the watchdog gives back: NAME is free well
		# before its 20 s lease.
		wait_for 5 key_gone x
	done
	n=$(wc -l <"$D/started" 2>/dev/null || echo 0)
	echo "COMMAND started in $n of 12 hand-overs; each ended with redlock" >&3
	# Some kills came before COMMAND started, some after.
	[ "$n" -gt 0 ]
	[ "$n" -lt 12 ]
	for c in $(cat "$D/started" 2>/dev/null); do
		wait_for 5 dead "$c"
	done
}

@test "SIGSTOP of redlock alone does not stop its wait: COMMAND starts, and its status is reported once redlock runs again" {
	tok=$(rl lock -t 20s x)
	bg_exec -w 20s x -- sh -c 'touch '"$D"'/ran; exit 5'
	wait_for 10 has_subscribers x 1
	kill -STOP "$epid"
	rl unlock --owner "$tok" x
	wait_for 5 test -e "$D/ran"
	kill -CONT "$epid"
	status=0
	reap "$epid" || status=$?
	[ "$status" = 5 ]
	key_gone x
}

@test "a signal that reaches redlock just as its watchdog acquires goes to COMMAND, never lost: 10 tries" {
	for i in $(seq 0 9); do
		rcli del x >/dev/null
		tok=$(rl lock -t 20s x)
		bg_exec -w 20s x -- sh -c 'trap "exit 42" TERM; sleep 30 & wait'
		wait_for 10 has_subscribers x 1
		rl unlock --owner "$tok" x &
		u=$!
		[ "$i" = 0 ] || nap "$(printf '0.%03d' $((i * 5)))"
		kill -TERM "$epid"
		wait "$u"
		status=0
		reap -t 20 "$epid" || status=$?
		# Either the wait ended (143: COMMAND never ran), or COMMAND
		# got it (its trap: 42, or SIGTERM before the trap was set: 143).
		echo "try $i: exit $status" >&3
		[ "$status" = 143 ] || [ "$status" = 42 ]
		wait_for 5 key_gone x
	done
}

# waiting_on NAME: the waiters status counts on NAME.
waiting_on() { "$RL" -u "$url" status --json "$1" | jq -r .waiting; }
nobody_waits() { [ "$(waiting_on x)" = 0 ]; }

@test "kill -9 of redlock while it waits, each kind, a pool and three masters: its watchdog leaves the wait at once, and nothing runs" {
	local k t0
	for k in plain fair limit write read any masters; do
		for p in "$R_PORT" "$M2_PORT" "$M3_PORT"; do
			redis-cli -p "$p" flushall >/dev/null
		done
		url=redis://127.0.0.1:$R_PORT names=(x) hold=() wait=()
		case $k in
		fair)	hold=(--fair) wait=(--fair) ;;
		limit)	hold=(--limit 1) wait=(--limit 1) ;;
		write)	hold=(--write) wait=(--write) ;;
		read)	hold=(--write) wait=(-s) ;;
		any)	names=(x y) wait=(--any) ;;
		masters) url=redis://127.0.0.1:$R_PORT,redis://127.0.0.1:$M2_PORT,redis://127.0.0.1:$M3_PORT ;;
		esac
		toks=()
		for n in "${names[@]}"; do
			toks+=("$("$RL" -u "$url" lock -t 30s "${hold[@]}" "$n")")
		done
		"$RL" -u "$url" exec -w 30s --waiter-timeout 30s "${wait[@]}" \
		    "${names[@]}" -- touch "$D/ran.$k" 3>&- &
		epid=$!
		wait_for 10 eval '[ "$(waiting_on x)" = 1 ]'
		wd=$(watchdog_of "$epid")
		[ -n "$wd" ]
		kill -9 "$epid"
		wait "$epid" 2>/dev/null || :
		t0=$(now_ms)
		# Not at its waiter timeout (30 s): now.
		wait_for 5 nobody_waits
		wait_for 5 dead "$wd"
		echo "$k: the wait gone $(($(now_ms) - t0)) ms after the kill" >&3
		for i in "${!names[@]}"; do
			"$RL" -u "$url" unlock --owner "${toks[$i]}" "${names[$i]}"
		done
		nap 0.3
		[ ! -e "$D/ran.$k" ]
		"$RL" -u "$url" exec -n "${hold[@]}" x -- true
	done
}

@test "on a terminal, Ctrl-C while exec waits reaches redlock and its watchdog (one process group until it holds): exit 130 once, nothing left" {
	command -v script >/dev/null || skip "script(1) is needed for a terminal"
	tok=$(rl lock -t 30s x)
	# script(1) copies its standard input to the terminal: ^C once the
	# waiter is subscribed, then nothing until the run is over.
	feed() {
		wait_for 10 has_subscribers x 1
		printf '\003'
		wait_for 20 test -e "$D/over"
	}
	# The shell, in the same foreground group, catches ^C to go on.
	run -0 script -qfec "sh -c '
	    trap : INT
	    $RL -u redis://127.0.0.1:$R_PORT exec -w 30s x -- touch $D/ran
	    echo status \$?'" /dev/null < <(feed 3>&-)
	touch "$D/over"
	echo "$output"
	[[ ${output//$'\r'/} == *"gave up on x after waiting "*": interrupted by SIGINT"*"status 130"* ]]
	# Said once, by the watchdog that waited.
	[ "$(grep -c 'gave up' <<<"$output")" = 1 ]
	[ ! -e "$D/ran" ]
	wait_for 5 eval '[ "$(subscribers x)" = 0 ]'
	rl unlock --owner "$tok" x
}

@test "kill -9 of the watchdog while it waits: redlock exits 70 at once, saying so, and COMMAND never runs" {
	tok=$(rl lock -t 20s x)
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec -w 20s x -- touch "$D/ran" \
	    2>"$D/err" 3>&- &
	epid=$!
	wait_for 10 has_subscribers x 1
	wd=$(watchdog_of "$epid")
	kill -9 "$wd"
	status=0
	reap -t 10 "$epid" || status=$?
	[ "$status" = 70 ]
	cat "$D/err"
	grep -q "redlock: the watchdog of x died (status 137) before COMMAND started; a hold it took ends with its lease; try again" "$D/err"
	rl unlock --owner "$tok" x
	nap 0.3
	[ ! -e "$D/ran" ]
}
