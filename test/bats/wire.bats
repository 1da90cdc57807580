#!/usr/bin/env bats
# What redlock sends the server, byte for byte as MONITOR shows it, against
# golden files (test/bats/wire/) recorded from an earlier build: exec's
# acquisition and release of each kind (a plain lock, --fair, -s, --write,
# --limit 2, a pool), first with no script cached (EVALSHA, NOSCRIPT, then
# EVAL) and again with them cached; lock and unlock; a fair waiter woken
# by a release; the watchdog's renewals of each kind. A change to how
# calls are built that means to keep behaviour must keep these as they
# are. test/bats/wire.py says what it replaces (tokens, pids, the host,
# durations by the clock) and why; anything else that differs fails, shown
# by diff -u with the command it is in.
#
# Each test has a server of its own, so that no script is cached at its
# start and the connections are the test's alone. The markers ECHO
# wire-begin and ECHO wire-end bound what is compared; between them, only
# redlock talks to the server (the test waits by reading the MONITOR
# output, not by asking).
#
# To record the goldens again, deliberately (from this build, or from
# another binary with REDLOCK_BIN=/path/to/redlock):
#     WIRE_RECORD=1 bats test/bats/wire.bats
# Each test then writes the golden it would compare with: wire/CASE.SERVER
# where one exists for REDLOCK_TEST_SERVER, else wire/CASE (the servers'
# wire is the same today: redis-server and valkey-server share one).

load helpers

WIRE=$BATS_TEST_DIRNAME/wire
WIRE_PY=$BATS_TEST_DIRNAME/wire.py

setup() {
	start_redis R
	D=$BATS_TEST_TMPDIR
	bg=()
	# The holders' commands make and look for files here, by relative
	# names: the command lines that go to the server are the same in
	# every run.
	cd "$D"
}
teardown() {
	stop_bg
	stop_redis "$R_PID"
	stop_strays
}

# wire_begin: MONITOR's output into $D/monitor from here on, up to
# wire_end; what comes before the line of ECHO wire-begin is not compared.
wire_begin() {
	: >"$D/monitor"
	redis-cli -p "$R_PORT" monitor >"$D/monitor" 2>&1 3>&- &
	mon=$!
	bg+=("$mon")
	wait_for 10 grep -qx OK "$D/monitor"
	rcli echo wire-begin >/dev/null
	wait_for 10 grep -q '"wire-begin"' "$D/monitor"
}
wire_end() {
	rcli echo wire-end >/dev/null
	wait_for 10 grep -q '"wire-end"' "$D/monitor"
	kill "$mon"
	reap -t 10 "$mon" || :
}

# sent N REGEX: at least N lines of the MONITOR output so far match REGEX.
sent() { [ "$(grep -c -e "$2" "$D/monitor")" -ge "$1" ]; }

# wire_check CASE [FLAG...]: the commands between the markers, normalised
# by wire.py (with FLAGs), are CASE's golden; or, with WIRE_RECORD=1,
# become it.
wire_check() {
	local case=$1 golden
	shift
	golden=$WIRE/$case.$SERVER
	[ -e "$golden" ] || golden=$WIRE/$case
	python3 "$WIRE_PY" "$@" "$D/monitor" >"$D/$case"
	# Never a pass on nothing: redlock said something (and so did it
	# when the golden was recorded).
	[ -s "$D/$case" ]
	if [ "${WIRE_RECORD:-0}" != 0 ]; then
		cp "$D/$case" "$golden"
		echo "# recorded ${golden#"$BATS_TEST_DIRNAME"/}" >&3
		return 0
	fi
	diff -u -F '^\[' --label "${golden#"$BATS_TEST_DIRNAME"/} (golden)" \
	    --label "$case (this run)" "$golden" "$D/$case"
}

# exec_twice KIND NAME...: exec of KIND (opt, or pool: --any) on NAME or
# the pool of NAMEs, with no script cached, then again with them cached;
# each exits 0 and leaves every NAME free.
exec_twice() {
	local kind=$1 opts n
	shift
	case $kind in
	pool) opts=(--any) ;;
	*) opts=($(opt "$kind")) ;;
	esac
	wire_begin
	run -0 rl exec "${opts[@]}" "$@" -- true
	assert_output ''
	run -0 rl exec "${opts[@]}" "$@" -- true
	assert_output ''
	wire_end
	for n in "$@"; do run -1 rl status "$n"; done
}

