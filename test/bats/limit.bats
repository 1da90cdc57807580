#!/usr/bin/env bats
# --limit N: at most N holders at once, from the command line, in
# Redisson's RPermitExpirableSemaphore layout: leased permits that the
# watchdog renews, come back when their holder dies, and wake a waiter by
# the semaphore's channel when given back.

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
	bg=()
}
teardown() { stop_bg; stop_strays; }

RSN=$BATS_TEST_DIRNAME/redisson.py
rsn() { python3 "$RSN" --port "$R_PORT" "$@"; }

@test "20 jobs through --limit 3: never more than 3 at once, and every one finishes" {
	for i in $(seq 1 20); do
		"$RL" -u "redis://127.0.0.1:$R_PORT" exec --limit 3 -w 60s s -- \
		    sh -c 'echo "+ $(date +%s%N)" >>"$0"; sleep 0.2; echo "- $(date +%s%N)" >>"$0"' \
		    "$D/log" 3>&- &
		bg+=($!)
	done
	for p in "${bg[@]}"; do reap "$p"; done
	bg=()
	[ "$(grep -c '^+' "$D/log")" = 20 ]
	[ "$(grep -c '^-' "$D/log")" = 20 ]
	most=$(sort -k2 -n "$D/log" | awk '{ n += ($1 == "+") ? 1 : -1; if (n > m) m = n } END { print m }')
	echo "at most $most at once" >&3
	[ "$most" -le 3 ]
	[ "$most" -ge 2 ]
	[ "$(rcli get s)" = 3 ]
	[ "$(rcli exists '{s}:timeout')" = 0 ]
}

@test "the watchdog renews a permit past its ttl; SIGKILL of its holder gives it back within the ttl" {
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec --limit 1 -t 1s s -- sleep 30 3>&- &
	e=$!
	bg+=($e)
	wait_for 5 eval '[ "$(rcli zcard "{s}:timeout")" = 1 ]'
	wd=$(pgrep -P "$e")
	c=$(pgrep -P "$wd")
	sleep 2.2
	run -75 --separate-stderr rl exec --limit 1 -n s -- true
	[[ $stderr == "redlock: s is busy: its one permit is taken; the first to come back is held by $(hostname) pid "*" (sleep 30) for 2."*"s, lease "*"s left; wait for it with -w DURATION" ]]
	# redlock and its watchdog die (COMMAND with them: its parent-death
	# signal): nothing renews, nothing releases.
	kill -9 "$e" "$wd"
	start=$(now_ms)
	run -0 rl exec --limit 1 -w 5s s -- true
	took=$(($(now_ms) - start))
	echo "the permit came back $took ms after the SIGKILL (ttl 1 s)" >&3
	[ "$took" -lt 2000 ]
	kill -9 "$c" 2>/dev/null || :
}

@test "a release wakes a waiter by push, long before the lease it was told" {
	tok=$(rl lock --limit 1 -t 60s s)
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec --limit 1 -w 20s s -- sh -c 'date +%s%N >"$0"' "$D/w" 3>&- &
	bg+=($!)
	wait_for 5 eval '[ "$(rcli pubsub numsub "redisson_sc:{s}" | sed -n 2p)" = 1 ]'
	t0=$(date +%s%N)
	run -0 rl unlock --owner "$tok" s
	wait_for 5 test -s "$D/w"
	took=$(( ($(cat "$D/w") - t0) / 1000000 ))
	echo "woken $took ms after unlock began (lease 60 s)" >&3
	[ "$took" -lt 3000 ]
}

@test "REDLOCK_FENCE rises with each permit; a nested exec re-enters its ancestor's permit" {
	a=$(rl exec --limit 2 s -- sh -c 'echo "$REDLOCK_FENCE"')
	b=$(rl exec --limit 2 s -- sh -c 'echo "$REDLOCK_FENCE"')
	[ "$b" -gt "$a" ]
	run -0 rl exec --limit 1 t -- sh -c '
	    echo "$REDLOCK_FENCE"
	    "$0" -u "redis://127.0.0.1:$1" exec --limit 1 -n t -- sh -c "echo \$REDLOCK_FENCE"
	    redis-cli -p "$1" get t' "$RL" "$R_PORT"
	[ "${lines[0]}" = "${lines[1]}" ]
	[ "${lines[2]}" = 0 ]
	[ "$(rcli get t)" = 1 ]
}

