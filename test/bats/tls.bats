#!/usr/bin/env bats
# rediss://: TLS through OpenSSL against redis-server's own --tls-port.

load helpers

# cert NAME CA [SUBJECT-ALT-NAMES]: a P-256 key and a certificate signed by
# CA (self-signed when CA is "self"), in $CERTS.
cert() {
	local name=$1 ca=$2 san=${3:-}
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	    -keyout "$CERTS/$name.key" -out "$CERTS/$name.csr" \
	    -subj "/CN=$name" 2>/dev/null
	if [ "$ca" = self ]; then
		openssl x509 -req -in "$CERTS/$name.csr" -key "$CERTS/$name.key" \
		    -out "$CERTS/$name.crt" -days 2 2>/dev/null
		return
	fi
	[ -n "$san" ] && echo "subjectAltName=$san" >"$CERTS/$name.ext"
	openssl x509 -req -in "$CERTS/$name.csr" -CA "$CERTS/$ca.crt" \
	    -CAkey "$CERTS/$ca.key" -CAcreateserial -out "$CERTS/$name.crt" \
	    -days 2 ${san:+-extfile "$CERTS/$name.ext"} 2>/dev/null
}

# tls_args PORT AUTH-CLIENTS: redis-server's options for a TLS port.
tls_args() {
	echo --tls-port "$1" --tls-cert-file "$CERTS/server.crt" \
	    --tls-key-file "$CERTS/server.key" \
	    --tls-ca-cert-file "$CERTS/ca.crt" --tls-auth-clients "$2"
}

# start_tls VAR AUTH-CLIENTS [ARGS...]: a redis-server with a plain port
# (VAR_PORT, for redis-cli) and a TLS port (VAR_TLS).
start_tls() {
	local var=$1 auth=$2 port i
	shift 2
	# start_redis tries plain ports until one is free, but the TLS port
	# is chosen here: taken meanwhile by another test's server, it fails
	# every try ("Address already in use"). Another one, then.
	for i in 1 2 3 4 5; do
		port=$(free_port)
		# shellcheck disable=SC2046
		if start_redis "$var" $(tls_args "$port" "$auth") "$@" \
		    2>"$BATS_FILE_TMPDIR/start_tls.err"; then
			export "${var}_TLS=$port"
			return 0
		fi
		grep -q 'Address already in use' \
		    "$BATS_FILE_TMPDIR/start_tls.err" || break
	done
	cat "$BATS_FILE_TMPDIR/start_tls.err" >&2
	return 1
}

held_on() { [ "$(redis-cli -p "$1" exists "$2")" = 1 ]; }

setup_file() {
	export CERTS=$BATS_FILE_TMPDIR/certs
	mkdir -p "$CERTS"
	cert ca self
	cert server ca "DNS:localhost,IP:127.0.0.1"
	cert client ca
	cert other self
	start_tls R no
	start_tls M yes
}
teardown_file() {
	stop_redis "$R_PID"
	stop_redis "$M_PID"
}
setup() {
	epid=
	rcli flushall >/dev/null
	redis-cli -p "$M_PORT" flushall >/dev/null
}
# An exec a test left running when it failed (its watchdog ends with it).
teardown() {
	[ -z "$epid" ] || kill -9 "$epid" 2>/dev/null || :
}

tls() { "$RL" -u "rediss://127.0.0.1:$R_TLS" --cacert "$CERTS/ca.crt" "$@"; }

@test "server-authenticated TLS: exec, lock, status, queue and unlock over rediss://" {
	run -0 tls exec -t 5s job -- sh -c 'echo "fence $REDLOCK_FENCE"'
	assert_output --regexp '^fence [0-9]+$'
	tok=$(tls lock -t 30s job)
	# The same lock, seen on the server's plain port.
	[ "$(rcli hexists job "$tok")" = 1 ]
	run -0 tls status job
	assert_output --partial "job: held"
	run -0 tls queue job
	run -0 tls unlock --owner "$tok" job
	[ "$(rcli exists job)" = 0 ]
	# The host name is verified as well as the address.
	run -0 "$RL" -u "rediss://localhost:$R_TLS" --cacert "$CERTS/ca.crt" \
	    exec job -- true
	# REDLOCK_CACERT stands for --cacert.
	REDLOCK_CACERT=$CERTS/ca.crt run -0 "$RL" -u "rediss://127.0.0.1:$R_TLS" \
	    exec job -- true
}

