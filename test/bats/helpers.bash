# helpers.bash: private redis-server processes and a redlock wrapper.
bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert

RL=${REDLOCK_BIN:-$BATS_TEST_DIRNAME/../../build/asan/redlock}
# No test runs for ever: bats fails one that takes longer than this (its
# teardown still runs), and the suite goes on. The longest tests (herd's
# drains of 200 waiters, the cluster's failovers) take about a minute on a
# quiet 2-core machine and three beside two busy loops.
export BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-300}
# The server the suite runs against: redis-server, or valkey-server
# (make test runs it against both when valkey-server is installed).
SERVER=${REDLOCK_TEST_SERVER:-redis-server}
# No configuration file of this machine's or user's (/etc/redlock.conf,
# ~/.config/redlock/config) changes what the tests see: config.bats sets
# its own.
export REDLOCK_CONFIG=/dev/null

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
				file_server "$dir"
				return 0
			fi
			if redis-cli -p "$port" info server 2>&1 |
			    grep -q NOAUTH; then
				export "${var}_PORT=$port" "${var}_PID=$pid" \
				    "${var}_DIR=$dir"
				echo "$pid" >"$dir/pid"
				file_server "$dir"
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

# file_server DIR: a server started outside any test (by setup_file) is
# the file's: stop_strays leaves it, and restart_redis's next one, alone.
file_server() { [ -n "${BATS_TEST_NAME-}" ] || touch "$1/file-server"; }

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
# there) in the background, its output in OUT; its pid in $proxy and the
# ports it listens on, in order, in the array proxy_ports once it
# listens. Give 0 as each LPORT: the kernel picks one that is free.
start_proxy() {
	local out=$1 ready
	shift
	python3 "$BATS_TEST_DIRNAME/proxy.py" "$@" >"$out" 3>&- &
	proxy=$!
	wait_for 5 grep -q ready "$out"
	read -r ready proxy_ports <"$out"
	proxy_ports=($proxy_ports)
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
# opt KIND: the lock options of KIND (plain, fair, shared, write, limit:
# --limit 2), for the files that run a test for each kind.
opt() {
	case $1 in
	plain) ;;
	fair) echo --fair ;;
	shared) echo -s ;;
	write) echo --write ;;
	limit) echo --limit 2 ;;
	esac
}

# public_copy FILE: a copy of FILE that any user may run, alone in a new
# directory (its path printed; remove the directory after): the checkout
# may be in a directory only root can enter (as /root is), and cp keeps
# the checkout's mode less the umask, so a clone made or copied under
# umask 077 gives 0700, which nobody else can run.
public_copy() {
	local pub
	pub=$(mktemp -d /tmp/redlock-pub.XXXXXX) || return
	chmod 755 "$pub"
	cp "$1" "$pub/" && chmod 755 "$pub/${1##*/}" && echo "$pub/${1##*/}"
}

# Milliseconds since the epoch, from the local clock and from the server's.
now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }
server_ms() { rcli time | { read -r s; read -r us; echo $((s * 1000 + us / 1000)); }; }

# nap SECONDS: sleep without starting a process: a read that times out on
# a fifo that nobody writes (made once per shell).
nap() {
	if [ "${NAP_PID-}" != "$BASHPID" ]; then
		local f=${BATS_TEST_TMPDIR:-${BATS_FILE_TMPDIR:-/tmp}}/nap.$BASHPID
		[ -p "$f" ] || mkfifo "$f"
		exec {NAP_FD}<>"$f"
		NAP_PID=$BASHPID
	fi
	read -r -t "$1" -u "$NAP_FD" _ || :
}

