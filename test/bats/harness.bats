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

# A tree that test/suites.sh runs as it runs the project's: two bats
# files, one of which never ends (its test leaves a process in a session
# of its own holding bats' output, so bats waits for it at the end of the
# file, where no BATS_TEST_TIMEOUT reaches), and a torture (run.sh and
# edges.sh) that passes.
suite_tree() {
	local t=@test
	mkdir -p "$1/test/bats" "$1/test/torture"
	cat >"$1/test/bats/hang.bats" <<-EOF
	$t "leaves a process behind" {
		( setsid sleep 1000 & echo \$! >"$1/left" )
	}
	EOF
	cat >"$1/test/bats/quick.bats" <<-EOF
	$t "passes" { true; }
	EOF
	printf '#!/bin/sh\necho the torture ran\n' >"$1/test/torture/run.sh"
	printf '#!/bin/sh\necho the edges ran\n' >"$1/test/torture/edges.sh"
	chmod +x "$1/test/torture/run.sh" "$1/test/torture/edges.sh"
}

# outer_path: $PATH without bats' own directory, which bats puts first
# (its bats there needs a function that only the bats on $PATH exports).
outer_path() { tr : '\n' <<<"$PATH" | grep -v bats-core | paste -sd:; }

@test "suites.sh: a bats file that never ends fails after SUITE_JOB_LIMIT, says what was running, and what it left behind is killed" {
	local d=$BATS_TEST_TMPDIR/tree suites=$BATS_TEST_DIRNAME/../suites.sh
	suite_tree "$d"
	cd "$d"
	start=$(date +%s)
	run -1 env -i PATH="$(outer_path)" SUITE_SERVERS=redis-server SUITE_JOB_LIMIT=3 SUITE_JOBS=2 \
	    sh "$suites" /bin/true logs 3>&-
	took=$(($(date +%s) - start))
	# bats is run as make test runs it, outside this one (env -i).
	# 3 s, then 10 s between SIGTERM and SIGKILL: well within 60.
	[ "$took" -lt 60 ]
	assert_line --regexp '^== hang against redis-server: TIMED OUT in [0-9]+ s$'
	assert_line --regexp '^== quick against redis-server: ok in [0-9]+ s$'
	assert_line --regexp '^== torture against redis-server: ok in [0-9]+ s$'
	assert_line '== timed out after 3 s, still running:'
	assert_line '== left running after the job, killed:'
	assert_line --partial 'sleep 1000'
	assert_line '== FAILED: hang against redis-server'
	refute_line '== FAILED: quick against redis-server'
	assert_line 'the torture ran'
	dead "$(cat "$d/left")"
}

@test "suites.sh: a job not begun by SUITE_DEADLINE is failed as not run, and the run ends" {
	local d=$BATS_TEST_TMPDIR/tree suites=$BATS_TEST_DIRNAME/../suites.sh
	suite_tree "$d"
	rm "$d/test/bats/hang.bats"
	cd "$d"
	run -1 env -i PATH="$(outer_path)" SUITE_SERVERS=redis-server SUITE_DEADLINE=0 \
	    sh "$suites" /bin/true logs 3>&-
	assert_line "== not run: the suite's 0 s had gone by"
	assert_line '== FAILED: quick against redis-server'
	assert_line 'the torture ran'
}
