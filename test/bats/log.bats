#!/usr/bin/env bats
# History: every acquisition, release, busy skip, lost lease, forced
# removal, expiry and waiter that gave up is recorded in the stream
# redlock_log:{NAME} by the script that does it; redlock log prints it,
# status of a free lock names its last holder, and history never stands
# in the way of a lock.

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
	bg=()
}
teardown() { stop_bg; stop_strays; }

# events NAME: the event names of NAME's history, one a line.
events() { rl log --json -n 100 "$1" | jq -r .event; }
# kinds NAME: "event kind" of NAME's history, one a line.
kinds() { rl log --json -n 100 "$1" | jq -r '"\(.event) \(.kind)"'; }
# strict WHAT: standard input is what strict.py WHAT checks: JSON (json,
# or lines of it) with no key twice, or text without control characters;
# UTF-8 throughout.
strict() { python3 "$BATS_TEST_DIRNAME/strict.py" "$1"; }
# held_exec ARGS...: exec ARGS in the background, COMMAND writing its pid
# to $D/c; then $epid, $wd and $c are redlock's, the watchdog's and
# COMMAND's pids (as in stale.bats).
held_exec() {
	rm -f "$D/c"
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec "$@" -- \
	    sh -c 'echo $$ >'"$D"'/c; exec sleep 30' 3>&- &
	epid=$!
	bg+=($epid)
	wait_for 5 test -s "$D/c"
	c=$(cat "$D/c")
	wd=$(ps -o ppid= -p "$c" | tr -d ' ')
}
# kill_all: SIGKILL the watchdog, COMMAND and redlock (stopped first, so
# that none releases in between; see stale.bats): nobody releases.
kill_all() {
	kill -STOP "$wd" "$epid" "$c"
	kill -9 "$wd" "$c" "$epid"
	wait "$epid" 2>/dev/null || :
	wait_for 5 all_dead "$wd" "$c"
}

@test "log prints UTC ISO 8601 times as status does, whatever TZ says" {
	run -0 rl exec x -- true
	ms=$(rl log --json -n 1 x | jq .time_ms)
	want=$(date -u -d "@$((ms / 1000))" +%Y-%m-%dT%H:%M:%S).$(printf %03d $((ms % 1000)))Z
	for tz in UTC Asia/Kolkata America/New_York; do
		TZ=$tz run -0 --separate-stderr rl log -n 1 x
		assert_output --regexp "^$want released by "
	done
}

@test "a run is recorded: acquired by host, pid and command, released with its hold time and COMMAND's exit status" {
	run -3 rl exec x -- sh -c 'exit 3'
	run -0 --separate-stderr rl log --json x
	assert_equal "${#lines[@]}" 2
	echo "${lines[0]}" | jq -e --arg h "$(hostname)" --arg u "$(id -un)" \
	    '.event == "acquired" and .host == $h and .user == $u and .pid > 0
	    and .cmd == "sh -c '\''exit 3'\''" and .fence > 0 and .wait_ms >= 0
	    and (.owner | length > 0) and .time_ms > 0'
	echo "${lines[1]}" | jq -e '.event == "released" and .exit == 3
	    and .hold_ms >= 0 and .cmd == "sh -c '\''exit 3'\''"'
	# The same owner and fence in both.
	[ "$(echo "${lines[0]}" | jq .owner)" = "$(echo "${lines[1]}" | jq .owner)" ]
	[ "$(echo "${lines[0]}" | jq .fence)" = "$(echo "${lines[1]}" | jq .fence)" ]
	run -0 --separate-stderr rl log x
	assert_line --index 0 --regexp '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z acquired by .* pid [0-9]+ \(sh -c '\''exit 3'\''\) after [0-9.]+m?s, fence [0-9]+$'
	assert_line --index 1 --regexp '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z released by .* \(sh -c '\''exit 3'\''\), held [0-9.]+m?s, exit 3, fence [0-9]+$'
	# -n: the last N, oldest first.
	run -0 --separate-stderr rl log -n 1 x
	assert_equal "${#lines[@]}" 1
	[[ ${lines[0]} == *" released by "* ]]
	# A signalled COMMAND: 128+N.
	run -143 rl exec x -- sh -c 'kill -TERM $$'
	[ "$(rl log --json -n 1 x | jq .exit)" = 143 ]
}

