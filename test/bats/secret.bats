#!/usr/bin/env bats
# Secrets: masked in the stored command line, --label, -u passwords
# overwritten for ps (issue 31, items 5 and 6).

load helpers
bats_require_minimum_version 1.5.0

SECRET=glpat-SECRET123

setup_file() {
	start_redis R
	# DUMP below: strings as they are, not LZF-compressed.
	redis-cli -p "$R_PORT" config set rdbcompression no >/dev/null
}
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
	# The issue's deploy.sh: says it started, runs until told to stop.
	printf '#!/bin/sh\ntouch "%s/started"\nfor i in $(seq 1 300); do\n\t[ -e "%s/stop" ] && exit 0\n\tsleep 0.1\ndone\n' \
	    "$D" "$D" >"$D/deploy.sh"
	chmod +x "$D/deploy.sh"
	# show ARG...: prints what its own exec stored as its command.
	printf '#!/bin/sh\n"%s" status --json "$REDLOCK_NAME" | jq -r .cmd\n' \
	    "$RL" >"$D/show"
	chmod +x "$D/show"
}
teardown() {
	local p
	# The background execs end on their own: deploy.sh stops.
	touch "$D/stop"
	for p in ${bg-}; do
		wait_for 20 dead "$p" || :
		wait "$p" 2>/dev/null || :
	done
	stop_strays
}

# No key in Redis holds $SECRET: not its name, nor its DUMP, nor what
# its type's reading command returns.
no_secret_in_redis() {
	local k all
	all=$(rcli --scan)
	for k in $(rcli --scan); do
		all+=$(rcli --no-raw dump "$k")
		case $(rcli type "$k") in
		hash) all+=$(rcli hgetall "$k") ;;
		string) all+=$(rcli get "$k") ;;
		list) all+=$(rcli lrange "$k" 0 -1) ;;
		zset) all+=$(rcli zrange "$k" 0 -1) ;;
		stream) all+=$(rcli xrange "$k" - +) ;;
		esac
	done
	[[ $all == *redlock_holder* ]]
	[[ $all == *redlock_log* ]]
	[[ $all != *"$SECRET"* ]]
}

# Start the issue's holder (ARGS: lock options) and a fair waiter with the
# same secret, then look at every output that names them: none has the
# secret; $shown collects them all.
look_at_everything() {
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec "$@" --fair deploy-prod -- \
	    "$D/deploy.sh" --token="$SECRET" 3>&- &
	bg=$!
	wait_for 10 test -e "$D/started"
	"$RL" -u "redis://127.0.0.1:$R_PORT" exec "$@" --fair -w 20s \
	    deploy-prod -- "$D/deploy.sh" --token "$SECRET" 2>"$D/waiter" 3>&- &
	bg+=" $!"
	wait_for 10 test -s "$D/waiter"
	wait_for 10 test "$(rcli llen 'redisson_lock_queue:{deploy-prod}')" = 1
	run -75 --separate-stderr rl exec -w 300ms deploy-prod -- true
	shown=$stderr
	run -75 --separate-stderr rl exec -n deploy-prod -- true
	shown+=$stderr
	shown+=$(cat "$D/waiter")
	run -0 rl status deploy-prod
	shown+=$output
	run -0 rl status --json deploy-prod
	shown+=$output
	run -0 rl status
	shown+=$output
	run -0 rl status --json
	shown+=$output
	run -0 rl queue deploy-prod
	shown+=$output
	run -0 rl queue --json deploy-prod
	shown+=$output
	# The history: acquisitions, the busy skip, the waiter that gave up.
	run -0 rl log deploy-prod
	[[ $output == *" gave_up: "* ]]
	[[ $output == *" busy: "* ]]
	shown+=$output
	run -0 rl log --json deploy-prod
	shown+=$output
	no_secret_in_redis
	[[ $shown != *"$SECRET"* ]]
	[[ $shown != *SECRET* ]]
}

@test "issue 31's leak: a --token of COMMAND is in no output and no key" {
	look_at_everything
	[[ $shown == *"waiting for deploy-prod: held by "*"deploy.sh --token=***)"* ]]
	run -0 rl status --json deploy-prod
	assert_equal "$(jq -r .cmd <<<"$output")" "$D/deploy.sh --token=***"
	run -0 rl queue --json deploy-prod
	[[ $output == *"deploy.sh --token ***"* ]]
}

