#!/usr/bin/env bats
# Owners in a chain of exec and lock: re-entry only into what an ancestor
# holds (REDLOCK_HELD), fresh owners for every other name, on one server
# and across three masters.

load helpers

setup_file() {
	for m in R M1 M2 M3; do start_redis "$m"; done
	export URLS="redis://127.0.0.1:$M1_PORT,redis://127.0.0.1:$M2_PORT,redis://127.0.0.1:$M3_PORT"
}
teardown_file() {
	for m in R M1 M2 M3; do stop_redis "$(pid_of "$m")"; done
}
setup() {
	D=$BATS_TEST_TMPDIR
	for m in R M1 M2 M3; do
		redis-cli -p "$(eval echo "\$${m}_PORT")" flushall >/dev/null
	done
	# park.sh TAG: record COMMAND's REDLOCK_ variables in $D/TAG.env,
	# then wait (at most 20 s) until $D/TAG.go appears.
	cat >"$D/park.sh" <<-'EOF'
	tag=$1 D=$2
	env | grep '^REDLOCK_' | sort >"$D/$tag.tmp" && mv "$D/$tag.tmp" "$D/$tag.env"
	i=0
	until [ -e "$D/$tag.go" ]; do
		[ "$i" -lt 2000 ] || exit 9
		sleep 0.01
		i=$((i + 1))
	done
	EOF
	# siblings.sh RL: run under an exec of outerA; two children take
	# innerB with -n, the second while the first holds it.
	cat >"$D/siblings.sh" <<-'EOF'
	RL=$1 D=$2
	"$RL" exec -n innerB -- sh "$D/park.sh" child1 "$D" &
	c1=$!
	i=0
	until [ -e "$D/child1.env" ]; do
		[ "$i" -lt 2000 ] || { echo "child1 never held innerB"; break; }
		sleep 0.01
		i=$((i + 1))
	done
	"$RL" exec -n innerB -- echo child2 ALSO has B
	echo "child2 exit $?"
	touch "$D/child2.done"
	wait "$c1"
	echo "child1 exit $?"
	EOF
}

# A failed test leaves no parked COMMAND behind.
teardown() { touch "$D/child1.go" "$D/in.go"; stop_strays; }

rlm() { "$RL" -u "$URLS" "$@"; }
mcli() { local m=$1; shift; redis-cli -p "$(eval echo "\$${m}_PORT")" "$@"; }
# var TAG NAME: REDLOCK_NAME as park.sh TAG recorded it.
var() { sed -n "s/^REDLOCK_$2=//p" "$D/$1.env"; }

# siblings RUN CLI...: the issue's reproduction through RUN (rl or rlm);
# CLI... is the redis-cli of each server that must show the state.
siblings() {
	local run=$1 c
	shift
	$run exec outerA -- sh "$D/siblings.sh" "$RL" "$D" \
	    >"$D/out" 2>"$D/err" 3>&- &
	local pid=$!
	wait_for 20 test -e "$D/child2.done"
	# While child1 holds innerB, child2 was turned away.
	run cat "$D/out"
	assert_output "child2 exit 75"
	local outer b
	b=$(var child1 OWNER)
	outer=$(var child1 HELD | tr ' ' '\n' | sed -n 's/^outerA=\(.*\)=exclusive$/\1/p')
	[ -n "$b" ]
	[ -n "$outer" ]
	[ "$b" != "$outer" ]
	for c in "$@"; do
		# One holder of innerB (and redlock's marker), with one
		# hold, and not outerA's owner.
		[ "$($c hlen innerB)" = 2 ]
		[ "$($c hget innerB "$b")" = 1 ]
		[ "$($c hget outerA "$outer")" = 1 ]
		[ "$($c hlen 'redlock_holder:{innerB}')" = 1 ]
	done
	touch "$D/child1.go"
	reap "$pid"
	run cat "$D/out"
	assert_output "child2 exit 75
child1 exit 0"
	run cat "$D/err"
	assert_output --regexp '^redlock: innerB is busy: held by .* pid [0-9]+ \(sh .*park\.sh child1 .*\) for .*; wait for it with -w DURATION$'
	for c in "$@"; do
		[ "$($c exists innerB outerA 'redlock_holder:{innerB}' 'redlock_holder:{outerA}')" = 0 ]
	done
}

@test "siblings under one exec exclude each other: of two children taking innerB with -n, one gets it and the other exits 75" {
	siblings rl rcli
}

@test "three masters: siblings under one exec exclude each other on innerB" {
	siblings rlm "mcli M1" "mcli M2" "mcli M3"
}