@test "exec NAME -- true, a plain lock: the same commands as recorded" {
	exec_twice plain x
	wire_check exec-plain
}

@test "exec --fair NAME -- true: the same commands as recorded" {
	exec_twice fair x
	wire_check exec-fair
}

@test "exec -s NAME -- true, a read lock: the same commands as recorded" {
	exec_twice shared x
	wire_check exec-shared
}

@test "exec --write NAME -- true: the same commands as recorded" {
	exec_twice write x
	wire_check exec-write
}

@test "exec --limit 2 NAME -- true, a permit: the same commands as recorded" {
	exec_twice limit x
	wire_check exec-limit
}

# The pool's connections (one a name) go at once: wire.py groups the
# commands by connection.
@test "exec --any a b c -- true, a pool: the same commands on each connection as recorded" {
	exec_twice pool a b c
	wire_check exec-pool --per-connection
}

@test "lock NAME, then unlock --owner TOKEN NAME: the same commands as recorded" {
	wire_begin
	# lock records its caller's command line: a shell whose words do
	# not hold the checkout's path, which differs from clone to clone.
	tok=$(URL="redis://127.0.0.1:$R_PORT" RL="$RL" \
	    bash -c '"$RL" -u "$URL" lock x; :')
	[ -n "$tok" ]
	run -0 rl unlock --owner "$tok" x
	wire_end
	wire_check lock-unlock
	run -1 rl status x
}

# HOLD: a holder's command, which says it holds and ends when told (file
# go), within 60 s.
HOLD='touch held; i=0; while [ ! -e go ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done'

@test "a --fair waiter woken by the holder's release: the same commands as recorded" {
	# Leases and a waiter timeout of 60 s: no renewal and no refresh of
	# the waiter's place falls inside the test.
	wire_begin
	rl exec --fair -t 60s h -- sh -c "$HOLD" 2>"$D/holder.err" 3>&- &
	holder=$!
	bg+=("$holder")
	wait_for 60 test -e held
	rl exec --fair -t 60s --waiter-timeout 60s h -- true \
	    2>"$D/waiter.err" 3>&- &
	waiter=$!
	bg+=("$waiter")
	# The holder's acquisition, the waiter's first attempt, and its
	# second once subscribed: then it waits, sending nothing. (Should
	# the wait run out, the comparison shows what went instead.)
	wait_for 60 sent 3 '"EVALSHA"' || :
	touch go
	reap -t 60 "$holder"
	reap -t 60 "$waiter"
	wire_end
	wire_check fair-handoff
	grep -q 'waiting for h' "$D/waiter.err"
	run -1 rl status h
}

# renewals KIND: exec of KIND with a 1 s lease, held until the watchdog
# has renewed it three times (four EVALSHAs: the acquisition's and three
# renewals', the first of which also goes as EVAL), then released. How
# many renewals go before the release is the clock's: wire.py --repeats
# shows a run of the same renewal once. (Should the wait run out, with
# fewer renewals, the comparison shows what went instead.)
renewals() {
	wire_begin
	rl exec $(opt "$1") -t 1s r -- sh -c "$HOLD" 2>"$D/err" 3>&- &
	bg+=($!)
	wait_for 60 sent 4 '"EVALSHA"' || :
	touch go
	reap -t 60 "${bg[-1]}"
	wire_end
	wire_check "renewal-$1" --repeats
	[ ! -s "$D/err" ]
	run -1 rl status r
}

@test "the watchdog's renewals of a plain lock: the same commands as recorded" {
	renewals plain
}

@test "the watchdog's renewals of a --fair lock: the same commands as recorded" {
	renewals fair
}

@test "the watchdog's renewals of a read lock: the same commands as recorded" {
	renewals shared
}

@test "the watchdog's renewals of a --write lock: the same commands as recorded" {
	renewals write
}

@test "the watchdog's renewals of a permit: the same commands as recorded" {
	renewals limit
}