@test "a busy skip (-n) is recorded with the caller and the holder" {
	tok=$(rl lock -t 30s x)
	run -75 rl exec -n x -- true
	run -0 --separate-stderr rl log --json -n 1 x
	echo "$output" | jq -e --arg t "$tok" '.event == "busy" and .holder == $t
	    and .cmd == "true" and .pid > 0'
}

@test "a lost lease is recorded with COMMAND's exit status, and the forced removal names who forced it" {
	rl exec -t 30s x -- sh -c 'sleep 0.5; exit 4' 2>"$D/err" 3>&- &
	pid=$!
	bg+=($pid)
	wait_for 10 eval '[ "$(rcli exists x)" = 1 ]'
	run -0 --separate-stderr rl unlock --force x
	[[ $output == "removed x: held by "*" on $(hostname) pid "*" ("*") for "* ]]
	rc=0
	wait "$pid" || rc=$?
	assert_equal "$rc" 79
	grep -q "removed by unlock --force from $(hostname) pid [0-9]* ($(id -un))" "$D/err"
	run -0 events x
	assert_equal "$output" $'acquired\nforced\nlost'
	run -0 --separate-stderr rl log --json -n 2 x
	echo "${lines[0]}" | jq -e --arg h "$(hostname)" '.event == "forced"
	    and .by.host == $h and .by.pid > 0 and (.by.user | length > 0)
	    and .hold_ms >= 0 and .cmd == "sh -c '\''sleep 0.5; exit 4'\''"'
	echo "${lines[1]}" | jq -e '.event == "lost" and .exit == 4'
	run -0 --separate-stderr rl log -n 2 x
	[[ ${lines[0]} == *" forced by unlock --force from $(hostname) pid "*" ($(id -un)): removed "*"(sh -c 'sleep 0.5; exit 4'), held "* ]]
}

@test "unlock --force says what it removed, or that nothing was held" {
	rl lock -t 30s x >/dev/null
	run -0 --separate-stderr rl unlock --force x
	[[ $output =~ ^removed\ x:\ held\ by\ [0-9a-f-]+:[0-9]+\ on\ .+\ pid\ [0-9]+\ \(.+\)\ for\ [0-9.]+m?s$ ]]
	run -1 --separate-stderr rl unlock --force x
	[[ $stderr == *"x was not held"* ]]
}

@test "waiters that gave up are recorded, plain and fair, with how long they waited" {
	rl lock -t 30s x >/dev/null
	run -75 rl exec -w 300ms x -- true
	run -75 rl exec --fair -w 300ms x -- true
	run -0 --separate-stderr rl log --json -n 2 x
	echo "${lines[0]}" | jq -e '.event == "gave_up" and .wait_ms >= 300
	    and .cmd == "true" and .pid > 0'
	echo "${lines[1]}" | jq -e '.event == "gave_up" and .wait_ms >= 300
	    and .cmd == "true" and .pid > 0'
}

@test "a waiter stopped by a signal is recorded as one that gave up, plain and fair" {
	rl lock -t 30s x >/dev/null
	for fair in '' --fair; do
		# redlock itself in the background, not a subshell of rl's.
		# A file of its own: the previous one's line must not be
		# read before this one has even started.
		err=$D/err${fair:-.plain}
		# shellcheck disable=SC2086
		"$RL" -u "redis://127.0.0.1:$R_PORT" exec -w 20s $fair x -- \
		    true 2>"$err" 3>&- &
		w=$!
		bg+=($w)
		wait_for 10 grep -q 'waiting for x' "$err"
		kill -TERM "$w"
		rc=0
		wait "$w" || rc=$?
		assert_equal "$rc" 143
	done
	run -0 events x
	assert_output $'acquired\ngave_up\ngave_up'
	rl log --json -n 2 x | jq -se 'all(.wait_ms > 0 and .cmd == "true"
	    and .pid > 0)'
}

