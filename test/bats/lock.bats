#!/usr/bin/env bats
# lock, unlock and status on one server.

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() { rcli flushall >/dev/null; }
# A process a test started to be watched by --keepalive --pid.
teardown() { kill_ours TERM ${spid-}; stop_strays; }

@test "lock prints an owner token and the lock is a Redisson hash with a lease" {
	run -0 --separate-stderr rl lock -t 10s x
	assert_output --regexp '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}:[0-9]+$'
	[ "$(rcli type x)" = hash ]
	[ "$(rcli hget x "$output")" = 1 ]
	pttl=$(rcli pttl x)
	[ "$pttl" -gt 8000 ]
	[ "$pttl" -le 10000 ]
	[ "$(rcli type 'redlock_holder:{x}')" = hash ]
	[ "$(rcli pttl 'redlock_holder:{x}')" -gt 8000 ]
}

@test "the holder's user is the effective user's name, as NSS gives it, or its number when it has none" {
	command -v setpriv >/dev/null || skip "setpriv is not installed"
	[ "$(id -u)" = 0 ] || skip "needs root to run as another user"
	bin=$(public_copy "$RL")
	# nobody has an entry (read from /etc/passwd where NSS reads it
	# first); 4242 has none on this system, so NSS is asked and says no.
	for uid in 65534 4242; do
		want=$(setpriv --reuid="$uid" --regid="$uid" --clear-groups \
		    id -un 2>/dev/null) || want=$uid
		tok=$(cd / && setpriv --reuid="$uid" --regid="$uid" \
		    --clear-groups "$bin" \
		    -u "redis://127.0.0.1:$R_PORT" lock -t 20s "u$uid")
		run -0 --separate-stderr rl status --json "u$uid"
		echo "$output" | jq -e --arg t "$tok" --arg u "$want" \
		    '.owner == $t and .user == $u'
	done
	rm -rf "${bin%/*}"
}

@test "lock -n on a held lock exits 75 at once, -E chooses the status" {
	rl lock -t 60s x >/dev/null
	t0=$(now_ms)
	run -75 --separate-stderr rl lock -n x
	t1=$(now_ms)
	echo "gave up after $((t1 - t0)) ms" >&3
	# Waiting for the holder would take its 60 s lease.
	[ $((t1 - t0)) -lt 2000 ]
	assert_output ''
	[[ $stderr == "redlock: x is busy: held by "* ]]
	run -3 --separate-stderr rl lock -n -E 3 x
	run -3 --separate-stderr rl lock x -n -q -E 3
	assert_equal "$stderr" ''
	# -E 0 makes busy look like success, but no token is printed.
	run -0 --separate-stderr rl lock -n -q -E 0 x
	assert_output ''
}

@test "--timeout D is -w D, as flock's, before or after exec and lock: exit 75 when it runs out, -n and -w after it win" {
	D=$BATS_TEST_TMPDIR
	rl lock -t 60s backup >/dev/null
	tl() { timeout -k 5 45 "$RL" -u "redis://127.0.0.1:$R_PORT" "$@"; }
	for words in "exec --timeout 300ms backup -- touch $D/ran" \
	    "exec --timeout=0.3 backup -- touch $D/ran" \
	    "--timeout 300ms exec backup -- touch $D/ran" \
	    "--timeout=0.3 exec -q backup -- touch $D/ran" \
	    "lock --timeout 300ms backup" "--timeout 0.3 lock backup"; do
		t0=$(now_ms)
		# shellcheck disable=SC2086
		run -75 --separate-stderr tl $words
		t1=$(now_ms)
		echo "$words: gave up after $((t1 - t0)) ms" >&3
		# It waited, and not for the holder's 60 s lease.
		[ $((t1 - t0)) -ge 300 ]
		[ $((t1 - t0)) -lt 30000 ]
		assert_output ''
		[[ $words == *-q* ]] || [[ $stderr == *"backup"* ]]
		[[ $stderr != *"reply-timeout"* ]]
	done
	[ ! -e "$D/ran" ]
	# A later -n or -w is the one in force, as a later -w is.
	t0=$(now_ms)
	run -75 tl --timeout 1h exec -n backup -- true
	run -75 tl lock --timeout 1h -w 0.2 backup
	[ $(($(now_ms) - t0)) -lt 30000 ]
	# -E changes its status too.
	run -3 tl --timeout 0.2 exec -E 3 -q backup -- true
}

@test "a waiter is woken by pub/sub at the holder's unlock, not at the end of its lease" {
	tok=$(rl lock -t 60s x)
	rl lock -w 60s x >"$BATS_TEST_TMPDIR/w" 3>&- &
	wpid=$!
	wait_for 5 has_subscribers x 1
	before=$(server_ms)
	rl unlock --owner "$tok" x
	reap "$wpid"
	wtok=$(cat "$BATS_TEST_TMPDIR/w")
	[ "$(rcli hget x "$wtok")" = 1 ]
	since=$(rl status --json x | jq -r .since_ms)
	echo "acquired $((since - before)) ms after unlock started" >&3
	# The holder's lease had about 60 s left.
	[ $((since - before)) -lt 2000 ]
}

