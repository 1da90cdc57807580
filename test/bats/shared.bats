#!/usr/bin/env bats
# --shared and --write: Redisson's RReadWriteLock layout from the command
# line. Readers share, a writer excludes everyone and is not starved, the
# watchdog renews every hold, releases wake by Redisson's channel, and
# every pair of lock kinds behaves as the manual's table says, against
# test/bats/redisson.py speaking Redisson's own scripts.

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	kill -CONT "$R_PID"
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
	bg=()
}
teardown() { kill -CONT "$R_PID"; stop_bg; stop_strays; }

RSN=$BATS_TEST_DIRNAME/redisson.py
rsn() { python3 "$RSN" --port "$R_PORT" "$@"; }

# hold KIND: take x as KIND for a minute and keep it (no renewal needed).
hold() {
	case $1 in
	plain) rl lock -t 60s x ;;
	fair) rl lock -t 60s --fair x ;;
	shared) rl lock -t 60s -s x ;;
	write) rl lock -t 60s --write x ;;
	RLock) rsn lock x --lease 60000 --keep ;;
	RReadLock) rsn rwlock x read --lease 60000 --keep ;;
	RWriteLock) rsn rwlock x write --lease 60000 --keep ;;
	esac >/dev/null
}

# try KIND: one attempt at x as KIND; "got" or "busy".
try() {
	local rc=0
	case $1 in
	plain) rl lock -n -q -t 60s x ;;
	shared) rl lock -n -q -t 60s -s x ;;
	write) rl lock -n -q -t 60s --write x ;;
	RLock) rsn lock x --wait 0 --lease 60000 --keep ;;
	RReadLock) rsn rwlock x read --wait 0 --lease 60000 --keep ;;
	RWriteLock) rsn rwlock x write --wait 0 --lease 60000 --keep ;;
	esac >/dev/null 2>&1 || rc=$?
	case $rc in
	0) echo got ;;
	1|75) echo busy ;;
	*) echo "error $rc" ;;
	esac
}

@test "every pair of lock kinds, each way round, as the manual's table says" {
	# holder -> what each kind that tries next gets. Every pair
	# excludes: a plain or --fair hold of redlock's carries the marker
	# "mode" = "write", so that Redisson's read-write lock, which looks
	# at "mode" only, finds it held (Redisson's own RLock does not, and
	# RReadWriteLock takes it as free: a gap of Redisson's own).
	local -A want=(
	    [plain]="plain=busy shared=busy write=busy RLock=busy RReadLock=busy RWriteLock=busy"
	    [fair]="plain=busy shared=busy write=busy RLock=busy RReadLock=busy RWriteLock=busy"
	    [shared]="plain=busy shared=got write=busy RLock=busy RReadLock=got RWriteLock=busy"
	    [write]="plain=busy shared=busy write=busy RLock=busy RReadLock=busy RWriteLock=busy"
	    [RLock]="plain=busy shared=busy write=busy"
	    [RReadLock]="plain=busy shared=got write=busy"
	    [RWriteLock]="plain=busy shared=busy write=busy"
	)
	local h pair k got bad=0
	for h in plain fair shared write RLock RReadLock RWriteLock; do
		for pair in ${want[$h]}; do
			k=${pair%=*}
			rcli flushall >/dev/null
			hold "$h"
			got=$(try "$k")
			echo "$h holds, $k tries: $got (want ${pair#*=})" >&3
			[ "$got" = "${pair#*=}" ] || bad=1
		done
	done
	[ "$bad" = 0 ]
}

