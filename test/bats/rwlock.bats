#!/usr/bin/env bats
# The read-write lock scripts behind --shared and --write, run as EVAL
# against a real server: Redisson's RReadWriteLock layout (mode, a field
# per reader, OWNER:write for the writer, a lease key per read hold, the
# channel redisson_rwlock:{NAME}), redlock's waiting-writer intent, and
# interop with Redisson's own scripts (test/bats/redisson.py).

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
# acq OWNER read|write [LEASE_MS] [FLAGS] [WAITER_TIMEOUT_MS]: rw_acquire of x.
acq() {
	rcli eval "$(script rw_acquire)" 5 x 'redisson_lock_token:{x}' \
	    'redlock_holder:{x}' "{x}:$1:rwlock_timeout" 'redlock_writer:{x}' \
	    "${3:-30000}" "$1" host 42 user cmd "$2" "${5:-5000}" "${4:-.}" \
	    'redisson_rwlock:{x}' PUBLISH
}
# rel OWNER read|write: rw_release of x.
rel() {
	rcli eval "$(script rw_release)" 6 x 'redisson_rwlock:{x}' \
	    'redisson_lock__channel:{x}' 'redlock_holder:{x}' \
	    "{x}:$1:rwlock_timeout" '{x}' "$1" "$2" PUBLISH
}
# renew OWNER read|write LEASE_MS
renew() {
	rcli eval "$(script rw_renew)" 3 x 'redlock_holder:{x}' \
	    "{x}:$1:rwlock_timeout" "$3" "$1" "$2"
}
leave() {
	rcli eval "$(script rw_leave)" 2 'redlock_writer:{x}' \
	    'redisson_rwlock:{x}' "$1" PUBLISH
}
RSN=$BATS_TEST_DIRNAME/redisson.py
rsn() { python3 "$RSN" --port "$R_PORT" "$@"; }

# listen CHANNEL...: a subscriber in the background, its output in
# $D/sub, once the server counts it on the first channel.
listen() {
	local ch=$1
	timeout 10 redis-cli -p "$R_PORT" subscribe "$@" >"$D/sub" 3>&- &
	bg+=($!)
	wait_for 5 eval '[ "$(rcli pubsub numsub "$ch" | sed -n 2p)" = 1 ]'
}
# The messages received so far, "CHANNEL MESSAGE" a line.
messages() { awk '$0 == "message" { getline c; getline m; print c, m }' "$D/sub"; }

@test "ten readers share the lock, each with its lease key and metadata" {
	for i in 0 1 2 3 4 5 6 7 8 9; do
		run -0 acq "r$i:1" read
		[ "${lines[0]}" = 1 ]
		[ "${lines[2]}" = 1 ]
	done
	[ "$(rcli hget x mode)" = read ]
	[ "$(rcli hlen x)" = 11 ]
	[ "$(rcli pttl '{x}:r7:1:rwlock_timeout:1')" -gt 25000 ]
	[ "$(rcli pttl x)" -gt 25000 ]
	[ "$(rcli hlen 'redlock_holder:{x}')" = 10 ]
	[[ $(rcli hget 'redlock_holder:{x}' r3:1) == *'"pid":42'*'"fence":'* ]]
	# a second read of the same owner: its own lease key, the same fence
	a=$(rcli hget 'redlock_holder:{x}' r3:1 | sed 's/.*"fence":\([0-9]*\).*/\1/')
	run -0 acq r3:1 read
	assert_equal "${lines[*]}" "1 $a 2"
	[ "$(rcli exists '{x}:r3:1:rwlock_timeout:2')" = 1 ]
}