# wait_for TIMEOUT_S CMD...: poll CMD until it succeeds, at most TIMEOUT_S:
# after 10 ms, then 20, 40 and 80, then every 100 ms. (The clock and the
# naps are bash's own: polling, which many tests do for seconds at a time,
# costs no process of its own on a CPU that the suite keeps busy.)
wait_for() {
	local deadline=$((${EPOCHREALTIME/./} / 1000 + $1 * 1000)) i=0
	local naps=(0.01 0.02 0.04 0.08 0.1)
	shift
	until "$@"; do
		[ $((${EPOCHREALTIME/./} / 1000)) -lt "$deadline" ] || return 1
		nap "${naps[i]}"
		[ "$i" = 4 ] || i=$((i + 1))
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

# stat_of PID: PID's state letter and parent in $pstate and $pppid, read
# from /proc/PID/stat with builtins (reap polls hundreds of processes);
# fails when PID is gone.
stat_of() {
	local s
	{ read -r s <"/proc/$1/stat"; } 2>/dev/null || return 1
	s=${s##*) }
	pstate=${s%% *}
	s=${s#* }
	pppid=${s%% *}
}

# A process that has exited: gone, or a zombie waiting to be reaped.
dead() {
	local pstate pppid
	stat_of "$1" || return 0
	[ -z "$pstate" ] || [ "$pstate" = Z ] || [ "$pstate" = X ]
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

# proc_state PID: a process that would not end, in one line: its command
# line and, from /proc/PID/status, its state, parent and tracer (an ASan
# build that LeakSanitizer's exit check holds is traced by its own child).
proc_state() {
	local cmd st
	cmd=$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | cut -c1-200)
	st=$(grep -E '^(State|PPid|TracerPid):' "/proc/$1/status" 2>/dev/null |
	    tr '\t\n' '  ')
	echo "pid $1 ($cmd): ${st:-gone}"
}

# descendants PID: the processes under PID, children before their own.
descendants() {
	local c
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		echo "$c"
		descendants "$c"
	done
}

# kill_tree PID...: SIGKILL each PID (this shell's children, running) and
# every process under it, stopped or traced ones too, and reap them.
kill_tree() {
	local p all=()
	for p in "$@"; do all+=("$p" $(descendants "$p")); done
	kill -9 "${all[@]}" 2>/dev/null || :
	for p in "$@"; do wait "$p" 2>/dev/null || :; done
}

# reap [-t SECONDS] PID...: wait for background PIDs as wait does (the
# exit status of the last), but at most SECONDS in all (default 240, under
# the test's 300: 4 x 50 acquisitions took 123 s beside two busy loops):
# one still running then is named on stderr with its state, killed with
# what runs under it, and the test fails there, instead of hanging.
reap() {
	local t=240 p c st=0
	if [ "$1" = -t ]; then
		t=$2
		shift 2
	fi
	if ! wait_for "$t" all_dead "$@"; then
		for p in "$@"; do
			dead "$p" && continue
			echo "reap: still running after ${t}s: $(proc_state "$p")" >&2
			for c in $(descendants "$p"); do
				echo "reap:   under it: $(proc_state "$c")" >&2
			done
		done
		kill_tree "$@"
		exit 1
	fi
	for p in "$@"; do
		st=0
		wait "$p" || st=$?
	done
	return "$st"
}

# ours PID...: in the array mine, those PIDs that are still this shell's
# children (running, or ended and not yet reaped). A pid that wait or
# reap has collected may be another process's by now: pid_max is 32768
# on many machines, the suite goes through that many in about a minute,
# and a stray SIGCONT can hold an ASan process in LeakSanitizer's exit
# check for ever (see the Makefile). Teardowns signal only these.
ours() {
	local p pstate pppid
	mine=()
	for p in "$@"; do
		stat_of "$p" && [ "$pppid" = "$BASHPID" ] && mine+=("$p")
	done
	return 0
}
# kill_ours SIGNAL PID...: signal those of PIDs that are ours.
kill_ours() {
	local sig=$1 mine
	shift
	ours "$@"
	[ ${#mine[@]} = 0 ] || kill "-$sig" "${mine[@]}" 2>/dev/null || :
}

# stop_bg: kill and reap the processes in the array bg (and a queue
# sampler, when one runs), for teardown: SIGTERM, then SIGKILL for those
# still there after 10 s (stopped, or stuck).
stop_bg() {
	local mine
	ours ${sampler-} "${bg[@]}"
	[ ${#mine[@]} != 0 ] || return 0
	kill "${mine[@]}" 2>/dev/null || :
	wait_for 10 all_dead "${mine[@]}" || kill_tree "${mine[@]}"
	wait "${mine[@]}" 2>/dev/null || :
}

# stop_strays: at the end of teardown, SIGKILL whatever the test started
# and left running, so that nothing outlives its test to hold the CPU, a
# port or bats' output. The file's servers are spared (restart_redis
# starts them again from tests), and so is what runs under a server, and
# bats' own timer for BATS_TEST_TIMEOUT (its pid is killer_pid in the bats
# function that calls teardown).
# A test that killed the timer (as `kill %1` does: the timer is the test
# shell's first job) is failed here: its time was unbounded, and the
# timer's orphaned sleep held bats' output open, so that the suite waited
# for it BATS_TEST_TIMEOUT seconds after its last test.
stop_strays() {
	local kill=() timer=${killer_pid:-${BATS_killer_pid-}}
	strays "$BASHPID"
	[ ${#kill[@]} = 0 ] || kill -9 "${kill[@]}" 2>/dev/null || :
	if [ -n "$timer" ] && ! kill -0 "$timer" 2>/dev/null; then
		echo "stop_strays: bats' timer (pid $timer) was killed by the test (kill %1?): signal background processes by their pid" >&2
		orphaned_timer_sleep
		return 1
	fi
}
# orphaned_timer_sleep: SIGKILL the sleep of a killed timer: the child of
# init now, in this shell's process group, running `sleep TIMEOUT`.
orphaned_timer_sleep() {
	local f st me cmd ppid pgid
	read -r st </proc/"$BASHPID"/stat
	st=${st##*) }
	read -r _ _ me _ <<<"$st"
	for f in /proc/[0-9]*/stat; do
		{ read -r st <"$f"; } 2>/dev/null || continue
		[[ $st == *" (sleep) "* ]] || continue
		st=${st##*) }
		read -r _ ppid pgid _ <<<"$st"
		[ "$ppid" = 1 ] && [ "$pgid" = "$me" ] || continue
		cmd=$(tr '\0' ' ' <"${f%/stat}/cmdline" 2>/dev/null)
		[ "$cmd" != "sleep ${BATS_TEST_TIMEOUT-} " ] || kill -9 "${f//[^0-9]/}" 2>/dev/null
	done
}
strays() {
	local c comm pidfile
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		[ "$c" != "$timer" ] || continue
		{ read -r comm <"/proc/$c/comm"; } 2>/dev/null || continue
		case $comm in
		redis-server | valkey-server | redis-sentinel)
			# Only one that start_redis started in the test.
			pidfile=$(grep -lsx "$c" "$BATS_FILE_TMPDIR"/redis-*/pid |
			    head -n 1)
			if [ -n "$pidfile" ] &&
			    [ ! -e "${pidfile%/pid}/file-server" ]; then
				kill+=("$c")
			fi
			continue ;;
		esac
		kill+=("$c")
		strays "$c"
	done
}

# Files with a teardown of their own end it with stop_strays.
teardown() { stop_strays; }

# cluster_ok [N]: every node C1..CN (default: CLUSTER_NODES) says the
# cluster is up and knows all N.
cluster_ok() {
	local i port n=${1:-$CLUSTER_NODES}
	for i in $(seq 1 "$n"); do
		port=$(eval echo "\$C${i}_PORT")
		redis-cli -p "$port" cluster info 2>/dev/null |
		    grep -q '^cluster_state:ok' || return 1
		[ "$(redis-cli -p "$port" cluster nodes | wc -l)" = "$n" ] ||
		    return 1
	done
}

# start_cluster N REPLICAS [OPTION...]: nodes C1..CN on free ports (each
# with OPTIONs too), made a cluster with REPLICAS replicas per master by
# redis-cli --cluster create; returns once every node agrees.
# stop_cluster: stops them.
start_cluster() {
	local i n=$1 r=$2 addrs=()
	shift 2
	export CLUSTER_NODES=$n
	for i in $(seq 1 "$n"); do
		start_redis "C$i" --cluster-enabled yes \
		    --cluster-config-file nodes.conf --cluster-node-timeout 2000 "$@"
		addrs+=("127.0.0.1:$(eval echo "\$C${i}_PORT")")
	done
	redis-cli --cluster create "${addrs[@]}" --cluster-replicas "$r" \
	    --cluster-yes >"$BATS_FILE_TMPDIR/create.out" 2>&1 || {
		cat "$BATS_FILE_TMPDIR/create.out" >&2
		return 1
	}
	wait_for 60 cluster_ok
}
stop_cluster() {
	local i
	for i in $(seq 1 "$CLUSTER_NODES"); do stop_redis "$(pid_of "C$i")"; done
}

# proc_tree PID...: each PID with every process under it, the deepest
# first. An exec that waits is redlock and, under it, the watchdog that
# does the waiting: a waiter is stopped or killed as a whole (a crash, a
# hung host) by signalling all of them, its watchdog first.
proc_tree() {
	local p
	for p in "$@"; do
		descendants "$p" | tac
		echo "$p"
	done
}
