#!/usr/bin/env bats
# redis+sentinel:// URLs against real sentinels: discovery, credentials,
# failover under exec, lock --keepalive and waiters, and the bad cases.
#
# Each test that needs them starts its own master, replica and three
# redis-sentinel processes on free loopback ports (a failover changes who
# is master, so topologies are not shared), and stops them in teardown.

load helpers

setup() {
	D=$BATS_TEST_TMPDIR
	: >"$D/pids"
	SPW=
	epid=
}
teardown() {
	local p
	kill_ours KILL ${epid-}
	while read -r p; do stop_redis "$p"; done <"$D/pids"
	stop_strays
}

# Every process a test starts is stopped by teardown.
track() { echo "$1" >>"$D/pids"; }

# pwcli PASSWORD PORT ARGS...: redis-cli, with PASSWORD when not empty.
pwcli() {
	local pw=$1 port=$2
	shift 2
	if [ -n "$pw" ]; then
		REDISCLI_AUTH=$pw redis-cli -p "$port" "$@"
	else
		redis-cli -p "$port" "$@"
	fi
}
# scli / mcli PORT ARGS...: to a sentinel, to a data server.
scli() { pwcli "$SPW" "$@"; }
mcli() { pwcli "${MPW:-}" "$@"; }

# start_sentinel VAR [CONFIG LINE...]: a redis-sentinel watching mymaster
# at $M_PORT (quorum 2), its config file (which it rewrites) in its own
# directory; sets VAR_PORT.
start_sentinel() {
	local var=$1 port dir pid i j l
	shift
	for i in $(seq 1 30); do
		port=$(free_port)
		dir=$D/sentinel-$port
		mkdir -p "$dir"
		{
			echo "port $port"
			echo "bind 127.0.0.1"
			echo "dir $dir"
			echo "logfile $dir/log"
			echo "sentinel monitor mymaster 127.0.0.1 $M_PORT 2"
			echo "sentinel down-after-milliseconds mymaster 1000"
			echo "sentinel failover-timeout mymaster 5000"
			for l in "$@"; do echo "$l"; done
		} >"$dir/sentinel.conf"
		sentinel "$dir/sentinel.conf" >"$dir/out" 2>&1 3>&- &
		pid=$!
		track "$pid"
		for j in $(seq 1 250); do
			if scli "$port" ping 2>/dev/null | grep -q PONG; then
				export "${var}_PORT=$port" "${var}_PID=$pid"
				return 0
			fi
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.02
		done
		kill "$pid" 2>/dev/null || :
	done
	echo "cannot start a sentinel ($SERVER):" >&2
	cat "$dir/out" "$dir/log" >&2
	return 1
}

# A field of SENTINEL MASTER mymaster, as sentinel PORT sees it.
sentinel_field() {
	scli "$1" sentinel master mymaster 2>/dev/null | paste - - |
	    awk -v f="$2" '$1 == f { print $2 }'
}
# Every sentinel knows the replica and the two other sentinels.
sentinels_ready() {
	local p
	for p in "$S1_PORT" "$S2_PORT" "$S3_PORT"; do
		[ "$(sentinel_field "$p" num-slaves)" = 1 ] || return 1
		[ "$(sentinel_field "$p" num-other-sentinels)" = 2 ] || return 1
	done
}
link_up() { mcli "$1" info replication | grep -q '^master_link_status:up'; }
role_is() { [ "$(mcli "$1" role 2>/dev/null | head -n 1)" = "$2" ]; }
# Every sentinel names the server on port $1 as mymaster.
sentinels_say() {
	local p
	for p in "$S1_PORT" "$S2_PORT" "$S3_PORT"; do
		[ "$(scli "$p" sentinel get-master-addr-by-name mymaster |
		    tail -n 1)" = "$1" ] || return 1
	done
}

# topology [SENTINEL CONFIG LINE...]: master M, replica R, sentinels S1-3;
# $U is the URL through them. With $MPW, the servers require it.
topology() {
	local auth=()
	[ -z "${MPW:-}" ] || auth=(--requirepass "$MPW" --masterauth "$MPW")
	start_redis M --repl-diskless-sync-delay 0 "${auth[@]}"
	track "$M_PID"
	start_redis R --repl-diskless-sync-delay 0 "${auth[@]}" \
	    --replicaof 127.0.0.1 "$M_PORT"
	track "$R_PID"
	wait_for 30 link_up "$R_PORT"
	for s in S1 S2 S3; do start_sentinel "$s" "$@"; done
	wait_for 60 sentinels_ready || {
		for s in S1 S2 S3; do
			p=$(eval echo "\$${s}_PORT")
			echo "sentinel $s ($p): replicas $(sentinel_field "$p" num-slaves), other sentinels $(sentinel_field "$p" num-other-sentinels)" >&2
			tail -n 5 "$D/sentinel-$p/log" >&2
		done
		return 1
	}
	U="redis+sentinel://127.0.0.1:$S1_PORT,127.0.0.1:$S2_PORT,127.0.0.1:$S3_PORT/mymaster"
}

# failover: SENTINEL FAILOVER, then wait until R is master and every
# sentinel says so.
failover() {
	scli "$S1_PORT" sentinel failover mymaster | grep -q OK
	wait_for 30 role_is "$R_PORT" master
	wait_for 30 sentinels_say "$R_PORT"
}

