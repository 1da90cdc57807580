#!/usr/bin/env bats
# The permit scripts behind --limit, run as EVAL against a real server:
# Redisson's RPermitExpirableSemaphore layout, a lease per permit on the
# server's clock, expired permits given back, and the semaphore's channel.

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
	bg=()
}
teardown() { stop_bg; stop_strays; }

LUA=$BATS_TEST_DIRNAME/../../lua
# script NAME: lua/NAME.lua as the embedder joins it: the prelude's
# part it uses, the names of its keys and arguments, the script.
script() { "$LUA/embed.sh" -p "$LUA/prelude.lua" "$LUA/$1.lua"; }
# take KEY [LIMIT] [LEASE]: permit_acquire of s for the owner whose key
# is KEY.
take() {
	rcli eval "$(script permit_acquire)" 7 s '{s}:timeout' \
	    'redlock_holder:{s}' 'redisson_lock_token:{s}' 'redisson_sc:{s}' \
	    'redlock_room:{s}' 'redlock_listener:{s}' \
	    "${3:-30000}" "$1" "${2:-3}" host 42 user cmd 5000 '' PUBLISH
}
give() {
	rcli eval "$(script permit_release)" 6 s '{s}:timeout' \
	    'redlock_holder:{s}' 'redisson_sc:{s}' 'redlock_room:{s}' \
	    'redlock_listener:{s}' "$1" PUBLISH
}
renew() {
	rcli eval "$(script permit_renew)" 2 '{s}:timeout' 'redlock_holder:{s}' \
	    "$2" "$1"
}
# id N: the key of a redlock owner token (hex digits: its UUID's 32 and
# its pid's 7) whose UUID is the number N, with pid 1; hex N: its
# permit's id, 16 bytes of the SHA-1 of that token, in hex as status
# shows it.
id() { printf '%032x%07d' "$1" 1; }
hex() {
	local u
	u=$(printf '%032x' "$1")
	printf '%s' "${u:0:8}-${u:8:4}-${u:12:4}-${u:16:4}-${u:20:12}:1" |
	    sha1sum | cut -c1-32
}
# byid CMD KEY HEX: Redis command CMD on KEY for the permit id in hex HEX
# (zscore, hget, hexists), as the bytes that are stored.
byid() {
	rcli eval "return redis.call(ARGV[1], KEYS[1], (string.gsub(ARGV[2],
	    '%x%x', function(d) return string.char(tonumber(d, 16)) end)))" \
	    1 "$2" "$1" "$3"
}

@test "three permits: three holders, the fourth told when the first expires; a release frees one and says how many are free" {
	for i in 1 2 3; do
		run -0 take "$(id $i)"
		[ "${lines[0]}" = 1 ]
	done
	[ "$(rcli get s)" = 0 ]
	[ "$(rcli zcard '{s}:timeout')" = 3 ]
	run -0 take "$(id 4)"
	[ "${lines[0]}" = 0 ]
	[ "${lines[1]}" -gt 29000 ]
	[ "${lines[1]}" -le 30000 ]
	# The permit that expires first, and its holder.
	[ "${lines[2]}" = "$(hex 1)" ]
	[ "${lines[3]}" = host ]
	[ "${lines[4]}" = 42 ]
	[ "${lines[-1]}" = 3 ]
	timeout 5 redis-cli -p "$R_PORT" subscribe 'redisson_sc:{s}' >"$D/sub" 3>&- &
	bg+=($!)
	wait_for 5 eval '[ "$(rcli pubsub numsub "redisson_sc:{s}" | sed -n 2p)" = 1 ]'
	run -0 give "$(id 2)"
	[ "${lines[0]}" = 2 ]
	wait_for 5 eval '[ "$(tail -n 1 "$D/sub")" = 1 ]'
	run -0 take "$(id 4)"
	[ "${lines[0]}" = 1 ]
	run -0 give "$(id 2)"
	assert_equal "$output" $'0\n1'
	# Each holder is recorded, with its fencing token.
	[ "$(rcli hlen 'redlock_holder:{s}')" = 3 ]
	[[ $(byid hget 'redlock_holder:{s}' "$(hex 4)") == *'"pid":42'*'"fence":'* ]]
}