@test "mutual TLS: a client certificate from --cert/--key or REDLOCK_CERT/REDLOCK_KEY; without one, a line that asks for it" {
	url="rediss://127.0.0.1:$M_TLS"
	run -0 "$RL" -u "$url" --cacert "$CERTS/ca.crt" --cert "$CERTS/client.crt" \
	    --key "$CERTS/client.key" exec -t 5s job -- true
	REDLOCK_CACERT=$CERTS/ca.crt REDLOCK_CERT=$CERTS/client.crt \
	    REDLOCK_KEY=$CERTS/client.key run -0 "$RL" -u "$url" lock -t 30s job
	[ "$(redis-cli -p "$M_PORT" exists job)" = 1 ]
	run -69 --separate-stderr "$RL" -u "$url" --cacert "$CERTS/ca.crt" exec job2 -- true
	assert_output ''
	# The server's alert, or its hang-up when the alert was lost.
	[[ $stderr == "redlock: lost connection to $url: "*"client certificate"*"give --cert and --key"* ]]
	[ "$(redis-cli -p "$M_PORT" exists job2)" = 0 ]
}

@test "a wrong CA exits 69 with a line naming the verification failure; --insecure skips it" {
	run -69 --separate-stderr "$RL" -u "rediss://127.0.0.1:$R_TLS" \
	    --cacert "$CERTS/other.crt" exec job -- echo ran
	assert_output ''
	[[ $stderr == "redlock: cannot connect to rediss://127.0.0.1:$R_TLS: TLS certificate verification failed: self-signed certificate in certificate chain; give the CA that signed the server's certificate with --cacert"* ]]
	# No CA given: the system's CAs do not know this one either.
	run -69 --separate-stderr "$RL" -u "rediss://127.0.0.1:$R_TLS" exec job -- true
	[[ $stderr == *"TLS certificate verification failed"* ]]
	# A name the certificate is not for.
	run -69 --separate-stderr tls --sni db.example exec job -- true
	[[ $stderr == *"TLS certificate verification failed: hostname mismatch: the certificate is not for db.example"* ]]
	[ "$(rcli exists job)" = 0 ]
	run -0 "$RL" -u "rediss://127.0.0.1:$R_TLS" --cacert "$CERTS/other.crt" \
	    --insecure exec job -- true
	run -0 tls --sni localhost exec job -- true
}

@test "a plain client on a TLS port and a TLS client on a plain port each get a clear line" {
	run -69 --separate-stderr "$RL" -u "redis://127.0.0.1:$R_TLS" exec job -- true
	[[ $stderr == "redlock: lost connection to redis://127.0.0.1:$R_TLS: "*"before any answer; if the port speaks TLS, use rediss://"* ]]
	t0=$(now_ms)
	run -69 --separate-stderr "$RL" -u "rediss://127.0.0.1:$R_PORT" \
	    --cacert "$CERTS/ca.crt" --connect-timeout 500ms exec job -- true
	t1=$(now_ms)
	[[ $stderr == "redlock: cannot connect to rediss://127.0.0.1:$R_PORT: timed out in the TLS handshake (see --connect-timeout); if the port is a plain one, use redis://"* ]]
	[ $((t1 - t0)) -lt 5000 ]
	[ "$(rcli exists job)" = 0 ]
}

@test "a TLS server that accepts but never answers the handshake: exit 69 after --connect-timeout" {
	start_tls S no
	kill -STOP "$S_PID"
	t0=$(now_ms)
	run -69 --separate-stderr "$RL" -u "rediss://127.0.0.1:$S_TLS" \
	    --cacert "$CERTS/ca.crt" --connect-timeout 500ms lock x
	t1=$(now_ms)
	kill -CONT "$S_PID"
	stop_redis "$S_PID"
	[[ $stderr == *"timed out in the TLS handshake"* ]]
	[ $((t1 - t0)) -lt 5000 ]
}

@test "the watchdog renews and releases on the TLS connection it acquired on: one handshake a run, past several leases" {
	rcli config resetstat >/dev/null
	run -0 tls exec -t 1s job -- sh -c 'sleep 2.5; echo done'
	assert_output done
	stats=$(rcli info all)
	conns=$(sed -n 's/^total_connections_received:\([0-9]*\).*/\1/p' <<<"$stats")
	scripts=$(sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),.*/\1/p' <<<"$stats")
	echo "connections $conns, evalsha $scripts" >&3
	# The watchdog's, which it acquired, renewed and released on, and
	# this INFO's.
	[ "$conns" = 2 ]
	# Acquire, release and renewals: 2.5 s of COMMAND on a 1 s lease.
	[ "$scripts" -ge 6 ]
	[ "$(rcli exists job)" = 0 ]
}

