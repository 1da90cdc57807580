#!/usr/bin/env bats
# exec: COMMAND under the lock, the watchdog, signals and faults.

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	kill -CONT "$R_PID"
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
}
teardown() { kill -CONT "$R_PID"; stop_strays; }

# exec in the background with its pid in $epid: redlock itself, not a shell.
bg_exec() {
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec "$@" 3>&- &
	epid=$!
}

@test "exit status: COMMAND's own, 128+N for a signal, 127 not found, 126 not executable" {
	run -7 rl exec x -- sh -c 'exit 7'
	run -0 rl exec x -- true
	run -137 rl exec x -- sh -c 'kill -9 $$'
	run -143 rl exec x -- sh -c 'kill -TERM $$'
	run -127 --separate-stderr rl exec x -- /nonexistent/cmd
	assert_equal "$stderr" "redlock: cannot run /nonexistent/cmd: No such file or directory"
	run -127 --separate-stderr rl exec x -- no-such-command-anywhere
	printf 'echo hi\n' >"$D/noexec"
	chmod 644 "$D/noexec"
	run -126 --separate-stderr rl exec x -- "$D/noexec"
	[[ $stderr == *"Permission denied"* ]]
	key_gone x
}

@test "usage errors exit 64 and run nothing" {
	run -64 --separate-stderr rl exec x
	[[ $stderr == *"missing -- before COMMAND"* ]]
	run -64 --separate-stderr rl exec x --
	[[ $stderr == *"missing COMMAND after --"* ]]
	run -64 --separate-stderr rl exec -- touch "$D/ran"
	[[ $stderr == *"missing NAME"* ]]
	run -64 --separate-stderr rl exec x y -- touch "$D/ran"
	run -64 --separate-stderr rl exec --on-lost maybe x -- touch "$D/ran"
	[[ $stderr == *"--on-lost: 'maybe' is not term, kill or ignore"* ]]
	run -64 --separate-stderr rl exec --kill-after 5q x -- touch "$D/ran"
	run -64 --separate-stderr rl exec -t 20ms x -- touch "$D/ran"
	run -64 --separate-stderr rl exec --bogus x -- touch "$D/ran"
	[ ! -e "$D/ran" ]
	[ "$(rcli dbsize)" = 0 ]
}

@test "COMMAND's words after -- are its own, options included" {
	run -0 rl exec x -- printf '%s|' -n --ttl -- -w
	assert_output -- '-n|--ttl|--|-w|'
}

@test "COMMAND sees REDLOCK_NAME, _OWNER, _FENCE, _TTL_MS and _URL without the password" {
	start_redis P --requirepass pw
	run -0 --separate-stderr "$RL" -u "redis://:pw@127.0.0.1:$P_PORT" exec -t 9s x -- \
	    sh -c 'redis-cli -p '"$P_PORT"' -a pw --no-auth-warning hget x "$REDLOCK_OWNER"; env | grep ^REDLOCK_ | sort'
	stop_redis "$P_PID"
	assert_line --index 0 1
	assert_line "REDLOCK_NAME=x"
	assert_line --regexp '^REDLOCK_OWNER=[0-9a-f-]{36}:[0-9]+$'
	assert_line --regexp '^REDLOCK_FENCE=[0-9]+$'
	assert_line "REDLOCK_TTL_MS=9000"
	assert_line "REDLOCK_URL=redis://127.0.0.1:$P_PORT"
	refute_output --partial pw@
}

@test "the lease stays alive through a COMMAND that outlives it several times" {
	# COMMAND runs until the test has watched the lease for 3.5 s, 3.5
	# times the 1 s lease, however long each look takes on a busy box.
	bg_exec --ttl 1s x -- sh -c 'while [ ! -e "$0/stop" ]; do sleep 0.05; done' "$D"
	wait_for 5 eval '[ "$(rcli exists x)" = 1 ]'
	t0=$(now_ms) n=0
	while [ $(($(now_ms) - t0)) -lt 3500 ]; do
		pttl=$(rcli pttl x)
		[ "$pttl" -gt 0 ]
		run -75 rl lock -n x
		n=$((n + 1))
		sleep 0.25
	done
	echo "$n looks in 3.5 s" >&3
	touch "$D/stop"
	reap "$epid"
	key_gone x
}

