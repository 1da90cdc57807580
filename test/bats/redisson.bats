#!/usr/bin/env bats
# redlock beside Redisson clients (test/bats/redisson.py: RLock, and
# RFairLock with --fair) on one name: mixed fair queues are served in
# arrival order, nobody live dropped from them, whatever the Redisson
# clients' clocks say; a dead redlock waiter leaves a mixed queue within
# its waiter timeout, and a dead Redisson waiter behind redlock waiters
# within its wait time after the one ahead of it took the lock; and every
# kind of holder wakes every kind of waiter by a push, not by a poll,
# where Redisson's own release would.

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
	: >"$D/events"
	bg=()
	w_args=(-w 60s)
	r_args=()
	j_args=()
}
teardown() { stop_bg; stop_strays; }

RSN=$BATS_TEST_DIRNAME/redisson.py
Q='redisson_lock_queue:{x}'
Z='redisson_lock_timeout:{x}'
CH='redisson_lock__channel:{x}'

# A fresh owner: UUID:N, the shape of redlock's tokens and of Redisson's
# UUID:TID fields.
token() { echo "$(cat /proc/sys/kernel/random/uuid):$((RANDOM + 2))"; }
at_tail() { [ "$(rcli lindex "$Q" -1)" = "$1" ]; }
subscribed_on() { [ "$(rcli pubsub numsub "$1" | sed -n 2p)" -ge 1 ]; }

# W LABEL TOKEN: a redlock fair waiter on x as TOKEN (exec -v --fair, with
# "${w_args[@]}"); holding x, it writes "acquired LABEL TIME" to
# $D/events and keeps x 200 ms. Its events go to $D/LABEL.err.
W() {
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec -v --fair --owner "$2" \
	    "${w_args[@]}" x -- \
	    sh -c 'echo "acquired $0 $(date +%s.%N)"; sleep 0.2' "$1" \
	    >>"$D/events" 2>"$D/$1.err" 3>&- &
	bg+=($!)
}

# R LABEL ID: a Redisson RFairLock thread ID on x (tryLock with a 60 s
# wait, "${r_args[@]}" before the command); its events, labelled, go to
# $D/events: "acquired LABEL TIME" once it holds x, which it keeps 200 ms.
R() {
	python3 "$RSN" --port "$R_PORT" --fair --id "$2" "${r_args[@]}" \
	    lock x --wait 60 --hold 0.2 --label "$1" \
	    >>"$D/events" 2>"$D/$1.err" 3>&- &
	bg+=($!)
}

# J LABEL ID: a Redisson RFairLock thread ID on x that waits for ever
# (lock(): its wait time is Redisson's default threadWaitTime, 300 s, which
# each of its acquisitions takes off every score behind it); otherwise as
# R, with "${j_args[@]}" before the command.
J() {
	python3 "$RSN" --port "$R_PORT" --fair --id "$2" "${j_args[@]}" \
	    lock x --hold 0.2 --label "$1" \
	    >>"$D/events" 2>"$D/$1.err" 3>&- &
	bg+=($!)
}

# H LABEL ID: a Redisson RFairLock thread ID on x that waits up to an
# hour (tryLock(1 h): its wait time, 3600 s, which it adds to the score
# of the waiter ahead of it when it joins); otherwise as R.
H() {
	python3 "$RSN" --port "$R_PORT" --fair --id "$2" \
	    lock x --wait 3600 --hold 0.2 --label "$1" \
	    >>"$D/events" 2>"$D/$1.err" 3>&- &
	bg+=($!)
}