# aba RUN CLI...: exec A -- exec B -- exec A, parked; as for siblings.
aba() {
	local run=$1 c
	shift
	$run exec A -- "$RL" exec B -- "$RL" exec A -- sh "$D/park.sh" in "$D" \
	    >"$D/out" 2>"$D/err" 3>&- &
	local pid=$!
	wait_for 20 test -e "$D/in.env"
	local a b
	a=$(var in OWNER)
	for c in "$@"; do
		# The inner exec of A re-entered the outer one's hold
		# (beside it, redlock's marker "mode") ...
		[ "$($c hlen A)" = 2 ]
		[ "$($c hget A "$a")" = 2 ]
		# ... while B was taken by a fresh owner of its own.
		[ "$($c hlen B)" = 2 ]
		b=$($c hkeys B | grep -vx mode)
		[ "$b" != "$a" ]
		[ "$($c hget B "$b")" = 1 ]
	done
	[ "$(var in HELD)" = "A=$a=exclusive B=$b=exclusive" ]
	touch "$D/in.go"
	reap "$pid"
	[ ! -s "$D/out" ]
	[ ! -s "$D/err" ]
	for c in "$@"; do
		[ "$($c exists A B 'redlock_holder:{A}' 'redlock_holder:{B}')" = 0 ]
	done
}

@test "exec A -- exec B -- exec A re-enters A (2 holds of one owner) and takes B with a fresh owner; all released after" {
	aba rl rcli
}

@test "three masters: exec A -- exec B -- exec A re-enters A on every master; B has its own owner" {
	aba rlm "mcli M1" "mcli M2" "mcli M3"
}

@test "inside exec A, lock A re-enters with A's owner and unlock --owner gives back only that hold; lock B takes a fresh token" {
	run -0 --separate-stderr rl exec A -- sh -c '
	    tok=$("$0" lock -n A) || exit 1
	    [ "$tok" = "$REDLOCK_OWNER" ] || exit 2
	    redis-cli -p "$1" hget A "$tok"
	    "$0" unlock --owner "$tok" A || exit 3
	    redis-cli -p "$1" hget A "$tok"
	    other=$("$0" lock -n B) || exit 4
	    [ "$other" != "$REDLOCK_OWNER" ] || exit 5
	    redis-cli -p "$1" hget B "$other"
	    "$0" unlock --owner "$other" B || exit 6
	    redis-cli -p "$1" exists B' "$RL" "$R_PORT"
	assert_output "2
1
1
0"
	assert_equal "$stderr" ""
	key_gone A
	key_gone 'redlock_holder:{A}'
	key_gone 'redlock_holder:{B}'
}

@test "inside exec A -- exec B, a plain unlock of A or of B is refused (64), REDLOCK_OWNER set or not, naming the exec's owner; --owner releases it" {
	run -0 --separate-stderr rl exec A -- "$RL" exec B -- sh -c '
	    a=$("$0" lock -n A) || exit 1
	    [ "$a" != "$REDLOCK_OWNER" ] || exit 2
	    redis-cli -p "$1" hget A "$a"
	    "$0" unlock A
	    echo "unlock A: $?"
	    REDLOCK_OWNER=nobody "$0" unlock A
	    echo "unlock A: $?"
	    redis-cli -p "$1" hget A "$a"
	    "$0" unlock --owner "$a" A || exit 3
	    redis-cli -p "$1" hget A "$a"
	    b=$("$0" lock -n B) || exit 4
	    [ "$b" = "$REDLOCK_OWNER" ] || exit 5
	    "$0" unlock B
	    echo "unlock B: $?"
	    "$0" unlock --owner "$b" B || exit 6
	    redis-cli -p "$1" hget B "$b"
	    echo "$a $b" >"$2/owners"' "$RL" "$R_PORT" "$D"
	assert_output "2
unlock A: 64
unlock A: 64
2
1
unlock B: 64
1"
	read -r a b <"$D/owners"
	why="which releases it when its COMMAND exits; nothing was changed: to release that hold now, give --owner"
	assert_equal "$stderr" "redlock: A is held by a redlock exec above this process (owner $a), $why $a
redlock: A is held by a redlock exec above this process (owner $a), $why $a
redlock: B is held by a redlock exec above this process (owner $b), $why $b"
	for k in A B 'redlock_holder:{A}' 'redlock_holder:{B}'; do key_gone "$k"; done
}