@test "a waiter on a lock that expires acquires at the expiry, timed by the lease it was told" {
	# Nothing is published when a lease runs out: only the waiter's own
	# timer on the lease can wake it before its 60 s --wait ends.
	rl lock -t 3s x >/dev/null
	expiry=$(($(rl status --json x | jq -r .since_ms) + 3000))
	rl lock -w 60s x >/dev/null 3>&- &
	wpid=$!
	wait_for 5 has_subscribers x 1
	[ "$(server_ms)" -lt "$expiry" ]	# it waited
	reap "$wpid"
	since=$(rl status --json x | jq -r .since_ms)
	echo "acquired $((since - expiry)) ms after the expiry" >&3
	[ "$since" -ge "$expiry" ]
	[ $((since - expiry)) -lt 1000 ]
}

@test "waiting is pushed: no retries while the holder keeps the lock" {
	rl lock -t 5s x >/dev/null
	# The waiter refreshes its place in the room every third of
	# --waiter-timeout (it is the room's listener): not within these 2 s.
	rl lock -w 2s --waiter-timeout 30s x 3>&- &
	wpid=$!
	wait_for 5 has_subscribers x 1
	rcli config resetstat >/dev/null
	status=0
	reap "$wpid" || status=$?
	[ "$status" -eq 75 ]
	# After subscribing: one attempt, then none until --wait ran out, one
	# last try, and its leave from the waiting room. A polling client
	# would have tried every few ms.
	calls=$(commandstats | grep -o 'evalsha=[0-9]*' | cut -d= -f2)
	[ "$calls" -le 3 ]
}

@test "re-entry: the same owner holds twice, releases twice, then 0 is published" {
	tok=$(rl lock x)
	run -0 rl lock --owner "$tok" x
	assert_output "$tok"
	[ "$(rcli hget x "$tok")" = 2 ]
	# Re-entry through what an exec above holds (REDLOCK_HELD), as a
	# nested lock inside exec does; REDLOCK_OWNER is not read for it.
	REDLOCK_HELD="x=$tok" run -0 rl lock -n x
	assert_output "$tok"
	[ "$(rcli hget x "$tok")" = 3 ]
	rl unlock --owner "$tok" x
	[ "$(rcli hget x "$tok")" = 2 ]
	# A name an exec above holds is given back only with --owner.
	REDLOCK_HELD="x=$tok" run -64 --separate-stderr rl unlock x
	assert_equal "$stderr" "redlock: x is held by a redlock exec above this process (owner $tok), which releases it when its COMMAND exits; nothing was changed: to release that hold now, give --owner $tok"
	[ "$(rcli hget x "$tok")" = 2 ]
	REDLOCK_HELD="x=$tok" rl unlock --owner "$tok" x
	[ "$(rcli hget x "$tok")" = 1 ]
	rl lock -n --owner "$tok" x >/dev/null
	[ "$(rcli hget x "$tok")" = 2 ]
	REDLOCK_OWNER=$tok rl unlock x
	[ "$(rcli hget x "$tok")" = 1 ]
	timeout 10 redis-cli -p "$R_PORT" subscribe 'redisson_lock__channel:{x}' \
	    >"$BATS_TEST_TMPDIR/sub" 3>&- &
	sub=$!
	wait_for 5 has_subscribers x 1
	rl unlock --owner "$tok" x
	key_gone x
	key_gone 'redlock_holder:{x}'
	wait_for 5 grep -q '^message$' "$BATS_TEST_TMPDIR/sub"
	run tail -n 1 "$BATS_TEST_TMPDIR/sub"
	assert_output 0
	# By its pid: job %1 is bats' timer for BATS_TEST_TIMEOUT, whose
	# orphaned sleep held bats' output open for 300 s after the last test.
	kill_ours TERM "$sub"
}

@test "unlock with a wrong token exits 1 and leaves the lock alone" {
	tok=$(rl lock x)
	run -1 --separate-stderr rl unlock --owner "00000000-0000-4000-8000-000000000000:1" x
	[[ $stderr == *"x is not held by that owner (another owner holds it)"* ]]
	[ "$(rcli hget x "$tok")" = 1 ]
	[ "$(rcli exists 'redlock_holder:{x}')" = 1 ]
}