@test "status shows exec's pid and COMMAND while it runs" {
	bg_exec x -- sleep 30
	wait_for 5 eval '[ "$(rcli exists x)" = 1 ]'
	run -0 rl status --json x
	echo "$output" | jq -e --argjson p "$epid" '.pid == $p and .cmd == "sleep 30"'
	kill -TERM "$epid"
	status=0
	reap "$epid" || status=$?
	[ "$status" -eq 143 ]
	key_gone x
}

@test "DEL behind exec's back: SIGTERM at the next renewal, not at the lease deadline, exit 79" {
	# Renewals every 2 s. Were the loss noticed only at the local lease
	# deadline (6 s - drift - --kill-after after the last renewal), the
	# SIGTERM would come at least 3.8 s after the DEL.
	bg_exec --ttl 6s --kill-after 100ms x -- sh -c 'trap "date +%s%N >'"$D"'/term; exit 0" TERM; sleep 30 & wait'
	wait_for 5 eval '[ "$(rcli exists x)" = 1 ]'
	t_del=$(date +%s%N)
	rcli del x >/dev/null
	status=0
	reap "$epid" || status=$?
	[ "$status" -eq 79 ]
	took=$((($(cat "$D/term") - t_del) / 1000000))
	echo "SIGTERM $took ms after DEL (renewal every 2000 ms)" >&3
	[ "$took" -lt 3000 ]
	key_gone x
}

@test "a COMMAND that ignores SIGTERM is SIGKILLed after --kill-after" {
	bg_exec --ttl 600ms --kill-after 700ms x -- sh -c 'trap "" TERM; sleep 30'
	wait_for 5 eval '[ "$(rcli exists x)" = 1 ]'
	t_del=$(now_ms)
	rcli del x >/dev/null
	status=0
	reap "$epid" || status=$?
	took=$(($(now_ms) - t_del))
	echo "exited $took ms after DEL (renewal every 200 ms, --kill-after 700 ms)" >&3
	[ "$status" -eq 79 ]
	[ "$took" -ge 700 ]
	# Renewal, then --kill-after; the default --kill-after (5 s) or none
	# (COMMAND sleeps 30 s) would show.
	[ "$took" -lt $((200 + 700 + 2000)) ]
}

@test "--on-lost kill sends SIGKILL at once, not after --kill-after" {
	bg_exec --ttl 600ms --on-lost kill --kill-after 30s x -- sh -c 'trap "" TERM; sleep 30'
	wait_for 5 eval '[ "$(rcli exists x)" = 1 ]'
	t_del=$(now_ms)
	rcli del x >/dev/null
	status=0
	reap "$epid" || status=$?
	took=$(($(now_ms) - t_del))
	echo "exited $took ms after DEL (renewal every 200 ms, --kill-after 30 s)" >&3
	[ "$status" -eq 79 ]
	[ "$took" -lt $((200 + 2000)) ]
}

# A 3 s lease, renewed every second: past two renewals after the deletion.
# (With 300 ms, a watchdog 231 ms late said so, not removed, with two
# suites at once.)
@test "--on-lost ignore lets COMMAND finish, warns, and exits with its status" {
	run -5 --separate-stderr rl exec --ttl 3s --on-lost ignore x -- \
	    sh -c 'sleep 0.2; redis-cli -p '"$R_PORT"' del x >/dev/null; sleep 2.5; exit 5'
	[[ $stderr == "redlock: lost the lock on x (it was removed while held (unlock --force, a deleted key or data lost by the server); last confirmed "*"); COMMAND goes on unprotected (--on-lost ignore)" ]]
}

@test "a paused server: COMMAND is dead before the last confirmed renewal + ttl, exit 79" {
	bg_exec -v --ttl 2s x -- sh -c 'trap "date +%s%N >'"$D"'/died; exit 1" TERM; sleep 30 & wait' 2>"$D/events"
	wait_for 5 grep -q 'renewed x' "$D/events"
	t_stop=$(now_ms)
	kill -STOP "$R_PID"
	status=0
	reap "$epid" || status=$?
	kill -CONT "$R_PID"
	[ "$status" -eq 79 ]
	died=$(($(cat "$D/died") / 1000000))
	last=$(grep 'renewed x' "$D/events" | tail -n 1 | cut -d' ' -f2)
	last_ms=$(($(date -d "$last" +%s%N) / 1000000))
	echo "died $((died - last_ms)) ms after the last confirmed renewal, $((died - t_stop)) ms after the stop" >&3
	[ "$died" -lt $((last_ms + 2000)) ]
	[ "$died" -lt $((t_stop + 2000)) ]
	grep -q 'lost x: the server stopped answering' "$D/events"
	grep -q 'lost the lock on x while COMMAND ran (the server stopped answering' "$D/events"
}