# fields KEY: the fields of hash KEY, sorted, on one line.
fields() { rcli hgetall "$1" | paste -d= - - | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//'; }

# after_ms FILE T0: ms from T0 (now_ms) to the "acquired" line that
# redisson.py --label wrote to FILE (its wall clock, in seconds).
after_ms() {
	awk -v t0="$2" '$1 == "acquired" { printf "%.0f\n", $3 * 1000 - t0; exit }' "$1"
}

@test "a plain or --fair hold keeps Java's RReadLock and RWriteLock out, trying once or waiting, and its release wakes a Java waiter by push" {
	local h k opt tok ms j
	for h in plain fair; do
		opt=
		[ "$h" = fair ] && opt=--fair
		for k in read write; do
			rcli flushall >/dev/null
			tok=$(rl lock -t 30s $opt x)
			# Busy for one attempt, which writes nothing: the
			# marker beside the owner is all it sees.
			run -1 rsn rwlock x "$k" --wait 0 --lease 60000 --keep
			assert_equal "$(fields x)" "$tok=1 mode=write"
			# A waiter, told the 30 s lease: without a message it
			# would look again when its --wait (20 s) runs out.
			python3 "$RSN" --port "$R_PORT" --label j rwlock x "$k" \
			    --wait 20 --lease 60000 --keep >"$D/j" 3>&- &
			j=$!
			bg+=($j)
			wait_for 5 eval '[ "$(rcli pubsub numsub "redisson_rwlock:{x}" | sed -n 2p)" = 1 ]'
			[ "$(rcli hget x mode)" = write ]
			t0=$(now_ms)
			rl unlock --owner "$tok" x
			wait_for 25 grep -q '^acquired' "$D/j"
			ms=$(after_ms "$D/j" "$t0")
			echo "$h holder, Java $k lock waiting: acquired $ms ms after the unlock began" >&3
			[ "$ms" -lt 2000 ]
			[ "$(rcli hget x mode)" = "$k" ]
			reap -t 5 "$j"
		done
	done
}

@test "behind Java's RReadLock or RWriteLock a plain or --fair waiter waits, and gets in soon after the Java release" {
	local h k opt p ms
	for h in plain fair; do
		opt=
		[ "$h" = fair ] && opt=--fair
		for k in read write; do
			rcli flushall >/dev/null
			rsn rwlock x "$k" --lease 60000 --keep --id aaaa:1 >/dev/null
			run -75 rl lock -n -q $opt x
			"$RL" -u "redis://127.0.0.1:$R_PORT" exec $opt -w 20s x -- \
			    sh -c 'date +%s%N >"$0"' "$D/p" 3>&- &
			p=$!
			bg+=($p)
			wait_for 5 eval '[ -n "$(rcli pubsub channels "*{x}*")" ]'
			t0=$(date +%s%N)
			rsn rwlock x "unlock-$k" --id aaaa:1 >/dev/null
			wait_for 10 test -s "$D/p"
			ms=$(( ($(cat "$D/p") - t0) / 1000000 ))
			echo "$h waiter behind a Java $k lock: in $ms ms after the Java release began" >&3
			[ "$ms" -lt 3000 ]
			reap -t 5 "$p"
			rm -f "$D/p"
		done
	done
}

@test "a plain hold without the marker, as the previous version wrote it, is still shown, re-entered, renewed and released" {
	tok=01234567-89ab-cdef-0123-456789abcdef:4242
	since=$(server_ms)
	rcli hset x "$tok" 1 >/dev/null
	rcli pexpire x 30000 >/dev/null
	rcli hset 'redlock_holder:{x}' "$tok" "{\"host\":\"old\",\"pid\":4242,\"user\":\"u\",\"cmd\":\"job\",\"since_ms\":$since,\"fence\":7}" >/dev/null
	rcli pexpire 'redlock_holder:{x}' 30000 >/dev/null
	run -0 --separate-stderr rl status x
	assert_line "  owner    $tok"
	assert_line "  holds    1"
	assert_line "  mode     exclusive"
	run -0 --separate-stderr rl status --json x
	echo "$output" | jq -e --arg t "$tok" '.owner == $t and .mode == "exclusive" and .holds == 1 and .fence == 7'
	run -75 rl lock -n -q x
	# The exec chain re-enters it as it is (an older redlock above still
	# gives its hold back), and its watchdog keeps it past the 1.5 s
	# it has left (set here, not above: a loaded machine may take that
	# long over the checks above).
	rcli pexpire x 1500 >/dev/null
	rcli pexpire 'redlock_holder:{x}' 1500 >/dev/null
	REDLOCK_HELD="x=$tok=exclusive" run -0 --separate-stderr \
	    rl exec -t 1s x -- sh -c 'sleep 2.5; redis-cli -p "$0" hgetall x | tr "\n" " "' "$R_PORT"
	assert_output "$tok 2 "
	assert_equal "$(fields x)" "$tok=1"
	run -0 --separate-stderr rl unlock --owner "$tok" x
	key_gone x
	key_gone 'redlock_holder:{x}'
}

@test "status and unlock tell a marked plain hold from a write lock: owner, holds and mode exclusive; a write lock's writer is unchanged" {
	tok=01234567-89ab-cdef-0123-456789abcdef:4242
	rcli hset x "$tok" 2 mode write >/dev/null
	rcli pexpire x 30000 >/dev/null
	run -0 --separate-stderr rl status x
	assert_line "  owner    $tok"
	assert_line "  holds    2"
	assert_line "  mode     exclusive"
	run -0 --separate-stderr rl status --json x
	echo "$output" | jq -e --arg t "$tok" '.owner == $t and .mode == "exclusive" and .holds == 2 and .kind != "rwlock"'
	run -0 --separate-stderr rl queue x
	[[ $output == *"$tok"* ]]
	[[ $output != *"mode"* ]]
	# A writer's own read under its write is no plain hold: not given
	# back as one.
	rcli hset w "$tok:write" 1 "$tok" 1 mode write >/dev/null
	run -0 --separate-stderr rl status --json w
	echo "$output" | jq -e --arg t "$tok" '.owner == $t and .mode == "write"'
	# One unlock gives back one hold of the plain lock; the last frees
	# it.
	run -0 rl unlock --owner "$tok" x
	assert_equal "$(fields x)" "$tok=1 mode=write"
	run -0 rl unlock --owner "$tok" x
	key_gone x
}

@test "a plain call with a reader's token (--owner, or REDLOCK_HELD set by hand) neither re-enters the read hold nor counts it twice" {
	tok=$(rl lock -s -t 60s n)
	run -75 --separate-stderr rl lock -n --owner "$tok" n
	[[ $stderr == "redlock: n is busy: held by "* ]]
	REDLOCK_HELD="n=$tok" run -75 --separate-stderr rl lock -n n
	REDLOCK_HELD="n=$tok" run -75 --separate-stderr rl exec -n --fair n -- true
	assert_equal "$(rcli hgetall n | paste -d= - - | LC_ALL=C sort | tr '\n' ' ')" "$tok=1 mode=read "
	# One unlock gives the one read hold back.
	run -0 rl unlock --owner "$tok" n
	key_gone n
	# The writer's own read hold (a read under its write) is no plain
	# hold either.
	tok=$(rl lock --write -t 60s n)
	rl lock -s --owner "$tok" n >/dev/null
	run -75 --separate-stderr rl lock -n --owner "$tok" n
	assert_equal "$(rcli hgetall n | paste -d= - - | LC_ALL=C sort | tr '\n' ' ')" "$tok:write=1 $tok=1 mode=write "
}

@test "10 readers hold at once; a writer waits for every one of them, and then readers wait for it" {
	for i in $(seq 1 10); do
		"$RL" -u "redis://127.0.0.1:$R_PORT" exec -s x -- sh -c \
		    "echo start >>'$D/r$i'; sleep 1.5" 3>&- &
		bg+=($!)
	done
	wait_for 5 eval '[ "$(cat "$D"/r* 2>/dev/null | wc -l)" = 10 ]'
	run -0 rl status --json x
	echo "$output" | jq -e '.mode == "read" and (.readers | length) == 10
	    and all(.readers[]; .host != null and .pid > 0 and .cmd != null)'
	start=$(now_ms)
	run -0 rl exec --write -w 10s x -- sh -c 'echo "$REDLOCK_FENCE"'
	waited=$(($(now_ms) - start))
	echo "the writer waited $waited ms for readers holding 1.5 s" >&3
	all_dead "${bg[@]}"
	[ "$waited" -gt 900 ]
	# The last reader's release woke it: pushed, not polled at the
	# 30 s lease.
	[ "$waited" -lt 5000 ]
}

@test "a waiting writer holds back new readers of redlock's, not a reader already in, and is not starved" {
	a=$(rl lock -t 60s -s x)
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec --write -w 20s x -- sh -c 'redis-cli -p "$0" hlen x' "$R_PORT" >"$D/w" 3>&- &
	bg+=($!)
	wait_for 5 eval '[ "$(rcli get "redlock_writer:{x}")" != "" ]'
	# A new reader waits behind the writer...
	run -75 --separate-stderr rl exec -n -s x -- true
	[[ $stderr == "redlock: x is busy: a writer waits for it (owner "*"), and new shared holders wait behind it; wait for it with -w DURATION" ]]
	# ...a reader already in re-enters (its own --owner)...
	run -0 rl exec --owner "$a" -n -s x -- true
	# ...and when the readers are gone the writer is in, alone: the
	# hash has its hold and "mode" only.
	rl unlock --owner "$a" x
	wait_for 5 test -s "$D/w"
	assert_equal "$(cat "$D/w")" 2
	key_gone 'redlock_writer:{x}'
	# Readers that come and go, overlapping so that the lock is never
	# free of them: the writer still gets in.
	rcli flushall >/dev/null
	for i in 1 2 3; do
		(
			while :; do
				"$RL" -u "redis://127.0.0.1:$R_PORT" exec -s -w 20s x -- \
				    sleep 0.3 || exit
			done
		) 3>&- &
		bg+=($!)
		sleep 0.1
	done
	sleep 0.5
	start=$(now_ms)
	run -0 rl exec --write -w 10s x -- true
	took=$(($(now_ms) - start))
	echo "the writer got in after $took ms among overlapping readers" >&3
	[ "$took" -lt 5000 ]
}

# reader_stream N OUT: N readers of x, one every 250 ms, each holding it
# 1 s and waiting for it as long as it must (-w 30s); each adds a line to
# OUT once in. Returns once all have ended, 1 if one of them failed.
reader_stream() {
	local i p pids=() rc=0
	for ((i = 0; i < $1; i++)); do
		"$RL" -u "redis://127.0.0.1:$R_PORT" exec -s -w 30s -q x -- \
		    sh -c 'echo in >>"$0"; sleep 1' "$2" 3>&- &
		pids+=($!)
		nap 0.25
	done
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	return "$rc"
}

@test "a plain exclusive waiter is not starved by a stream of readers: new readers wait behind it, as behind --write" {
	# Issue 28 S7: a reader every 250 ms, each holding 1 s, for 10 s; a
	# plain exclusive waiter that asks 1.5 s in waited until the stream
	# ended. It waits for the readers in now, about 1 s.
	reader_stream 40 "$D/in" &
	s=$!
	bg+=($s)
	wait_for 5 eval '[ "$(rcli hget x mode)" = read ]'
	nap 1.5
	start=$(now_ms)
	run -0 --separate-stderr rl exec -w 30s x -- sh -c \
	    'echo "mode=$(redis-cli -p "$0" hget x mode) in=$(wc -l <"$1")"' \
	    "$R_PORT" "$D/in"
	took=$(($(now_ms) - start))
	n=${output##*=}
	echo "the exclusive waiter got in after $took ms, $n readers in by then" >&3
	# Alone: a plain lock's hash, "mode" only redlock's marker.
	[[ $output == "mode=write in="* ]]
	# Well before the stream ended (10 s), with a 5x margin over the 1 s
	# that the readers in hold it.
	[ "$took" -lt 5000 ]
	[ "$n" -lt 40 ]
	# The readers held back come in after it: none fails.
	wait "$s"
	[ "$(wc -l <"$D/in")" = 40 ]
	key_gone 'redlock_writer:{x}'
}

@test "an exclusive waiter behind readers announces itself: renewed while it waits, gone when it acquires, withdrawn when it gives up or is signalled; --fair too" {
	a=$(rl lock -t 60s -s x)
	# A plain waiter whose announcement lives its waiter timeout, 600 ms.
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec --waiter-timeout 600ms \
	    -w 20s x -- sh -c 'date +%s%N >"$0"' "$D/p" 3>&- &
	p=$!
	bg+=($p)
	wait_for 5 eval '[ "$(rcli get "redlock_writer:{x}")" != "" ]'
	o=$(rcli get 'redlock_writer:{x}')
	[ "$(rcli pttl 'redlock_writer:{x}')" -le 600 ]
	# A new reader waits behind it; the reader already in re-enters.
	run -75 --separate-stderr rl exec -n -s x -- true
	assert_equal "$stderr" "redlock: x is busy: a writer waits for it (owner $o), and new shared holders wait behind it; wait for it with -w DURATION"
	run -0 rl exec --owner "$a" -n -s x -- true
	# Renewed: still there after more than twice its life.
	nap 1.5
	assert_equal "$(rcli get 'redlock_writer:{x}')" "$o"
	run -75 rl exec -n -s -q x -- true
	# The last reader's release wakes it (pushed), and its announcement
	# goes when it acquires.
	t0=$(date +%s%N)
	rl unlock --owner "$a" x
	wait_for 5 test -s "$D/p"
	echo "the exclusive waiter was woken $(( ($(cat "$D/p") - t0) / 1000000 )) ms after the last reader's unlock began" >&3
	[ $(( ($(cat "$D/p") - t0) / 1000000 )) -lt 3000 ]
	reap "$p"
	key_gone 'redlock_writer:{x}'

	# Giving up withdraws it at once (it would live 5 s), and a reader
	# that waited behind it comes in.
	a=$(rl lock -t 60s -s x)
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec -w 1500ms -q x -- true 3>&- &
	p=$!
	bg+=($p)
	wait_for 5 eval '[ "$(rcli exists "redlock_writer:{x}")" = 1 ]'
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec -s -w 20s -q x -- true 3>&- &
	r=$!
	bg+=($r)
	rc=0
	reap "$p" || rc=$?
	[ "$rc" = 75 ]
	key_gone 'redlock_writer:{x}'
	reap -t 3 "$r"
	# A signal too: the waiter exits 128+15 and withdraws it.
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec -w 20s -q x -- true 3>&- &
	p=$!
	bg+=($p)
	wait_for 5 eval '[ "$(rcli exists "redlock_writer:{x}")" = 1 ]'
	kill -TERM "$p"
	rc=0
	reap "$p" || rc=$?
	[ "$rc" = 143 ]
	key_gone 'redlock_writer:{x}'
	run -0 rl exec -n -s x -- true

	# A fair waiter (the head of its queue) announces itself as well.
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec --fair -w 20s x -- sh -c \
	    'date +%s%N >"$0"' "$D/f" 3>&- &
	p=$!
	bg+=($p)
	wait_for 5 eval '[ "$(rcli exists "redlock_writer:{x}")" = 1 ]'
	run -75 rl exec -n -s -q x -- true
	t0=$(date +%s%N)
	rl unlock --owner "$a" x
	wait_for 5 test -s "$D/f"
	[ $(( ($(cat "$D/f") - t0) / 1000000 )) -lt 3000 ]
	reap "$p"
	key_gone 'redlock_writer:{x}'
}

@test "an exclusive waiter behind Java's readers holds back redlock's readers, not Java's, and gets in once they are gone" {
	rsn rwlock x read --lease 60000 --keep --id aaaa:1 >/dev/null
	# Redisson's read releases publish on redisson_rwlock:{x} only, which
	# a plain waiter does not hear: it looks again at each renewal of its
	# announcement, every third of its waiter timeout (500 ms here).
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec --waiter-timeout 1500ms \
	    -w 40s x -- sh -c 'date +%s%N >"$0"' "$D/p" 3>&- &
	p=$!
	bg+=($p)
	wait_for 5 eval '[ "$(rcli exists "redlock_writer:{x}")" = 1 ]'
	run -75 rl exec -n -s -q x -- true
	# Redisson's readers do not look at the announcement.
	rsn rwlock x read --wait 0 --lease 60000 --keep --id bbbb:1 >/dev/null
	[ "$(rcli hexists x bbbb:1)" = 1 ]
	rsn rwlock x unlock-read --id aaaa:1 >/dev/null
	t0=$(date +%s%N)
	rsn rwlock x unlock-read --id bbbb:1 >/dev/null
	wait_for 10 test -s "$D/p"
	echo "the exclusive waiter got in $(( ($(cat "$D/p") - t0) / 1000000 )) ms after Java's last read release began" >&3
	[ $(( ($(cat "$D/p") - t0) / 1000000 )) -lt 3000 ]
	reap "$p"
	key_gone 'redlock_writer:{x}'
}

@test "the writer's announcement goes when it gives up, and expires when it dies" {
	hold shared
	run -75 rl exec --write -w 300ms -q x -- true
	key_gone 'redlock_writer:{x}'
	run -0 rl exec -n -s x -- true
	# SIGKILL of a waiting writer: readers wait at most the announcement's
	# life (5 s), not for ever.
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec --write x -- true 3>&- &
	w=$!
	wait_for 5 eval '[ "$(rcli exists "redlock_writer:{x}")" = 1 ]'
	# Whole, as by a crash: no watchdog left to take the announcement
	# back.
	kill -9 $(proc_tree "$w")
	wait "$w" 2>/dev/null || :
	run -75 rl exec -n -s x -- true
	start=$(now_ms)
	run -0 rl exec -s -w 10s x -- true
	echo "a new reader got in $(($(now_ms) - start)) ms after the writer died" >&3
	[ "$(($(now_ms) - start))" -lt 6000 ]
}

@test "the watchdog renews shared and write holds; a killed reader's hold ends within its ttl" {
	run -0 rl exec -s -t 1s x -- sleep 2.2
	run -0 rl exec --write -t 1s x -- sh -c 'sleep 2.2; redis-cli -p '"$R_PORT"' hget x "$REDLOCK_OWNER:write"'
	assert_output 1
	# SIGKILL of redlock and its watchdog: nothing releases the hold,
	# its lease ends it.
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec -s -t 500ms x -- sleep 30 3>&- &
	e=$!
	bg+=($e)
	wait_for 5 eval '[ "$(rcli hget x mode)" = read ]'
	wd=$(pgrep -P "$e")
	c=$(pgrep -P "$wd")
	kill -9 "$e" "$wd"
	start=$(now_ms)
	run -0 rl exec --write -w 5s x -- true
	took=$(($(now_ms) - start))
	echo "a writer got in $took ms after the reader's SIGKILL (ttl 500 ms)" >&3
	[ "$took" -lt 1500 ]
	kill -9 "$c" 2>/dev/null || :
}

@test "wake-ups: a shared release wakes a waiting writer, a write release wakes readers, by push; Redisson's waiters too" {
	# redlock reader releases, redlock writer waiting (lease 60 s).
	tok=$(rl lock -t 60s -s x)
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec --write -w 20s x -- sh -c 'date +%s%N >"$0"' "$D/w" 3>&- &
	bg+=($!)
	wait_for 5 eval '[ "$(rcli pubsub numsub "redisson_rwlock:{x}" | sed -n 2p)" = 1 ]'
	t0=$(date +%s%N)
	rl unlock --owner "$tok" x
	wait_for 5 test -s "$D/w"
	echo "writer woken $(( ($(cat "$D/w") - t0) / 1000000 )) ms after the reader's unlock began" >&3
	[ $(( ($(cat "$D/w") - t0) / 1000000 )) -lt 3000 ]
	# A Redisson write lock's release ("1") wakes a redlock reader.
	rcli flushall >/dev/null
	rsn rwlock x write --lease 60000 --keep --id aaaa:1 >/dev/null
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec -s -w 20s x -- sh -c 'date +%s%N >"$0"' "$D/r" 3>&- &
	bg+=($!)
	wait_for 5 eval '[ "$(rcli pubsub numsub "redisson_rwlock:{x}" | sed -n 2p)" = 1 ]'
	t0=$(date +%s%N)
	rsn rwlock x unlock-write --id aaaa:1 >/dev/null
	wait_for 5 test -s "$D/r"
	[ $(( ($(cat "$D/r") - t0) / 1000000 )) -lt 3000 ]
	# A Redisson reader waits on a redlock writer and is woken by its
	# release.
	rcli flushall >/dev/null
	tok=$(rl lock -t 60s --write x)
	python3 "$RSN" --port "$R_PORT" --label j rwlock x read --wait 20 >"$D/j" 3>&- &
	bg+=($!)
	wait_for 5 eval '[ "$(rcli pubsub numsub "redisson_rwlock:{x}" | sed -n 2p)" = 1 ]'
	rl unlock --owner "$tok" x
	wait_for 5 grep -q '^acquired' "$D/j"
	# A Java RLock waiter behind redlock readers hears the release on the
	# lock's channel.
	rcli flushall >/dev/null
	tok=$(rl lock -t 60s -s x)
	python3 "$RSN" --port "$R_PORT" --label k lock x --wait 20 >"$D/k" 3>&- &
	bg+=($!)
	wait_for 5 has_subscribers x 1
	rl unlock --owner "$tok" x
	wait_for 5 grep -q '^acquired' "$D/k"
}

@test "--shared and --write: usage errors, several masters refused, and unlock finds the kind" {
	run -64 --separate-stderr rl lock -s --write x
	assert_equal "$stderr" "redlock: --shared and --write do not go together: a lock is of one kind; usage: redlock lock [OPTIONS] NAME (see redlock lock --help)"
	run -64 --separate-stderr rl exec --fair -s x -- true
	[[ $stderr == *"--fair and --shared do not go together"* ]]
	run -64 --separate-stderr "$RL" -u "redis://127.0.0.1:$R_PORT" -u "redis://127.0.0.1:1" exec -s x -- true
	[[ $stderr == *"--shared is not available with several masters"* ]]
	assert_equal "$(rcli dbsize)" 0
	a=$(rl lock -t 60s -s x)
	b=$(rl lock -t 60s -s x)
	run -0 rl unlock --owner "$a" x
	[ "$(rcli hget x mode)" = read ]
	run -0 rl unlock --owner "$b" x
	key_gone x
	w=$(rl lock -t 60s --write x)
	run -1 --separate-stderr rl unlock --owner "$a" x
	run -0 rl unlock --owner "$w" x
	key_gone x
	# Only the fencing counter and the history stay, as for every lock.
	assert_equal "$(rcli keys '*' | sort)" 'redisson_lock_token:{x}
redlock_log:{x}'
}

@test "unlock --force of a read-write lock removes every holder's record and read lease key, Redisson's too, and no other name's" {
	a=$(rl lock -t 60s -s x)
	rl lock -t 60s -s --owner "$a" x >/dev/null
	rl lock -t 60s -s x >/dev/null
	rsn rwlock x read --lease 60000 --keep >/dev/null
	[ "$(rcli hlen 'redlock_holder:{x}')" = 2 ]
	[ "$(rcli keys '{x}:*:rwlock_timeout:*' | wc -l)" = 4 ]
	# {x} shares x's holder key: its holder's record stays.
	o=$(rl lock -t 60s '{x}')
	run -0 --separate-stderr rl unlock --force x
	# The history (of both names, as the holder key) records the removal.
	assert_equal "$(rcli keys '*' | sort)" "redisson_lock_token:{x}
redlock_holder:{x}
redlock_log:{x}
{x}"
	assert_equal "$(rcli hkeys 'redlock_holder:{x}')" "$o"
	run -0 rl unlock --owner "$o" '{x}'
	# A writer with read holds of its own.
	w=$(rl lock -t 60s --write x)
	rl lock -t 60s -s --owner "$w" x >/dev/null
	[ "$(rcli hget x mode)" = write ]
	[ "$(rcli hlen x)" = 3 ]
	run -0 --separate-stderr rl unlock --force x
	assert_equal "$(rcli keys '*' | sort)" 'redisson_lock_token:{x}
redlock_log:{x}'
}

@test "a reader's hold taken away behind its back, or its watchdog stopped past the lease: COMMAND is stopped, exit 79" {
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec -s -t 300ms --kill-after 1s x -- sleep 30 3>&- &
	e=$!
	wait_for 5 eval '[ "$(rcli hget x mode)" = read ]'
	rcli del x >/dev/null
	rc=0
	reap "$e" || rc=$?
	[ "$rc" = 79 ]
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec --write -t 400ms --kill-after 1s x -- sleep 30 3>&- &
	e=$!
	wait_for 5 eval '[ "$(rcli hget x mode)" = write ]'
	wd=$(pgrep -P "$e")
	kill -STOP "$wd"
	run -0 rl exec -s -w 5s x -- true
	kill -CONT "$wd"
	rc=0
	reap "$e" || rc=$?
	[ "$rc" = 79 ]
	key_gone x
}

@test "--waiter-timeout sets how often -s and --write waiters look again, and how long a --write announcement lives" {
	rsn rwlock x write --lease 30000 --keep >/dev/null
	calls() { rcli info commandstats | sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),.*/\1/p' | grep . || echo 0; }
	for kind in -s --write; do
		"$RL" -u "redis://127.0.0.1:$R_PORT" lock $kind -w 10s \
		    --waiter-timeout 30s x 2>/dev/null 3>&- &
		bg+=($!)
		wait_for 5 eval '[ "$(rcli client list | grep -cE " sub=[1-9]")" -ge 1 ]'
		nap 0.3
		c0=$(calls)
		# A third of 30 s: no look in 3 s (by default, one every 1.7 s).
		nap 3
		echo "$kind: $(($(calls) - c0)) script calls in 3 s of waiting" >&3
		[ "$(($(calls) - c0))" = 0 ]
		if [ "$kind" = --write ]; then
			ms=$(rcli pttl 'redlock_writer:{x}')
			echo "--write: its announcement has $ms ms left" >&3
			[ "$ms" -gt 20000 ]
			[ "$ms" -le 30000 ]
		fi
		stop_bg
		bg=()
	done
}
