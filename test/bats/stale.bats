#!/usr/bin/env bats
# status on holders whose process is gone: a holder recorded on this host
# whose pid no longer runs (or is now another process's) is "not
# running", with the command that frees the name; one on another host is
# left as it was.

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
}

url() { echo "redis://127.0.0.1:$R_PORT"; }

# held_exec ARGS...: exec ARGS in the background, COMMAND writing its pid
# to $D/c; then $epid, $wd and $c are redlock's, the watchdog's and
# COMMAND's pids.
held_exec() {
	rm -f "$D/c"
	"$RL" -u "$(url)" exec -v "$@" -- sh -c 'echo $$ >'"$D"'/c; exec sleep 30' \
	    2>>"$D/exec.err" 3>&- &
	epid=$!
	wait_for 5 test -s "$D/c"
	c=$(cat "$D/c")
	wd=$(ps -o ppid= -p "$c" | tr -d ' ')
}
# kill_all: SIGKILL redlock, its watchdog and COMMAND at once (the OOM
# killer, a kill -9 of the whole tree): nobody releases. Stopped first:
# between two kills, on a busy box, the watchdog could see redlock gone
# and release. Redlock is killed last: its death orphans the watchdog's
# process group, and the kernel sends a stopped member of an orphaned
# group SIGCONT (and SIGHUP, which it ignores), so a watchdog that
# outlived redlock by a moment ran on and released (twice in make test).
# Killed first, it leaves only a stopped redlock, which cannot.
kill_all() {
	# Each still there: else say what its exec said (-v).
	if ! kill -0 "$wd" "$epid" "$c"; then
		echo "the holder ended before it was killed; its exec said:" >&2
		cat "$D/exec.err" >&2
		return 1
	fi
	kill -STOP "$wd" "$epid" "$c"
	kill -9 "$wd" "$c" "$epid"
	wait "$epid" 2>/dev/null || :
	wait_for 5 all_dead "$wd" "$c"
}
# set_meta NAME FIELD JQ: rewrite the holder record of FIELD with JQ.
set_meta() {
	local j
	j=$(rcli hget "redlock_holder:{$1}" "$2" | jq -c "$3")
	rcli hset "redlock_holder:{$1}" "$2" "$j" >/dev/null
}
owner_of() { rl status --json "$1" | jq -r .owner; }

@test "a holder whose exec was SIGKILLed with its watchdog and COMMAND: not running, and the exact unlock --force line, which works" {
	held_exec --ttl 30s 'a b'
	run -0 rl status 'a b'
	refute_output --partial 'not running'
	refute_output --partial 'unlock --force'
	run -0 rl status --json 'a b'
	jq -e '.running == true' <<<"$output"
	kill_all
	run -0 rl status 'a b'
	assert_line "  pid      $epid (not running)"
	assert_line "a b: not running: no process that holds it is left on this host; free it with:"
	assert_line "  redlock -u redis://127.0.0.1:$R_PORT unlock --force 'a b'"
	line=${lines[-1]}
	run -0 rl status --json 'a b'
	jq -e '.running == false' <<<"$output"
	run -0 rl status
	assert_output --partial "a b: held by $(hostname) pid $epid (not running) (sh -c "
	run -0 rl status --json
	jq -e '.[0].running == false' <<<"$output"
	run -0 rl queue 'a b'
	assert_line --index 0 --regexp "^a b: held by $(hostname) pid $epid \(not running\) \(sh -c .*\) for "
	run -0 rl queue --json 'a b'
	jq -e '.holder.running == false' <<<"$output"
	# The line, as printed, frees the name.
	run -0 bash -c "${line/redlock/\"\$0\"}" "$RL"
	key_gone 'a b'
}

@test "the unlock line quotes NAME for the shell, keeps it on one line, and puts -- before a NAME that starts with -" {
	true &
	gone=$!
	wait "$gone"
	for n in '-x' "it's" $'tab\there'; do
		tok=$("$RL" -u "$(url)" lock -t 30s -- "$n")
		# As an exec's record says: a process renews it.
		set_meta "$n" "$tok" '.pid = '"$gone"' | .renew = true'
		run -0 rl status -- "$n"
		line=${lines[-1]}
		[[ $line == "  redlock -u redis://127.0.0.1:$R_PORT unlock --force "* ]]
		run -0 bash -c "${line/redlock/\"\$0\"}" "$RL"
		key_gone "$n"
	done
}

@test "without -u (REDLOCK_URL), the unlock line names no URL" {
	held_exec x
	kill_all
	REDLOCK_URL=$(url) run -0 "$RL" status x
	assert_line "  redlock unlock --force x"
}

