#!/usr/bin/env bats
# --prefix P: every key of NAME made from P + NAME, as Redisson's
# NameMapper maps the name every other key is derived from; two prefixes
# never contend for one NAME; status lists the names under the prefix,
# without it.

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	unset REDLOCK_PREFIX
}

queued() { [ "$(rcli exists 'redisson_lock_queue:{app:x}')" = 1 ]; }

@test "every key of NAME is made from P + NAME: the lock, holder, fence, history, fair queue and channels" {
	rl --prefix app: lock --fair -t 60s x >/dev/null
	"$RL" -u "redis://127.0.0.1:$R_PORT" --prefix app: lock --fair -w 30s x \
	    >/dev/null 2>&1 3>&- &
	waiter=$!
	wait_for 30 queued
	# The waiter's channel is its own under the mapped name.
	run -0 rcli pubsub channels '*'
	assert_line --regexp '^redisson_lock__channel:\{app:x\}:'
	run -0 rcli --scan
	for k in 'app:x' 'redlock_holder:{app:x}' 'redisson_lock_token:{app:x}' \
	    'redlock_log:{app:x}' 'redisson_lock_queue:{app:x}' \
	    'redisson_lock_timeout:{app:x}'; do
		assert_line "$k"
	done
	refute_output --partial '{x}'
	refute_line x
	kill "$waiter"
	reap "$waiter" || true
	# COMMAND is told NAME as given.
	run -0 rl --prefix app: exec y -- sh -c 'echo "$REDLOCK_NAME"'
	assert_output y
}

@test "two prefixes do not contend for one NAME" {
	run -0 rl --prefix a: lock x
	run -0 rl --prefix b: lock -n x
	run -75 rl --prefix a: lock -n x
	REDLOCK_PREFIX=b: run -75 rl lock -n x
	run -0 rl lock -n x
}

@test "status lists only the names under the prefix, shown without it" {
	rl --prefix a: lock x >/dev/null
	rl --prefix b: lock y >/dev/null
	rl lock z >/dev/null
	run -0 --separate-stderr rl --prefix a: status
	assert_line --regexp '^x: held by '
	refute_output --partial 'y:'
	refute_output --partial 'z:'
	refute_output --partial 'a:x'
	REDLOCK_PREFIX=b: run -0 rl status --json
	[[ $output == *'"name":"y"'* && $output != *'"name":"x"'* ]]
	run -0 rl --prefix a: status x
	assert_line --index 0 --regexp '^x: held'
	run -1 rl --prefix b: status x
	# Without a prefix, every name, prefixed ones as they are stored.
	run -0 rl status
	assert_line --regexp '^a:x: held'
	assert_line --regexp '^z: held'
}

@test "a nested call under exec --prefix makes the same keys: it re-enters NAME, and is told the prefix" {
	run -0 rl --prefix app: exec x -- sh -c '
	    echo "$REDLOCK_PREFIX"
	    redis-cli -p "$1" hget app:x "$REDLOCK_OWNER"
	    "$0" lock -n x >/dev/null || exit 1
	    redis-cli -p "$1" hget app:x "$REDLOCK_OWNER"
	    "$0" unlock --owner "$REDLOCK_OWNER" x || exit 2
	    redis-cli -p "$1" exists x' "$RL" "$R_PORT"
	assert_line --index 0 app:
	assert_line --index 1 1
	assert_line --index 2 2
	assert_line --index 3 0
	key_gone app:x
}