@test "a paused server and a COMMAND that ignores SIGTERM: SIGKILL at the local lease deadline, before --kill-after, and the line says so" {
	bg_exec -v --ttl 3s --kill-after 30s x -- sh -c 'trap "" TERM; sleep 60' 2>"$D/events"
	wait_for 5 grep -q 'renewed x' "$D/events"
	t_stop=$(now_ms)
	kill -STOP "$R_PID"
	status=0
	reap -t 25 "$epid" || status=$?
	kill -CONT "$R_PID"
	took=$(($(now_ms) - t_stop))
	echo "ended $took ms after the stop (--ttl 3s, --kill-after 30s)" >&3
	[ "$status" -eq 79 ]
	grep -q 'the local lease deadline came before --kill-after: SIGKILL to COMMAND' "$D/events"
	! grep -q 'outlived --kill-after' "$D/events"
	grep -q 'lost the lock on x while COMMAND ran (the server stopped answering; lease last confirmed .* before the loss): COMMAND was sent SIGTERM, then killed (SIGKILL) at the local lease deadline, before the server could expire the lease (before --kill-after)$' "$D/events"
}

@test "kill -9 of redlock: COMMAND and its grandchild are gone, and the lock, long before its 30 s lease" {
	bg_exec --ttl 30s x -- sh -c 'echo $$ >'"$D"'/c; sleep 60 & echo $! >'"$D"'/g; wait'
	wait_for 5 test -s "$D/g"
	c=$(cat "$D/c") g=$(cat "$D/g")
	kill -9 "$epid"
	t0=$(now_ms)
	wait_for 5 eval 'all_dead '"$c $g"' && key_gone x'
	echo "cleaned up in $(($(now_ms) - t0)) ms" >&3
}

@test "kill -9 of the watchdog: redlock kills COMMAND, releases and exits 79" {
	bg_exec x -- sh -c 'echo $$ >'"$D"'/c; sleep 60'
	wait_for 5 test -s "$D/c"
	c=$(cat "$D/c")
	wd=$(ps -o ppid= -p "$c" | tr -d ' ')
	[ "$wd" != "$epid" ]
	kill -9 "$wd"
	status=0
	reap "$epid" || status=$?
	[ "$status" -eq 79 ]
	wait_for 5 dead "$c"	# else it sleeps 60 s
	key_gone x
}

# in_group PGID: the processes of process group PGID that have not
# exited (zombies left out), one pid a line.
in_group() { ps -e -o pgid=,pid=,stat= | awk -v g="$1" '$1 == g && $3 !~ /^Z/ { print $2 }'; }
group_empty() { [ -z "$(in_group "$1")" ]; }

# setsid_exec ARGS...: exec in a session and process group of its own, as
# a CI runner starts a job, in the background: its pid (and group) in
# $epid, COMMAND's pid in $c (COMMAND writes it to $D/c), the watchdog's
# in $wd.
setsid_exec() {
	setsid "$RL" -u "redis://127.0.0.1:$R_PORT" exec "$@" 3>&- &
	epid=$!
	wait_for 5 test -s "$D/c"
	c=$(cat "$D/c")
	wd=$(ps -o ppid= -p "$c" | tr -d ' ')
	# setsid ran redlock itself (it forks only when it leads a group).
	[ "$(ps -o pgid= -p "$epid" | tr -d ' ')" = "$epid" ]
}

