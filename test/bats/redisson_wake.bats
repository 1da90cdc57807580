#!/usr/bin/env bats
# Wake-ups between redlock's read-write locks and semaphores and the Java
# services (test/bats/redisson.py) beside them: a redlock release or
# unlock --force of a read-write hold wakes Redisson's fair waiters and
# readers and writers, and redlock's own fair and room waiters, by a
# message; Redisson's read and write releases wake redlock's exclusive
# waiters by a message; and a -s waiter notices a Redisson writer's
# downgrade to read, which publishes nothing, within its heartbeat.
# Each wait is timed from the release to the acquisition (said on fd 3)
# and asserted well under what the unpushed path would take: the lease
# the waiter was told, or its heartbeat, made long here on purpose.

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
	: >"$D/events"
	bg=()
}
teardown() { stop_bg; stop_strays; }

RSN=$BATS_TEST_DIRNAME/redisson.py
CH='redisson_lock__channel:{x}'
RW='redisson_rwlock:{x}'

# A fresh owner: UUID:N, the shape of redlock's tokens.
token() { echo "$(cat /proc/sys/kernel/random/uuid):$((RANDOM + 2))"; }

# rsn_bg ARGS...: redisson.py ARGS in the background, its events (labelled
# with --label in ARGS) appended to $D/events.
rsn_bg() {
	python3 "$RSN" --port "$R_PORT" "$@" >>"$D/events" 2>>"$D/err" 3>&- &
	bg+=($!)
}

# rl_bg LABEL TOKEN ARGS...: redlock exec ARGS x as TOKEN in the
# background; holding x, it writes "acquired LABEL TIME" to $D/events.
# Its pid in $last.
rl_bg() {
	local label=$1 tok=$2
	shift 2
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec -v --owner "$tok" "$@" x -- \
	    sh -c 'echo "acquired $0 $(date +%s.%N)"' "$label" \
	    >>"$D/events" 2>"$D/$label.err" 3>&- &
	last=$!
	bg+=("$last")
}

# When LABEL had EVENT (default acquired), in ms since the epoch; empty if
# it did not. Labelled lines end "LABEL TIME".
when_ms() {
	awk -v l="$1" -v e="${2:-acquired}" \
	    '$1 == e && $(NF - 1) == l { printf "%.0f\n", $NF * 1000; exit }' \
	    "$D/events"
}
had() { [ -n "$(when_ms "$@")" ]; }
# subscribed LABEL: that Redisson client said it waits on its channel.
subscribed() { grep -qx "subscribed $1" "$D/events"; }
numsub() { rcli pubsub numsub "$1" | sed -n 2p; }
listens() { [ "$(numsub "$1")" -ge "${2:-1}" ]; }
deaf() { [ "$(numsub "$1")" = 0 ]; }

# took LABEL FROM_MS LIMIT_MS WHAT: LABEL acquired (or had the event
# $5) within LIMIT_MS of FROM_MS; the time is said on fd 3.
took() {
	local t
	wait_for $(($3 / 1000 + 1)) had "$1" "${5:-acquired}" || :
	t=$(when_ms "$1" "${5:-acquired}")
	if [ -z "$t" ]; then
		echo "$4: $1 not ${5:-acquired} within $(($3 / 1000 + 1)) s" >&3
		return 1
	fi
	echo "$4: $1 ${5:-acquired} $((t - $2)) ms later" >&3
	[ $((t - $2)) -lt "$3" ]
}

# A redlock release of a read-write hold: the fair queue and the room.

# rfair_behind KIND: a Redisson RFairLock waiter behind a redlock hold of
# KIND (-s or --write) with a 10 s lease is woken by its release.
rfair_behind() {
	tok=$(rl lock "$1" -t 10s x)
	rsn_bg --fair --label f lock x --wait 20
	wait_for 10 subscribed f
	[ "$(rcli llen 'redisson_lock_queue:{x}')" = 1 ]
	t0=$(now_ms)
	rl unlock --owner "$tok" x
	took f "$t0" 2000 "release of a redlock $1 hold (10 s lease)"
}

@test "a redlock -s release wakes a Redisson RFairLock waiter at once" {
	rfair_behind -s
}

@test "a redlock --write release wakes a Redisson RFairLock waiter at once" {
	rfair_behind --write
}

@test "a redlock -s release passes over a dead redlock fair head and wakes the next at once" {
	tok=$(rl lock -s -t 60s x)
	t1=$(token) t2=$(token)
	rl_bg f1 "$t1" --fair --waiter-timeout 30s -w 60s
	f1=$last
	wait_for 10 listens "$CH:$t1"
	rl_bg f2 "$t2" --fair --waiter-timeout 30s -w 60s
	wait_for 10 listens "$CH:$t2"
	kill -9 "$f1"
	wait "$f1" 2>/dev/null || :
	wait_for 5 deaf "$CH:$t1"
	sleep 0.3	# past the 250 ms that tell a dead waiter from a new one
	t0=$(now_ms)
	rl unlock --owner "$tok" x
	# Unwoken, f2 would wait for f1's deadline, 30 s after it queued.
	took f2 "$t0" 2000 "release of a -s hold, the fair head dead"
}