# deafen N: once N processes listen to +switch-master on S1 (the first
# sentinel of the URL, where they subscribe first), S1 is stopped
# (SIGSTOP): they hear no switch, as when their sentinel hangs.
deafen() {
	local n=$1
	wait_for 20 eval '[ "$(scli "$S1_PORT" client list | grep -c " sub=1 ")" -ge "$n" ]'
	kill -STOP "$S1_PID"
}
# failover_via PORT: failover, asked of the sentinel on PORT; waits for
# the two others than S1 to name R.
failover_via() {
	scli "$1" sentinel failover mymaster | grep -q OK
	wait_for 30 role_is "$R_PORT" master
	wait_for 30 others_say "$R_PORT"
}
# S2 and S3 name the server on port $1 as mymaster.
others_say() {
	local p
	for p in "$S2_PORT" "$S3_PORT"; do
		[ "$(scli "$p" sentinel get-master-addr-by-name mymaster |
		    tail -n 1)" = "$1" ] || return 1
	done
}

# demote [--no-kill]: what Sentinel does to the old master once it sees
# it again (REPLICAOF the new one, CLIENT KILL its normal and pub/sub
# clients), done at once instead of after Sentinel's own 8-10 s wait, so
# that short leases do not run out on the new master meanwhile.
demote() {
	mcli "$M_PORT" replicaof 127.0.0.1 "$R_PORT" >/dev/null
	[ "${1:-}" = --no-kill ] && return 0
	mcli "$M_PORT" client kill type normal >/dev/null
	mcli "$M_PORT" client kill type pubsub >/dev/null
}

pttl_on() { mcli "$1" pttl "$2"; }
exists_on() { [ "$(mcli "$1" exists "$2")" = 1 ]; }
ms_since() { echo $(($(now_ms) - $1)); }

# watch_lease PORT NAME TTL_MS FOR_MS: NAME's lease on PORT never runs
# out for FOR_MS, and at the end it is still above TTL/3: renewed there.
watch_lease() {
	local port=$1 name=$2 ttl=$3 t0 p
	t0=$(now_ms)
	while [ "$(ms_since "$t0")" -lt "$4" ]; do
		p=$(pttl_on "$port" "$name")
		if [ "$p" -le 0 ]; then
			echo "lease of $name on $port: $p after $(ms_since "$t0") ms" >&2
			return 1
		fi
		sleep 0.2
	done
	p=$(pttl_on "$port" "$name")
	echo "lease of $name on $port after $4 ms: $p ms" >&3
	[ "$p" -gt $((ttl / 3)) ]
}

@test "exec, lock, unlock, status and queue work through a redis+sentinel:// URL" {
	topology
	run -0 --separate-stderr "$RL" -u "$U" exec -t 5s x -- sh -c \
	    'redis-cli -p "$0" hexists x "$REDLOCK_OWNER"; echo "$REDLOCK_URL"' \
	    "$M_PORT"
	assert_output "$(printf '1\n%s' "$U")"
	tok=$("$RL" -u "$U" lock -t 30s x)
	exists_on "$M_PORT" x
	run -0 "$RL" -u "$U" status x
	assert_output --partial "$tok"
	run -0 "$RL" -u "$U" queue --json x
	assert_output --partial "\"owner\":\"$tok\""
	run -75 "$RL" -u "$U" lock -n x
	run -0 "$RL" -u "$U" unlock --owner "$tok" x
	run -1 "$RL" -u "$U" status x
	[ "$(mcli "$M_PORT" exists x)" = 0 ]
	# Through one sentinel, or with the first ones down, the same.
	run -0 "$RL" -u "redis+sentinel://127.0.0.1:$(free_port),127.0.0.1:$S2_PORT/mymaster/3" \
	    exec x -- true
	# In database 3: the fencing counter stays there after the release.
	[ "$(mcli "$M_PORT" -n 3 exists "redisson_lock_token:{x}")" = 1 ]
}

@test "credentials: the master's password in the URL, the sentinels' from --sentinel-password or REDLOCK_SENTINEL_PASSWORD" {
	MPW=masterpw
	SPW=sentpw
	topology "requirepass $SPW" "sentinel sentinel-pass $SPW" \
	    "sentinel auth-pass mymaster $MPW"
	AU="redis+sentinel://:$MPW@${U#redis+sentinel://}"
	run -0 --separate-stderr "$RL" --sentinel-password "$SPW" -u "$AU" \
	    exec -t 5s x -- sh -c 'echo "$REDLOCK_URL"
		ps -o args= -p "$PPID,$(ps -o ppid= -p $PPID | tr -d " ")"'
	assert_line -n 0 "$U"
	# ps shows neither password, for redlock nor for its watchdog.
	assert_equal "${#lines[@]}" 3
	# (The watchdog's line is a name of its own.)
	assert_line --partial "--sentinel-password xxxxxx -u redis+sentinel://:xxxxxxxx@"
	assert_line "redlock: watchdog for x"
	[[ $output != *"$SPW"* ]]
	[[ $output != *"$MPW"* ]]
	tok=$(REDLOCK_SENTINEL_PASSWORD=$SPW "$RL" -u "$AU" lock -t 30s x)
	exists_on "$M_PORT" x
	REDLOCK_PASSWORD=$MPW REDLOCK_SENTINEL_PASSWORD=$SPW run -0 "$RL" \
	    -u "$U" --sentinel-user default status x
	assert_output --partial "$tok"
	# No password for the sentinels, a wrong one, a wrong master's.
	run -69 --separate-stderr "$RL" -u "$AU" status x
	[[ $stderr == *"sentinel 127.0.0.1:$S1_PORT requires a password: give --sentinel-password or REDLOCK_SENTINEL_PASSWORD"* ]]
	run -69 --separate-stderr "$RL" --sentinel-password nope -u "$AU" status x
	[[ $stderr == *"sentinel 127.0.0.1:$S1_PORT refused AUTH"*"--sentinel-password"* ]]
	[[ $stderr != *sentpw* && $stderr != *masterpw* ]]
	run -69 --separate-stderr "$RL" --sentinel-password "$SPW" -u "$U" status x
	[[ $stderr == *"requires authentication"* ]]
	REDLOCK_SENTINEL_PASSWORD=$SPW run -0 "$RL" -u "$AU" unlock --owner "$tok" x
}

