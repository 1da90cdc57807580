#!/usr/bin/env bats
# Leases: a hold of the same owner may lengthen the lease of a name, never
# cut it (re-entry, renewal, partial release), on one master and on three.

load helpers

setup_file() {
	for m in M1 M2 M3; do start_redis "$m"; done
	export ONE="redis://127.0.0.1:$M1_PORT"
	export THREE="redis://127.0.0.1:$M1_PORT,redis://127.0.0.1:$M2_PORT,redis://127.0.0.1:$M3_PORT"
}
teardown_file() {
	for m in M1 M2 M3; do stop_redis "$(pid_of "$m")"; done
}
setup() {
	D=$BATS_TEST_TMPDIR
	for m in M1 M2 M3; do mcli "$m" flushall >/dev/null; done
}

mcli() { local m=$1; shift; redis-cli -p "$(eval echo "\$${m}_PORT")" "$@"; }

# The smallest lease left of key $1 on the masters listed in $2.
min_pttl() {
	local min= m t
	for m in $2; do
		t=$(mcli "$m" pttl "$1")
		[ -z "$min" ] || [ "$t" -lt "$min" ] && min=$t
	done
	echo "$min"
}

# check_nested URL MASTERS: exec -t 60s nest, whose COMMAND re-enters nest
# with 1 s leases (an exec that renews, a lock, a partial unlock) and
# records the shortest lease left on MASTERS after each; then no second
# holder may get in, past every 1 s lease.
check_nested() {
	local mon=()
	export RL D URL=$1 PORTS=
	for m in $2; do PORTS="$PORTS $(eval echo "\$${m}_PORT")"; done
	# What each master is sent, to show should one keep a hold.
	for m in $2; do
		mcli "$m" monitor >"$D/monitor.$m" 2>&1 3>&- &
		mon+=($!)
	done
	for m in $2; do wait_for 5 grep -q OK "$D/monitor.$m"; done
	"$RL" -u "$1" exec -t 60s nest -- sh -c '
	    rl() { "$RL" -u "$URL" "$@"; }
	    left() { for p in $PORTS; do redis-cli -p "$p" pttl nest; done | sort -n | head -n 1 >"$D/$1"; }
	    rl exec -t 1s nest -- sleep 0.5 || exit 9
	    left exec
	    tok=$(rl lock -t 1s nest) || exit 8
	    left lock
	    rl unlock --owner "$tok" nest || exit 7
	    left unlock
	    i=0
	    while [ ! -e "$D/go" ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i + 1)); done
	    ' 3>&- &
	outer=$!
	wait_for 20 test -s "$D/unlock"
	for step in exec lock unlock; do
		echo "after the nested $step: lease $(cat "$D/$step") ms left" >&3
		[ "$(cat "$D/$step")" -gt 50000 ]
	done
	# Past every 1 s lease the nested holds asked for: still held.
	sleep 1.5
	[ "$(min_pttl nest "$2")" -gt 50000 ]
	run -75 --separate-stderr "$RL" -u "$1" exec -n nest -- echo SECOND
	refute_output SECOND
	touch "$D/go"
	reap "$outer"
	# What a master kept, if one did: its holds and lease left.
	kill "${mon[@]}"
	wait "${mon[@]}" 2>/dev/null || :
	for m in $2; do
		echo "$m after the release: $(mcli "$m" hgetall nest | tr '\n' ' ')pttl $(mcli "$m" pttl nest)" >&3
	done
	for m in $2; do
		[ "$(mcli "$m" exists nest)" = 0 ] && continue
		for m in $2; do
			echo "$m was sent:" >&3
			grep -v '"pttl"\|"hgetall"\|"exists"' "$D/monitor.$m" |
			    cut -c 1-300 >&3
		done
		return 1
	done
}

@test "one master: nested holds with a 1 s --ttl never shorten the outer 60 s lease" {
	check_nested "$ONE" M1
}

@test "three masters: nested holds with a 1 s --ttl never shorten the outer 60 s lease" {
	check_nested "$THREE" "M1 M2 M3"
}

@test "a longer nested --ttl lengthens the lease, and a renewal of the outer hold keeps it" {
	export RL D URL=$ONE
	"$RL" -u "$ONE" exec -t 900ms nest -- sh -c '
	    "$RL" -u "$URL" exec -t 60s nest -- true || exit 9
	    touch "$D/inner-done"
	    i=0
	    while [ ! -e "$D/go" ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i + 1)); done
	    ' 3>&- &
	outer=$!
	wait_for 20 test -e "$D/inner-done"
	# The outer watchdog renews every 300 ms with 900 ms: never down.
	sleep 1
	[ "$(mcli M1 pttl nest)" -gt 55000 ]
	touch "$D/go"
	reap "$outer"
	[ "$(mcli M1 exists nest)" = 0 ]
}
