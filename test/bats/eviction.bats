#!/usr/bin/env bats
# A server whose maxmemory-policy may evict a held lock: exec and lock say
# so once, on stderr, naming the server and the policy, and go on.

load helpers

setup_file() {
	start_redis LRU --maxmemory 50mb --maxmemory-policy allkeys-lru
	start_redis VOL --maxmemory 50mb --maxmemory-policy volatile-lru
	start_redis SAFE --maxmemory 50mb --maxmemory-policy noeviction
	# No maxmemory: the policy never applies.
	start_redis NOMAX --maxmemory 0 --maxmemory-policy allkeys-lru
	redis-cli -p "$LRU_PORT" acl setuser noinfo on '>pw' '~*' '&*' \
	    '+@all' '-info' >/dev/null
}
teardown_file() {
	local v
	for v in LRU VOL SAFE NOMAX; do stop_redis "$(eval echo "\$${v}_PID")"; done
}
setup() {
	D=$BATS_TEST_TMPDIR
	local v
	for v in LRU VOL SAFE NOMAX; do
		redis-cli -p "$(eval echo "\$${v}_PORT")" flushall >/dev/null
	done
}

# The warning about the server at PORT with POLICY.
warning() {
	echo "redlock: warning: redis://127.0.0.1:$1 has maxmemory-policy $2: it may evict a held lock (another holder then runs beside this one); set maxmemory-policy noeviction"
}
# How many lines of stderr warn of eviction.
warnings() { grep -c 'maxmemory-policy' <<<"$stderr" || :; }

@test "allkeys-lru with a maxmemory: exec warns once, naming the server, the policy and noeviction, and runs COMMAND" {
	run -0 --separate-stderr "$RL" -u "redis://127.0.0.1:$LRU_PORT" exec x -- echo ran
	assert_output ran
	[ "$(warnings)" = 1 ]
	[ "$stderr" = "$(warning "$LRU_PORT" allkeys-lru)" ]
	[ "$(redis-cli -p "$LRU_PORT" exists x)" = 0 ]
}

@test "volatile-lru with a maxmemory: a lease is an expiry, so exec warns too" {
	run -0 --separate-stderr "$RL" -u "redis://127.0.0.1:$VOL_PORT" exec x -- true
	[ "$stderr" = "$(warning "$VOL_PORT" volatile-lru)" ]
}

@test "noeviction, or no maxmemory whatever the policy: no warning" {
	run -0 --separate-stderr "$RL" -u "redis://127.0.0.1:$SAFE_PORT" exec x -- true
	[ "$stderr" = "" ]
	run -0 --separate-stderr "$RL" -u "redis://127.0.0.1:$NOMAX_PORT" exec x -- true
	[ "$stderr" = "" ]
	tok=$("$RL" -u "redis://127.0.0.1:$NOMAX_PORT" lock x 2>"$D/err")
	[ ! -s "$D/err" ]
	"$RL" -u "redis://127.0.0.1:$NOMAX_PORT" unlock --owner "$tok" x
}

@test "lock warns once too, with -q, and so does lock --keepalive (its keeper says nothing)" {
	run -0 --separate-stderr "$RL" -u "redis://127.0.0.1:$LRU_PORT" lock -q -t 10s x
	tok=$output
	[ "$stderr" = "$(warning "$LRU_PORT" allkeys-lru)" ]
	run -0 "$RL" -u "redis://127.0.0.1:$LRU_PORT" unlock --owner "$tok" x
	# The keeper renews (its connection killed once: it connects
	# again) and releases at unlock, and never warns: its stderr is
	# the caller's, kept in a file.
	"$RL" -u "redis://127.0.0.1:$LRU_PORT" lock --keepalive -t 900ms y \
	    >"$D/tok" 2>"$D/err"
	tok=$(cat "$D/tok")
	n0=$(evalshas)
	redis-cli -p "$LRU_PORT" client kill type normal >/dev/null
	# Renewed twice since: once at least on a new connection.
	wait_for 10 eval '[ "$(evalshas)" -ge $((n0 + 2)) ]'
	run -0 "$RL" -u "redis://127.0.0.1:$LRU_PORT" unlock --owner "$tok" y
	wait_for 10 key_gone_lru y
	[ "$(grep -c maxmemory-policy "$D/err")" = 1 ]
	grep -qxF "$(warning "$LRU_PORT" allkeys-lru)" "$D/err"
}
key_gone_lru() { [ "$(redis-cli -p "$LRU_PORT" exists "$1")" = 0 ]; }
evalshas() {
	redis-cli -p "$LRU_PORT" info commandstats |
	    sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),.*/\1/p'
}