@test "a waiter over TLS is woken by the release, not by the lease running out" {
	local d=$BATS_TEST_TMPDIR
	tok=$(tls lock -t 60s job)
	tls exec -w 20s job -- echo ran >"$d/out" 2>"$d/err" 3>&- &
	epid=$!
	# Released once the waiter waits (however slow its start).
	wait_for 20 grep -q 'waiting for job' "$d/err"
	t0=$(now_ms)
	tls unlock --owner "$tok" job
	reap "$epid"
	t1=$(now_ms)
	epid=
	[ "$(cat "$d/out")" = ran ]
	[[ $(cat "$d/err") == "redlock: "20[0-9][0-9]-*"Z waiting for job: held by "* ]]
	# Pushed: well under a second; the lease (60 s) would be polled.
	[ $((t1 - t0)) -lt 12000 ]
}

@test "TLS options: unreadable files, --cert without --key and a key that is not the certificate's are usage errors" {
	run -64 --separate-stderr tls --cacert "$CERTS/none.crt" lock x
	assert_equal "$stderr" "redlock: cannot read --cacert $CERTS/none.crt: No such file or directory"
	run -64 --separate-stderr tls --cert "$CERTS/client.crt" lock x
	assert_equal "$stderr" "redlock: --cert and --key go together: give both for a client certificate, or neither"
	run -64 --separate-stderr tls --cert "$CERTS/client.crt" --key "$CERTS/other.key" lock x
	[[ $stderr == "redlock: cannot use --key $CERTS/other.key with --cert $CERTS/client.crt: "* ]]
	run -64 --separate-stderr tls --sni '' lock x
	[ "$(rcli dbsize)" = 0 ]
	# Plain URLs leave the TLS options alone.
	run -0 "$RL" -u "redis://127.0.0.1:$R_PORT" --cacert "$CERTS/none.crt" exec x -- true
}

@test "replies of many TLS records: status over rediss:// lists what the plain port lists" {
	long=$(printf 'n%.0s' $(seq 1 200))
	for i in $(seq 1 150); do
		"$RL" -u "redis://127.0.0.1:$R_PORT" lock -t 60s "$long-$i" >/dev/null
	done
	run -0 --separate-stderr tls status --json
	tls_names=$(jq -r '.[].name' <<<"$output" | sort)
	run -0 --separate-stderr "$RL" -u "redis://127.0.0.1:$R_PORT" status --json
	plain_names=$(jq -r '.[].name' <<<"$output" | sort)
	[ "$(wc -l <<<"$tls_names")" = 150 ]
	assert_equal "$tls_names" "$plain_names"
}

@test "a TLS server stopped mid-hold (SIGSTOP): COMMAND is terminated before the lease ends, exit 79" {
	start_tls S no
	"$RL" -u "rediss://127.0.0.1:$S_TLS" --cacert "$CERTS/ca.crt" \
	    exec -t 2s --kill-after 200ms job -- sleep 60 3>&- &
	ex=$!
	wait_for 10 held_on "$S_PORT" job
	sleep 0.8	# a renewal or two over TLS first
	kill -STOP "$S_PID"
	stopped=$(now_ms)
	status=0
	reap "$ex" || status=$?
	done_at=$(now_ms)
	kill -CONT "$S_PID"
	echo "exit $status $((done_at - stopped)) ms after the stop" >&3
	[ "$status" = 79 ]
	# Bounded: the handshakes of the renewals that follow hang on the
	# stopped server and are cut by the watchdog's deadlines (the timing
	# against the lease is watchdog.bats's, on plain TCP).
	[ $((done_at - stopped)) -lt 10000 ]
	stop_redis "$S_PID"
}

@test "a TLS server killed and restarted mid-hold: the watchdog reconnects over TLS and renewals go on" {
	# With an fsync'd append-only file the lock outlives kill -9.
	start_tls S no --appendonly yes --appendfsync always
	"$RL" -u "rediss://127.0.0.1:$S_TLS" --cacert "$CERTS/ca.crt" \
	    exec -t 3s job -- sleep 5 3>&- &
	ex=$!
	wait_for 10 held_on "$S_PORT" job
	kill -9 "$S_PID"
	# shellcheck disable=SC2046
	restart_redis S $(tls_args "$S_TLS" no) --appendonly yes --appendfsync always
	redis-cli -p "$S_PORT" config resetstat >/dev/null
	# COMMAND (5 s) outlives the lease (3 s): only renewals on the new
	# server keep it.
	status=0
	reap "$ex" || status=$?
	[ "$status" = 0 ]
	run -0 redis-cli -p "$S_PORT" info commandstats
	assert_output --regexp 'cmdstat_evalsha:calls=[3-9]|cmdstat_evalsha:calls=[1-9][0-9]|cmdstat_eval:calls='
	stop_redis "$S_PID"
}

