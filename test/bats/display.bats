#!/usr/bin/env bats
# What redlock shows people: holder commands shell-quoted, queue at 80
# columns, the watchdog's own name in ps, and log lines that say what
# happened (issue 32).

load helpers
bats_require_minimum_version 1.5.0

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
	export REDLOCK_URL=redis://127.0.0.1:$R_PORT
	# cmd NAME: the stored command of NAME's holder.
	printf '#!/bin/sh\n"%s" status --json "$1" | jq -r .cmd\n' "$RL" \
	    >"$D/cmd"
	chmod +x "$D/cmd"
}
teardown() {
	[ -z "${TM-}" ] || tmux -L "$TM" kill-server 2>/dev/null || :
	stop_strays
}

# term CMD: CMD (a shell command line) in a terminal of 80x24 columns,
# on a tmux server of the test's own; its screen in $D/screen by
# screen, its bytes as written in $D/raw.
term() {
	TM=rl$BASHPID
	: >"$D/raw"
	TERM=xterm tmux -L "$TM" -f /dev/null new-session -d -x 80 -y 24 \
	    -s t "$1; echo \"exit \$?\"; exec sleep 300" 3>&-
	tmux -L "$TM" pipe-pane -t t "cat >>'$D/raw'"
}
# (-J: a line that wrapped is one line there, as it was written.)
screen() { tmux -L "$TM" capture-pane -p -J -t t >"$D/screen"; }
on_screen() { screen; grep -q -- "$1" "$D/screen"; }
# redraws N: the waiting line was drawn N times since the pipe began.
redraws() { [ "$(grep -o $'\r\033\\[K' "$D/raw" | wc -l)" -ge "$1" ]; }

@test "a holder's command is stored shell-quoted, ready to copy" {
	run -0 --separate-stderr "$RL" exec backup -- \
	    sh -c 'echo "A: backing up"; "$0" backup' "$D/cmd"
	assert_equal "${lines[0]}" "A: backing up"
	assert_equal "${lines[1]}" \
	    "sh -c 'echo \"A: backing up\"; \"\$0\" backup' $D/cmd"
	run -0 "$RL" exec x -- "$D/cmd" x "it's" '' 'a$b' "$(printf 'l1\nl2')"
	assert_output "$D/cmd x 'it'\\''s' '' 'a\$b' \$'l1\\x0al2'"
	# The history shows the same.
	run -0 "$RL" log backup
	[[ $output == *"sh -c 'echo \"A: backing up\"; \"\$0\" backup' $D/cmd"* ]]
}

@test "a cut command line is marked; a --label is shown as given" {
	run -0 "$RL" exec x -- "$D/cmd" x "$(printf 'a%.0s' {1..600})" b
	[[ $output == "$D/cmd x aaaa"*"a…" ]]
	(( $(printf %s "$output" | wc -c) <= 511 ))
	run -0 "$RL" exec --label "it's a label" x -- "$D/cmd" x
	assert_output "it's a label"
	# The mask stays bare where its word needs no quotes.
	run -0 "$RL" exec x -- "$D/cmd" x --token=abc -H 'Authorization: x y'
	assert_output "$D/cmd x --token=*** -H 'Authorization: ***'"
}

@test "the watchdog has a name of its own in ps: redlock: watchdog for NAME" {
	run -0 "$RL" exec wd -- sh -c 'ps -o comm=,args= -p $PPID'
	assert_output --regexp '^redlock-wd +redlock: watchdog for wd$'
	# Its parent, redlock, keeps its own line.
	run -0 "$RL" exec wd -- sh -c 'ps -o args= -p $(ps -o ppid= -p $PPID)'
	assert_output "$RL exec wd -- sh -c ps -o args= -p \$(ps -o ppid= -p \$PPID)"
	# A title longer than the words: the environment's room is used,
	# COMMAND's environment unharmed.
	ln -s "$RL" "$D/r"
	printf '#!/bin/sh\nps -o args= -p $PPID\necho "$MARK"\n' >"$D/p"
	chmod +x "$D/p"
	name=$(printf 'n%.0s' {1..60})
	cd "$D"
	MARK=intact run -0 ./r exec "$name" -- ./p
	assert_equal "${lines[0]}" "redlock: watchdog for $name"
	assert_equal "${lines[1]}" intact
}

# lost_run ARGS...: exec ARGS in the background, its hold forced away once
# COMMAND has started ($D/s); its status in $st, its stderr in $D/err.
lost_run() {
	rm -f "$D/s"
	"$RL" exec --ttl 600ms "$@" 2>"$D/err" 3>&- &
	local p=$!
	wait_for 10 test -e "$D/s"
	"$RL" unlock --force x >/dev/null
	st=0
	wait "$p" || st=$?
}

