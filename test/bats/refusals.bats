#!/usr/bin/env bats
# What the server refuses: ACL users without the lock channels, a server out
# of memory, renamed commands, a cluster that is down or splits a name's
# keys, a fencing counter that cannot grow. Each is the server's condition,
# reported in one line with what to do (exit 69, or 65 for a key that is not
# a lock), and never a half-done change.

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli config set maxmemory 0 >/dev/null
	rcli flushall >/dev/null
	rcli acl setuser alice reset on '>pw' '~*' '+@all' resetchannels >/dev/null
	D=$BATS_TEST_TMPDIR
}
teardown() {
	rcli config set maxmemory 0 >/dev/null
	[ -z "${X_PID:-}" ] || stop_redis "$X_PID"
	stop_strays
}

ALICE_RULE='grant it with ACL SETUSER alice &redisson_lock__channel:*'
alice() { "$RL" -u "redis://alice:pw@127.0.0.1:$R_PORT" "$@"; }
oom() { rcli config set maxmemory-policy noeviction >/dev/null; rcli config set maxmemory 1 >/dev/null; }

@test "ACL without channels: unlock releases, exits 0, and warns that waiters were not woken" {
	run -0 --separate-stderr alice lock x
	tok=$output
	[[ $stderr == "redlock: warning: user alice may not PUBLISH on redisson_lock__channel:{x}, so releasing x will not wake its waiters"*"$ALICE_RULE" ]]
	run -0 --separate-stderr alice unlock --owner "$tok" x
	[ "$(rcli exists x 'redlock_holder:{x}')" = 0 ]
	[[ $stderr == "redlock: warning: x was released, but its waiters were not woken: the server refused PUBLISH on redisson_lock__channel:{x} to user alice"*"$ALICE_RULE" ]]
	[ "$(echo "$stderr" | wc -l)" = 1 ]
	tok=$(rl lock x)
	run -0 --separate-stderr alice unlock --force x
	[ "$(rcli exists x)" = 0 ]
	[[ $stderr == "redlock: warning: x was released, but its waiters were not woken"* ]]
}

@test "ACL without channels: exec warns before COMMAND starts, releases, and exits with COMMAND's status" {
	run -3 --separate-stderr alice exec x -- sh -c 'echo ran; exit 3'
	assert_output ran
	[ "$(rcli exists x 'redlock_holder:{x}')" = 0 ]
	[[ ${stderr_lines[0]} == "redlock: warning: user alice may not PUBLISH on redisson_lock__channel:{x}"* ]]
	[[ ${stderr_lines[1]} == "redlock: warning: x was released, but its waiters were not woken"*"$ALICE_RULE" ]]
	[ "${#stderr_lines[@]}" = 2 ]
	[[ $stderr != *"could not release"* ]]
}

@test "ACL without channels: a waiter exits 69 naming SUBSCRIBE and the rule, and nothing is left behind" {
	tok=$(rl lock x)
	run -69 --separate-stderr alice exec -w 10s x -- echo ran
	refute_output ran
	# The waiting line (not a terminal), then the refusal.
	[[ ${stderr_lines[0]} == "redlock: "20[0-9][0-9]-*"Z waiting for x: held by "* ]]
	[[ ${stderr_lines[1]} == "redlock: redis://alice@127.0.0.1:$R_PORT refused SUBSCRIBE to redisson_lock__channel:{x}:"*" for user alice (NOPERM"*"a waiter needs it to be woken; $ALICE_RULE" ]]
	[ "${#stderr_lines[@]}" = 2 ]
	[ "$(rcli hget x "$tok")" = 1 ]
	# It left the waiting room, and gave up the listener's role.
	[ "$(rcli exists 'redlock_room:{x}' 'redlock_listener:{x}')" = 0 ]
}

@test "ACL without channels: a fair waiter that cannot subscribe leaves the queue, and the next one is served" {
	tok=$(rl lock x)
	run -69 --separate-stderr alice exec --fair -w 10s x -- echo ran
	[[ $stderr == *"refused SUBSCRIBE to redisson_lock__channel:{x}:"*"for user alice (NOPERM"*"$ALICE_RULE" ]]
	[ "$(rcli exists 'redisson_lock_queue:{x}' 'redisson_lock_timeout:{x}' 'redlock_waiter:{x}')" = 0 ]
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec --fair -w 10s x -- touch "$D/next" 3>&- &
	p=$!
	wait_for 5 eval '[ "$(rcli llen "redisson_lock_queue:{x}")" = 1 ]'
	rl unlock --owner "$tok" x
	reap "$p"
	[ -e "$D/next" ]
}

