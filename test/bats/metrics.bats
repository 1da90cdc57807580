#!/usr/bin/env bats
# exec --metrics-file: node_exporter's textfile format, one file for several
# names, read-modify-write under an flock of FILE.lock, written through a
# temporary file renamed over FILE. Each file is checked by promtext.py, a
# strict parser of the format (Debian's promtool comes with the whole of
# Prometheus).

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
	M=$D/redlock.prom
}

# The samples of FILE (default $M), parsed strictly: fails on any error.
prom() { python3 "$BATS_TEST_DIRNAME/promtext.py" "${1:-$M}"; }
# value METRIC NAME: METRIC's value for the label name=NAME (a plain name).
value() {
	prom | awk -F'\t' -v m="$1" -v l="{\"name\": \"$2\"}" \
	    '$1 == m && $2 == l { print $3 }'
}
# le A B: A <= B, as numbers.
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; }
now_s() { echo "${EPOCHREALTIME}"; }

@test "a run that succeeds: every series of its name, in a file that parses, mode 0644" {
	t0=$(now_s)
	run -0 --separate-stderr bash -c 'umask 077; "$@"' _ "$RL" \
	    -u "redis://127.0.0.1:$R_PORT" exec --metrics-file "$M" job -- sleep 0.3
	t1=$(now_s)
	assert_equal "$stderr" ""
	prom
	assert_equal "$(value redlock_last_exit_status job)" 0.0
	assert_equal "$(value redlock_runs_total job)" 1.0
	assert_equal "$(value redlock_busy_total job)" 0.0
	assert_equal "$(value redlock_lost_total job)" 0.0
	start=$(value redlock_last_run_start_timestamp_seconds job)
	end=$(value redlock_last_run_end_timestamp_seconds job)
	# Milliseconds: the file's times are cut to them.
	le "$(awk -v t="$t0" 'BEGIN { printf "%.3f\n", t - 0.001 }')" "$start"
	le "$start" "$end"
	le "$end" "$t1"
	le 0.3 "$(value redlock_hold_seconds job)"
	le 0 "$(value redlock_wait_seconds job)"
	le "$(value redlock_wait_seconds job)" 5
	# Eight families, each with one HELP and one TYPE.
	assert_equal "$(grep -c '^# TYPE redlock_' "$M")" 8
	assert_equal "$(grep -c '^# HELP redlock_' "$M")" 8
	grep -qx '# TYPE redlock_runs_total counter' "$M"
	grep -qx '# TYPE redlock_last_exit_status gauge' "$M"
	assert_equal "$(stat -c %a "$M")" 644
	# Nothing else is left beside it but the lock file.
	assert_equal "$(ls "$D" | grep redlock | tr '\n' ' ')" "redlock.prom redlock.prom.lock "
}

@test "a failing run (exit 3): its status is recorded, runs are counted, the exit status is COMMAND's" {
	run -0 rl exec --metrics-file "$M" job -- true
	run -3 --separate-stderr rl exec --metrics-file "$M" job -- sh -c 'exit 3'
	assert_equal "$stderr" ""
	assert_equal "$(value redlock_last_exit_status job)" 3.0
	assert_equal "$(value redlock_runs_total job)" 2.0
	assert_equal "$(value redlock_busy_total job)" 0.0
}

@test "the wait for a held lock is recorded" {
	rl lock -t 1s job >/dev/null
	run -0 rl exec -q -w 10s --metrics-file "$M" job -- true
	le 0.5 "$(value redlock_wait_seconds job)"
	le "$(value redlock_wait_seconds job)" 10
}

