#!/usr/bin/env bats
# status and queue on the kinds beside plain locks: the waiters of a
# read-write lock counted and its first writer named, readers listed as
# readers, and a name of another kind said for what it is (exit 65,
# nothing changed).

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
	bg=()
}
teardown() {
	kill -CONT "$R_PID" 2>/dev/null
	stop_bg
	stop_strays
}

RSN=$BATS_TEST_DIRNAME/redisson.py
# strict WHAT: standard input is what strict.py WHAT checks: JSON with
# no key twice, or text without control characters; UTF-8 throughout.
strict() { python3 "$BATS_TEST_DIRNAME/strict.py" "$1"; }

# bg_rl ARGS...: redlock ARGS in the background.
bg_rl() {
	"$RL" -u "redis://127.0.0.1:$R_PORT" "$@" 2>>"$D/err" 3>&- &
	bg+=($!)
}
# listeners NAME: the clients that listen on read-write lock NAME's
# channel.
listeners() { rcli pubsub numsub "redisson_rwlock:{$1}" | sed -n 2p; }
# Every key, its type, a digest of its value and its expiry.
snapshot() {
	local k
	rcli --scan | LC_ALL=C sort | while IFS= read -r k; do
		printf '%s %s %s %s\n' "$k" "$(rcli type "$k")" \
		    "$(rcli dump "$k" | sha1sum | cut -d' ' -f1)" \
		    "$(rcli pexpiretime "$k")"
	done
}

@test "a writer holds: the readers and writers that wait, redlock's and Java's, are counted by status and queue, and the writer that waits first is named" {
	bg_rl exec --write -t 60s ds2 -- sleep 60
	wait_for 10 eval '[ "$(rcli hget ds2 mode)" = write ]'
	bg_rl exec -s -w 60s ds2 -- true
	bg_rl exec -s -w 60s ds2 -- true
	bg_rl exec --write -w 60s ds2 -- true
	wait_for 10 eval '[ "$(listeners ds2)" = 3 ]'
	wait_for 10 eval '[ "$(rcli exists "redlock_writer:{ds2}")" = 1 ]'
	w=$(rcli get 'redlock_writer:{ds2}')
	run -0 rl status ds2
	assert_line '  mode     write (Redisson read-write lock)'
	assert_line '  waiting  3'
	assert_line "  first    writer $w (new readers wait behind it)"
	run -0 rl status --json ds2
	echo "$output" | jq -e --arg w "$w" '.waiting == 3 and .writer_waiting == $w'
	run -0 rl status
	assert_output --regexp "^ds2: held by $(hostname) pid [0-9]+ \\(sleep 60\\) for [0-9.]+m?s, lease [0-9.]+s left, 3 waiting\$"
	run -0 rl status -v
	assert_output --regexp "^ds2: held by $(hostname) pid [0-9]+ \\(sleep 60\\) for [0-9.]+m?s, lease [0-9.]+s left, fence [0-9]+, 3 waiting\$"
	run -0 rl queue ds2
	assert_line --index 0 --regexp "^ds2: held by $(hostname) pid [0-9]+ \\(sleep 60\\) for "
	assert_line --index 1 '3 waiting to read or write, in no order'
	assert_line --index 2 --regexp "^first: writer $w; new readers wait behind it \\(it announced itself, [0-9.]+m?s left\\)\$"
	refute_output --partial 'no one waiting'
	run -0 rl queue --json ds2
	echo "$output" | jq -e --arg w "$w" '.rwlock.mode == "write"
	    and .rwlock.waiting == 3 and .rwlock.writer_waiting == $w
	    and .rwlock.writer_ms > 0 and .unordered == 0'
	# A Java reader that waits too (one per Java client).
	python3 "$RSN" --port "$R_PORT" rwlock ds2 read --wait 60 3>&- >/dev/null 2>&1 &
	bg+=($!)
	wait_for 10 eval '[ "$(listeners ds2)" = 4 ]'
	run -0 rl status ds2
	assert_line '  waiting  4'
}