@test "an expired hold is recorded by the next acquisition" {
	tok=$(rl lock -t 200ms x)
	wait_for 5 key_gone x
	run -0 rl exec x -- true
	run -0 events x
	assert_equal "$output" $'acquired\nexpired\nacquired\nreleased'
	rl log --json -n 3 x | head -1 | jq -e --arg t "$tok" \
	    '.event == "expired" and .owner == $t and .pid > 0'
}

@test "status of a free lock names its last holder and how the hold ended; exit codes unchanged" {
	run -1 --separate-stderr rl status x
	assert_output 'x: free'
	run -5 rl exec x -- sh -c 'exit 5'
	run -1 --separate-stderr rl status x
	assert_line --index 0 'x: free'
	assert_line --index 1 --regexp "^  last     held by $(hostname) pid [0-9]+ \(sh -c 'exit 5'\), released [0-9.]+m?s ago after [0-9.]+m?s, exit 5$"
	# JSON: the same, as "last"; null where nothing ended.
	run -1 --separate-stderr rl status --json x
	echo "$output" | jq -e --arg h "$(hostname)" '.held == false and
	    .last.ended == "released" and .last.host == $h and .last.pid > 0
	    and .last.cmd == "sh -c '\''exit 5'\''" and .last.exit == 5
	    and .last.hold_ms >= 0 and .last.fence > 0 and .last.time_ms > 0'
	run -1 --separate-stderr rl status --json never-used
	echo "$output" | jq -e '.held == false and .last == null'
	rl lock -t 30s x >/dev/null
	run -0 --separate-stderr rl status x
	refute_line --regexp '^  last '
	run -0 --separate-stderr rl status --json x
	echo "$output" | jq -e 'has("last") | not'
}

@test "status of a free lock whose lease ran out says when it was acquired, not that it expired then" {
	t0=$(server_ms)
	rl lock -t 200ms x >/dev/null
	wait_for 5 key_gone x
	nap 0.5
	run -1 --separate-stderr rl status x
	assert_line --index 0 'x: free'
	assert_line --index 1 --regexp "^  last     held by $(hostname) pid [0-9]+ \(.*\), expired \(its lease ran out\), acquired [0-9.]+m?s ago$"
	# JSON: its time is the acquisition's.
	run -1 --separate-stderr rl status --json x
	echo "$output" | jq -e --argjson t0 "$t0" '.last.ended == "expired"
	    and .last.time_ms >= $t0 and .last.time_ms < $t0 + 200
	    and .last.hold_ms == null'
}

@test "a release before the end of its --min-hold is recorded with that end" {
	rl exec --min-hold 30s x -- true
	run -0 --separate-stderr rl log --json -n 1 x
	echo "$output" | jq -e '.event == "released" and .exit == 0 and
	    .held_until_ms > .time_ms + 20000 and .cmd == "true"'
	run -0 --separate-stderr rl log -n 1 x
	assert_output --regexp ', exit 0, kept until [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z \(--min-hold\), fence [0-9]+$'
	# A second release of the finished hold records nothing more.
	[ "$(events x | grep -c released)" -eq 1 ]
}

@test "--follow prints a new event within 500 ms of it happening" {
	rl exec x -- true
	rl log --follow x >"$D/out" 2>&1 3>&- &
	bg+=($!)
	wait_for 5 eval '[ "$(wc -l <"$D/out")" = 2 ]'
	# Subscribed to nothing: XREAD BLOCK is already waiting.
	nap 0.3
	start=$(now_ms)
	rl lock -t 30s x >/dev/null
	wait_for 5 eval '[ "$(wc -l <"$D/out")" -ge 3 ]'
	took=$(($(now_ms) - start))
	echo "followed in $took ms" >&3
	[ "$took" -lt 500 ]
	sed -n 3p "$D/out" | grep -q ' acquired by '
}

