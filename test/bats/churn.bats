#!/usr/bin/env bats
# The features of issue 34 under churn, each checked by a fenced checker
# (test/bats/churn.sh): 8 jobs at once, each section logging its
# REDLOCK_FENCE, while one at a time is killed (redlock alone, or every
# process of it) or stopped past its lease, mid-wait and mid-hold. Per
# name: no fence given twice, fences grow with the sections' starts, and
# a newer section never starts inside an older one unless the older job
# was stopped or killed whole (it cannot know) or exited 79 (it was
# told). Then nobody is left waiting once the waiter timeout has passed.

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
	bg=()
}
teardown() {
	stop_bg
	stop_strays
}

CHURN=$BATS_TEST_DIRNAME/churn.sh

# churn SECONDS EXEC_ARGS...: 8 jobs under chaos for SECONDS, then the
# checker; its summary on fd 3. CHURN_URL: the masters (default: R).
churn() {
	local s=$1
	shift
	REDLOCK_BIN=$RL timeout $((s + 60)) bash "$CHURN" "$D/c" "$s" 8 \
	    "${CHURN_URL:-redis://127.0.0.1:$R_PORT}" "$@" 2>"$D/churn.err" 3>&-
	run bash "$CHURN" check "$D/c"
	echo "$output" >&3
	echo "chaos: $(cut -d' ' -f1 "$D/c/chaos" | sort | uniq -c | tr '\n' ' ')" >&3
	echo "exits: $(cut -d' ' -f2 "$D/c/exits" | sort | uniq -c | tr '\n' ' ')" >&3
	[ "$status" = 0 ]
}
# The fair waiters of NAME whose deadline is still ahead, on the server's
# clock. A redlock waiter's deadline is in its waiter record; its score
# carries a margin of ten minutes for Redisson's clients (lua/prelude.lua,
# rl_fair_margin_ms), so that a dead one, past its deadline, stays in the
# queue until the next script on NAME drops it, and its score says
# nothing of whether it lives.
live_fair() {
	rcli eval "
	    local t = redis.call('TIME')
	    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
	    local n = 0
	    for _, w in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
	      local r = redis.call('HGET', KEYS[2], w)
	      local dl = r and tonumber(string.match(r, '\"deadline_ms\":(%d+)'))
	        or tonumber(redis.call('ZSCORE', KEYS[3], w))
	      if dl and dl > now then n = n + 1 end
	    end
	    return n" 3 "redisson_lock_queue:{$1}" "redlock_waiter:{$1}" \
	    "redisson_lock_timeout:{$1}"
}

# Nobody waits on NAMES once the waiter timeout is past: no live entry in
# any room or fair queue.
nobody_waits() {
	local n now
	now=$(server_ms)
	for n in "$@"; do
		[ "$(rcli zcount "redlock_room:{$n}" "$now" +inf)" = 0 ] || return 1
		[ "$(live_fair "$n")" = 0 ] || return 1
	done
}

# nobody_waits_soon NAMES...: nobody_waits within 10 s; else what is
# left in each room and fair queue, and the redlock processes alive.
nobody_waits_soon() {
	local n
	wait_for 10 nobody_waits "$@" && return 0
	echo "server time $(server_ms) ms" >&3
	for n in "$@"; do
		echo "$n room: $(rcli zrange "redlock_room:{$n}" 0 -1 withscores | tr '\n' ' ')" >&3
		echo "$n timeout: $(rcli zrange "redisson_lock_timeout:{$n}" 0 -1 withscores | tr '\n' ' ')" >&3
		echo "$n queue: $(rl queue --json "$n" 2>&1)" >&3
	done
	echo "redlock processes of this test: $(pgrep -a -f "$D/" | tr '\n' ';')" >&3
	return 1
}

@test "a pool of 3 under churn: no double holder, no fence given twice" {
	churn 20 -q -t 1500ms -w 30s --waiter-timeout 2s --any p1 p2 p3
	nobody_waits_soon p1 p2 p3
	run -0 rl queue p1
}

@test "a fair pool of 3 under churn: no double holder, no fence given twice" {
	churn 20 -q -t 1500ms -w 30s --waiter-timeout 2s --fair --any p1 p2 p3
	nobody_waits_soon p1 p2 p3
}