@test "exec deploy -- unlock deploy: refused (64), the exec's hold and history untouched, exec exits 0; with --owner it releases, and exec says it lost the lock (79)" {
	run -0 --separate-stderr rl exec deploy -- sh -c '
	    before=$(redis-cli -p "$1" hgetall deploy; redis-cli -p "$1" hgetall "redlock_holder:{deploy}"; redis-cli -p "$1" xlen "redlock_log:{deploy}")
	    "$0" unlock deploy
	    echo "unlock: $?"
	    after=$(redis-cli -p "$1" hgetall deploy; redis-cli -p "$1" hgetall "redlock_holder:{deploy}"; redis-cli -p "$1" xlen "redlock_log:{deploy}")
	    [ "$before" = "$after" ] && echo unchanged' "$RL" "$R_PORT"
	assert_output "unlock: 64
unchanged"
	[[ $stderr == "redlock: deploy is held by a redlock exec above this process (owner "*"), which releases it when its COMMAND exits; nothing was changed: to release that hold now, give --owner "* ]]
	[ "${#stderr_lines[@]}" = 1 ]
	key_gone deploy
	# On purpose: --owner gives the exec's hold away, as it is told.
	run -79 --separate-stderr rl exec deploy -- sh -c '
	    "$0" unlock --owner "$REDLOCK_OWNER" deploy
	    echo "unlock: $?"' "$RL"
	assert_output "unlock: 0"
	key_gone deploy
}

@test "unlock --owner TOKEN and lock --owner TOKEN still work, inside an exec chain too" {
	run -0 --separate-stderr rl exec A -- sh -c '
	    tok=$("$0" lock C) || exit 1
	    [ "$tok" != "$REDLOCK_OWNER" ] || exit 2
	    "$0" lock -n --owner "$tok" C >/dev/null || exit 3
	    redis-cli -p "$1" hget C "$tok"
	    "$0" unlock C
	    echo "plain unlock of C: $?"
	    "$0" unlock --owner "$tok" C || exit 4
	    "$0" unlock --owner "$tok" C || exit 5
	    redis-cli -p "$1" exists C' "$RL" "$R_PORT"
	assert_output "2
plain unlock of C: 1
0"
	assert_equal "$stderr" "redlock: C is not held by that owner (another owner holds it); nothing was changed"
	tok=$(rl lock x)
	REDLOCK_HELD="x=someone-else" run -0 rl unlock --owner "$tok" x
	key_gone x
	key_gone 'redlock_holder:{x}'
}

@test "a REDLOCK_OWNER set by hand no longer makes lock or exec re-enter; unlock still reads it" {
	tok=$(rl lock x)
	REDLOCK_OWNER=$tok run -75 --separate-stderr rl lock -n x
	assert_output ""
	[[ $stderr == "redlock: x is busy: "* ]]
	REDLOCK_OWNER=$tok run -75 --separate-stderr rl exec -n x -- touch "$D/ran"
	[ ! -e "$D/ran" ]
	[ "$(rcli hlen x)" = 2 ]	# the owner and redlock's marker
	[ "$(rcli hget x "$tok")" = 1 ]
	REDLOCK_OWNER=$tok run -0 --separate-stderr rl lock y
	[ "$output" != "$tok" ]
	[ "$(rcli hget y "$output")" = 1 ]
	rl unlock --owner "$output" y
	REDLOCK_OWNER=$tok run -0 rl unlock x
	key_gone x
	key_gone y
}

@test "exec passes REDLOCK_HELD: inherited entries, then its own NAME=OWNER=KIND, once" {
	run -0 rl exec A -- sh -c 'echo "$REDLOCK_HELD"; echo "$REDLOCK_OWNER"'
	assert_line --index 0 "A=${lines[1]}=exclusive"
	REDLOCK_HELD="Z=zz" run -0 rl exec A -- sh -c 'echo "$REDLOCK_HELD $REDLOCK_OWNER"'
	assert_output --regexp '^Z=zz A=([0-9a-f-]{36}:[0-9]+)=exclusive \1$'
	# An entry for NAME names the hold this exec took: with --owner,
	# its token, and its kind.
	REDLOCK_HELD="A=stale=write Z=zz=shared" run -0 rl exec --owner T A -- sh -c 'echo "$REDLOCK_HELD"'
	assert_output "A=T=exclusive Z=zz=shared"
	# Without --owner, the entry's owner is the one acquired with; an
	# entry without a kind (redlock 0.1.0 wrote none) gets this hold's.
	# It only re-enters: where T holds nothing of A, nothing is taken.
	REDLOCK_HELD="Z=zz A=T" run -79 rl exec A -- true
	key_gone A
	run -0 rl lock --owner T A
	REDLOCK_HELD="Z=zz A=T" run -0 rl exec A -- sh -c '
	    echo "$REDLOCK_HELD"; redis-cli -p "$0" hget A T' "$R_PORT"
	assert_output "Z=zz A=T=exclusive
2"
	run -0 rl unlock --owner T A
	key_gone A
	run -0 rl lock -s --owner T A
	REDLOCK_HELD="Z=zz A=T" run -0 rl exec -s A -- sh -c 'echo "$REDLOCK_HELD"'
	assert_output "Z=zz A=T=shared"
	run -0 rl unlock --owner T A
	# A nested exec that re-enters keeps the kind the chain holds NAME
	# as: -s under --write takes a read hold, the chain still writes.
	run -0 rl lock --write --owner T A
	REDLOCK_HELD="A=T=write" run -0 rl exec -s A -- sh -c 'echo "$REDLOCK_HELD"'
	assert_output "A=T=write"
	run -0 rl unlock --owner T A
	key_gone A
	REDLOCK_HELD= run -0 rl exec --fair B -- sh -c 'echo "$REDLOCK_HELD"'
	assert_output --regexp '^B=[0-9a-f-]{36}:[0-9]+=exclusive$'
	REDLOCK_HELD= run -0 rl exec --write B -- sh -c 'echo "$REDLOCK_HELD"'
	assert_output --regexp '^B=[0-9a-f-]{36}:[0-9]+=write$'
	key_gone B
	REDLOCK_HELD= run -0 rl exec --limit 1 C -- sh -c 'echo "$REDLOCK_HELD"'
	assert_output --regexp '^C=[0-9a-f-]{36}:[0-9]+=limit$'
}

