#!/usr/bin/env bats
# Pools: exec --any NAME... and lock --any NAME... take whichever name is
# free first, waiting on all of them at once, woken by a release of any
# (pushed, not polled); COMMAND learns the name in REDLOCK_NAME, lock
# prints it after the token. Never two holders of one name; re-entry per
# name; -n, --fair, --min-hold and several masters; bad input refused
# before anything is written.

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

# The script calls since CONFIG RESETSTAT (EVALSHA, and EVAL after
# NOSCRIPT), as herd.bats counts them.
calls() {
	rcli "$@" info commandstats |
	    sed -n 's/^cmdstat_eval\(sha\)\{0,1\}:calls=\([0-9]*\),.*/\2/p' |
	    awk '{ n += $1 } END { print n + 0 }'
}
# redlock in place of the calling shell: "rlx ... &" leaves its pid in $!.
rlx() { exec "$RL" -u "redis://127.0.0.1:$R_PORT" "$@"; }
# wake_ms NAME: from NAME's last release to the acquisition after it, on
# the server's clock: the release's history entry (its id, ms) and the
# next acquisition's fence (the server's time in us). Fields are
# separated by \037.
wake_ms() {
	rcli xrange "redlock_log:{$1}" - + | awk '
	    /^[0-9]+-[0-9]+$/ { id = $0; sub(/-.*/, "", id); next }
	    /event\037released/ { rel = id }
	    /event\037acquired/ && rel != "" { f = $0; sub(/.*fence\037/, "", f);
		print int(f / 1000) - rel; exit }'
}
in_rooms() {
	local n
	for n in p1 p2 p3; do
		[ "$(rcli zcard "redlock_room:{$n}")" = "$1" ] || return 1
	done
}

