#!/usr/bin/env bats
# The manual's scheduler examples, run as written: each block marked
# '.\" example: NAME' in man/redlock.1 is taken from the manual itself,
# checked by the tool that reads it (systemd-analyze, a YAML parser), and
# its redlock commands run against a real server, with the commands they
# lock replaced by stubs that record their runs.

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
	bg=()
	U="redis://127.0.0.1:$R_PORT/0"
	mkdir -p "$D/bin" "$D/work"
	ln -s "$RL" "$D/bin/redlock"
	# A stub: records NAME and fence, then holds its lock a moment.
	for s in sync-reports backup-db integration-tests deploy.sh report; do
		printf '#!/bin/sh\necho "%s $REDLOCK_NAME $REDLOCK_FENCE +$(date +%%s%%N)" >>"%s"\nsleep "${STUB_SLEEP:-0}"\necho "%s - $(date +%%s%%N)" >>"%s"\n' \
		    "$s" "$D/ran" "$s" "$D/ran" >"$D/bin/$s"
		chmod +x "$D/bin/$s"
	done
	cp "$D/bin/integration-tests" "$D/bin/deploy.sh" "$D/work/"
	export PATH="$D/bin:$PATH"
}
teardown() { stop_bg; stop_strays; }

MAN=$BATS_TEST_DIRNAME/../../man/redlock.1

# example NAME: the literal block of the manual's example NAME, with
# mdoc's escapes undone.
example() {
	awk -v n="$1" '
	    $0 == ".\\\" example: " n { on = 1; next }
	    on && /^\.Bd/ { next }
	    on && /^\.Ed/ { exit }
	    on { print }' "$MAN" | sed -e 's/\\e/\\/g' -e 's/\\&//g'
}
# Its commands pointed at the test's server and stubs.
local_paths() {
	sed -e "s|redis://redis.internal:6379/0|$U|g" \
	    -e "s|/usr/local/s\\{0,1\\}bin/|$D/bin/|g" \
	    -e "s|/usr/bin/redlock|$D/bin/redlock|g" -e "s|/app/|$D/bin/|g"
}
yaml2json() { python3 -c 'import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)'; }
# skewed N CMD: run CMD (a shell command line) as N hosts whose clocks
# differ, each a process of its own 0.5 s after the one before; their exit
# statuses in $D/rc, one a line, and their output in $D/out.N.
skewed() {
	local n=$1 i p=()
	shift
	: >"$D/rc"
	for ((i = 1; i <= n; i++)); do
		((i == 1)) || sleep 0.5
		{
			rc=0
			sh -c "$1" </dev/null >"$D/out.$i" 2>&1 3>&- || rc=$?
			echo "$rc" >>"$D/rc"
		} &
		p+=($!)
	done
	for i in "${p[@]}"; do reap "$i"; done
}
# How many runs of STUB overlapped at most.
most() {
	awk -v s="$1" '$1 == s && $2 == "-" { print $3, -1 }
	    $1 == s && $2 != "-" { print substr($4, 2), 1 }' "$D/ran" |
	    sort -n | awk '{ n += $2; if (n > m) m = n } END { print m + 0 }'
}