@test "ACL without HDEL or HMGET: the script's refusal exits 69 naming the command and the ACL, never 65 for a key of another type; nothing changed" {
	rcli acl setuser nohdel on '>pw' '~*' '&*' '+@all' '-hdel' >/dev/null
	rcli acl setuser nohmget on '>pw' '~*' '&*' '+@all' '-hmget' >/dev/null
	u="redis://nohdel:pw@127.0.0.1:$R_PORT"
	# Its own acquisition is refused up front (acl.bats): a hold taken
	# by a user that may, and given back by one that may not.
	tok=$(rl lock -t 30s x)
	# The release's HDEL of the holder record.
	run -69 --separate-stderr "$RL" -u "$u" unlock --owner "$tok" x
	[[ $stderr == "redlock: redis://nohdel@127.0.0.1:$R_PORT refused the release script for user nohdel ("*"(HDEL)): grant it EVALSHA, EVAL, the commands the scripts run"* ]]
	[[ $stderr != *"holds a"* ]]
	[ "$(rcli hget x "$tok")" = 1 ]
	[ "$(rcli hexists 'redlock_holder:{x}' "$tok")" = 1 ]
	# The acquisition's HMGET of a held lock.
	run -69 --separate-stderr "$RL" -u "redis://nohmget:pw@127.0.0.1:$R_PORT" exec -n x -- touch "$D/ran"
	[[ $stderr == "redlock: redis://nohmget@127.0.0.1:$R_PORT refused the acquire script for user nohmget ("*"(HMGET)): grant it EVALSHA, EVAL, the commands the scripts run"* ]]
	[[ $stderr != *"holds a"* ]]
	[ ! -e "$D/ran" ]
	[ "$(rcli hlen x)" = 2 ]
	rcli acl deluser nohdel nohmget >/dev/null
}

@test "out of memory: acquisitions exit 69 with the server's reason and change nothing" {
	tok=$(rl lock -t 20s held)
	before=$(rcli dbsize)
	oom
	for cmd in "lock x" "lock -n x" "exec x -- true" "lock --fair -w 1s x" "lock --owner $tok held"; do
		run -69 --separate-stderr rl $cmd
		[[ $stderr == "redlock: redis://127.0.0.1:$R_PORT refused the acquire script (OOM command not allowed when used memory > 'maxmemory'): the server is out of memory: free some or raise maxmemory (an eviction policy would evict held locks too)" ]]
	done
	rcli config set maxmemory 0 >/dev/null
	[ "$(rcli dbsize)" = "$before" ]
	[ "$(rcli hget held "$tok")" = 1 ]
}

@test "out of memory: the last hold is still given back (unlock, exec), a partial unlock exits 69" {
	tok=$(rl lock -t 20s x)
	rl lock --owner "$tok" x >/dev/null
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec -t 600ms y -- sh -c 'touch "$0/started"; i=0; while [ ! -e "$0/go" ] && [ $i -lt 2000 ]; do sleep 0.01; i=$((i + 1)); done' "$D" 3>&- &
	p=$!
	wait_for 5 test -e "$D/started"
	oom
	run -69 --separate-stderr rl unlock --owner "$tok" x
	[[ $stderr == *"refused the release script (OOM command not allowed"*"the server is out of memory"* ]]
	[ "$(rcli hget x "$tok")" = 2 ]
	# Renewals go on under OOM: exec outlives several leases, then releases.
	sleep 1.5
	touch "$D/go"
	reap "$p"
	[ "$(rcli exists y)" = 0 ]
	rcli config set maxmemory 0 >/dev/null
	rl unlock --owner "$tok" x
	oom
	run -0 --separate-stderr rl unlock --owner "$tok" x
	[ "$(rcli exists x 'redlock_holder:{x}')" = 0 ]
}