@test "an exec whose watchdog connects again (its connection killed) still warns once" {
	run -0 --separate-stderr "$RL" -u "redis://127.0.0.1:$LRU_PORT" exec -t 900ms x -- \
	    sh -c '
		cli() { redis-cli -p "$0" "$@"; }
		# The watchdog: the client whose last command was EVALSHA.
		wd() { cli client list | sed -n "s/^id=\([0-9]*\) .* cmd=evalsha .*/\1/p" | head -n 1; }
		i=0
		while [ -z "$(wd)" ]; do
			i=$((i + 1)); [ $i -lt 200 ] || exit 3; sleep 0.05
		done
		old=$(wd)
		cli client kill id "$old" >/dev/null
		# Renewed on its new connection.
		i=0
		while id=$(wd); [ -z "$id" ] || [ "$id" = "$old" ]; do
			i=$((i + 1)); [ $i -lt 200 ] || exit 4; sleep 0.05
		done
		echo renewed again' "$LRU_PORT"
	assert_output 'renewed again'
	[ "$(warnings)" = 1 ]
	[ "$stderr" = "$(warning "$LRU_PORT" allkeys-lru)" ]
}

@test "an ACL user that may not run INFO: no warning and no failure" {
	run -0 --separate-stderr "$RL" -u "redis://noinfo:pw@127.0.0.1:$LRU_PORT" exec x -- echo ran
	assert_output ran
	[ "$stderr" = "" ]
	run -0 --separate-stderr "$RL" -u "redis://noinfo:pw@127.0.0.1:$LRU_PORT" lock -t 5s x
	[ "$stderr" = "" ]
}

@test "several masters: one warning per master that may evict, each once; a pool of names on them warns once per master" {
	run -0 --separate-stderr "$RL" -u "redis://127.0.0.1:$LRU_PORT" \
	    -u "redis://127.0.0.1:$SAFE_PORT" -u "redis://127.0.0.1:$VOL_PORT" \
	    exec x -- true
	[ "$(warnings)" = 2 ]
	grep -qxF "$(warning "$LRU_PORT" allkeys-lru)" <<<"$stderr"
	grep -qxF "$(warning "$VOL_PORT" volatile-lru)" <<<"$stderr"
	"$RL" -u "redis://127.0.0.1:$LRU_PORT" lock -t 10s a >/dev/null 2>&1
	run -0 --separate-stderr "$RL" -u "redis://127.0.0.1:$LRU_PORT" exec --any a b c -- true
	[ "$stderr" = "$(warning "$LRU_PORT" allkeys-lru)" ]
}

@test "status and unlock do not warn: they hold nothing" {
	tok=$("$RL" -u "redis://127.0.0.1:$LRU_PORT" lock -t 10s x 2>/dev/null)
	run -0 --separate-stderr "$RL" -u "redis://127.0.0.1:$LRU_PORT" status x
	[ "$stderr" = "" ]
	run -0 --separate-stderr "$RL" -u "redis://127.0.0.1:$LRU_PORT" unlock --owner "$tok" x
	[ "$stderr" = "" ]
}

@test "through Sentinel: the warning names the redis+sentinel:// URL" {
	python3 "$BATS_TEST_DIRNAME/fake_sentinel.py" answer "$LRU_PORT" >"$D/fake" 3>&- &
	fpid=$!
	wait_for 5 grep -q ready "$D/fake"
	fport=$(sed -n 's/^ready //p' "$D/fake")
	run -0 --separate-stderr "$RL" -u "redis+sentinel://127.0.0.1:$fport/mymaster" exec --replicas 0 x -- true
	kill "$fpid" 2>/dev/null || :
	[ "$stderr" = "redlock: warning: redis+sentinel://127.0.0.1:$fport/mymaster has maxmemory-policy allkeys-lru: it may evict a held lock (another holder then runs beside this one); set maxmemory-policy noeviction" ]
}

@test "what the warning is about: allkeys-lru evicts a held lock under memory pressure, and a second holder gets the name" {
	start_redis E --maxmemory 3mb --maxmemory-policy allkeys-lru
	tok=$("$RL" -u "redis://127.0.0.1:$E_PORT" lock -t 60s x 2>"$D/err")
	grep -q 'maxmemory-policy allkeys-lru' "$D/err"
	[ "$(redis-cli -p "$E_PORT" hexists x "$tok")" = 1 ]
	# Fill the database past maxmemory, touching every key but x, so
	# that x is the least recently used.
	head -c 200000 /dev/zero | tr '\0' a >"$D/blob"
	for i in $(seq 1 40); do
		redis-cli -p "$E_PORT" -x set "fill$i" <"$D/blob" >/dev/null
		[ "$(redis-cli -p "$E_PORT" exists x)" = 1 ] || break
	done
	stop=$(redis-cli -p "$E_PORT" exists x)
	run -0 --separate-stderr "$RL" -u "redis://127.0.0.1:$E_PORT" lock -n -t 60s x
	stop_redis "$E_PID"
	[ "$stop" = 0 ]
	[ "$output" != "$tok" ]
}