@test "SIGKILL to the process group exec was started in (a CI runner's cancel), or to redlock alone: no process of COMMAND's tree is left within 1 s, then the lock is released" {
	for target in group redlock; do
		rm -f "$D/c"
		setsid_exec x -- sh -c 'echo $$ >'"$D"'/c; sleep 30 & sleep 30; wait'
		wait_for 5 eval '[ "$(in_group "$c" | wc -l)" = 3 ]'
		tree="$c $(descendants "$c")"
		if [ "$target" = group ]; then
			kill -KILL -- "-$epid"
		else
			kill -KILL "$epid"
		fi
		t0=$(now_ms)
		if ! wait_for 1 group_empty "$c"; then
			echo "$target: left after 1 s: $(in_group "$c" | tr '\n' ' ')" >&2
			in_group "$c" | xargs -r kill -9
			false
		fi
		echo "SIGKILL to the $target: COMMAND's group gone $(($(now_ms) - t0)) ms after" >&3
		all_dead $tree
		# The watchdog held the lock until then, and gives it back.
		wait_for 5 dead "$wd"
		wait_for 5 key_gone x
		key_gone 'redlock_holder:{x}'
		wait "$epid" 2>/dev/null || :
	done
}

@test "SIGKILL to redlock alone: COMMAND's whole group ends, one that ignores SIGTERM by SIGKILL after --kill-after, and the lock is held until none is left" {
	setsid_exec --kill-after 1s x -- sh -c 'echo $$ >'"$D"'/c; (trap "" TERM; exec sleep 30) & sleep 30 & wait'
	wait_for 5 eval '[ "$(in_group "$c" | wc -l)" = 3 ]'
	tree="$c $(descendants "$c")"
	kill -KILL "$epid"
	t0=$(now_ms)
	wait_for 5 dead "$c"
	# The one that ignores SIGTERM lives on until --kill-after: the lock
	# stays held while it does (the key read before the group is).
	while :; do
		held=$(rcli exists x)
		group_empty "$c" && break
		[ "$held" = 1 ]
		[ $(($(now_ms) - t0)) -lt 5000 ]
		nap 0.05
	done
	took=$(($(now_ms) - t0))
	echo "COMMAND's group gone $took ms after the kill (--kill-after 1s)" >&3
	[ "$took" -ge 1000 ]
	all_dead $tree
	wait_for 5 dead "$wd"
	wait_for 5 key_gone x
}

@test "--on-lost kill with exec in a group of its own: the SIGKILL reaches every process of COMMAND's group" {
	setsid_exec --ttl 600ms --on-lost kill x -- sh -c 'echo $$ >'"$D"'/c; trap "" TERM; sleep 30 & sleep 30; wait'
	wait_for 5 eval '[ "$(in_group "$c" | wc -l)" = 3 ]'
	tree="$c $(descendants "$c")"
	rcli del x >/dev/null
	status=0
	reap "$epid" || status=$?
	[ "$status" -eq 79 ]
	wait_for 2 group_empty "$c"
	all_dead $tree
}

@test "on a terminal: COMMAND has it and Ctrl-C reaches it; the watchdog runs in a group of its own; the caller gets the terminal back" {
	command -v script >/dev/null || skip "script(1) is needed for a terminal"
	# script(1) copies its standard input to the terminal: ^C once
	# COMMAND runs, then nothing until the run is over.
	feed() {
		wait_for 10 test -e "$D/ready"
		printf '\003'
		wait_for 20 test -e "$D/over"
	}
	run -0 script -qfec "sh -c '
	    echo caller \$(ps -o pgid= -p \$\$)
	    $RL -u redis://127.0.0.1:$R_PORT exec x -- sh -c \"ps -o pgid=,tpgid= -p \\\$\\\$; ps -o pgid= -p \\\$PPID; touch $D/ready; sleep 30\"
	    echo status \$?
	    ps -o pgid=,tpgid= -p \$\$'" /dev/null < <(feed 3>&-)
	touch "$D/over"
	echo "$output"
	lines=()
	while read -r l; do lines+=("$l"); done <<<"${output//$'\r'/}"
	read -r _ caller <<<"${lines[0]}"
	read -r cpg ctpg <<<"${lines[1]}"
	wdpg=${lines[2]}
	# COMMAND leads its group, the terminal's foreground group.
	[ "$cpg" = "$ctpg" ]
	[ "$cpg" != "$caller" ]
	# The watchdog: neither the caller's group nor COMMAND's.
	[ "$wdpg" != "$caller" ]
	[ "$wdpg" != "$cpg" ]
	[[ ${lines[3]} == *"status 130" ]]
	# The caller's group has the terminal again.
	read -r pg tpg <<<"${lines[4]}"
	[ "$pg" = "$caller" ]
	[ "$tpg" = "$caller" ]
	key_gone x
}

