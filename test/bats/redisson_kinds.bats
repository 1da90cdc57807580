#!/usr/bin/env bats
# test/bats/redisson.py as Java services using Redisson's
# RPermitExpirableSemaphore and RReadWriteLock: permits are never exceeded
# and come back when they expire, readers share and exclude writers, every
# release wakes the waiters it should by a message, not a poll; and
# redlock status shows what these clients write.

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
	: >"$D/events"
	bg=()
}
teardown() { stop_bg; stop_strays; }

RSN=$BATS_TEST_DIRNAME/redisson.py
rsn() { python3 "$RSN" --port "$R_PORT" "$@"; }

# rsn_bg ARGS...: redisson.py ARGS in the background, its events (labelled
# with --label in ARGS) appended to $D/events.
rsn_bg() {
	python3 "$RSN" --port "$R_PORT" "$@" >>"$D/events" 2>>"$D/err" 3>&- &
	bg+=($!)
}

# When LABEL had EVENT (default acquired), in ms since the epoch; empty if
# it did not. Labelled lines end "LABEL TIME".
when_ms() {
	awk -v l="$1" -v e="${2:-acquired}" \
	    '$1 == e && $(NF - 1) == l { printf "%.0f\n", $NF * 1000; exit }' \
	    "$D/events"
}
had() { [ -n "$(when_ms "$@")" ]; }
hadnt() { [ -z "$(when_ms "$@")" ]; }
# subscribed N: N clients have said they wait on their channel.
subscribed() { [ "$(grep -c '^subscribed ' "$D/events")" -ge "$1" ]; }
served() { wait_for "$1" all_dead "${bg[@]}"; }

# took LABEL FROM_MS LIMIT_MS WHAT: LABEL acquired within LIMIT_MS of
# FROM_MS (said on fd 3). FROM_MS is mostly a releaser's "released" time,
# taken once its script answered: a waiter woken by it may come first.
took() {
	local t
	wait_for 3 had "$1" || :
	t=$(when_ms "$1")
	if [ -z "$t" ]; then
		echo "$4: $1 did not acquire within 3 s" >&3
		return 1
	fi
	echo "$4: $1 acquired $((t - $2)) ms later" >&3
	[ $((t - $2)) -lt "$3" ]
}

@test "semaphore: 9 acquirers of 3 permits, never more than 3 taken at once" {
	run rsn semaphore s set-permits 3
	assert_output "set 3"
	# the permits taken and free, every 10 ms, as the server sees them
	while :; do
		rcli eval "return redis.call('zcard', KEYS[2]) .. ' ' ..
		    (redis.call('get', KEYS[1]) or 'none')" 2 s '{s}:timeout'
		sleep 0.01
	done >"$D/samples" 2>&1 3>&- &
	sampler=$!
	# Holds of 2 s: on a loaded box the Python clients start some
	# hundreds of ms apart, and with 0.3 s the first had given its
	# permit back before the third took one, so nobody ever queued.
	for i in 1 2 3 4 5 6 7 8 9; do
		rsn_bg --label "a$i" semaphore s acquire --lease 10000 \
		    --wait 20 --hold 2
	done
	served 30
	kill "$sampler"
	wait "$sampler" 2>/dev/null || :
	sampler=
	echo "taken/free seen: $(sort -u "$D/samples" | paste -sd,)" >&3
	[ "$(grep -c '^acquired ' "$D/events")" = 9 ]
	[ "$(grep -c '^released ' "$D/events")" = 9 ]
	awk '$1 > 3 || $1 + $2 != 3 { bad = 1 } END { exit bad }' "$D/samples"
	grep -q '^3 0$' "$D/samples"	# and they did queue
	run rsn semaphore s available
	assert_output 3
	[ "$(rcli zcard '{s}:timeout')" = 0 ]
}

