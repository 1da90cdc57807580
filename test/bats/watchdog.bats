#!/usr/bin/env bats
# The watchdog never blocks on the server: a server that drops SYNs does
# not hold up the kill deadline, and a renewal answered by NOSCRIPT as
# COMMAND ends does not hold up the release.

load helpers

setup_file() { start_redis R --tcp-backlog 1 --enable-debug-command yes; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	kill -CONT "$R_PID" 2>/dev/null || true
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
}
teardown() {
	[ -z "${FILLER:-}" ] || kill "$FILLER" 2>/dev/null || true
	kill -CONT "$R_PID" 2>/dev/null || true
	kill_ours KILL ${epid-}
	stop_strays
}

# lease_end PORT KEY: when KEY's lease ends, in ms since the epoch on the
# server's clock: its TIME and the PTTL in one script, with nothing
# between them.
lease_end() {
	redis-cli -p "$1" eval "local t = redis.call('TIME')
	    return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) +
	        redis.call('PTTL', KEYS[1])" 1 "$2"
}

# Milliseconds since the epoch of a -v event line's timestamp.
event_ms() { echo $(($(date -d "$(cut -d' ' -f2 <<<"$1")" +%s%N) / 1000000)); }

# fill_accept_queue: with the server stopped, connect until a connect
# times out: its accept queue is full and further SYNs are dropped. The
# connections stay open in the background ($FILLER).
fill_accept_queue() {
	python3 -c '
import socket, sys, time
held = []
for _ in range(64):
    s = socket.socket()
    s.settimeout(0.5)
    try:
        s.connect(("127.0.0.1", int(sys.argv[1])))
        held.append(s)
    except OSError:
        open(sys.argv[2], "w").write("%d\n" % len(held))
        break
time.sleep(120)
' "$R_PORT" "$D/filled" 3>&- &
	FILLER=$!
	wait_for 40 test -s "$D/filled"
}

@test "a server that drops SYNs: the watchdog's reconnect never holds up SIGKILL past the lease" {
	command -v python3 >/dev/null || skip "python3 is needed to fill the accept queue"
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec -v -t 9s --kill-after 30s x -- \
	    sh -c 'trap "" TERM; echo $$ >"$0/c"; while :; do sleep 0.05; done' "$D" \
	    2>"$D/events" 3>&- &
	epid=$!
	wait_for 5 test -s "$D/c"
	# When the lease ends, on the server's clock (this machine's), read
	# in one script. (Counted from a moment taken before redis-cli
	# started, it came out tens of ms early on a busy box, where the
	# watchdog keeps 92 ms of drift.)
	expiry=$(lease_end "$R_PORT" x)
	kill -STOP "$R_PID"
	fill_accept_queue
	echo "accept queue full after $(cat "$D/filled") connections" >&3
	wait_for 30 dead "$epid"
	status=0
	reap "$epid" || status=$?
	[ "$status" -eq 79 ]
	killed=$(grep 'the local lease deadline came before --kill-after: SIGKILL to COMMAND' "$D/events" | head -n 1)
	[ -n "$killed" ]
	k_ms=$(event_ms "$killed")
	echo "SIGKILL $((expiry - k_ms)) ms before the lease ended on the server" >&3
	[ "$k_ms" -lt "$expiry" ]
	grep -q 'renewing x: ' "$D/events"
}

@test "a renewal answered by NOSCRIPT as COMMAND ends: exec releases at once, not after --reply-timeout" {
	"$RL" -u "redis://127.0.0.1:$R_PORT" --reply-timeout 20s exec -t 3s x -- \
	    sh -c 'touch "$0/started"; sleep 1.1' "$D" 2>"$D/err" 3>&- &
	epid=$!
	t0=$(now_ms)
	wait_for 5 test -e "$D/started"
	# The renewal goes out at 1 s, while the server sleeps with an empty
	# script cache, and COMMAND ends before the server answers NOSCRIPT.
	sleep 0.75
	rcli script flush >/dev/null
	rcli debug sleep 1.5 >/dev/null &
	wait_for 30 dead "$epid"
	status=0
	reap "$epid" || status=$?
	took=$(($(now_ms) - t0))
	echo "exec ended $took ms after it started (a hang lasts --reply-timeout, 20 s)" >&3
	[ "$status" -eq 0 ]
	[ "$took" -lt 10000 ]
	key_gone x
	[ ! -s "$D/err" ]
}