@test "the crontab: valid schedules; a job runs once across hosts started apart, and is skipped silently while another host holds its lock" {
	example crontab >"$D/crontab"
	[ -s "$D/crontab" ]
	# Every job line: five schedule fields, then the command.
	run grep -v -e '^#' -e '^[A-Z_]*=' -e '^$' "$D/crontab"
	[ "${#lines[@]}" = 2 ]
	for l in "${lines[@]}"; do
		[[ $l =~ ^([-*/0-9,]+[[:space:]]+){5}redlock\ exec ]]
	done
	# As cron runs them: the environment lines, then each command with sh.
	env=$(grep '^[A-Z_]*=' "$D/crontab" | local_paths)
	grep -v -e '^#' -e '^[A-Z_]*=' -e '^$' "$D/crontab" | local_paths |
	    sed -E 's/^([^[:space:]]+[[:space:]]+){5}//' >"$D/jobs"
	# Three hosts, their clocks 0.5 s apart, start each job of 0.2 s: it
	# runs once; the later hosts skip it, printing nothing (cron mails
	# nothing), exit 75.
	while read -r job; do
		STUB_SLEEP=0.2 skewed 3 "env $env $job"
		[ "$(sort -n "$D/rc" | tr '\n' ' ')" = "0 75 75 " ]
		[ "$(cat "$D/out.1" "$D/out.2" "$D/out.3")" = '' ]
	done <"$D/jobs"
	[ "$(grep -c '^sync-reports sync-reports ' "$D/ran")" = 1 ]
	[ "$(grep -c '^backup-db backup ' "$D/ran")" = 1 ]
	# The run is over, its lock still held (--min-hold) for the others.
	run -0 rl status backup
	[[ $output == *"finished, held until "*"(--min-hold)"* ]]
	pttl=$(rcli pttl backup)
	[ "$pttl" -gt $((3600000 - 60000)) ]
	[ "$pttl" -le 3600000 ]
	# Another host holds the backup: skipped, nothing printed, exit 75.
	rcli flushall >/dev/null
	tok=$(rl lock -t 60s backup)
	run -75 env $env sh -c "$(sed -n 2p "$D/jobs")"
	assert_output ''
	[ "$(grep -c '^backup-db backup ' "$D/ran")" = 1 ]
}

@test "the systemd service and timer: systemd-analyze verifies them; the service runs once across hosts started apart, and a skipped run is a success" {
	command -v systemd-analyze >/dev/null || skip "systemd-analyze is not installed"
	example systemd-service | local_paths >"$D/backup.service"
	example systemd-timer >"$D/backup.timer"
	head -n 1 "$D/backup.service" | grep -q '^# /etc/systemd/system/backup.service$'
	head -n 1 "$D/backup.timer" | grep -q '^# /etc/systemd/system/backup.timer$'
	run -0 systemd-analyze verify "$D/backup.service" "$D/backup.timer"
	assert_output ''
	# ExecStart with the service's Environment, as systemd starts it.
	env=$(sed -n 's/^Environment=//p' "$D/backup.service")
	cmd=$(sed -n 's/^ExecStart=//p' "$D/backup.service")
	# Three hosts' timers fire 0.5 s apart: one backup of 0.2 s, and each
	# service succeeds, quietly.
	STUB_SLEEP=0.2 skewed 3 "env $env $cmd"
	[ "$(tr '\n' ' ' <"$D/rc")" = "0 0 0 " ]
	[ "$(cat "$D/out.1" "$D/out.2" "$D/out.3")" = '' ]
	[ "$(grep -c '^backup-db backup ' "$D/ran")" = 1 ]
	run -0 rl status backup
	[[ $output == *"finished, held until "*"(--min-hold)"* ]]
	# systemctl stop: SIGTERM to redlock (KillMode=mixed), passed on to
	# the backup; the lock stays held to the end of its hour.
	rl unlock --force backup
	printf '#!/bin/sh\ntrap "echo got-TERM >>%s; exit 143" TERM\nsleep 30 & wait\n' "$D/ran" >"$D/bin/backup-db"
	env $env $cmd 3>&- &
	p=$!
	wait_for 5 eval '[ "$(rcli exists backup)" = 1 ]'
	sleep 0.2
	kill -TERM "$p"
	rc=0
	reap "$p" || rc=$?
	[ "$rc" = 143 ]
	grep -q got-TERM "$D/ran"
	pttl=$(rcli pttl backup)
	[ "$pttl" -gt $((3600000 - 60000)) ]
	run -0 rl status backup
	[[ $output == *"finished, held until "*"(--min-hold)"* ]]
}