# arrive SPEC: one waiter for each letter of SPEC (W, R, J or H), labelled by
# kind and place (W1, R2, ...), each started once the one before is at
# the tail of the queue. Sets labels (space-separated, in arrival order),
# toks (their owners, the same way) and pid_LABEL.
arrive() {
	local spec=$1 i kind label tok
	labels='' toks=''
	for ((i = 0; i < ${#spec}; i++)); do
		kind=${spec:i:1}
		label=$kind$((i + 1))
		tok=$(token)
		"$kind" "$label" "$tok"
		eval "pid_$label=$!"
		wait_for 5 at_tail "$tok"
		labels="${labels:+$labels }$label"
		toks="${toks:+$toks }$tok"
	done
}

# The labels of $D/events in the order their holders acquired x.
order() { sed -n 's/^acquired \([^ ]*\) .*/\1/p' "$D/events" | paste -sd' '; }
# When LABEL acquired x (or had EVENT, the second argument), in ms since
# the epoch, from $D/events; empty if it did not.
when_ms() {
	awk -v l="$1" -v e="${2:-acquired}" \
	    '$1 == e && $2 == l { printf "%.0f\n", $3 * 1000; exit }' "$D/events"
}
# Wait at most $1 s for every waiter to end (they end once served).
served() { wait_for "$1" all_dead "${bg[@]}" || echo "still waiting after $1 s" >&3; }
# The redlock waiters that say they were dropped from the queue while
# they waited, and queued again at the tail (one dropped that finds x free
# on its next attempt takes it, and says nothing).
rejoined() {
	grep -l 'was dropped from the queue' "$D"/W*.err 2>/dev/null |
	    sed 's,.*/,,; s,\.err$,,' | paste -sd' '
}
# What came of the waiters, on fd 3.
outcome() {
	local dropped
	dropped=$(rejoined)
	echo "arrived $labels, served $(order); said they were dropped: ${dropped:-none}" >&3
}

# The queue in one snapshot: "OWNER=DEADLINE ...", each deadline in ms
# from now on the server's clock ("none" for a waiter without one).
SNAPSHOT="local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local q = redis.call('lrange', KEYS[1], 0, -1)
for i, w in ipairs(q) do
  local dl = redis.call('zscore', KEYS[2], w)
  q[i] = w .. '=' .. (dl and string.format('%+.0f', dl - now) or 'none')
end
return table.concat(q, ' ')"
snapshot() { rcli eval "$SNAPSHOT" 2 "$Q" "$Z"; }
owners() { echo "$1" | sed 's/=[^ ]*//g'; }
# A snapshot with the waiters' labels for their owners.
labelled() {
	local s=$1 i=1 l
	for l in $labels; do
		s=${s//$(echo "$toks" | cut -d' ' -f$i)/$l}
		i=$((i + 1))
	done
	echo "$s"
}
# Snapshots of the queue every 50 ms in $D/samples, until unsample.
sample() {
	while :; do snapshot; sleep 0.05; done >"$D/samples" 2>&1 3>&- &
	sampler=$!
}
unsample() {
	kill "$sampler"
	wait "$sampler" 2>/dev/null || :
	sampler=
}
# The queue's successive states in the samples, labelled, without the
# deadlines, each on a line of fd 3.
history() {
	local s
	while read -r s; do labelled "$(owners "$s")"; done <"$D/samples" |
	    uniq | sed 's/^/  queue: /; s/: $/: (empty)/' >&3
}
# Every waiter queued, in arrival order, each with a deadline.
all_queued() {
	local s
	s=$(snapshot)
	if [[ $s == *=none* || "$(owners "$s")" != "$toks" ]]; then
		echo "not all queued in order: $(labelled "$s")" >&3
		history
		return 1
	fi
}
# Each snapshot in $D/samples is a run of consecutive arrivals (the queue
# fills at the tail and empties at the head, nobody leaves the middle or
# comes back at the tail), each waiter in it with a deadline.
samples_in_order() {
	local s
	while read -r s; do
		[ -n "$s" ] || continue
		if [[ $s == *=none* || " $toks " != *" $(owners "$s") "* ]]; then
			echo "queue out of arrival order: $(labelled "$s")" >&3
			return 1
		fi
	done <"$D/samples"
}

# fifo SPEC [SECONDS]: a redlock holder, the waiters of SPEC one by one,
# the release; they must be served in arrival order (all of them within
# SECONDS, 6 unless given), none of them dropped from the queue on the
# way (snapshots of the queue every 50 ms).
fifo() {
	local tok
	sample
	tok=$(rl lock -t 60s x)
	arrive "$1"
	rl unlock --owner "$tok" x
	served "${2:-6}"
	unsample
	outcome
	[ "$(order)" = "$labels" ] || history
	run order
	assert_output "$labels"
	[ -z "$(rejoined)" ]
	samples_in_order || { history; false; }
	[ "$(rcli exists "$Q" "$Z")" = 0 ]
}

@test "mixed fair queues of 8 waiters are served in arrival order: WRWRWRWR" {
	fifo WRWRWRWR
}

@test "mixed fair queues of 8 waiters are served in arrival order: RWRWRWRW" {
	fifo RWRWRWRW
}

@test "mixed fair queues of 8 waiters are served in arrival order: WWRRWWRR" {
	fifo WWRRWWRR
}

@test "mixed fair queues of 8 waiters are served in arrival order: RRRRWWWW" {
	fifo RRRRWWWW
}

# Each acquisition of a Redisson waiter takes its wait time off every
# score, and Redisson drops a head whose score its clock has passed. Its
# waiters that wait for ever (J) take 300 s off each: a redlock waiter
# that several of them go past between two of its heartbeats (a waiter
# timeout of 30 s: one every 10 s, where their acquisitions come 200 ms
# apart) must not be dropped, at the head, when the last of them
# releases.

# in_a_row N: N such Redisson waiters in a row between two redlock
# waiters, then H, a Redisson waiter whose score (an hour more than the
# redlock waiter's) outlasts their acquisitions: a redlock waiter
# dropped at the head would leave x to it. Served in arrival order.
in_a_row() {
	w_args=(-w 60s --waiter-timeout 30s)
	fifo "W$(printf 'J%.0s' $(seq "$1"))WH" $((6 + $1))
}

@test "3 Redisson acquisitions in a row between two heartbeats of the redlock waiter behind them keep it in its place" {
	in_a_row 3
}

@test "5 Redisson acquisitions in a row between two heartbeats of the redlock waiter behind them keep it in its place" {
	in_a_row 5
}

@test "10 Redisson acquisitions in a row between two heartbeats of the redlock waiter behind them keep it in its place" {
	in_a_row 10
}

@test "WJWJWJWJ with 30 s waiter timeouts: the redlock waiter after three Redisson acquisitions keeps its place" {
	w_args=(-w 60s --waiter-timeout 30s)
	fifo WJWJWJWJ 10
}

# skewed MS: redlock waiters, and Redisson waiters whose clock is MS
# ahead, queued in turn behind a redlock holder: none is evicted while
# alive (snapshots of the queue every 50 ms), and they are served in
# arrival order.
skewed() {
	local tok
	r_args=(--skew "$1")
	sample
	tok=$(rl lock -t 30s x)
	arrive WWRWR
	all_queued
	sleep 2	# a heartbeat of every redlock waiter (each 5s/3)
	all_queued
	rl unlock --owner "$tok" x
	served 6
	unsample
	outcome
	samples_in_order || { history; false; }
	run order
	assert_output "$labels"
	[ -z "$(rejoined)" ]
}

@test "a Redisson client whose clock is 60 s ahead neither evicts nor reorders live redlock waiters" {
	skewed 60000
}

@test "a Redisson client whose clock is 60 s behind neither evicts nor reorders live redlock waiters" {
	skewed -60000
}

# dead_waiter SPEC DEAD NEXT: a redlock holder, the waiters of SPEC, the
# redlock waiter labelled DEAD with a waiter timeout of 2 s; DEAD is
# killed (SIGKILL), then the holder releases; NEXT, the waiter after DEAD,
# must hold x within 8 s of the kill (DEAD's 2 s timeout and a loaded
# box's delays: 2 s were seen; not evicted, NEXT would wait for its 60 s),
# though only Redisson clients are left to run scripts, and the others are
# served in order.
dead_waiter() {
	local spec=$1 dead=$2 next=$3 tok t_kill took
	w_args=(-w 60s --waiter-timeout 2s)
	tok=$(rl lock -t 30s x)
	arrive "$spec"
	sleep 0.5	# queued long enough to have subscribed
	eval "kill -9 \$pid_$dead; wait \$pid_$dead" 2>/dev/null || :
	t_kill=$(now_ms)
	rl unlock --owner "$tok" x
	wait_for 10 eval '[ -n "$(when_ms "$next")" ]' || :
	took=$(when_ms "$next")
	if [ -n "$took" ]; then
		echo "$next held x $((took - t_kill)) ms after $dead was killed" >&3
	else
		echo "$next did not hold x within 10 s of the kill of $dead" >&3
	fi
	[ -n "$took" ]
	[ $((took - t_kill)) -lt 8000 ]
	served 5
	run order
	assert_output "$(echo "$labels" | sed "s/$dead *//")"
	deadtok=$(echo "$toks" | cut -d' ' -f"${dead#W}")
	[ "$(rcli lpos "$Q" "$deadtok")" = "" ]
	[ "$(rcli zscore "$Z" "$deadtok")" = "" ]
}

@test "a dead redlock fair waiter (kill -9) still leaves the queue within its waiter timeout: at the head, Redisson waiters behind it" {
	dead_waiter WRR W1 R2
}

# Between Redisson waiters, the handoff to the dead waiter is a Redisson
# release, which only publishes to it: a redlock script must run to see
# its deadline pass (here the heartbeat of a live redlock waiter behind).
# With only Redisson clients left, they drop it by its score, up to ten
# minutes later (the margin that keeps live redlock waiters from looking
# dead to a Redisson client's clock).
@test "a dead redlock fair waiter (kill -9) still leaves the queue within its waiter timeout: between Redisson waiters" {
	dead_waiter RWRW W2 R3
}

# dead_java FOLLOWER BOUND: a redlock fair holder, redlock fair waiters W1
# and W2, then J, a Redisson RFairLock thread whose wait time
# (threadWaitTime) is 2 s and that waits for ever, killed (kill -9); then a
# waiter of kind FOLLOWER (W: redlock, R: Redisson) joins behind J, and
# the holder releases. J's score, the score of W2 plus its wait time,
# carries the ten minutes by which redlock's scores keep its live waiters
# from looking dead to a Redisson client's clock. When W2 takes x, J is
# scored as a Redisson handoff would have left it: its 2 s from then, on
# the server's clock, by which redlock drops it; Redisson's clients see
# 10 s more. FOLLOWER must hold x within 5 x BOUND ms of W2 (J's score
# used to keep it there for ten minutes), and J be gone from the queue.
dead_java() {
	local jtok jpid ftok t2 tf left
	# Short leases: a Redisson waiter that nobody wakes tries again when
	# the lease it was told runs out.
	w_args=(-w 60s --waiter-timeout 1500ms -t 1s)
	tok=$(rl lock --fair -t 5s x)
	arrive WW
	jtok=$(token)
	python3 "$RSN" --port "$R_PORT" --fair --fair-wait 2000 --id "$jtok" \
	    lock x --hold 0.2 --label J >>"$D/events" 2>"$D/J.err" 3>&- &
	jpid=$!
	wait_for 5 at_tail "$jtok"
	kill -9 "$jpid"
	wait "$jpid" 2>/dev/null || :
	ftok=$(token)
	"$1" F "$ftok"
	wait_for 5 at_tail "$ftok"
	rl unlock --owner "$tok" x || :	# on a slow machine, the lease ended
	wait_for 10 eval '[ -n "$(when_ms W2)" ]'
	t2=$(when_ms W2)
	left=$(rcli zscore "$Z" "$jtok")
	[ -z "$left" ] || left="$(( ${left%.*} - $(server_ms) )) ms ahead"
	echo "J's score once W2 held x: ${left:-gone}" >&3
	wait_for $((5 * $2 / 1000 + 1)) eval '[ -n "$(when_ms F)" ]' || :
	tf=$(when_ms F)
	if [ -n "$tf" ]; then
		echo "F ($1) held x $((tf - t2)) ms after W2 did (bound $2 ms)" >&3
	else
		echo "F ($1) did not hold x within $((5 * $2)) ms of W2" >&3
	fi
	[ -n "$tf" ]
	[ $((tf - t2)) -lt $((5 * $2)) ]
	[ "$(rcli lpos "$Q" "$jtok")" = "" ]
	[ "$(rcli zscore "$Z" "$jtok")" = "" ]
	served 5
	run order
	assert_output "W1 W2 F"
}

@test "a dead Redisson fair waiter behind redlock waiters leaves within its wait time after the one ahead took the lock: redlock waiter behind it" {
	dead_java W 2000
}

@test "a dead Redisson fair waiter behind redlock waiters leaves within its wait time after the one ahead took the lock: Redisson waiter behind it" {
	dead_java R 12000
}

# dead_java_after N: as dead_java with a redlock follower, but with N
# Redisson waiters that wait for ever (J, 300 s taken off every score at
# each of their acquisitions) ahead of W, a redlock waiter with a waiter
# timeout of 30 s (no heartbeat while they go past), whose score covers
# their wait times; and D, a Redisson waiter with a wait time of 2 s,
# killed, queued behind W, scored from W's score. Once W holds x, D must
# still be dropped within its wait time: by redlock on the server's
# clock (F, the redlock waiter behind it, holds x within 5 x 2 s of W),
# and by Redisson's clients on theirs (at the head, D's score is never
# more than 12 s ahead: its 2 s and the 10 s for the clocks); the others
# are served in order.
dead_java_after() {
	local jtok jpid ftok tw tf w s ahead
	w=W$(($1 + 1))
	w_args=(-w 60s --waiter-timeout 30s -t 1s)
	tok=$(rl lock --fair -t 60s x)
	arrive "$(printf 'J%.0s' $(seq "$1"))W"
	jtok=$(token)
	python3 "$RSN" --port "$R_PORT" --fair --fair-wait 2000 --id "$jtok" \
	    lock x --hold 0.2 --label D >>"$D/events" 2>"$D/D.err" 3>&- &
	jpid=$!
	wait_for 5 at_tail "$jtok"
	kill -9 "$jpid"
	wait "$jpid" 2>/dev/null || :
	w_args=(-w 60s --waiter-timeout 1500ms -t 1s)
	ftok=$(token)
	W F "$ftok"
	wait_for 5 at_tail "$ftok"
	sample
	rl unlock --owner "$tok" x
	wait_for $((10 + $1)) eval '[ -n "$(when_ms F)" ]' || :
	unsample
	tw=$(when_ms "$w") tf=$(when_ms F)
	if [ -n "$tw" ] && [ -n "$tf" ]; then
		echo "F held x $((tf - tw)) ms after $w did (bound 10000 ms)" >&3
	else
		echo "$w or F did not hold x: $(order)" >&3
	fi
	[ -n "$tw" ]
	[ -n "$tf" ]
	[ $((tf - tw)) -lt 10000 ]
	ahead=$(sed -n "s/^$jtok=+\{0,1\}\([-0-9]*\).*/\1/p" "$D/samples" |
	    sort -n | tail -n 1)
	echo "D at the head: its score at most ${ahead:-(never there)} ms ahead" >&3
	[ -n "$ahead" ]
	[ "$ahead" -le 12001 ]
	[ "$(rcli lpos "$Q" "$jtok")" = "" ]
	[ "$(rcli zscore "$Z" "$jtok")" = "" ]
	served 5
	run order
	assert_output "$labels F"
}

@test "a dead Redisson fair waiter behind a redlock waiter that 5 Redisson acquisitions went past leaves within its wait time" {
	dead_java_after 5
}

@test "a dead Redisson fair waiter behind a redlock waiter that 10 Redisson acquisitions went past leaves within its wait time" {
	dead_java_after 10
}

@test "Redisson waiters behind a redlock one get their wait time from its handoff, however long they waited, and stay in order" {
	w_args=(-w 60s --waiter-timeout 900ms)
	tok=$(rl lock --fair -t 30s x)
	# W1 holds x 2 s, time enough to read the scores behind it.
	w1=$(token)
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec --fair --owner "$w1" \
	    "${w_args[@]}" x -- \
	    sh -c 'echo "acquired W1 $(date +%s.%N)"; sleep 2' \
	    >>"$D/events" 2>"$D/W1.err" 3>&- &
	bg+=($!)
	wait_for 5 at_tail "$w1"
	j1=$(token) j2=$(token)
	# Wait times 60 s and 30 s (tryLock's wait).
	R J1 "$j1"
	wait_for 5 at_tail "$j1"
	r_args=()
	python3 "$RSN" --port "$R_PORT" --fair --id "$j2" lock x --wait 30 \
	    --hold 0.2 --label J2 >>"$D/events" 2>"$D/J2.err" 3>&- &
	bg+=($!)
	wait_for 5 at_tail "$j2"
	s1=$(rcli zscore "$Z" "$j1") s2=$(rcli zscore "$Z" "$j2")
	echo "queued: J1 $(( ${s1%.*} - $(server_ms) )) ms ahead, J2 $(( ${s2%.*} - ${s1%.*} )) ms behind J1" >&3
	# W1 moves its own score up at each heartbeat (every 300 ms) meanwhile.
	sleep 2.5
	rl unlock --owner "$tok" x
	wait_for 5 eval '[ -n "$(when_ms W1)" ]'
	t1=$(when_ms W1)
	s1=$(rcli zscore "$Z" "$j1") s2=$(rcli zscore "$Z" "$j2")
	echo "W1 held x at $t1: J1's score $(( ${s1%.*} - t1 )) ms after that (wait time 60000 + 10000), J2 $(( ${s2%.*} - ${s1%.*} )) ms behind J1" >&3
	# Its 60 s from the handoff (no sooner than the script that ran it,
	# before W1's command started), 10 s for the clocks, the mark .25.
	[ "${s1#*.}" = 25 ]
	[ "${s2#*.}" = 25 ]
	[ $(( ${s1%.*} - 70000 )) -le "$t1" ]
	[ $(( ${s1%.*} - 70000 )) -gt $((t1 - 1000)) ]
	[ $(( ${s2%.*} - ${s1%.*} )) = 30000 ]
	# queue shows J1's deadline as redlock judges it, without the 10 s.
	left=$(rl queue --json x | jq -r --arg j "$j1" '.waiters[] | select(.owner == $j) | .deadline_ms')
	echo "queue: J1's deadline $left ms ahead" >&3
	[ "$left" -le 60000 ]
	[ "$left" -gt 55000 ]
	served 10
	run order
	assert_output "W1 J1 J2"
}

@test "a redlock waiter that gives up at the head leaves the Redisson waiter behind it its wait time from then" {
	tok=$(rl lock --fair -t 30s x)
	w1=$(token)
	# W1 leaves when -w runs out, not by missing its heartbeats: a
	# waiter timeout of 900 ms was missed beside two busy loops, and the
	# Redisson waiter was then scored by its own rule. -w leaves J's
	# start (a Python process) 6 s to queue behind W1: with 2 s, a loaded
	# machine had W1 gone first, and J scored as the queue's first.
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec --fair --owner "$w1" -w 6s \
	    --waiter-timeout 5s x -- true 2>"$D/W1.err" 3>&- &
	p1=$!
	wait_for 5 at_tail "$w1"
	j=$(token)
	R J "$j"
	wait_for 5 at_tail "$j"
	# J queued behind W1, its score carrying W1's mark (.5).
	s=$(rcli zscore "$Z" "$j")
	[ "${s#*.}" = 5 ]
	[ "$(rcli lrange "$Q" 0 -1 | head -n 1)" = "$w1" ]
	st=0
	reap "$p1" || st=$?
	[ "$st" = 75 ]
	t=$(server_ms)
	s=$(rcli zscore "$Z" "$j")
	echo "W1 gave up; J's score $(( ${s%.*} - t )) ms ahead (wait time 60000 + 10000)" >&3
	[ "$(rcli lrange "$Q" 0 -1)" = "$j" ]
	[ "${s#*.}" = 25 ]
	[ $(( ${s%.*} - 70000 )) -le "$t" ]
	[ $(( ${s%.*} - 70000 )) -gt $((t - 1000)) ]
	rl unlock --owner "$tok" x
	served 5
	run order
	assert_output J
}

# The wake-up matrix. Each cell: the holder takes x with a 30 s lease, the
# waiter starts and is confirmed waiting (subscribed, and queued if fair),
# the holder releases; the waiter must hold x within 2 s, woken by a
# message: a poll would wait for the lease, or for a fair redlock
# waiter's heartbeat (every 20 s with --waiter-timeout 60s).
# Kinds: rl (redlock), rlfair (redlock --fair), rlock (Redisson RLock),
# rfair (Redisson RFairLock).

hold() {
	case $1 in
	rl) htok=$(rl lock -t 30s x) ;;
	rlfair) htok=$(rl lock --fair -t 30s x) ;;
	rlock | rfair)
		htok=$(token)
		python3 "$RSN" --port "$R_PORT" --id "$htok" \
		    $([ "$1" = rfair ] && echo --fair) \
		    lock x --lease 30000 --keep >/dev/null
		;;
	esac
}

release() {
	case $1 in
	rl | rlfair) rl unlock --owner "$htok" x ;;
	rlock | rfair)
		python3 "$RSN" --port "$R_PORT" --id "$htok" --label holder \
		    $([ "$1" = rfair ] && echo --fair) unlock x >>"$D/events"
		;;
	esac
}

