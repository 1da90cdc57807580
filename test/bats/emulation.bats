#!/usr/bin/env bats
# test/bats/redisson.py checked against what Redisson 4.7.0 does, where
# the emulation once differed: its scripts are Redisson's text, a write
# release of a lock that is gone answers nil, the unlock latch lives as
# long as Redisson's defaults make it, scripts go as EVALSHA, a read-unlock
# message is lost on a client that is not waiting; and its RFencedLock
# hands out tokens from the counter redlock's fencing tokens come from,
# excludes a redlock holder and is excluded by one.

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	rcli script flush >/dev/null
	D=$BATS_TEST_TMPDIR
	: >"$D/events"
	bg=()
}
teardown() { stop_bg; stop_strays; }

RSN=$BATS_TEST_DIRNAME/redisson.py
rsn() { python3 "$RSN" --port "$R_PORT" "$@"; }
rsn_bg() {
	python3 "$RSN" --port "$R_PORT" "$@" >>"$D/events" 2>>"$D/err" 3>&- &
	bg+=($!)
}
subscribed() { [ "$(grep -c '^subscribed ' "$D/events")" -ge "$1" ]; }
numsub() { [ "$(rcli pubsub numsub "$1" | sed -n 2p)" -ge 1 ]; }

# monitor: what the server runs, scripts' commands too, in $D/monitor
# until monitor_end.
monitor() {
	redis-cli -p "$R_PORT" monitor >"$D/monitor" 2>&1 3>&- &
	mon=$!
	bg+=("$mon")
	wait_for 5 eval 'rcli client list | grep -q "cmd=monitor"'
}
monitor_end() {
	rcli echo monitor-end >/dev/null
	wait_for 5 grep -q monitor-end "$D/monitor"
	kill "$mon"
	wait "$mon" 2>/dev/null || :
}