@test "after A's lease expired and B took the lock, A's unlock exits 1" {
	a=$(rl lock -t 100ms x)
	b=$(rl lock -w 5s x)
	run -1 --separate-stderr rl unlock --owner "$a" x
	[ "$(rcli hget x "$b")" = 1 ]
	[ "$(rcli hexists x "$a")" = 0 ]
	rl unlock --owner "$b" x
	run -1 --separate-stderr rl unlock --owner "$b" x
	[[ $stderr == *"it is free"* ]]
}

@test "unlock --force deletes whoever holds it and wakes a waiter" {
	rl lock x >/dev/null
	rl lock -w 10s x >"$BATS_TEST_TMPDIR/w" 3>&- &
	wpid=$!
	wait_for 5 has_subscribers x 1
	run -0 rl unlock --force x
	reap "$wpid"
	[ "$(rcli hget x "$(cat "$BATS_TEST_TMPDIR/w")")" = 1 ]
	rl unlock --force x
	run -1 --separate-stderr rl unlock --force x
	[[ $stderr == *"x was not held"* ]]
}

@test "fencing tokens strictly increase over 200 acquisitions by 4 processes and after FLUSHALL" {
	log=$BATS_TEST_TMPDIR/fences
	# -w 120s: plain waiters are not served in order, and beside two busy
	# loops one of the four waited out 30 s while the others took turns.
	worker() {
		for _ in $(seq 1 50); do
			tok=$(rl lock -w 120s f) || return 1
			rl status --json f | jq -r .fence >>"$log"
			rl unlock --owner "$tok" f || return 1
		done
	}
	worker 3>&- & p1=$!
	worker 3>&- & p2=$!
	worker 3>&- & p3=$!
	worker 3>&- & p4=$!
	reap $p1 && reap $p2 && reap $p3 && reap $p4
	[ "$(wc -l <"$log")" -eq 200 ]
	sort -n -c -u "$log"	# already strictly increasing, in file order
	max=$(tail -n 1 "$log")
	rcli flushall >/dev/null
	tok=$(rl lock f)
	next=$(rl status --json f | jq -r .fence)
	[ "$next" -gt "$max" ]
}

@test "a re-entry keeps the fencing token; a fresh acquisition takes the next" {
	tok=$(rl lock x)
	f1=$(rl status --json x | jq -r .fence)
	rl lock --owner "$tok" x >/dev/null
	[ "$(rl status --json x | jq -r .fence)" = "$f1" ]
	run -0 --separate-stderr rl lock -v --owner "$tok" x
	[[ $stderr == *"re-entered x (holds 3, fence $f1)"* ]]
	rl unlock --force x
	rl lock x >/dev/null
	# The next: above f1 and the server's clock in microseconds.
	[ "$(rl status --json x | jq -r .fence)" -gt "$f1" ]
}

@test "a key of another type is never touched: lock, unlock, status exit 65" {
	rcli set x foo >/dev/null
	run -65 --separate-stderr rl lock x
	[[ $stderr == "redlock: x is not a lock: key x holds a string; nothing was changed"* ]]
	run -65 --separate-stderr rl lock -n x
	run -65 --separate-stderr rl unlock --owner t x
	run -65 --separate-stderr rl unlock --force x
	run -65 --separate-stderr rl status x
	run -65 --separate-stderr rl status --json x
	[ "$(rcli get x)" = foo ]
	[ "$(rcli dbsize)" = 1 ]
	rcli del x >/dev/null
	rcli lpush 'redisson_lock_token:{y}' 1 >/dev/null
	run -65 --separate-stderr rl lock y
	[ "$(rcli exists y)" = 0 ]
	rcli rpush x a >/dev/null
	rcli del 'redisson_lock_token:{y}' >/dev/null
	run -65 --separate-stderr rl lock x
	[ "$(rcli lrange x 0 -1)" = a ]
}

@test "status exits 65 when the fair queue, its deadlines or its waiters' key has another type" {
	tok=$(rl lock x)
	for key in 'redisson_lock_queue:{x}' 'redisson_lock_timeout:{x}' 'redlock_waiter:{x}'; do
		rcli set "$key" foo >/dev/null
		run -65 --separate-stderr rl status x
		[[ $stderr == "redlock: x is not a lock: key $key holds a string; nothing was changed"* ]]
		run -65 --separate-stderr rl status --json x
		[ "$(rcli get "$key")" = foo ]
		rcli del "$key" >/dev/null
	done
	run -0 rl status x
}