@test "a nested redlock in COMMAND reaches the TLS server with the CA and client certificate of the outer one" {
	cd "$BATS_TEST_TMPDIR"
	cp "$CERTS/ca.crt" "$CERTS/client.crt" "$CERTS/client.key" .
	run -0 "$RL" -u "rediss://127.0.0.1:$M_TLS" --cacert ca.crt \
	    --cert client.crt --key client.key exec outer -- \
	    sh -c 'cd / && echo "$REDLOCK_CACERT" && "$0" exec inner -- echo inner ran' "$RL"
	assert_line --index 0 "$BATS_TEST_TMPDIR/ca.crt"
	assert_line --index 1 "inner ran"
}

@test "the system's CAs: a hashed SSL_CERT_DIR, and the SSL_CERT_FILE bundle when the directory lacks the issuer" {
	mkdir -p "$BATS_TEST_TMPDIR/ours" "$BATS_TEST_TMPDIR/others"
	cp "$CERTS/ca.crt" "$BATS_TEST_TMPDIR/ours/"
	cp "$CERTS/other.crt" "$BATS_TEST_TMPDIR/others/"
	openssl rehash "$BATS_TEST_TMPDIR/ours" "$BATS_TEST_TMPDIR/others"
	url="rediss://127.0.0.1:$R_TLS"
	SSL_CERT_FILE=/dev/null SSL_CERT_DIR=$BATS_TEST_TMPDIR/ours \
	    run -0 "$RL" -u "$url" exec job -- true
	# The directory does not have it: the bundle is read after all.
	SSL_CERT_FILE=$CERTS/ca.crt SSL_CERT_DIR=$BATS_TEST_TMPDIR/others \
	    run -0 "$RL" -u "$url" exec job -- true
	# Neither has it.
	SSL_CERT_FILE=$CERTS/other.crt SSL_CERT_DIR=$BATS_TEST_TMPDIR/others \
	    run -69 --separate-stderr "$RL" -u "$url" exec job -- true
	[[ $stderr == *"TLS certificate verification failed"* ]]
}

@test "over TLS: a pool's waiter woken by any name's release, --supersede, lock --extend" {
	t1=$(tls lock -t 60s p1)
	t2=$(tls lock -t 60s p2)
	(sleep 0.5; tls unlock --owner "$t2" p2) &
	upid=$!
	t0=$(now_ms)
	run -0 tls exec -q -w 20s --any p1 p2 -- sh -c 'echo $REDLOCK_NAME'
	t1_=$(now_ms)
	reap "$upid"
	assert_output p2
	# Pushed: about 0.5 s; the leases are 60 s.
	[ $((t1_ - t0)) -lt 5000 ]
	# --supersede: the older waiter gives up at once, naming the newer.
	tls exec -w 20s --supersede --label old p1 -- true \
	    2>"$BATS_TEST_TMPDIR/old.err" 3>&- &
	old=$!
	wait_for 10 eval '[ "$(rcli hlen "redlock_supersede:{p1}")" = 1 ]'
	tls exec -q -w 20s --supersede --label new p1 -- true 3>&- &
	new=$!
	st=0
	reap -t 10 "$old" || st=$?
	[ "$st" = 80 ]
	grep -q "superseded by .* (new)" "$BATS_TEST_TMPDIR/old.err"
	# extend of p1's hold, then unlock: the newer waiter runs.
	run -0 tls lock --owner "$t1" --extend 90s p1
	[ "$(rcli pttl p1)" -gt 80000 ]
	run -1 tls lock --owner "$t2" --extend 90s p1
	tls unlock --owner "$t1" p1
	reap -t 10 "$new"
}

@test "exec over TLS waits in its watchdog, on the one connection it holds with: kill -9 of redlock ends a fair wait at once" {
	D=$BATS_TEST_TMPDIR
	tok=$(tls lock -t 30s job)
	"$RL" -u "rediss://127.0.0.1:$R_TLS" --cacert "$CERTS/ca.crt" \
	    exec --fair -w 30s --waiter-timeout 30s job -- touch "$D/ran" 3>&- &
	epid=$!
	wait_for 10 eval '[ "$(rcli llen "redisson_lock_queue:{job}")" = 1 ]'
	wd=$(cat /proc/"$epid"/task/*/children)
	wd=${wd%% *}
	# Its TLS connection and subscription; redlock has none.
	[ "$(ls -l /proc/"$epid"/fd | grep -c socket:)" = 0 ]
	[ "$(ls -l /proc/"$wd"/fd | grep -c socket:)" = 2 ]
	kill -9 "$epid"
	wait "$epid" 2>/dev/null || :
	epid=
	wait_for 5 eval '[ "$(rcli llen "redisson_lock_queue:{job}")" = 0 ]'
	wait_for 5 dead "$wd"
	tls unlock --owner "$tok" job
	nap 0.3
	[ ! -e "$D/ran" ]
}