@test "kill -9 of redlock and its watchdog together: the kernel kills COMMAND" {
	bg_exec x -- sh -c 'echo $$ >'"$D"'/c; exec sleep 60'
	wait_for 5 test -s "$D/c"
	c=$(cat "$D/c")
	wd=$(ps -o ppid= -p "$c" | tr -d ' ')
	kill -9 "$epid" "$wd"
	t0=$(now_ms)
	wait_for 5 dead "$c"	# else it sleeps 60 s
	echo "COMMAND gone $(($(now_ms) - t0)) ms after the kill" >&3
}

@test "SIGTERM to redlock: COMMAND's trap runs, exit with its status, lock released" {
	bg_exec x -- sh -c 'trap "echo trapped >'"$D"'/t; exit 42" TERM; echo >'"$D"'/ready; sleep 30 & wait'
	wait_for 5 test -e "$D/ready"
	kill -TERM "$epid"
	status=0
	reap "$epid" || status=$?
	[ "$status" -eq 42 ]
	[ "$(cat "$D/t")" = trapped ]
	key_gone x
	key_gone 'redlock_holder:{x}'
}

@test "USR1 and HUP reach COMMAND once each" {
	bg_exec x -- sh -c 'n=0; trap "n=\$((n+1)); echo usr1 \$n >>'"$D"'/sig" USR1; trap "echo hup >>'"$D"'/sig; exit 3" HUP; echo >'"$D"'/ready; while :; do sleep 0.05; done'
	wait_for 5 test -e "$D/ready"
	kill -USR1 "$epid"
	wait_for 5 grep -q 'usr1 1' "$D/sig"
	kill -HUP "$epid"
	status=0
	reap "$epid" || status=$?
	[ "$status" -eq 3 ]
	run cat "$D/sig"
	assert_output $'usr1 1\nhup'
}

@test "SIGINT while waiting: exit 130, COMMAND never ran, nothing left in Redis" {
	tok=$(rl lock x)
	bg_exec -w 30s x -- touch "$D/ran"
	wait_for 5 has_subscribers x 1
	kill -INT "$epid"
	status=0
	reap "$epid" || status=$?
	[ "$status" -eq 130 ]
	[ ! -e "$D/ran" ]
	[ "$(subscribers x)" = 0 ]
	[ "$(rcli hlen x)" = 2 ]	# the owner and redlock's marker
	[ "$(rcli hget x "$tok")" = 1 ]
	[ "$(rcli hlen 'redlock_holder:{x}')" = 1 ]
}

@test "nested exec with the inherited owner re-enters; all holds are returned" {
	run -0 rl exec x -- "$RL" -u "redis://127.0.0.1:$R_PORT" exec x -- \
	    sh -c 'redis-cli -p '"$R_PORT"' hget x "$REDLOCK_OWNER"'
	assert_output 2
	key_gone x
	key_gone 'redlock_holder:{x}'
}

@test "zero overlap: 8 workers x 25 exec runs on one lock" {
	worker() {
		for _ in $(seq 1 25); do
			rl exec -w 60s ov -- sh -c '
			    mkdir "$0/cs" 2>/dev/null || echo overlap >>"$0/overlaps"
			    sleep 0.005
			    echo done >>"$0/done"
			    rmdir "$0/cs"' "$D" || echo "fail $?" >>"$D/fails"
		done
	}
	pids=
	for _ in $(seq 1 8); do worker 3>&- & pids="$pids $!"; done
	for p in $pids; do reap "$p"; done
	[ ! -e "$D/fails" ]
	[ ! -e "$D/overlaps" ]
	[ "$(wc -l <"$D/done")" -eq 200 ]
	key_gone ov
}