@test "failover during exec, the lock replicated: renewals go on on the new master and COMMAND ends with 0" {
	topology
	sleep 60 3>&- &
	spid=$!
	track "$spid"
	"$RL" -u "$U" exec -t 9s x -- sh -c 'touch "$0/started"
	    while [ ! -e "$0/stop" ]; do sleep 0.1; done; echo done >"$0/done"' \
	    "$D" 2>"$D/err" 3>&- &
	epid=$!
	ktok=$("$RL" -u "$U" lock --keepalive --pid "$spid" -t 9s k 3>&-)
	wait_for 30 test -e "$D/started"
	wait_for 10 exists_on "$R_PORT" x
	wait_for 10 exists_on "$R_PORT" k
	failover
	demote
	t0=$(now_ms)
	# Past the lease: only renewals on the new master keep it.
	watch_lease "$R_PORT" x 9000 12000
	watch_lease "$R_PORT" k 9000 1
	! dead "$epid" || false
	echo "$(ms_since "$t0") ms after the failover" >&3
	touch "$D/stop"
	st=0
	reap "$epid" || st=$?
	epid=
	[ "$st" -eq 0 ]
	[ "$(cat "$D/done")" = done ]
	wait_for 10 eval '[ "$(mcli "$R_PORT" exists x)" = 0 ]'
	run -0 "$RL" -u "$U" unlock --owner "$ktok" k
	[ "$(mcli "$R_PORT" exists k)" = 0 ]
	run cat "$D/err"
	refute_output --partial "lost"
}

@test "a renewal refused with READONLY (the master demoted under it) counts as a lost connection: the next one finds the new master" {
	topology
	"$RL" -u "$U" exec -v -t 9s x -- sh -c 'touch "$0/started"
	    while [ ! -e "$0/stop" ]; do sleep 0.1; done' "$D" 2>"$D/err" 3>&- &
	epid=$!
	wait_for 30 test -e "$D/started"
	wait_for 10 exists_on "$R_PORT" x
	# The watchdog hears no switch (which would move it to the new
	# master first)...
	deafen 1
	failover_via "$S2_PORT"
	# ...and REPLICAOF alone: its connection stays up and its next
	# renewal is refused with READONLY.
	demote --no-kill
	watch_lease "$R_PORT" x 9000 12000
	! dead "$epid" || false
	touch "$D/stop"
	st=0
	reap "$epid" || st=$?
	epid=
	[ "$st" -eq 0 ]
	run cat "$D/err"
	assert_output --partial "is a read-only replica now"
	refute_output --partial "please report"
	refute_output --partial "lost x"
}

@test "a master stopped (SIGSTOP) during exec: with --reply-timeout under ttl/3 the watchdog gives it up and renews on the promoted replica" {
	topology
	# A 15 s lease: the last renewal the replica got before the stop
	# must outlive the failover, which took over 6 s on a loaded box
	# (the lease of 9 s was gone on the new master when it got there).
	"$RL" -u "$U" --reply-timeout 500ms --connect-timeout 300ms exec -v -t 15s x -- sh -c 'touch "$0/started"
	    while [ ! -e "$0/stop" ]; do sleep 0.1; done' "$D" 2>"$D/err" 3>&- &
	epid=$!
	wait_for 30 test -e "$D/started"
	wait_for 10 exists_on "$R_PORT" x
	# The watchdog hears no switch (which would move it first): its
	# renewal on the stopped master times out. Asking the stopped S1
	# again costs it a --connect-timeout, then S2 names the new master.
	deafen 1
	t_stop=$(now_ms)
	kill -STOP "$M_PID"
	# S2 promotes the replica at once. (Left to find the master down
	# and elect a leader, S2 and S3 split their votes on a loaded box
	# and took 29 s, past any lease of this test.)
	scli "$S2_PORT" sentinel failover mymaster | grep -q OK
	wait_for 40 role_is "$R_PORT" master
	echo "replica promoted $(ms_since "$t_stop") ms after the stop" >&3
	# Past 12 s, a lease not renewed there would be under 3 s.
	watch_lease "$R_PORT" x 15000 12000
	! dead "$epid" || false
	touch "$D/stop"
	st=0
	reap "$epid" || st=$?
	epid=
	[ "$st" -eq 0 ]
	run cat "$D/err"
	assert_output --partial "timed out (see --reply-timeout); retrying"
	refute_output --partial "lost x"
}

@test "failover during exec, the lock not replicated: the renewal on the new master finds it gone, COMMAND is terminated, exit 79" {
	topology
	"$RL" -u "$U" exec -t 6s x -- sh -c 'touch "$0/started"; sleep 120' \
	    "$D" 2>"$D/err" 3>&- &
	epid=$!
	wait_for 30 test -e "$D/started"
	wait_for 10 exists_on "$R_PORT" x
	# Keys written on a replica are not propagated: only R loses it.
	mcli "$R_PORT" config set replica-read-only no >/dev/null
	mcli "$R_PORT" del x >/dev/null
	exists_on "$M_PORT" x
	failover
	# Sentinel demotes the old master by itself (CLIENT KILL included)
	# some 10 s later; the watchdog's next renewal then asks again.
	t0=$(now_ms)
	st=0
	timeout 60 tail --pid="$epid" -f /dev/null || true
	reap "$epid" || st=$?
	epid=
	echo "exit $st $(ms_since "$t0") ms after the failover" >&3
	[ "$st" -eq 79 ]
	run cat "$D/err"
	assert_output --partial "it was removed while held"
}