@test "status shows each permit's holder and the free count; --json the same" {
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec --limit 3 s -- sleep 30 3>&- &
	bg+=($!)
	wait_for 5 eval '[ "$(rcli zcard "{s}:timeout")" = 1 ]'
	run -0 rl status s
	assert_line --index 0 's: a semaphore: 1 permit taken, 2 free'
	assert_line --index 1 --regexp "^  permit   [0-9a-f]{32}: held by $(hostname) pid [0-9]+ \\(sleep 30\\) for [0-9.]+m?s, fence [0-9]+, lease (2[1-9]|30)\\.[0-9]s left\$"
	run -0 rl status --json s
	echo "$output" | jq -e '.kind == "expirable_semaphore" and .held
	    and .permits_free == 2 and .permits_taken == 1
	    and .permits[0].cmd == "sleep 30" and .permits[0].pid > 0
	    and .permits[0].lease_ms > 25000 and .permits[0].fence > 0
	    and .permits[0].since_ms > 0'
	run -0 rl status
	assert_line 's: a semaphore: 1 permit taken, 2 free'
	stop_bg
	bg=()
	wait_for 5 eval '[ "$(rcli exists "{s}:timeout")" = 0 ]'
	run -1 rl status s
	assert_output 's: a semaphore: 0 permits taken, 3 free'
}

