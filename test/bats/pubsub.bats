#!/usr/bin/env bats
# --pubsub auto|sharded|classic and REDLOCK_PUBSUB: which pub/sub releases
# wake waiters with and waiters listen to, so that redlock and a Java
# service whose Redisson shards its channels, or does not, hear each other.
# A Redisson client is test/bats/redisson.py: classic (SUBSCRIBE, PUBLISH)
# as a Redisson with shardedSubscriptionMode OFF, or an older one, and
# --sharded (SSUBSCRIBE, SPUBLISH). Servers: a standalone Redis 7 (auto:
# classic), a cluster of three masters (auto: sharded), and a standalone
# server that knows neither HELLO nor sharded pub/sub, as one older than
# Redis 6.

load helpers

RSN=$BATS_TEST_DIRNAME/redisson.py

setup_file() {
	start_redis R
	start_redis O --rename-command HELLO '' --rename-command SPUBLISH '' \
	    --rename-command SSUBSCRIBE ''
	start_cluster 3 0
}
teardown_file() {
	stop_redis "$R_PID"
	stop_redis "$O_PID"
	stop_cluster
}
setup() {
	D=$BATS_TEST_TMPDIR
	: >"$D/events"
	U="redis://127.0.0.1:$C1_PORT"
	S="redis://127.0.0.1:$R_PORT"
	unset REDLOCK_PUBSUB
	rcli flushall >/dev/null
	redis-cli -p "$O_PORT" flushall >/dev/null
	for i in 1 2 3; do
		redis-cli -p "$(eval echo "\$C${i}_PORT")" flushall >/dev/null
	done
}