@test "zero overlap with -n: successes and 75s add up to 200" {
	worker() {
		for _ in $(seq 1 25); do
			s=0
			rl exec -n -q ov -- sh -c '
			    mkdir "$0/cs" 2>/dev/null || echo overlap >>"$0/overlaps"
			    sleep 0.005
			    rmdir "$0/cs"' "$D" || s=$?
			case $s in
			0) echo ok >>"$D/ok" ;;
			75) echo busy >>"$D/busy" ;;
			*) echo "fail $s" >>"$D/fails" ;;
			esac
		done
	}
	pids=
	for _ in $(seq 1 8); do worker 3>&- & pids="$pids $!"; done
	for p in $pids; do reap "$p"; done
	[ ! -e "$D/fails" ]
	[ ! -e "$D/overlaps" ]
	ok=$(cat "$D/ok" 2>/dev/null | wc -l) busy=$(cat "$D/busy" 2>/dev/null | wc -l)
	echo "$ok acquired, $busy busy" >&3
	[ $((ok + busy)) -eq 200 ]
	[ "$ok" -gt 0 ]
}

@test "stdin reaches COMMAND, and COMMAND holds no socket to the server" {
	run -0 bash -c 'echo hi | "$0" -u "redis://127.0.0.1:$1" exec x -- cat' "$RL" "$R_PORT"
	assert_output hi
	run -0 rl exec x -- sh -c 'for f in /proc/$$/fd/*; do readlink "$f" || :; done'
	refute_output --partial socket:
}

@test "-v logs acquire, renew and release with timestamps" {
	run -0 --separate-stderr rl exec -v --ttl 300ms x -- sleep 0.5
	[[ $stderr =~ redlock:\ 20[0-9-]+T[0-9:.]+Z\ acquired\ x\ \(fence\ [0-9]+,\ lease\ 300ms\) ]]
	[[ $stderr == *"renewed x (lease 300ms)"* ]]
	[[ $stderr == *"released x"* ]]
}

@test "a waiting line is drawn on a terminal; otherwise whole lines, never redrawn" {
	command -v script >/dev/null || skip "script(1) is needed for a terminal"
	tok=$(rl lock -t 1500ms x)
	run -0 script -qfec "$RL -u redis://127.0.0.1:$R_PORT exec -w 5s x -- true" /dev/null
	assert_output --partial $'\r\033[Kwaiting for x: held by '"$(hostname) pid "
	refute_output --regexp 'redlock: [0-9TZ:.-]+ waiting for'
	rl lock -t 1500ms y >/dev/null
	run -0 --separate-stderr rl exec -w 5s y -- true
	[[ $stderr == "redlock: "20[0-9][0-9]-*"Z waiting for y: held by $(hostname) pid "* ]]
	[[ $stderr != *$'\r'* ]] && [[ $stderr != *$'\033'* ]]
}

@test "lock --keepalive --pid: the lease outlives its ttl while PID lives, and is released when PID exits, not left to run out" {
	sleep 30 3>&- &
	p=$!
	tok=$(rl lock --keepalive --pid "$p" -t 3s x)
	sleep 3.5
	[ "$(rcli hget x "$tok")" = 1 ]
	[ "$(rcli pttl x)" -gt 0 ]
	kill "$p"
	reap "$p" || :
	t0=$(now_ms)
	wait_for 5 key_gone x
	took=$(($(now_ms) - t0))
	# Renewed every second, the lease has at least 2 s left.
	echo "released $took ms after PID exited" >&3
	[ "$took" -lt 1000 ]
}

@test "lock --keepalive: unlock ends the keepalive process" {
	sleep 30 3>&- &
	p=$!
	tok=$(rl lock --keepalive --pid "$p" -t 600ms x)
	kp=$(pgrep -f -- "--keepalive --pid $p")
	[ -n "$kp" ]
	rl unlock --owner "$tok" x
	t0=$(now_ms)
	wait_for 5 dead "$kp"	# else it renews until PID ends, in 30 s
	echo "keepalive ended $(($(now_ms) - t0)) ms after unlock" >&3
	kill "$p"
	run -64 --separate-stderr rl lock --pid 1 x
	[[ $stderr == *"--pid goes with --keepalive"* ]]
}