@test "semaphore: an expired permit comes back; a waiter gets it when it expires, unwoken" {
	rsn semaphore s set-permits 1
	t0=$(now_ms)
	# A lease long enough for the waiter to start (python) before it ends,
	# also on a loaded box (2 s was not, once: it found the permit back).
	run rsn semaphore s acquire --lease 4000 --keep
	[[ $output =~ ^acquired\ [0-9a-f]{32}\ [0-9.]+$ ]]
	id=$(echo "$output" | cut -d' ' -f2)
	[ "$(rcli zcard '{s}:timeout')" = 1 ]
	run rsn semaphore s available
	assert_output 0
	rsn_bg --label b semaphore s acquire --wait 12 --hold 0
	wait_for 10 subscribed 1
	wait_for 10 had b || :	# the lease's 4 s, longer than took's wait
	took b "$t0" 7000 "a permit with a 4 s lease"
	[ "$(when_ms b)" -ge $((t0 + 4000)) ]
	hadnt b woken	# nobody published: it waited for the expiry
	served 3
	run rsn semaphore s release "$id"
	[ "$status" = 3 ]	# expired and given back: not the holder's
	run rsn semaphore s available
	assert_output 1
}

@test "semaphore: a Java host's clock ahead by less than a renewal's lease left takes no live permit; ahead by more, the watchdog stops COMMAND at its next renewal" {
	# A 3 s lease renewed every second: at least 2 s of it are left.
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec --limit 1 -t 3s s -- \
	    sleep 30 2>"$D/rl.err" 3>&- &
	rpid=$!
	bg+=("$rpid")
	wait_for 5 eval '[ "$(rcli zcard "{s}:timeout")" = 1 ]'
	sleep 1.2	# past a renewal
	# 1 s ahead: every permit is still live by its clock.
	run rsn --skew 1000 semaphore s acquire --wait 0 --keep
	[ "$status" = 1 ]
	# 5 s ahead: the permit has expired by its clock; it takes it back
	# and takes it, and redlock's watchdog finds it gone.
	run rsn --skew 5000 semaphore s acquire --wait 0 --keep
	[ "$status" = 0 ]
	t0=$(now_ms)
	st=0
	wait_for 5 dead "$rpid"
	reap "$rpid" || st=$?
	echo "exec ended $(($(now_ms) - t0)) ms after the Java client took the permit (exit $st)" >&3
	[ "$st" = 79 ]
	grep -q 'lost' "$D/rl.err"
}

@test "semaphore: a release wakes a waiter at once (also sharded)" {
	local sharded
	for sharded in '' --sharded; do
		: >"$D/events"
		rcli flushall >/dev/null
		rsn $sharded semaphore s set-permits 1 >/dev/null
		id=$(rsn $sharded semaphore s acquire --keep | cut -d' ' -f2)
		rsn_bg $sharded --label w semaphore s acquire --wait 10
		wait_for 10 subscribed 1
		rsn $sharded --label h semaphore s release "$id" >>"$D/events"
		t0=$(when_ms h released)
		took w "$t0" 1000 "release of a permit without lease${sharded:+ }$sharded"
		had w woken
		served 3
	done
}

@test "rwlock: readers share; a writer waits for the last and is woken at once" {
	rsn --label r1 rwlock x read --lease 30000 --keep --id r1:1 >>"$D/events"
	rsn --label r2 rwlock x read --lease 30000 --keep --id r2:1 >>"$D/events"
	rsn_bg --label w rwlock x write --wait 10 --lease 5000
	wait_for 10 subscribed 1
	rsn --label r1 rwlock x unlock-read --id r1:1 >>"$D/events"
	grep -q '^decremented r1 ' "$D/events"
	sleep 0.3
	hadnt w
	rsn --label r2 rwlock x unlock-read --id r2:1 >>"$D/events"
	t0=$(when_ms r2 released)
	took w "$t0" 1000 "release of the last reader"
	served 3
	run rcli exists x '{x}:r1:1:rwlock_timeout:1' '{x}:r2:1:rwlock_timeout:1'
	assert_output 0
}

