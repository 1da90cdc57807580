#!/usr/bin/env bats
# No thundering herd: plain and --limit waiters wait in the room of their
# name, and a release wakes one of them (and the room's listener, which
# hears the name's channel), not every one; a woken waiter that died or
# stopped passes its wake-up on; Redisson's releases still wake a redlock
# waiter at once, and only one.

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
	bg=()
}
# What a test leaves is killed outright, stopped or not. Not SIGCONT: one
# that lands while an ASan build exits undoes the stop of LeakSanitizer's
# at-exit check (PTRACE_ATTACH's SIGSTOP), which then waits for ever.
teardown() {
	local p mine
	# Each with what runs under it: a watchdog stopped with its redlock
	# would outlive redlock's SIGKILL, stopped, keeping its subscription.
	ours "${bg[@]}"
	[ ${#mine[@]} = 0 ] || kill -9 $(proc_tree "${mine[@]}") 2>/dev/null || :
	for p in "${bg[@]}"; do wait "$p" 2>/dev/null || :; done
	stop_strays
}

RSN=$BATS_TEST_DIRNAME/redisson.py
ROOM='redlock_room:{x}'
LISTENER='redlock_listener:{x}'

# Clients subscribed to something: one per waiting redlock.
subs() { rcli client list | grep -c -E ' (s?sub)=[1-9]'; }
# The script calls since CONFIG RESETSTAT: EVALSHA, and EVAL after NOSCRIPT.
calls() {
	rcli info commandstats |
	    sed -n 's/^cmdstat_eval\(sha\)\{0,1\}:calls=\([0-9]*\),.*/\2/p' |
	    awk '{ n += $1 } END { print n + 0 }'
}
in_room() { [ "$(rcli zcard "$ROOM")" = "$1" ]; }
# redlock in place of the calling shell: "rlx ... &" leaves its pid in $!.
rlx() { exec "$RL" -u "redis://127.0.0.1:$R_PORT" "$@"; }
# The pid in a redlock owner token UUID:PID.
pid_of_token() { echo "${1##*:}"; }

# The drains start hundreds of waiters that end within seconds of one
# another, to count script calls: they run the release build when there
# is one (REDLOCK_RELEASE_BIN: make test builds it), and never with
# LeakSanitizer's exit check (see the Makefile).
DRAIN_RL=${REDLOCK_RELEASE_BIN:-$RL}
NO_LEAKS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0

# drain N OPTS...: N `exec -w` waiters with OPTS behind NAME d's holders
# (one, or N of --limit N), all of them waiting; then the holders are
# released. The script calls until the last waiter is done, and the wall
# ms, in $dcalls and $dms. (Run in the test's shell, not in a subshell, so
# that a stuck waiter fails the test, and teardown finds the rest.)
drain() {
	local n=$1 holders=1 i t pids=() toks=() t0
	shift
	[ "${1-}" != --limit ] || holders=$2
	rcli flushall >/dev/null
	for i in $(seq 1 "$holders"); do
		toks+=("$(rl lock -t 300s "$@" d)")
	done
	for i in $(seq 1 "$n"); do
		ASAN_OPTIONS=$NO_LEAKS "$DRAIN_RL" -u "redis://127.0.0.1:$R_PORT" \
		    exec -q -w 300s "$@" d -- true 3>&- &
		pids+=($!)
		bg+=($!)
	done
	wait_for 240 eval '[ "$(subs)" -ge "$n" ]'
	# Each waiter tries once more when its subscription is confirmed.
	sleep 1
	rcli config resetstat >/dev/null
	t0=$(now_ms)
	for t in "${toks[@]}"; do rl unlock --owner "$t" d; done
	for i in "${pids[@]}"; do reap -t 240 "$i"; done
	bg=()
	dcalls=$(calls) dms=$(($(now_ms) - t0))
}

# drains N OPTS...: three drains of N waiters; their calls and wall ms,
# summed, in $dcalls and $dms. (Which waiter takes the lock after a
# release, and whether the listener's role then changes hands, varies:
# three drains even it out.)
drains() {
	local c=0 w=0 i
	for i in 1 2 3; do
		drain "$@"
		c=$((c + dcalls)) w=$((w + dms))
	done
	dcalls=$c dms=$w
}

# per_handoff OPTS...: drain 50 and then 200 waiters, three times each;
# the calls per handoff at 200 are at most twice those at 50.
per_handoff() {
	local c50 c200 w50 w200
	drains 50 "$@"
	c50=$dcalls w50=$dms
	drains 200 "$@"
	c200=$dcalls w200=$dms
	echo "${*:-plain}: 3 x 50 waiters $c50 script calls ($((c50 * 100 / 150)) per 100 handoffs) in $w50 ms, 3 x 200 waiters $c200 ($((c200 * 100 / 600)) per 100) in $w200 ms" >&3
	[ "$c50" -gt 0 ]
	# c200 / 600 <= 2 * c50 / 150
	[ "$c200" -le $((8 * c50)) ]
}

@test "draining 50 and 200 plain waiters costs a constant number of script calls per handoff" {
	per_handoff
}

@test "draining 50 and 200 --limit 2 waiters costs a constant number of script calls per handoff" {
	per_handoff --limit 2
}

# waiters N OPTS...: N `exec -w 60s` waiters of x with OPTS, one after
# the other in the room; each writes "PID TIME" to $D/got when it holds x,
# and holds it $HOLD seconds (default 0), or not at all once $D/got.go
# exists: a test that counts the script calls of the first handoff holds
# the first holder until it has counted, then lets the rest go at once.
# Their pids in the array w.
waiters() {
	local n=$1 i
	shift
	w=()
	for i in $(seq 1 "$n"); do
		rlx exec -q -w 60s "$@" x -- \
		    sh -c 'echo "${REDLOCK_OWNER##*:} $(date +%s%3N)" >>"$0"
			[ -e "$0.go" ] || sleep "$1"' "$D/got" "${HOLD:-0}" 3>&- &
		w+=($!)
		bg+=($!)
		wait_for 10 in_room "$i"
	done
}

# held_after T0: once a waiter holds x, its pid in $who and the ms from T0
# (local clock) to then in $ms.
held_after() {
	wait_for 10 test -s "$D/got"
	read -r who t <"$D/got"
	ms=$((t - $1))
}
# all_held N: every waiter in w ends, and N of them held x.
all_held() {
	local p
	for p in "${w[@]}"; do reap "$p"; done
	bg=()
	[ "$(wc -l <"$D/got")" = "$1" ]
}

@test "a woken waiter that stopped (SIGSTOP), with the listener stopped too: the next one acquires within its heartbeat" {
	tok=$(rl lock -t 60s x)
	# Waiter timeout 1.5 s: the listener refreshes every 0.5 s, the
	# others every 1.5 s.
	waiters 3 --waiter-timeout 1500ms
	l=$(pid_of_token "$(rcli get "$LISTENER")")
	# Another one, stopped with the best place: the release wakes it.
	for p in "${w[@]}"; do [ "$p" = "$l" ] || { s=$p; break; }; done
	# Stopped whole: redlock and the watchdog that waits for it.
	kill -STOP $(proc_tree "$l" "$s")
	stoken=$(rcli zrange "$ROOM" 0 -1 | grep ":$s\$")
	rcli zadd "$ROOM" XX $(($(server_ms) + 600000)) "$stoken" >/dev/null
	[ "$(rcli zrevrange "$ROOM" 0 0)" = "$stoken" ]
	t0=$(now_ms)
	rl unlock --owner "$tok" x
	held_after "$t0"
	echo "the live waiter held x $ms ms after the release (its heartbeat: 1.5 s, the lease told: 60 s)" >&3
	[ "$who" != "$l" ]
	[ "$who" != "$s" ]
	[ $ms -lt 5000 ]
	# Let go, the two stopped ones get it in turn.
	kill -CONT $(proc_tree "$l" "$s")
	all_held 3
}

@test "a woken waiter killed (SIGKILL) is passed over by the release: the next one is woken at once" {
	tok=$(rl lock -t 60s x)
	# Waiter timeout 10 s: nobody refreshes within the bound below.
	waiters 3 --waiter-timeout 10s
	l=$(pid_of_token "$(rcli get "$LISTENER")")
	for p in "${w[@]}"; do [ "$p" = "$l" ] || { s=$p; break; }; done
	ktoken=$(rcli zrange "$ROOM" 0 -1 | grep ":$s\$")
	kill -STOP $(proc_tree "$l")
	# Killed whole, as by a crash: no watchdog left to leave the room.
	kill -9 $(proc_tree "$s")
	# Killed with the best place: the release would wake it first.
	rcli zadd "$ROOM" XX $(($(server_ms) + 600000)) "$ktoken" >/dev/null
	t0=$(now_ms)
	rl unlock --owner "$tok" x
	held_after "$t0"
	echo "the live waiter held x $ms ms after the release (its heartbeat: 10 s)" >&3
	[ "$who" != "$l" ]
	[ "$who" != "$s" ]
	[ $ms -lt 2000 ]
	[ -z "$(rcli zscore "$ROOM" "$ktoken")" ]
}

@test "a Redisson RLock release wakes one of 10 redlock waiters at once, and only one tries" {
	htok="$(cat /proc/sys/kernel/random/uuid):1"
	python3 "$RSN" --port "$R_PORT" --id "$htok" lock x --lease 60000 \
	    --keep >/dev/null
	# A waiter timeout of 60 s: no waiter refreshes its place (one script
	# call each, every few seconds with the default 5 s) while the calls
	# are counted, however long a loaded box makes that.
	HOLD=5 waiters 10 --waiter-timeout 60s
	wait_for 10 eval '[ "$(subs)" = 10 ]'
	sleep 1
	rcli config resetstat >/dev/null
	t0=$(now_ms)
	python3 "$RSN" --port "$R_PORT" --id "$htok" unlock x >/dev/null
	held_after "$t0"
	n=$(calls)
	touch "$D/got.go"
	echo "a redlock waiter held x $ms ms after Redisson's release began (with the start of its Python client); $n script calls" >&3
	[ $ms -lt 5000 ]	# Python starts in it; unwoken, a waiter tries at its 20 s refresh
	# Redisson's release is a script too; then the listener's attempt,
	# and the listener's role taken up by another waiter (an attempt,
	# and one more once it listens). Every waiter retrying: 11 or more.
	[ "$n" -le 5 ]
	all_held 10
}

@test "a Redisson RFairLock release (which wakes only the head of its queue) wakes a redlock waiter at once" {
	htok="$(cat /proc/sys/kernel/random/uuid):1"
	python3 "$RSN" --port "$R_PORT" --id "$htok" --fair lock x \
	    --lease 60000 --keep >/dev/null
	waiters 5
	# The listener alone queues behind the Java holder.
	wait_for 10 eval '[ "$(rcli llen "redisson_lock_queue:{x}")" = 1 ]'
	[ "$(rcli lindex "redisson_lock_queue:{x}" 0)" = "$(rcli get "$LISTENER")" ]
	t0=$(now_ms)
	python3 "$RSN" --port "$R_PORT" --id "$htok" --fair unlock x >/dev/null
	held_after "$t0"
	echo "a redlock waiter held x $ms ms after Redisson's fair release began (with the start of its Python client)" >&3
	[ $ms -lt 2000 ]
	all_held 5
}

@test "a redlock release still wakes a Redisson RLock waiter among redlock waiters" {
	tok=$(rl lock -t 60s x)
	waiters 3
	python3 "$RSN" --port "$R_PORT" lock x --wait 10 --label java \
	    >>"$D/java" 2>&1 3>&- &
	bg+=($!)
	wait_for 5 grep -qx 'subscribed java' "$D/java"
	# Only redlock's waiters out of the way: stopped.
	kill -STOP $(proc_tree "${w[@]}")
	rl unlock --owner "$tok" x
	wait_for 3 grep -q '^acquired java' "$D/java"
	kill -CONT $(proc_tree "${w[@]}")
	all_held 3
}

@test "a listener that gives up (-w runs out) hands the role on: Redisson's next release still wakes a redlock waiter" {
	htok="$(cat /proc/sys/kernel/random/uuid):1"
	python3 "$RSN" --port "$R_PORT" --id "$htok" lock x --lease 60000 \
	    --keep >/dev/null
	# The first is the listener; it gives up after 3 s.
	rlx exec -q -w 3s x -- true 3>&- &
	first=$!
	bg+=($!)
	wait_for 10 in_room 1
	[ "$(pid_of_token "$(rcli get "$LISTENER")")" = "$first" ]
	waiters 2 --waiter-timeout 30s
	status=0
	reap "$first" || status=$?
	[ "$status" = 75 ]
	# Its leave woke another, which took the role.
	wait_for 5 eval '[ -n "$(rcli get "$LISTENER")" ]'
	[ "$(pid_of_token "$(rcli get "$LISTENER")")" != "$first" ]
	in_room 2
	t0=$(now_ms)
	python3 "$RSN" --port "$R_PORT" --id "$htok" unlock x >/dev/null
	held_after "$t0"
	echo "held $ms ms after Redisson's release (non-listeners refresh every 30 s)" >&3
	[ $ms -lt 6000 ]
}

# A 4 s lease: with 1.5 s, the fourth waiter, started under load, came
# after it had run out, found x free and never waited (a quiet CI run).
# The bound is the lease and 5 s; a waiter that missed the lease's end
# would wait for the 60 s waiter timeout.
@test "waiters behind a holder that died (no release) retry when the lease they were told runs out" {
	tok=$(rl lock -t 4s x)
	t0=$(now_ms)
	waiters 4 --waiter-timeout 60s
	held_after "$t0"
	echo "the first waiter held x $ms ms after the 4 s lease began (waiter timeout 60 s)" >&3
	[ $ms -lt 9000 ]
	all_held 4
}

@test "--waiter-timeout is at most 1h: a killed waiter's place, the listener's role and the room end within 3 hours; a longer one is refused and changes nothing" {
	tok=$(rl lock -t 60s x)
	run -64 --separate-stderr rl exec --waiter-timeout 87840h -w 1s x -- true
	assert_equal "$stderr" "redlock: --waiter-timeout: '87840h' is longer than 1h, the most a waiter's place is kept without a word from it; give 1h or less; usage: redlock exec [OPTIONS] NAME -- COMMAND [ARG...] (see redlock exec --help)"
	run -64 --separate-stderr rl lock --fair --waiter-timeout 3600001ms -w 1s x
	[[ $stderr == "redlock: --waiter-timeout: '3600001ms' is longer than 1h, "* ]]
	run -64 --separate-stderr rl lock --limit 2 --waiter-timeout 61m -w 1s s
	assert_equal "$(rcli keys '*' | sort)" "redisson_lock_token:{x}
redlock_holder:{x}
redlock_log:{x}
x"
	# The longest: the listener keeps its role an hour after its last
	# refresh, and the room, which holds only it, lasts as long...
	waiters 1 --waiter-timeout 1h
	[ "$(rcli pttl "$LISTENER")" -le 3600000 ]
	[ "$(rcli pttl "$ROOM")" -le 3600000 ]
	# ...another waiter's place three hours.
	rlx exec -q -w 60s --waiter-timeout 1h x -- true 3>&- &
	w+=($!)
	bg+=($!)
	wait_for 10 in_room 2
	kill -9 $(proc_tree "${w[@]}")
	[ "$(rcli pttl "$LISTENER")" -le 3600000 ]
	room=$(rcli pttl "$ROOM")
	echo "after the waiters' SIGKILL: the room's PTTL is $room ms" >&3
	[ "$room" -gt 3600000 ]
	[ "$room" -le 10800000 ]
}

@test "status and queue count the waiters of the room, the listener queued behind a Java holder once" {
	tok=$(rl lock -t 60s x)
	waiters 3
	run -0 rl status --json x
	[[ $output == *'"waiting":3'* ]]
	run -0 rl queue x
	assert_line --index 1 '3 waiting without --fair, in no order:'
	# The heading and a line for each, by its host and pid.
	[ "${#lines[@]}" = 6 ]
	for p in "${w[@]}"; do
		assert_line --regexp "^-   $(hostname) $p +[0-9.]+m?s +[0-9.]+s +sh -c "
	done
	run -0 rl queue --json x
	[[ $output == *'"waiters":[],"unordered":3,"unordered_waiters":[{'* ]]
	echo "$output" | jq -e '.unordered_waiters | length == 3'
	rl unlock --owner "$tok" x
	for p in "${w[@]}"; do reap "$p"; done
	htok="$(cat /proc/sys/kernel/random/uuid):1"
	python3 "$RSN" --port "$R_PORT" --id "$htok" lock x --lease 60000 \
	    --keep >/dev/null
	: >"$D/got"
	waiters 3
	wait_for 10 eval '[ "$(rcli llen "redisson_lock_queue:{x}")" = 1 ]'
	run -0 rl status --json x
	[[ $output == *'"waiting":3'* ]]
	# The listener in the queue, the other two in no order.
	run -0 rl queue --json x
	[[ $output == *'"unordered":2,'* ]]
	echo "$output" | jq -e '.unordered_waiters | length == 2'
	[[ $output == *'"position":1,'* ]] && [[ $output != *'"position":2,'* ]]
}

@test "a Redisson semaphore release wakes one of 8 redlock --limit waiters at once, and only one tries" {
	python3 "$RSN" --port "$R_PORT" semaphore x set-permits 1 >/dev/null
	j=$(python3 "$RSN" --port "$R_PORT" semaphore x acquire --lease 60000 \
	    --keep | cut -d' ' -f2)
	HOLD=5 waiters 8 --limit 1 --waiter-timeout 60s	# (see above)
	wait_for 10 eval '[ "$(subs)" = 8 ]'
	# status counts them.
	run -0 rl status x
	assert_line '  waiting  8'
	run -0 rl status --json x
	[[ $output == *'"waiting":8'* ]]
	sleep 1
	rcli config resetstat >/dev/null
	t0=$(now_ms)
	python3 "$RSN" --port "$R_PORT" semaphore x release "$j" >/dev/null
	held_after "$t0"
	n=$(calls)
	touch "$D/got.go"
	echo "a redlock waiter held a permit $ms ms after Redisson's release began (with the start of its Python client); $n script calls" >&3
	[ $ms -lt 5000 ]	# Python starts in it; unwoken, a waiter tries at its 20 s refresh
	# Redisson's release; the listener's attempt; the role taken up by
	# another waiter (an attempt, and one more once it listens). Counted
	# while the first holder holds (HOLD=5, ended by got.go): a count
	# taken once it had let go (HOLD=0.3, loaded: 1.5 s to hold) saw the
	# next handoff's calls too (7), and one over 2.4 s the waiters'
	# refreshes (10).
	[ "$n" -le 5 ]
	all_held 8
}