@test "a waiter blocked on a held lock follows the failover and is woken by pub/sub on the new master" {
	topology
	tok=$("$RL" -u "$U" lock -t 60s x)
	wait_for 10 exists_on "$R_PORT" x
	"$RL" -u "$U" exec -w 60s x -- sh -c 'now=$(date +%s%N); echo "$now" >"$0/ran"' \
	    "$D" 2>"$D/err" 3>&- &
	epid=$!
	wait_for 20 eval '[ "$(mcli "$M_PORT" pubsub numsub "redisson_lock__channel:{x}" | sed -n 2p)" -ge 1 ]'
	failover
	demote
	wait_for 30 eval '[ "$(mcli "$R_PORT" pubsub numsub "redisson_lock__channel:{x}" | sed -n 2p)" -ge 1 ]'
	! dead "$epid" || false
	t0=$(date +%s%N)
	run -0 "$RL" -u "$U" unlock --owner "$tok" x
	st=0
	timeout 30 tail --pid="$epid" -f /dev/null || true
	reap "$epid" || st=$?
	epid=
	[ "$st" -eq 0 ]
	woke=$((($(cat "$D/ran") - t0) / 1000000))
	echo "ran $woke ms after the release" >&3
	# A 60 s lease: only the pub/sub wake-up brings it in this soon.
	[ "$woke" -lt 10000 ]
	[ "$(mcli "$R_PORT" exists x)" = 0 ]
}

@test "queue --watch and status follow a failover away from a master stopped (SIGSTOP)" {
	topology
	tok=$("$RL" -u "$U" lock -t 60s x)
	wait_for 10 exists_on "$R_PORT" x
	"$RL" -u "$U" --reply-timeout 300ms queue --watch=200ms x >"$D/watch" \
	    2>"$D/err" 3>&- &
	qpid=$!
	track "$qpid"
	wait_for 10 grep -q "x: held" "$D/watch"
	kill -STOP "$M_PID"
	# The sentinels see it down after 1 s and promote the replica; the
	# snapshots meanwhile time out on the stopped master.
	wait_for 40 role_is "$R_PORT" master
	wait_for 10 grep -q "timed out" "$D/err"
	wait_for 30 sentinels_say "$R_PORT"
	! dead "$qpid" || false
	run -0 "$RL" -u "$U" unlock --owner "$tok" x
	# A new holder, on the new master only, taken from a shell of its own
	# so that the holder line tells it from the first. The sentinels list
	# the stopped old master as the new one's replica until they see it
	# down (1 s): by default the lock waits through that.
	sh -c '"$0" -u "$1" lock -w 20s -t 60s x >/dev/null; :' "$RL" "$U"
	wait_for 20 grep -q '(sh -c' "$D/watch"
	run -0 "$RL" -u "$U" status x
	assert_output --partial 'command  sh -c'
	kill -INT "$qpid"
	st=0
	reap "$qpid" || st=$?
	kill -CONT "$M_PID"
	[ "$st" -eq 0 ]
}

@test "unreachable sentinels: exit 69 at once, naming them" {
	p1=$(free_port)
	p2=$(free_port)
	t0=$(now_ms)
	run -69 --separate-stderr "$RL" --connect-timeout 20s \
	    -u "redis+sentinel://:pw@127.0.0.1:$p1,127.0.0.1:$p2/mymaster" lock x
	[ "$(ms_since "$t0")" -lt 5000 ]
	[[ $stderr == "redlock: no sentinel of redis+sentinel://127.0.0.1:$p1,127.0.0.1:$p2/mymaster answered (sentinel 127.0.0.1:$p1: Connection refused)"* ]]
	[[ $stderr != *pw@* ]]
	assert_output ''
}

@test "a master name the sentinels do not know: exit 69, saying so" {
	start_redis M
	track "$M_PID"
	start_sentinel S1
	run -69 --separate-stderr "$RL" -u "redis+sentinel://127.0.0.1:$S1_PORT/nosuch" status x
	[[ $stderr == *"sentinel 127.0.0.1:$S1_PORT does not know a master named 'nosuch': check the name in the URL"* ]]
}

@test "a sentinel that names a replica: exit 69, the replica named; a plain redis:// URL to a replica says to give the master or Sentinel" {
	start_redis M
	track "$M_PID"
	start_redis R --replicaof 127.0.0.1 "$M_PORT"
	track "$R_PID"
	python3 "$BATS_TEST_DIRNAME/fake_sentinel.py" answer "$R_PORT" >"$D/fake" 3>&- &
	track $!
	wait_for 5 grep -q ready "$D/fake"
	fport=$(sed -n 's/^ready //p' "$D/fake")
	run -69 --separate-stderr "$RL" -u "redis+sentinel://127.0.0.1:$fport/mymaster" lock x
	[[ $stderr == *"127.0.0.1:$R_PORT is a replica, not the master of mymaster (a failover in progress?); retry"* ]]
	run -69 --separate-stderr "$RL" -u "redis://127.0.0.1:$R_PORT" lock x
	[[ $stderr == *"redis://127.0.0.1:$R_PORT is a read-only replica: give the master's URL, or a redis+sentinel:// URL"* ]]
	[ "$(redis-cli -p "$M_PORT" exists x)" = 0 ]
}