@test "status: exit 0 with every field when held, 1 when free; --json is valid" {
	run -1 --separate-stderr rl status x
	assert_output 'x: free'
	run -1 --separate-stderr rl status --json x
	echo "$output" | jq -e '.name == "x" and .held == false and .waiting == 0'
	tok=$(rl lock -t 20s x)
	run -0 --separate-stderr rl status x
	assert_line --index 0 'x: held'
	for f in owner host pid user command since holds lease fence mode waiting; do
		assert_line --regexp "^  $f +[^ ]"
	done
	assert_line "  owner    $tok"
	assert_line "  host     $(hostname)"
	assert_line "  holds    1"
	run -0 --separate-stderr rl status --json x
	echo "$output" | jq -e --arg t "$tok" --arg h "$(hostname)" --arg u "$(id -un)" '
	    .name == "x" and .held == true and .owner == $t and .host == $h
	    and .user == $u and (.pid | type) == "number" and (.cmd | type) == "string"
	    and (.since_ms | type) == "number" and .held_ms >= 0 and .holds == 1
	    and .lease_ms > 10000 and .lease_ms <= 20000 and (.fence | type) == "number"
	    and .mode == "exclusive" and .waiting == 0'
}

@test "status without NAME lists every held lock (SCAN), JSON array too" {
	run -1 --separate-stderr rl status
	assert_output ''
	run -1 --separate-stderr rl status --json
	assert_output '[]'
	rl lock a >/dev/null
	rl lock 'b{c}' >/dev/null
	rl lock 'odd
name' >/dev/null
	run -0 --separate-stderr rl status
	assert_line --regexp '^a: held by '
	assert_line --regexp '^b\{c\}: held by '
	assert_line --regexp '^odd\\x0aname: held by '
	run -0 --separate-stderr rl status --json
	echo "$output" | jq -e 'length == 3 and (map(.name) | sort) == ["a", "b{c}", "odd\nname"]'
	[ "$(rcli exists 'redlock_holder:b{c}')" = 1 ]
}

@test "status reads a lock held by a Redisson client (no metadata)" {
	rcli hset x 'b5c3a1f2-0000-4000-8000-000000000001:57' 1 >/dev/null
	rcli pexpire x 30000 >/dev/null
	run -0 --separate-stderr rl status --json x
	echo "$output" | jq -e '.held and .owner == "b5c3a1f2-0000-4000-8000-000000000001:57" and .host == null and .fence == null'
	run -75 --separate-stderr rl lock -n x
	[[ $stderr == *"held by owner b5c3a1f2-0000-4000-8000-000000000001:57"* ]]
}

# Redisson's other kinds, written as Redisson's scripts leave them
# (RedissonReadLock, RedissonWriteLock, RedissonSemaphore,
# RedissonPermitExpirableSemaphore); owners are UUID:threadId.
A=b5c3a1f2-0000-4000-8000-000000000001
B=0c0ffee0-0000-4000-8000-000000000002
C=5eed5eed-0000-4000-8000-000000000003

# snapshot: every key with its type, a digest of its value (DUMP) and its
# expiry (PEXPIRETIME: absolute, so it does not tick away): equal before
# and after a command that changed nothing.
snapshot() {
	local k
	rcli --scan | LC_ALL=C sort | while IFS= read -r k; do
		printf '%s %s %s %s\n' "$k" "$(rcli type "$k")" \
		    "$(rcli dump "$k" | sha1sum | cut -d' ' -f1)" \
		    "$(rcli pexpiretime "$k")"
	done
}

# iso MS: MS since the epoch as status prints it, 2026-11-22T04:30:00.123Z.
iso() { echo "$(date -u -d "@$(($1 / 1000))" +%Y-%m-%dT%H:%M:%S).$(printf %03d $(($1 % 1000)))Z"; }

@test "status shows a Redisson read lock: mode read, each reader with its holds and lease, exit 0, nothing changed" {
	# A read twice, B once, C once with its lease key gone (a dead reader).
	rcli hset rw mode read "$A:57" 2 "$B:12" 1 "$C:3" 1 >/dev/null
	rcli pexpire rw 60000 >/dev/null
	rcli set "{rw}:$A:57:rwlock_timeout:1" 1 px 20000 >/dev/null
	rcli set "{rw}:$A:57:rwlock_timeout:2" 1 px 60000 >/dev/null
	rcli set "{rw}:$B:12:rwlock_timeout:1" 1 px 40000 >/dev/null
	before=$(snapshot)
	run -0 --separate-stderr rl status rw
	assert_equal "$stderr" ''
	assert_line --index 0 'rw: held'
	assert_line --index 1 '  mode     read (Redisson read-write lock)'
	# Readers by owner; each with the longest lease of its read holds.
	assert_line --index 2 --regexp "^  reader   $B:12 \(1 hold, lease (3[0-9]|40)\.[0-9]s left\)\$"
	assert_line --index 3 "  reader   $C:3 (1 hold, no lease left)"
	assert_line --index 4 --regexp "^  reader   $A:57 \(2 holds, lease (1m00s|5[0-9]\.[0-9]s) left\)\$"
	assert_line --index 5 '  holds    4'
	assert_line --index 6 --regexp '^  lease    .* left$'
	assert_line --index 7 '  waiting  0'
	refute_line --partial 'owner'
	run -0 --separate-stderr rl status --json rw
	echo "$output" | jq -e --arg a "$A:57" --arg b "$B:12" --arg c "$C:3" '
	    .held and .kind == "rwlock" and .mode == "read" and .owner == null
	    and .holds == 4 and .lease_ms > 40000 and .fence == null
	    and (.readers | map(.owner)) == [$b, $c, $a]
	    and (.readers | map(.holds)) == [1, 1, 2]
	    and .readers[0].lease_ms > 30000 and .readers[0].lease_ms <= 40000
	    and .readers[1].lease_ms == null
	    and .readers[2].lease_ms > 40000 and .waiting == 0'
	[ "$(snapshot)" = "$before" ]
	# One script call reads it all.
	run -0 toplevel rl status rw
	assert_output $'HELLO\nEVALSHA'
}

