#!/usr/bin/env bats
# A key at NAME that is not a lock (an application's hash) is never
# taken, waited for, shown as a lock or deleted: exit 65, one line naming
# its type and what is in it, and nothing written.

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	rcli hset user:42 name bob >/dev/null
}

msg="redlock: user:42 is a Redis hash that is not a lock (field 'name' = 'bob'): choose another name; nothing was changed"

# untouched: user:42 is still the application's hash, and nothing else
# was written.
untouched() {
	[ "$(rcli hgetall user:42 | paste -sd ' ')" = 'name bob' ]
	[ "$(rcli dbsize)" = 1 ]
}

@test "exec, lock, -s, --write and --fair on an application's hash: 65, the line, nothing written" {
	for a in "exec -n" "exec -s -n" "exec --write -n" "exec --fair -n" "exec -w 1s"; do
		run -65 --separate-stderr rl $a user:42 -- true
		assert_equal "$stderr" "$msg"
	done
	run -65 --separate-stderr rl lock -n user:42
	assert_output ''
	assert_equal "$stderr" "$msg"
	untouched
}

@test "status NAME and queue NAME on an application's hash: 65, the line" {
	run -65 --separate-stderr rl status user:42
	assert_output ''
	assert_equal "$stderr" "$msg"
	run -65 --separate-stderr rl status --json user:42
	assert_equal "$stderr" "$msg"
	run -65 --separate-stderr rl queue user:42
	assert_equal "$stderr" "$msg"
	untouched
}

@test "unlock and unlock --force on an application's hash: 65, the line, the hash kept" {
	run -65 --separate-stderr rl unlock --owner x user:42
	assert_equal "$stderr" "$msg"
	run -65 --separate-stderr rl unlock --force user:42
	assert_output ''
	assert_equal "$stderr" "$msg"
	untouched
}

@test "status without NAME skips an application's hash beside a held lock" {
	rl lock -t 30s real >/dev/null
	run -0 --separate-stderr rl status
	assert_output --regexp '^real: held by '
	[ "${#lines[@]}" = 1 ]
	run -0 --separate-stderr rl status --json
	jq -e 'map(.name) == ["real"]' <<<"$output"
}

@test "a lock of Redisson's shape (owner -> count, a read-write lock's mode) is still a lock" {
	rcli hset j 'b5c3a1f2-0000-4000-8000-000000000001:57' 1 >/dev/null
	rcli pexpire j 30000 >/dev/null
	run -75 --separate-stderr rl exec -n j -- true
	assert_output ''
	[[ $stderr == *busy* ]]
	run -0 rl status j
	rcli hset rw mode read 'b5c3a1f2-0000-4000-8000-000000000001:58' 2 >/dev/null
	rcli pexpire rw 30000 >/dev/null
	run -0 rl status rw
	assert_line '  mode     read (Redisson read-write lock)'
	run -0 rl unlock --force j
	[ "$(rcli exists j)" = 0 ]
}
