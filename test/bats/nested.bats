#!/usr/bin/env bats
# Nested calls of every kind on one name within one process tree: for each
# ordered pair of kinds (plain, --fair, -s, --write, --limit N), an exec
# run from inside the outer exec's COMMAND (so that it inherits
# REDLOCK_HELD) does what the manual's table (NESTED CALLS) says. It
# re-enters the outer hold: no second holder, no reader beside an
# exclusive section, and its release gives back exactly what it took; or
# it is refused at once (64) with one line that says what to do, Redis
# untouched. It never waits for its own ancestor (the default wait is
# for ever: each inner call is bounded by timeout(1) here).

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
	# state.sh PORT OWNER: how n is held, on one line, OWNER written T:
	# a lock's fields (sorted), a semaphore's free permits, permits
	# taken and the nested holds of the first one taken (its id is 16
	# bytes, any of them), or "free".
	cat >"$D/state.sh" <<-'EOF'
	p=$1 t=$2
	case $(redis-cli -p "$p" type n) in
	hash)	redis-cli -p "$p" hgetall n | paste -d= - - | LC_ALL=C sort |
		    tr '\n' ' ' | sed 's/ $//' ;;
	string)	echo "free=$(redis-cli -p "$p" get n)" \
		    "taken=$(redis-cli -p "$p" zcard '{n}:timeout')" \
		    "holds=$(redis-cli -p "$p" eval "local id = redis.call(
		        'ZRANGE', KEYS[1], 0, 0)[1] return id and
		        redis.call('HGET', KEYS[2], id .. ':n')" \
		        2 '{n}:timeout' 'redlock_holder:{n}')" ;;
	*)	echo free ;;
	esac | awk -v t="$t" '{ while ((i = index($0, t)) > 0)
	    $0 = substr($0, 1, i - 1) "T" substr($0, i + length(t)); print }'
	EOF
	# inner.sh PORT OUTER_OWNER: the inner call's COMMAND: whose owner
	# it runs as, its REDLOCK_HELD, the state, and what siblings of
	# every kind (fresh owners: no REDLOCK_HELD) get with -n meanwhile.
	cat >"$D/inner.sh" <<-'EOF'
	p=$1 t=$2 D=$(dirname "$0")
	[ "$REDLOCK_OWNER" = "$t" ] && echo "owner=outer" || echo "owner=new"
	echo "held=$REDLOCK_HELD" | sed "s/=$t=/=T=/"
	echo "in=$(sh "$D/state.sh" "$p" "$t")"
	s=siblings:
	for k in plain:'' shared:-s write:--write limit:'--limit 2'; do
		REDLOCK_HELD= "$RL" exec -n -q ${k#*:} n -- true 2>/dev/null
		s="$s ${k%%:*}=$?"
	done
	echo "$s"
	EOF
	# outer.sh PORT INNER_OPTIONS: the outer call's COMMAND: the state,
	# then the inner call (for ever, as by default, unless it is
	# refused or re-enters at once), its status and error, the state
	# after it.
	cat >"$D/outer.sh" <<-'EOF'
	p=$1 D=$(dirname "$0") t=$REDLOCK_OWNER
	shift
	echo "before=$(sh "$D/state.sh" "$p" "$t")"
	timeout 20 "$RL" exec "$@" n -- sh "$D/inner.sh" "$p" "$t" 2>"$D/err"
	echo "inner=$?"
	[ ! -s "$D/err" ] || echo "err=$(cat "$D/err")"
	echo "after=$(sh "$D/state.sh" "$p" "$t")"
	EOF
	export RL
}

# held KIND: the kind REDLOCK_HELD records for a hold of KIND.
held() {
	case $1 in
	plain | fair) echo exclusive ;;
	*) echo "$1" ;;
	esac
}
# alone KIND: the state of n while one exec of KIND holds it.
alone() {
	case $1 in
	plain | fair) echo "T=1 mode=write" ;;	# mode: redlock's marker
	shared) echo "T=1 mode=read" ;;
	write) echo "T:write=1 mode=write" ;;
	limit) echo "free=1 taken=1 holds=" ;;
	esac
}
# siblings KIND: what fresh owners of each kind get while a chain holds
# n as KIND.
siblings() {
	case $1 in
	plain | fair | write) echo "siblings: plain=75 shared=75 write=75 limit=65" ;;
	shared) echo "siblings: plain=75 shared=0 write=75 limit=65" ;;
	limit) echo "siblings: plain=65 shared=65 write=65 limit=0" ;;
	esac
}
# free KIND: the state of n once the outer exec of KIND has ended.
free() { if [ "$1" = limit ]; then echo "free=2 taken=0 holds="; else echo free; fi; }

