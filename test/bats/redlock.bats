#!/usr/bin/env bats
# Redlock: one lock across five independent masters.

load helpers

setup_file() {
	for m in M1 M2 M3 M4 M5; do start_redis "$m"; done
	export URLS="redis://127.0.0.1:$M1_PORT,redis://127.0.0.1:$M2_PORT,redis://127.0.0.1:$M3_PORT,redis://127.0.0.1:$M4_PORT,redis://127.0.0.1:$M5_PORT"
}
teardown_file() {
	for m in M1 M2 M3 M4 M5; do stop_redis "$(pid_of "$m")"; done
}
setup() {
	D=$BATS_TEST_TMPDIR
	for m in M1 M2 M3 M4 M5; do
		pid=$(pid_of "$m")
		kill -CONT "$pid" 2>/dev/null || true
		if dead "$pid"; then
			restart_redis "$m"
		fi
		redis-cli -p "$(eval echo "\$${m}_PORT")" flushall >/dev/null
	done
}
teardown() {
	for m in M1 M2 M3 M4 M5; do kill -CONT "$(pid_of "$m")" 2>/dev/null || true; done
	stop_strays
}

rlm() { "$RL" -u "$URLS" "$@"; }
mcli() { local m=$1; shift; redis-cli -p "$(eval echo "\$${m}_PORT")" "$@"; }
# How many masters hold key $1.
holding() {
	local n=0 m
	for m in M1 M2 M3 M4 M5; do
		[ "$(mcli "$m" exists "$1" 2>/dev/null)" = 1 ] && n=$((n + 1))
	done
	echo "$n"
}
down() { stop_redis "$(pid_of "$1")"; }

@test "several URLs: every master holds the lock while COMMAND runs, none after" {
	run -0 rlm exec x -- sh -c 'echo "$REDLOCK_URL"'
	assert_output "$URLS"
	rlm exec x -- sh -c 'for p in '"$M1_PORT $M2_PORT $M3_PORT $M4_PORT $M5_PORT"'; do redis-cli -p $p exists x; done' >"$D/held"
	[ "$(grep -c '^1$' "$D/held")" = 5 ]
	[ "$(holding x)" = 0 ]
	REDLOCK_URL="$URLS" run -0 "$RL" exec x -- true
	run -0 "$RL" -u "redis://127.0.0.1:$M1_PORT" -u "redis://127.0.0.1:$M2_PORT" \
	    -u "redis://127.0.0.1:$M3_PORT" exec x -- true
}

@test "5 masters, 2 stopped: exec succeeds; 3 stopped: exit 69 and nothing left on the live two" {
	down M4
	down M5
	run -0 rlm exec x -- sh -c 'echo ran'
	assert_output ran
	[ "$(holding x)" = 0 ]
	down M3
	mcli M1 flushall >/dev/null
	mcli M2 flushall >/dev/null
	run -69 --separate-stderr rlm exec x -- touch "$D/ran"
	[[ $stderr == "redlock: no quorum to acquire: 2 of 5 masters answered (need 3); cannot connect to redis://127.0.0.1:$M3_PORT: Connection refused"* ]]
	[ ! -e "$D/ran" ]
	run -69 --separate-stderr rlm exec -w 2s x -- touch "$D/ran"
	[ ! -e "$D/ran" ]
	[ "$(mcli M1 dbsize)" = 0 ]
	[ "$(mcli M2 dbsize)" = 0 ]
}

@test "a waiter that loses the quorum keeps waiting: 75 when -w runs out, not 69; it takes the lock once masters are back" {
	tok=$(rlm lock -t 60s x)
	subscribed() { [ "$(mcli M1 pubsub numsub "redisson_lock__channel:{x}" | sed -n 2p)" = 1 ]; }
	t0=$(now_ms)
	"$RL" -u "$URLS" exec -w 3s x -- touch "$D/ran" 2>"$D/err" 3>&- &
	w=$!
	wait_for 5 subscribed
	down M3
	down M4
	down M5
	st=0
	reap "$w" || st=$?
	took=$(($(now_ms) - t0))
	echo "gave up after $took ms" >&3
	[ "$st" -eq 75 ]
	[ "$took" -ge 2900 ]
	[ ! -e "$D/ran" ]
	run cat "$D/err"
	assert_output --partial "gave up on x after waiting"
	assert_output --partial "out of reach"
	# Waiting for ever: still waiting while the quorum is gone, and the
	# lock once it is back, from the three restarted masters: they come
	# back empty, without the holder's hold (the Redlock caveat).
	for m in M3 M4 M5; do restart_redis "$m"; done
	[ "$(rlm lock --owner "$tok" -t 60s x)" = "$tok" ]
	"$RL" -u "$URLS" exec x -- touch "$D/ran" 3>&- &
	w=$!
	wait_for 5 subscribed
	down M3
	down M4
	down M5
	sleep 1
	! dead "$w" || false
	[ ! -e "$D/ran" ]
	for m in M3 M4 M5; do restart_redis "$m"; done
	st=0
	reap -t 30 "$w" || st=$?
	[ "$st" -eq 0 ]
	[ -e "$D/ran" ]
	[ "$(mcli M1 hget x "$tok")" = 2 ]
}