@test "a sentinel that closes, hangs up or is no sentinel hands over to the next; alone, it is named" {
	start_redis M
	track "$M_PID"
	start_sentinel S1
	python3 "$BATS_TEST_DIRNAME/fake_sentinel.py" close >"$D/fake" 3>&- &
	track $!
	wait_for 5 grep -q ready "$D/fake"
	fport=$(sed -n 's/^ready //p' "$D/fake")
	run -0 "$RL" -u "redis+sentinel://127.0.0.1:$fport,127.0.0.1:$M_PORT,127.0.0.1:$S1_PORT/mymaster" exec x -- true
	run -69 --separate-stderr "$RL" -u "redis+sentinel://127.0.0.1:$M_PORT/mymaster" status x
	[[ $stderr == *"sentinel 127.0.0.1:$M_PORT refused SENTINEL GET-MASTER-ADDR-BY-NAME"*"is it a sentinel"* ]]
	run -69 --separate-stderr "$RL" -u "redis+sentinel://127.0.0.1:$fport/mymaster" status x
	[[ $stderr == *"sentinel 127.0.0.1:$fport: closed the connection"* ]]
	# Killed mid-discovery: the same as closing.
	python3 "$BATS_TEST_DIRNAME/fake_sentinel.py" hang >"$D/hang" 3>&- &
	hpid=$!
	track "$hpid"
	wait_for 5 grep -q ready "$D/hang"
	hport=$(sed -n 's/^ready //p' "$D/hang")
	"$RL" --connect-timeout 20s -u "redis+sentinel://127.0.0.1:$hport,127.0.0.1:$S1_PORT/mymaster" \
	    exec x -- true 3>&- &
	epid=$!
	wait_for 10 eval '[ -n "$(ss -Htn state established "( sport = :$hport )")" ]'
	kill -9 "$hpid"
	st=0
	timeout 15 tail --pid="$epid" -f /dev/null || true
	reap "$epid" || st=$?
	epid=
	[ "$st" -eq 0 ]
}

@test "bad redis+sentinel:// URLs and sentinel options: exit 64" {
	for url in 'redis+sentinel://h:26379' 'redis+sentinel://h:26379/' \
	    'redis+sentinel://h1,,h2/m' 'redis+sentinel://h1:0/m' \
	    'redis+sentinel://h/m/x' 'redis+sentinel://h:26379,/m'; do
		run -64 --separate-stderr "$RL" -u "$url" status x
		[[ $stderr == "redlock: bad URL: "* || $stderr == *"empty"* ]]
	done
	run -64 --separate-stderr "$RL" -u 'rediss+sentinel://h/m' status x
	[[ $stderr == *"TLS through Sentinel is not supported"* ]]
	run -64 --separate-stderr "$RL" --sentinel-password x -u redis://127.0.0.1:1 status x
	[[ $stderr == *"--sentinel-password is for redis+sentinel:// URLs only"* ]]
	run -64 --separate-stderr "$RL" --sentinel-user 2>/dev/null
	[[ $stderr == *"'--sentinel-user' needs a value"* ]]
}

# section: for sh -c "$(section)" DIR WHO SECONDS: logs its fencing token
# when it begins and ends (DIR/log: "b|e FENCE WHO MS"), holding SECONDS.
section() {
	echo 'echo "b $REDLOCK_FENCE $1 $(($(date +%s%N) / 1000000))" >>"$0/log"
	    sleep "$2"
	    echo "e $REDLOCK_FENCE $1 $(($(date +%s%N) / 1000000))" >>"$0/log"'
}
# overlaps: pairs of sections in $D/log that overlapped in time, or that
# were given the same token, one a line.
overlaps() {
	awk '$1 == "b" { f[$3] = $2; b[$3] = $4 } $1 == "e" { e[$3] = $4 }
	    END {
		for (x in b) for (y in b) if (x < y) {
			if (f[x] == f[y]) print x, y, "same token", f[x]
			ex = x in e ? e[x] : 9e15; ey = y in e ? e[y] : 9e15
			if (b[x] < ey && b[y] < ex) print x, y, "overlap"
		}
	    }' "$D/log"
}

# The S1 scenario: A holds SY, W waits for it on a connection opened to
# the old master, SENTINEL FAILOVER, A's COMMAND ends, then a new process
# B asks. The old master still calls itself master (Sentinel demotes it
# some 10 s later), so what reaches it there (A's renewals and release,
# W's acquisition) goes on as before, while B goes to the new master,
# where A's replicated lease runs out. ARGS: the options of all three.
# Sets st_w (W's exit status).
failover_race() {
	: >"$D/log"
	"$RL" -u "$U" --reply-timeout 500ms exec "$@" -t 6s SY -- sh -c 'echo "b $REDLOCK_FENCE A $(($(date +%s%N) / 1000000))" >>"$0/log"
	    while [ ! -e "$0/a.stop" ]; do sleep 0.05; done
	    echo "e $REDLOCK_FENCE A $(($(date +%s%N) / 1000000))" >>"$0/log"' \
	    "$D" 2>"$D/a.err" 3>&- &
	apid=$!
	wait_for 10 exists_on "$R_PORT" SY
	"$RL" -u "$U" --reply-timeout 500ms exec "$@" -w 60s -t 6s SY -- \
	    sh -c "$(section)" "$D" W 8 2>"$D/w.err" 3>&- &
	wpid=$!
	epid="$apid $wpid"
	wait_for 20 eval '[ "$(mcli "$M_PORT" pubsub numsub "redisson_lock__channel:{SY}" | sed -n 2p)" -ge 1 ]'
	if [ -n "${DEAF:-}" ]; then
		deafen 2
		failover_via "$S2_PORT"
		UB="redis+sentinel://127.0.0.1:$S2_PORT,127.0.0.1:$S3_PORT/mymaster"
	else
		failover
	fi
	touch "$D/a.stop"
	# B is a new process: it asks the sentinels, who name the new master
	# (S2 and S3 when S1 is stopped).
	"$RL" -u "${UB:-$U}" --reply-timeout 500ms exec "$@" -w 60s -t 6s SY -- \
	    sh -c "$(section)" "$D" B 2 2>"$D/b.err" 3>&- &
	bpid=$!
	epid="$apid $wpid $bpid"
	reap -t 30 "$apid" || :
	st_w=0
	reap -t 60 "$wpid" || st_w=$?
	reap -t 60 "$bpid" || :
	epid=
	sed 's/^/log: /' "$D/log" >&3
	echo "W exited $st_w" >&3
	cat "$D/a.err" "$D/w.err" "$D/b.err" | sed 's/^/err: /' >&3
}