@test "status shows a Redisson write lock: mode write, the writer and its holds, its own read holds, exit 0" {
	# A holds the write lock twice, and took the read lock under it once.
	rcli hset w mode write "$A:57:write" 2 "$A:57" 1 >/dev/null
	rcli pexpire w 30000 >/dev/null
	rcli set "{w}:$A:57:rwlock_timeout:1" 1 px 30000 >/dev/null
	before=$(snapshot)
	run -0 --separate-stderr rl status w
	assert_equal "$stderr" ''
	assert_line --index 0 'w: held'
	assert_line "  owner    $A:57"
	assert_line '  holds    2'
	assert_line '  fence    -'
	assert_line '  mode     write (Redisson read-write lock)'
	assert_line --regexp "^  reader   $A:57 \(1 hold, lease [0-9.]+s left\)\$"
	refute_line --partial 'exclusive'
	run -0 --separate-stderr rl status --json w
	echo "$output" | jq -e --arg a "$A:57" '
	    .held and .kind == "rwlock" and .mode == "write" and .owner == $a
	    and .holds == 2 and .lease_ms > 20000 and .host == null
	    and .readers == [{"owner": $a, "holds": 1, "lease_ms": .readers[0].lease_ms, "host": null, "pid": null, "user": null, "cmd": null, "running": null, "since_ms": null, "fence": null, "finished": false, "held_until_ms": null}]
	    and .readers[0].lease_ms > 20000'
	[ "$(snapshot)" = "$before" ]
}

@test "status shows a Redisson semaphore with its free permits: free (exit 1) when none is taken, nothing changed" {
	rcli set s 3 >/dev/null
	before=$(snapshot)
	run -1 --separate-stderr rl status s
	assert_output 's: a semaphore: 0 permits taken, 3 free'
	assert_equal "$stderr" ''
	run -1 --separate-stderr rl status --json s
	echo "$output" | jq -e '. == {"name": "s", "kind": "semaphore", "held": false, "permits_free": 3, "permits_taken": 0, "waiting": 0}'
	[ "$(snapshot)" = "$before" ]
	# Not listed without NAME: it has no holder record.
	run -1 --separate-stderr rl status
	assert_output ''
	# A string that is not a number is no semaphore: only its type.
	rcli set t x3 >/dev/null
	run -65 --separate-stderr rl status --json t
	assert_output ''
	assert_equal "$stderr" 'redlock: t is not a lock: key t holds a string; nothing was changed, choose another name'
}