# nest OUTER INNER: the outer exec of n as OUTER, the inner one as INNER
# inside it; its output in $output, and the state of n after both.
nest() {
	# shellcheck disable=SC2046
	run -0 --separate-stderr rl exec $(opt "$1") n -- sh "$D/outer.sh" "$R_PORT" $(opt "$2")
	assert_equal "$stderr" ""
	assert_equal "$(sh "$D/state.sh" "$R_PORT" none)" "$(free "$1")"
	[ "$(rcli exists 'redlock_holder:{n}')" = 0 ]
}

# reenters OUTER INNER STATE: INNER inside OUTER re-enters OUTER's hold
# as its own owner; n is in STATE while it holds, the chain holds n as
# OUTER throughout (REDLOCK_HELD), siblings are kept out as OUTER keeps
# them out, and the inner release takes back exactly what it added.
reenters() {
	nest "$1" "$2"
	assert_equal "$output" "before=$(alone "$1")
owner=outer
held=n=T=$(held "$1")
in=$3
$(siblings "$1")
inner=0
after=$(alone "$1")"
}

# refused OUTER INNER MESSAGE: INNER inside OUTER exits 64 at once with
# MESSAGE, and n stays as OUTER holds it.
refused() {
	nest "$1" "$2"
	assert_equal "$output" "before=$(alone "$1")
inner=64
err=redlock: $3
after=$(alone "$1")"
}

UPGRADE="would wait for it for ever: take n with --write (or exclusively) in the outer call, or run this one outside it"
INTO_LIMIT="a nested --limit permit cannot take it (a name is a lock or a semaphore, not both); drop --limit, or use another name"
FROM_LIMIT="cannot take it (a name is a lock or a semaphore, not both); give --limit as the outer call does, or use another name"

@test "plain in plain: re-enters the hold" { reenters plain plain "T=2 mode=write"; }
@test "--fair in plain: re-enters the hold" { reenters plain fair "T=2 mode=write"; }
@test "-s in plain: re-enters the exclusive hold, no reader beside it" { reenters plain shared "T=2 mode=write"; }
@test "--write in plain: re-enters the exclusive hold" { reenters plain write "T=2 mode=write"; }
@test "--limit in plain: refused at once (64)" {
	refused plain limit "n is held exclusively by an exec above this one: $INTO_LIMIT"
}

@test "plain in --fair: re-enters the hold" { reenters fair plain "T=2 mode=write"; }
@test "--fair in --fair: re-enters the hold" { reenters fair fair "T=2 mode=write"; }
@test "-s in --fair: re-enters the exclusive hold, no reader beside it" { reenters fair shared "T=2 mode=write"; }
@test "--write in --fair: re-enters the exclusive hold" { reenters fair write "T=2 mode=write"; }
@test "--limit in --fair: refused at once (64)" {
	refused fair limit "n is held exclusively by an exec above this one: $INTO_LIMIT"
}

@test "plain in -s: refused at once (64), the read hold left as it was" {
	refused shared plain "n is held shared (-s) by an exec above this one, and a nested exclusive lock $UPGRADE"
}
@test "--fair in -s: refused at once (64), the read hold left as it was" {
	refused shared fair "n is held shared (-s) by an exec above this one, and a nested --fair lock $UPGRADE"
}
@test "-s in -s: re-enters the read hold; other readers still come in" {
	reenters shared shared "T=2 mode=read"
}
@test "--write in -s: refused at once (64), not a wait for itself" {
	refused shared write "n is held shared (-s) by an exec above this one, and a nested --write lock $UPGRADE"
}
@test "--limit in -s: refused at once (64)" {
	refused shared limit "n is held shared (-s) by an exec above this one: $INTO_LIMIT"
}