# The port of the cluster's master that serves NAME's slot.
owner() {
	local slot
	slot=$(redis-cli -p "$C1_PORT" cluster keyslot "$1")
	redis-cli -p "$C1_PORT" cluster nodes | awk -v s="$slot" '
	    $3 ~ /master/ && $3 !~ /fail/ {
		for (i = 9; i <= NF; i++) {
			if ($i ~ /^\[/) continue
			n = split($i, r, "-"); lo = r[1]; hi = n > 1 ? r[2] : r[1]
			if (s >= lo + 0 && s <= hi + 0) {
				split($2, a, "[:@]"); print a[2]; exit
			}
		}
	    }'
}

# Subscribers to NAME's channel on the server at PORT: classic
# (SUBSCRIBE) and sharded (SSUBSCRIBE).
plainsubs() {
	redis-cli -p "$1" pubsub numsub "redisson_lock__channel:{$2}" |
	    sed -n 2p
}
shardsubs() {
	redis-cli -p "$1" pubsub shardnumsub "redisson_lock__channel:{$2}" |
	    sed -n 2p
}
anysubs() { [ $(($(plainsubs "$1" "$2") + $(shardsubs "$1" "$2"))) -ge 1 ]; }

# When LABEL had EVENT (default: acquired), in ms since the epoch, from
# $D/events ("EVENT LABEL SECONDS").
when_ms() {
	awk -v l="$1" -v e="${2:-acquired}" \
	    '$1 == e && $2 == l { printf "%.0f\n", $3 * 1000; exit }' "$D/events"
}

# java_woken URL PORT NAME LABEL "JAVA" "REDLOCK": redlock (at URL, with
# the options REDLOCK) holds NAME with a 10 s lease while a Redisson
# client (at PORT, NAME's master; with the options JAVA) waits for it in
# tryLock, then unlocks it. Sets ms: from the start of the unlock to the
# Java client's acquisition, and woken: 1 when a message woke it (else it
# tried again when the lease it was told ran out).
java_woken() {
	local url=$1 port=$2 name=$3 label=$4 tok t0 jpid
	# shellcheck disable=SC2086
	tok=$("$RL" -u "$url" lock $6 -t 10s "$name")
	# shellcheck disable=SC2086
	python3 "$RSN" --port "$port" --label "$label" $5 lock "$name" \
	    --wait 30 >>"$D/events" 2>"$D/$label.err" 3>&- &
	jpid=$!
	wait_for 10 grep -qx "subscribed $label" "$D/events"
	t0=$(now_ms)
	# shellcheck disable=SC2086
	"$RL" -u "$url" unlock $6 --owner "$tok" "$name"
	reap -t 30 "$jpid"
	ms=$(($(when_ms "$label") - t0))
	woken=0
	! grep -q "^woken $label " "$D/events" || woken=1
}

# redlock_woken URL PORT NAME LABEL "JAVA" "REDLOCK": the other way round:
# a Redisson client holds NAME (a 10 s lease) while a redlock waiter
# (exec with REDLOCK) waits, and releases it once the waiter listens. Sets
# ms: from the Java client's release to redlock's COMMAND.
redlock_woken() {
	local url=$1 port=$2 name=$3 label=$4 id epid
	id="$(cat /proc/sys/kernel/random/uuid):7"
	# shellcheck disable=SC2086
	python3 "$RSN" --port "$port" $5 lock "$name" --lease 10000 --keep \
	    --id "$id" >/dev/null
	# A refresh of the waiter's place every 20 s: only a message, or the
	# lease it was told running out, makes it try again.
	# shellcheck disable=SC2086
	"$RL" -u "$url" exec $6 --waiter-timeout 60s -w 30s "$name" -- \
	    sh -c 'echo "acquired $0 $(date +%s.%N)"' "$label" \
	    >>"$D/events" 2>"$D/$label.err" 3>&- &
	epid=$!
	wait_for 10 anysubs "$port" "$name"
	# shellcheck disable=SC2086
	python3 "$RSN" --port "$port" --label "j$label" $5 unlock "$name" \
	    --id "$id" >>"$D/events"
	reap -t 30 "$epid"
	ms=$(($(when_ms "$label") - $(when_ms "j$label" released)))
}

@test "auto: classic pub/sub on a standalone Redis 7, sharded on a cluster" {
	name=job
	own=$(owner "$name")
	for url in "$S" "$U"; do
		tok=$("$RL" -u "$url" lock -t 30s "$name")
		"$RL" -u "$url" exec -w 20s "$name" -- true 3>&- &
		epid=$!
		port=${url##*:}
		[ "$url" = "$S" ] || port=$own
		wait_for 10 anysubs "$port" "$name"
		if [ "$url" = "$S" ]; then
			[ "$(plainsubs "$port" "$name")" = 1 ]
			[ "$(shardsubs "$port" "$name")" = 0 ]
		else
			[ "$(plainsubs "$port" "$name")" = 0 ]
			[ "$(shardsubs "$port" "$name")" = 1 ]
		fi
		run -0 "$RL" -u "$url" unlock --owner "$tok" "$name"
		reap "$epid"
	done
}

@test "cluster: --pubsub classic wakes a Redisson waiter on classic pub/sub at once; auto's SPUBLISH leaves it to its lease" {
	name=job
	own=$(owner "$name")
	java_woken "$U" "$own" "$name" j1 "" "--pubsub classic"
	echo "classic: the Redisson waiter acquired $ms ms after unlock began (lease 10 s)" >&3
	[ "$woken" = 1 ]
	[ "$ms" -lt 2000 ]
	java_woken "$U" "$own" "$name" j2 "" ""
	echo "auto: the Redisson waiter acquired $ms ms after unlock began, woken=$woken" >&3
	[ "$woken" = 0 ]
	[ "$ms" -gt 5000 ]
}

@test "cluster: a redlock waiter with --pubsub classic is woken at once by a Redisson release on classic pub/sub; with auto it is not" {
	name=job
	own=$(owner "$name")
	redlock_woken "$U" "$own" "$name" w1 "" "--pubsub classic"
	echo "classic: redlock acquired $ms ms after the Redisson release (lease 10 s)" >&3
	[ "$ms" -lt 2000 ]
	redlock_woken "$U" "$own" "$name" w2 "" ""
	echo "auto: redlock acquired $ms ms after the Redisson release" >&3
	[ "$ms" -gt 5000 ]
}

@test "standalone: --pubsub sharded and a Redisson client on sharded pub/sub wake each other; auto's classic does not" {
	java_woken "$S" "$R_PORT" job j1 --sharded "--pubsub sharded"
	echo "sharded: the Redisson waiter acquired $ms ms after unlock began (lease 10 s)" >&3
	[ "$woken" = 1 ]
	[ "$ms" -lt 2000 ]
	redlock_woken "$S" "$R_PORT" job w1 --sharded "--pubsub sharded"
	echo "sharded: redlock acquired $ms ms after the Redisson release (lease 10 s)" >&3
	[ "$ms" -lt 2000 ]
	java_woken "$S" "$R_PORT" job j2 --sharded ""
	echo "auto: the Redisson waiter acquired $ms ms after unlock began, woken=$woken" >&3
	[ "$woken" = 0 ]
	[ "$ms" -gt 5000 ]
}

@test "REDLOCK_PUBSUB=classic works as --pubsub classic, and the option wins over it" {
	name=job
	own=$(owner "$name")
	export REDLOCK_PUBSUB=classic
	java_woken "$U" "$own" "$name" j1 "" ""
	echo "REDLOCK_PUBSUB=classic: the Redisson waiter acquired $ms ms after unlock began (lease 10 s)" >&3
	[ "$woken" = 1 ]
	[ "$ms" -lt 2000 ]
	# What a waiter subscribes with, on the cluster: the option, else
	# the variable.
	for how in "classic -" "classic auto" "sharded classic" "auto classic"; do
		read -r env opt <<<"$how"
		export REDLOCK_PUBSUB=$env
		args=()
		[ "$opt" = - ] || args=(--pubsub "$opt")
		want=$opt
		[ "$opt" != - ] || want=$env
		tok=$("$RL" -u "$U" lock "${args[@]}" -t 30s "$name")
		"$RL" -u "$U" exec "${args[@]}" -w 20s "$name" -- true 3>&- &
		epid=$!
		wait_for 10 anysubs "$own" "$name"
		if [ "$want" = classic ]; then
			[ "$(plainsubs "$own" "$name")" = 1 ]
			[ "$(shardsubs "$own" "$name")" = 0 ]
		else
			[ "$(plainsubs "$own" "$name")" = 0 ]
			[ "$(shardsubs "$own" "$name")" = 1 ]
		fi
		run -0 "$RL" -u "$U" unlock "${args[@]}" --owner "$tok" "$name"
		reap "$epid"
	done
	# exec passes --pubsub on to COMMAND, for nested calls.
	unset REDLOCK_PUBSUB
	run -0 --separate-stderr "$RL" -u "$U" exec --pubsub classic "$name" -- \
	    sh -c 'echo "$REDLOCK_PUBSUB"'
	assert_output classic
}

# Connections the standalone server has taken so far.
conns() { rcli info stats | sed -n 's/^total_connections_received:\([0-9]*\).*/\1/p'; }

@test "bad --pubsub and REDLOCK_PUBSUB values are usage errors (64), and nothing is sent to Redis" {
	tok=$("$RL" -u "$S" lock -t 60s held)
	rcli set canary 1 >/dev/null
	before=$(rcli dbsize)
	c0=$(conns)
	for v in bogus '' SHARDED 'classic ' auto,classic shard; do
		for c in "lock x" "exec x -- touch $D/ran" "unlock --owner $tok held"; do
			read -ra argv <<<"$c"
			run -64 --separate-stderr "$RL" -u "$S" "${argv[0]}" \
			    --pubsub "$v" "${argv[@]:1}"
			[[ $stderr == "redlock: --pubsub: '$v' is not auto, sharded or classic; usage: redlock ${argv[0]} "* ]]
		done
	done
	for v in bogus SHARDED 'classic ' shard; do
		for c in "lock x" "exec x -- touch $D/ran" "unlock --owner $tok held"; do
			read -ra argv <<<"$c"
			REDLOCK_PUBSUB=$v run -64 --separate-stderr "$RL" -u "$S" \
			    "${argv[@]}"
			[[ $stderr == "redlock: REDLOCK_PUBSUB: '$v' is not auto, sharded or classic; fix it, or give --pubsub; usage: redlock ${argv[0]} "* ]]
		done
	done
	[ ! -e "$D/ran" ]
	# Not one connection: nothing was sent, nothing changed.
	[ "$(conns)" = $((c0 + 1)) ]
	[ "$(rcli dbsize)" = "$before" ]
	[ "$(rcli hexists held "$tok")" = 1 ]
	[ "$(rcli exists x)" = 0 ]
	# The option wins over a bad variable; an empty one is unset.
	REDLOCK_PUBSUB=bogus run -0 "$RL" -u "$S" exec --pubsub classic x -- true
	REDLOCK_PUBSUB= run -0 "$RL" -u "$S" exec x -- true
	REDLOCK_PUBSUB=bogus run -0 "$RL" -u "$S" unlock --pubsub auto --owner "$tok" held
}

@test "--pubsub sharded on a server without sharded pub/sub: one line, exit 69, nothing written" {
	O="redis://127.0.0.1:$O_PORT"
	ocli() { redis-cli -p "$O_PORT" "$@"; }
	want="redlock: $O does not know HELLO (older than Redis 6?): it has no sharded pub/sub (SPUBLISH, SSUBSCRIBE: Redis 7 and later), which --pubsub sharded needs; use --pubsub classic, or auto"
	ocli config resetstat >/dev/null
	run -69 --separate-stderr "$RL" -u "$O" lock --pubsub sharded x
	assert_equal "$stderr" "$want"
	assert_output ''
	run -69 --separate-stderr "$RL" -u "$O" exec --pubsub sharded x -- touch "$D/ran"
	assert_equal "$stderr" "$want"
	REDLOCK_PUBSUB=sharded run -69 --separate-stderr "$RL" -u "$O" lock x
	assert_equal "$stderr" "$want"
	[ ! -e "$D/ran" ]
	[ "$(ocli dbsize)" = 0 ]
	# Nothing but the HELLOs that were refused ran there.
	[[ "$(ocli info commandstats)" != *evalsha* ]]
	[[ "$(ocli info commandstats)" != *cmdstat_eval:* ]]
	# A lock held there (classic: the default on a single server) is
	# not released by an unlock that asks for sharded pub/sub.
	tok=$("$RL" -u "$O" lock -t 60s x)
	run -69 --separate-stderr "$RL" -u "$O" unlock --pubsub sharded --owner "$tok" x
	assert_equal "$stderr" "$want"
	[ "$(ocli hexists x "$tok")" = 1 ]
	run -0 "$RL" -u "$O" unlock --pubsub classic --owner "$tok" x
	[ "$(ocli exists x)" = 0 ]
}

@test "--pubsub sharded where HELLO is refused for want of a password: the authentication message, as without it" {
	rcli config set requirepass sekrit >/dev/null
	st=0
	"$RL" -u "$S" lock --pubsub sharded x 2>"$D/err" || st=$?
	redis-cli -p "$R_PORT" -a sekrit --no-auth-warning \
	    config set requirepass '' >/dev/null
	[ "$st" = 69 ]
	assert_equal "$(cat "$D/err")" "redlock: $S requires authentication: give the password in the URL or in REDLOCK_PASSWORD"
	[ "$(rcli exists x)" = 0 ]
}

@test "--pubsub classic sends no HELLO, so unlock waits for none; sharded sends it first; one EVALSHA does the work either way" {
	tok=$("$RL" -u "$S" lock warm) && "$RL" -u "$S" unlock --owner "$tok" warm
	# (INFO memory, behind the handshake, asks whether the server may
	# evict a lock; nothing waits for it.)
	run -0 toplevel "$RL" -u "$S" lock --pubsub classic -t 30s y
	assert_output $'INFO\nEVALSHA'
	tok=$(rcli hkeys y | head -n 1)
	run -0 toplevel "$RL" -u "$S" unlock --pubsub classic --owner "$tok" y
	assert_output EVALSHA
	[ "$(rcli exists y)" = 0 ]
	run -0 toplevel "$RL" -u "$S" lock --pubsub sharded -t 30s z
	assert_output $'HELLO\nINFO\nEVALSHA'
	tok=$(rcli hkeys z | head -n 1)
	run -0 toplevel "$RL" -u "$S" unlock --pubsub sharded --owner "$tok" z
	assert_output $'HELLO\nEVALSHA'
	[ "$(rcli exists z)" = 0 ]
}

# java_waits PORT NAME LABEL: a Redisson client on classic pub/sub waits
# for NAME in tryLock (30 s) in the background ($jpid), subscribed when
# this returns.
java_waits() {
	python3 "$RSN" --port "$1" --label "$3" lock "$2" --wait 30 \
	    >>"$D/events" 2>"$D/$3.err" 3>&- &
	jpid=$!
	wait_for 10 grep -qx "subscribed $3" "$D/events"
}

@test "cluster: the releases of exec's watchdog and of lock --keepalive's use --pubsub classic too: a Redisson waiter on classic pub/sub is woken at once" {
	name=job
	own=$(owner "$name")
	"$RL" -u "$U" exec --pubsub classic -t 10s "$name" -- sh -c \
	    'touch "$0/held"; while [ ! -e "$0/done" ]; do sleep 0.05; done' \
	    "$D" 3>&- &
	epid=$!
	wait_for 10 test -e "$D/held"
	java_waits "$own" "$name" j1
	t0=$(now_ms)
	touch "$D/done"
	reap -t 30 "$jpid" "$epid"
	ms=$(($(when_ms j1) - t0))
	echo "exec: the Redisson waiter acquired $ms ms after COMMAND was told to end (lease 10 s)" >&3
	grep -q '^woken j1 ' "$D/events"
	[ "$ms" -lt 2000 ]
	# lock --keepalive: its watchdog releases when the process it
	# watches ends.
	sleep 60 3>&- &
	spid=$!
	run -0 --separate-stderr "$RL" -u "$U" lock --pubsub classic \
	    --keepalive --pid "$spid" -t 10s "$name"
	java_waits "$own" "$name" j2
	t0=$(now_ms)
	kill "$spid"
	reap -t 30 "$jpid"
	ms=$(($(when_ms j2) - t0))
	echo "lock --keepalive: the Redisson waiter acquired $ms ms after the watched process was killed (lease 10 s)" >&3
	grep -q '^woken j2 ' "$D/events"
	[ "$ms" -lt 2000 ]
}