@test "readers hold: status without NAME and queue say how many, in the style of status NAME" {
	bg_rl exec -s -t 60s ds -- sleep 60
	bg_rl exec -s -t 60s ds -- sleep 60
	wait_for 10 eval '[ "$(rcli hlen ds)" = 3 ]'
	run -0 rl status
	assert_output --regexp '^ds: held by 2 readers \(2 holds, read-write lock\), lease [0-9.]+s left, 0 waiting$'
	run -0 rl queue ds
	assert_line --index 0 --regexp '^ds: held by 2 readers, lease [0-9.]+s left$'
	assert_line --index 1 'no one waiting'
	run -0 rl queue --json ds
	echo "$output" | jq -e '.rwlock.mode == "read" and .rwlock.readers == 2
	    and .rwlock.waiting == 0 and .rwlock.writer_waiting == null'
}

@test "a semaphore's name: queue, a lock, -s and --write say it is a semaphore and to give --limit N; exit 65, nothing changed" {
	tok=$(rl lock --limit 2 -t 60s sem)
	before=$(snapshot)
	run -65 --separate-stderr rl queue sem
	assert_equal "$stderr" "redlock: sem is a semaphore of 2 permits (1 taken), not a lock: it has no queue; redlock status sem shows its permits and how many wait for one; nothing was changed"
	assert_output ''
	want="redlock: sem is a semaphore of 2 permits (1 taken), not a lock: take a permit with --limit 2, or choose another name; nothing was changed"
	run -65 --separate-stderr rl exec -n sem -- touch "$D/ran"
	assert_equal "$stderr" "$want"
	run -65 --separate-stderr rl exec -w 1s sem -- touch "$D/ran"
	assert_equal "$stderr" "$want"
	run -65 --separate-stderr rl exec -s sem -- touch "$D/ran"
	assert_equal "$stderr" "$want"
	run -65 --separate-stderr rl lock --write -n sem
	assert_equal "$stderr" "$want"
	run -65 --separate-stderr rl lock --fair -n sem
	assert_equal "$stderr" "$want"
	[ ! -e "$D/ran" ]
	[ "$(snapshot)" = "$before" ]
	# No permit taken: only the count is there.
	rl unlock --owner "$tok" sem
	run -65 --separate-stderr rl exec -n sem -- true
	assert_equal "$stderr" "redlock: sem is a semaphore with 2 permits free, not a lock: take a permit with --limit 2, or choose another name; nothing was changed"
	[ "$(rcli get sem)" = 2 ]
}

@test "--limit on a lock's or a read-write lock's name says what the name is; exit 65, nothing changed" {
	rl lock -t 60s pl >/dev/null
	rl lock -s -t 60s rw >/dev/null
	before=$(snapshot)
	run -65 --separate-stderr rl exec --limit 2 -n pl -- touch "$D/ran"
	assert_equal "$stderr" "redlock: pl is a lock, not a semaphore: take it without --limit, or choose another name; nothing was changed"
	run -65 --separate-stderr rl lock --limit 2 -w 1s rw
	assert_equal "$stderr" "redlock: rw is a read-write lock, not a semaphore: take it with -s or --write instead of --limit, or choose another name; nothing was changed"
	[ ! -e "$D/ran" ]
	[ "$(snapshot)" = "$before" ]
	# A key that is no lock of any kind: its type, as before.
	rcli rpush l a >/dev/null
	run -65 --separate-stderr rl exec --limit 2 -n l -- true
	assert_equal "$stderr" "redlock: l is not a lock: key l holds a list; nothing was changed, choose another name"
}