@test "a server busy (DEBUG SLEEP) as it answers the acquisition: the loss blames the server's late answer, not the watchdog's CPU" {
	rcli debug sleep 5.5 >/dev/null 3>&- &
	dpid=$!
	# Asleep: a PING goes unanswered.
	wait_for 10 eval '! timeout 0.2 redis-cli -p "$R_PORT" ping >/dev/null'
	# Its answer comes over 3.9 s after it was sent: past the local
	# deadline (6 s - drift) less a third of the lease, with no renewal
	# sent before it.
	run -79 --separate-stderr "$RL" -u "redis://127.0.0.1:$R_PORT" --reply-timeout 20s \
	    exec -v -t 6s x -- sleep 30
	[[ $stderr == *"lost x: the server answered the acquisition too late to renew the lease in time: it was busy, with DEBUG SLEEP, a slow script or a fork for persistence; lease last confirmed "* ]]
	[[ $stderr == *"lost the lock on x while COMMAND ran (the server answered the acquisition too late to renew the lease in time: it was busy, with DEBUG SLEEP"* ]]
	[[ $stderr != *"starved"* ]]
	reap -t 30 "$dpid"
}

@test "three masters stopped: a renewal round never holds up SIGKILL past the lease, even with --reply-timeout 2s" {
	for m in M1 M2 M3; do start_redis "$m"; done
	urls="redis://127.0.0.1:$M1_PORT,redis://127.0.0.1:$M2_PORT,redis://127.0.0.1:$M3_PORT"
	"$RL" -u "$urls" --reply-timeout 2s exec -v -t 9s --kill-after 30s x -- \
	    sh -c 'trap "" TERM; echo $$ >"$0/c"; while :; do sleep 0.05; done' "$D" \
	    2>"$D/events" 3>&- &
	epid=$!
	wait_for 5 test -s "$D/c"
	# When the lease ends on the first master to end it, on each one's
	# clock (this machine's). (Counted from one moment taken before all
	# the reads, it came out up to 170 ms early on a busy box, more than
	# the 92 ms of drift that the watchdog keeps.)
	expiry=
	for m in M1 M2 M3; do
		e=$(lease_end "$(eval echo "\$${m}_PORT")" x)
		[ -n "$expiry" ] && [ "$expiry" -le "$e" ] || expiry=$e
	done
	for m in M1 M2 M3; do kill -STOP "$(eval echo "\$${m}_PID")"; done
	wait_for 30 dead "$epid"
	status=0
	reap "$epid" || status=$?
	for m in M1 M2 M3; do stop_redis "$(eval echo "\$${m}_PID")"; done
	[ "$status" -eq 79 ]
	killed=$(grep 'the local lease deadline came before --kill-after: SIGKILL to COMMAND' "$D/events" | head -n 1)
	[ -n "$killed" ]
	k_ms=$(event_ms "$killed")
	echo "SIGKILL $((expiry - k_ms)) ms before the lease ended on the first master to end it" >&3
	[ "$k_ms" -lt "$expiry" ]
}

@test "the watchdog's connection killed twice: it connects again with AUTH and SELECT, renews, and releases at the end" {
	start_redis P --requirepass sekret
	pcli() { redis-cli -p "$P_PORT" -a sekret --no-auth-warning "$@"; }
	pcli config resetstat >/dev/null
	run -0 --separate-stderr "$RL" -u "redis://:sekret@127.0.0.1:$P_PORT/3" exec -v -t 600ms x -- \
	    sh -c 'sleep 0.5; redis-cli -p "$0" -a sekret --no-auth-warning client kill type normal >/dev/null
	        sleep 0.4; redis-cli -p "$0" -a sekret --no-auth-warning client kill type normal >/dev/null
	        sleep 1.5; echo done' "$P_PORT"
	assert_output done
	# Two new connections, each with its SELECT (the first one's too);
	# the redis-cli calls select nothing.
	selects=$(pcli info commandstats | sed -n 's/^cmdstat_select:calls=\([0-9]*\),.*/\1/p')
	[ "$selects" -ge 3 ]
	# Renewed on the new connections, past several leases: the 1.5 s
	# after the last kill alone are 7 renewal periods.
	[ "$(grep -c 'renewed x' <<<"$stderr")" -ge 8 ]
	[[ $stderr != *"could not release"* ]]
	[ "$(pcli -n 3 exists x)" = 0 ]
	stop_redis "$P_PID"
}