# await KIND: a waiter of KIND in the background (giving up after 10 s);
# returns once it is waiting. Holding x, it writes "acquired waiter TIME".
await() {
	local wtok
	case $1 in
	rl | rlfair)
		wtok=$(token)
		"$RL" -u "redis://127.0.0.1:$R_PORT" exec -w 10s --owner "$wtok" \
		    $([ "$1" = rlfair ] && echo --fair --waiter-timeout 60s) x -- \
		    sh -c 'echo "acquired waiter $(date +%s.%N)"' \
		    >>"$D/events" 2>"$D/waiter.err" 3>&- &
		bg+=($!)
		if [ "$1" = rl ]; then
			wait_for 5 has_subscribers x 1
		else
			wait_for 5 at_tail "$wtok"
			wait_for 5 subscribed_on "$CH:$wtok"
		fi
		;;
	rlock | rfair)
		python3 "$RSN" --port "$R_PORT" \
		    $([ "$1" = rfair ] && echo --fair) \
		    lock x --wait 10 --label waiter \
		    >>"$D/events" 2>"$D/waiter.err" 3>&- &
		bg+=($!)
		wait_for 5 grep -qx 'subscribed waiter' "$D/events"
		[ "$1" = rlock ] || [ "$(rcli llen "$Q")" = 1 ]
		;;
	esac
}