@test "status lists the permits taken from a Redisson permit-expirable semaphore: held (exit 0), nothing changed" {
	now=$(server_ms)
	exp=$((now + 60000))
	gone=$((now - 5000))
	# Permit ids are 16 random bytes; Redisson shows them in hex.
	rcli set p 1 >/dev/null
	rcli zadd '{p}:timeout' "$exp" $'\x8c\x1e\xa1\xb2\xc3\xd4\xe5\xf6\x07\x18\x29\x3a\x4b\x5c\x6d\x7e' \
	    922337203685477 $'\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10' >/dev/null
	before=$(snapshot)
	run -0 --separate-stderr rl status p
	assert_line --index 0 'p: a semaphore: 2 permits taken, 1 free'
	assert_line --index 1 --regexp "^  permit   8c1ea1b2c3d4e5f60718293a4b5c6d7e: lease ([0-9.]+s|1m00s) left\$"
	assert_line --index 2 '  permit   0102030405060708090a0b0c0d0e0f10: no expiry'
	assert_equal "${#lines[@]}" 3
	assert_equal "$stderr" ''
	run -0 --separate-stderr rl status --json p
	echo "$output" | jq -e --argjson exp "$exp" '
	    .name == "p" and .kind == "expirable_semaphore"
	    and .permits_free == 1 and .permits_taken == 2
	    and .permits[0].id == "8c1ea1b2c3d4e5f60718293a4b5c6d7e"
	    and .permits[0].expires_ms == $exp and .permits[0].host == null
	    and .permits[0].lease_ms > 50000 and .permits[0].lease_ms <= 60000
	    and .permits[1].id == "0102030405060708090a0b0c0d0e0f10"
	    and .permits[1].expires_ms == null and .permits[1].lease_ms == null'
	[ "$(snapshot)" = "$before" ]
	# A permit past its expiry stays until Redisson's next call gives it
	# back; status says so and leaves it there.
	rcli zadd '{p}:timeout' "$gone" deadbeefdeadbeefdeadbeefdeadbeef >/dev/null
	before=$(snapshot)
	run -0 --separate-stderr rl status p
	assert_line --index 0 'p: a semaphore: 3 permits taken, 1 free'
	assert_line --index 1 --regexp "^  permit   deadbeefdeadbeefdeadbeefdeadbeef: expired $(iso "$gone") \([0-9.]+s ago\), not yet given back\$"
	run -0 --separate-stderr rl status --json p
	echo "$output" | jq -e '.permits[0].lease_ms <= -5000 and .permits_taken == 3'
	[ "$(snapshot)" = "$before" ]
	[ "$(rcli zcard '{p}:timeout')" = 3 ]
	[ "$(rcli get p)" = 1 ]
	# The 100 that expire first are listed, and how many more there are.
	rcli zadd '{p}:timeout' $(for i in $(seq 1 100); do echo "$((exp + i)) $(printf %032x "$i")"; done) >/dev/null
	run -0 --separate-stderr rl status p
	assert_line --index 0 'p: a semaphore: 103 permits taken, 1 free'
	assert_line --index 101 '  permit   ... and 3 more'
	run -0 --separate-stderr rl status --json p
	echo "$output" | jq -e '.permits_taken == 103 and (.permits | length) == 100'
}

@test "status finds Redisson's read hold leases and permits of a name with braces under NAME:..." {
	rcli hset 'a{b}' mode read "$A:57" 1 >/dev/null
	rcli pexpire 'a{b}' 30000 >/dev/null
	rcli set "a{b}:$A:57:rwlock_timeout:1" 1 px 30000 >/dev/null
	run -0 --separate-stderr rl status --json 'a{b}'
	echo "$output" | jq -e '.mode == "read" and .readers[0].lease_ms > 20000'
	rcli set 'c{d}' 0 >/dev/null
	rcli zadd 'c{d}:timeout' 922337203685477 $'\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6\xf5\xf4\xf3\xf2\xf1\xf0' >/dev/null
	run -0 --separate-stderr rl status --json 'c{d}'
	echo "$output" | jq -e '.kind == "expirable_semaphore" and .permits_taken == 1
	    and .permits[0].id == "fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0"'
}

@test "control characters in names and metadata are escaped on output" {
	rl lock $'a\033[2Jb' >/dev/null
	run -0 --separate-stderr rl status $'a\033[2Jb'
	assert_line --index 0 'a\x1b[2Jb: held'
	run -75 --separate-stderr rl lock -n $'a\033[2Jb'
	[[ $stderr != *$'\033'* ]]
}

@test "--json: a name or token that is not UTF-8 also comes whole in base64, which finds the same lock" {
	# Latin-1's e acute, and two bytes that UTF-8 never has.
	n=$'caf\xe9-\xff\xfe'
	t=$'deploy-\xe9'
	rl lock --owner "$t" -t 30s "$n" >/dev/null
	run -0 --separate-stderr rl status --json
	echo "$output" | jq -e 'length == 1 and .[0].name == "caf\ufffd-\ufffd\ufffd"
	    and .[0].owner == "deploy-\ufffd"'
	name=$(echo "$output" | jq -r '.[0].name_b64' | base64 -d)
	owner=$(echo "$output" | jq -r '.[0].owner_b64' | base64 -d)
	[ "$name" = "$n" ]
	[ "$owner" = "$t" ]
	# The bytes had back find the lock, for status, queue and unlock.
	b=$(printf %s "$n" | base64)
	o=$(printf %s "$t" | base64)
	run -0 --separate-stderr rl status --json "$name"
	echo "$output" | jq -e --arg b "$b" --arg o "$o" '.held and .name_b64 == $b
	    and .owner_b64 == $o'
	run -0 --separate-stderr rl queue --json "$name"
	echo "$output" | jq -e --arg b "$b" --arg o "$o" '.held and .name_b64 == $b
	    and .holder.owner_b64 == $o'
	run -0 --separate-stderr rl unlock --owner "$owner" "$name"
	[ "$(rcli exists "$n")" = 0 ]
	# UTF-8 is given as it is, without _b64: one recipe serves both.
	rl lock --owner 'ä€' 'café' >/dev/null
	run -0 --separate-stderr rl status --json
	echo "$output" | jq -e '.[0] | .name == "café" and .owner == "ä€"
	    and (has("name_b64") | not) and (has("owner_b64") | not)'
	name=$(echo "$output" | jq -r '.[0] | .name_b64 // (.name | @base64)' | base64 -d)
	[ "$name" = café ]
}