@test "--follow prints each event within 100 ms of its time in the stream" {
	rl exec x -- true
	# Each line that --follow prints, after the time it came, by the
	# same clock as the server's (both on this host): no process started
	# per line, so that none is counted. Through a fifo, not a pipeline:
	# each a job of its own, that teardown stops (a pipeline's wait
	# would wait for the follower, which never writes again).
	mkfifo "$D/fifo"
	"$RL" -u "redis://127.0.0.1:$R_PORT" log --follow --json -n 1 x \
	    >"$D/fifo" 3>&- &
	bg+=($!)
	while IFS= read -r l; do
		printf '%s %s\n' "$((${EPOCHREALTIME/./} / 1000))" "$l"
	done <"$D/fifo" >"$D/out" 3>&- &
	bg+=($!)
	wait_for 5 eval '[ "$(wc -l <"$D/out")" = 1 ]'
	nap 0.3
	# acquired, released; acquired, forced; busy.
	rl exec x -- true
	tok=$(rl lock -t 30s x)
	rl unlock --force x >/dev/null
	rl lock -t 30s --owner "$tok" x >/dev/null
	run -75 rl exec -n x -- true
	wait_for 5 eval '[ "$(wc -l <"$D/out")" -ge 7 ]'
	tail -n +2 "$D/out" >"$D/new"
	run -0 cut -d' ' -f2- "$D/new"
	assert_equal "$(jq -r .event <<<"$output" | tr '\n' ' ')" \
	    "acquired released acquired forced acquired busy "
	while read -r came json; do
		at=$(jq .time_ms <<<"$json")
		echo "$(jq -r .event <<<"$json") printed $((came - at)) ms after" >&3
		[ $((came - at)) -lt 100 ]
	done <"$D/new"
}

@test "--follow goes on through a quiet spell longer than one blocking read" {
	rl exec x -- true
	"$RL" -u "redis://127.0.0.1:$R_PORT" log --follow x >"$D/out" \
	    2>"$D/err" 3>&- &
	fpid=$!
	bg+=($fpid)
	wait_for 5 eval '[ "$(wc -l <"$D/out")" = 2 ]'
	# Its XREAD BLOCK (1 s) times out with nothing read, twice.
	nap 2.5
	kill -0 "$fpid"
	run -0 cat "$D/err"
	assert_output ''
	rl lock -t 30s x >/dev/null
	wait_for 5 eval '[ "$(wc -l <"$D/out")" -ge 3 ]'
	sed -n 3p "$D/out" | grep -q ' acquired by '
}

@test "the history stays bounded: about REDLOCK_HISTORY events after 1000 runs, and it expires" {
	for _ in $(seq 1 1000); do
		"$BATS_TEST_DIRNAME/../../build/redlock" -u "redis://127.0.0.1:$R_PORT" exec x -- true
	done
	n=$(rcli xlen 'redlock_log:{x}')
	echo "xlen $n" >&3
	# MAXLEN ~ 100: whole nodes of 100 entries are trimmed.
	[ "$n" -ge 100 ]
	[ "$n" -le 200 ]
	# It lives at least REDLOCK_HISTORY_TTL (seven days) after the last
	# acquisition, at most twice that.
	ttl=$(rcli pttl 'redlock_log:{x}')
	[ "$ttl" -gt $((7 * 24 * 3600 * 1000 - 60000)) ]
	[ "$ttl" -le $((14 * 24 * 3600 * 1000)) ]
	REDLOCK_HISTORY=10 REDLOCK_HISTORY_TTL=5s rl exec y -- true
	[ "$(rcli pttl 'redlock_log:{y}')" -le 10000 ]
	REDLOCK_HISTORY=0 rl exec z -- true
	[ "$(rcli exists 'redlock_log:{z}')" = 0 ]
	run -64 --separate-stderr env REDLOCK_HISTORY=-1 "$RL" -u "redis://127.0.0.1:$R_PORT" exec z -- true
	[[ $stderr == *"REDLOCK_HISTORY: '-1' is not a number"* ]]
}