@test "one master paused: acquisition waits for it only the node timeout, not until it answers" {
	kill -STOP "$(pid_of M3)"
	t0=$(now_ms)
	run -0 --separate-stderr timeout 10 "$RL" -u "$URLS" exec -v --ttl 5s x -- true
	took=$(($(now_ms) - t0))
	echo "acquired, ran and released in $took ms (node timeout 50 ms)" >&3
	# Waiting for M3 would last until timeout(1) ends it, at 10 s.
	[ "$took" -lt 3000 ]
	[[ $stderr == *"acquired x on 4 masters (fence "*", lease 5000ms, validity "* ]]
	kill -CONT "$(pid_of M3)"
}

# holes N: N ports whose connections hang (test/bats/hole.py: every SYN
# dropped, as a partition drops a master's packets); "$holes" lists them.
holes() {
	python3 "$BATS_TEST_DIRNAME/hole.py" "$1" >"$D/holes" 3>&- &
	hpid=$!
	wait_for 5 test -s "$D/holes"
	holes=$(cat "$D/holes")
}
held_on() { [ "$(holding "$1")" = "$2" ]; }
# Three live masters and two whose packets are dropped.
cut_urls() {
	local p
	cut="redis://127.0.0.1:$M1_PORT,redis://127.0.0.1:$M2_PORT,redis://127.0.0.1:$M3_PORT"
	for p in $holes; do cut="$cut,redis://127.0.0.1:$p"; done
}

@test "2 of 5 masters drop every packet: each acquisition costs the per-master bound, not --connect-timeout" {
	holes 2
	cut_urls
	t0=$(now_ms)
	run -0 --separate-stderr timeout 30 "$RL" -u "$cut" --connect-timeout 10s \
	    exec -v -t 3s x -- true
	took=$(($(now_ms) - t0))
	kill "$hpid"
	echo "acquired, ran and released in $took ms (per-master bound 30 ms, connect timeout 10 s)" >&3
	# Waiting for the two would take the 10 s connect timeout.
	[ "$took" -lt 5000 ]
	[[ $stderr == *"acquired x on 3 masters (fence "*", lease 3000ms, validity "* ]]
	[ "$(holding x)" = 0 ]
}

@test "2 of 5 masters drop every packet: the watchdog renews on the live three, a short lease is kept" {
	holes 2
	cut_urls
	# -t 3s: a renewal every second; one that waited for the two dead
	# masters' connections would let the lease run out (exit 79).
	run -0 --separate-stderr timeout 60 "$RL" -u "$cut" --connect-timeout 10s \
	    exec -t 3s x -- sleep 7
	kill "$hpid"
	[[ $stderr != *"lost the lock"* ]]
	[ "$(holding x)" = 0 ]
}

@test "2 of 5 masters drop every packet: a waiter is woken by the release and a -n contender answers at once" {
	holes 2
	cut_urls
	"$RL" -u "$cut" --connect-timeout 10s exec -t 3s x -- sleep 2 3>&- &
	hold=$!
	wait_for 5 held_on x 3
	t0=$(now_ms)
	run -75 --separate-stderr timeout 30 "$RL" -u "$cut" --connect-timeout 10s \
	    exec -n x -- true
	took=$(($(now_ms) - t0))
	echo "busy answer in $took ms" >&3
	[ "$took" -lt 5000 ]
	run -0 --separate-stderr timeout 30 "$RL" -u "$cut" --connect-timeout 10s \
	    exec -w 20s -t 3s x -- true
	reap "$hold"
	kill "$hpid"
}

# waits_out URLS ANSWERED: on URLS, where no quorum answers in time but
# one is in reach, exec -n exits 69 saying ANSWERED ("N of 5 masters
# answered"), and exec -w 2s waits its 2 s out (75), COMMAND not run.
waits_out() {
	run -69 --separate-stderr "$RL" -u "$1" exec -n x -- touch "$D/ran"
	[[ $stderr == "redlock: no quorum to acquire: $2 (need 3); "* ]]
	t0=$(now_ms)
	run -75 --separate-stderr "$RL" -u "$1" exec -w 2s x -- touch "$D/ran"
	took=$(($(now_ms) - t0))
	echo "gave up after $took ms" >&3
	[ "$took" -ge 2000 ]
	[[ $stderr == *"gave up on x after waiting "* ]]
	[ ! -e "$D/ran" ]
}

@test "3 of 5 masters that answer past the node timeout when a waiting exec starts: it waits that out (75 when -w ends), not exit 69 at once; -n exits 69" {
	# M1-M3 behind a proxy that holds each request 300 ms: reached, but
	# late for the node timeout (50 ms at the default ttl; no
	# --reply-timeout, which would set it), as masters on a loaded box
	# are now and then. A waiting exec used to exit 69 on such a first
	# attempt.
	command -v python3 >/dev/null || skip "python3 is needed for the proxy"
	start_proxy "$D/proxy" 0.3 "0:$M1_PORT" "0:$M2_PORT" "0:$M3_PORT"
	read -r p1 p2 p3 <<<"${proxy_ports[*]}"
	urls="redis://127.0.0.1:$p1,redis://127.0.0.1:$p2,redis://127.0.0.1:$p3"
	urls="$urls,redis://127.0.0.1:$M4_PORT,redis://127.0.0.1:$M5_PORT"
	waits_out "$urls" "2 of 5 masters answered"
	kill "$proxy"
}