@test "after SCRIPT FLUSH the next lock and unlock still work" {
	tok=$(rl lock x)
	rcli script flush >/dev/null
	run -0 rl unlock --owner "$tok" x
	key_gone x
	rcli script flush >/dev/null
	run -0 rl lock x
}

@test "unlock finds the kind in one status call: one script call for a plain lock" {
	a=00000000-0000-4000-8000-00000000000a:1
	b=00000000-0000-4000-8000-00000000000b:1
	# calls OWNER LOCK-OPTION...: the script calls of unlock --owner OWNER
	# of k, locked by A with LOCK-OPTION...; run twice, the first loading
	# the scripts.
	calls() {
		local owner=$1 i
		shift
		for i in 1 2; do
			rcli flushall >/dev/null
			rl lock --owner "$a" "$@" k >/dev/null
			rcli config resetstat >/dev/null
			rl unlock --owner "$owner" k >/dev/null 2>&1 || true
		done
		commandstats | grep -o 'evalsha=[0-9]*' | cut -d= -f2
	}
	assert_equal "$(calls "$a")" 1
	key_gone k
	assert_equal "$(calls "$b")" 2
	assert_equal "$(calls "$a" --limit 2)" 2
	assert_equal "$(calls "$a" --write)" 3
	key_gone k
	assert_equal "$(calls "$a" -s)" 3
	key_gone k
	assert_equal "$(calls "$b" -s)" 2
	assert_equal "$(calls "$b" --write)" 2
}

@test "an uncontended lock and unlock each cost one script call" {
	tok=$(rl lock warm) && rl unlock --owner "$tok" warm
	rcli config resetstat >/dev/null
	tok=$(rl lock x)
	[[ " $(commandstats)" == *" evalsha=1 "* ]]
	[[ "$(commandstats)" != *eval=* ]]
	rcli config resetstat >/dev/null
	rl unlock --owner "$tok" x
	[[ " $(commandstats)" == *" evalsha=1 "* ]]
	# What clients sent, without what the scripts ran: one EVALSHA each,
	# behind the HELLO that tells whether channels are sharded (and,
	# to acquire, the INFO memory that tells whether the server may
	# evict a lock), whose replies nothing waits for.
	run -0 toplevel rl lock y
	assert_output $'HELLO\nINFO\nEVALSHA'
	tok=$(rl lock z)
	run -0 toplevel rl unlock --owner "$tok" z
	assert_output $'HELLO\nEVALSHA'
}

@test "names are arguments, never script text" {
	for n in "x') return 1 --" '"; redis.call("FLUSHALL") --' '*' '{' '}' '{}' ' '; do
		rcli set canary 1 >/dev/null
		tok=$(rl lock "$n")
		[ "$(rcli hget "$n" "$tok")" = 1 ]
		rl unlock --owner "$tok" "$n"
		[ "$(rcli exists "$n")" = 0 ]
		[ "$(rcli get canary)" = 1 ]
	done
}

# lock_into FILE ARGS...: lock with stdout on FILE; lock_closed ARGS...:
# with stdout closed.
lock_into() { local f=$1; shift; rl lock "$@" >"$f"; }
lock_closed() { rl lock "$@" >&-; }
# Processes whose command line names the watched process $spid: the
# keepalive watchdogs started with --pid $spid.
keepalives() { pgrep -f -- "--pid $spid"; }
no_keepalive() { ! keepalives >/dev/null; }

@test "lock --keepalive into a full stdout exits 70, gives the lock back and leaves no watchdog" {
	[ -w /dev/full ] || skip "no /dev/full"
	sleep 60 3>&- &
	spid=$!
	run -70 --separate-stderr lock_into /dev/full --keepalive -t 30s --pid "$spid" k
	assert_output ''
	assert_equal "$stderr" "redlock: cannot write to standard output: No space left on device"
	[ "$(rcli exists k)" = 0 ]
	[ "$(rcli exists 'redlock_holder:{k}')" = 0 ]
	run -1 keepalives
	# Without --keepalive as well.
	run -70 --separate-stderr lock_into /dev/full -t 30s k
	[ "$(rcli exists k)" = 0 ]
	# The same look finds a watchdog that was started, and it ends with
	# the process it watches.
	tok=$(rl lock --keepalive -t 30s --pid "$spid" k)
	[ "$(rcli hget k "$tok")" = 1 ]
	run -0 keepalives
	kill "$spid"
	wait_for 10 no_keepalive
	wait_for 5 key_gone k
}