@test "a writer is busy while any reader holds, and acquires once all are gone; then it excludes readers" {
	acq r1:1 read >/dev/null
	acq r2:1 read 20000 >/dev/null
	run -0 acq w:1 write
	[ "${lines[0]}" = 0 ]
	[ "${lines[1]}" -gt 29000 ]
	[[ ${lines[2]} == r[12]:1 ]] && [ "${lines[3]}" = host ]
	run -0 rel r1:1 read
	assert_equal "${lines[*]}" 2
	run -0 acq w:1 write
	[ "${lines[0]}" = 0 ]
	[ "${lines[2]}" = r2:1 ]
	# the lease is now the longest read hold left
	[ "$(rcli pttl x)" -le 20000 ]
	run -0 rel r2:1 read
	[ "${lines[0]}" = 2 ]
	[ "$(rcli exists x 'redlock_holder:{x}')" = 0 ]
	run -0 acq w:1 write 10000
	[ "${lines[0]}" = 1 ]
	[ "${lines[2]}" = 1 ]
	[ "$(rcli hget x mode)" = write ]
	[ "$(rcli hget x w:1:write)" = 1 ]
	[ -n "$(rcli hget 'redlock_holder:{x}' w:1:write)" ]
	run -0 acq r3:1 read
	[ "${lines[0]}" = 0 ]
	[ "${lines[1]}" -le 10000 ]
	[ "${lines[2]}" = w:1:write ]
	[ "${lines[3]}" = host ]
	[ "${lines[4]}" = 42 ]
	run -0 acq w2:1 write
	[ "${lines[0]}" = 0 ]
	[ "${lines[2]}" = w:1:write ]
	# re-entry lengthens the lease, never shortens it
	run -0 acq w:1 write 60000
	[ "${lines[2]}" = 2 ]
	[ "$(rcli pttl x)" -gt 50000 ]
	acq w:1 write 1000 >/dev/null
	[ "$(rcli pttl x)" -gt 50000 ]
	[ "$(rcli exists '{x}:r3:1:rwlock_timeout:1')" = 0 ]
}

@test "a waiting writer's intent holds back new readers, not those already in; it lapses, or leaves with a message" {
	acq r1:1 read >/dev/null
	# An intent of 3 s: the steps below take over 400 ms on a busy box.
	run -0 acq w:1 write 30000 j 3000
	[ "${lines[0]}" = 0 ]
	[ "$(rcli get 'redlock_writer:{x}')" = w:1 ]
	[ "$(rcli pttl 'redlock_writer:{x}')" -le 3000 ]
	run -0 acq r2:1 read
	[ "${lines[0]}" = 0 ]
	[ "${lines[1]}" -le 3000 ]
	[ "${lines[2]}" = w:1 ]
	[ "$(rcli hexists x r2:1)" = 0 ]
	run -0 acq r1:1 read
	[ "${lines[0]}" = 1 ]
	[ "${lines[2]}" = 2 ]
	# another writer neither replaces the intent nor refreshes it; the
	# writer itself refreshes it; without "j" it is left as it is
	acq w2:1 write 30000 j 5000 >/dev/null
	[ "$(rcli get 'redlock_writer:{x}')" = w:1 ]
	[ "$(rcli pttl 'redlock_writer:{x}')" -le 3000 ]
	acq w:1 write 30000 . 5000 >/dev/null
	[ "$(rcli pttl 'redlock_writer:{x}')" -le 3000 ]
	acq w:1 write 30000 j 400 >/dev/null
	# the writer stops calling: its intent lapses and readers come in
	wait_for 2 key_gone 'redlock_writer:{x}'
	run -0 acq r2:1 read
	[ "${lines[0]}" = 1 ]
	# leaving: only the writer's own intent goes, with "1" for the readers
	acq w:1 write 30000 j 5000 >/dev/null
	listen 'redisson_rwlock:{x}'
	run -0 leave w2:1
	[ "$output" = 0 ]
	[ "$(rcli get 'redlock_writer:{x}')" = w:1 ]
	run -0 leave w:1
	[ "$output" = 1 ]
	[ "$(rcli exists 'redlock_writer:{x}')" = 0 ]
	wait_for 5 eval '[ "$(messages)" = "redisson_rwlock:{x} 1" ]'
	run -0 acq r3:1 read
	[ "${lines[0]}" = 1 ]
	# a writer that acquires takes its own intent away
	for r in r1:1 r1:1 r2:1 r3:1; do rel "$r" read >/dev/null; done
	rcli set 'redlock_writer:{x}' w:1 px 5000 >/dev/null
	run -0 acq w:1 write
	[ "${lines[0]}" = 1 ]
	[ "$(rcli exists 'redlock_writer:{x}')" = 0 ]
}

@test "the last reader's release publishes 0 on the read-write lock's channel and on the lock channel; an earlier one publishes nothing" {
	acq r1:1 read >/dev/null
	acq r2:1 read >/dev/null
	acq r2:1 read >/dev/null
	listen 'redisson_rwlock:{x}' 'redisson_lock__channel:{x}'
	run -0 rel r2:1 read
	assert_equal "${lines[*]}" "1 1"
	[ "$(rcli exists '{x}:r2:1:rwlock_timeout:2')" = 0 ]
	[ "$(rcli exists '{x}:r2:1:rwlock_timeout:1')" = 1 ]
	run -0 rel r2:1 read
	assert_equal "${lines[*]}" 2
	[ "$(rcli hexists 'redlock_holder:{x}' r2:1)" = 0 ]
	run -0 rel r1:1 read
	assert_equal "${lines[*]}" 2
	[ "$(rcli exists x '{x}:r1:1:rwlock_timeout:1' 'redlock_holder:{x}')" = 0 ]
	wait_for 5 eval '[ "$(messages | wc -l)" = 2 ]'
	assert_equal "$(messages)" \
	    $'redisson_rwlock:{x} 0\nredisson_lock__channel:{x} 0'
	run -0 rel r1:1 read
	assert_equal "${lines[*]}" "0 0"
}