# The SHA-1 of each script, from the text of Redisson's Java source at
# tag redisson-4.7.0 (0c286e86eb81): a script edited here is no longer
# Redisson's (check it with "redisson.py check-scripts REDISSON_TREE").
@test "the scripts are still Redisson 4.7.0's, byte for byte" {
	run python3 -c '
import hashlib, importlib.util, sys
spec = importlib.util.spec_from_file_location("rsn", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
for name, java, method in m.SCRIPTS:
    print(name, hashlib.sha1(getattr(m, name).encode()).hexdigest())' "$RSN"
	assert_success
	assert_output - <<'EOF'
LOCK 149c5a8bf18676fd99e9e6e24923bd64d9b62f94
UNLOCK 6866459238a13a701d42f4971f12d9f3a50e2442
LOCK_RENEW 6a3d31570dc6f4b0bd32bcdc8e75667747c6f635
FAIR_LOCK 8f6ed299ffd259f0539c20f89253998c0777ea75
FAIR_GIVE_UP d1ddef65ad80886b5d36e023c99930044ddd653a
FAIR_UNLOCK 367f80bd2e300e411fb0936d9b601e5bcb3fd4b6
FENCED_LOCK 49babb5a1e6a0c5f188c2ae62b93b51cdfd63e45
READ_LOCK 95553a6ff11176c18e71344e89d116b06fd6f753
READ_UNLOCK 6e1b10e11ac0a3ed8e902562ecd32ce01b553039
READ_RENEW 38d2b478dfbe264ab67c221b7e4be62245f00ba0
WRITE_LOCK 6306ba3bf1f563b284bed52d305fce615c6664d9
WRITE_UNLOCK 21f5fb0f8ddfa9be5c3e0c9757c128796add75c6
SEM_ACQUIRE 992c96b09a3d8ea0b37f5dc12e5347a44d93909d
SEM_RELEASE 4ce079451bee2993ce00c8a4e205b536c6ccad67
SEM_AVAILABLE 26b3972b2c9e617556282f404cb79709d746a713
SEM_TRY_SET 241ce4e87e652b4f9b39d33cbcd7df9ee8ed906c
SEM_SET 494d8561fee0cdb033f6c28d74c052c52189a578
SEM_UPDATE_LEASE 2298b02cc67a89f2a638e47503db3675c73d77f5
EOF
}

@test "check-scripts finds a script split over literals and comments, and says when one differs" {
	j=$D/tree/redisson/src/main/java/org/redisson
	mkdir -p "$j/renewal"
	# RedissonLock.java with tryLockInnerAsync's script as Java writes it
	cat >"$j/RedissonLock.java" <<'EOF'
class RedissonLock {
    <T> RFuture<T> tryLockInnerAsync(long waitTime, long leaseTime) {
        return evalWriteSyncedNoRetryAsync(getRawName(), LongCodec.INSTANCE, command,
                "if ((redis.call('exists', KEYS[1]) == 0) " +
                            "or (redis.call('hexists', KEYS[1], ARGV[2]) == 1)) then " +
                        // a comment between the literals
                        "redis.call('hincrby', KEYS[1], ARGV[2], 1); " +
                        "redis.call('pexpire', KEYS[1], ARGV[1]); " +
                        "return nil; " +
                    "end; " +
                    "return redis.call('pttl', KEYS[1]);",
                Collections.singletonList(getRawName()), unit.toMillis(leaseTime));
    }
    String unlockInnerAsync() { return "return 1;"; }
}
EOF
	run python3 "$RSN" check-scripts "$D/tree"
	[ "$status" = 1 ]
	assert_line --regexp '^same +LOCK +RedissonLock.java tryLockInnerAsync$'
	assert_line --regexp '^DIFFERS +UNLOCK +RedissonLock.java unlockInnerAsync$'
	assert_line --regexp '^MISSING +WRITE_UNLOCK +RedissonWriteLock.java unlockInnerAsync$'
	run python3 "$RSN" check-scripts "$D/nowhere"
	[ "$status" = 2 ]
}

@test "a write release of a write lock that is gone answers nil, as Redisson's: lost, and 1 published all the same" {
	redis-cli -p "$R_PORT" subscribe 'redisson_rwlock:{x}' >"$D/sub" 2>&1 3>&- &
	bg+=($!)
	wait_for 5 numsub 'redisson_rwlock:{x}'
	run --separate-stderr rsn rwlock x unlock-write --id w:1
	[ "$status" = 3 ]
	assert_output --regexp '^lost [0-9.]+$'
	[ "$stderr" = "redisson.py: x is not held by w:1:write" ]
	# the same for a read release, which publishes 0
	run --separate-stderr rsn rwlock x unlock-read --id r:1
	[ "$status" = 3 ]
	assert_output --regexp '^lost [0-9.]+$'
	wait_for 5 eval '[ "$(grep -c "^redisson_rwlock:{x}\$" "$D/sub")" -ge 3 ]'
	# subscribe's own line, then the write release's 1, the read's 0
	run sed -n '/^message$/{n;n;p}' "$D/sub"
	assert_output $'1\n0'
	# the latch is gone, and nothing else was written
	run rcli keys '*'
	assert_output ''
}

@test "the unlock latch lives 16 to 20 s, as Redisson's defaults make it, and is deleted after the release" {
	monitor
	for i in 1 2 3 4 5; do
		rsn lock x --lease 5000 --hold 0 >/dev/null
		rsn --fair lock x --lease 5000 --hold 0 >/dev/null
		rsn rwlock x write --lease 5000 --hold 0 >/dev/null
		rsn rwlock x read --lease 5000 --hold 0 >/dev/null
	done
	monitor_end
	# "set" "redisson_unlock_latch:{x}:REQUEST" "1" "px" "MS", in a script
	sed -n 's/.*"set" "redisson_unlock_latch:{x}:\([0-9a-f]*\)" "[01]" "px" "\([0-9]*\)".*/\1 \2/p' \
	    "$D/monitor" >"$D/latches"
	[ "$(wc -l <"$D/latches")" = 20 ]
	awk 'length($1) != 32 || $2 < 16000 || $2 > 20000 { bad = 1 } END { exit bad }' "$D/latches"
	# drawn per release, not one number
	[ "$(cut -d' ' -f2 "$D/latches" | sort -u | wc -l)" -gt 1 ]
	# each one deleted by the client once the script answered
	while read -r req _; do
		grep -q "\"DEL\" \"redisson_unlock_latch:{x}:$req\"" "$D/monitor"
	done <"$D/latches"
	[ "$(rcli keys 'redisson_unlock_latch*')" = "" ]
}

@test "scripts go as EVALSHA; NOSCRIPT makes the client load the script and send it again" {
	run toplevel rsn lock x --lease 5000 --hold 0
	assert_output $'EVALSHA\nSCRIPT\nEVALSHA\nEVALSHA\nSCRIPT\nEVALSHA\nDEL'
	run toplevel rsn lock x --lease 5000 --hold 0
	assert_output $'EVALSHA\nEVALSHA\nDEL'
	# the watchdog's renewal: renewal.LockTask's script
	monitor
	rsn lock x --watchdog 600 --hold 0.5 >/dev/null
	monitor_end
	sha=$(python3 -c '
import hashlib, importlib.util, sys
spec = importlib.util.spec_from_file_location("rsn", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
print(hashlib.sha1(m.LOCK_RENEW.encode()).hexdigest())' "$RSN")
	grep -q "\"EVALSHA\" \"$sha\" \"1\" \"x\" \"600\"" "$D/monitor"
}

# A Redisson RWriteLock waits on a reader's lock; the second attempt it
# makes (after it subscribed) is held 3 s on its way to the server (a
# proxy), and a message is published meanwhile: it came while the client
# was trying, not waiting.
held_attempt() {
	rsn rwlock x read --lease 30000 --keep --id r:1 >/dev/null
	# load the write script, so that the attempts are the 6-argument
	# EVALSHAs, the first two of them the ones below
	rsn rwlock x write --wait 0 >/dev/null || :
	start_proxy "$D/proxy" 3 --hold 6 2 "$D/forwarded" "0:$R_PORT"
	p=${proxy_ports[0]}
	bg+=("$proxy")
	python3 "$RSN" --port "$p" --label w rwlock x write --wait 10 \
	    >>"$D/events" 2>>"$D/err" 3>&- &
	w=$!
	bg+=("$w")
	wait_for 10 numsub 'redisson_rwlock:{x}'
	[ ! -e "$D/forwarded" ]	# the second attempt is still held
	rcli publish 'redisson_rwlock:{x}' "$1" >/dev/null
}

@test "a read-unlock message (1) that comes while a Redisson waiter tries is lost, as LockPubSub loses it" {
	held_attempt 1
	st=0
	reap -t 20 "$w" || st=$?
	[ "$st" = 1 ]	# --wait ran out: nothing woke it
	grep -q '^subscribed w' "$D/events"
	! grep -q '^woken w' "$D/events"
	grep -q "message b'1' on redisson_rwlock:{x} came while not waiting: lost" "$D/err"
}

@test "an unlock message (0) that comes while a Redisson waiter tries wakes its next wait at once" {
	held_attempt 0
	st=0
	reap -t 20 "$w" || st=$?
	[ "$st" = 1 ]	# the reader still holds x
	grep -q '^woken w' "$D/events"
	! grep -q 'lost' "$D/err"
}

@test "RFencedLock: every acquisition takes the next token of redisson_lock_token:{NAME}, a re-entry too" {
	run rsn fenced f --lease 30000 --keep --id a:1
	assert_output --regexp '^acquired 1 [0-9.]+$'
	run rsn fenced f --lease 30000 --keep --id a:1
	assert_output --regexp '^acquired 2 [0-9.]+$'
	[ "$(rcli hget f a:1)" = 2 ]
	[ "$(rcli get 'redisson_lock_token:{f}')" = 2 ]
	# another thread waits, and gives up without a token
	run rsn fenced f --wait 0.3 --id b:1
	[ "$status" = 1 ]
	[ "$(rcli get 'redisson_lock_token:{f}')" = 2 ]
	# released as RLock is, on RLock's channel
	run rsn unlock f --id a:1
	assert_output --regexp '^decremented '
	run rsn unlock f --id a:1
	assert_output --regexp '^released '
	[ "$(rcli exists f)" = 0 ]
	# a name with a hash tag keeps it
	run rsn fenced 'g{t}' --lease 30000 --keep
	assert_output --regexp '^acquired 1 '
	[ "$(rcli get 'redisson_lock_token:g{t}')" = 1 ]
}

@test "RFencedLock and redlock exclude each other, wake each other, and their tokens rise in turn" {
	run rsn fenced f --lease 30000 --keep --id a:1
	t1=$(echo "$output" | cut -d' ' -f2)
	# redlock is refused while the Java thread holds f
	run -75 rl exec -n f -- true
	rsn unlock f --id a:1 >/dev/null
	t2=$(rl exec f -- sh -c 'echo "$REDLOCK_FENCE"')
	[ "$t2" -gt "$t1" ]
	# a redlock holder, until the test creates $D/go (20 s at most): the
	# fenced waiter is woken by its release and gets a token above
	# redlock's
	rl exec f -- sh -c 'echo "$REDLOCK_FENCE" >"$0"
	    i=0; while [ ! -e "$1" ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done' \
	    "$D/t3" "$D/go" 2>/dev/null 3>&- &
	bg+=($!)
	wait_for 5 test -s "$D/t3"
	rsn_bg --label j fenced f --wait 30 --hold 0.2
	wait_for 20 subscribed 1
	touch "$D/go"
	wait_for 10 grep -q '^released j ' "$D/events"
	grep -q '^woken j ' "$D/events"
	t4=$(awk '$1 == "acquired" && $3 == "j" { print $2 }' "$D/events")
	t3=$(cat "$D/t3")
	echo "tokens: Redisson $t1, redlock $t2, redlock $t3, Redisson $t4" >&3
	[ "$t3" -gt "$t2" ]
	[ "$t4" -gt "$t3" ]
	# a redlock waiter behind a fenced holder is woken by its release
	rsn --label k fenced f --lease 30000 --keep --id k:1 >>"$D/events"
	rl exec -w 20s f -- sh -c 'echo "$REDLOCK_FENCE"' >"$D/t5" 2>/dev/null 3>&- &
	r=$!
	bg+=("$r")
	wait_for 10 numsub 'redisson_lock__channel:{f}'
	t0=$(now_ms)
	rsn unlock f --id k:1 >/dev/null
	reap -t 10 "$r"
	echo "redlock acquired $(($(now_ms) - t0)) ms after the fenced release" >&3
	[ $(($(now_ms) - t0)) -lt 3000 ]
	t6=$(awk '$1 == "acquired" && $3 == "k" { print $2 }' "$D/events")
	[ "$t6" -gt "$t4" ]
	[ "$(cat "$D/t5")" -gt "$t6" ]
}

@test "after the server lost its data, an RFencedLock's token 1 does not pull redlock's tokens below the ones before the loss" {
	t1=$(rl exec f -- sh -c 'echo "$REDLOCK_FENCE"')
	rcli flushall >/dev/null	# the data lost: a restart without persistence
	run rsn fenced f --hold 0
	assert_line --regexp '^acquired 1 '
	t2=$(rl exec f -- sh -c 'echo "$REDLOCK_FENCE"')
	echo "tokens: redlock $t1, after the loss Redisson 1, redlock $t2" >&3
	[ "$t2" -gt "$t1" ]
}
