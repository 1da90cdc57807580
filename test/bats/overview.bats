#!/usr/bin/env bats
# status without NAME, the overview an operator reads first: every lock
# it can see, Redisson's included, sorted by name, a line each that fits
# the terminal, and "no locks held" when there is none (issue 48, points
# 6 and 9).

load helpers
bats_require_minimum_version 1.5.0

RSN=$BATS_TEST_DIRNAME/redisson.py
rsn() { python3 "$RSN" --port "$R_PORT" "$@"; }

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
}
teardown() {
	[ -z "${TM-}" ] || tmux -L "$TM" kill-server 2>/dev/null || :
	stop_strays
}

@test "status lists Redisson's locks, read locks and permits beside redlock's, sorted by name; an application's keys are not listed" {
	# Made in an order that is not the names' order.
	rsn --id "$(cat /proc/sys/kernel/random/uuid):1" lock zeta --lease 60000 --keep >/dev/null
	rsn rwlock mid read --lease 60000 --keep --id "$(cat /proc/sys/kernel/random/uuid):7" >/dev/null
	rsn semaphore sem set-permits 2 >/dev/null
	rsn semaphore sem acquire --lease 60000 --keep >/dev/null
	rl lock -t 1m beta >/dev/null
	rsn --fair --id "$(cat /proc/sys/kernel/random/uuid):3" lock alpha --lease 60000 --keep >/dev/null
	# An application's data, and a semaphore with no permit taken.
	rcli hset user:42 name bob >/dev/null
	rcli set counter 5 >/dev/null
	rsn semaphore idle set-permits 3 >/dev/null
	run -0 --separate-stderr rl status
	assert_equal "$stderr" ''
	[ "${#lines[@]}" = 5 ]
	assert_line --index 0 --regexp '^alpha: held by owner [0-9a-f-]+:3, lease [0-9.]+s left, 0 waiting$'
	assert_line --index 1 --regexp '^beta: held by '
	assert_line --index 2 --regexp '^mid: held by 1 reader \(1 hold, read-write lock\), lease [0-9.]+s left, 0 waiting$'
	assert_line --index 3 'sem: a semaphore: 1 permit taken, 1 free'
	assert_line --index 4 --regexp '^zeta: held by owner [0-9a-f-]+:1, lease [0-9.]+s left, 0 waiting$'
	run -0 rl status --json
	echo "$output" | jq -e '[.[].name] == ["alpha", "beta", "mid", "sem", "zeta"]'
	# Nothing was written: the application's hash is as it was.
	assert_equal "$(rcli hgetall user:42 | paste -sd,)" 'name,bob'
	assert_equal "$(rcli get counter)" 5
}

@test "status finds a Redisson lock on whichever key names it: a name with a hash tag, and a semaphore's under one" {
	rsn --id "$(cat /proc/sys/kernel/random/uuid):1" lock '{app}.lock' --lease 60000 --keep >/dev/null
	rsn semaphore '{app}.sem' set-permits 1 >/dev/null
	rsn semaphore '{app}.sem' acquire --lease 60000 --keep >/dev/null
	run -0 rl status
	[ "${#lines[@]}" = 2 ]
	assert_line --index 0 --regexp '^\{app\}\.lock: held by owner '
	assert_line --index 1 '{app}.sem: a semaphore: 1 permit taken, 0 free'
}

@test "status without NAME: the fence only with -v; the lines fit an 80-column terminal and are whole on a pipe" {
	command -v tmux >/dev/null || skip "tmux is needed for a terminal"
	label=$(printf 'a long label %.0s' {1..12})
	rl lock -t 1m --label "$label" deploy >/dev/null
	f=$(rcli get 'redisson_lock_token:{deploy}')
	run -0 rl status
	assert_output --regexp "^deploy: held by .*\\($label\\).*, lease [0-9.]+s left, 0 waiting\$"
	refute_output --partial fence
	run -0 rl status -v
	assert_output --partial ", fence $f, 0 waiting"
	(( ${#output} > 80 ))
	# A terminal of 80 columns: a line each, cut at 80, nothing wrapped;
	# the holder's command gives way to the lease and the waiters.
	TM=rl$BASHPID
	TERM=xterm tmux -L "$TM" -f /dev/null new-session -d -x 80 -y 24 -s t \
	    "'$RL' -u redis://127.0.0.1:$R_PORT status; '$RL' -u redis://127.0.0.1:$R_PORT status -v; echo \"exit \$?\"; exec sleep 300" 3>&-
	wait_for 10 eval 'tmux -L "$TM" capture-pane -p -t t | grep -q "^exit 0"'
	tmux -L "$TM" capture-pane -p -J -t t >"$D/screen"
	assert_equal "$(grep -c '^deploy: held by' "$D/screen")" 2
	assert_equal "$(sed -n 3p "$D/screen")" 'exit 0'
	grep -Eq '^deploy: held by .*…, no process renews it, lease [0-9.]+s left, 0 waiting$' "$D/screen"
	(( $(sed -n 1p "$D/screen" | LC_ALL=C.UTF-8 wc -m) <= 81 ))
	(( $(sed -n 2p "$D/screen" | LC_ALL=C.UTF-8 wc -m) <= 81 ))
}
