#!/usr/bin/env bats
# Per master, commands take effect in the order they were sent: a late
# command on a connection given up for slow never runs after a newer one.

load helpers

setup_file() {
	for m in M1 M2 M3 M4 M5; do start_redis "$m"; done
}
teardown_file() {
	for m in M1 M2 M3 M4 M5; do stop_redis "$(pid_of "$m")"; done
}
setup() {
	D=$BATS_TEST_TMPDIR
	for m in M1 M2 M3 M4 M5; do mcli "$m" flushall >/dev/null; done
}
teardown() {
	kill_ours TERM ${proxy-}
	stop_strays
}

mcli() { local m=$1; shift; redis-cli -p "$(eval echo "\$${m}_PORT")" "$@"; }
# How many masters hold lock $1 for owner $2.
held_by() {
	local n=0 m
	for m in M1 M2 M3 M4 M5; do
		[ "$(mcli "$m" hexists "$1" "$2" 2>/dev/null)" = 1 ] && n=$((n + 1))
	done
	echo "$n"
}

# Script calls as the proxy sees them: a release has 20 arguments
# (EVALSHA sha 10 keys, owner, 0, the history's bound, expiry and entry,
# flags, PUBLISH).

@test "a late undo on a slow master runs before the newer acquisition, never after it" {
	command -v python3 >/dev/null || skip "python3 is needed for the proxy"
	# M5 behind a proxy that holds the first release 4 s: twenty times
	# the node timeout (200 ms), and well past the retry below.
	start_proxy "$D/proxy" 4 --hold 20 1 "$D/forwarded" "0:$M5_PORT"
	p5=${proxy_ports[0]}
	urls="redis://127.0.0.1:$M1_PORT,redis://127.0.0.1:$M2_PORT,redis://127.0.0.1:$M3_PORT,redis://127.0.0.1:$M4_PORT,redis://127.0.0.1:$p5"
	# Another owner holds x on M1, M2, M3 and M5 until 1.5 s from now:
	# the first attempts win only M4 and are undone everywhere (the undo
	# for M5, where x was busy, is held); the attempt after that lease
	# wins everywhere, M5 included where nothing is owed. The late undo
	# must not then delete M5's fresh grant.
	until=$(($(now_ms) + 1500))
	for m in M1 M2 M3 M5; do
		mcli "$m" hset x other 1 >/dev/null
		mcli "$m" pexpireat x "$until" >/dev/null
	done
	"$RL" --reply-timeout 200ms -u "$urls" exec -v -w 20s --ttl 20s x -- \
	    sh -c 'echo "$REDLOCK_OWNER" >"$0/owner"
	        i=0; while [ ! -e "$0/done" ] && [ $i -lt 400 ]; do
	        sleep 0.05; i=$((i + 1)); done' "$D" 2>"$D/events" 3>&- &
	p=$!
	wait_for 15 test -s "$D/owner"
	owner=$(cat "$D/owner")
	wait_for 15 test -e "$D/forwarded"
	# The held undo has reached M5 now; whatever the client sent M5 after
	# it runs after it. Then every master holds x for the owner.
	wait_for 5 eval '[ "$(held_by x "$owner")" = 5 ]' || :
	n=$(held_by x "$owner")
	for m in M1 M2 M3 M4 M5; do echo "$m: $(mcli "$m" hgetall x | tr '\n' ' ')"; done	# on failure
	touch "$D/done"
	status=0
	reap "$p" || status=$?
	cat "$D/events"
	# "acquired x on N masters", or "... after T of waiting on N masters"
	believed=$(sed -n 's/.*acquired x .*on \([0-9]*\) masters.*/\1/p' "$D/events")
	echo "the client believed it held x on ${believed:-?} masters; $n hold it" >&3
	[ "$status" -eq 0 ]
	[ -n "$believed" ]
	[ "$believed" -ge 3 ]
	[ "$n" -ge "$believed" ]
	[ "$n" -eq 5 ]
	# And the release, sent behind all of it, leaves nothing anywhere.
	for m in M1 M2 M3 M4 M5; do [ "$(mcli "$m" exists x)" = 0 ]; done
}

@test "one master: a fair waiter's late attempt runs before its leave, not after (no stale queue entry)" {
	command -v python3 >/dev/null || skip "python3 is needed for the proxy"
	u="redis://127.0.0.1:$M1_PORT"
	tok=$("$RL" -u "$u" lock -t 30s x)
	# The waiter's second attempt (the one after it subscribed) is held
	# 4 s, thirteen times --reply-timeout: the waiter retries behind it until
	# its 2 s --wait runs out (75), and leaves the queue. The late attempt,
	# which re-joins the queue, must run before that leave.
	# A fair attempt is EVALSHA, its sha, the key count, 12 keys (the
	# history's, --supersede's, then the plain waiters' records), 16
	# arguments (--min-hold, the history's bound, expiry and entry, the
	# start of the holder record, how long it will still wait) and the
	# publish command: 32 arguments.
	start_proxy "$D/proxy" 4 --hold 32 2 "$D/forwarded" "0:$M1_PORT"
	p=${proxy_ports[0]}
	run -75 --separate-stderr timeout 20 "$RL" --reply-timeout 300ms \
	    -u "redis://127.0.0.1:$p" exec --fair --waiter-timeout 60s -w 2s \
	    --owner waiter-1 x -- touch "$D/ran"
	echo "$stderr"
	[ ! -e "$D/ran" ]
	wait_for 10 test -e "$D/forwarded"
	gone() {
		[ "$(mcli M1 zscore 'redisson_lock_timeout:{x}' waiter-1)" = "" ] &&
		    ! mcli M1 lrange 'redisson_lock_queue:{x}' 0 -1 | grep -qx waiter-1
	}
	wait_for 3 gone || :
	mcli M1 lrange 'redisson_lock_queue:{x}' 0 -1
	gone
	[ "$(mcli M1 hexists x "$tok")" = 1 ]
	"$RL" -u "$u" unlock --owner "$tok" x
}