@test "a failover between a waiter's connect and its acquisition: no two holders, no token given twice (the Sentinel default WAITs for a replica, even unheard)" {
	topology
	DEAF=1 failover_race
	run overlaps
	assert_output ''
	run -0 grep -c '^b .* B ' "$D/log"
	# What W took on the old master no replica acknowledged: it gave it
	# back, asked the sentinels again and waited on the new master.
	[ "$st_w" -eq 0 ]
	run -0 grep -c '^e .* W ' "$D/log"
}

@test "the same race with --replicas 0, the switch unheard: the waiter acquires on the old master beside the new one's holder (what the default prevents)" {
	topology
	DEAF=1 failover_race --replicas 0
	run overlaps
	assert_output --regexp 'W|B'
}

@test "the same race with --replicas 0, the switch heard: the waiter and the holder leave the old master; no two holders" {
	topology
	failover_race --replicas 0
	run overlaps
	assert_output ''
	[ "$st_w" -eq 0 ]
}

@test "the Sentinel default and a user that may not WAIT: let through, as without it; --replicas 1 still refuses" {
	topology
	mcli "$M_PORT" acl setuser nowait on '>pw' '~*' '&*' '+@all' '-wait' >/dev/null
	NU="redis+sentinel://nowait:pw@${U#redis+sentinel://}"
	run -0 --separate-stderr "$RL" -u "$NU" exec -t 5s x -- true
	run -0 --separate-stderr "$RL" -u "$NU" exec -t 3s x -- sleep 2.5
	[[ $stderr != *"replicas acknowledged"* ]]
	run -69 --separate-stderr "$RL" -u "$NU" exec --replicas 1 -t 5s x -- true
	[[ $stderr == *"refused WAIT for user nowait"* ]]
	# The default WAITs for the replica the same user sees, when it may.
	mcli "$M_PORT" acl setuser nowait '+wait' >/dev/null
	run -0 --separate-stderr "$RL" -u "$NU" exec -t 5s x -- true
}

@test "the Sentinel default for a fair waiter: the attempt that takes the lock WAITs in a round of its own, and acquires" {
	topology
	tok=$("$RL" -u "$U" lock --fair -t 30s fx)
	"$RL" -u "$U" exec --fair -w 30s -t 5s fx -- sh -c 'date +%s%N >"$0/ran"' \
	    "$D" 2>"$D/err" 3>&- &
	epid=$!
	wait_for 20 eval '[ "$(mcli "$M_PORT" zcard "redisson_lock_timeout:{fx}")" = 1 ]'
	calls0=$(mcli "$M_PORT" info commandstats | sed -n 's/^cmdstat_wait:calls=\([0-9]*\),.*/\1/p')
	t0=$(date +%s%N)
	run -0 "$RL" -u "$U" unlock --owner "$tok" fx
	st=0
	reap -t 30 "$epid" || st=$?
	epid=
	[ "$st" -eq 0 ]
	calls1=$(mcli "$M_PORT" info commandstats | sed -n 's/^cmdstat_wait:calls=\([0-9]*\),.*/\1/p')
	woke=$((($(cat "$D/ran") - t0) / 1000000))
	echo "ran $woke ms after the release; WAIT calls ${calls0:-0} -> $calls1" >&3
	[ "${calls1:-0}" -gt "${calls0:-0}" ]
	# Pushed and acknowledged at once, not after --reply-timeout (5 s).
	[ "$woke" -lt 4000 ]
}

# replica_seen PORT FIELD VALUE: every sentinel lists the replica on PORT
# with FIELD (of SENTINEL REPLICAS) VALUE.
replica_seen() {
	local p
	for p in "$S1_PORT" "$S2_PORT" "$S3_PORT"; do
		scli "$p" sentinel replicas mymaster | paste - - |
		    awk -v port="$1" -v f="$2" -v v="$3" '
			$1 == "port" { p = $2 } $1 == f { x = $2 }
			END { exit !(p == port && x == v) }' || return 1
	done
}
# Calls of WAIT the server on PORT has served.
wait_calls() {
	mcli "$1" info commandstats | tr -d '\r' |
	    sed -n 's/^cmdstat_wait:calls=\([0-9]*\),.*/\1/p' | grep . || echo 0
}
# The sentinels ask their servers for INFO every 100 ms, not 10 s, so
# that what they list follows at once what a test does.
fast_info() {
	local p
	for p in "$S1_PORT" "$S2_PORT" "$S3_PORT"; do
		scli "$p" sentinel debug info-period 100 >/dev/null
	done
}