@test "lock with stdout closed exits 70 before it touches Redis, with and without --keepalive" {
	sleep 60 3>&- &
	spid=$!
	rcli config resetstat >/dev/null
	run -70 --separate-stderr lock_closed --keepalive -t 30s --pid "$spid" k
	assert_output ''
	assert_equal "$stderr" 'redlock: standard output is closed: nowhere to print the owner token; run lock with it open, as in tok=$(redlock lock NAME)'
	run -70 --separate-stderr lock_closed -t 30s k
	assert_equal "$stderr" 'redlock: standard output is closed: nowhere to print the owner token; run lock with it open, as in tok=$(redlock lock NAME)'
	# Nothing was sent: no lock, no fencing counter, no script run.
	assert_equal "$(commandstats)" ''
	[ "$(rcli dbsize)" = 0 ]
	run -1 keepalives
}

@test "a closed stderr or stdout never carries messages or output into the Redis connection" {
	rcli set w foo >/dev/null
	rl lock -t 30s x >/dev/null
	rcli config resetstat >/dev/null
	# The connection would be descriptor 2: /dev/null is there, and the
	# server sees no stray words ("redlock: w is not a lock...").
	run -65 --separate-stderr eval 'rl status w 2>&-'
	assert_output ''
	run -0 rcli info errorstats
	refute_output --partial errorstat_ERR
	# Descriptor 1: status answers by its exit status.
	run -0 --separate-stderr eval 'rl status x >&-'
	assert_equal "$stderr" ''
	run -0 --separate-stderr eval 'rl status >&- 2>&-'
	run -0 rcli info errorstats
	refute_output --partial errorstat_ERR
	[ "$(rcli get w)" = foo ]
}

@test "status without NAME lists x and {x}, which share one holder key" {
	tok=$(rl lock '{x}')
	run -0 --separate-stderr rl status
	assert_line --regexp '^\{x\}: held by '
	[ "${#lines[@]}" = 1 ]
	rl lock x >/dev/null
	[ "$(rcli keys 'redlock_holder:*')" = 'redlock_holder:{x}' ]
	run -0 --separate-stderr rl status
	assert_line --regexp '^x: held by '
	assert_line --regexp '^\{x\}: held by '
	[ "${#lines[@]}" = 2 ]
	run -0 --separate-stderr rl status --json
	echo "$output" | jq -e '(map(.name) | sort) == ["x", "{x}"] and all(.held)'
	# Only the one that is held: x alone.
	rl unlock --owner "$tok" '{x}'
	run -0 --separate-stderr rl status
	assert_output --regexp '^x: held by '
	[ "${#lines[@]}" = 1 ]
}

@test "status without NAME and nothing held: \"no locks held\" on stderr, standard output empty, exit 1" {
	run -1 --separate-stderr rl status
	assert_output ''
	assert_equal "$stderr" 'no locks held'
	# JSON is an empty array; the line is for whoever reads stderr.
	run -1 --separate-stderr rl status --json
	assert_output '[]'
	# On a terminal too, where nothing printed would look like a hang.
	command -v script >/dev/null || skip "script (util-linux) is needed for a terminal"
	run -0 script -qec "'$RL' -u redis://127.0.0.1:$R_PORT status; echo \"exit \$?\"" /dev/null
	assert_output $'no locks held\r\nexit 1\r'
	# Something held: listed as before, no such line.
	rl lock x >/dev/null
	run -0 --separate-stderr rl status
	assert_output --regexp '^x: held by '
	assert_equal "$stderr" ''
}

@test "a Redisson read lock: unlock with a reader's token gives back one read hold as Redisson's would, another token changes nothing; a busy attempt names a reader, not the mode field" {
	rcli hset rw mode read "$A:57" 2 >/dev/null
	rcli pexpire rw 60000 >/dev/null
	rcli set "{rw}:$A:57:rwlock_timeout:1" 1 px 60000 >/dev/null
	rcli set "{rw}:$A:57:rwlock_timeout:2" 1 px 60000 >/dev/null
	before=$(snapshot)
	run -1 --separate-stderr rl unlock --owner "$A:58" rw
	[ "$(snapshot)" = "$before" ]
	run -0 --separate-stderr rl unlock --owner "$A:57" rw
	[ "$(rcli hget rw "$A:57")" = 1 ]
	[ "$(rcli hget rw mode)" = read ]
	key_gone "{rw}:$A:57:rwlock_timeout:2"
	[ "$(rcli exists "{rw}:$A:57:rwlock_timeout:1")" = 1 ]
	before=$(snapshot)
	run -75 --separate-stderr rl lock -n rw
	[[ $stderr == *"held by owner $A:57,"* ]]
	[[ $stderr != *"owner mode"* ]]
	# Nothing changed but the history, which records the busy skip.
	[ "$(snapshot | grep -v '^redlock_log:')" = "$(grep -v '^redlock_log:' <<<"$before")" ]
	[ "$(rl log --json -n 1 rw | jq -r .event)" = busy ]
}