@test "a redlock --write release wakes a waiter of the room when its listener is dead" {
	tok=$(rl lock --write -t 60s x)
	tl=$(token) to=$(token)
	rl_bg l "$tl" --waiter-timeout 30s -w 60s
	l=$last
	wait_for 10 eval '[ "$(rcli get "redlock_listener:{x}")" = "$tl" ]'
	rl_bg o "$to" --waiter-timeout 30s -w 60s
	wait_for 10 listens "$CH:$to"
	[ -n "$(rcli zscore 'redlock_room:{x}' "$to")" ]
	kill -9 "$l"
	wait "$l" 2>/dev/null || :
	wait_for 5 deaf "$CH:$tl"
	t0=$(now_ms)
	rl unlock --owner "$tok" x
	# Unwoken, o would try again at its next refresh, 30 s after it came.
	took o "$t0" 2000 "release of a --write hold, the room's listener dead"
}

# unlock --force of a read-write lock and of a semaphore.

@test "unlock --force of a redlock --write hold wakes Redisson's readers at once" {
	rl lock --write -t 15s x >/dev/null
	rsn_bg --label r1 rwlock x read --wait 30
	rsn_bg --label r2 rwlock x read --wait 30
	wait_for 10 subscribed r1
	wait_for 10 subscribed r2
	t0=$(now_ms)
	run rl unlock --force x
	assert_success
	took r1 "$t0" 2000 "unlock --force of a --write hold (15 s lease)"
	took r2 "$t0" 2000 "unlock --force of a --write hold (15 s lease)"
}

@test "unlock --force of redlock -s holds wakes a Redisson writer at once" {
	rl lock -s -t 15s x >/dev/null
	rl lock -s -t 15s x >/dev/null
	rsn_bg --label w rwlock x write --wait 30
	wait_for 10 subscribed w
	t0=$(now_ms)
	run rl unlock --force x
	assert_success
	took w "$t0" 2000 "unlock --force of two -s holds (15 s lease)"
}

@test "unlock --force of a redlock semaphore wakes Redisson's waiters on its channel" {
	rl lock --limit 1 -t 15s s >/dev/null
	rsn_bg --label j semaphore s acquire --wait 6
	wait_for 10 subscribed j
	t0=$(now_ms)
	run rl unlock --force s
	assert_success
	# Woken by the message; it finds no count (the semaphore is gone)
	# and waits for one.
	took j "$t0" 1000 "unlock --force of a --limit hold (15 s lease)" woken
	[ "$(rcli exists s)" = 0 ]
}

# Redisson's read and write releases wake redlock's exclusive waiters.

# java_holder KIND: a Redisson holder of x (read or write, 60 s lease),
# thread j:1.
java_holder() {
	python3 "$RSN" --port "$R_PORT" rwlock x "$1" --lease 60000 --keep \
	    --id j:1 >/dev/null
}

# behind_java KIND [--fair]: a redlock exclusive waiter (a minute's
# --waiter-timeout: its heartbeat comes every 20 s) behind a Redisson
# KIND holder is woken by its release.
behind_java() {
	local kind=$1 wtok
	shift
	java_holder "$kind"
	wtok=$(token)
	rl_bg w "$wtok" "$@" --waiter-timeout 60s -w 60s
	wait_for 10 listens "$CH"
	wait_for 3 listens "$RW" || :
	python3 "$RSN" --port "$R_PORT" --label j rwlock x "unlock-$kind" \
	    --id j:1 >>"$D/events"
	t0=$(when_ms j released)
	took w "$t0" 2000 "Redisson $kind release, redlock ${1:-plain} waiter"
}

@test "a Redisson write release wakes a plain redlock waiter at once" {
	behind_java write
}

@test "a Redisson read release wakes a plain redlock waiter at once" {
	behind_java read
}

@test "a Redisson write release wakes a redlock --fair waiter at once" {
	behind_java write --fair
}

@test "a Redisson read release wakes a redlock --fair waiter at once" {
	behind_java read --fair
}

@test "a waiter whose user may not subscribe to the read-write lock's channel waits all the same, woken by a redlock release" {
	local fair
	rcli acl setuser alice reset on '>pw' '~*' '+@all' resetchannels \
	    '&redisson_lock__channel:*' >/dev/null
	for fair in '' --fair; do
		: >"$D/events"
		tok=$(rl lock -t 30s x)
		"$RL" -u "redis://alice:pw@127.0.0.1:$R_PORT" exec $fair -w 20s x -- \
		    sh -c 'echo "acquired w $(date +%s.%N)"' \
		    >>"$D/events" 2>"$D/w.err" 3>&- &
		p=$!
		bg+=("$p")
		wait_for 10 listens "$CH"
		t0=$(now_ms)
		rl unlock --owner "$tok" x
		took w "$t0" 2000 "release of a redlock hold, ${fair:-plain} waiter without &redisson_rwlock:*"
		st=0
		reap -t 10 "$p" || st=$?
		cat "$D/w.err"
		[ "$st" = 0 ]
		! grep -q refused "$D/w.err"
	done
}

# A downgrade publishes nothing: the -s waiter's heartbeat finds it.

@test "a -s waiter takes the lock within its heartbeat after a Redisson writer turns it to read mode" {
	java_holder write
	python3 "$RSN" --port "$R_PORT" rwlock x read --lease 60000 --keep \
	    --id j:1 >/dev/null
	[ "$(rcli hget x mode)" = write ]
	rl_bg s "$(token)" -s -w 60s
	wait_for 10 listens "$RW"
	python3 "$RSN" --port "$R_PORT" --label j rwlock x unlock-write \
	    --id j:1 >>"$D/events"
	t0=$(when_ms j released)
	[ "$(rcli hget x mode)" = read ]
	# The heartbeat is 1.7 s; the lease it was told, 60 s.
	took s "$t0" 4000 "downgrade of a Redisson writer (nothing published)"
}