@test "--label is stored and shown instead of the command line" {
	look_at_everything --label 'deploy prod, pipeline 12'
	[[ $shown == *"waiting for deploy-prod: held by "*"(deploy prod, pipeline 12)"* ]]
	[[ $shown != *deploy.sh* ]]
	run -0 rl status --json deploy-prod
	assert_equal "$(jq -r .cmd <<<"$output")" "deploy prod, pipeline 12"
	run -0 rl status deploy-prod
	[[ $output == *"deploy prod, pipeline 12"* ]]
}

@test "REDLOCK_LABEL is the label when --label is not given" {
	REDLOCK_LABEL='nightly backup' look_at_everything
	run -0 rl status --json deploy-prod
	assert_equal "$(jq -r .cmd <<<"$output")" "nightly backup"
	REDLOCK_LABEL=env run -0 rl exec --label opt x -- "$D/show"
	assert_output opt
	REDLOCK_LABEL= run -0 rl exec x -- "$D/show" a
	assert_output "$D/show a"
}

@test "lock: --label, and its caller's command line masked" {
	run -0 rl lock --label 'cron: report' a
	run -0 rl status --json a
	assert_equal "$(jq -r .cmd <<<"$output")" "cron: report"
	run -0 sh -c '"$0" -u "redis://127.0.0.1:$1" lock b >/dev/null; true' \
	    "$RL" "$R_PORT" --password "$SECRET" "PGPASSWORD=$SECRET"
	run -0 rl status --json b
	[[ $(jq -r .cmd <<<"$output") == *' --password *** PGPASSWORD=***' ]]
	no_secret_in_redis
}

@test "--label: empty is refused, long is cut with a marker, control characters escaped" {
	run -64 --separate-stderr rl exec --label '' x -- true
	assert_equal "$stderr" "redlock: --label is empty: give a text, or leave --label out to show the command line; usage: redlock exec [OPTIONS] NAME -- COMMAND [ARG...] (see redlock exec --help)"
	run -64 --separate-stderr rl lock --label= x
	[[ $stderr == "redlock: --label is empty"* ]]
	key_gone x
	long=$(printf 'a%.0s' $(seq 1 300))
	run -0 rl exec --label "$long" x -- "$D/show"
	assert_equal "${#output}" 256
	assert_output "$(printf 'a%.0s' $(seq 1 253))..."
	# Not cut inside a UTF-8 character: 126 two-byte ones, then ...
	long=$(printf '\303\251%.0s' $(seq 1 200))
	run -0 rl exec --label "$long" x -- "$D/show"
	assert_output "$(printf '\303\251%.0s' $(seq 1 126))..."
	run -0 rl exec --label 256 x -- "$D/show"
	assert_output 256
	tok=$(rl lock --label $'job\t1\033[2J' y)
	run -0 rl status y
	[[ $output == *'job\x091\x1b[2J'* ]]
	run -0 rl unlock --owner "$tok" y
}

# mask EXPECTED ARG...: exec's stored command line for "show ARG...".
mask() {
	local want=$1
	shift
	run -0 rl exec m -- "$D/show" "$@"
	assert_output "$D/show $want"
}

@test "masking: options whose name suggests a secret, as --x=V and --x V" {
	mask '--token=***' --token=abc
	mask '--token ***' --token abc
	mask '--token *** next' --token 'two words' next
	mask '--PASSWORD=*** --Passwd *** --passphrase=***' --PASSWORD=abc \
	    --Passwd abc --passphrase=abc
	mask '--api-key=*** --secret-file *** --client_secret=***' \
	    --api-key=abc --secret-file abc --client_secret=abc
	mask '-token *** -Djavax.net.ssl.keyStorePassword=***' -token abc \
	    -Djavax.net.ssl.keyStorePassword=abc
	mask '--oauth2-bearer *** --credentials=***' --oauth2-bearer abc \
	    --credentials=abc
	mask '--user=me --file=a.txt -v --verbose name' --user=me \
	    --file=a.txt -v --verbose name
}