@test "the history's expiry: renewed once per half of it, never less than REDLOCK_HISTORY_TTL after an acquisition" {
	export REDLOCK_HISTORY_TTL=1s
	# Runs 150 ms apart for 3 s: most skip the PEXPIRE, yet right after
	# each the stream has more than 1 s to live (less the time since).
	for _ in $(seq 1 20); do
		t0=$(now_ms)
		rl exec x -- true
		ttl=$(rcli pttl 'redlock_log:{x}')
		[ "$ttl" -gt $((1000 - ($(now_ms) - t0))) ]
		[ "$ttl" -le 2000 ]
		nap 0.15
	done
	# Deleted behind redlock's back: the next event makes it anew, with
	# the expiry, whether that acquisition renews it or not.
	for _ in 1 2 3; do
		rcli del 'redlock_log:{x}' >/dev/null
		rl exec x -- true
		[ "$(rcli pttl 'redlock_log:{x}')" -gt 0 ]
		[ "$(rcli xlen 'redlock_log:{x}')" = 2 ]
	done
	# 0: for ever.
	rcli del 'redlock_log:{x}' >/dev/null
	REDLOCK_HISTORY_TTL=0 rl exec x -- true
	[ "$(rcli pttl 'redlock_log:{x}')" = -1 ]
}

@test "a history key of another type: the lock works, history is skipped, log exits 65 saying why" {
	rcli set 'redlock_log:{x}' foo >/dev/null
	run -0 rl exec x -- true
	run -0 rl exec --fair x -- true
	rl unlock --force x || :
	[ "$(rcli get 'redlock_log:{x}')" = foo ]
	run -65 --separate-stderr rl log x
	[[ $stderr == "redlock: x: key redlock_log:{x} holds another type than a stream"* ]]
}

@test "a history entry written by hand: every field encoded, a token that is not a number null in --json, no key forged" {
	cmd=$'a"b\\c\nd\xff\xfe\xc0\xaf\x1b[2Je\xc2\x9b'
	rcli xadd 'redlock_log:{x}' '*' event acquired owner o1 host h \
	    pid 12x user u cmd "$cmd" fence '1,"owner":"evil"' wait_ms 5 \
	    >/dev/null
	rcli xadd 'redlock_log:{x}' '*' event released owner o1 fence abc \
	    exit 0 >/dev/null
	run -0 --separate-stderr rl log --json x
	strict lines <<<"$output"
	echo "$output" | jq -s -e 'length == 2 and all(.owner == "o1")
	    and all(.fence == null) and .[0].pid == null and .[0].wait_ms == 5
	    and .[0].cmd == "a\"b\\c\nd\ufffd\ufffd\ufffd\ufffd\u001b[2Je\u009b"
	    and .[1].exit == 0'
	# An exit status beyond an int is not known, not another one.
	rcli xadd 'redlock_log:{y}' '*' event released owner o2 \
	    exit 4294967296 >/dev/null
	run -0 --separate-stderr rl log --json y
	echo "$output" | jq -e '.owner == "o2" and .exit == null'
	# Text: what is not UTF-8 escaped as control characters are.
	run -0 --separate-stderr rl log x
	strict text <<<"$output"
	assert_line --index 0 --partial ' acquired by h (a"b\c\x0ad\xff\xfe\xc0\xaf\x1b[2Je\xc2\x9b) after 5ms, fence 1,"owner":"evil" (not a fencing token)'
	assert_line --index 1 --partial ', exit 0, fence abc (not a fencing token)'
	# status of the free lock names the last holder from the same entry.
	run -1 --separate-stderr rl status --json x
	strict json <<<"$output"
	echo "$output" | jq -e '.last.owner == "o1" and .last.fence == null
	    and .last.cmd == "a\"b\\c\nd\ufffd\ufffd\ufffd\ufffd\u001b[2Je\u009b"'
	run -1 --separate-stderr rl status x
	strict text <<<"$output"
	assert_line --index 1 --partial '(a"b\c\x0ad\xff\xfe\xc0\xaf\x1b[2Je\xc2\x9b), released '
}

@test "a token in the history is a JSON number up to 2^63-1, digits as they are; one out of range, signed or with a blank is null" {
	# Read holds: one after another infers no expiry between them.
	for f in 9223372036854775807 007 9223372036854775808 -1 ' 5' 1e3 ''; do
		rcli xadd 'redlock_log:{x}' '*' event acquired kind read \
		    owner "o$f" fence "$f" >/dev/null
	done
	run -0 --separate-stderr rl log --json x
	strict lines <<<"$output"
	[ "$(grep -o '"fence":[^,]*' <<<"$output" | tr '\n' ' ')" = \
	    '"fence":9223372036854775807 "fence":7 "fence":null "fence":null "fence":null "fence":null "fence":null ' ]
	run -0 --separate-stderr rl log x
	strict text <<<"$output"
	assert_line --index 0 --partial ', fence 9223372036854775807'
	assert_line --index 1 --partial ', fence 7'
	assert_line --index 2 --partial ', fence 9223372036854775808 (not a fencing token)'
	assert_line --index 4 --partial ', fence  5 (not a fencing token)'
	refute_line --index 6 --partial 'fence'
}