@test "1 of 5 masters down and 2 late when a waiting exec starts: a quorum is in reach, it waits (75 when -w ends), not exit 69 at once" {
	# M1 and M2 behind a proxy that holds each request 300 ms (late for
	# the 50 ms node timeout), M5 down: M3 and M4 answer, no quorum. A
	# Redlock tolerates one master of five down; what is late is busy,
	# as on a loaded box, so a waiter waits, whereas with three down no
	# quorum is in reach (exit 69 at once, tested above).
	command -v python3 >/dev/null || skip "python3 is needed for the proxy"
	start_proxy "$D/proxy" 0.3 "0:$M1_PORT" "0:$M2_PORT"
	read -r p1 p2 <<<"${proxy_ports[*]}"
	down M5
	urls="redis://127.0.0.1:$p1,redis://127.0.0.1:$p2,redis://127.0.0.1:$M3_PORT"
	urls="$urls,redis://127.0.0.1:$M4_PORT,redis://127.0.0.1:$M5_PORT"
	waits_out "$urls" "2 of 5 masters answered"
	# Each late grant was undone behind it, through the proxy.
	wait_for 5 eval '[ "$(holding x)" = 0 ]'
	kill "$proxy"
}

# A server that lost its script cache (restarted, SCRIPT FLUSH) answers
# a release by SHA with NOSCRIPT; from M3 behind a proxy that holds each
# request 300 ms, that answer comes after the 50 ms node timeout. Given
# up on, the release never ran there: M3 kept the hold for its lease,
# and a nested one kept the outer hold. The release goes whole.
@test "a release that a master late past the node timeout would refuse by NOSCRIPT still runs there: unlock, exec, a nested hold" {
	command -v python3 >/dev/null || skip "python3 is needed for the proxy"
	start_proxy "$D/proxy" 0.3 "0:$M3_PORT"
	urls="redis://127.0.0.1:$M1_PORT,redis://127.0.0.1:$M2_PORT,redis://127.0.0.1:${proxy_ports[0]}"
	gone() { [ "$(mcli M3 exists x)" = 0 ]; }
	tok=$(rlm lock -t 60s x)
	for m in M1 M2 M3 M4 M5; do mcli "$m" script flush >/dev/null; done
	run -0 "$RL" -u "$urls" unlock --owner "$tok" x
	wait_for 5 gone
	# count.sh PORT N: the owner's count of x on PORT once it is N (5 s
	# at most), else as it is then.
	cat >"$D/count.sh" <<-'EOF'
	i=0
	while [ $i -lt 50 ]; do
		n=$(redis-cli -p "$1" hget x "$REDLOCK_OWNER")
		[ "$n" = "$2" ] && break
		sleep 0.1
		i=$((i + 1))
	done
	echo "$n"
	EOF
	# exec's watchdog: the scripts flushed while COMMAND runs, once
	# M3 holds (each request through the proxy comes 300 ms late).
	export PORTS="$M1_PORT $M2_PORT $M3_PORT" C="$D/count.sh"
	rlm exec x -- true
	run -0 "$RL" -u "$urls" exec -t 60s x -- sh -c '
	    sh "$C" "$1" 1 >"$2/outer"
	    for p in $PORTS; do redis-cli -p "$p" script flush >/dev/null; done
	    ' sh "$M3_PORT" "$D"
	[ "$(cat "$D/outer")" = 1 ]
	wait_for 5 gone
	# A nested hold taken and given back, the scripts flushed before:
	# taken on M3 while the nested COMMAND runs, then the outer one's
	# count is back to 1 there.
	rlm exec x -- true
	run -0 "$RL" -u "$urls" exec -t 60s x -- sh -c '
	    sh "$C" "$2" 1 >"$3/outer"
	    for p in $PORTS; do redis-cli -p "$p" script flush >/dev/null; done
	    "$0" -u "$1" exec -t 1s x -- sh -c "sh \$C $2 2 >$3/inner" ||
	        exit 9
	    sh "$C" "$2" 1 >"$3/count"' "$RL" "$urls" "$M3_PORT" "$D"
	[ "$(cat "$D/outer")" = 1 ]
	[ "$(cat "$D/inner")" = 2 ]
	[ "$(cat "$D/count")" = 1 ]
	wait_for 5 gone
	kill "$proxy"
}