@test "REDLOCK_HELD %-encodes names and owners: spaces, '=', '%' and a newline round-trip to a re-entry" {
	name=$'a b=c%d\ne'
	own='tok with space=100%'
	run -0 --separate-stderr rl exec --owner "$own" "$name" -- "$RL" exec 'x y' -- sh -c '
	    printf "%s\n" "$REDLOCK_HELD"
	    "$0" lock -n "$1" || exit 1
	    redis-cli -p "$2" hget "$1" "$3"
	    "$0" unlock --owner "$3" "$1" || exit 2
	    redis-cli -p "$2" hget "$1" "$3"' "$RL" "$name" "$R_PORT" "$own"
	assert_line --index 0 --regexp '^a%20b%3Dc%25d%0Ae=tok%20with%20space%3D100%25=exclusive x%20y=[0-9a-f-]{36}:[0-9]+=exclusive$'
	assert_line --index 1 "$own"
	assert_line --index 2 2
	assert_line --index 3 1
	[ "${#lines[@]}" = 4 ]
	assert_equal "$stderr" ""
	key_gone "$name"
	key_gone 'x y'
}

@test "a malformed REDLOCK_HELD is a usage error (64) for lock, exec and unlock, and Redis is left as it was" {
	tok=$(rl lock -t 60s x)
	fence=$(rcli get 'redisson_lock_token:{x}')
	long=$(printf 'o%.0s' $(seq 1 257))
	while IFS='|' read -r bad why; do
		for cmd in "lock -n x" "lock -n y" "exec -n x -- touch $D/ran" \
		    "exec -n y -- touch $D/ran" "unlock x"; do
			# shellcheck disable=SC2086
			REDLOCK_HELD=${bad/LONG/$long} run -64 --separate-stderr rl $cmd
			assert_output ""
			[[ $stderr == "redlock: REDLOCK_HELD is malformed: entry 2 ("*") $why; redlock exec sets it for COMMAND: unset it rather than edit it" ]]
		done
	done <<-EOF
	x=$tok y|is not NAME=OWNER
	x=$tok  y=o|is not NAME=OWNER
	x=$tok y=%zz|has a bad %-escape
	x=$tok y=o%4|has a bad %-escape
	x=$tok y=o%00|has a bad %-escape
	x=$tok =o|has an empty NAME or OWNER
	x=$tok y=|has an empty NAME or OWNER
	x=$tok y=a%0Ab|has a control character in OWNER
	x=$tok y=a%7fb|has a control character in OWNER
	x=$tok y=LONG|has an OWNER longer than the --owner limit
	x=$tok y=o=|has a KIND that is not exclusive, shared, write or limit
	x=$tok y=o=read|has a KIND that is not exclusive, shared, write or limit
	x=$tok=exclusive y=o=exclusive=write|has a KIND that is not exclusive, shared, write or limit
	EOF
	[ ! -e "$D/ran" ]
	[ "$(rcli hlen x)" = 2 ]	# the owner and redlock's marker
	[ "$(rcli hget x "$tok")" = 1 ]
	[ "$(rcli get 'redisson_lock_token:{x}')" = "$fence" ]
	run -0 rcli keys '*'
	assert_equal "$(sort <<<"$output")" "redisson_lock_token:{x}
redlock_holder:{x}
redlock_log:{x}
x"
	# unlock --owner and --force do not read it.
	REDLOCK_HELD='x=%zz' run -0 rl unlock --owner "$tok" x
	key_gone x
	REDLOCK_HELD='x=%zz' run -1 --separate-stderr rl unlock --force x
	assert_equal "$stderr" "redlock: x was not held; nothing to delete"
}