@test "the GitHub Actions workflow: valid YAML; at most three integration runs at once, deploys one at a time" {
	example github-actions | yaml2json >"$D/gh.json"
	# (YAML 1.1 parsers read the key "on" as true; GitHub reads "on".)
	jq -e '(.on // .["true"]) == "push" and .jobs.deploy.needs == "integration"' "$D/gh.json"
	[ "$(jq -r '.jobs.integration.env.REDLOCK_URL' "$D/gh.json")" = '${{ secrets.REDLOCK_URL }}' ]
	t=$(jq -r '.jobs.integration.steps[] | select(.run) | .run' "$D/gh.json")
	d=$(jq -r '.jobs.deploy.steps[] | select(.run) | .run' "$D/gh.json")
	[[ $t == "redlock exec --limit 3 "* ]] && [[ $d == "redlock exec --fair "* ]]
	cd "$D/work"
	for i in 1 2 3 4 5; do
		STUB_SLEEP=0.4 REDLOCK_URL=$U bash -c "$t" 2>/dev/null 3>&- &
		bg+=($!)
	done
	for i in 1 2; do
		STUB_SLEEP=0.2 REDLOCK_URL=$U bash -c "$d" 2>/dev/null 3>&- &
		bg+=($!)
	done
	for p in "${bg[@]}"; do reap "$p"; done
	bg=()
	[ "$(grep -c '^integration-tests staging-db ' "$D/ran")" = 5 ]
	[ "$(grep -c '^deploy.sh deploy-prod ' "$D/ran")" = 2 ]
	echo "integration runs at once: $(most integration-tests), deploys: $(most deploy.sh)" >&3
	[ "$(most integration-tests)" -le 3 ]
	[ "$(most deploy.sh)" = 1 ]
}

@test "the GitLab CI jobs: valid YAML, and their scripts run as the workflow's do" {
	example gitlab-ci | yaml2json >"$D/gl.json"
	jq -e '.stages == ["test", "deploy"] and .integration.stage == "test"
	    and .deploy.stage == "deploy"' "$D/gl.json"
	cd "$D/work"
	t=$(jq -r '.integration.script[0]' "$D/gl.json")
	d=$(jq -r '.deploy.script[0]' "$D/gl.json")
	run -0 env REDLOCK_URL="$U" bash -c "$t"
	run -0 env REDLOCK_URL="$U" bash -c "$d"
	[ "$(grep -c '^integration-tests staging-db ' "$D/ran")" = 1 ]
	[ "$(grep -c '^deploy.sh deploy-prod ' "$D/ran")" = 1 ]
	# Behind another pipeline's deploy, the job log says whom it waits for.
	tok=$(rl lock -t 60s deploy-prod)
	run -75 --separate-stderr env REDLOCK_URL="$U" bash -c "${d/-w 1h/-w 1s}"
	[[ $stderr == "redlock: "20[0-9][0-9]-*"Z waiting for deploy-prod (1st of 1): held by $(hostname) pid "* ]]
}

@test "the Kubernetes CronJob: valid YAML; its pods in three clusters, started apart, run the report once, and all succeed" {
	example kubernetes | yaml2json >"$D/k.json"
	jq -e '.kind == "CronJob" and .spec.concurrencyPolicy == "Allow"
	    and .spec.jobTemplate.spec.template.spec.restartPolicy == "Never"' "$D/k.json"
	jq -e '.spec.jobTemplate.spec.template.spec.containers[0].env[0]
	    == {"name": "REDLOCK_URL", "valueFrom": {"secretKeyRef": {"name": "redlock", "key": "url"}}}' "$D/k.json"
	# The container's command, word by word, as the kubelet runs it.
	mapfile -t cmd < <(jq -r '.spec.jobTemplate.spec.template.spec.containers[0].command[]' "$D/k.json" | local_paths)
	[ "${cmd[0]}" = redlock ]
	# Pods of three clusters start 0.5 s apart; the report takes 0.2 s.
	STUB_SLEEP=0.2 REDLOCK_URL=$U skewed 3 "$(printf '%q ' "${cmd[@]}")"
	[ "$(tr '\n' ' ' <"$D/rc")" = "0 0 0 " ]
	[ "$(grep -c '^report report ' "$D/ran")" = 1 ]
}