@test "rwlock: a writer excludes readers, and its release wakes them all (also sharded)" {
	local sharded i
	for sharded in '' --sharded; do
		: >"$D/events"
		rcli flushall >/dev/null
		rsn $sharded rwlock x write --lease 30000 --keep --id w:1 >/dev/null
		for i in 1 2 3; do
			rsn_bg $sharded --label "r$i" rwlock x read --wait 10 \
			    --hold 0.5
		done
		wait_for 10 subscribed 3
		hadnt r1
		rsn $sharded --label w rwlock x unlock-write --id w:1 >>"$D/events"
		t0=$(when_ms w released)
		for i in 1 2 3; do
			took "r$i" "$t0" 1000 "write release${sharded:+ }$sharded"
		done
		served 3
		# all three held it at once
		first_out=$(awk '($1 == "released" || $1 == "decremented") &&
		    $2 != "w" { printf "%.0f\n", $NF * 1000; exit }' "$D/events")
		for i in 1 2 3; do
			[ "$(when_ms "r$i")" -le "$first_out" ]
		done
	done
}

@test "rwlock: the writer's own read re-enters; its write release leaves read mode, unannounced" {
	rsn rwlock x write --lease 30000 --keep --id w:1 >/dev/null
	run rsn rwlock x read --lease 10000 --keep --id w:1 --wait 0
	assert_success
	# its read release leaves the write as it was
	run rsn rwlock x unlock-read --id w:1
	assert_output --regexp '^decremented [0-9.]+$'
	[ "$(rcli hget x mode)" = write ]
	[ "$(rcli hlen x)" = 2 ]
	# The write's 30 s lease, not the read's 10 s (the Python client
	# takes a while to start on a busy box).
	[ "$(rcli pttl x)" -gt 20000 ]
	run rsn rwlock x read --lease 10000 --keep --id w:1 --wait 0
	assert_success
	run rsn rwlock x read --id o:1 --wait 0.2
	[ "$status" = 1 ]
	[ "$(rcli hget x mode)" = write ]
	[ "$(rcli hget x w:1:write)" = 1 ]
	[ "$(rcli hget x w:1)" = 1 ]
	run rl status x
	assert_success
	assert_line "  owner    w:1"
	assert_line "  mode     write (Redisson read-write lock)"
	assert_line --regexp '^  reader   w:1 \(1 hold, lease [0-9.]+s left\)$'
	# --wait 15: the steps below start three Python clients, which took
	# longer than a 3 s wait on a loaded box.
	rsn_bg --label o rwlock x read --wait 15 --lease 5000
	wait_for 10 subscribed 1
	rsn --label w rwlock x unlock-write --id w:1 >>"$D/events"
	[ "$(rcli hget x mode)" = read ]
	run rl status x
	assert_line "  mode     read (Redisson read-write lock)"
	assert_line --regexp '^  reader   w:1 '
	# read mode now, but nothing was published: the waiting reader
	# sleeps on (on the lock's PTTL, or until --wait runs out)
	sleep 0.5
	hadnt o woken
	hadnt o
	rsn --label w rwlock x unlock-read --id w:1 >>"$D/events"
	t0=$(awk '$1 == "released" && $2 == "w" { t = $3 } END {
	    printf "%.0f\n", t * 1000 }' "$D/events")	# the last
	took o "$t0" 1000 "the writer's last read release"
	had o woken
}

@test "rwlock: the watchdog renews a read hold's lease key and the lock" {
	rsn_bg --label r rwlock x read --watchdog 600 --hold 1.5 --id r:1
	# A renewal 200 ms after it acquired, however long Python took to
	# start (a fixed 1.1 s was not enough on a loaded box).
	wait_for 10 grep -q '^renewed r ' "$D/events"
	[ "$(rcli pttl '{x}:r:1:rwlock_timeout:1')" -gt 300 ]
	[ "$(rcli pttl x)" -gt 300 ]
	served 3
	grep -q '^released r ' "$D/events"
	[ "$(rcli exists x '{x}:r:1:rwlock_timeout:1')" = 0 ]
}

@test "a Java reader's watchdog cannot cut a redlock reader's lease: a read hold is renewed at least every 9 s whatever its --ttl" {
	rl exec -s -v -t 60s jr -- sleep 20 2>"$D/rl.err" 3>&- &
	rpid=$!
	bg+=("$rpid")
	wait_for 10 eval '[ "$(rcli exists jr)" = 1 ]'
	# A Java reader with a 10 s watchdog, the least Redisson allows: its
	# renewal sets NAME's expiry to 10 s; then it dies (SIGKILL).
	python3 "$RSN" --port "$R_PORT" --label j rwlock jr read \
	    --watchdog 10000 --hold 60 >>"$D/events" 2>>"$D/err" 3>&- &
	jpid=$!
	bg+=("$jpid")
	wait_for 20 grep -q '^renewed j ' "$D/events"
	kill -9 "$jpid"
	# NAME stays until redlock's COMMAND ends, 20 s after it began. It
	# goes with redlock's release, a moment before the process is gone:
	# gone is fine only if redlock ends within 2 s, having released it.
	while ! dead "$rpid"; do
		[ "$(rcli exists jr)" = 1 ] || {
			wait_for 2 dead "$rpid" &&
			    grep -q 'released jr' "$D/rl.err" || {
				cat "$D/rl.err" >&2
				false
			}
			break
		}
		sleep 0.5
	done
	st=0
	reap "$rpid" || st=$?
	cat "$D/rl.err" >&3
	[ "$st" -eq 0 ]
	[ "$(grep -c 'renewed jr' "$D/rl.err")" -ge 2 ]
}

@test "beside a Java reader, a plain or --fair exec nested in exec -s of the same name is refused (64): no exclusive section beside the readers" {
	jtok="$(cat /proc/sys/kernel/random/uuid):5"
	rsn rwlock n read --lease 30000 --keep --id "$jtok" >/dev/null
	for opt in "" --fair; do
		# shellcheck disable=SC2016
		run -0 --separate-stderr rl exec -s n -- sh -c '
		    "$0" -u "redis://127.0.0.1:$1" exec $2 n -- echo exclusive
		    echo "inner=$?"
		    redis-cli -p "$1" hgetall n | paste -d= - - | LC_ALL=C sort | tr "\n" " "' \
		    "$RL" "$R_PORT" "$opt"
		echo "$output" >&3
		[ "${lines[0]}" = "inner=64" ]
		# The Java reader and the exec's one read hold, nothing more
		# (in the order of the tokens, which are random).
		[[ " ${lines[1]}" == *" $jtok=1 "* ]]
		[[ ${lines[1]} == *" mode=read " ]]
		[ "$(echo "${lines[1]}" | wc -w)" = 3 ]
		[ "$(echo "${lines[1]}" | tr ' ' '\n' | grep -c '=1$')" = 2 ]
		assert_equal "$(rcli hgetall n | paste -d= - - | LC_ALL=C sort | tr '\n' ' ')" "$jtok=1 mode=read "
	done
}

@test "redlock status shows the read-write locks and permit-expirable semaphores these clients write" {
	rsn rwlock x read --lease 30000 --keep --id aaaa:1 >/dev/null
	rsn rwlock x read --lease 20000 --keep --id bbbb:1 >/dev/null
	rsn rwlock x read --lease 20000 --keep --id bbbb:1 >/dev/null
	run rl status x
	assert_success
	assert_line "x: held"
	assert_line "  mode     read (Redisson read-write lock)"
	# Each reader's own lease, 30 s and 20 s, less the seconds the three
	# Python clients took to start on a busy box.
	assert_line --regexp '^  reader   aaaa:1 \(1 hold, lease (2[1-9]|30)\.[0-9]s left\)$'
	assert_line --regexp '^  reader   bbbb:1 \(2 holds, lease (1[1-9]|20)\.[0-9]s left\)$'
	assert_line "  holds    3"
	run rl status --json x
	assert_output --partial '"kind":"rwlock","mode":"read"'
	assert_output --partial '{"owner":"bbbb:1","holds":2,"lease_ms":'

	rsn semaphore s set-permits 3 >/dev/null
	a=$(rsn semaphore s acquire --lease 60000 --keep | cut -d' ' -f2)
	b=$(rsn semaphore s acquire --keep | cut -d' ' -f2)
	c=$(rsn semaphore s acquire --lease 1 --keep | cut -d' ' -f2)
	sleep 0.05
	run rl status s
	[ "$status" = 0 ]
	assert_line "s: a semaphore: 3 permits taken, 0 free"
	assert_line --regexp "^  permit   $c: expired .* ago\), not yet given back\$"
	assert_line --regexp "^  permit   $a: lease (5[1-9]|60)\.[0-9]s left\$"
	assert_line "  permit   $b: no expiry"
	run rsn semaphore s available
	assert_output 1
	run rl status --json s
	assert_output --partial '"kind":"expirable_semaphore","held":true,"permits_free":1,"permits_taken":2'
	assert_output --partial "{\"id\":\"$b\",\"expires_ms\":null,\"lease_ms\":null,"
}