@test "UTF-8 in a name and a command is shown as it is by log, status and queue" {
	run -0 rl exec 'déploiement' -- echo 部署
	run -0 --separate-stderr rl log 'déploiement'
	strict text <<<"$output"
	assert_line --index 0 --partial "(echo '部署')"
	run -1 --separate-stderr rl status 'déploiement'
	assert_line --index 0 'déploiement: free'
	assert_line --index 1 --partial "(echo '部署')"
	rl lock 'déploiement' >/dev/null
	run -0 --separate-stderr rl queue 'déploiement'
	assert_line --index 0 --partial 'déploiement: held by '
}

@test "an ACL user without the stream commands still locks; log exits 69 naming the command" {
	rcli acl setuser nox on '>pw' '~*' '&*' '+@all' '-xadd' '-xread' '-xrevrange' >/dev/null
	u="redis://nox:pw@127.0.0.1:$R_PORT"
	run -0 --separate-stderr "$RL" -u "$u" exec -v x -- true
	# One -v line says why, naming the command.
	[ "$(grep -c 'not recorded in the history of x: ' <<<"$stderr")" = 1 ]
	[ "$(grep -c 'not recorded in the history of x: XADD refused: ' <<<"$stderr")" = 1 ]
	tok=$("$RL" -u "$u" lock x)
	run -0 "$RL" -u "$u" unlock --owner "$tok" x
	[ "$(rcli exists x)" = 0 ]
	[ "$(rcli exists 'redlock_log:{x}')" = 0 ]
	run -69 --separate-stderr "$RL" -u "$u" log x
	[[ $stderr == *"xrevrange"* || $stderr == *"XREVRANGE"* ]]
}

@test "an ACL user without XADD and XREAD: locks, log reads, log --follow exits 69 naming XREAD" {
	rl exec x -- true
	rcli acl setuser noxr on '>pw' '~*' '&*' '+@all' '-xadd' '-xread' >/dev/null
	u="redis://noxr:pw@127.0.0.1:$R_PORT"
	run -0 --separate-stderr "$RL" -u "$u" exec -v x -- true
	[ "$(grep -c 'not recorded in the history of x: ' <<<"$stderr")" = 1 ]
	# XREVRANGE is granted: the history so far (nothing of noxr's).
	run -0 --separate-stderr "$RL" -u "$u" log x
	assert_equal "${#lines[@]}" 2
	run -69 --separate-stderr timeout 10 "$RL" -u "$u" log --follow x
	[[ $stderr == *"refused XREAD for user noxr"* ]]
	# Its two lines came before the refusal.
	assert_equal "${#lines[@]}" 2
}

@test "the history key is in the name's hash slot, and a name with braces keeps Redisson's rule" {
	rl exec x -- true
	rl exec 'a{b}c' -- true
	[ "$(rcli exists 'redlock_log:{x}')" = 1 ]
	[ "$(rcli exists 'redlock_log:a{b}c')" = 1 ]
}

@test "an attempt that won too few masters is recorded as undone, not as a run" {
	start_redis M2
	start_redis M3
	m2="redis://127.0.0.1:$M2_PORT" m3="redis://127.0.0.1:$M3_PORT"
	all="redis://127.0.0.1:$R_PORT,$m2,$m3"
	# Another owner holds x on two masters of three: -n wins only M3.
	"$RL" -u "redis://127.0.0.1:$R_PORT,$m2" lock -t 30s --owner other x
	run -75 --separate-stderr "$RL" -u "$all" exec -n x -- true
	run -0 --separate-stderr "$RL" -u "$m3" log --json x
	ev=$output
	run -0 --separate-stderr "$RL" -u "$m3" log x
	text=$output
	# Not a run: status names no last holder.
	run -1 --separate-stderr "$RL" -u "$m3" status --json x
	st=$output
	stop_redis "$M2_PID"
	stop_redis "$M3_PID"
	assert_equal "$(jq -r .event <<<"$ev" | tr '\n' ' ')" "acquired undone "
	[ "$(jq -s '.[0].owner == .[1].owner' <<<"$ev")" = true ]
	[[ $text == *" undone by "*"(true): an attempt given back unused"* ]]
	jq -e '.held == false and .last == null' <<<"$st"
}