@test "a busy skip (-n, -w running out, -E 0) counts in busy_total and leaves the last run's series alone" {
	run -0 rl exec --metrics-file "$M" job -- true
	start=$(value redlock_last_run_start_timestamp_seconds job)
	rl lock -t 20s job >/dev/null
	run -75 --separate-stderr rl exec -n --metrics-file "$M" job -- touch "$D/ran"
	[[ $stderr == "redlock: job is busy: "* ]]
	assert_equal "$(value redlock_busy_total job)" 1.0
	run -75 rl exec -q -w 200ms --metrics-file "$M" job -- touch "$D/ran"
	assert_equal "$(value redlock_busy_total job)" 2.0
	run -0 rl exec -q -n -E 0 --metrics-file "$M" job -- touch "$D/ran"
	assert_equal "$(value redlock_busy_total job)" 3.0
	[ ! -e "$D/ran" ]
	assert_equal "$(value redlock_last_exit_status job)" 0.0
	assert_equal "$(value redlock_runs_total job)" 1.0
	assert_equal "$(value redlock_last_run_start_timestamp_seconds job)" "$start"
}

@test "a name only ever skipped as busy has its counters and no last run" {
	rl lock -t 20s other >/dev/null
	run -75 rl exec -q -n --metrics-file "$M" other -- true
	prom
	assert_equal "$(value redlock_busy_total other)" 1.0
	assert_equal "$(value redlock_runs_total other)" 0.0
	assert_equal "$(value redlock_lost_total other)" 0.0
	assert_equal "$(value redlock_last_exit_status other)" ""
}

@test "a lost lease (exit 79) counts in lost_total, with status 79" {
	# COMMAND deletes its own lock: the next renewal finds it gone.
	run -79 --separate-stderr rl exec -t 600ms --metrics-file "$M" job -- \
	    sh -c 'redis-cli -p "$0" del job >/dev/null; exec sleep 10' "$R_PORT"
	[[ $stderr == "redlock: lost the lock on job while COMMAND ran"* ]]
	assert_equal "$(value redlock_lost_total job)" 1.0
	assert_equal "$(value redlock_last_exit_status job)" 79.0
	assert_equal "$(value redlock_runs_total job)" 1.0
}

@test "two names in one file: both kept, each family once, counters of each its own" {
	run -0 rl exec --metrics-file "$M" a -- true
	run -3 rl exec --metrics-file "$M" b -- sh -c 'exit 3'
	run -0 rl exec --metrics-file "$M" a -- true
	prom
	assert_equal "$(value redlock_runs_total a)" 2.0
	assert_equal "$(value redlock_runs_total b)" 1.0
	assert_equal "$(value redlock_last_exit_status a)" 0.0
	assert_equal "$(value redlock_last_exit_status b)" 3.0
	assert_equal "$(grep -c '^# TYPE redlock_runs_total ' "$M")" 1
	assert_equal "$(prom | wc -l)" 16
}

@test "a name with quotes, backslashes, a newline and a byte that is not UTF-8 is escaped; it reads back as itself" {
	name=$'we"i\\rd\nname'
	bad=$'x\xffy'
	run -0 rl exec --metrics-file "$M" "$name" -- true
	run -0 rl exec --metrics-file "$M" "$name" -- true
	run -0 rl exec --metrics-file "$M" "$bad" -- true
	run -0 prom
	assert_line "redlock_runs_total	{\"name\": \"we\\\"i\\\\rd\\nname\"}	2.0"
	assert_line $'redlock_runs_total\t{"name": "x\xef\xbf\xbdy"}\t1.0'
	grep -qF 'redlock_runs_total{name="we\"i\\rd\nname"} 2' "$M"
}

@test "ten execs at once on ten names, one file: all ten there, the file parses" {
	pids=()
	for i in $(seq 1 10); do
		rl exec --metrics-file "$M" "n$i" -- sleep 0.2 3>&- &
		pids+=($!)
	done
	for p in "${pids[@]}"; do reap -t 120 "$p"; done
	prom
	for i in $(seq 1 10); do
		assert_equal "$(value redlock_runs_total "n$i")" 1.0
	done
	assert_equal "$(value redlock_runs_total n1 | wc -l)" 1
	assert_equal "$(prom | grep -c '^redlock_runs_total	')" 10
}

