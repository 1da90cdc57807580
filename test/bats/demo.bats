#!/usr/bin/env bats
# make demo's script: two contenders, status, and a clean stop.

load helpers

@test "the demo shows contention, a pushed handoff and status, then stops its server" {
	run -0 --separate-stderr "$BATS_TEST_DIRNAME/../../tools/demo.sh" "$RL"
	assert_line --partial 'backup: held'
	assert_line --partial 'backup is busy: held by'
	assert_line '(exit 75)'
	assert_line --regexp '^C acquired [0-9]+ ms after'
	assert_line 'backup: free'
	assert_line 'demo done; redis-server stopped'
	port=$(sed -n 's/^redis-server on 127.0.0.1:\([0-9]*\) .*/\1/p' <<<"$output")
	[ -n "$port" ]
	run ! redis-cli -p "$port" ping
}