@test "the lease-lost line says what became of COMMAND: SIGTERM, SIGKILL, or its own exit" {
	lost_run x -- sh -c 'touch "$0/s"; exec sleep 30' "$D"
	[ "$st" = 79 ]
	[[ $(cat "$D/err") == *"before the loss): COMMAND was terminated (SIGTERM)" ]]
	lost_run --on-lost kill x -- sh -c 'touch "$0/s"; exec sleep 30' "$D"
	[ "$st" = 79 ]
	[[ $(cat "$D/err") == *"before the loss): COMMAND was killed (SIGKILL)" ]]
	lost_run --kill-after 300ms x -- sh -c \
	    'trap "" TERM; touch "$0/s"; sleep 30' "$D"
	[ "$st" = 79 ]
	[[ $(cat "$D/err") == *"before the loss): COMMAND was sent SIGTERM, then killed (SIGKILL) when it outlived --kill-after" ]]
	lost_run x -- sh -c 'trap "exit 3" TERM; touch "$0/s"; sleep 30 & wait' "$D"
	[ "$st" = 79 ]
	[[ $(cat "$D/err") == *"before the loss): COMMAND was sent SIGTERM and exited 3" ]]
	[[ $(cat "$D/err") != *"was terminated"* ]]
}

@test "a waiter ended by a signal says so: gave up on NAME after waiting X: interrupted by SIGTERM" {
	"$RL" exec x -- sh -c 'touch "$0/s"; exec sleep 30' "$D" 3>&- &
	h=$!
	wait_for 10 test -e "$D/s"
	"$RL" exec -w 30s x -- true 2>"$D/err" 3>&- &
	w=$!
	wait_for 10 test -s "$D/err"
	kill -TERM "$w"
	st=0
	wait "$w" || st=$?
	[ "$st" = 143 ]
	run -0 tail -n 1 "$D/err"
	assert_output --regexp '^redlock: gave up on x after waiting [0-9.]+m?s: interrupted by SIGTERM$'
	kill "$h"
	wait "$h" || :
}