@test "-s, --write and --limit: a run is recorded with its kind and token, the release with COMMAND's exit status" {
	for k in read write permit; do
		case $k in
		read) opt=-s ;; write) opt=--write ;; permit) opt='--limit 2' ;;
		esac
		# shellcheck disable=SC2086
		run -3 rl exec $opt "n$k" -- sh -c 'exit 3'
		run -0 --separate-stderr rl log --json "n$k"
		assert_equal "${#lines[@]}" 2
		echo "${lines[0]}" | jq -e --arg k "$k" --arg h "$(hostname)" \
		    '.event == "acquired" and .kind == $k and .host == $h
		    and .pid > 0 and .cmd == "sh -c '\''exit 3'\''" and .fence > 0
		    and .wait_ms >= 0 and (.owner | length > 0)'
		echo "${lines[1]}" | jq -e --arg k "$k" '.event == "released"
		    and .kind == $k and .exit == 3 and .hold_ms >= 0
		    and .cmd == "sh -c '\''exit 3'\''"'
		[ "$(echo "${lines[0]}" | jq .owner)" = "$(echo "${lines[1]}" | jq .owner)" ]
		[ "$(echo "${lines[0]}" | jq .fence)" = "$(echo "${lines[1]}" | jq .fence)" ]
		run -0 --separate-stderr rl log "n$k"
		assert_line --index 0 --regexp "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z acquired \($k\) by .* pid [0-9]+ \(sh -c 'exit 3'\) after [0-9.]+m?s, fence [0-9]+\$"
		assert_line --index 1 --regexp "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z released \($k\) by .* \(sh -c 'exit 3'\), held [0-9.]+m?s, exit 3, fence [0-9]+\$"
	done
	# A plain lock's events have no kind.
	run -0 rl exec x -- true
	[ "$(rl log --json -n 1 x | jq .kind)" = null ]
	# Re-entries record nothing: a nested exec of the same owner.
	run -0 rl exec -s nest -- "$RL" -u "redis://127.0.0.1:$R_PORT" exec -s nest -- true
	run -0 events nest
	assert_equal "$output" $'acquired\nreleased'
	# A history key of another type: the lock still works.
	rcli set 'redlock_log:{h}' foo >/dev/null
	run -0 rl exec -s h -- true
	run -0 rl exec --write h -- true
	rcli set 'redlock_log:{hp}' foo >/dev/null
	run -0 rl exec --limit 1 hp -- true
	[ "$(rcli get 'redlock_log:{h}')" = foo ]
}

@test "a busy skip (-n) of a read-write lock or a semaphore is recorded with its kind and the holder" {
	tok=$(rl lock -t 30s --write r)
	run -75 rl exec -n -s r -- true
	run -75 rl exec -n --write r -- true
	run -0 kinds r
	assert_output $'acquired write\nbusy read\nbusy write'
	rl log --json -n 2 r | jq -se --arg t "$tok" 'all(.event == "busy"
	    and .holder == $t and .cmd == "true" and .pid > 0)'
	run -0 --separate-stderr rl log -n 1 r
	[[ $output == *" busy (write): "*" pid "*" (true) did not wait (held by $tok)" ]]
	tok=$(rl lock -t 30s --limit 1 p)
	run -75 rl exec -n --limit 1 p -- true
	run -0 kinds p
	assert_output $'acquired permit\nbusy permit'
	rl log --json -n 1 p | jq -e --arg t "$tok" '.holder == $t
	    and .cmd == "true"'
}