@test "a renamed EVALSHA or EVAL exits 69 saying the command is disabled" {
	start_redis X --rename-command EVALSHA ''
	run -69 --separate-stderr "$RL" -u "redis://127.0.0.1:$X_PORT" lock x
	[[ $stderr == "redlock: redis://127.0.0.1:$X_PORT refused the acquire script (ERR unknown command 'EVALSHA')"*"the command is renamed or disabled (rename-command); redlock needs EVAL and EVALSHA" ]]
	[ "$(redis-cli -p "$X_PORT" dbsize)" = 0 ]
	stop_redis "$X_PID"
	start_redis X --rename-command EVAL ''
	run -69 --separate-stderr "$RL" -u "redis://127.0.0.1:$X_PORT" status x
	[[ $stderr == *"refused the status script (ERR unknown command 'EVAL')"*"redlock needs EVAL and EVALSHA" ]]
}

@test "a cluster node that serves no slot: CLUSTERDOWN exits 69" {
	start_redis X --cluster-enabled yes --cluster-config-file nodes.conf
	run -69 --separate-stderr "$RL" -u "redis://127.0.0.1:$X_PORT" exec x -- echo ran
	refute_output ran
	[[ $stderr == "redlock: redis://127.0.0.1:$X_PORT refused the acquire script (CLUSTERDOWN Hash slot not served): the cluster is down or does not serve this name's slot: check CLUSTER INFO" ]]
}

@test "a cluster node: names whose braces split the keys over slots are usage errors (CROSSSLOT), others work" {
	start_redis X --cluster-enabled yes --cluster-config-file nodes.conf
	redis-cli -p "$X_PORT" cluster addslotsrange 0 16383 >/dev/null
	wait_for 10 eval 'redis-cli -p "$X_PORT" cluster info | grep -q "^cluster_state:ok"'
	for name in '}{' 'x{}' '{}x' 'x{y' 'a}b'; do
		run -64 --separate-stderr "$RL" -u "redis://127.0.0.1:$X_PORT" lock "$name"
		assert_equal "$stderr" "redlock: redis://127.0.0.1:$X_PORT refused the acquire script (CROSSSLOT): the keys of this name fall in different slots of the cluster; a name with '{' needs a non-empty {tag} ('jobs{backup}'), one without must not contain '}'"
	done
	[ "$(redis-cli -p "$X_PORT" dbsize)" = 0 ]
	run -0 "$RL" -u "redis://127.0.0.1:$X_PORT" exec 'jobs{backup}' -- true
	run -0 "$RL" -u "redis://127.0.0.1:$X_PORT" exec plain -- true
}

@test "a fencing counter at 2^63-1, or not a counter INCR takes: exit 65 and nothing changed" {
	rcli set 'redisson_lock_token:{k}' 9223372036854775807 >/dev/null
	run -65 --separate-stderr rl lock k
	[[ $stderr == "redlock: k is not a lock: key redisson_lock_token:{k} holds a fencing counter at its largest value (2^63-1); nothing was changed"* ]]
	run -65 --separate-stderr rl exec --fair k -- true
	[ "$(rcli dbsize)" = 1 ]
	rcli set 'redisson_lock_token:{k}' 0042 >/dev/null
	run -65 --separate-stderr rl lock k
	[ "$(rcli dbsize)" = 1 ]
	rcli set 'redisson_lock_token:{k}' 9223372036854775806 >/dev/null
	run -0 rl exec k -- sh -c 'echo "$REDLOCK_FENCE"'
	assert_output 9223372036854775807
	# A counter wound back to 0 or below starts again from the clock.
	rcli set 'redisson_lock_token:{k}' -5 >/dev/null
	t=$(server_ms)
	run -0 rl exec k -- sh -c 'echo "$REDLOCK_FENCE"'
	[ "$output" -gt "${t}000" ]
}

@test "a server with HELLO disabled (rename-command): the probe's refusal is no failure; lock, wait, wake and unlock work" {
	start_redis X --rename-command HELLO ''
	x() { "$RL" -u "redis://127.0.0.1:$X_PORT" "$@"; }
	[[ $(redis-cli -p "$X_PORT" hello 2>&1) == *"unknown command"* ]]
	run -0 --separate-stderr x lock -t 30s x
	tok=$output
	assert_equal "$stderr" ''
	x exec -w 10s x -- touch "$D/ran" 3>&- &
	epid=$!
	wait_for 5 eval '[ "$(redis-cli -p "$X_PORT" pubsub numsub "redisson_lock__channel:{x}" | sed -n 2p)" = 1 ]'
	run -0 --separate-stderr x unlock --owner "$tok" x
	assert_equal "$stderr" ''
	reap "$epid"
	[ -e "$D/ran" ]
}