# nested_away THEN: a nested exec under an outer one on M1, M2 and M3,
# whose third master is a port ($P) where nothing listens, so that its
# acquisition holds M1 and M2, never M3. Its COMMAND opens that port, a
# proxy to M3 in a session of its own (redlock may kill COMMAND's group),
# then runs the shell lines THEN. The nested exec's status goes to
# $D/status, its stderr to $D/err, and the owner's count on each master
# after it to $D/after.
nested_away() {
	export P D PROXY="$BATS_TEST_DIRNAME/proxy.py" M3P=$M3_PORT
	P=$(free_port)
	export INNER="redis://127.0.0.1:$M1_PORT,redis://127.0.0.1:$M2_PORT,redis://127.0.0.1:$P"
	cat >"$D/inner.sh" <<-'EOF'
	setsid python3 "$PROXY" 0 "$P:$M3P" >"$D/proxy.out" 3>&- &
	i=0
	until grep -q ready "$D/proxy.out" || [ $i -ge 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	pgrep -f "$PROXY 0 $P:" >"$D/proxy.pid"
	EOF
	echo "$1" >>"$D/inner.sh"
	run -0 "$RL" -u "redis://127.0.0.1:$M1_PORT,redis://127.0.0.1:$M2_PORT,redis://127.0.0.1:$M3_PORT" \
	    exec -t 60s x -- sh -c '
	    "$0" -u "$INNER" exec -t 60s x -- sh "$D/inner.sh" 2>"$D/err"
	    echo $? >"$D/status"
	    for p in $1; do redis-cli -p "$p" hget x "$REDLOCK_OWNER"; done \
	        >"$D/after"' "$RL" "$M1_PORT $M2_PORT $M3_PORT"
	kill "$(cat "$D/proxy.pid")" 2>/dev/null || true
	cat "$D/err" "$D/after"
	grep -q ready "$D/proxy.out"
}

@test "a nested hold that never reached a master leaves the outer hold there alone at its release" {
	command -v python3 >/dev/null || skip "python3 is needed for the proxy"
	# Its release could reach M3, where the outer hold's count of the
	# same owner is.
	nested_away 'redis-cli -p "$M3P" hget x "$REDLOCK_OWNER" >"$D/inner"'
	[ "$(cat "$D/status")" = 0 ]
	# Held twice on M1 and M2, once (the outer hold) on M3 ...
	[ "$(cat "$D/inner")" = 1 ]
	# ... and after the nested release, once on each: M3 too.
	[ "$(tr '\n' ' ' <"$D/after")" = "1 1 1 " ]
	[ "$(holding x)" = 0 ]
}

@test "the same when the nested watchdog dies: redlock gives the hold back where it went, not on M3" {
	command -v python3 >/dev/null || skip "python3 is needed for the proxy"
	# COMMAND kills its watchdog (its parent): redlock itself then
	# releases, on a client of its own, which the watchdog told where
	# the acquisition went.
	nested_away 'kill -9 "$PPID"; sleep 10'
	[ "$(cat "$D/status")" = 79 ]
	grep -q "the watchdog of x died" "$D/err"
	[ "$(tr '\n' ' ' <"$D/after")" = "1 1 1 " ]
	[ "$(holding x)" = 0 ]
}

@test "a nested acquisition undone leaves the outer hold alone on a master it never went to" {
	command -v python3 >/dev/null || skip "python3 is needed for the proxy"
	# M3 behind a proxy 1 s late: the nested exec's run_id check gives
	# up on it at --connect-timeout, and its acquisition leaves M3 out.
	# Held on M1 and M2 but acknowledged by no replica (--replicas 1
	# on masters with none), it is undone, on M1 and M2 only: an undo
	# sent to M3 would run there once the proxy lets it through.
	start_proxy "$D/proxy" 1 "0:$M3_PORT"
	export INNER="redis://127.0.0.1:$M1_PORT,redis://127.0.0.1:$M2_PORT,redis://127.0.0.1:${proxy_ports[0]}"
	export D
	run -0 "$RL" -u "redis://127.0.0.1:$M1_PORT,redis://127.0.0.1:$M2_PORT,redis://127.0.0.1:$M3_PORT" \
	    exec -t 60s x -- sh -c '
	    "$0" -u "$INNER" --connect-timeout 300ms --reply-timeout 2s \
	        exec -v --replicas 1 -t 60s x -- touch "$D/ran" 2>"$D/err"
	    echo $? >"$D/status"
	    sleep 1.5
	    for p in $1; do redis-cli -p "$p" hget x "$REDLOCK_OWNER"; done \
	        >"$D/after"' "$RL" "$M1_PORT $M2_PORT $M3_PORT"
	kill "$proxy"
	cat "$D/err" "$D/after"
	[ "$(cat "$D/status")" = 69 ]
	[ ! -e "$D/ran" ]
	grep -q "replica" "$D/err"
	[ "$(tr '\n' ' ' <"$D/after")" = "1 1 1 " ]
	[ "$(holding x)" = 0 ]
}

@test "a quorum that answers too late for the ttl: released everywhere, COMMAND not run" {
	# M1-M3 behind a proxy that holds each request 600 ms, twice the
	# lease: their grants come too late whatever the machine's load.
	command -v python3 >/dev/null || skip "python3 is needed for the proxy"
	start_proxy "$D/proxy" 0.6 "0:$M1_PORT" "0:$M2_PORT" "0:$M3_PORT"
	read -r p1 p2 p3 <<<"${proxy_ports[*]}"
	run -75 --separate-stderr "$RL" --reply-timeout 5s \
	    -u "redis://127.0.0.1:$p1,redis://127.0.0.1:$p2,redis://127.0.0.1:$p3" \
	    -u "redis://127.0.0.1:$M4_PORT,redis://127.0.0.1:$M5_PORT" \
	    exec -n --ttl 300ms x -- touch "$D/ran"
	kill "$proxy"
	[[ $stderr == *"masters granted it, but too slowly"* ]]
	[ ! -e "$D/ran" ]
	[ "$(holding x)" = 0 ]
	[ "$(holding 'redlock_holder:{x}')" = 0 ]
}

@test "zero overlap: 4 workers x 50 exec on 5 masters, with one master restarted midway" {
	worker() {
		# Its own file (BASHPID: this worker's subshell, not the
		# command substitution's below).
		local err=$D/err.$BASHPID st
		for _ in $(seq 1 50); do
			st=0
			rlm exec -w 60s ov -- sh -c '
			    mkdir "$0/cs" 2>/dev/null || echo overlap >>"$0/overlaps"
			    echo done >>"$0/done"
			    rmdir "$0/cs"' "$D" 2>"$err" || st=$?
			[ "$st" = 0 ] || echo "fail $st: $(cat "$err")" >>"$D/fails"
		done
	}
	pids=
	for _ in 1 2 3 4; do worker 3>&- & pids="$pids $!"; done
	wait_for 60 eval '[ "$(cat "$D/done" 2>/dev/null | wc -l)" -ge 60 ]'
	kill -9 "$(pid_of M2)"
	sleep 0.3
	restart_redis M2
	for p in $pids; do reap "$p"; done
	[ ! -e "$D/overlaps" ]
	# Each failure with what redlock said.
	[ ! -e "$D/fails" ] || { cat "$D/fails"; false; }
	[ "$(wc -l <"$D/done")" -eq 200 ]
}

@test "3 of 5 masters stop during exec: COMMAND is dead before the validity ends, exit 79" {
	"$RL" -u "$URLS" exec -v --ttl 2s x -- \
	    sh -c 'trap "date +%s%N >'"$D"'/died; exit 1" TERM; sleep 30 & wait' \
	    2>"$D/events" 3>&- &
	p=$!
	wait_for 5 grep -q 'renewed x' "$D/events"
	t_stop=$(now_ms)
	kill -STOP "$(pid_of M1)" "$(pid_of M2)" "$(pid_of M3)"
	status=0
	reap "$p" || status=$?
	kill -CONT "$(pid_of M1)" "$(pid_of M2)" "$(pid_of M3)"
	[ "$status" -eq 79 ]
	died=$(($(cat "$D/died") / 1000000))
	echo "died $((died - t_stop)) ms after 3 masters stopped (ttl 2000 ms)" >&3
	[ "$died" -lt $((t_stop + 2000)) ]
}

@test "a lock gone on a majority behind exec's back: exit 79" {
	"$RL" -u "$URLS" exec --ttl 900ms x -- sleep 30 3>&- &
	p=$!
	wait_for 5 eval '[ "$(holding x)" = 5 ]'
	for m in M1 M2 M3; do mcli "$m" del x >/dev/null; done
	status=0
	reap "$p" || status=$?
	[ "$status" -eq 79 ]
}

@test "status shows each master and the quorum verdict, in text and JSON" {
	tok=$(rlm lock -t 20s x)
	down M5
	mcli M4 del x >/dev/null
	run -0 rlm status x
	assert_line --index 0 'x: held'
	assert_line '  quorum   held on 3 of 5 masters (need 3)'
	assert_line --regexp "^  master   redis://127.0.0.1:$M1_PORT: held by $tok, lease 1[89]\.[0-9]s left, fence $(mcli M1 get 'redisson_lock_token:{x}')\$"
	assert_line "  master   redis://127.0.0.1:$M4_PORT: free"
	assert_line --regexp "^  master   redis://127.0.0.1:$M5_PORT: no answer: cannot connect to redis://127.0.0.1:$M5_PORT: Connection refused$"
	run -0 rlm status --json x
	echo "$output" | jq -e --arg t "$tok" '.held and .owner == $t and .quorum == 3 and .held_on == 3
	    and (.nodes | length == 5) and .nodes[3].held == false
	    and (.nodes[4].error | test("Connection refused"))
	    and ([.nodes[0,1,2] | .held and .owner == $t] | all)'
	mcli M3 del x >/dev/null
	run -1 rlm status x
	assert_line --index 0 'x: free'
	assert_line '  quorum   held on 2 of 5 masters (need 3)'
	run -0 rlm unlock --owner "$tok" x
	[ "$(holding x)" = 0 ]
}

@test "status: a Redisson read lock is held where a quorum has the same readers; a semaphore on one master is not a lock" {
	a=b5c3a1f2-0000-4000-8000-000000000001:57
	b=0c0ffee0-0000-4000-8000-000000000002:12
	for m in M1 M2 M3; do
		mcli "$m" hset rw mode read "$a" 1 >/dev/null
		mcli "$m" pexpire rw 30000 >/dev/null
	done
	mcli M5 hset rw mode read "$b" 1 >/dev/null
	run -0 --separate-stderr rlm status rw
	assert_line --index 0 'rw: held'
	assert_line '  mode     read (Redisson read-write lock)'
	assert_line "  reader   $a (1 hold, no lease left)"
	assert_line '  quorum   held on 3 of 5 masters (need 3)'
	assert_line --regexp "^  master   redis://127.0.0.1:$M1_PORT: held by readers, lease [0-9.]+s left, fence -\$"
	assert_line "  master   redis://127.0.0.1:$M4_PORT: free"
	run -0 --separate-stderr rlm status --json rw
	echo "$output" | jq -e --arg a "$a" '.held and .mode == "read" and .held_on == 3
	    and .readers == [{"owner": $a, "holds": 1, "lease_ms": null, "host": null, "pid": null, "user": null, "cmd": null, "running": null, "since_ms": null, "fence": null, "finished": false, "held_until_ms": null}]'
	mcli M3 del rw >/dev/null
	run -1 --separate-stderr rlm status rw
	assert_line --index 0 'rw: free'
	mcli M2 set s 2 >/dev/null
	run -1 --separate-stderr rlm status s
	assert_output 's: a semaphore: 0 permits taken, 2 free'
	[ "$(mcli M2 get s)" = 2 ]
	[ "$(holding s)" = 1 ]
}

@test "REDLOCK_FENCE is the largest token among the masters that granted it" {
	mcli M4 set 'redisson_lock_token:{x}' 9999999999999999 >/dev/null
	run -0 rlm exec x -- sh -c 'echo "$REDLOCK_FENCE"'
	assert_output 10000000000000000
}

@test "unlock --force and re-entry work across masters" {
	tok=$(rlm lock x)
	run -0 rlm lock --owner "$tok" x
	[ "$(mcli M1 hget x "$tok")" = 2 ]
	run -0 rlm unlock --owner "$tok" x
	[ "$(mcli M1 hget x "$tok")" = 1 ]
	run -1 rlm unlock --owner nobody x
	run -0 rlm unlock --force x
	[ "$(holding x)" = 0 ]
	run -1 --separate-stderr rlm unlock --force x
}

@test "--fair and queue are refused with several masters" {
	run -64 --separate-stderr rlm exec --fair x -- true
	[[ $stderr == *"--fair is not available with several masters (Redlock)"* ]]
	run -64 --separate-stderr rlm lock --fair x
	run -64 --separate-stderr rlm queue x
	[[ $stderr == *"not available with several masters"* ]]
	[ "$(holding x)" = 0 ]
}

@test "a waiter across masters is woken by the release, not by a timer" {
	tok=$(rlm lock -t 60s x)
	"$RL" -u "$URLS" lock -w 60s x >"$D/w" 3>&- &
	w=$!
	wait_for 5 eval '[ "$(mcli M1 pubsub numsub "redisson_lock__channel:{x}" | sed -n 2p)" = 1 ]'
	t0=$(now_ms)
	rlm unlock --owner "$tok" x
	reap "$w"
	took=$(($(now_ms) - t0))
	echo "woken $took ms after unlock began" >&3
	# The holder's lease had about 60 s left.
	[ "$took" -lt 5000 ]
	# A master may still have been releasing when the waiter asked it:
	# the waiter then holds a quorum, not all five.
	[ "$(holding x)" -ge 3 ]
	[ "$(mcli M1 hget x "$(cat "$D/w")")$(mcli M2 hget x "$(cat "$D/w")")$(mcli M3 hget x "$(cat "$D/w")")$(mcli M4 hget x "$(cat "$D/w")")$(mcli M5 hget x "$(cat "$D/w")")" != "" ]
}

@test "a Java client's RLock on one master makes the name busy: no majority is taken beside it, and its release wakes a waiter" {
	tok="$(cat /proc/sys/kernel/random/uuid):7"
	python3 "$BATS_TEST_DIRNAME/redisson.py" --port "$M3_PORT" --id "$tok" \
	    lock x --lease 60000 --keep
	# Four masters would grant it: busy all the same, nothing left on
	# them, and the holder named.
	run -75 --separate-stderr rlm lock -n x
	[[ $stderr == "redlock: x is busy: held by owner $tok, "* ]]
	[ "$(holding x)" = 1 ]
	"$RL" -u "$URLS" lock -w 30s x >"$D/w" 2>"$D/w.err" 3>&- &
	w=$!
	wait_for 5 eval '[ "$(mcli M3 pubsub numsub "redisson_lock__channel:{x}" | sed -n 2p)" -ge 1 ]'
	# Waiting, holding nothing (its attempts undo what they took).
	wait_for 3 eval '[ "$(holding x)" = 1 ]'
	[ ! -s "$D/w" ]
	# ...and quietly: its undone attempts wake nobody, itself included
	# (it listens on every master). It refreshes its place in the room
	# every 1.7 s (an attempt and its undo); woken by its own undo, it
	# made thousands of calls a second.
	mcli M1 config resetstat >/dev/null
	sleep 2
	calls=$(mcli M1 info commandstats | sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),.*/\1/p')
	echo "M1 saw ${calls:-0} EVALSHA in 2 s of waiting" >&3
	[ "${calls:-0}" -le 10 ]
	t0=$(now_ms)
	python3 "$BATS_TEST_DIRNAME/redisson.py" --port "$M3_PORT" --id "$tok" \
	    unlock x
	reap "$w"
	took=$(($(now_ms) - t0))
	echo "woken $took ms after the Java release began" >&3
	# The Java lease had about 60 s left.
	[ "$took" -lt 5000 ]
	[ "$(holding x)" -ge 3 ]
}

@test "waiting across masters is pushed: no retries while the holder keeps the lock" {
	rlm lock -t 5s x >/dev/null
	# The waiter refreshes its place in the room every third of
	# --waiter-timeout (it is the room's listener): not within these 2 s.
	"$RL" -u "$URLS" lock -w 2s --waiter-timeout 30s x 3>&- &
	w=$!
	wait_for 5 eval '[ "$(mcli M1 pubsub numsub "redisson_lock__channel:{x}" | sed -n 2p)" = 1 ]'
	mcli M1 config resetstat >/dev/null
	status=0
	reap "$w" || status=$?
	[ "$status" -eq 75 ]
	# After subscribing: one attempt, then none until --wait ran out, one
	# last try, and its leave from the waiting room. A polling client
	# would have tried every few ms.
	calls=$(mcli M1 info commandstats | sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),.*/\1/p')
	echo "M1 saw ${calls:-0} EVALSHA while the waiter waited 2 s" >&3
	[ "${calls:-0}" -le 3 ]
}

# refused_as_one URL_A URL_B ARGS...: redlock with ARGS on the five
# masters plus URL_B exits 64 naming URL_A and URL_B as one server, and
# changes nothing on any master or database.
refused_as_one() {
	local a=$1 b=$2
	shift 2
	run -64 --separate-stderr "$RL" -u "$URLS" -u "$b" "$@"
	assert_output ''
	[[ $stderr == "redlock: $a and $b are the same server (run_id "*"): give each master once, or it counts twice towards the quorum" ]]
	[ "$(holding x)" = 0 ]
	[ "$(holding 'redisson_lock_token:{x}')" = 0 ]
	[ "$(mcli M1 -n 1 dbsize)" = 0 ]
}

@test "one server as 127.0.0.1 and as localhost counts once: exit 64, nothing changed" {
	refused_as_one "redis://127.0.0.1:$M1_PORT" "redis://localhost:$M1_PORT" lock x
	refused_as_one "redis://127.0.0.1:$M1_PORT" "redis://localhost:$M1_PORT" exec x -- touch "$D/ran"
	[ ! -e "$D/ran" ]
	refused_as_one "redis://127.0.0.1:$M1_PORT" "redis://localhost:$M1_PORT" status x
	refused_as_one "redis://127.0.0.1:$M1_PORT" "redis://localhost:$M1_PORT" unlock --force x
}

@test "two databases of one server count once: exit 64, nothing changed" {
	refused_as_one "redis://127.0.0.1:$M3_PORT" "redis://127.0.0.1:$M3_PORT/1" lock x
	run -64 --separate-stderr "$RL" -u "redis://127.0.0.1:$M2_PORT/1,redis://127.0.0.1:$M4_PORT,redis://127.0.0.1:$M2_PORT/2" lock x
	assert_equal "$stderr" "redlock: redis://127.0.0.1:$M2_PORT/1 and redis://127.0.0.1:$M2_PORT/2 are the same server (run_id $(mcli M2 info server | sed -n 's/^run_id:\(........\).*/\1/p')): give each master once, or it counts twice towards the quorum"
	[ "$(mcli M2 -n 1 dbsize)$(mcli M2 -n 2 dbsize)$(mcli M4 dbsize)" = 000 ]
}

@test "one server by TCP and by its unix socket counts once: exit 64, nothing changed" {
	start_redis U --unixsocket "$BATS_TEST_TMPDIR/u.sock" --unixsocketperm 700
	run -64 --separate-stderr "$RL" -u "$URLS" -u "redis://127.0.0.1:$U_PORT" \
	    -u "unix://$BATS_TEST_TMPDIR/u.sock" lock x
	dbsize=$(redis-cli -p "$U_PORT" dbsize)
	stop_redis "$U_PID"
	[[ $stderr == "redlock: redis://127.0.0.1:$U_PORT and unix://$BATS_TEST_TMPDIR/u.sock are the same server (run_id "* ]]
	[ "$dbsize" = 0 ]
	[ "$(holding x)" = 0 ]
}

@test "distinct servers pass the check, also for an ACL user who may not run INFO" {
	for m in M1 M2 M3; do
		mcli "$m" acl setuser noinfo on '>pw' '~*' '&*' '+@all' '-info' >/dev/null
	done
	u="redis://noinfo:pw@127.0.0.1"
	run -0 "$RL" -u "$u:$M1_PORT,$u:$M2_PORT,$u:$M3_PORT" exec x -- true
	run -0 rlm exec x -- true
	for m in M1 M2 M3; do mcli "$m" acl deluser noinfo >/dev/null; done
}

@test "an ACL user who may not run SCRIPT: the scripts go whole, the lock is taken and given back on every master" {
	# Every script cached: a user who may ask sends them by SHA.
	rlm exec x -- true
	for m in M1 M2 M3; do
		mcli "$m" acl setuser noscript on '>pw' '~*' '&*' '+@all' '-script' >/dev/null
		mcli "$m" config resetstat >/dev/null
	done
	u="redis://noscript:pw@127.0.0.1"
	run -0 "$RL" -u "$u:$M1_PORT,$u:$M2_PORT,$u:$M3_PORT" exec x -- sh -c '
	    for p in "$@"; do redis-cli -p "$p" exists x; done' sh \
	    "$M1_PORT" "$M2_PORT" "$M3_PORT"
	assert_output "$(printf '1\n1\n1')"
	[ "$(holding x)" = 0 ]
	for m in M1 M2 M3; do
		# SCRIPT EXISTS refused: the acquisition and the release by
		# EVAL, the check by SHA.
		stats=$(calls "$m")
		[[ $stats == *" eval=2 "* && $stats == *" evalsha=1 "* ]]
		mcli "$m" acl deluser noscript >/dev/null
	done
}

@test "a master that failed the check is not waited for again by the acquisition right after it" {
	kill -STOP "$(pid_of M3)"
	t0=$(now_ms)
	run -0 --separate-stderr timeout 20 "$RL" --reply-timeout 2s -u "$URLS" lock -v x
	took=$(($(now_ms) - t0))
	kill -CONT "$(pid_of M3)"
	echo "acquired $took ms after the start (node timeout 2 s)" >&3
	[[ $stderr == *"acquired x on 4 masters"* ]]
	# Waiting for M3 at the check and again at the acquisition: 4 s.
	[ "$took" -lt 3000 ]
}

# calls M: "cmd=N ..." for the commands master M ran since CONFIG RESETSTAT
# (those run by scripts too), and a fresh count from here on.
calls() {
	echo " $(mcli "$1" info commandstats | sed -n 's/^cmdstat_\([a-z|]*\):calls=\([0-9]*\),.*/\1=\2/p' | tr '\n' ' ')"
	mcli "$1" config resetstat >/dev/null
}

@test "the check that no server is named twice runs once per process, in one round trip" {
	# Every script is known (a renewal too): EVALSHA suffices. A 1.5 s
	# lease gives each master 15 ms to answer; 300 ms would give 5 ms,
	# which a loaded box misses now and then (no quorum, exit 69).
	rlm exec --ttl 1500ms warm -- sleep 0.7
	for m in M1 M2 M3 M4 M5; do mcli "$m" config resetstat >/dev/null; done
	tok=$(rlm lock x)
	rlm unlock --owner "$tok" x
	# Per master and process: one check (its INFO runs in the script),
	# then one acquisition or one release; no EVAL. lock's connections
	# also ask INFO memory (may the server evict a lock?), in the
	# handshake's write: three INFO in all.
	for m in M1 M2 M3 M4 M5; do
		stats=$(calls "$m")
		[[ $stats == *" evalsha=4 "* && $stats == *" info=3 "* ]]
		[[ $stats != *" eval="* ]]
	done
	# A watchdog renewing many times checks nothing again (a 1.5 s
	# lease: 300 ms left each master 5 ms to answer, which a busy box
	# missed).
	run -0 --separate-stderr rlm exec -v --ttl 1500ms x -- sleep 2
	[[ $stderr == *"renewed x"* ]]
	# The check's INFO and the acquisition's INFO memory, once each.
	for m in M1 M2 M3 M4 M5; do
		[[ $(calls "$m") == *" info=2 "* ]]
	done
}

@test "a check late on a majority of masters does not leave them out of the acquisition: it still gets a quorum" {
	command -v python3 >/dev/null || skip "python3 is needed for the proxy"
	# M1-M3 each behind a proxy that holds its first 3-argument request
	# (the run_id check, EVALSHA sha 0) 300 ms, past --reply-timeout 200ms; the
	# acquisition that follows on the same connections comes in time.
	pids=
	for m in M1 M2 M3; do
		start_proxy "$D/proxy-$m" 0.3 --hold 3 1 "$D/held-$m" "0:$(eval echo "\$${m}_PORT")"
		p=${proxy_ports[0]}
		eval "P_$m=$p"
		pids="$pids $proxy"
	done
	run -0 --separate-stderr timeout 20 "$RL" --reply-timeout 200ms \
	    -u "redis://127.0.0.1:$P_M1,redis://127.0.0.1:$P_M2,redis://127.0.0.1:$P_M3" \
	    -u "redis://127.0.0.1:$M4_PORT,redis://127.0.0.1:$M5_PORT" \
	    exec -v x -- true
	kill $pids 2>/dev/null || :
	[[ $stderr == *"acquired x on "[345]" masters"* ]]
	[ "$(holding x)" = 0 ]
}

@test "status without NAME lists the locks of every master, each once" {
	down M1
	tok=$(rlm lock -t 20s x)
	restart_redis M1
	[ "$(mcli M1 exists x)" = 0 ]
	run -0 rlm status
	assert_output --regexp "^x: held by "
	[ "${#lines[@]}" = 1 ]
	run -0 rlm status --json
	echo "$output" | jq -e 'length == 1 and .[0].name == "x"'
	run -0 rlm unlock --owner "$tok" x
}

@test "a refused password on every master: exit 69 and what to check, nothing changed" {
	urls="redis://nobody:wrong@127.0.0.1:$M1_PORT,redis://nobody:wrong@127.0.0.1:$M2_PORT,redis://nobody:wrong@127.0.0.1:$M3_PORT"
	run -69 --separate-stderr "$RL" -u "$urls" lock x
	[[ $stderr == *"no quorum"* ]]
	[[ $stderr == *"check the user and password"* ]]
	[[ $stderr != *wrong@* ]]
	[ "$(holding x)" = 0 ]
}

@test "a database SELECT refuses on every master: nothing runs in another database" {
	good="redis://127.0.0.1:$M1_PORT,redis://127.0.0.1:$M2_PORT,redis://127.0.0.1:$M3_PORT"
	tok=$("$RL" -u "$good" lock x)
	# Every script cached: a pipelined EVALSHA would run at once.
	run -1 "$RL" -u "$good" unlock --force z
	urls="redis://127.0.0.1:$M1_PORT/99,redis://127.0.0.1:$M2_PORT/99,redis://127.0.0.1:$M3_PORT/99"
	run -69 --separate-stderr "$RL" -u "$urls" lock y
	[[ $stderr == *"refused SELECT"* ]]
	run -69 --separate-stderr "$RL" -u "$urls" unlock --force x
	[[ $stderr == *"refused SELECT"* ]]
	for m in M1 M2 M3; do
		[ "$(mcli "$m" hget x "$tok")" = 1 ]
		[ "$(mcli "$m" exists y)" = 0 ]
	done
}