@test "lock --keepalive returns at once inside \$(...) and its keeper leaves on SIGTERM, releasing" {
	sleep 30 3>&- &
	p=$!
	t0=$(now_ms)
	tok=$(rl lock --keepalive --pid "$p" x)
	took=$(($(now_ms) - t0))
	echo "returned after $took ms" >&3
	# Had the keeper kept stdout open, \$(...) would wait for PID: 30 s.
	[ "$took" -lt 5000 ]
	kp=$(pgrep -f -- "--keepalive --pid $p")
	kill -TERM "$kp"
	t0=$(now_ms)
	wait_for 5 key_gone x	# else the 30 s lease runs out
	echo "released $(($(now_ms) - t0)) ms after SIGTERM" >&3
	kill "$p"
}

@test "waiting with standard error not a terminal (a CI log): a line at once, one when the holder changes, none with -q" {
	rl lock -t 60s x >/dev/null
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec -w 20s x -- true 2>"$D/log" 3>&- &
	w=$!
	wait_for 2 grep -q . "$D/log"
	run cat "$D/log"
	assert_output --regexp "^redlock: [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z waiting for x: held by $(hostname) pid [0-9]+ \\(.*\\) for [0-9.]+m?s, lease [0-9.]+s left\$"
	# Another holder, and a wake-up that tells the waiter: a second line.
	rcli eval "redis.call('del', KEYS[1]); redis.call('hset', KEYS[1], 'other:1', 1); redis.call('pexpire', KEYS[1], 60000)" 1 x >/dev/null
	rcli publish 'redisson_lock__channel:{x}' 0 >/dev/null
	wait_for 5 eval '[ "$(wc -l <"$D/log")" = 2 ]'
	run sed -n 2p "$D/log"
	assert_output --regexp '^redlock: [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z waiting for x: held by owner other:1, lease [0-9.]+s left$'
	# Woken again by nothing new: no line.
	rcli publish 'redisson_lock__channel:{x}' 0 >/dev/null
	sleep 0.3
	[ "$(wc -l <"$D/log")" = 2 ]
	rcli del x >/dev/null
	rcli publish 'redisson_lock__channel:{x}' 0 >/dev/null
	reap "$w"
	[ "$(wc -l <"$D/log")" = 2 ]
	# -q: nothing at all.
	rl lock -t 60s y >/dev/null
	run -75 --separate-stderr rl exec -q -w 500ms y -- true
	assert_equal "$stderr" ''
}

@test "each line on standard error is one write, so processes sharing a log do not interleave" {
	command -v strace >/dev/null && strace -o /dev/null true 2>/dev/null ||
	    skip "strace cannot trace here"
	rl lock -t 1s x >/dev/null
	# LeakSanitizer cannot run under ptrace.
	ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0 strace -f -s 4096 \
	    -e trace=write -o "$D/trace" "$RL" -u "redis://127.0.0.1:$R_PORT" \
	    exec -v -w 5s x -- true 2>"$D/err"
	# The waiting line, acquired, released: whole lines, one write each.
	run grep -E 'write\(2, "redlock: ' "$D/trace"
	[ "${#lines[@]}" -ge 3 ]
	for l in "${lines[@]}"; do
		[[ $l == *'\n", '* ]]
	done
	[ "$(grep -c '^redlock: ' "$D/err")" = "${#lines[@]}" ]
}

@test "a hold gone at release is never reported as success: removed (unlock --force), taken by another owner, exit 79 however COMMAND ended" {
	# Removed by COMMAND itself, with a 30 s lease: no renewal comes in
	# between to notice. (Done from beside COMMAND, 0.2 s into a 0.5 s
	# run, it came too late, or before the acquisition, under load.)
	# shellcheck disable=SC2016
	force='"$0" -u "$REDLOCK_URL" unlock --force x'
	run -79 --separate-stderr rl exec -t 30s x -- sh -c "$force" "$RL"
	# Its history names who forced it away.
	[[ $stderr == "redlock: lost the lock on x before its release (COMMAND exited 0): removed by unlock --force from $(hostname) pid "*" ($(id -un)); another holder may have run beside COMMAND" ]]
	# Taken by another owner (its hold of y renamed over x, in one
	# step): that one keeps it.
	# shellcheck disable=SC2016
	run -79 --separate-stderr rl exec -t 30s x -- sh -c '
	    "$0" -u "$REDLOCK_URL" lock -t 30s y >"$1/other"
	    redis-cli -p "$2" rename y x >/dev/null; exit 3' "$RL" "$D" "$R_PORT"
	assert_equal "$stderr" "redlock: lost the lock on x before its release (COMMAND exited 3): it was taken by another owner; another holder may have run beside COMMAND"
	[ "$(rcli hget x "$(cat "$D/other")")" = 1 ]
	# --on-lost ignore: said all the same, COMMAND's status kept.
	rcli del x >/dev/null
	run -0 --separate-stderr rl exec --on-lost ignore -t 30s x -- \
	    sh -c "$force" "$RL"
	[[ $stderr == "redlock: lost the lock on x before its release (COMMAND exited 0): removed by unlock --force"* ]]
}