@test "the writer's last release publishes 1 on the read-write lock's channel and 0 on the lock channel; a re-entry's release publishes nothing" {
	acq w:1 write >/dev/null
	acq w:1 write >/dev/null
	listen 'redisson_rwlock:{x}' 'redisson_lock__channel:{x}'
	run -0 rel w:1 read
	assert_equal "${lines[*]}" "0 1"
	run -0 rel w:1 write
	assert_equal "${lines[*]}" "1 1"
	run -0 rel w:1 write
	assert_equal "${lines[*]}" 2
	[ "$(rcli exists x 'redlock_holder:{x}')" = 0 ]
	wait_for 5 eval '[ "$(messages | wc -l)" = 2 ]'
	assert_equal "$(messages)" \
	    $'redisson_rwlock:{x} 1\nredisson_lock__channel:{x} 0'
}

@test "the writer's own read re-enters; its last write release turns the lock to read mode and lets readers in" {
	a=$(acq w:1 write | sed -n 2p)
	run -0 acq w:1 read
	[ "${lines[0]}" = 1 ]
	[ "${lines[1]}" -gt "$a" ]
	[ "$(rcli hget x w:1)" = 1 ]
	[ "$(rcli hget x mode)" = write ]
	run -0 acq r2:1 read
	[ "${lines[0]}" = 0 ]
	listen 'redisson_rwlock:{x}'
	run -0 rel w:1 write
	[ "${lines[0]}" = 2 ]
	[ "$(rcli hget x mode)" = read ]
	[ "$(rcli hexists 'redlock_holder:{x}' w:1:write)" = 0 ]
	[ "$(rcli hexists 'redlock_holder:{x}' w:1)" = 1 ]
	wait_for 5 eval '[ "$(messages)" = "redisson_rwlock:{x} 1" ]'
	run -0 acq r2:1 read
	[ "${lines[0]}" = 1 ]
}

@test "a crashed reader frees the lock within its lease, even while others came and went" {
	acq r1:1 read 300 >/dev/null
	acq r2:1 read 30000 >/dev/null
	wait_for 3 key_gone '{x}:r1:1:rwlock_timeout:1'
	[ "$(rcli hexists x r1:1)" = 1 ]
	run -0 acq w:1 write
	[ "${lines[0]}" = 0 ]
	# the last live reader's release finds no lease left: the lock goes
	run -0 rel r2:1 read
	[ "${lines[0]}" = 2 ]
	[ "$(rcli exists x)" = 0 ]
	run -0 acq w:1 write
	[ "${lines[0]}" = 1 ]
	rel w:1 write >/dev/null
	# one crashed reader alone: the lock lasts its lease, no longer
	acq r3:1 read 300 >/dev/null
	wait_for 3 key_gone x
	run -0 acq w:1 write
	[ "${lines[0]}" = 1 ]
}