@test "6 jobs on a pool of 3: never two on one name, at most 3 at once, each told its name" {
	# Each job logs its name, its fence and when it started and ended
	# (us), and holds its name 0.3 s.
	cat >"$D/job.sh" <<-'EOF'
	s=${EPOCHREALTIME/./}
	sleep 0.3
	echo "$REDLOCK_NAME $REDLOCK_FENCE $s ${EPOCHREALTIME/./}" >>"$1"
	EOF
	for i in 1 2 3 4 5 6; do
		rlx exec -q -w 60s --any p1 p2 p3 -- bash "$D/job.sh" \
		    "$D/log" 3>&- &
		bg+=($!)
	done
	for p in "${bg[@]}"; do reap -t 120 "$p"; done
	bg=()
	cat "$D/log" >&3
	[ "$(wc -l <"$D/log")" = 6 ]
	# Every name one of the pool's.
	run -0 awk '$1 !~ /^p[123]$/' "$D/log"
	assert_output ""
	# Per name: sections in the order of their fences never overlap.
	run -0 bash -c 'sort -k1,1 -k2,2n "$0" | awk "
	    \$1 == n && \$3 < e { print \"overlap on \" \$1; bad = 1 }
	    { n = \$1; e = \$4 }"' "$D/log"
	assert_output ""
	# Across the pool: at most 3 at once, and at least 2 (it ran as a
	# pool, not one name at a time).
	run -0 bash -c 'awk "{ print \$3, 1; print \$4, -1 }" "$0" |
	    sort -n -k1,1 -k2,2n | awk "{ c += \$2; if (c > m) m = c }
	    END { print m }"' "$D/log"
	echo "most at once: $output" >&3
	[ "$output" -le 3 ]
	[ "$output" -ge 2 ]
	# Concurrent jobs had distinct names: implied by no overlap per
	# name; and every name's fences grow with its sections' starts.
	run -0 bash -c 'sort -k1,1 -k3,3n "$0" | awk "
	    \$1 == n && \$2 <= f { print \"fence went back on \" \$1 }
	    { n = \$1; f = \$2 }"' "$D/log"
	assert_output ""
	# Every room left, nothing held.
	run -0 rcli keys 'redlock_room:*'
	assert_output ""
	run -0 rcli exists p1 p2 p3
	assert_output 0
}

@test "a pool's waiter is woken by any name's release within 50 ms, by push" {
	for n in p1 p2 p3; do
		eval "t_$n=\$(rl lock -t 60s $n)"
	done
	rlx exec -q -w 30s --waiter-timeout 30s --any p1 p2 p3 -- \
	    sh -c 'echo "$REDLOCK_NAME" >"$0"' "$D/got" 3>&- &
	bg+=($!)
	# In every name's room, listening on every name's channel.
	wait_for 30 in_rooms 1
	for n in p1 p2 p3; do wait_for 30 has_subscribers $n 1; done
	nap 0.5
	rcli config resetstat >/dev/null
	nap 2
	c=$(calls)
	echo "script calls during 2 s of waiting on 3 names: $c" >&3
	[ "$c" -le 3 ]
	rl unlock --owner "$t_p3" p3
	reap -t 30 "${bg[@]}"
	bg=()
	[ "$(cat "$D/got")" = p3 ]
	ms=$(wake_ms p3)
	echo "p3 taken $ms ms after its release" >&3
	[ "$ms" -lt 50 ]
	# It left the other rooms; the others are still held.
	run -0 rcli zcard 'redlock_room:{p1}'
	assert_output 0
	run -0 rcli zcard 'redlock_room:{p2}'
	assert_output 0
	run -0 rcli exists p1 p2
	assert_output 2
}

@test "-n on a busy pool exits the busy code, naming the pool" {
	rl lock -t 60s p1 >/dev/null
	rl lock -t 60s p2 >/dev/null
	run -75 --separate-stderr rl exec -n --any p1 p2 -- true
	[[ $stderr == "redlock: p1 or p2: all busy (p1: held by "*"); wait for one with -w DURATION" ]]
	run -9 rl exec -n -E 9 -q --any p1 p2 -- true
	run -75 rl lock -n -q --any p1 p2
	# A -n caller joins no room.
	run -0 rcli keys 'redlock_room:*'
	assert_output ""
	# One name free: it is taken.
	run -0 rl exec -n --any p1 p2 p3 -- sh -c 'echo $REDLOCK_NAME'
	assert_output p3
}

@test "exec --any exports the name taken, its fence and owner; the watchdog renews it, the release frees it" {
	rl lock -t 60s p1 >/dev/null
	run -0 rl exec -t 300ms --any p1 p2 p3 -- sh -c '
	    echo "$REDLOCK_NAME $REDLOCK_FENCE"
	    sleep 1
	    redis-cli -p "$0" hget p2 "$REDLOCK_OWNER"
	    redis-cli -p "$0" exists p3
	    echo "$REDLOCK_HELD"' "$R_PORT"
	# Held past three leases of 300 ms: renewed; p3 never taken.
	[[ ${lines[0]} =~ ^p2\ [0-9]+$ ]]
	[ "${lines[1]}" = 1 ]
	[ "${lines[2]}" = 0 ]
	[[ ${lines[3]} == "p2="*"=exclusive" ]]
	run -0 rcli exists p2
	assert_output 0
}

@test "lock --any prints the token, then the name on a line of its own" {
	run -0 --separate-stderr rl lock --any p1 p2
	[ "${#lines[@]}" = 2 ]
	[[ ${lines[0]} =~ ^[0-9a-f-]{36}:[0-9]+$ ]]
	[ "${lines[1]}" = p1 ]
	t1=${lines[0]}
	run -0 rl lock --any p1 p2
	[ "${lines[1]}" = p2 ]
	# One name: a plain lock, the same two lines.
	run -0 rl lock --any p3
	[ "${#lines[@]}" = 2 ]
	[ "${lines[1]}" = p3 ]
	# Plain lock: the token alone, as ever.
	run -0 rl lock p4
	[ "${#lines[@]}" = 1 ]
	# The token releases the name it took.
	run -0 rl unlock --owner "$t1" p1
	run -0 rcli exists p1
	assert_output 0
}

@test "a nested exec --any of the same pool re-enters the name its ancestor holds" {
	rl lock -t 60s p1 >/dev/null
	run -0 rl exec --any p1 p2 p3 -- sh -c '
	    echo "outer $REDLOCK_NAME $REDLOCK_OWNER"
	    "$0" exec -n --any p1 p2 p3 -- sh -c "
	        echo inner \$REDLOCK_NAME \$REDLOCK_OWNER
	        redis-cli -p $1 hget p2 \$REDLOCK_OWNER
	        redis-cli -p $1 exists p3"' "$RL" "$R_PORT"
	read -r _ on oo <<<"${lines[0]}"
	read -r _ in io <<<"${lines[1]}"
	[ "$on" = p2 ]
	[ "$in" = p2 ]
	[ "$oo" = "$io" ]
	# Two holds of p2 inside; p3, free, not taken.
	[ "${lines[2]}" = 2 ]
	[ "${lines[3]}" = 0 ]
	run -0 rcli exists p2
	assert_output 0
}

@test "--any with --limit, -s or --write, or with more than 64 names, is refused with nothing written" {
	run -64 --separate-stderr rl exec --any --limit 2 p1 p2 -- true
	[[ $stderr == "redlock: --any and --limit do not go together: a pool (--any) is of exclusive locks; drop one; usage: "* ]]
	run -64 rl exec --any -s p1 p2 -- true
	run -64 rl lock --any --write p1 p2
	run -64 --separate-stderr rl exec --any -- true
	[[ $stderr == "redlock: missing NAME... after --any; usage: "* ]]
	run -64 rl exec --any p1 '' -- true
	run -64 --separate-stderr rl exec --any $(seq -f 'n%g' 1 65) -- true
	[[ $stderr == "redlock: --any: more than 64 names; give 64 or fewer; usage: "* ]]
	run -0 rcli dbsize
	assert_output 0
	# 64 names, and a name given twice (counted once), are fine.
	run -0 rl exec -n --any $(seq -f 'n%g' 1 64) -- sh -c 'echo $REDLOCK_NAME'
	assert_output n1
	rl lock -t 60s p1 >/dev/null
	run -0 rl exec -n --any p1 p1 p2 p1 -- sh -c 'echo $REDLOCK_NAME'
	assert_output p2
}

# Each name of a pool takes a command and a subscriber connection per
# master: 20 names want 40 of them, beside stdio and the pipes (56 open
# files in all), more than a soft limit of 40 allows.
@test "--any beyond a soft limit on open files: raised for the wait, COMMAND gets the limit back" {
	local n
	for n in $(seq 1 20); do rl lock -t 60s "p$n" >/dev/null; done
	run -75 --separate-stderr bash -c 'ulimit -Sn 40 && exec "$@"' _ \
	    "$RL" -u "redis://127.0.0.1:$R_PORT" exec -w 1s --any \
	    $(seq -f 'p%g' 1 20) -- true
	[[ $stderr == *"gave up on p1, p2, "*" or p20 after waiting "* ]]
	[[ $stderr != *"open files"* ]]
	rcli del p7 >/dev/null
	run -0 --separate-stderr bash -c 'ulimit -Sn 40 && exec "$@"' _ \
	    "$RL" -u "redis://127.0.0.1:$R_PORT" exec -w 5s --any \
	    $(seq -f 'p%g' 1 20) -- sh -c 'echo $REDLOCK_NAME $(ulimit -n)'
	assert_output "p7 40"
}

@test "--any beyond the hard limit on open files: refused (64), nothing written" {
	run -64 --separate-stderr bash -c 'ulimit -n 40 && exec "$@"' _ \
	    "$RL" -u "redis://127.0.0.1:$R_PORT" exec -w 1s --any \
	    $(seq -f 'p%g' 1 20) -- true
	assert_equal "$stderr" "redlock: 20 names on 1 master may take 56 open files, and this process may open 40 (ulimit -n): raise the limit, or name fewer"
	run -64 bash -c 'ulimit -n 40 && exec "$@"' _ \
	    "$RL" -u "redis://127.0.0.1:$R_PORT" lock --any $(seq -f 'p%g' 1 20)
	run -0 rcli dbsize
	assert_output 0
}

@test "--fair on a pool: the waiter queues at every name and leaves the others' queues" {
	for n in p1 p2; do
		eval "t_$n=\$(rl lock -t 60s $n)"
	done
	rlx exec -q -w 30s --fair --any p1 p2 -- \
	    sh -c 'echo "$REDLOCK_NAME" >"$0"' "$D/got" 3>&- &
	bg+=($!)
	wait_for 30 eval '[ "$(rcli llen "redisson_lock_queue:{p1}")" = 1 ] &&
	    [ "$(rcli llen "redisson_lock_queue:{p2}")" = 1 ]'
	rl unlock --owner "$t_p2" p2
	reap -t 30 "${bg[@]}"
	bg=()
	[ "$(cat "$D/got")" = p2 ]
	run -0 rcli llen 'redisson_lock_queue:{p1}'
	assert_output 0
}

@test "--min-hold on a pool keeps the name taken held, finished, after COMMAND" {
	run -0 rl exec --min-hold 3s --any p1 p2 -- sh -c 'echo $REDLOCK_NAME'
	assert_output p1
	run -75 rl exec -n -q --any p1 -- true
	run -0 rl exec -n --any p1 p2 -- sh -c 'echo $REDLOCK_NAME'
	assert_output p2
}

@test "a pool on several masters: a quorum per name, woken by push" {
	start_redis M2
	start_redis M3
	u="redis://127.0.0.1:$R_PORT,redis://127.0.0.1:$M2_PORT,redis://127.0.0.1:$M3_PORT"
	t1=$("$RL" -u "$u" lock -t 60s p1)
	t2=$("$RL" -u "$u" lock -t 60s p2)
	# COMMAND holds its name until told to go (10 s at most).
	"$RL" -u "$u" exec -q -w 30s --waiter-timeout 30s --any p1 p2 -- \
	    sh -c 'echo "$REDLOCK_NAME" >"$0"
		for i in $(seq 1 200); do [ -e "$0.go" ] && break; sleep 0.05; done' \
	    "$D/got" 3>&- &
	bg+=($!)
	wait_for 30 in_rooms_of 1
	rcli config resetstat >/dev/null
	nap 1
	c=$(calls)
	echo "script calls on one master during 1 s of waiting: $c" >&3
	[ "$c" -le 2 ]
	"$RL" -u "$u" unlock --owner "$t2" p2
	wait_for 30 test -s "$D/got"
	[ "$(cat "$D/got")" = p2 ]
	# Held on a quorum of the masters while COMMAND runs (a master the
	# release reached after the waiter's attempt need not have it).
	held=0
	for p in "$R_PORT" "$M2_PORT" "$M3_PORT"; do
		held=$((held + $(redis-cli -p "$p" exists p2)))
	done
	echo "p2 held on $held of 3 masters" >&3
	[ "$held" -ge 2 ]
	touch "$D/got.go"
	reap -t 30 "${bg[@]}"
	bg=()
	# On the first master that granted it.
	for p in "$R_PORT" "$M2_PORT" "$M3_PORT"; do
		ms=$(R_PORT=$p wake_ms p2)
		[ -z "$ms" ] || break
	done
	echo "p2 taken $ms ms after its release (master $p)" >&3
	[ "$ms" -lt 50 ]
	stop_redis "$M2_PID"
	stop_redis "$M3_PID"
}

# Both names' rooms hold N waiters on the first master.
in_rooms_of() {
	[ "$(rcli zcard 'redlock_room:{p1}')" = "$1" ] &&
	    [ "$(rcli zcard 'redlock_room:{p2}')" = "$1" ]
}

@test "status of a pool's names: a line each, or one JSON array" {
	rl lock -t 60s p1 >/dev/null
	run -0 --separate-stderr rl status p1 p2
	[[ ${lines[0]} == "p1: held by "*", 0 waiting" ]]
	[ "${lines[1]}" = "p2: free, 0 waiting" ]
	run -0 --separate-stderr rl status --json p1 p2
	run -0 python3 -c 'import json, sys
a = json.loads(sys.argv[1])
print(" ".join("%s=%s" % (o["name"], o["held"]) for o in a))' "$output"
	assert_output "p1=True p2=False"
	run -1 rl status p2 p3
	run -64 rl status p1 ''
}

@test "a signal ends a pool's wait: 143, every room left, the pool named" {
	rl lock -t 60s p1 >/dev/null
	rl lock -t 60s p2 >/dev/null
	rlx exec -w 30s --any p1 p2 -- true 2>"$D/err" 3>&- &
	bg+=($!)
	wait_for 30 eval '[ "$(rcli zcard "redlock_room:{p1}")" = 1 ] &&
	    [ "$(rcli zcard "redlock_room:{p2}")" = 1 ]'
	kill -TERM "${bg[0]}"
	st=0
	reap -t 30 "${bg[0]}" || st=$?
	bg=()
	[ "$st" = 143 ]
	grep -q "^redlock: gave up on p1 or p2 after waiting .*: interrupted by SIGTERM$" "$D/err"
	run -0 rcli keys 'redlock_room:*'
	assert_output ""
}

# on_node PORT NAME: NAME's slot is served by the node at PORT.
on_node() { ! redis-cli -p "$1" exists "$2" | grep -q MOVED; }

@test "a pool on a Redis Cluster: names on different masters, each its own lock, woken by push" {
	start_cluster 3 0
	# A name on each master.
	pool=()
	for i in 1 2 3; do
		port=$(eval echo "\$C${i}_PORT")
		for k in $(seq 1 200); do
			on_node "$port" "s$k" && { pool+=("s$k"); break; }
		done
	done
	[ "${#pool[@]}" = 3 ]
	cu="redis://127.0.0.1:$C1_PORT"
	t0=$("$RL" -u "$cu" lock -t 60s "${pool[0]}")
	t1=$("$RL" -u "$cu" lock -t 60s "${pool[1]}")
	run -0 "$RL" -u "$cu" exec -n --any "${pool[@]}" -- \
	    sh -c 'echo "$REDLOCK_NAME"'
	assert_output "${pool[2]}"
	t2=$("$RL" -u "$cu" lock -t 60s "${pool[2]}")
	"$RL" -u "$cu" exec -q -w 30s --waiter-timeout 30s --any "${pool[@]}" -- \
	    sh -c 'echo "$REDLOCK_NAME" >"$0"' "$D/got" 3>&- &
	bg+=($!)
	# In each name's room, on its own master.
	for i in 1 2 3; do
		port=$(eval echo "\$C${i}_PORT") n=${pool[i - 1]}
		wait_for 30 eval '[ "$(redis-cli -p "$port" zcard "redlock_room:{$n}")" = 1 ]'
	done
	"$RL" -u "$cu" unlock --owner "$t1" "${pool[1]}"
	reap -t 30 "${bg[@]}"
	bg=()
	[ "$(cat "$D/got")" = "${pool[1]}" ]
	ms=$(R_PORT=$C2_PORT wake_ms "${pool[1]}")
	echo "${pool[1]} (on the second master) taken $ms ms after its release" >&3
	[ "$ms" -lt 50 ]
	stop_cluster
}

# nobody_waiting: status of p1, p2 and p3 says no one waits on any.
nobody_waiting() {
	[ "$(rl status p1 p2 p3 | grep -c ', 0 waiting$')" = 3 ]
}

@test "a pool's waiter killed (SIGKILL) leaves no live entry past its waiter timeout, and the next waiter is woken at once" {
	for n in p1 p2 p3; do
		eval "t_$n=\$(rl lock -t 60s $n)"
	done
	# The dead one joined first: the listener of every name's room.
	rlx exec -q -w 60s --waiter-timeout 2s --any p1 p2 p3 -- true 3>&- &
	dead1=$!
	bg+=($dead1)
	wait_for 30 in_rooms 1
	for n in p1 p2 p3; do wait_for 30 has_subscribers $n 1; done
	rlx exec -q -w 60s --waiter-timeout 2s --any p1 p2 p3 -- \
	    sh -c 'echo "$REDLOCK_NAME $(date +%s%3N)" >"$0"' "$D/got" 3>&- &
	bg+=($!)
	wait_for 30 in_rooms 2
	# Killed whole, as by a crash: redlock and its waiting watchdog.
	kill -9 $(proc_tree "$dead1")
	wait "$dead1" 2>/dev/null || :
	t0=$(now_ms)
	rl unlock --owner "$t_p2" p2
	wait_for 10 test -s "$D/got"
	read -r n at <"$D/got"
	[ "$n" = p2 ]
	echo "the live waiter took p2 $((at - t0)) ms after its release" >&3
	[ $((at - t0)) -lt 1000 ]
	# Past the waiter timeout, nobody waits on any name.
	nap 2.2
	wait_for 5 nobody_waiting
	now=$(server_ms)
	for n in p1 p2 p3; do
		[ "$(rcli zcount "redlock_room:{$n}" "$now" +inf)" = 0 ]
	done
}

@test "a --fair pool's waiter killed (SIGKILL) at the head of every queue: past its waiter timeout, not counted, shown expired, passed over at once" {
	for n in p1 p2 p3; do
		eval "t_$n=\$(rl lock -t 60s $n)"
	done
	rlx exec -q -w 60s --waiter-timeout 2s --fair --any p1 p2 p3 -- true 3>&- &
	dead1=$!
	bg+=($dead1)
	wait_for 30 eval '[ "$(rcli llen "redisson_lock_queue:{p3}")" = 1 ]'
	rlx exec -q -w 60s --waiter-timeout 2s --fair --any p1 p2 p3 -- \
	    sh -c 'echo "$REDLOCK_NAME" >"$0"' "$D/got" 3>&- &
	bg+=($!)
	wait_for 30 eval '[ "$(rcli llen "redisson_lock_queue:{p3}")" = 2 ]'
	# Killed whole, as by a crash: redlock and its waiting watchdog.
	kill -9 $(proc_tree "$dead1")
	wait "$dead1" 2>/dev/null || :
	rl unlock --owner "$t_p1" p1
	# The dead head is passed over once its deadline is past: p1 goes
	# to the live waiter within the waiter timeout and a margin.
	wait_for 8 test -s "$D/got"
	[ "$(cat "$D/got")" = p1 ]
	# Past its waiter timeout, the dead one is shown expired where it
	# is left (the head of p2's and p3's queues: a fair queue drops dead
	# heads at its next call), and holds up nobody: a release of p2
	# passes it over to a live waiter at once.
	nap 2.2
	for n in p2 p3; do
		run -0 rl queue "$n"
		assert_line --regexp '^1 .* expired '
	done
	# ... and status counts it no more.
	wait_for 5 nobody_waiting
	old=$(rcli lindex 'redisson_lock_queue:{p2}' 0)
	rlx exec -q -w 30s --waiter-timeout 30s --fair p2 -- \
	    sh -c 'date +%s%3N >"$0"' "$D/got2" 3>&- &
	bg+=($!)
	# Its first call dropped the dead head, and queued it.
	wait_for 10 eval '[ "$(rcli lrange "redisson_lock_queue:{p2}" 0 -1)" != "$old" ] &&
	    [ "$(rcli llen "redisson_lock_queue:{p2}")" = 1 ]'
	w=$(rcli lindex 'redisson_lock_queue:{p2}' 0)
	wait_for 10 eval '[ "$(rcli pubsub numsub "redisson_lock__channel:{p2}:$w" | sed -n 2p)" = 1 ]'
	t0=$(now_ms)
	rl unlock --owner "$t_p2" p2
	wait_for 10 test -s "$D/got2"
	echo "p2 taken $(($(cat "$D/got2") - t0)) ms after its release" >&3
	[ $(($(cat "$D/got2") - t0)) -lt 1000 ]
}

@test "keys deleted behind a pool's hold: the name taken is lost (79), the others untouched" {
	rl lock -t 60s p1 >/dev/null
	rlx exec -t 600ms --any p1 p2 p3 -- sh -c '
	    echo "$REDLOCK_NAME" >"$0"; sleep 10' "$D/got" 2>"$D/err" 3>&- &
	bg+=($!)
	wait_for 10 test -s "$D/got"
	[ "$(cat "$D/got")" = p2 ]
	rcli del p2 'redlock_holder:{p2}' >/dev/null
	st=0
	reap -t 10 "${bg[0]}" || st=$?
	bg=()
	[ "$st" = 79 ]
	grep -q "lost the lock on p2" "$D/err"
	run -0 rcli exists p1 p2 p3
	assert_output 1
	[ "$(rcli hlen p1)" -ge 1 ]
}
