#!/usr/bin/env bats
# The suite's own harness: no test can hang it. A test that runs too long
# fails (BATS_TEST_TIMEOUT) and the next one runs; a wait on a background
# process is bounded (reap), and a process that does not end is named with
# its state, killed, and fails its test at once.

load helpers

# A bats file of two tests, the first hanging on a background process.
# (Its tests are spelled with $t: bats would take a line that begins with
# the word itself for one of this file's.)
hanging_file() {
	local t=@test
	cat >"$BATS_TEST_TMPDIR/hang.bats" <<-EOF
	load $BATS_TEST_DIRNAME/helpers
	$t "hangs" {
		sleep 1000 3>&- &
		echo \$! >"$BATS_TEST_TMPDIR/sleeper"
		wait \$!
	}
	$t "runs after it" { true; }
	EOF
}

@test "a test that hangs fails after BATS_TEST_TIMEOUT, what it started is stopped, and the next test runs" {
	hanging_file
	t0=$(now_ms)
	run -1 env BATS_TEST_TIMEOUT=2 timeout -k 5 60 bats "$BATS_TEST_TMPDIR/hang.bats"
	t1=$(now_ms)
	echo "$output"
	assert_line --index 1 'not ok 1 hangs # timeout after 2s'
	assert_line 'ok 2 runs after it'
	[ $((t1 - t0)) -lt 30000 ]
	dead "$(cat "$BATS_TEST_TMPDIR/sleeper")"
}

@test "a test that kills bats' timer (job %1) fails in its teardown, and the run does not wait for the timer's sleep" {
	local t=@test
	cat >"$BATS_TEST_TMPDIR/timer.bats" <<-EOF
	load $BATS_TEST_DIRNAME/helpers
	$t "kills the timer" { kill %1; }
	$t "runs after it" { true; }
	EOF
	t0=$(now_ms)
	run -1 env BATS_TEST_TIMEOUT=20 timeout -k 5 60 bats "$BATS_TEST_TMPDIR/timer.bats"
	t1=$(now_ms)
	echo "$output"
	assert_line --index 1 'not ok 1 kills the timer'
	assert_line --partial "bats' timer (pid "
	assert_line 'ok 2 runs after it'
	[ $((t1 - t0)) -lt 15000 ]
}

@test "reap: a background process that does not end fails the test within the bound, named with its state" {
	sleeper() {
		sleep 1000 3>&- &
		echo "$!" >"$BATS_TEST_TMPDIR/sleeper"
		reap -t 1 "$!"
	}
	t0=$(now_ms)
	run -1 sleeper
	t1=$(now_ms)
	p=$(cat "$BATS_TEST_TMPDIR/sleeper")
	assert_output --regexp "^reap: still running after 1s: pid $p \(sleep 1000 \): State: S \(sleeping\) +PPid: [0-9]+ +TracerPid: 0 *$"
	[ $((t1 - t0)) -lt 10000 ]
	dead "$p"
}

@test "reap returns the exit status of what it waited for, as wait does" {
	(exit 3) &
	a=$!
	st=0
	reap "$a" || st=$?
	[ "$st" = 3 ]
	(exit 0) &
	a=$!
	(exit 5) &
	b=$!
	st=0
	reap "$a" "$b" || st=$?
	[ "$st" = 5 ]
}

# stick: an ASan build of redlock that exits while SIGCONT rains on it,
# until LeakSanitizer's exit check holds one for good: the SIGCONT cancels
# the SIGSTOP of the check's PTRACE_ATTACH, which then waits for a stop
# that never comes, while the process spins (state R, traced by its own
# child). Its pid in $BATS_TEST_TMPDIR/stuck, then reap -t 2 on it.
stick() {
	local i p k
	for i in $(seq 1 40); do
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1 \
		    "$RL" --version >/dev/null 3>&- &
		p=$!
		(while kill -CONT "$p" 2>/dev/null; do :; done) 3>&- &
		k=$!
		wait_for 5 dead "$p"
		kill "$k" 2>/dev/null
		wait "$k" 2>/dev/null
		if ! dead "$p"; then
			sleep 1	# still there a second after the rain
			echo "$p" >"$BATS_TEST_TMPDIR/stuck"
			reap -t 2 "$p"
		fi
		wait "$p"
	done
	return 42
}

@test "an ASan process held in LeakSanitizer's exit check by a SIGCONT: reap names it, traced by its own child, and kills it" {
	grep -qa LeakSanitizer "$RL" || skip "$RL is not built with LeakSanitizer"
	run stick
	[ "$status" != 42 ] || skip "no process stuck in 40 tries on this kernel"
	[ "$status" = 1 ]
	p=$(cat "$BATS_TEST_TMPDIR/stuck")
	echo "$output"
	assert_output --regexp "^reap: still running after 2s: pid $p \([^)]*redlock --version \): State: R \(running\) +PPid: [0-9]+ +TracerPid: [1-9][0-9]* *"
	dead "$p"
}