@test "fencing tokens rise with each permit taken" {
	a=$(take "$(id 1)" | sed -n 2p)
	b=$(take "$(id 2)" | sed -n 2p)
	give "$(id 1)" >/dev/null
	c=$(take "$(id 3)" | sed -n 2p)
	[ "$b" -gt "$a" ]
	[ "$c" -gt "$b" ]
}

@test "an expired permit comes back to the next caller, on the server's clock; its holder can no longer renew or release it" {
	# A lease that outlives the next call (a 200 ms one did not, loaded).
	take "$(id 1)" 1 2000 >/dev/null
	run -0 take "$(id 2)" 1
	[ "${lines[0]}" = 0 ]
	sleep 2.1
	run -0 renew "$(id 1)" 30000
	[ "$output" = 0 ]
	run -0 take "$(id 2)" 1
	[ "${lines[0]}" = 1 ]
	[ "$(byid hexists 'redlock_holder:{s}' "$(hex 1)")" = 0 ]
	run -0 give "$(id 1)"
	assert_equal "$output" $'0\n1'
	[ "$(rcli get s)" = 0 ]
}

@test "a renewal extends the lease and never shortens it; taking a permit held already re-enters it, keeps its token, and takes as many releases" {
	a=$(take "$(id 1)" 3 1000 | sed -n 2p)
	run -0 renew "$(id 1)" 60000
	[ "$output" = 1 ]
	left=$(( $(byid zscore '{s}:timeout' "$(hex 1)") - $(rcli time | head -n 1)000 ))
	[ "$left" -gt 50000 ]
	renew "$(id 1)" 1000 >/dev/null
	left=$(( $(byid zscore '{s}:timeout' "$(hex 1)") - $(rcli time | head -n 1)000 ))
	[ "$left" -gt 50000 ]
	run -0 take "$(id 1)"
	[ "${lines[1]}" = "$a" ]
	[ "${lines[2]}" = 2 ]
	run -0 take "$(id 1)"
	[ "${lines[2]}" = 3 ]
	[ "$(rcli get s)" = 2 ]
	run -0 give "$(id 1)"
	assert_equal "$output" $'1\n2'
	run -0 give "$(id 1)"
	assert_equal "$output" $'1\n1'
	[ "$(rcli get s)" = 2 ]
	run -0 give "$(id 1)"
	[ "${lines[0]}" = 2 ]
	[ "$(rcli get s)" = 3 ]
	[ "$(rcli hlen 'redlock_holder:{s}')" = 0 ]
}

@test "another number of permits than the name has, one taken: refused with the size and how many are taken, and nothing changes" {
	take "$(id 1)" 3 >/dev/null
	before=$(rcli get s; rcli zrange '{s}:timeout' 0 -1 withscores
	    rcli hgetall 'redlock_holder:{s}'; rcli get 'redisson_lock_token:{s}')
	run -0 take "$(id 2)" 5
	assert_equal "$output" $'-2\n3\n1'
	[ "$(rcli get s; rcli zrange '{s}:timeout' 0 -1 withscores
	    rcli hgetall 'redlock_holder:{s}'
	    rcli get 'redisson_lock_token:{s}')" = "$before" ]
	rcli set t hello >/dev/null
	run -0 rcli eval "$(script permit_acquire)" 5 t '{t}:timeout' \
	    'redlock_holder:{t}' 'redisson_lock_token:{t}' 'redisson_sc:{t}' \
	    1000 "$(id 1)" 3 h 1 u c PUBLISH
	assert_equal "$output" $'-1\nt\nstring that is not a number of permits'
	[ "$(rcli get t)" = hello ]
}

@test "Redisson clients and the scripts draw from the same permits" {
	local rsn="$BATS_TEST_DIRNAME/redisson.py"
	python3 "$rsn" --port "$R_PORT" semaphore s set-permits 2 >/dev/null
	run -0 python3 "$rsn" --port "$R_PORT" semaphore s acquire --lease 30000 --keep
	java=$(echo "$output" | cut -d' ' -f2)
	run -0 take "$(id 1)" 2
	[ "${lines[0]}" = 1 ]
	run -0 take "$(id 2)" 2
	[ "${lines[0]}" = 0 ]
	run -0 python3 "$rsn" --port "$R_PORT" semaphore s available
	[ "$output" = 0 ]
	python3 "$rsn" --port "$R_PORT" semaphore s release "$java" >/dev/null
	run -0 take "$(id 2)" 2
	[ "${lines[0]}" = 1 ]
}