@test "a replica the sentinels saw cut off from its master still counts: the master is WAITed on and refuses what nothing replicated" {
	topology
	fast_info
	# R logs in as a user that does not exist: its link stays down.
	mcli "$R_PORT" config set masteruser nobody masterauth x >/dev/null
	mcli "$R_PORT" client kill type master >/dev/null
	wait_for 20 replica_seen "$R_PORT" master-link-status err
	[ "$(mcli "$M_PORT" role | sed -n 3p)" = "" ]
	# Every kind, as a new process (-n) and as a waiter (-w, which
	# waits on and runs out).
	for opt in "" --fair -s --write "--limit 2"; do
		run -69 --separate-stderr "$RL" -u "$U" --reply-timeout 1s exec \
		    $opt -n -t 5s cut -- true
		[[ $stderr == *"replicas acknowledged"* ]]
		[[ $stderr == *"failover may be under way"* ]]
		run -75 --separate-stderr "$RL" -u "$U" --reply-timeout 300ms exec \
		    $opt -w 1500ms -t 5s cut -- true
		# Nothing held: a semaphore keeps its count of free permits.
		if [ "$opt" = "--limit 2" ]; then
			[ "$(mcli "$M_PORT" get cut)" = 2 ]
		else
			[ "$(mcli "$M_PORT" exists cut)" = 0 ]
		fi
		[ "$(mcli "$M_PORT" exists "redlock_holder:{cut}")" = 0 ]
	done
	run -0 "$RL" -u "$U" exec --replicas 0 -n -t 5s cut0 -- true
	# Linked again: acknowledged.
	mcli "$R_PORT" config set masteruser "" masterauth "" >/dev/null
	wait_for 30 link_up "$R_PORT"
	run -0 "$RL" -u "$U" exec -n -t 5s cut0 -- true
}

@test "a replica promoted before the sentinels name it (a failover's first step): the old master is WAITed on and refuses" {
	topology
	fast_info
	mcli "$R_PORT" replicaof no one >/dev/null
	wait_for 20 replica_seen "$R_PORT" role-reported master
	sentinels_say "$M_PORT"
	# WAIT for 1 s, well within the 8 s after which the sentinels make
	# a master they do not name a replica again.
	run -69 --separate-stderr "$RL" -u "$U" --reply-timeout 1s exec -n -t 5s \
	    early -- true
	[[ $stderr == *"replicas acknowledged"* ]]
	[ "$(mcli "$M_PORT" exists early)" = 0 ]
	run -0 "$RL" -u "$U" exec --replicas 0 -n -t 5s early -- true
}

@test "a waiter connected before a failover hears +switch-master: it leaves the old master and is woken on the new one (--replicas 0: the subscription alone)" {
	topology
	: >"$D/log"
	"$RL" -u "$U" exec --replicas 0 -t 6s SY -- sh -c 'echo "b $REDLOCK_FENCE A $(($(date +%s%N) / 1000000))" >>"$0/log"
	    while [ ! -e "$0/a.stop" ]; do sleep 0.05; done
	    echo "e $REDLOCK_FENCE A $(($(date +%s%N) / 1000000))" >>"$0/log"' \
	    "$D" 2>"$D/a.err" 3>&- &
	apid=$!
	epid=$apid
	wait_for 10 exists_on "$R_PORT" SY
	# W records whether its hold is on R, the new master.
	"$RL" -u "$U" exec --replicas 0 -w 60s -t 6s SY -- sh -c '
	    echo "b $REDLOCK_FENCE W $(($(date +%s%N) / 1000000))" >>"$0/log"
	    redis-cli -p "$1" hexists SY "$REDLOCK_OWNER" >"$0/on-new"
	    redis-cli -p "$2" hexists SY "$REDLOCK_OWNER" >"$0/on-old"' \
	    "$D" "$R_PORT" "$M_PORT" 2>"$D/w.err" 3>&- &
	wpid=$!
	epid="$apid $wpid"
	wait_for 20 eval '[ "$(mcli "$M_PORT" pubsub numsub "redisson_lock__channel:{SY}" | sed -n 2p)" -ge 1 ]'
	failover
	# The old master is not demoted: only the switch heard moves them.
	wait_for 20 eval '[ "$(mcli "$R_PORT" pubsub numsub "redisson_lock__channel:{SY}" | sed -n 2p)" -ge 1 ]'
	t0=$(now_ms)
	touch "$D/a.stop"
	reap -t 30 "$apid"
	reap -t 30 "$wpid"
	epid=
	cat "$D/log" "$D/a.err" "$D/w.err" >&3
	run -0 cat "$D/on-new" "$D/on-old"
	assert_output "$(printf '1\n0')"
	# Woken by A's release on the new master, not by its lease (6 s).
	wb=$(awk '$1 == "b" && $3 == "W" { print $4 }' "$D/log")
	echo "W began $((wb - t0)) ms after A was told to end" >&3
	[ $((wb - t0)) -lt 3000 ]
}

@test "a connection opened while the master had no replica counts them again once one attaches: its renewals WAIT, and fail when it stops" {
	topology
	fast_info
	kill -9 "$R_PID"
	wait_for 20 eval 'scli "$S1_PORT" sentinel replicas mymaster | grep -q s_down'
	wait_for 20 eval '[ "$(mcli "$M_PORT" role | sed -n 3p)" = "" ]'
	"$RL" -u "$U" exec -v -t 3s rc -- sleep 12 2>"$D/err" 3>&- &
	epid=$!
	wait_for 10 exists_on "$M_PORT" rc
	calls0=$(wait_calls "$M_PORT")
	restart_redis R --repl-diskless-sync-delay 0 --replicaof 127.0.0.1 "$M_PORT"
	wait_for 30 link_up "$R_PORT"
	wait_for 10 eval '[ "$(wait_calls "$M_PORT")" -gt "$calls0" ]'
	# Stopped, the replica acknowledges nothing: the renewals fail.
	kill -STOP "$R_PID"
	st=0
	reap -t 30 "$epid" || st=$?
	epid=
	kill -CONT "$R_PID"
	sed 's/^/err: /' "$D/err" >&3
	[ "$st" -eq 79 ]
	grep -q "replicas acknowledged" "$D/err"
}

# The COMMAND of a waiter: on which of the masters (ports $1 and $3)
# the holder metadata of NAME ($2) names its redlock process (the
# watchdog's parent), a count per line, into DIR ($0)/where-NAME.
where_sh='p=$(ps -o ppid= -p "$PPID" | tr -d " ")
	    for port in "$1" "$3"; do
		redis-cli -p "$port" hvals "redlock_holder:{$2}" |
		    grep -c "\"pid\":$p,"
	    done >"$0/where-$2.new"; mv "$0/where-$2.new" "$0/where-$2"'