@test "renewal lengthens a hold's leases, never shortens them, and never re-creates a hold that is gone" {
	acq r1:1 read 1000 >/dev/null
	acq r1:1 read 1000 >/dev/null
	run -0 renew r1:1 read 60000
	[ "$output" = 1 ]
	# Over 50 s left: a 60 s lease less what a loaded box takes between
	# the calls (59 s was too tight, once), far from the 0.5-1 s ones.
	for k in x '{x}:r1:1:rwlock_timeout:1' '{x}:r1:1:rwlock_timeout:2' \
	    'redlock_holder:{x}'; do
		[ "$(rcli pttl "$k")" -gt 50000 ]
	done
	run -0 renew r1:1 read 500
	[ "$output" = 1 ]
	[ "$(rcli pttl '{x}:r1:1:rwlock_timeout:1')" -gt 50000 ]
	# No hold of that kind, NAME held (by r1's reads): 2, "taken".
	run -0 renew r1:1 write 60000
	[ "$output" = 2 ]
	run -0 renew r2:1 read 60000
	[ "$output" = 2 ]
	[ "$(rcli hexists x r2:1)" = 0 ]
	[ "$(rcli hexists x r1:1:write)" = 0 ]
	rel r1:1 read >/dev/null
	rel r1:1 read >/dev/null
	run -0 renew r1:1 read 60000
	[ "$output" = 0 ]
	[ "$(rcli exists x '{x}:r1:1:rwlock_timeout:1' 'redlock_holder:{x}')" = 0 ]
	# the writer
	acq w:1 write 1000 >/dev/null
	run -0 renew w:1 write 60000
	[ "$output" = 1 ]
	[ "$(rcli pttl x)" -gt 50000 ]
	[ "$(rcli pttl 'redlock_holder:{x}')" -gt 50000 ]
	run -0 renew w:1 read 60000
	[ "$output" = 2 ]
	[ "$(rcli hexists x w:1)" = 0 ]
	rcli del x >/dev/null
	run -0 renew w:1 write 60000
	[ "$output" = 0 ]
	[ "$(rcli exists x)" = 0 ]
	# a plain lock with the same field is not a read-write lock
	rcli hset x r1:1 1 >/dev/null
	run -0 renew r1:1 read 60000
	[ "$output" = 2 ]
	[ "$(rcli pttl x)" = -1 ]
}

@test "a plain lock (a hash without mode) is busy for readers and writers, and a read-write release leaves it alone" {
	rcli hset x someowner 1 >/dev/null
	rcli pexpire x 10000 >/dev/null
	for kind in read write; do
		run -0 acq r1:1 "$kind"
		[ "${lines[0]}" = 0 ]
		[ "${lines[1]}" -le 10000 ]
		[ "${lines[1]}" -gt 9000 ]
		[ "${lines[2]}" = someowner ]
		run -0 rel someowner "$kind"
		assert_equal "${lines[*]}" "0 1"
	done
	assert_equal "$(rcli hgetall x)" $'someowner\n1'
	[ "$(rcli exists 'redisson_lock_token:{x}' 'redlock_holder:{x}')" = 0 ]
	[ "$(rcli keys '*rwlock_timeout*')" = "" ]
}

@test "fencing tokens rise with each fresh hold; a re-entry returns its own" {
	a=$(acq r1:1 read | sed -n 2p)
	b=$(acq r2:1 read | sed -n 2p)
	[ "$b" -gt "$a" ]
	[ "$(acq r1:1 read | sed -n 2p)" = "$a" ]
	for r in r1:1 r1:1 r2:1; do rel "$r" read >/dev/null; done
	c=$(acq w:1 write | sed -n 2p)
	[ "$c" -gt "$b" ]
	d=$(acq w:1 read | sed -n 2p)
	[ "$d" -gt "$c" ]
	[ "$(acq w:1 write | sed -n 2p)" = "$c" ]
}

@test "keys of another type are reported and nothing changes" {
	rcli set x hello >/dev/null
	for kind in read write; do
		run -0 acq r1:1 "$kind"
		assert_equal "${lines[*]}" "-1 x string"
		run -0 rel r1:1 "$kind"
		assert_equal "${lines[*]}" "-1 x string"
	done
	[ "$(rcli get x)" = hello ]
	rcli del x >/dev/null
	rcli rpush 'redlock_writer:{x}' a >/dev/null
	run -0 acq r1:1 read
	assert_equal "${lines[*]}" "-1 redlock_writer:{x} list"
	rcli del 'redlock_writer:{x}' >/dev/null
	rcli set 'redisson_lock_token:{x}' abc >/dev/null
	run -0 acq w:1 write
	assert_equal "$output" $'-1\nredisson_lock_token:{x}\nstring that is not a counter'
	rcli del 'redisson_lock_token:{x}' >/dev/null
	rcli hset '{x}:r1:1:rwlock_timeout:1' a b >/dev/null
	run -0 acq r1:1 read
	assert_equal "${lines[*]}" "-1 {x}:r1:1:rwlock_timeout:1 hash"
	rcli set 'redlock_holder:{x}' z >/dev/null
	run -0 acq w:1 write
	assert_equal "${lines[*]}" "-1 redlock_holder:{x} string"
	[ "$(rcli exists x 'redisson_lock_token:{x}')" = 0 ]
	[ "$(rcli get 'redlock_holder:{x}')" = z ]
	[ "$(rcli type '{x}:r1:1:rwlock_timeout:1')" = hash ]
}