@test "a permit's id is 16 bytes, as Redisson's: 16 of the SHA-1 of the owner token; Java's updateLeaseTime and release find it by its hex" {
	local rsn="$BATS_TEST_DIRNAME/redisson.py"
	take "$(id 1)" 2 >/dev/null
	# The member is 16 bytes, not hex digits.
	[ "$(rcli eval "return #redis.call('ZRANGE', KEYS[1], 0, 0)[1]" 1 '{s}:timeout')" = 16 ]
	before=$(byid zscore '{s}:timeout' "$(hex 1)")
	[ -n "$before" ]
	run -0 python3 "$rsn" --port "$R_PORT" semaphore s update-lease "$(hex 1)" 120000
	[[ $output == updated* ]]
	[ "$(byid zscore '{s}:timeout' "$(hex 1)")" -gt $((before + 60000)) ]
	run -0 python3 "$rsn" --port "$R_PORT" semaphore s release "$(hex 1)"
	[[ $output == released* ]]
	[ "$(rcli get s)" = 2 ]
	[ "$(rcli exists '{s}:timeout')" = 0 ]
	run -0 give "$(id 1)"
	assert_equal "$output" $'0\n0'
	# Any other token: the first 16 bytes of its SHA-1.
	job=$(printf 'job-7' | od -An -v -tx1 | tr -d ' \n')
	take "$job" 2 >/dev/null
	[ -n "$(byid zscore '{s}:timeout' "$(printf 'job-7' | sha1sum | cut -c1-32)")" ]
	run -0 python3 "$rsn" --port "$R_PORT" semaphore s release "$(printf 'job-7' | sha1sum | cut -c1-32)"
	[ "$(rcli get s)" = 2 ]
}

@test "holder records expire with the longest permit lease; those of permits given back by others go at the next acquire, renew or release" {
	take "$(id 1)" 3 30000 >/dev/null
	t=$(rcli pttl 'redlock_holder:{s}')
	[ "$t" -gt 25000 ]
	[ "$t" -le 30000 ]
	take "$(id 2)" 3 10000 >/dev/null
	[ "$(rcli pttl 'redlock_holder:{s}')" -gt 25000 ]
	run -0 renew "$(id 2)" 60000
	[ "$output" = 1 ]
	[ "$(rcli pttl 'redlock_holder:{s}')" -gt 50000 ]
	# Java gives permit 1 back behind redlock's back (a release by its
	# id, or its acquire reclaiming it once expired): its record stays
	# until redlock next touches the semaphore.
	python3 "$BATS_TEST_DIRNAME/redisson.py" --port "$R_PORT" semaphore s release "$(hex 1)" >/dev/null
	[ "$(byid hexists 'redlock_holder:{s}' "$(hex 1)")" = 1 ]
	renew "$(id 2)" 60000 >/dev/null
	[ "$(byid hexists 'redlock_holder:{s}' "$(hex 1)")" = 0 ]
	[ "$(byid hexists 'redlock_holder:{s}' "$(hex 2)")" = 1 ]
	# A stale record (and hold count) goes at an acquisition and at a
	# release too, whoever's they are.
	rcli hset 'redlock_holder:{s}' stale '{}' stale:n 2 >/dev/null
	take "$(id 3)" 3 >/dev/null
	[ "$(rcli hexists 'redlock_holder:{s}' stale)" = 0 ]
	[ "$(rcli hexists 'redlock_holder:{s}' stale:n)" = 0 ]
	rcli hset 'redlock_holder:{s}' stale '{}' >/dev/null
	give "$(id 3)" >/dev/null
	[ "$(rcli hexists 'redlock_holder:{s}' stale)" = 0 ]
	[ "$(rcli hlen 'redlock_holder:{s}')" = 1 ]
	give "$(id 2)" >/dev/null
	[ "$(rcli exists 'redlock_holder:{s}')" = 0 ]
}

@test "a permit that an older redlock took under its id in hex digits stays its owner's: renewed, re-entered and released by the new scripts" {
	# Before permit ids were Redisson's 16 bytes, redlock stored the hex
	# digits themselves: a process of that version may still hold one.
	now=$(server_ms)
	rcli set s 2 >/dev/null
	rcli zadd '{s}:timeout' $((now + 20000)) "$(id 1)" >/dev/null
	rcli hset 'redlock_holder:{s}' "$(id 1)" '{"host":"old","pid":42,"user":"u","cmd":"c","since_ms":1,"fence":7}' >/dev/null
	rcli decr s >/dev/null
	run -0 renew "$(id 1)" 60000
	[ "$output" = 1 ]
	[ "$(rcli zscore '{s}:timeout' "$(id 1)")" -gt $((now + 50000)) ]
	run -0 take "$(id 1)" 2
	assert_equal "${lines[0]} ${lines[1]} ${lines[2]}" '1 7 2'
	[ "$(rcli zcard '{s}:timeout')" = 1 ]
	give "$(id 1)" >/dev/null
	run -0 give "$(id 1)"
	[ "${lines[0]}" = 2 ]
	[ "$(rcli get s)" = 2 ]
	[ "$(rcli exists '{s}:timeout' 'redlock_holder:{s}')" = 0 ]
}

@test "another number of permits, none taken: the semaphore is resized (its expiry kept, the new count published), then holds that many" {
	take "$(id 1)" 3 >/dev/null
	give "$(id 1)" >/dev/null
	rcli pexpire s 600000 >/dev/null
	fence=$(rcli get 'redisson_lock_token:{s}')
	# A subscriber to the semaphore's channel hears the new count.
	redis-cli -p "$R_PORT" subscribe 'redisson_sc:{s}' >"$D/sub" 3>&- &
	bg+=($!)
	wait_for 5 eval '[ "$(rcli pubsub numsub "redisson_sc:{s}" | sed -n 2p)" = 1 ]'
	run -0 take "$(id 2)" 2
	[ "${lines[0]}" = 1 ]
	[ "${lines[1]}" -gt "$fence" ]
	[ "$(rcli get s)" = 1 ]
	[ "$(rcli pttl s)" -gt 500000 ]
	wait_for 5 grep -qx 2 "$D/sub"
	run -0 take "$(id 3)" 2
	[ "${lines[0]}" = 1 ]
	run -0 take "$(id 4)" 2
	[ "${lines[0]}" = 0 ]
	[ "$(rcli get s)" = 0 ]
	[ "$(rcli zcard '{s}:timeout')" = 2 ]
}

@test "another number of permits, the only ones taken expired: they go, their records too, and the semaphore is resized" {
	take "$(id 1)" 3 >/dev/null
	take "$(id 2)" 3 >/dev/null
	past=$(($(server_ms) - 1000))
	rcli eval "for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
	    redis.call('ZADD', KEYS[1], ARGV[1], m) end" 1 '{s}:timeout' \
	    "$past" >/dev/null
	run -0 take "$(id 3)" 1
	[ "${lines[0]}" = 1 ]
	[ "$(rcli get s)" = 0 ]
	[ "$(rcli zcard '{s}:timeout')" = 1 ]
	[ "$(byid zscore '{s}:timeout' "$(hex 3)")" != "" ]
	[ "$(rcli hlen 'redlock_holder:{s}')" = 1 ]
	run -0 take "$(id 4)" 1
	[ "${lines[0]}" = 0 ]
	# The old holders' releases find their permits gone: nothing freed.
	run -0 give "$(id 1)"
	[ "${lines[0]}" = 0 ]
	[ "$(rcli get s)" = 0 ]
}

@test "a call that only re-enters (flag e) with another number of permits, none taken: it is gone, nothing resized" {
	take "$(id 1)" 3 >/dev/null
	give "$(id 1)" >/dev/null
	run -0 rcli eval "$(script permit_acquire)" 7 s '{s}:timeout' \
	    'redlock_holder:{s}' 'redisson_lock_token:{s}' 'redisson_sc:{s}' \
	    'redlock_room:{s}' 'redlock_listener:{s}' \
	    30000 "$(id 2)" 2 host 42 user cmd 5000 e
	[ "${lines[0]}" = 0 ]
	[ "${lines[-1]}" = 1 ]
	[ "$(rcli get s)" = 3 ]
	[ "$(rcli zcard '{s}:timeout')" = 0 ]
}