@test "a pool of 3 on three masters under churn: no double holder, no fence given twice" {
	start_redis M2
	start_redis M3
	CHURN_URL="redis://127.0.0.1:$R_PORT,redis://127.0.0.1:$M2_PORT,redis://127.0.0.1:$M3_PORT" \
	    churn 15 -q -t 1500ms -w 30s --waiter-timeout 2s --any p1 p2 p3
	stop_redis "$M2_PID"
	stop_redis "$M3_PID"
}

@test "--supersede waiters under churn: no double holder; a superseded waiter never runs" {
	churn 20 -q -t 1500ms -w 30s --waiter-timeout 2s --supersede x
	# Every job that exited 80 was superseded, and had no section; and
	# one at least was.
	grep -q ' 80$' "$D/c/exits"
	for j in $(awk '$2 == 80 { print $1 }' "$D/c/exits"); do
		! grep -q " $j " "$D/c/log"
	done
	nobody_waits_soon x
}

@test "--supersede --fair waiters under churn: no double holder; a superseded waiter never runs" {
	churn 20 -q -t 1500ms -w 30s --waiter-timeout 2s --supersede --fair x
	grep -q ' 80$' "$D/c/exits"
	for j in $(awk '$2 == 80 { print $1 }' "$D/c/exits"); do
		! grep -q " $j " "$D/c/log"
	done
	nobody_waits_soon x
}

@test "the checker finds a double holder, a fence given twice, a fence that went back" {
	mkdir -p "$D/c"
	: >"$D/c/chaos"
	# Job 1.1 holds p1 from 100 to 300, and exits 0; 2.1 starts at 200.
	printf '%s\n' 'start p1 10 1.1 100' 'end p1 10 1.1 300' \
	    'start p1 11 2.1 200' 'end p1 11 2.1 400' >"$D/c/log"
	printf '%s\n' '1.1 0' '2.1 0' >"$D/c/exits"
	run -1 bash "$CHURN" check "$D/c"
	assert_line --partial "double holder of p1: job 2.1 (fence 11) started inside job 1.1"
	# Told (79), or killed whole inside its section: tolerated.
	printf '%s\n' '1.1 79' '2.1 0' >"$D/c/exits"
	run -0 bash "$CHURN" check "$D/c"
	assert_line "sections 2 overlaps 1 tolerated 1"
	echo 'killall 1.1 150' >"$D/c/chaos"
	printf '%s\n' 'start p1 10 1.1 100' 'start p1 11 2.1 200' \
	    'end p1 11 2.1 400' >"$D/c/log"
	printf '%s\n' '1.1 137' '2.1 0' >"$D/c/exits"
	run -0 bash "$CHURN" check "$D/c"
	# Stopped, exit 0: not told.
	echo 'stop 1.1 150' >"$D/c/chaos"
	printf '%s\n' 'start p1 10 1.1 100' 'end p1 10 1.1 300' \
	    'start p1 11 2.1 200' 'end p1 11 2.1 400' >"$D/c/log"
	printf '%s\n' '1.1 0' '2.1 0' >"$D/c/exits"
	run -1 bash "$CHURN" check "$D/c"
	# A fence given twice, and one that went back.
	: >"$D/c/chaos"
	printf '%s\n' 'start p1 10 1.1 100' 'end p1 10 1.1 150' \
	    'start p1 10 2.1 200' 'end p1 10 2.1 250' \
	    'start p2 9 3.1 100' 'end p2 9 3.1 300' \
	    'start p2 8 4.1 400' 'end p2 8 4.1 450' >"$D/c/log"
	printf '%s\n' '1.1 0' '2.1 0' '3.1 79' '4.1 0' >"$D/c/exits"
	run -1 bash "$CHURN" check "$D/c"
	assert_line --partial "duplicate fence 10 on p1 (jobs 1.1 and 2.1)"
	assert_line --partial "fence went back on p2: job 4.1 (8) started after job 3.1 (9)"
	# The job with the older fence that began later exited 79: it was
	# told its lease was lost (stopped before its section's first line).
	printf '%s\n' 'start p2 9 3.1 100' 'end p2 9 3.1 300' \
	    'start p2 8 4.1 400' 'end p2 8 4.1 450' >"$D/c/log"
	printf '%s\n' '3.1 0' '4.1 79' >"$D/c/exits"
	run -0 bash "$CHURN" check "$D/c"
	printf '%s\n' '3.1 79' '4.1 0' >"$D/c/exits"
	run -1 bash "$CHURN" check "$D/c"
	assert_line --partial "fence went back on p2: job 4.1 (8) started after job 3.1 (9)"
}