@test "Redisson's read lock and the scripts share the lock and exclude each other's writers" {
	rsn rwlock x read --lease 30000 --keep --id j:1 >/dev/null
	run -0 acq r1:1 read
	[ "${lines[0]}" = 1 ]
	run -0 acq w:1 write
	[ "${lines[0]}" = 0 ]
	run -1 rsn rwlock x write --lease 30000 --keep --id jw:1 --wait 0.2
	# Redisson's read release leaves redlock's hold as it was
	run -0 rsn rwlock x unlock-read --id j:1
	assert_output --regexp '^decremented'
	[ "$(rcli hget x r1:1)" = 1 ]
	[ "$(rcli exists '{x}:r1:1:rwlock_timeout:1')" = 1 ]
	# Still the 30 s lease (less the Python clients' starts on a busy box).
	[ "$(rcli pttl x)" -gt 20000 ]
	run -0 acq w:1 write
	[ "${lines[0]}" = 0 ]
	# and redlock's leaves Redisson's
	rsn rwlock x read --lease 30000 --keep --id j:1 >/dev/null
	run -0 rel r1:1 read
	[ "${lines[0]}" = 2 ]
	[ "$(rcli hget x j:1)" = 1 ]
	[ "$(rcli exists '{x}:j:1:rwlock_timeout:1')" = 1 ]
	run -0 rsn rwlock x unlock-read --id j:1
	assert_output --regexp '^released'
	[ "$(rcli exists x)" = 0 ]
	# a redlock writer comes in, and Redisson's read and write wait
	run -0 acq w:1 write
	[ "${lines[0]}" = 1 ]
	run -1 rsn rwlock x read --lease 30000 --keep --id j:1 --wait 0.2
	run -1 rsn rwlock x write --lease 30000 --keep --id jw:1 --wait 0.2
	[ "$(rcli hlen x)" = 2 ]
}

@test "Redisson's writer excludes the scripts' readers and writers, and a redlock read keeps Redisson's writer out" {
	rsn rwlock x write --lease 30000 --keep --id jw:1 >/dev/null
	run -0 acq r1:1 read
	[ "${lines[0]}" = 0 ]
	[ "${lines[2]}" = jw:1:write ]
	run -0 acq w:1 write
	[ "${lines[0]}" = 0 ]
	[ "${lines[2]}" = jw:1:write ]
	run -0 rsn rwlock x unlock-write --id jw:1
	assert_output --regexp '^released'
	run -0 acq r1:1 read
	[ "${lines[0]}" = 1 ]
	run -1 rsn rwlock x write --lease 30000 --keep --id jw:1 --wait 0.2
	run -0 rsn rwlock x read --lease 30000 --keep --id j:1 --wait 0.2
	[ "$(rcli hget x j:1)" = 1 ]
	[ "$(rcli hget x r1:1)" = 1 ]
}

@test "status shows each reader's metadata, and finds the writer's under OWNER:write" {
	st() {
		rcli eval "$(script status)" 7 x 'redlock_holder:{x}' \
		    'redisson_lock_queue:{x}' 'redisson_lock_timeout:{x}' \
		    'redlock_waiter:{x}' '{x}:timeout' '{x}'
	}
	acq r1:1 read >/dev/null
	rsn rwlock x read --lease 30000 --keep --id j:1 >/dev/null
	f=$(rcli hget 'redlock_holder:{x}' r1:1 | sed 's/.*"fence":\([0-9]*\).*/\1/')
	run -0 st
	# {1, 0, pttl, nil owner, 2 holds, nil..., 'read', readers}: empty
	# lines (nil) are not in $lines
	[ "${lines[0]}" = 1 ]
	[ "${lines[3]}" = 2 ]
	[ "${lines[4]}" = read ]
	# the readers by owner: j:1 (Redisson's: no metadata), then r1:1
	[ "${lines[5]}" = j:1 ]
	[ "${lines[6]}" = 1 ]
	[ "${lines[8]}" = r1:1 ]
	[ "${lines[9]}" = 1 ]
	assert_equal "${lines[*]:11:4}" "host 42 user cmd"
	[ "${lines[15]}" -gt 0 ]
	[ "${lines[16]}" = "$f" ]
	rel r1:1 read >/dev/null
	rsn rwlock x unlock-read --id j:1 >/dev/null
	acq w:1 write >/dev/null
	run -0 st
	[ "${lines[3]}" = w:1 ]
	[ "${lines[5]}" = host ]
	[ "${lines[6]}" = 42 ]
	[ "${lines[-1]}" = write ]
}
