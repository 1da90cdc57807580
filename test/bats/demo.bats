#!/usr/bin/env bats
# make demo's script: two contenders, status, and a clean stop.

load helpers

@test "the demo shows contending execs, status, a fair queue, then stops its server" {
	run -0 --separate-stderr "$BATS_TEST_DIRNAME/../demo.sh" "$RL"
	assert_line 'A: backing up'
	assert_line --partial 'backup is busy: held by'
	assert_line '(exit 75)'
	assert_line 'backup: held'
	assert_line 'C: my turn'
	assert_line --regexp '^POS +WAITER +WAITING +GIVES UP +COMMAND$'
	run -0 grep -E '^deploy [123]$' <<<"$output"
	assert_output $'deploy 1\ndeploy 2\ndeploy 3'
	run -0 --separate-stderr "$BATS_TEST_DIRNAME/../demo.sh" "$RL"
	assert_line 'deploy: free'
	assert_line 'demo done; redis-server stopped'
	port=$(sed -n 's/^redis-server on 127.0.0.1:\([0-9]*\) .*/\1/p' <<<"$output")
	[ -n "$port" ]
	run ! redis-cli -p "$port" ping
}