@test "every kind's waiter hears +switch-master and is woken on the new master (--replicas 0): plain, --fair, -s, --write, --limit" {
	topology
	local k opt hold name
	kinds="plain: fair:--fair shared:-s write:--write limit:--limit_1"
	for k in $kinds; do
		name=sw-${k%%:*}
		opt=${k#*:}
		opt=${opt/_/ }
		hold=$opt
		# A reader waits behind a writer, the others behind their own.
		[ "${k%%:*}" != shared ] || hold=--write
		"$RL" -u "$U" exec $hold --replicas 0 -t 8s "$name" -- sh -c '
		    while [ ! -e "$0/a.stop" ]; do sleep 0.05; done' "$D" \
		    2>"$D/a-$name.err" 3>&- &
		epid="${epid-} $!"
		wait_for 10 eval '[ "$(mcli "$R_PORT" exists "redlock_holder:{$name}")" = 1 ]'
		"$RL" -u "$U" exec $opt --replicas 0 -w 60s -t 8s "$name" -- \
		    sh -c "$where_sh" "$D" "$R_PORT" "$name" "$M_PORT" \
		    2>"$D/w-$name.err" 3>&- &
		epid="$epid $!"
	done
	# Every waiter listens on S1 (and every holder's watchdog).
	wait_for 20 eval '[ "$(scli "$S1_PORT" client list | grep -c " sub=1 ")" -ge 10 ]'
	failover
	touch "$D/a.stop"
	for k in $kinds; do
		name=sw-${k%%:*}
		wait_for 30 test -e "$D/where-$name" || {
			cat "$D/w-$name.err" "$D/a-$name.err" >&2
			false
		}
		echo "$name: on the new master, the old:" $(cat "$D/where-$name") >&3
		[ "$(cat "$D/where-$name")" = "$(printf '1\n0')" ]
	done
}

@test "--min-hold through Sentinel: the finished hold is replicated, and after a failover the new master keeps it to its end" {
	topology
	run -0 "$RL" -u "$U" exec --min-hold 30s mh -- true
	run -0 "$RL" -u "$U" exec -s --min-hold 30s mhs -- true
	# The release that finished them went to the replica too.
	wait_for 10 eval '[ "$(mcli "$R_PORT" hget "redlock_holder:{mh}" "$(mcli "$M_PORT" hkeys "redlock_holder:{mh}")" | grep -c "\"finished\":true")" = 1 ]'
	failover
	demote
	run -75 --separate-stderr "$RL" -u "$U" exec -n mh -- true
	[[ $stderr == *"finished, held until "*"(--min-hold)"* ]]
	run -75 --separate-stderr "$RL" -u "$U" exec -n --write mhs -- true
	run -0 "$RL" -u "$U" status mh
	[[ $output == *"finished, held until "* ]]
	p=$(pttl_on "$R_PORT" mh)
	[ "$p" -gt 20000 ]
	[ "$p" -le 30000 ]
	run -0 "$RL" -u "$U" unlock --force mh
	run -0 "$RL" -u "$U" exec -n mh -- true
}

@test "through Sentinel, across a failover: a pool's waiter woken on the new master, lock --extend there, --supersede" {
	topology
	t1=$("$RL" -u "$U" lock -t 60s p1)
	t2=$("$RL" -u "$U" lock -t 60s p2)
	wait_for 10 exists_on "$R_PORT" p2
	"$RL" -u "$U" exec -q -w 60s --waiter-timeout 60s --any p1 p2 -- \
	    sh -c 'echo "$REDLOCK_NAME $(date +%s%3N)" >"$0/got"' "$D" \
	    2>"$D/err" 3>&- &
	epid=$!
	wait_for 20 eval '[ "$(mcli "$M_PORT" zcard "redlock_room:{p2}")" = 1 ]'
	failover
	demote
	# The waiter is back in p2's room, listening, on the new master.
	wait_for 30 eval '[ "$(mcli "$R_PORT" pubsub numsub "redisson_lock__channel:{p2}" | sed -n 2p)" -ge 1 ]'
	# The hold replicated: extended on the new master.
	run -0 "$RL" -u "$U" lock --owner "$t1" --extend 90s p1
	[ "$(pttl_on "$R_PORT" p1)" -gt 80000 ]
	run -1 "$RL" -u "$U" lock --owner "$t2" --extend 90s p1
	t0=$(now_ms)
	run -0 "$RL" -u "$U" unlock --owner "$t2" p2
	wait_for 15 test -s "$D/got"
	read -r n at <"$D/got"
	[ "$n" = p2 ]
	echo "the pool took p2 $((at - t0)) ms after its release" >&3
	# 60 s leases: only a message brings it this soon.
	[ $((at - t0)) -lt 10000 ]
	reap -t 20 "$epid"
	epid=
	# --supersede on the new master: the older waiter gives up at once.
	"$RL" -u "$U" exec -w 30s --supersede --label old p1 -- true \
	    2>"$D/old.err" 3>&- &
	old=$!
	epid=$old
	wait_for 20 eval '[ "$(mcli "$R_PORT" hlen "redlock_supersede:{p1}")" = 1 ]'
	"$RL" -u "$U" exec -q -w 30s --supersede --label new p1 -- true 3>&- &
	epid="$old $!"
	st=0
	reap -t 20 "$old" || st=$?
	[ "$st" = 80 ]
	grep -q "superseded by .* (new)" "$D/old.err"
	run -0 "$RL" -u "$U" unlock --owner "$t1" p1
	reap -t 20 ${epid#* }
	epid=
}