@test "a live holder, also a lock --keepalive taken in a command substitution whose subshell has exited: nothing new, and \"running\": true" {
	# The $(...) of a bats test forks a subshell that runs redlock: the
	# holder recorded is the shell the subshell was forked from.
	tok=$("$RL" -u "$(url)" lock --keepalive --pid $$ -t 30s x)
	run -0 rl status x
	refute_output --partial 'not running'
	refute_output --partial 'unlock --force'
	run -0 rl status --json x
	jq -e '.running == true' <<<"$output"
	run -0 rl queue x
	refute_output --partial 'not running'
	run -0 rl queue --json x
	jq -e '.holder.running == true' <<<"$output"
	rl unlock --owner "$tok" x
}

@test "a lock hold that no process renews (lock without --keepalive), its shell gone: said so, never not running, no unlock line" {
	run -0 bash -c '"$0" -u "$1" lock -t 2m deploy >/dev/null' "$RL" "$(url)"
	run -0 rl status deploy
	assert_line --regexp '^  state    held by lock, no process renews it, lease ends in 1m5[0-9]s$'
	refute_output --partial 'not running'
	refute_output --partial 'unlock --force'
	run -0 rl status --json deploy
	jq -e 'has("running") and .running == null' <<<"$output"
	run -0 rl status
	assert_output --regexp '^deploy: held by .*, no process renews it, lease 1m5[0-9]s left, '
	refute_output --partial 'not running'
	run -0 rl queue deploy
	refute_output --partial 'not running'
}

@test "a dead holder whose record has another pid namespace (another container, same host name): \"running\": null" {
	held_exec x
	kill_all
	set_meta x "$(owner_of x)" '.pidns = "pid:[1]"'
	run -0 rl status x
	refute_output --partial 'not running'
	refute_output --partial 'unlock --force'
	run -0 rl status --json x
	jq -e 'has("running") and .running == null' <<<"$output"
}

@test "a dead holder whose record has this boot id and pid namespace but another host name: not running" {
	held_exec x
	kill_all
	set_meta x "$(owner_of x)" '.host = "renamed.example"'
	run -0 rl status x
	assert_line "  pid      $epid (not running)"
	run -0 rl status --json x
	jq -e '.running == false' <<<"$output"
}

@test "a pid that another process has taken since the hold began: not running" {
	tok=$("$RL" -u "$(url)" lock -t 30s x)
	sleep 30 3>&- &
	p=$!
	# The hold began a minute before that process started.
	set_meta x "$tok" '.pid = '"$p"' | .since_ms -= 60000 | .renew = true'
	run -0 rl status x
	assert_line "  pid      $p (not running)"
	assert_line "  redlock -u redis://127.0.0.1:$R_PORT unlock --force x"
	run -0 rl status --json x
	jq -e '.running == false' <<<"$output"
	kill "$p"
}

@test "a holder on another host (another boot id): nothing new, and \"running\": null" {
	held_exec x
	kill_all
	set_meta x "$(owner_of x)" '.host = "elsewhere.example" | .boot = "0f0f0f0f-0000-4000-8000-000000000000"'
	run -0 rl status x
	refute_output --partial 'not running'
	refute_output --partial 'unlock --force'
	run -0 rl status --json x
	jq -e 'has("running") and .running == null' <<<"$output"
}

@test "readers (-s): each one gone says not running; the unlock line only when none is left" {
	held_exec -s x
	e1=$epid w1=$wd c1=$c
	held_exec -s x
	e2=$epid w2=$wd c2=$c
	epid=$e1 wd=$w1 c=$c1
	kill_all
	run -0 rl status x
	assert_line --regexp "^  reader   .*: $(hostname) pid $e1 \(sh -c .*\), fence [0-9]+, not running$"
	assert_line --regexp "^  reader   .*: $(hostname) pid $e2 \(sh -c .*\), fence [0-9]+$"
	refute_output --partial 'unlock --force'
	run -0 rl status --json x
	jq -e --argjson a "$e1" --argjson b "$e2" '[.readers[] | {(.pid | tostring): .running}] | add == {($a | tostring): false, ($b | tostring): true}' <<<"$output"
	epid=$e2 wd=$w2 c=$c2
	kill_all
	run -0 rl status x
	assert_line "  redlock -u redis://127.0.0.1:$R_PORT unlock --force x"
}

@test "permits (--limit): a permit whose holder is gone says not running, then the unlock line" {
	held_exec --limit 2 x
	kill_all
	run -0 rl status x
	assert_line --regexp "^  permit   [0-9a-f]+: held by $(hostname) pid $epid \(not running\) \(sh -c .*"
	assert_line "  redlock -u redis://127.0.0.1:$R_PORT unlock --force x"
	run -0 rl status --json x
	jq -e '.permits[0].running == false' <<<"$output"
}