@test "masking: NAME=VALUE words, header words and URLs" {
	mask 'GITHUB_TOKEN=*** db.password=*** MYSQL_PWD=*** AWS_SECRET_ACCESS_KEY=***' \
	    GITHUB_TOKEN=abc db.password=abc MYSQL_PWD=abc AWS_SECRET_ACCESS_KEY=abc
	mask 'mode=fast x=1' mode=fast x=1
	mask "-H 'Authorization: ***' -H PRIVATE-TOKEN:*** -H X-Api-Key: ***" \
	    -H 'Authorization: Bearer abc' -H 'PRIVATE-TOKEN:abc' \
	    -H X-Api-Key: abc
	mask "-H 'Accept: text/plain'" -H 'Accept: text/plain'
	mask "redis://***@host:6379/0 --url=https://***@h/x 'https://h/x?access_token=***'" \
	    redis://user:pw@host:6379/0 --url=https://u:p@h/x \
	    'https://h/x?access_token=abc'
	mask 'DATABASE_URL=postgres://***@db/app postgres://***@db' \
	    DATABASE_URL=postgres://me:abc@db/app 'postgres://me:a@b@db'
	mask 'https://example.com/a@b redis://h' https://example.com/a@b redis://h
}

@test "masking: -p of mysql-style tools, sshpass, redis-cli -a, curl -u" {
	mask 'mysql -uroot -p*** db' mysql -uroot -pabc db
	mask 'mysql -p db' mysql -p db
	mask '/usr/bin/mysqldump -p*** db' /usr/bin/mysqldump -pabc db
	mask 'mariadb-admin -p*** status' mariadb-admin -pabc status
	mask 'ssh -p2222 host' ssh -p2222 host
	mask 'mkdir -p dir' mkdir -p dir
	mask 'sshpass -p *** ssh h' sshpass -p abc ssh h
	mask 'sshpass -p*** ssh h' sshpass -pabc ssh h
	mask 'redis-cli -a *** ping' redis-cli -a abc ping
	mask 'curl -u *** --user=*** --user *** https://h' curl -u me:abc \
	    --user=me:abc --user me:abc https://h
}

@test "masking: the blank-separated words of a shell script (sh -c)" {
	mask "sh -c 'mysql -p*** db; deploy --token *** x'" \
	    sh -c 'mysql -pabc db; deploy --token abc x'
	mask "sh -c 'TOKEN=*** ./run'" sh -c 'TOKEN=abc ./run'
	mask "sh -c 'curl -H \"Authorization: ***'" \
	    sh -c 'curl -H "Authorization: Bearer abc" https://h'
}

@test "ps shows no password from -u, for redlock and its watchdog" {
	start_redis P --requirepass s3cretpw
	pw_url="redis://:s3cretpw@127.0.0.1:$P_PORT"
	run -0 "$RL" -u "$pw_url" exec x -- sh -c \
	    'ps -o args= -p $PPID >"$0/watchdog"; ps -o args= -p $(ps -o ppid= -p $PPID) >"$0/redlock"' "$D"
	# The watchdog shows a line of its own, with no URL in it.
	run -0 cat "$D/watchdog"
	assert_output "redlock: watchdog for x"
	run -0 cat "$D/redlock"
	[[ $output == *" exec x -- sh -c "* ]]
	[[ $output != *s3cretpw* ]]
	[[ $output == *"-u redis://:xxxxxxxx@127.0.0.1:$P_PORT exec"* ]]
	# --url=URL and several URLs in one word: every password.
	run -0 "$RL" --url="redis://default:s3cretpw@127.0.0.1:$P_PORT" exec y \
	    -- sh -c 'ps -o args= -p $(ps -o ppid= -p $PPID)'
	[[ $output != *s3cretpw* ]]
	[[ $output == *"--url=redis://default:xxxxxxxx@127.0.0.1"* ]]
	stop_redis "$P_PID"
}

@test "ps shows no password from -u for lock --keepalive's watchdog" {
	start_redis P --requirepass s3cretpw
	tok=$("$RL" -u "redis://:s3cretpw@127.0.0.1:$P_PORT" lock --keepalive \
	    --pid $$ kaX 3>&-)
	# Its lines only: a server starting beside this test shows its
	# --requirepass until it sets its title.
	procs=$(ps -eo args | grep -F -- "--keepalive --pid $$ kaX" || :)
	[[ $procs == *"-u redis://:xxxxxxxx@127.0.0.1:$P_PORT lock --keepalive"* ]]
	[[ $procs != *s3cretpw* ]]
	REDLOCK_PASSWORD=s3cretpw run -0 "$RL" -u "redis://127.0.0.1:$P_PORT" \
	    unlock --owner "$tok" kaX
	stop_redis "$P_PID"
}