@test "FILE is replaced whole: a reader of the old FILE reads it whole, and concurrent readers never see a part" {
	run -0 rl exec --metrics-file "$M" a -- true
	cp "$M" "$D/before"
	ino=$(stat -c %i "$M")
	exec 5<"$M"
	run -0 rl exec --metrics-file "$M" b -- true
	# The old inode, still open, has the old file whole: FILE was not
	# rewritten in place.
	cat <&5 >"$D/old"
	exec 5<&-
	cmp "$D/before" "$D/old"
	[ "$(stat -c %i "$M")" != "$ino" ]
	grep -q 'name="b"' "$M"
	# Many names make a file of many writes; readers race the writers.
	for i in $(seq 1 100); do
		for f in runs busy lost; do
			printf 'redlock_%s_total{name="pad%03d"} 1\n' "$f" "$i"
		done
	done >>"$M"
	run -0 rl exec --metrics-file "$M" a -- true
	[ "$(stat -c %s "$M")" -gt 10000 ]
	(for i in $(seq 1 30); do
		"$RL" -u "redis://127.0.0.1:$R_PORT" exec --metrics-file "$M" "w$((i % 3))" -- true
	done; touch "$D/writers-done") 3>&- &
	wpid=$!
	# Each read, one open of FILE by bash itself: all of it, from the
	# first HELP to the last family's last series.
	last='^redlock_lost_total\{name="(pad100|w[0-2])"\} [0-9]+$'
	n=0
	while [ ! -e "$D/writers-done" ] && [ "$n" -lt 20000 ]; do
		mapfile -t l <"$M"
		[ "${l[0]}" = "# HELP redlock_last_exit_status Exit status of the last redlock exec of the lock that was not skipped as busy." ]
		[[ ${l[-1]} =~ $last ]]
		[ "${#l[@]}" -ge 330 ]
		n=$((n + 1))
	done
	reap -t 120 "$wpid"
	echo "# $n reads, each of a whole file" >&3
	[ "$n" -gt 0 ]
	prom >/dev/null
	assert_equal "$(value redlock_runs_total w0)" 10.0
	assert_equal "$(ls "$D" | grep -c '^redlock\.prom\.')" 1
}

@test "bad input: lock refuses --metrics-file; an empty FILE, a directory, a missing directory are usage errors before anything is acquired" {
	run -64 --separate-stderr rl lock --metrics-file "$M" job
	assert_equal "$stderr" "redlock: --metrics-file is for exec: lock ends before the hold does, with no run to record; usage: redlock lock [OPTIONS] NAME (see redlock lock --help)"
	use="usage: redlock exec [OPTIONS] NAME -- COMMAND [ARG...] (see redlock exec --help)"
	run -64 --separate-stderr rl exec --metrics-file '' job -- touch "$D/ran"
	assert_equal "$stderr" "redlock: --metrics-file is empty: give a FILE in node_exporter's textfile directory; $use"
	run -64 --separate-stderr rl exec --metrics-file "$D" job -- touch "$D/ran"
	assert_equal "$stderr" "redlock: --metrics-file: '$D' is a directory: give a FILE in it, such as redlock.prom; $use"
	run -64 --separate-stderr rl exec --metrics-file "$D/no/such/m.prom" job -- touch "$D/ran"
	assert_equal "$stderr" "redlock: --metrics-file: the directory of '$D/no/such/m.prom' does not exist: create it, or give a FILE in one that does; $use"
	[ ! -e "$D/ran" ]
	key_gone job
	run -64 rl exec --metrics-file job -- true
	# A FILE in the current directory is fine.
	cd "$D"
	run -0 rl exec --metrics-file here.prom job -- true
	prom "$D/here.prom"
}

@test "a metrics file that cannot be written is one warning line; the exit status is the run's" {
	mkdir "$M.lock"
	run -3 --separate-stderr rl exec --metrics-file "$M" job -- sh -c 'exit 3'
	assert_equal "$stderr" "redlock: --metrics-file $M: cannot open its lock file: Is a directory; the metrics of job were not written (the exit status is not changed)"
	run -0 --separate-stderr rl exec --metrics-file "$M" job -- true
	assert_equal "${#stderr_lines[@]}" 1
	rl lock -t 20s job >/dev/null
	run -75 --separate-stderr rl exec -q -n --metrics-file "$M" job -- true
	assert_equal "${#stderr_lines[@]}" 1
	[ ! -e "$M" ]
}
