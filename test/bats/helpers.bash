# helpers.bash: private redis-server processes and a redlock wrapper.
bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert

RL=${REDLOCK_BIN:-$BATS_TEST_DIRNAME/../../build/asan/redlock}
# The server the suite runs against: redis-server, or valkey-server
# (make test runs it against both when valkey-server is installed).
SERVER=${REDLOCK_TEST_SERVER:-redis-server}

# sentinel CONFIG: a sentinel of $SERVER's kind in place of the calling
# shell (exec), so that "sentinel CONFIG &" leaves its pid in $!.
sentinel() {
	if [ "$SERVER" = redis-server ]; then
		exec redis-sentinel "$1"
	else
		exec "$SERVER" "$1" --sentinel
	fi
}

# start_redis VAR [ARGS...]: start a redis-server on a free loopback port in
# its own directory; sets VAR_PORT, VAR_PID and VAR_DIR (exported). Ports
# come from below Linux's ephemeral range (32768-60999), where outgoing
# connections would otherwise take them now and then.
start_redis() {
	local var=$1 port pid dir i j
	shift
	for i in $(seq 1 30); do
		port=$((20000 + RANDOM % 12000))
		# Something already answers there: not a free port.
		redis-cli -p "$port" ping >/dev/null 2>&1 && continue
		dir=$BATS_FILE_TMPDIR/redis-$port
		mkdir -p "$dir"
		"$SERVER" --port "$port" --bind 127.0.0.1 --save '' \
		    --appendonly no --dir "$dir" --logfile "$dir/log" "$@" \
		    >"$dir/out" 2>&1 3>&- &
		pid=$!
		for j in $(seq 1 250); do
			if redis-cli -p "$port" info server 2>/dev/null |
			    grep -q "^process_id:$pid"; then
				export "${var}_PORT=$port" "${var}_PID=$pid" \
				    "${var}_DIR=$dir"
				echo "$pid" >"$dir/pid"
				return 0
			fi
			if redis-cli -p "$port" info server 2>&1 |
			    grep -q NOAUTH; then
				export "${var}_PORT=$port" "${var}_PID=$pid" \
				    "${var}_DIR=$dir"
				echo "$pid" >"$dir/pid"
				return 0
			fi
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.02
		done
		kill "$pid" 2>/dev/null || :
		wait "$pid" 2>/dev/null || :
	done
	echo "cannot start $SERVER; its last log:" >&2
	cat "$dir/out" "$dir/log" >&2
	return 1
}

stop_redis() {
	local pid=$1
	[ -n "$pid" ] || return 0
	kill -CONT "$pid" 2>/dev/null
	kill "$pid" 2>/dev/null
	for _ in $(seq 1 100); do
		dead "$pid" && return 0
		sleep 0.02
	done
	kill -9 "$pid" 2>/dev/null
	return 0
}

# start_proxy OUT ARGS...: test/bats/proxy.py ARGS (a slow proxy; see
# there) in the background, its output in OUT; its pid in $proxy once it
# listens.
start_proxy() {
	local out=$1
	shift
	python3 "$BATS_TEST_DIRNAME/proxy.py" "$@" >"$out" 3>&- &
	proxy=$!
	wait_for 5 grep -q ready "$out"
}

# A port where nothing listens.
free_port() {
	local port
	while :; do
		port=$((20000 + RANDOM % 12000))
		redis-cli -p "$port" ping >/dev/null 2>&1 || break
	done
	echo "$port"
}

rcli() { redis-cli -p "$R_PORT" "$@"; }
rl() { "$RL" -u "redis://127.0.0.1:$R_PORT" "$@"; }

# Milliseconds since the epoch, from the local clock and from the server's.
now_ms() { echo $(($(date +%s%N) / 1000000)); }
server_ms() { rcli time | { read -r s; read -r us; echo $((s * 1000 + us / 1000)); }; }

# wait_for TIMEOUT_S CMD...: poll CMD until it succeeds, at most TIMEOUT_S.
wait_for() {
	local deadline=$(($(date +%s%N) / 1000000 + $1 * 1000))
	shift
	until "$@"; do
		[ "$(($(date +%s%N) / 1000000))" -lt "$deadline" ] || return 1
		sleep 0.01
	done
}

# Waiters subscribed to the release channel of lock $1.
subscribers() { rcli pubsub numsub "redisson_lock__channel:{$1}" | sed -n 2p; }
has_subscribers() { [ "$(subscribers "$1")" -ge "$2" ]; }
key_gone() { [ "$(rcli exists "$1")" = 0 ]; }

# Calls of each command since the last CONFIG RESETSTAT: "evalsha=1 ...".
# Redis counts the commands scripts run too.
commandstats() {
	rcli "$@" info commandstats |
	    sed -n 's/^cmdstat_\([a-z|]*\):calls=\([0-9]*\),.*/\1=\2/p' |
	    grep -v -e '^info=' -e '^config|resetstat=' | sort | tr '\n' ' '
}

# toplevel CMD...: run CMD and print the commands clients sent while it
# ran, one per line, as MONITOR saw them (not those run inside scripts).
toplevel() {
	local mon=$BATS_TEST_TMPDIR/monitor.$$
	redis-cli -p "$R_PORT" monitor >"$mon" 2>&1 3>&- &
	local mpid=$!
	wait_for 5 eval 'rcli client list | grep -q "cmd=monitor"'
	"$@" >/dev/null
	rcli echo toplevel-end >/dev/null
	wait_for 5 grep -q toplevel-end "$mon"
	kill "$mpid"
	wait "$mpid" 2>/dev/null || true
	grep -v -e ' lua\]' -e '"client" "list"' -e toplevel-end -e '^OK$' "$mon" |
	    sed -n 's/^[0-9.]* \[[0-9]* [^]]*\] "\([^"]*\)".*/\1/p'
}

# A process that has exited: gone, or a zombie waiting to be reaped.
dead() {
	local st
	st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 0
	[ -z "$st" ] || [ "$st" = Z ] || [ "$st" = X ]
}
all_dead() {
	local p
	for p in "$@"; do dead "$p" || return 1; done
}

# The current pid of VAR's server (restart_redis changes it, and tests
# run in processes of their own).
pid_of() { cat "$(eval echo "\$${1}_DIR")/pid"; }

# restart_redis VAR [ARGS...]: start VAR's server again on its port and
# directory, after it was stopped or killed.
restart_redis() {
	local var=$1 port dir pid j
	shift
	port=$(eval echo "\$${var}_PORT")
	dir=$(eval echo "\$${var}_DIR")
	"$SERVER" --port "$port" --bind 127.0.0.1 --save '' \
	    --appendonly no --dir "$dir" --logfile "$dir/log" "$@" \
	    >>"$dir/out" 2>&1 3>&- &
	pid=$!
	for j in $(seq 1 250); do
		if redis-cli -p "$port" info server 2>/dev/null |
		    grep -q "^process_id:$pid"; then
			export "${var}_PID=$pid"
			echo "$pid" >"$dir/pid"
			return 0
		fi
		sleep 0.02
	done
	return 1
}

# stop_bg: kill and reap the processes in the array bg (and a queue
# sampler, when one runs), for teardown.
stop_bg() {
	local p
	[ -z "${sampler-}" ] || kill "$sampler" 2>/dev/null || :
	for p in "${bg[@]}"; do kill "$p" 2>/dev/null || :; done
	for p in "${bg[@]}"; do wait "$p" 2>/dev/null || :; done
}
