#!/usr/bin/env bats
# ACL users each denied one command that the scripts run: a refusal exits
# 69 with one line naming the command and the rule that grants it, and
# changes nothing. A script is not rolled back, so a command refused after
# a write would keep that write: a lock hash without its lease (which
# blocks every caller for ever), a room, a history or a queue entry that
# never goes, a semaphore that lost a permit. After every run, no key of
# the name lives without an expiry but those that the layout keeps (the
# fencing counter; a semaphore's count and permits), and the name is not
# held by the denied user.

load helpers

setup_file() {
	start_redis R
	for c in $ACL_CMDS; do
		rcli acl setuser "no$c" reset on '>pw' '~*' '&*' '+@all' "-$c" \
		    >/dev/null
	done
}
teardown_file() { stop_redis "$R_PID"; }
setup() { rcli flushall >/dev/null; }
teardown() { stop_strays; }

# The commands the scripts run that write, and the reads they run after a
# write.
ACL_CMDS="pexpire hset hincrby hsetnx set incr incrby decr zadd zrem
zincrby zremrangebyscore rpush lpush lpop lrem hdel del xadd publish
exists pttl get"
READS="exists pttl get"
KINDS=(plain --fair -s --write --limit=2)

as() {
	local u=$1
	shift
	"$RL" -u "redis://$u:pw@127.0.0.1:$R_PORT" "$@"
}

# The keys that live without an expiry where the layout gives every other
# one an expiry: the fencing counter, and a semaphore's count and permits.
kept() {
	case $1 in
	'redisson_lock_token:{'*) return 0 ;;
	x | '{x}:timeout') [ "$2" = --limit=2 ] ;;
	*) return 1 ;;
	esac
}

# Fails naming each key without an expiry that kept does not allow.
no_immortal() {
	local k bad=
	while IFS= read -r k; do
		[ -n "$k" ] || continue
		kept "$k" "$1" && continue
		[ "$(rcli pttl "$k")" != -1 ] || bad="$bad $k"
	done < <(rcli --scan)
	[ -z "$bad" ] || fault "$2: left without an expiry:$bad"
}

# Whether NAME x is free of holders (for a semaphore: no permit taken).
not_held() {
	if [ "$1" = --limit=2 ]; then
		[ "$(rcli zcard '{x}:timeout')" = 0 ]
	else
		[ "$(rcli exists x)" = 0 ]
	fi
}

# A refusal: exit 69 and one line naming command $2 and the rule. A read
# refused before any write (the scripts check the commands they write
# with, and the reads that follow a write) may be the server's word, and
# changed nothing as well.
refused() {
	local up
	up=$(echo "$2" | tr a-z A-Z)
	[ "${#stderr_lines[@]}" = 1 ] || { fault "$1: $stderr"; return; }
	case " $READS " in
	*" $2 "*)
		# Redis: "ERR The user executing the script can't run this
		# command or subcommand"; Valkey: "ERR ACL failure in script:
		# User U has no permissions to run the 'C' command".
		[[ $stderr != "redlock: redis://no$2@127.0.0.1:$R_PORT refused the "*" script for user no$2 (ERR "*"): grant it EVALSHA, EVAL, the commands the scripts run, "* ]] ||
		    return 0 ;;
	esac
	[[ $stderr == "redlock: redis://no$2@127.0.0.1:$R_PORT does not let user no$2 run $up on "*", which the "*" script needs (nothing was changed): grant it with ACL SETUSER no$2 +$2 and a key pattern that matches "* ]] ||
	    fault "$1: $stderr"
}

kind() { [ "$1" = plain ] || echo "$1"; }

# Each fault is noted, and the test fails at its end with all of them.
fault() { echo "$*" >>"$BATS_TEST_TMPDIR/faults"; }
faults() {
	[ ! -s "$BATS_TEST_TMPDIR/faults" ] || {
		cat "$BATS_TEST_TMPDIR/faults" >&2
		return 1
	}
}

@test "a denied command: lock, unlock and exec exit 69 naming it, or work; nothing is left without its expiry" {
	for k in "${KINDS[@]}"; do
		for c in $ACL_CMDS; do
			what="$c $k lock"
			run --separate-stderr as "no$c" lock -n $(kind "$k") -t 20s x
			if [ "$status" = 0 ]; then
				tok=$output
				run --separate-stderr as "no$c" unlock --owner "$tok" x
				[ "$status" = 0 ] || fault "$what: unlock $status: $stderr"
			else
				[ "$status" = 69 ] || fault "$what: $status: $stderr"
				refused "$what" "$c"
			fi
			no_immortal "$k" "$what"
			not_held "$k" || fault "$what: held"
			what="$c $k exec"
			run --separate-stderr as "no$c" exec -n $(kind "$k") -t 20s x -- true
			if [ "$status" != 0 ]; then
				[ "$status" = 69 ] || fault "$what: $status: $stderr"
				refused "$what" "$c"
			fi
			no_immortal "$k" "$what"
			not_held "$k" || fault "$what: held"
			rcli flushall >/dev/null
		done
	done
	faults
}

@test "a denied command: a waiter exits 69 naming it, or waits and gives up; nothing is left without its expiry" {
	for k in "${KINDS[@]}"; do
		for c in $ACL_CMDS; do
			what="$c $k waiter"
			# A writer keeps a reader waiting; a holder of the kind, the others.
			h=$k
			[ "$h" != -s ] || h=--write
			t1=$(rl lock $(kind "$h") -t 20s x)
			t2=
			[ "$k" != --limit=2 ] || t2=$(rl lock --limit=2 -t 20s x)
			run --separate-stderr as "no$c" exec -q -w 300ms $(kind "$k") x -- true
			if [ "$status" != 75 ]; then
				[ "$status" = 69 ] || fault "$what: $status: $stderr"
				refused "$what" "$c"
			fi
			rl unlock --owner "$t1" x
			[ -z "$t2" ] || rl unlock --owner "$t2" x
			no_immortal "$k" "$what"
			not_held "$k" || fault "$what: held"
			rcli flushall >/dev/null
		done
	done
	faults
}