@test "waiters of a read-write lock or a semaphore that gave up are recorded with their kind and wait" {
	rl lock -t 30s --write r >/dev/null
	run -75 timeout 10 "$RL" -u "redis://127.0.0.1:$R_PORT" exec -w 300ms -s r -- true
	run -75 timeout 10 "$RL" -u "redis://127.0.0.1:$R_PORT" exec -w 300ms --write r -- true
	run -0 kinds r
	assert_output $'acquired write\ngave_up read\ngave_up write'
	rl log --json -n 2 r | jq -se 'all(.wait_ms >= 300 and .cmd == "true"
	    and .pid > 0)'
	rl lock -t 30s --limit 1 p >/dev/null
	run -75 timeout 10 "$RL" -u "redis://127.0.0.1:$R_PORT" exec -w 300ms --limit 1 p -- true
	run -0 kinds p
	assert_output $'acquired permit\ngave_up permit'
	rl log --json -n 1 p | jq -e '.wait_ms >= 300 and .cmd == "true"'
	run -0 --separate-stderr rl log -n 1 p
	[[ $output == *" gave_up (permit): "*" (true) stopped waiting after "* ]]
}

@test "unlock --force of a semaphore or a write lock names who forced it; the watchdog records the loss" {
	for k in write permit; do
		case $k in
		write) opt=--write ;; permit) opt='--limit 2' ;;
		esac
		# shellcheck disable=SC2086
		rl exec -t 30s $opt "f$k" -- sh -c 'sleep 0.5; exit 4' 2>"$D/err" 3>&- &
		pid=$!
		bg+=($pid)
		wait_for 10 eval '[ "$(rcli exists "redlock_holder:{f$k}")" = 1 ]'
		run -0 --separate-stderr rl unlock --force "f$k"
		rc=0
		wait "$pid" || rc=$?
		assert_equal "$rc" 79
		grep -q "removed by unlock --force from $(hostname) pid [0-9]* ($(id -un))" "$D/err"
		run -0 kinds "f$k"
		assert_output "acquired $k"$'\n'"forced $k"$'\n'"lost $k"
		run -0 --separate-stderr rl log --json -n 2 "f$k"
		echo "${lines[0]}" | jq -e --arg h "$(hostname)" '.event == "forced"
		    and .by.host == $h and .by.pid > 0 and (.by.user | length > 0)
		    and .hold_ms >= 0 and .cmd == "sh -c '\''sleep 0.5; exit 4'\''"'
		echo "${lines[1]}" | jq -e '.event == "lost" and .exit == 4'
		run -0 --separate-stderr rl log -n 2 "f$k"
		[[ ${lines[0]} == *" forced ($k) by unlock --force from $(hostname) pid "*" ($(id -un)): removed "*"(sh -c 'sleep 0.5; exit 4'), held "* ]]
	done
}

@test "overlapping readers or permits infer no expiry; a writer after a reader whose lease ran out does" {
	for opt in -s '--limit 2'; do
		rm -f "$D/in"
		# shellcheck disable=SC2086
		rl exec $opt o -- sh -c "touch '$D/in'; sleep 0.5" 3>&- &
		bg+=($!)
		wait_for 5 test -e "$D/in"
		# shellcheck disable=SC2086
		run -0 rl exec $opt o -- true
		wait "${bg[-1]}"
		run -0 events o
		assert_output $'acquired\nacquired\nreleased\nreleased'
		rcli del 'redlock_log:{o}' >/dev/null
	done
	# A reader killed with its watchdog: its lease runs out (1s).
	held_exec -t 1s -s e
	reader=$(rl log --json -n 1 e | jq -r .owner)
	kill_all
	wait_for 5 key_gone e
	run -0 rl exec --write e -- true
	run -0 kinds e
	assert_output $'acquired read\nexpired read\nacquired write\nreleased write'
	rl log --json -n 3 e | head -1 | jq -e --arg t "$reader" \
	    '.event == "expired" and .owner == $t and .pid > 0 and .fence > 0'
	run -0 --separate-stderr rl log -n 3 e
	[[ ${lines[0]} == *" expired (read): the lease of "*" ran out before it was released, fence "* ]]
}
