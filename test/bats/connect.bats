#!/usr/bin/env bats
# URLs, authentication, databases, timeouts and unreachable servers.

load helpers

setup_file() {
	start_redis R
	start_redis A --requirepass s3cret
	redis-cli -p "$A_PORT" -a s3cret --no-auth-warning \
	    acl setuser alice on '>alicepw' '~*' '&*' '+@all' >/dev/null
}
teardown_file() {
	stop_redis "$R_PID"
	stop_redis "$A_PID"
}
setup() {
	rcli flushall >/dev/null
	redis-cli -p "$A_PORT" -a s3cret --no-auth-warning flushall >/dev/null
}
acli() { redis-cli -p "$A_PORT" -a s3cret --no-auth-warning "$@"; }
# The fake servers a test started (answer, below).
teardown() {
	# shellcheck disable=SC2086
	[ -z "${apid-}" ] || kill $apid 2>/dev/null || :
}

@test "nothing listening: exit 69 at once, not after --connect-timeout, naming the URL without its password" {
	port=$(free_port)
	t0=$(now_ms)
	run -69 --separate-stderr "$RL" --connect-timeout 20s \
	    -u "redis://bob:hunter2@127.0.0.1:$port" lock x
	t1=$(now_ms)
	echo "gave up after $((t1 - t0)) ms" >&3
	# A refused connection is final: waiting out the 20 s would show.
	[ $((t1 - t0)) -lt 3000 ]
	[[ $stderr == "redlock: cannot connect to redis://bob@127.0.0.1:$port: Connection refused"* ]]
	[[ $stderr != *hunter2* ]]
	assert_output ''
}

@test "a server that does not answer: exit 69 after --reply-timeout, not the 20 s --connect-timeout" {
	start_redis S
	kill -STOP "$S_PID"
	t0=$(now_ms)
	run -69 --separate-stderr "$RL" --connect-timeout 20s --reply-timeout 500ms \
	    -u "redis://127.0.0.1:$S_PORT" lock x
	t1=$(now_ms)
	stop_redis "$S_PID"
	echo "gave up after $((t1 - t0)) ms" >&3
	[ $((t1 - t0)) -ge 500 ]
	[ $((t1 - t0)) -lt $((500 + 2500)) ]
	[[ $stderr == *"redis://127.0.0.1:$S_PORT: timed out"* ]]
}

@test "a connect that hangs: exit 69 after --connect-timeout, not the 20 s --reply-timeout" {
	# A listening socket that never accepts, with its backlog full, keeps
	# new connections in SYN_SENT: connect(2) itself has to time out.
	command -v python3 >/dev/null || skip "python3 is needed for the listener"
	port=$(free_port)
	python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(0)
fill = []
for _ in range(8):
    c = socket.socket(); c.setblocking(False)
    try: c.connect(("127.0.0.1", int(sys.argv[1])))
    except BlockingIOError: pass
    fill.append(c)
print("ready", flush=True)
time.sleep(20)
' "$port" >"$BATS_TEST_TMPDIR/listener" 3>&- &
	lpid=$!
	wait_for 5 grep -q ready "$BATS_TEST_TMPDIR/listener"
	t0=$(now_ms)
	run -69 --separate-stderr "$RL" --connect-timeout 300ms --reply-timeout 20s \
	    -u "redis://127.0.0.1:$port" lock x
	t1=$(now_ms)
	kill "$lpid"
	echo "gave up after $((t1 - t0)) ms: $stderr" >&3
	[ $((t1 - t0)) -ge 300 ]
	[ $((t1 - t0)) -lt $((300 + 2500)) ]
	[[ $stderr == *"timed out"* ]]
}

@test "password in the URL, in REDLOCK_PASSWORD, and an ACL user" {
	run -0 "$RL" -u "redis://:s3cret@127.0.0.1:$A_PORT" lock x
	REDLOCK_PASSWORD=s3cret run -0 "$RL" -u "redis://127.0.0.1:$A_PORT" lock y
	run -0 "$RL" -u "redis://alice:alicepw@127.0.0.1:$A_PORT" lock z
	[ "$(acli exists x y z)" = 3 ]
}

@test "a wrong password or none: exit 69 with an authentication message" {
	run -69 --separate-stderr "$RL" -u "redis://:wrong@127.0.0.1:$A_PORT" lock x
	[[ $stderr == *"authentication to redis://127.0.0.1:$A_PORT refused"* ]]
	[[ $stderr != *wrong* ]] || [[ $stderr == *WRONGPASS* ]]
	run -69 --separate-stderr "$RL" -u "redis://alice:nope@127.0.0.1:$A_PORT" lock x
	[[ $stderr == *"authentication to redis://alice@127.0.0.1:$A_PORT refused"* ]]
	[[ $stderr != *nope* ]]
	run -69 --separate-stderr "$RL" -u "redis://127.0.0.1:$A_PORT" lock x
	[[ $stderr == *"requires authentication"* ]]
	[ "$(acli dbsize)" = 0 ]
}

