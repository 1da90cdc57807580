#!/usr/bin/env bats
# A nested call re-enters only a hold that still exists. While an exec of
# n runs COMMAND, unlock --force removes its hold and another process
# takes n and gives it back; a call inside COMMAND (which inherits
# REDLOCK_HELD, the exec's token) then finds nothing of that token's to
# re-enter: it exits 79 and takes nothing (taking the free name afresh
# with the exec's token would be a second holder beside the one that had
# it meanwhile, renewed by the exec's watchdog as its own), and the exec
# exits 79 too: a run whose hold was taken away is never a success.

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
	bg=()
	# inner.sh NESTED...: COMMAND of the outer exec: it says it runs,
	# waits for $D/go, runs NESTED (a redlock call) and records its
	# status and stderr, then ends with 0.
	cat >"$D/inner.sh" <<-'EOF'
	D=$(dirname "$0")
	: >"$D/running"
	i=0
	while [ ! -e "$D/go" ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i + 1)); done
	timeout 20 "$@" >"$D/nested.out" 2>"$D/nested.err"
	echo $? >"$D/nested.st"
	EOF
}
teardown() {
	local p
	kill_ours KILL "${bg[@]}"
	for p in "${bg[@]}"; do wait "$p" 2>/dev/null || :; done
	[ -z "${M2_PID-}" ] || stop_redis "$M2_PID"
	[ -z "${M3_PID-}" ] || stop_redis "$M3_PID"
	stop_strays
}

# The servers: R, or the masters in URLS.
urls() { echo "${URLS:-redis://127.0.0.1:$R_PORT}"; }
rlu() { "$RL" -u "$(urls)" "$@"; }


# robbed KIND TTL NESTED...: an exec of n as KIND (lease TTL) whose
# COMMAND runs NESTED once the hold was forced away and n was taken and
# given back by another process of the same kind. Leaves the exec's
# status in $D/outer.st, its stderr in $D/outer.err.
robbed() {
	local kind=$1 ttl=$2
	shift 2
	(
		s=0
		# shellcheck disable=SC2046
		rlu exec -t "$ttl" $(opt "$kind") n -- sh "$D/inner.sh" "$@" \
		    2>"$D/outer.err" 3>&- || s=$?
		echo "$s" >"$D/outer.st"
	) &
	bg+=($!)
	wait_for 30 test -e "$D/running"
	run -0 rlu unlock --force n
	# shellcheck disable=SC2046
	run -0 rlu exec -n $(opt "$kind") n -- true
	touch "$D/go"
	wait_for 60 test -s "$D/outer.st"
	wait_for 30 test -s "$D/nested.st"
}

# gone KIND TTL NESTED...: NESTED, inside a robbed exec of KIND, exits 79
# with one line that says the hold is gone; nothing of the exec's token
# is left in Redis, and the exec exits 79.
gone() {
	local kind=$1
	robbed "$@"
	assert_equal "$(cat "$D/nested.st")" 79
	run cat "$D/nested.err"
	assert_output "redlock: n is no longer held by the exec above this call (removed by unlock --force, expired, or lost by the server): not taken afresh, since another holder may have it; that exec loses it too"
	assert_equal "$(cat "$D/outer.st")" 79
	# Nothing is held: no lock hash, no permit taken.
	case $kind in
	limit) assert_equal "$(rcli zcard '{n}:timeout')" 0 ;;
	*) assert_equal "$(rcli exists n)" 0 ;;
	esac
	assert_equal "$(rcli hlen 'redlock_holder:{n}')" 0
	# The history shows no acquisition after the other process's.
	run -0 rl log --json n
	assert_equal "$(printf '%s\n' "$output" | grep -c '"event":"acquired"')" 2
}

@test "a nested lock after unlock --force: 79, nothing taken, the exec 79 (plain)" {
	gone plain 30s "$RL" -u "$(urls)" lock -q n
}
@test "a nested lock after unlock --force: 79, nothing taken, the exec 79 (--fair)" {
	gone fair 30s "$RL" -u "$(urls)" lock -q --fair n
}
@test "a nested lock after unlock --force: 79, nothing taken, the exec 79 (-s)" {
	gone shared 30s "$RL" -u "$(urls)" lock -q -s n
}
@test "a nested lock after unlock --force: 79, nothing taken, the exec 79 (--write)" {
	gone write 30s "$RL" -u "$(urls)" lock -q --write n
}
@test "a nested lock after unlock --force: 79, nothing taken, the exec 79 (--limit)" {
	gone limit 30s "$RL" -u "$(urls)" lock -q --limit 2 n
}
@test "a nested exec after unlock --force: 79 without running its COMMAND, the exec 79" {
	gone plain 30s "$RL" -u "$(urls)" exec n -- touch "$D/ran"
	[ ! -e "$D/ran" ]
}
@test "a nested -s under --write after unlock --force: 79, no read hold taken" {
	gone write 30s "$RL" -u "$(urls)" lock -q -s n
}
@test "--owner with the exec's token, inside it, after unlock --force: 79 as well" {
	# shellcheck disable=SC2016
	gone plain 30s sh -c 'exec "$0" -u "$1" lock -q --owner "$REDLOCK_OWNER" n' \
	    "$RL" "redis://127.0.0.1:$R_PORT"
}
@test "a nested lock after unlock --force on three masters: 79, nothing taken on any" {
	start_redis M2
	start_redis M3
	URLS="redis://127.0.0.1:$R_PORT,redis://127.0.0.1:$M2_PORT,redis://127.0.0.1:$M3_PORT"
	gone plain 30s "$RL" -u "$URLS" lock -q n
	for p in "$M2_PORT" "$M3_PORT"; do
		assert_equal "$(redis-cli -p "$p" exists n)" 0
	done
}
@test "a nested lock that re-enters a hold still there: re-entered, the exec 0" {
	(
		s=0
		rl exec -t 30s n -- sh -c '"$1" -u "$2" lock -q n >/dev/null &&
		    redis-cli -p "$3" hget n "$REDLOCK_OWNER"' sh "$RL" \
		    "redis://127.0.0.1:$R_PORT" "$R_PORT" >"$D/out" 2>"$D/err" || s=$?
		echo "$s" >"$D/st"
	) &
	bg+=($!)
	wait_for 60 test -s "$D/st"
	assert_equal "$(cat "$D/st")" 0
	assert_equal "$(cat "$D/out")" 2
	assert_equal "$(cat "$D/err")" ""
}
@test "the watchdog does not keep a hold a nested lock would have re-created: COMMAND stopped, 79" {
	# A short lease: the watchdog renews within a second, finds the hold
	# gone, and stops COMMAND (which sleeps on after the nested call).
	cat >>"$D/inner.sh" <<-'EOF'
	: >"$D/slept"
	sleep 20
	EOF
	robbed plain 3s "$RL" -u "$(urls)" lock -q n
	assert_equal "$(cat "$D/nested.st")" 79
	assert_equal "$(cat "$D/outer.st")" 79
	assert_equal "$(rcli exists n)" 0
}