@test "-v logs the wait before an acquisition and COMMAND's exit status" {
	run -3 --separate-stderr "$RL" exec -v x -- sh -c 'exit 3'
	[[ $stderr == *"Z acquired x (fence "* ]]
	[[ $stderr != *"of waiting"* ]]
	[[ $stderr == *"Z COMMAND exited 3"* ]]
	"$RL" exec x -- sh -c 'touch "$0/s"; sleep 1' "$D" 3>&- &
	h=$!
	wait_for 10 test -e "$D/s"
	run -0 --separate-stderr "$RL" exec -v -w 10s x -- true
	[[ $stderr =~ Z\ acquired\ x\ after\ [0-9.]+m?s\ of\ waiting\ \(fence ]]
	[[ $stderr == *"Z COMMAND exited 0"* ]]
	wait "$h"
}

@test "waiting lines on a stderr that is not a terminal carry the time" {
	"$RL" exec x -- sh -c 'touch "$0/s"; sleep 1' "$D" 3>&- &
	h=$!
	wait_for 10 test -e "$D/s"
	run -0 --separate-stderr "$RL" exec -w 10s x -- true
	[[ ${stderr_lines[0]} =~ ^redlock:\ [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{6}Z\ waiting\ for\ x:\ held\ by\  ]]
	wait "$h"
}

@test "-v: a fair waiter first in the queue says when a caller without --fair takes the lock ahead of it" {
	tok=$("$RL" lock -t 60s x)
	"$RL" exec -v --fair --waiter-timeout 3s -w 30s x -- true \
	    2>"$D/f" 3>&- &
	f=$!
	wait_for 10 eval '[ "$(rcli llen "redisson_lock_queue:{x}")" = 1 ]'
	wait_for 10 grep -q 'waiting for x' "$D/f"
	# The hold changes hands at once, to an owner outside the queue
	# (a plain lock's way: no message wakes the queue).
	rcli eval "redis.call('del', KEYS[1]); redis.call('hset', KEYS[1], 'other:1', 1); redis.call('pexpire', KEYS[1], 60000)" 1 x >/dev/null
	wait_for 10 grep -q 'passed over' "$D/f"
	run -0 grep 'passed over' "$D/f"
	assert_output --regexp '^redlock: [0-9TZ:.-]+ passed over for x, first in its queue: taken by a caller without --fair \(held by owner other:1, lease [0-9.]+s left\)$'
	rcli del x >/dev/null
	rcli publish 'redisson_lock__channel:{x}' 0 >/dev/null
	wait "$f"
	# Once, not at every attempt.
	[ "$(grep -c 'passed over' "$D/f")" = 1 ]
}

@test "queue fits a terminal of 80 columns: long fields cut with …, GIVES UP is the waiter's own -w or forever; on a pipe nothing is cut" {
	tok=$("$RL" lock -t 60s x)
	long=$(printf 'w%.0s' {1..100})
	"$RL" exec --fair -w 20s x -- sh -c 'true' "$long" 2>/dev/null 3>&- &
	a=$!
	wait_for 10 eval '[ "$(rcli llen "redisson_lock_queue:{x}")" = 1 ]'
	"$RL" exec --fair x -- true 2>/dev/null 3>&- &
	b=$!
	wait_for 10 eval '[ "$(rcli llen "redisson_lock_queue:{x}")" = 2 ]'
	# A Redisson waiter, whose wait is not recorded, with a long owner.
	j="$(printf 'j%.0s' {1..50}):7"
	rcli rpush 'redisson_lock_queue:{x}' "$j" >/dev/null
	rcli zadd 'redisson_lock_timeout:{x}' "$(( $(date +%s%3N) + 60000 ))" "$j" >/dev/null
	term "COLUMNS=200 '$RL' queue x"
	wait_for 20 on_screen '^exit 0$'
	mapfile -t lines < <(grep -v '^exit 0$' "$D/screen" | sed '/^$/d')
	for l in "${lines[@]}"; do (( $(printf %s "$l" | LC_ALL=C.UTF-8 wc -m) <= 80 )); done
	assert_line --index 1 --regexp '^POS +WAITER +WAITING +GIVES UP +COMMAND$'
	assert_line --index 2 --regexp "^1 +$(hostname) $a +[0-9.]+m?s +(1[0-9]|20)\\.[0-9]s +sh -c true w+…$"
	assert_line --index 3 --regexp "^2 +$(hostname) $b +[0-9.]+m?s +forever +true$"
	assert_line --index 4 --regexp "^3 +j{23}… +- +- +-$"
	# Not a terminal (a pipe, a script, a CI log): aligned, nothing cut.
	run -0 "$RL" queue x
	assert_line --index 1 --regexp '^POS +WAITER +WAITING +GIVES UP +COMMAND$'
	assert_line --index 2 --regexp "^1 +$(hostname) $a +[0-9.]+m?s +(1[0-9]|20)\\.[0-9]s +sh -c true $long$"
	assert_line --index 3 --regexp "^2 +$(hostname) $b +[0-9.]+m?s +forever +true$"
	assert_line --index 4 --regexp "^3 +$j +- +- +-$"
	refute_output --partial '…'
	# The full values stay in --json.
	run -0 "$RL" queue --json x
	jq -e --arg l "$long" --arg j "$j" '.waiters[0].cmd == "sh -c true \($l)"
	    and .waiters[0].gives_up_ms <= 20000 and .waiters[1].gives_up_ms == -1
	    and .waiters[2].owner == $j and .waiters[2].gives_up_ms == null' <<<"$output"
	rcli lrem 'redisson_lock_queue:{x}' 0 "$j" >/dev/null
	"$RL" unlock --owner "$tok" x
	wait "$a" "$b"
}

@test "on a terminal the waiting line is one line cut to its width, redrawn in place, and erased by Ctrl-C" {
	label=$(printf 'L%.0s' {1..150})
	"$RL" exec --label "$label" x -- sleep 60 3>&- &
	h=$!
	wait_for 10 eval '[ "$(rcli exists x)" = 1 ]'
	term "'$RL' exec -w 60s x -- true"
	# Redrawn once a second: seconds of redraws, with nothing to scroll.
	wait_for 30 redraws 5
	screen
	[ "$(grep -o 'waiting for x' "$D/screen" | wc -l)" = 1 ]
	w=$(grep 'waiting for x' "$D/screen")
	[[ $w == "waiting for x: held by $(hostname) pid $h (LLLL"* ]]
	(( ${#w} <= 79 ))
	tmux -L "$TM" send-keys -t t C-c
	wait_for 20 on_screen '^exit 130$'
	screen
	! grep -q 'waiting for x' "$D/screen"
	grep -q '^redlock: gave up on x after waiting .*: interrupted by SIGINT' "$D/screen"
	kill "$h"
	reap "$h" || :
}

@test "a waiting or busy line shows the holder's command as stored, ready to copy: its backslashes are not doubled" {
	"$RL" exec x -- sh -c 'sleep 30' "$(printf 'l1\nl2')" 3>&- &
	bg=$!
	wait_for 10 eval '[ "$(rcli exists x)" = 1 ]'
	run -75 --separate-stderr "$RL" exec -n x -- true
	want="(sh -c 'sleep 30' \$'l1\\x0al2')"
	[[ $stderr == *"$want"* ]]
	run -75 --separate-stderr "$RL" exec -w 300ms x -- true
	[[ $stderr == *"$want"* ]]
	kill "$bg"
	reap "$bg" || :
}