@test "a password given to a server that has none: the lock is taken, and only -v says that AUTH was refused" {
	# Redis and Valkey refuse AUTH when no password is set ("ERR AUTH
	# <password> called without any password configured for the
	# default user..."): nothing to open, so redlock goes on without it.
	REDLOCK_PASSWORD=s3cret run -0 --separate-stderr "$RL" \
	    -u "redis://127.0.0.1:$R_PORT" lock x
	assert_equal "$stderr" ''
	[ "$(rcli exists x)" = 1 ]
	REDLOCK_PASSWORD=s3cret run -0 --separate-stderr "$RL" \
	    -u "redis://127.0.0.1:$R_PORT" status x
	assert_equal "$stderr" ''
	run -0 --separate-stderr "$RL" -u "redis://:s3cret@127.0.0.1:$R_PORT" \
	    exec -v y -- true
	[ "$(grep -c 'AUTH' <<<"$stderr")" = 1 ]
	[[ $stderr == *"redis://127.0.0.1:$R_PORT has no password set and refused AUTH: went on without it (the password given is not needed)"* ]]
	[[ $stderr != *s3cret* ]]
	[ "$(rcli exists y)" = 0 ]
	# An ACL user that does not exist is refused, as before.
	run -69 --separate-stderr "$RL" -u "redis://bob:pw@127.0.0.1:$R_PORT" lock z
	[[ $stderr == *"authentication to redis://bob@127.0.0.1:$R_PORT refused (WRONGPASS "* ]]
}

# answer REPLY: test/bats/answer.py on a free port ($port), answering
# every command with REPLY; its pid in $apid.
answer() {
	port=$(free_port)
	python3 "$BATS_TEST_DIRNAME/answer.py" "$port" "$1" \
	    >"$BATS_TEST_TMPDIR/answer" 3>&- &
	apid=$!
	wait_for 5 grep -q ready "$BATS_TEST_TMPDIR/answer"
}

@test "a server's message too long to quote whole is cut between words, with an ellipsis" {
	long="MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error."
	answer "-$long\r\n"
	run -69 --separate-stderr "$RL" -u "redis://127.0.0.1:$port" lock x
	# What is quoted is the message's first words, whole, then "…".
	quoted=${stderr#*(}
	quoted=${quoted%%): *}
	[[ $quoted == *… ]]
	quoted=${quoted%…}
	[[ $long == "$quoted "* ]]
	[ "${#quoted}" -le 160 ]
	[[ $stderr == *"): the server cannot save to disk and refuses writes"* ]]
}

@test "a port that does not speak Redis (an HTTP server): exit 69 asking whether it is a Redis server, not 70" {
	answer 'HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'
	for cmd in "status" "status x" "lock -n x" "unlock --force x"; do
		# shellcheck disable=SC2086
		run -69 --separate-stderr "$RL" -u "redis://127.0.0.1:$port" $cmd
		assert_equal "$stderr" "redlock: redis://127.0.0.1:$port answered something that is not the Redis protocol (Protocol error, got \"H\" as reply type byte): is this a Redis server? check the URL"
	done
	# Python's own HTTP server, which answers the first command's first
	# line (HTTP/0.9: an HTML page, no status line).
	port=$(free_port)
	python3 -m http.server "$port" --bind 127.0.0.1 \
	    >"$BATS_TEST_TMPDIR/http" 2>&1 3>&- &
	apid="$apid $!"
	wait_for 5 bash -c "exec 9<>/dev/tcp/127.0.0.1/$port" 2>/dev/null
	run -69 --separate-stderr "$RL" -u "redis://127.0.0.1:$port" exec -w 2s x -- true
	[[ $stderr == *"answered something that is not the Redis protocol"*"is this a Redis server?"* ]]
	[[ $stderr != *"please report"* ]]
}

@test "nothing at the default URL (no -u, no REDLOCK_URL): the message says it is the default and how to choose another" {
	# A network namespace of its own: port 6379 of this host is never
	# touched.
	unshare -rn true 2>/dev/null || skip "unshare -rn is not permitted here"
	inns() { unshare -rn sh -c 'ip link set lo up 2>/dev/null; "$@"' sh "$@"; }
	run -69 --separate-stderr inns env -u REDLOCK_URL "$RL" status x
	assert_equal "$stderr" "redlock: cannot connect to redis://127.0.0.1:6379 (the default: set REDLOCK_URL or give -u URL): Connection refused; check that the server is up"
	# An empty REDLOCK_URL is a mistake (a crontab's REDLOCK_URL=$X with
	# X unset), not the default.
	REDLOCK_URL= run -64 --separate-stderr inns "$RL" lock x
	[[ $stderr == "redlock: REDLOCK_URL is set but empty"* ]]
	# Chosen, even as the default's address, it is not called the default.
	REDLOCK_URL=redis://127.0.0.1:6379 run -69 --separate-stderr inns "$RL" status x
	assert_equal "$stderr" "redlock: cannot connect to redis://127.0.0.1:6379: Connection refused; check --url and that the server is up"
	run -69 --separate-stderr inns env -u REDLOCK_URL "$RL" -u redis://127.0.0.1:6379 status x
	assert_equal "$stderr" "redlock: cannot connect to redis://127.0.0.1:6379: Connection refused; check --url and that the server is up"
}