@test "a permit's id is 16 bytes, as Redisson's, from the SHA-1 of the whole owner token: tokens that differ only in their pid are two owners; status names the token" {
	u=0123abcd-0000-4000-8000-00000000abcd
	run -0 rl lock --limit 1 -t 60s --owner "$u:1" s
	# The same UUID with another pid is another owner: busy, not a
	# re-entry of the one permit (which let N+1 in).
	run -75 rl lock --limit 1 -n -t 60s --owner "$u:2" s
	[ "$(rcli get s)" = 0 ]
	[ "$(rcli zcard '{s}:timeout')" = 1 ]
	[ "$(rcli eval "return #redis.call('ZRANGE', KEYS[1], 0, 0)[1]" 1 '{s}:timeout')" = 16 ]
	run -0 rl status --json s
	# The id: 16 bytes of the SHA-1 of the token; the owner: the token.
	echo "$output" | jq -e --arg id "$(printf '%s' "$u:1" | sha1sum | cut -c1-32)" \
	    --arg o "$u:1" '.permits[0].id == $id and .permits[0].owner == $o'
	# Neither the id itself as a token, nor anything else, gives it back.
	run -1 rl unlock --owner "${u//-/}" s
	run -1 rl unlock --owner "${u//-/}0000001" s
	run -1 rl unlock --owner "$u:2" s
	[ "$(rcli get s)" = 0 ]
	[ "$(rcli zcard '{s}:timeout')" = 1 ]
	run -0 rl unlock --owner "$u:1" s
	[ "$(rcli get s)" = 1 ]
	[ "$(rcli exists '{s}:timeout')" = 0 ]
	# With two permits, the two tokens hold one each.
	run -0 rl lock --limit 2 -t 60s --owner "$u:1" s2
	run -0 rl lock --limit 2 -t 60s --owner "$u:2" s2
	run -75 rl lock --limit 2 -n -t 60s --owner "$u:3" s2
	[ "$(rcli get s2)" = 0 ]
	[ "$(rcli zcard '{s2}:timeout')" = 2 ]
	# Any other token: 16 bytes of its SHA-1; two tokens, two permits.
	x=$(printf 'x%.0s' {1..36}) y=$(printf 'y%.0s' {1..36})
	run -0 rl lock --limit 2 -t 60s --owner "$x:1" t
	run -0 rl lock --limit 2 -t 60s --owner "$y:1" t
	run -0 rl lock --limit 2 -t 60s --owner "$x:1" t
	[ "$(rcli get t)" = 0 ]
	run -0 rl status --json t
	assert_equal "$(echo "$output" | jq -r '.permits[].id' | sort)" "$(for o in "$x:1" "$y:1"; do printf '%s' "$o" | sha1sum | cut -c1-32; done | sort)"
}

@test "the permit id that status shows is Java's: Redisson's updateLeaseTime and release by it reach a redlock holder's permit" {
	tok=$(rl lock --limit 2 -t 60s s)
	id=$(rl status --json s | jq -r '.permits[0].id')
	[[ $id =~ ^[0-9a-f]{32}$ ]]
	run -0 rsn semaphore s update-lease "$id" 120000
	[[ $output == updated* ]]
	rl status --json s | jq -e '.permits[0].lease_ms > 100000'
	run -0 rsn semaphore s release "$id"
	[[ $output == released* ]]
	[ "$(rcli get s)" = 2 ]
	[ "$(rcli exists '{s}:timeout')" = 0 ]
	# Its holder finds it gone; its record went with the release.
	run -1 rl unlock --owner "$tok" s
	[ "$(rcli exists 'redlock_holder:{s}')" = 0 ]
}

@test "a permit that Java gave back when it expired (its holder stopped): status without NAME no longer lists the name, and the holder record expires" {
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec --limit 1 -t 1s --kill-after 1s s -- sleep 30 3>&- &
	e=$!
	bg+=($e)
	wait_for 5 eval '[ "$(rcli zcard "{s}:timeout")" = 1 ]'
	t=$(rcli pttl 'redlock_holder:{s}')
	[ "$t" -gt 0 ]
	[ "$t" -le 1000 ]
	run -0 rl status
	assert_output 's: a semaphore: 1 permit taken, 0 free'
	wd=$(pgrep -P "$e")
	kill -STOP "$e" "$wd"
	# Past the lease, a Java client's acquisition gives the permit back
	# and takes it for itself; Redisson's script knows nothing of the
	# holder record.
	j=$(rsn semaphore s acquire --wait 10 --lease 60000 --keep |
	    sed -n 's/^acquired \([0-9a-f]*\) .*/\1/p')
	[ -n "$j" ]
	# The overview lists the permit, Java's now.
	run -0 --separate-stderr rl status
	assert_output 's: a semaphore: 1 permit taken, 0 free'
	run -0 rl status s
	assert_line --index 0 's: a semaphore: 1 permit taken, 0 free'
	assert_line --index 1 --regexp "^  permit   $j: lease"
	t=$(rcli pttl 'redlock_holder:{s}')
	[ "$t" = -2 ] || [ "$t" -gt 0 ]
	kill -CONT "$wd" "$e"
	rc=0
	reap "$e" || rc=$?
	[ "$rc" = 79 ]
	[ "$(rcli exists 'redlock_holder:{s}')" = 0 ]
	run -0 rsn semaphore s release "$j"
}

@test "upgrading: a permit that an older redlock holds under its id in hex digits is shown, released by its token and cleared by unlock --force" {
	u=0123abcd-0000-4000-8000-00000000abcd
	old=${u//-/}0000042
	now=$(server_ms)
	rcli set s 1 >/dev/null
	rcli zadd '{s}:timeout' $((now + 60000)) "$old" >/dev/null
	rcli hset 'redlock_holder:{s}' "$old" "{\"host\":\"old\",\"pid\":42,\"user\":\"u\",\"cmd\":\"sleep 9\",\"since_ms\":$now,\"fence\":7}" >/dev/null
	run -0 rl status s
	assert_line --index 0 's: a semaphore: 1 permit taken, 1 free'
	assert_line --index 1 --regexp "^  permit   $old: held by old pid 42 \(sleep 9\) for [0-9.]+m?s, fence 7, lease [0-9.]+s left\$"
	run -0 rl status
	assert_output 's: a semaphore: 1 permit taken, 1 free'
	# A new redlock beside it draws from the same count.
	tok=$(rl lock --limit 2 -t 60s s)
	run -75 rl exec --limit 2 -n s -- true
	run -0 rl unlock --owner "$tok" s
	run -0 rl unlock --owner "$u:42" s
	[ "$(rcli get s)" = 2 ]
	[ "$(rcli exists '{s}:timeout' 'redlock_holder:{s}')" = 0 ]
	rcli set s 1 >/dev/null
	rcli zadd '{s}:timeout' $((now + 60000)) "$old" >/dev/null
	run -0 rl unlock --force s
	[ "$(rcli exists s '{s}:timeout')" = 0 ]
}

@test "another N while a permit is taken, --fair, several masters: usage errors, nothing changed" {
	tok=$(rl lock --limit 3 -t 60s s)
	before=$(rcli get s)
	run -64 --separate-stderr rl exec --limit 2 s -- true
	assert_equal "$stderr" "redlock: s is a semaphore of 3 permits, not 2, and 1 is taken; nothing was changed: it is resized only when no permit is taken; wait for it, or free every permit (its holders lose theirs): redlock unlock --force s"
	[ "$(rcli get s)" = "$before" ]
	run -0 rl unlock --owner "$tok" s
	run -64 --separate-stderr rl lock --limit 3 --fair s
	[[ $stderr == *"--fair and --limit do not go together"* ]]
	run -64 --separate-stderr rl lock --limit 0 s
	[[ $stderr == *"--limit: '0' is not a number from 1"* ]]
	run -64 --separate-stderr rl lock --limit 2 -s s
	[[ $stderr == *"--limit and --shared do not go together"* ]]
	run -64 --separate-stderr "$RL" -u "redis://127.0.0.1:$R_PORT" -u "redis://127.0.0.1:1" exec --limit 2 s -- true
	[[ $stderr == *"--limit is not available with several masters"* ]]
	# A lock's hash at NAME is not a semaphore.
	rl lock -t 60s h >/dev/null
	run -65 --separate-stderr rl exec --limit 2 h -- true
	assert_equal "$stderr" "redlock: h is a lock, not a semaphore: take it without --limit, or choose another name; nothing was changed"
}

@test "Java code sets the count: redlock uses it, and shares permits with Redisson's clients both ways" {
	rsn semaphore s set-permits 2 >/dev/null
	j=$(rsn semaphore s acquire --lease 60000 --keep | cut -d' ' -f2)
	run -64 rl exec --limit 3 -n s -- true
	tok=$(rl lock --limit 2 -t 60s s)
	run -75 rl exec --limit 2 -n s -- true
	run -0 rsn semaphore s available
	assert_output 0
	run -75 --separate-stderr rl exec --limit 2 -n s -- true
	[[ $stderr == "redlock: s is busy: all 2 permits are taken; the first to come back is "* ]]
	# A Redisson release wakes a redlock waiter by the channel.
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec --limit 2 -w 20s s -- sh -c 'date +%s%N >"$0"' "$D/w" 3>&- &
	bg+=($!)
	wait_for 5 eval '[ "$(rcli pubsub numsub "redisson_sc:{s}" | sed -n 2p)" = 1 ]'
	t0=$(date +%s%N)
	rsn semaphore s release "$j" >/dev/null
	wait_for 5 test -s "$D/w"
	[ $(( ($(cat "$D/w") - t0) / 1000000 )) -lt 3000 ]
	# A redlock release wakes a Redisson waiter.
	python3 "$RSN" --port "$R_PORT" --label j semaphore s acquire --wait 20 >"$D/j" 3>&- &
	bg+=($!)
	wait_for 5 eval '[ "$(rcli zcard "{s}:timeout")" = 1 ]'
	sleep 0.3
	run -0 rl unlock --owner "$tok" s
	wait_for 5 grep -q '^acquired' "$D/j"
}

@test "a permit taken away behind redlock's back: COMMAND is terminated, exit 79" {
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec --limit 2 -t 300ms --kill-after 1s s -- sleep 30 3>"$D/rc" &
	e=$!
	wait_for 5 eval '[ "$(rcli zcard "{s}:timeout")" = 1 ]'
	rcli del '{s}:timeout' >/dev/null
	rc=0
	reap "$e" || rc=$?
	[ "$rc" = 79 ]
}

@test "a user that may not publish on the semaphore's channel is told which ACL rule wakes its waiters" {
	rcli acl setuser nopub on '>pw' '~*' '+@all' '&redisson_lock__channel:*' >/dev/null
	run -0 --separate-stderr "$RL" -u "redis://nopub:pw@127.0.0.1:$R_PORT" exec --limit 2 s -- true
	[[ $stderr == *"user nopub may not PUBLISH on redisson_sc:{s}"*"grant it with ACL SETUSER nopub &redisson_sc:*"* ]]
	run -0 --separate-stderr "$RL" -u "redis://nopub:pw@127.0.0.1:$R_PORT" exec -s r -- true
	[[ $stderr == *"may not PUBLISH on redisson_rwlock:{r}"*"grant it with ACL SETUSER nopub &redisson_rwlock:*"* ]]
	rcli acl deluser nopub >/dev/null
}

@test "SIGSTOP of a permit's watchdog past its lease: the permit goes to a waiter, and when the watchdog runs again COMMAND is stopped, exit 79" {
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec --limit 1 -t 400ms --kill-after 1s s -- sleep 30 3>&- &
	e=$!
	wait_for 5 eval '[ "$(rcli zcard "{s}:timeout")" = 1 ]'
	wd=$(pgrep -P "$e")
	kill -STOP "$wd"
	run -0 rl exec --limit 1 -w 5s s -- sh -c 'echo "$REDLOCK_FENCE"'
	kill -CONT "$wd"
	rc=0
	reap "$e" || rc=$?
	[ "$rc" = 79 ]
	# The permit the second holder gave back is free; nothing is held.
	[ "$(rcli get s)" = 1 ]
	[ "$(rcli exists '{s}:timeout')" = 0 ]
}

@test "unlock --force deletes a semaphore with its permits and count: its holder loses its permit, a waiter is woken, and a new N can be set" {
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec --limit 1 -t 300ms --kill-after 1s s -- sleep 30 3>&- &
	e=$!
	wait_for 5 eval '[ "$(rcli zcard "{s}:timeout")" = 1 ]'
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec --limit 1 -w 20s s -- sh -c 'date +%s%N >"$0"' "$D/w" 3>&- &
	bg+=($!)
	wait_for 5 eval '[ "$(rcli pubsub numsub "redisson_sc:{s}" | sed -n 2p)" = 1 ]'
	run -0 rl unlock --force s
	wait_for 5 test -s "$D/w"
	rc=0
	reap "$e" || rc=$?
	[ "$rc" = 79 ]
	run -0 rl unlock --force s
	run -1 --separate-stderr rl unlock --force s
	run -0 rl exec --limit 5 s -- true
	[ "$(rcli get s)" = 5 ]
	rcli set t hello >/dev/null
	run -65 rl unlock --force t
	[ "$(rcli get t)" = hello ]
}

# The state of semaphore s in Redis: its count, its permits with their
# expiries, the holder records, the fencing counter, the history's length.
sem_state() {
	rcli get s
	rcli zrange '{s}:timeout' 0 -1 withscores
	rcli hgetall 'redlock_holder:{s}'
	rcli get 'redisson_lock_token:{s}'
	rcli xlen 'redlock_log:{s}'
}

@test "another N when no permit is taken resizes the semaphore: then N holders, never N+1; fencing and history go on" {
	run -0 rl exec --limit 3 s -- sh -c 'echo "$REDLOCK_FENCE" >"$0"' "$D/f0"
	[ "$(rcli get s)" = 3 ]
	# Down to 2: two holders, the third busy.
	a=$(rl lock --limit 2 -t 60s s)
	[ "$(rcli get s)" = 1 ]
	b=$(rl lock --limit 2 -t 60s s)
	run -75 rl exec --limit 2 -n s -- true
	[ "$(rcli get s)" = 0 ]
	[ "$(rcli zcard '{s}:timeout')" = 2 ]
	run -0 rl unlock --owner "$a" s
	run -0 rl unlock --owner "$b" s
	[ "$(rcli get s)" = 2 ]
	# Up to 4: four holders, the fifth busy.
	toks=()
	for i in 1 2 3 4; do toks+=("$(rl lock --limit 4 -t 60s s)"); done
	run -75 rl exec --limit 4 -n s -- true
	[ "$(rcli get s)" = 0 ]
	[ "$(rcli zcard '{s}:timeout')" = 4 ]
	for t in "${toks[@]}"; do run -0 rl unlock --owner "$t" s; done
	[ "$(rcli get s)" = 4 ]
	# Down to 1: the fence still grows.
	run -0 rl exec --limit 1 s -- sh -c 'echo "$REDLOCK_FENCE" >"$0"' "$D/f1"
	[ "$(rcli get s)" = 1 ]
	[ "$(cat "$D/f1")" -gt "$(cat "$D/f0")" ]
	[ "$(rl log s | grep -c acquired)" = 8 ]
}

@test "a permit whose lease ended counts as not taken: another N resizes; its holder's release finds it lost" {
	tok=$(rl lock --limit 3 -t 60s s)
	# Its lease ended a second ago, by the server's clock.
	rcli eval "local m = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
	    redis.call('ZADD', KEYS[1], ARGV[1], m)" 1 '{s}:timeout' \
	    $(($(server_ms) - 1000)) >/dev/null
	run -0 --separate-stderr rl exec --limit 2 s -- sh -c 'redis-cli -p "$0" get s' "$R_PORT"
	assert_output 1
	[ "$(rcli get s)" = 2 ]
	[ "$(rcli zcard '{s}:timeout')" = 0 ]
	run -1 rl unlock --owner "$tok" s
	[ "$(rcli get s)" = 2 ]
	a=$(rl lock --limit 2 -t 60s s)
	b=$(rl lock --limit 2 -t 60s s)
	run -75 rl exec --limit 2 -n s -- true
}

@test "another N while permits are taken: 64 naming unlock --force, the size and how many are taken; nothing changed, waiters too" {
	a=$(rl lock --limit 3 -t 60s s)
	b=$(rl lock --limit 3 -t 60s s)
	before=$(sem_state)
	run -64 --separate-stderr rl exec --limit 5 -w 2s s -- true
	assert_equal "$stderr" "redlock: s is a semaphore of 3 permits, not 5, and 2 are taken; nothing was changed: it is resized only when no permit is taken; wait for them, or free every permit (its holders lose theirs): redlock unlock --force s"
	run -64 --separate-stderr rl lock --limit 1 -n s
	[[ $stderr == *"a semaphore of 3 permits, not 1, and 2 are taken; "* ]]
	[ "$(sem_state)" = "$before" ]
	# The way out the message names: then the new N is taken.
	run -0 rl unlock --force s
	run -0 rl exec --limit 5 s -- true
	[ "$(rcli get s)" = 5 ]
	# A name that looks like an option: the command says --.
	t=$(rl lock --limit 1 -t 60s -- -s)
	run -64 --separate-stderr rl lock --limit 2 -- -s
	[[ $stderr == *": redlock unlock --force -- -s" ]]
}

@test "Redisson's semaphore, none taken: another N resizes it for Java too; one Java permit taken: 64, its count unchanged" {
	rsn semaphore s set-permits 2 >/dev/null
	run -0 rl exec --limit 3 s -- true
	run -0 rsn semaphore s available
	assert_output 3
	j=$(rsn semaphore s acquire --lease 60000 --keep | cut -d' ' -f2)
	run -64 --separate-stderr rl exec --limit 2 -n s -- true
	[[ $stderr == "redlock: s is a semaphore of 3 permits, not 2, and 1 is taken; "* ]]
	run -0 rsn semaphore s available
	assert_output 2
	rsn semaphore s release "$j" >/dev/null
	run -0 rl exec --limit 2 s -- true
	run -0 rsn semaphore s available
	assert_output 2
}

@test "a waiter whose N is no longer the semaphore's: 64 at its next try, with the message, and out of the room" {
	h=$(rl lock --limit 1 -t 60s s)
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec --limit 1 -w 20s s -- true 2>"$D/err" 3>&- &
	w=$!
	bg+=($w)
	wait_for 5 eval '[ "$(rcli zcard "redlock_room:{s}")" = 1 ]'
	# The holder's lease ended, by the server's clock: none is taken, and
	# --limit 2 resizes; its message on the channel wakes the waiter.
	rcli eval "local m = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
	    redis.call('ZADD', KEYS[1], ARGV[1], m)" 1 '{s}:timeout' \
	    $(($(server_ms) - 1000)) >/dev/null
	n=$(rl lock --limit 2 -t 60s s)
	rc=0
	reap -t 15 "$w" || rc=$?
	[ "$rc" = 64 ]
	[[ $(cat "$D/err") == *"redlock: s is a semaphore of 2 permits, not 1, and 1 is taken; nothing was changed: "*": redlock unlock --force s" ]]
	[ "$(rcli zcard 'redlock_room:{s}')" = 0 ]
	[ "$(rcli get s)" = 1 ]
	run -0 rl unlock --owner "$n" s
}