@test "-c STRING runs it with /bin/sh -c, as flock does, before or after NAME; with -- COMMAND too it is a usage error" {
	run -0 --separate-stderr rl exec -n x -c 'echo "$REDLOCK_NAME" one two | tr a-z A-Z'
	assert_output 'X ONE TWO'
	run -3 rl exec x -c 'exit 3'
	run -0 rl exec x --command 'echo $0'
	assert_output /bin/sh
	key_gone x
	run -64 --separate-stderr rl exec x -c true -- true
	[[ $stderr == "redlock: -c STRING and -- COMMAND do not go together: give COMMAND one way; usage: "* ]]
	run -64 --separate-stderr rl exec -n x sh -c 'echo hi'
	[[ $stderr == "redlock: one NAME, then -c STRING (or -- and COMMAND); got 'sh' too; "* ]]
}

@test "a one-word COMMAND with a blank that is not found (127) suggests -c" {
	run -127 --separate-stderr rl exec x -- './deploy.sh 1 0'
	assert_equal "$stderr" "redlock: cannot run ./deploy.sh 1 0: No such file or directory; to have /bin/sh split it into words, give it as -c './deploy.sh 1 0' instead of after --"
	key_gone x
}

@test "flock's --nonblock and --nb give up at once as -n does; -x takes the default, exclusive, lock" {
	rl lock -t 10s x >/dev/null
	run -75 --separate-stderr rl exec --nonblock x -- true
	run -75 --separate-stderr rl exec --nb x -- true
	run -75 --separate-stderr rl lock -x -n x
	run -0 rl exec -x -o y -- true
}

@test "signals blocked by whatever started redlock: COMMAND's end is still seen, SIGTERM still reaches it, and COMMAND gets the mask redlock was given" {
	# SIGCHLD blocked: the end of COMMAND went unnoticed, and the
	# watchdog renewed for ever, even after redlock was killed.
	# (To files, not through run: the orphaned watchdog would hold its
	# pipe, and the test would hang rather than fail.)
	st=0
	timeout -k 2 10 python3 "$BATS_TEST_DIRNAME/sigmask.py" CHLD,INT,TERM \
	    "$RL" -u "redis://127.0.0.1:$R_PORT" exec m -- sh -c 'exit 3' \
	    >"$D/out" 2>&1 3>&- || st=$?
	[ "$st" = 3 ]
	[ "$(rcli exists m)" = 0 ]
	# COMMAND (grep itself: a shell clears its mask) has the mask:
	# INT (2), TERM (15) and CHLD (17), bits 1, 14 and 16.
	timeout -k 2 10 python3 "$BATS_TEST_DIRNAME/sigmask.py" CHLD,INT,TERM \
	    "$RL" -u "redis://127.0.0.1:$R_PORT" exec m -- \
	    grep SigBlk /proc/self/status >"$D/out" 2>&1 3>&-
	assert_equal "$(cat "$D/out")" "SigBlk:	0000000000014002"
	# SIGTERM blocked: redlock still gets it, and relays it to COMMAND
	# (a shell, which clears the mask it was given), which it ends.
	python3 "$BATS_TEST_DIRNAME/sigmask.py" TERM \
	    "$RL" -u "redis://127.0.0.1:$R_PORT" exec m -- sh -c 'sleep 60' 3>&- &
	epid=$!
	wait_for 10 eval '[ "$(rcli exists m)" = 1 ]'
	nap 0.3
	kill -TERM "$epid"
	reap -t 10 "$epid" || status=$?
	[ "$status" -eq 143 ]
	[ "$(rcli exists m)" = 0 ]
}
