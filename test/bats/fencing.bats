#!/usr/bin/env bats
# Fencing tokens beside Redisson's RFencedLock, which shares the counter
# redisson_lock_token:{NAME}: its acquisition INCRs it (from 1 when it is
# missing) and its delete() removes it. Whatever Java did, or after the
# server lost its data, every token redlock hands out, of every kind, is
# above every token handed out before.

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() { rcli flushall >/dev/null; }

# RedissonFencedLock.tryLockInnerAsync: take NAME (or re-enter it) and
# INCR the counter, in one script; answers the token.
# KEYS[1] NAME  KEYS[2] redisson_lock_token:{NAME}  ARGV[1] lease ms
# ARGV[2] UUID:TID
FENCED_LOCK="if (redis.call('exists', KEYS[1]) == 0
    or (redis.call('hexists', KEYS[1], ARGV[2]) == 1)) then
  local token = redis.call('incr', KEYS[2])
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return {-1, token}
end
return {redis.call('pttl', KEYS[1]), -1}"

# java_fenced NAME: a Java thread takes NAME with RFencedLock and releases
# it (its release is RLock's: the last hold deletes NAME); prints the
# token it got.
java_fenced() {
	local id
	id="$(cat /proc/sys/kernel/random/uuid):1"
	rcli eval "$FENCED_LOCK" 2 "$1" "redisson_lock_token:{$1}" 30000 "$id" |
	    sed -n 2p
	rcli del "$1" >/dev/null
}

# fence KIND NAME: the token a fresh acquisition of NAME of KIND gets.
fence() {
	local opts
	case $1 in
	plain) opts=() ;;
	fair) opts=(--fair) ;;
	shared) opts=(-s) ;;
	write) opts=(--write) ;;
	limit) opts=(--limit 2) ;;
	esac
	rl exec "${opts[@]}" "$2" -- sh -c 'echo "$REDLOCK_FENCE"'
}

# before_and_after KIND LOSS: tokens of KIND on a name, then LOSS (a
# function of the name) winds its counter back; the next token of KIND
# must be above all the tokens before it, and Java's next one above that.
# (Each check returns: the caller runs it where -e does not stop it.)
before_and_after() {
	local n=k-$1 a b after java
	a=$(fence "$1" "$n")
	b=$(fence "$1" "$n")
	[ "$b" -gt "$a" ] || return 1
	"$2" "$n" || return 1
	after=$(fence "$1" "$n")
	echo "$1: $b before, $after after ($(rcli get "redisson_lock_token:{$n}"))" >&3
	[ "$after" -gt "$b" ] || return 1
	# Java's INCR goes on from there.
	java=$(rcli incr "redisson_lock_token:{$n}")
	[ "$java" -gt "$after" ]
}

# What RFencedLock.delete() and a Java acquisition after it leave: a
# counter started again from 1.
java_delete_then_lock() {
	rcli del "redisson_lock_token:{$1}" >/dev/null
	[ "$(rcli eval "return redis.call('incr', KEYS[1])" 1 \
	    "redisson_lock_token:{$1}")" = 1 ]
}

@test "after Java's delete() of the counter and an RFencedLock acquisition from 1, a plain lock's token is above every earlier one" {
	n=k
	a=$(fence plain $n)
	b=$(fence plain $n)
	rcli del "redisson_lock_token:{$n}" >/dev/null	# RFencedLock.delete()
	[ "$(java_fenced $n)" = 1 ]
	[ "$(java_fenced $n)" = 2 ]
	after=$(fence plain $n)
	echo "tokens $a $b, Java's 1 2, then $after" >&3
	[ "$after" -gt "$b" ]
	[ "$(java_fenced $n)" -gt "$after" ]
}

@test "after the counter restarted from 1: --fair, -s, --write and --limit tokens are above every earlier one" {
	local bad=''
	for kind in fair shared write limit; do
		before_and_after "$kind" java_delete_then_lock || bad+=" $kind"
	done
	[ -z "$bad" ] || { echo "a token not above the earlier ones:$bad" >&3; false; }
}

@test "after FLUSHALL, a Java RFencedLock first: every kind's next token is above every earlier one" {
	for kind in plain fair shared write limit; do
		n=f-$kind
		b=$(fence "$kind" "$n")
		rcli flushall >/dev/null
		[ "$(java_fenced "$n")" = 1 ]
		after=$(fence "$kind" "$n")
		echo "$kind: $b before the loss, $after after it" >&3
		[ "$after" -gt "$b" ]
	done
}

@test "a counter ahead of the server's clock goes on by one" {
	rcli set 'redisson_lock_token:{k}' 9000000000000000 >/dev/null
	[ "$(fence plain k)" = 9000000000000001 ]
	[ "$(fence fair k)" = 9000000000000002 ]
	[ "$(fence shared k)" = 9000000000000003 ]
	[ "$(fence write k)" = 9000000000000004 ]
	[ "$(fence limit k)" = 9000000000000005 ]
}

@test "every token is at least the server's TIME in microseconds" {
	for kind in plain fair shared write limit; do
		t=$(rcli time | { read -r s; read -r us; echo "$s$(printf %06d "$us")"; })
		f=$(fence "$kind" "t-$kind")
		[ "$f" -gt "$t" ]
		f=$(fence "$kind" "t-$kind")
		[ "$f" -gt "$t" ]
	done
}