@test "a database number selects the database, once per connection" {
	tok=$("$RL" -u "redis://127.0.0.1:$R_PORT/3" lock x)
	[ "$(rcli -n 3 hget x "$tok")" = 1 ]
	[ "$(rcli -n 0 exists x)" = 0 ]
	REDLOCK_URL="redis://127.0.0.1:$R_PORT/3" run -0 "$RL" status x
	# HELLO and INFO memory (may the server evict a lock?) follow
	# them; no acquisition waits for their replies.
	run -0 toplevel "$RL" -u "redis://127.0.0.1:$R_PORT/3" lock y
	assert_output $'SELECT\nHELLO\nINFO\nEVALSHA'
}

@test "AUTH and SELECT are the only round trips added to one EVALSHA" {
	acli config resetstat >/dev/null
	"$RL" -u "redis://:s3cret@127.0.0.1:$A_PORT/2" lock x >/dev/null
	# redis-cli's own AUTH for INFO is the second auth call.
	stats=" $(acli info commandstats | sed -n 's/^cmdstat_\([a-z]*\):calls=\([0-9]*\),.*/\1=\2/p' | tr '\n' ' ')"
	[[ $stats == *" auth=2 "* ]]
	[[ $stats == *" select=1 "* ]]
	[[ $stats == *" hello=1 "* ]]
	[[ $stats == *" evalsha=1 "* ]]
	[[ $stats != *" eval="* ]]
}

@test "a unix socket URL with a database" {
	start_redis U --unixsocket "$BATS_FILE_TMPDIR/r.sock" --unixsocketperm 700
	tok=$("$RL" -u "unix://$BATS_FILE_TMPDIR/r.sock?db=1" lock x)
	[ "$(redis-cli -s "$BATS_FILE_TMPDIR/r.sock" -n 1 hget x "$tok")" = 1 ]
	stop_redis "$U_PID"
}

@test "REDLOCK_URL is the default; -u overrides it" {
	REDLOCK_URL="redis://127.0.0.1:$R_PORT" run -0 "$RL" lock x
	port=$(free_port)
	REDLOCK_URL="redis://127.0.0.1:$port" run -0 "$RL" -u "redis://127.0.0.1:$R_PORT" lock y
	REDLOCK_URL="redis://127.0.0.1:$port" run -69 "$RL" lock z
}

@test "bad URLs are usage errors with a hint, and touch nothing" {
	run -64 --separate-stderr "$RL" -u "http://127.0.0.1:$R_PORT" lock x
	[[ $stderr == *"a URL starts with redis://, rediss://, redis+sentinel:// or unix://"* ]]
	run -64 --separate-stderr "$RL" -u "rediss://127.0.0.1:0" lock x
	[[ $stderr == *"port must be a number"* ]]
	run -64 --separate-stderr "$RL" -u "redis://127.0.0.1:99999" lock x
	[[ $stderr == *"port must be a number"* ]]
	run -64 --separate-stderr "$RL" -u "redis://127.0.0.1:$R_PORT/x" lock x
	# One server named twice would count twice towards a quorum.
	run -64 --separate-stderr "$RL" -u "redis://127.0.0.1:$R_PORT" -u "redis://:pw@127.0.0.1:$R_PORT/0" lock x
	assert_equal "$stderr" "redlock: redis://127.0.0.1:$R_PORT is given twice: each master counts once towards the quorum"
	REDLOCK_URL="redis://127.0.0.1:$R_PORT,redis://127.0.0.1:$R_PORT" run -64 "$RL" lock x
	run -64 --separate-stderr "$RL" -u "rediss+sentinel://127.0.0.1:26379/m" lock x
	[[ $stderr == *"TLS through Sentinel is not supported"* ]]
	[ "$(rcli dbsize)" = 0 ]
}

@test "the Redis socket is close-on-exec" {
	# A lock waiting for a held lock has both its sockets open; its
	# descriptors must all be marked close-on-exec.
	tok=$(rl lock x)
	"$RL" -u "redis://127.0.0.1:$R_PORT" lock -w 10s x 3>&- &
	wpid=$!
	wait_for 5 has_subscribers x 1
	socks=0
	for fd in /proc/$wpid/fd/*; do
		[[ $(readlink "$fd") == socket:* ]] || continue
		socks=$((socks + 1))
		flags=$(awk '/^flags:/ {print $2}' "/proc/$wpid/fdinfo/${fd##*/}")
		# O_CLOEXEC is 02000000 (octal) in fdinfo's flags.
		[ $((0$flags & 02000000)) -ne 0 ]
	done
	[ "$socks" -eq 2 ]
	rl unlock --owner "$tok" x
	reap "$wpid"
}

@test "the suite runs against the server it names: redis-server, or valkey-server" {
	run -0 rcli info server
	if [ "$SERVER" = valkey-server ]; then
		assert_output --partial valkey_version:8.
	else
		assert_output --partial redis_version:7.
		refute_output --partial valkey_version
	fi
	echo "$SERVER: $(grep -E '^(valkey|redis)_version' <<<"$output" | tr -d '\r' | tr '\n' ' ')" >&3
}