@test "plain in --write: re-enters the write hold" { reenters write plain "T:write=2 mode=write"; }
@test "--fair in --write: re-enters the write hold" { reenters write fair "T:write=2 mode=write"; }
@test "-s in --write: a read hold under the write, no other reader beside it" {
	reenters write shared "T:write=1 T=1 mode=write"
}
@test "--write in --write: re-enters the write hold" { reenters write write "T:write=2 mode=write"; }
@test "--limit in --write: refused at once (64)" {
	refused write limit "n is held for writing (--write) by an exec above this one: $INTO_LIMIT"
}

@test "plain in --limit: refused at once (64)" {
	refused limit plain "n is a semaphore that an exec above this one holds a permit of: a nested exclusive lock $FROM_LIMIT"
}
@test "--fair in --limit: refused at once (64)" {
	refused limit fair "n is a semaphore that an exec above this one holds a permit of: a nested --fair lock $FROM_LIMIT"
}
@test "-s in --limit: refused at once (64)" {
	refused limit shared "n is a semaphore that an exec above this one holds a permit of: a nested shared lock (-s) $FROM_LIMIT"
}
@test "--write in --limit: refused at once (64)" {
	refused limit write "n is a semaphore that an exec above this one holds a permit of: a nested --write lock $FROM_LIMIT"
}
@test "--limit in --limit: re-enters the same permit, the other one stays free" {
	reenters limit limit "free=1 taken=1 holds=2"
}

@test "a nested lock follows the same table: it re-enters as the exec above holds, -v says so, unlock --owner gives that back; an upgrade is refused" {
	run -0 --separate-stderr rl exec --write n -- sh -c '
	    tok=$(timeout 20 "$0" lock -v n) || exit 1
	    [ "$tok" = "$REDLOCK_OWNER" ] || exit 2
	    redis-cli -p "$1" hget n "$tok:write"
	    "$0" unlock --owner "$tok" n || exit 3
	    redis-cli -p "$1" hget n "$tok:write"' "$RL" "$R_PORT"
	assert_output "2
1"
	[[ $stderr == *"redlock: "*" n is held for writing (--write) by an exec above: this exclusive lock re-enters that hold"* ]]
	[[ $stderr == *"re-entered n (holds 2, fence "* ]]
	run -0 --separate-stderr rl exec -s n -- sh -c '
	    timeout 20 "$0" lock --write n
	    echo "lock: $?"
	    redis-cli -p "$1" hget n "$REDLOCK_OWNER"' "$RL" "$R_PORT"
	assert_output "lock: 64
1"
	assert_equal "$stderr" "redlock: n is held shared (-s) by an exec above this one, and a nested --write lock $UPGRADE"
	key_gone n
	key_gone 'redlock_holder:{n}'
}

@test "--owner with the token of the exec above nests by the table; another token is a fresh owner" {
	REDLOCK_HELD="n=T=shared" run -64 --separate-stderr rl lock -n --owner T n
	assert_output ""
	assert_equal "$stderr" "redlock: n is held shared (-s) by an exec above this one, and a nested exclusive lock $UPGRADE"
	run -0 rcli keys '*'
	assert_output ""
	REDLOCK_HELD="n=T=shared" run -0 --separate-stderr rl lock -n --owner U n
	assert_output U
	[ "$(rcli hget n U)" = 1 ]
}

@test "the chain holds the name as its outer call took it: plain under -s under --write re-enters the write hold" {
	run -0 --separate-stderr rl exec --write n -- "$RL" exec -s n -- sh -c '
	    echo "$REDLOCK_HELD" | sed "s/=$REDLOCK_OWNER=/=T=/"
	    timeout 20 "$0" exec n -- sh -c "redis-cli -p $1 hgetall n | paste -d= - - | LC_ALL=C sort | tr \"\\n\" \" \"" |
	        sed "s/$REDLOCK_OWNER/T/g"' "$RL" "$R_PORT"
	assert_output "n=T=write
T:write=2 T=1 mode=write "
	assert_equal "$stderr" ""
	key_gone n
	key_gone 'redlock_holder:{n}'
}