# wake HOLDER WAITER [unasserted]: one cell, timed from the release (for a
# Redisson holder, from its script's reply; for redlock, from the start of
# redlock unlock) to the waiter's acquisition. "unasserted" where
# Redisson's own release would not wake that Redisson waiter either: the
# time is shown, not asserted.
wake() {
	local t0 t note=
	[ "${3-}" != unasserted ] ||
		note=" (not asserted: Redisson's own release does not wake it either)"
	hold "$1"
	await "$2"
	t0=$(now_ms)
	release "$1"
	t=$(when_ms holder released)
	t0=${t:-$t0}
	wait_for 3 eval '[ -n "$(when_ms waiter)" ]' || :
	t=$(when_ms waiter)
	if [ -n "$t" ]; then
		echo "holder $1, waiter $2: woken in $((t - t0)) ms$note" >&3
	else
		echo "holder $1, waiter $2: not woken within 3 s$note" >&3
	fi
	if [ "${3-}" != unasserted ]; then
		[ -n "$t" ]
		[ $((t - t0)) -lt 2000 ]
	fi
}

@test "wake-up: redlock holder, redlock waiter" { wake rl rl; }
@test "wake-up: redlock holder, redlock --fair waiter" { wake rl rlfair; }
@test "wake-up: redlock holder, Redisson RLock waiter" { wake rl rlock; }
@test "wake-up: redlock holder, Redisson RFairLock waiter" { wake rl rfair; }
@test "wake-up: redlock --fair holder, redlock waiter" { wake rlfair rl; }
@test "wake-up: redlock --fair holder, redlock --fair waiter" { wake rlfair rlfair; }
@test "wake-up: redlock --fair holder, Redisson RLock waiter" { wake rlfair rlock; }
@test "wake-up: redlock --fair holder, Redisson RFairLock waiter" { wake rlfair rfair; }
@test "wake-up: Redisson RLock holder, redlock waiter" { wake rlock rl; }
@test "wake-up: Redisson RLock holder, redlock --fair waiter" { wake rlock rlfair; }
@test "wake-up: Redisson RLock holder, Redisson RLock waiter" { wake rlock rlock; }
# RedissonLock's release publishes on the lock's channel only; an RFairLock
# waiter listens on its own channel only, and polls after the PTTL it was
# last answered (the holder's lease).
@test "wake-up: Redisson RLock holder, Redisson RFairLock waiter" { wake rlock rfair unasserted; }
@test "wake-up: Redisson RFairLock holder, redlock waiter" { wake rfair rl; }
@test "wake-up: Redisson RFairLock holder, redlock --fair waiter" { wake rfair rlfair; }
# RedissonFairLock's release publishes on the channel of the head of the
# queue only, and on nothing when the queue is empty; an RLock waiter never
# queues and listens on the lock's channel, so it polls after the PTTL it
# was last answered (the holder's lease).
@test "wake-up: Redisson RFairLock holder, Redisson RLock waiter" { wake rfair rlock unasserted; }
@test "wake-up: Redisson RFairLock holder, Redisson RFairLock waiter" { wake rfair rfair; }