# job SCRIPT...: the lines of one CI job's script, as a runner runs them
# (bash, stopping at the first that fails), in a process of its own.
job() { REDLOCK_URL=$U bash -e -c "$(printf '%s\n' "$@")" 3>&-; }

@test "the GitLab CI pipeline that spans jobs: valid YAML; staging is held from the first job to the last, and freed when its lease ends after a cancel" {
	example gitlab-ci-span | yaml2json >"$D/gl.json"
	jq -e '.stages == ["lock", "test", "deploy", "release"]
	    and .["take-staging"].artifacts.paths == ["staging.token"]
	    and .["release-staging"].when == "always"' "$D/gl.json"
	cd "$D/work"
	mapfile -t take < <(jq -r '.["take-staging"].script[]' "$D/gl.json")
	mapfile -t e2e < <(jq -r '.e2e.script[]' "$D/gl.json")
	mapfile -t deploy < <(jq -r '.["deploy-staging"].script[]' "$D/gl.json")
	mapfile -t release < <(jq -r '.["release-staging"].script[]' "$D/gl.json")
	# The first job's lease shortened to 1 s: the next job's extension
	# keeps staging past it.
	job "${take[@]/-t 30m/-t 1s}"
	tok=$(cat staging.token)
	assert_equal "$(rcli hget staging "$tok")" 1
	job "${e2e[@]}"
	nap 1.2
	assert_equal "$(rcli hget staging "$tok")" 1
	[ "$(rcli pttl staging)" -gt 1700000 ]
	job "${deploy[@]}"
	assert_equal "$(rcli hget staging "$tok")" 1
	[ "$(grep -c '^integration-tests .*+' "$D/ran")" = 1 ]
	[ "$(grep -c '^deploy.sh .*+' "$D/ran")" = 1 ]
	job "${release[@]}"
	key_gone staging
	# Cancelled after e2e (its extension shortened to 1 s): no release
	# job runs, and staging is free when the lease ends.
	job "${take[@]/-t 30m/-t 1s}"
	job "${e2e[@]/--extend 30m/--extend 1s}"
	wait_for 5 key_gone staging
	run -0 job "${take[@]/-w 1h/-n}"
}

@test "the GitHub Actions workflow that spans jobs: valid YAML; the token passes as an output from the first job to the last" {
	example github-actions-span | yaml2json >"$D/gh.json"
	jq -e '.jobs.e2e.needs == "take" and .jobs.release.needs == ["take", "e2e", "deploy"]
	    and (.jobs.release.if | startswith("always()"))
	    and .jobs.take.outputs.token == "${{ steps.lock.outputs.token }}"' "$D/gh.json"
	for j in e2e deploy release; do
		[ "$(jq -r ".jobs.$j.env.TOKEN" "$D/gh.json")" = '${{ needs.take.outputs.token }}' ]
	done
	cd "$D/work"
	steps() { jq -r ".jobs.$1.steps[] | select(.run) | .run" "$D/gh.json"; }
	# The take job's output, as GitHub reads $GITHUB_OUTPUT.
	GITHUB_OUTPUT=$D/take.out job "$(steps take | sed 's/-t 30m/-t 1s/')"
	TOKEN=$(sed -n 's/^token=//p' "$D/take.out")
	export TOKEN
	assert_equal "$(rcli hget staging "$TOKEN")" 1
	job "$(steps e2e)"
	nap 1.2
	assert_equal "$(rcli hget staging "$TOKEN")" 1
	job "$(steps deploy)"
	[ "$(grep -c '^deploy.sh .*+' "$D/ran")" = 1 ]
	job "$(steps release)"
	key_gone staging
}