@test "holder and waiter records written by hand: status and queue stay JSON, a number that is none is null, text escapes what is not UTF-8; nothing changed" {
	rcli hset x o1 1 >/dev/null
	rcli pexpire x 60000 >/dev/null
	# Not JSON at all.
	rcli hset 'redlock_holder:{x}' o1 'not json' >/dev/null
	run -0 --separate-stderr rl status --json x
	strict json <<<"$output"
	echo "$output" | jq -e '.owner == "o1" and .host == null and .pid == null
	    and .fence == null'
	# JSON of the wrong types (a pid that is no number, a token as a
	# string, a user that is an object), bytes that are not UTF-8 (an
	# overlong '/' too) and control characters (C1's CSI too).
	rcli hset 'redlock_holder:{x}' o1 $'{"host":"h\xff\x1b[2J","pid":"abc","user":{"a":1},"cmd":"c\\"q\\u0007\xc0\xaf","fence":"7","since_ms":"x"}' >/dev/null
	w=$'w"1\xff'
	rcli rpush 'redisson_lock_queue:{x}' "$w" >/dev/null
	rcli zadd 'redisson_lock_timeout:{x}' $(($(server_ms) + 60000)) "$w" >/dev/null
	rcli hset 'redlock_waiter:{x}' "$w" $'{"host":"wh\xfe","pid":"12x","user":"u\\u001b[2J","cmd":"\\u001b]0;t\\u0007 \xe9\x83\xa8 \xc2\x9b","since_ms":"x","gives_up_ms":"y"}' >/dev/null
	before=$(snapshot)
	run -0 --separate-stderr rl status --json x
	strict json <<<"$output"
	echo "$output" | jq -e '.owner == "o1" and .host == "h\ufffd\u001b[2J"
	    and .pid == null and .user == null and .cmd == "c\"q\u0007\ufffd\ufffd"
	    and .fence == null and .since_ms == null and .waiting == 1'
	run -0 --separate-stderr rl status x
	strict text <<<"$output"
	assert_line '  host     h\xff\x1b[2J'
	assert_line '  command  c"q\x07\xc0\xaf'
	run -0 --separate-stderr rl queue --json x
	strict json <<<"$output"
	echo "$output" | jq -e '.holder.owner == "o1" and .holder.pid == null
	    and (.waiters | length) == 1 and (.waiters[0] | .owner == "w\"1\ufffd"
	    and .host == "wh\ufffd" and .pid == null and .user == "u\u001b[2J"
	    and .cmd == "\u001b]0;t\u0007 部 \u009b" and .waiting_ms == null
	    and .gives_up_ms == null)'
	run -0 --separate-stderr rl queue x
	strict text <<<"$output"
	assert_line --index 0 --partial 'x: held by h\xff\x1b[2J pid '
	assert_line --index 2 --regexp '^1   w"1\\xff +- +- +\\x1b]0;t\\x07 部 \\xc2\\x9b$'
	[ "$(snapshot)" = "$before" ]
	# A token beyond 2^63-1 is none.
	rcli hset 'redlock_holder:{x}' o1 '{"host":"h","pid":5,"fence":99999999999999999999}' >/dev/null
	run -0 --separate-stderr rl status --json x
	echo "$output" | jq -e '.pid == 5 and .fence == null'
}

@test "queue --watch INTERVAL NAME takes INTERVAL as the interval, as --watch=INTERVAL" {
	# --foreground: timeout(1) otherwise sends SIGCONT right after its
	# SIGTERM, which can cancel the SIGSTOP of LeakSanitizer's ptrace
	# attach while the ended watch checks for leaks at exit: the check
	# then spins for ever (1 run in 10 here), with ASan only.
	run -124 timeout --foreground 1 "$RL" -u "redis://127.0.0.1:$R_PORT" queue --watch 2s x
	assert_line --index 0 --regexp 'every 2\.0s: redlock queue x$'
	run -124 timeout --foreground 1 "$RL" -u "redis://127.0.0.1:$R_PORT" queue --watch 300ms --json x
	# One word: it is NAME, watched every second.
	run -124 timeout --foreground 1 "$RL" -u "redis://127.0.0.1:$R_PORT" queue --watch 2s
	assert_line --index 0 --regexp 'every 1\.0s: redlock queue 2s$'
}

@test "queue --watch ends at SIGINT without another frame, at once even when the server has stopped answering" {
	"$RL" -u "redis://127.0.0.1:$R_PORT" --reply-timeout 3s \
	    queue --watch=10s x >"$D/watch" 2>"$D/err" 3>&- &
	p=$!
	wait_for 5 grep -q 'x: free' "$D/watch"
	kill -STOP "$R_PID"
	t0=${EPOCHREALTIME/./}
	kill -INT "$p"
	status=0
	reap -t 10 "$p" || status=$?
	ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
	kill -CONT "$R_PID"
	[ "$status" -eq 0 ]
	[ "$(grep -c 'redlock queue x' "$D/watch")" = 1 ]
	[ ! -s "$D/err" ]
	# Not --reply-timeout's 3 s spent on a frame after the signal.
	[ "$ms" -lt 1500 ]
}
