#!/usr/bin/env bats
# exec: a lease lost while COMMAND runs, found by a renewal or by a watchdog
# that ran late, is reported as precisely as the server can tell: expired,
# removed or taken by another owner; exit 79, never success. (The release's
# findings: exec.bats.)

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
}
teardown() {
	kill -CONT "$R_PID"
	kill_ours KILL ${epid-}
	stop_strays
}

# exec in the background, stderr in $D/err, with its pid in $epid; COMMAND
# writes its pid to $D/cmd.
bg_exec() {
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec "$@" 2>"$D/err" 3>&- &
	epid=$!
}
held() { [ "$(rcli exists x)" = 1 ]; }
# The watchdog: redlock's one child, once COMMAND runs.
watchdog_of() { cat /proc/"$1"/task/*/children; }

# shellcheck disable=SC2016
LONG='echo $$ >"$0/cmd"; exec sleep 30'

@test "a renewal finds the hold removed (unlock --force) while COMMAND runs: 79, says removed" {
	bg_exec -t 3s x -- sh -c "$LONG" "$D"
	wait_for 10 test -s "$D/cmd"
	rl unlock --force x >/dev/null
	st=0
	reap -t 30 "$epid" || st=$?
	[ "$st" = 79 ]
	# Who forced it, from the history.
	[[ $(cat "$D/err") == "redlock: lost the lock on x while COMMAND ran (removed by unlock --force from $(hostname) pid "*" ($(id -un)); lease last confirmed "*" before the loss): COMMAND was terminated (SIGTERM)" ]]
	dead "$(cat "$D/cmd")"
}

# The other owner's hold replaces x in one step: a hold of y renamed over
# it. A deletion, then the other's lock, left a renewal room to run in
# between and find x gone, removed (seen beside a full run).
@test "a renewal finds another owner's hold while COMMAND runs: 79, says taken, and the other keeps it" {
	bg_exec -t 3s x -- sh -c "$LONG" "$D"
	wait_for 10 test -s "$D/cmd"
	rl lock -t 30s y >"$D/other"
	rcli rename y x >/dev/null
	st=0
	reap -t 30 "$epid" || st=$?
	[ "$st" = 79 ]
	[[ $(cat "$D/err") == "redlock: lost the lock on x while COMMAND ran (it was taken by another owner; lease last confirmed "*" before the loss): COMMAND was terminated (SIGTERM)" ]]
	[ "$(rcli hget x "$(cat "$D/other")")" = 1 ]
}

@test "a read hold (-s) whose key another owner's hold replaced: 79, says taken" {
	bg_exec -s -t 3s x -- sh -c "$LONG" "$D"
	wait_for 10 test -s "$D/cmd"
	rl lock -t 30s y >"$D/other"
	rcli rename y x >/dev/null
	st=0
	reap -t 30 "$epid" || st=$?
	[ "$st" = 79 ]
	[[ $(cat "$D/err") == "redlock: lost the lock on x while COMMAND ran (it was taken by another owner; "* ]]
	[ "$(rcli hget x "$(cat "$D/other")")" = 1 ]
}

@test "a lease that expired under a SIGSTOPped watchdog: COMMAND stopped at its SIGCONT, 79, says expired" {
	bg_exec -t 1s x -- sh -c "$LONG" "$D"
	wait_for 10 test -s "$D/cmd"
	wd=$(watchdog_of "$epid")
	kill -STOP "$wd"
	wait_for 10 key_gone x
	kill -CONT "$wd"
	st=0
	reap -t 30 "$epid" || st=$?
	[ "$st" = 79 ]
	[[ $(cat "$D/err") == "redlock: lost the lock on x while COMMAND ran (its lease had expired; lease last confirmed "*" before the loss): COMMAND was terminated (SIGTERM)" ]]
	dead "$(cat "$D/cmd")"
}

@test "COMMAND ended 0 while its watchdog was stopped past the lease: the release says expired, 79" {
	# shellcheck disable=SC2016
	bg_exec -t 1s x -- sh -c 'echo $$ >"$0/cmd"
	    while [ ! -e "$0/go" ]; do sleep 0.05; done' "$D"
	wait_for 10 test -s "$D/cmd"
	wd=$(watchdog_of "$epid")
	kill -STOP "$wd"
	touch "$D/go"
	wait_for 10 dead "$(cat "$D/cmd")"
	wait_for 10 key_gone x
	kill -CONT "$wd"
	st=0
	reap -t 30 "$epid" || st=$?
	[ "$st" = 79 ]
	assert_equal "$(cat "$D/err")" "redlock: lost the lock on x before its release (COMMAND exited 0): its lease had expired; another holder may have run beside COMMAND"
}

# Stop the watchdog of $epid, let COMMAND end and the lease of x run out
# on the masters PORTS (its last is kept 60 s more by hand, when KEEP is
# given: a master whose lease a late renewal lengthened), then continue
# the watchdog. Its exit status in $st. Without KEEP the server is stopped
# until exec has exited: its release is never answered, however long the
# watchdog takes to run again (a fixed second was too short under load).
stopped_past_lease() {
	local keep=$1 wd p
	shift
	wait_for 10 test -s "$D/cmd"
	wd=$(watchdog_of "$epid")
	# Before the stop: once the watchdog is stopped, a redis-cli that
	# starts slowly under load came after the 1 s lease had ended. A
	# renewal never shortens a lease.
	[ -z "$keep" ] ||
	    [ "$(redis-cli -p "$keep" pexpire x 60000)" = 1 ]
	kill -STOP "$wd"
	touch "$D/go"
	wait_for 10 dead "$(cat "$D/cmd")"
	for p in "$@"; do
		wait_for 10 eval '[ "$(redis-cli -p "$p" exists x)" = 0 ]'
	done
	[ -n "$keep" ] || kill -STOP "$R_PID"
	kill -CONT "$wd"
	st=0
	reap -t 30 "$epid" || st=$?
	[ -n "$keep" ] || kill -CONT "$R_PID"
}

# shellcheck disable=SC2016
GO='echo $$ >"$0/cmd"; while [ ! -e "$0/go" ]; do sleep 0.05; done'

# The watchdog learns of COMMAND's end only past the lease; a release
# that a quorum does not confirm cannot show that the hold outlived
# COMMAND: before, exec exited 0 then (seen under churn on three masters,
# after other holders had run beside COMMAND).
@test "COMMAND ended while its watchdog was stopped past the lease, and the server did not answer the release: 79, not 0" {
	bg_exec --reply-timeout 300ms -t 1s x -- sh -c "$GO" "$D"
	stopped_past_lease "" "$R_PORT"
	[ "$st" = 79 ]
	grep -q '^redlock: lost the lock on x before its release (COMMAND exited 0): its lease ran out while the watchdog was stopped or starved of CPU, and too few masters confirmed the release' "$D/err"
}

@test "three masters: COMMAND ended while its watchdog was stopped past the lease, one master still holding: 79, not 0" {
	start_redis M2
	start_redis M3
	"$RL" -u "redis://127.0.0.1:$R_PORT,redis://127.0.0.1:$M2_PORT,redis://127.0.0.1:$M3_PORT" \
	    exec -t 1s x -- sh -c "$GO" "$D" 2>"$D/err" 3>&- &
	epid=$!
	stopped_past_lease "$M3_PORT" "$R_PORT" "$M2_PORT"
	stop_redis "$M2_PID"
	stop_redis "$M3_PID"
	cat "$D/err"	# on failure
	[ "$st" = 79 ]
	# The release finds x gone on the first two masters and held on
	# the third. Which it says depends on how many answer within the
	# node timeout (ttl/100, 10 ms): both, a quorum that x is gone, past
	# the deadline, "its lease had expired"; one, no quorum either way,
	# "too few masters confirmed the release". Each is exact; 0 never.
	grep -Eq '^redlock: lost the lock on x before its release \(COMMAND exited 0\): (its lease ran out while the watchdog was stopped or starved of CPU, and too few masters confirmed the release|its lease had expired; another holder may have run beside COMMAND)' "$D/err"
}

# The same for the kinds of one master: a read hold's lease ends with the
# key x, a permit's with its entry in {x}:timeout (the permits' string x
# stays).
@test "-s and --limit 2: COMMAND ended while the watchdog was stopped past the lease, the release unanswered: 79, not 0" {
	read_over() { [ "$(rcli exists x)" = 0 ]; }
	permit_over() {
		[ "$(rcli zcard "{x}:timeout")" = 1 ] &&
		    [ "$(rcli zcount "{x}:timeout" "$(server_ms)" +inf)" = 0 ]
	}
	for kind in -s --limit; do
		rcli flushall >/dev/null
		rm -f "$D/go" "$D/cmd"
		if [ "$kind" = -s ]; then
			bg_exec --reply-timeout 300ms -t 1s -s x -- sh -c "$GO" "$D"
		else
			bg_exec --reply-timeout 300ms -t 1s --limit 2 x -- \
			    sh -c "$GO" "$D"
		fi
		wait_for 10 test -s "$D/cmd"
		wd=$(watchdog_of "$epid")
		kill -STOP "$wd"
		touch "$D/go"
		wait_for 10 dead "$(cat "$D/cmd")"
		if [ "$kind" = -s ]; then
			wait_for 10 read_over
		else
			wait_for 10 permit_over
		fi
		kill -STOP "$R_PID"
		kill -CONT "$wd"
		st=0
		reap -t 30 "$epid" || st=$?
		kill -CONT "$R_PID"
		cat "$D/err"
		[ "$st" = 79 ]
		grep -q '^redlock: lost the lock on x before its release (COMMAND exited 0): its lease ran out while the watchdog was stopped or starved of CPU, and too few masters confirmed the release' "$D/err"
	done
}

@test "a watchdog stopped past its local deadline, but not past the lease: 79, says it ran late, not that the server stopped answering; released" {
	# Lease 9 s, renewed every 3 s: deadline - grace is 5.9 s after the
	# last renewal, the server's expiry 9 s after it.
	bg_exec -v -t 9s x -- sh -c "$LONG" "$D"
	wait_for 10 grep -q 'renewed x' "$D/err"
	wd=$(watchdog_of "$epid")
	kill -STOP "$wd"
	nap 6.5
	held
	kill -CONT "$wd"
	st=0
	reap -t 30 "$epid" || st=$?
	[ "$st" = 79 ]
	grep -q '^redlock: lost the lock on x while COMMAND ran (the watchdog ran past its local deadline without renewing it: it was stopped or starved of CPU; lease last confirmed ' "$D/err"
	run ! grep -q 'stopped answering' "$D/err"
	dead "$(cat "$D/cmd")"
	key_gone x
}

@test "three masters: another owner on one master that refused the renewal says taken; gone from all, removed" {
	start_redis M2
	start_redis M3
	urls=(-u "redis://127.0.0.1:$R_PORT" -u "redis://127.0.0.1:$M2_PORT" -u "redis://127.0.0.1:$M3_PORT")
	"$RL" "${urls[@]}" exec -v -t 3s x -- sh -c "$LONG" "$D" 2>"$D/err" 3>&- &
	epid=$!
	wait_for 10 test -s "$D/cmd"
	# M3 is given to another owner in one step, before the others lose
	# x: a renewal between a delete and the new owner's write found x
	# gone everywhere, and said removed (seen beside a full run).
	redis-cli -p "$M3_PORT" eval "redis.call('del', KEYS[1])
	    redis.call('hset', KEYS[1], 'other:1', 1)" 1 x >/dev/null
	# And the others lose it once a renewal has been sent after that: the
	# second to end from now on (the first may have been sent before).
	# A renewal whose script ran on M3 before the write, and on the
	# others after their deletion, found x gone everywhere too (the
	# servers, on 2 cores, ran it that far apart with two suites at once).
	renewals() { grep -c 'renewed x' "$D/err" || :; }
	n=$(renewals)
	wait_for 10 eval '[ "$(renewals)" -ge $((n + 2)) ]'
	for p in "$R_PORT" "$M2_PORT"; do redis-cli -p "$p" del x >/dev/null; done
	st=0
	reap -t 30 "$epid" || st=$?
	[ "$st" = 79 ]
	grep -q '^redlock: lost the lock on x while COMMAND ran (it was taken by another owner; ' "$D/err"
	rm "$D/cmd"
	for p in "$R_PORT" "$M2_PORT" "$M3_PORT"; do redis-cli -p "$p" flushall >/dev/null; done
	"$RL" "${urls[@]}" exec -t 3s x -- sh -c "$LONG" "$D" 2>"$D/err" 3>&- &
	epid=$!
	wait_for 10 test -s "$D/cmd"
	for p in "$R_PORT" "$M2_PORT" "$M3_PORT"; do redis-cli -p "$p" del x >/dev/null; done
	st=0
	reap -t 30 "$epid" || st=$?
	[ "$st" = 79 ]
	[[ $(cat "$D/err") == "redlock: lost the lock on x while COMMAND ran (it was removed while held "* ]]
	stop_redis "$M2_PID"
	stop_redis "$M3_PID"
}

@test "--limit 2: a permit given back from under COMMAND is removed, not taken, though another permit is held" {
	rl lock --limit 2 -t 30s x >"$D/other"
	# At the release: COMMAND gives its own permit back, then ends 0.
	# shellcheck disable=SC2016
	run -79 --separate-stderr rl exec --limit 2 -t 30s x -- sh -c \
	    '"$0" -u "$REDLOCK_URL" unlock --owner "$REDLOCK_OWNER" x' "$RL"
	assert_equal "$stderr" "redlock: lost the lock on x before its release (COMMAND exited 0): it was removed while held (unlock --force, a deleted key or data lost by the server); another holder may have run beside COMMAND"
	# At a renewal.
	# shellcheck disable=SC2016
	run -79 --separate-stderr rl exec --limit 2 -t 3s x -- sh -c \
	    '"$0" -u "$REDLOCK_URL" unlock --owner "$REDLOCK_OWNER" x; exec sleep 30' "$RL"
	[[ $stderr == "redlock: lost the lock on x while COMMAND ran (it was removed while held "* ]]
	[ "$(rcli zcard "{x}:timeout")" = 1 ]
}
