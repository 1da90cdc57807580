#!/usr/bin/env bats
# Usage errors, --help, --version and the manual. No server is needed:
# usage errors are found before connecting (the URL points nowhere).

load helpers

setup() {
	export REDLOCK_URL="redis://127.0.0.1:$(free_port)"
}

@test "bad durations are usage errors (64) naming the option" {
	for d in 10x abc -5 '' 1e3 0x10 ' 5' 5s5 inf nan 1.2.3 30S; do
		run -64 --separate-stderr "$RL" lock --wait "$d" x
		[[ $stderr == "redlock: --wait: bad duration '$d': use 250ms, 30s, 1h30m, 2d, 1.5h (units d, h, m, s, ms, largest first, each once) or seconds; usage: redlock lock [OPTIONS] NAME (see redlock lock --help)" ]]
		run -64 --separate-stderr "$RL" lock -t "$d" x
		[[ $stderr == *"--ttl: bad duration"* ]]
	done
	run -64 --separate-stderr "$RL" --connect-timeout 2y status x
	[[ $stderr == *"--connect-timeout: bad duration '2y'"* ]]
	run -64 --separate-stderr "$RL" --reply-timeout 0 status x
	run -64 --separate-stderr "$RL" lock -t 0 x
	[[ $stderr == *"--ttl must be at least 10ms"* ]]
}

@test "compound durations (1h30m, 2d, 1d12h, 90s, 1.5h) are taken; out of order, repeated, empty or negative parts are refused (64) naming the forms" {
	# Taken: then the server is unreachable (69).
	for d in 1h30m 2d 1d12h 90s 1.5h 1d2h3m4s5ms 1m0.5s 500ms 10s 10 1.5; do
		run -69 --separate-stderr "$RL" lock --wait "$d" x
		[[ $stderr == "redlock: cannot connect to "* ]]
		run -69 "$RL" exec -t "$d" --kill-after "$d" --max-hold 2d x -- true
		run -69 "$RL" --connect-timeout "$d" --reply-timeout "$d" status x
	done
	for d in 1m1h 1h1h 30s1m 1ms1s 1hm 1h30 h1 -1h 1h-5m '1h 30m' 1.5h30m 1d.5h 1D 1dd 2d1 1h30m.; do
		run -64 --separate-stderr "$RL" lock --wait "$d" x
		assert_equal "$stderr" "redlock: --wait: bad duration '$d': use 250ms, 30s, 1h30m, 2d, 1.5h (units d, h, m, s, ms, largest first, each once) or seconds; usage: redlock lock [OPTIONS] NAME (see redlock lock --help)"
		run -64 --separate-stderr "$RL" --reply-timeout "$d" status x
		assert_equal "$stderr" "redlock: --reply-timeout: bad duration '$d': use 250ms, 30s, 1h30m, 2d, 1.5h (units d, h, m, s, ms, largest first, each once) or seconds; see redlock --help"
	done
	for d in 3661d 3660d1ms 3659d24h1ms; do
		run -64 --separate-stderr "$RL" lock --wait "$d" x
		assert_equal "$stderr" "redlock: --wait: '$d' is longer than the limit of 87840h (10 years); usage: redlock lock [OPTIONS] NAME (see redlock lock --help)"
	done
	run -69 "$RL" lock --wait 3660d x
}

@test "a duration over the limit is a usage error that names the limit" {
	huge=$(printf '9%.0s' $(seq 1 400))
	for d in 87841h 87840.001h 5270401m 316224001 99999999999h "$huge"; do
		run -64 --separate-stderr "$RL" lock --wait "$d" x
		assert_equal "$stderr" "redlock: --wait: '$d' is longer than the limit of 87840h (10 years); usage: redlock lock [OPTIONS] NAME (see redlock lock --help)"
	done
	run -64 --separate-stderr "$RL" --reply-timeout 99999999999h status x
	assert_equal "$stderr" "redlock: --reply-timeout: '99999999999h' is longer than the limit of 87840h (10 years); see redlock --help"
	# The limit itself is accepted (then the server is unreachable: 69).
	run -69 "$RL" lock -w 87840h x
	run -69 "$RL" lock -w 316224000 x
}

@test "good durations are accepted (then the server is unreachable: 69)" {
	for d in 250ms 30s 5m 2h 1.5 0.25s .5 10; do
		run -69 --separate-stderr "$RL" lock -w "$d" x
	done
}

@test "--ttl's floor is stated once, as the real one: 30ms for exec and lock --keepalive, 10ms for a plain lock" {
	# Each refusal names the floor that applies, so that the value it
	# asks for is then accepted (the server is unreachable: 69).
	for t in 0 1ms 10ms 29ms 0.029; do
		run -64 --separate-stderr "$RL" exec -t "$t" x -- true
		[[ $stderr == "redlock: --ttl must be at least 30ms for exec, which renews the lease every ttl/3; usage: "* ]]
		run -64 --separate-stderr "$RL" lock --keepalive -t "$t" x
		[[ $stderr == "redlock: --ttl must be at least 30ms for --keepalive, which renews the lease every ttl/3; usage: "* ]]
	done
	run -69 "$RL" exec -t 30ms x -- true
	run -69 "$RL" lock --keepalive -t 30ms x
	for t in 0 9ms 0.009; do
		run -64 --separate-stderr "$RL" lock -t "$t" x
		[[ $stderr == "redlock: --ttl must be at least 10ms; usage: "* ]]
	done
	run -69 "$RL" lock -t 10ms x
}

@test "-E takes 0 to 255 and nothing else" {
	for n in -1 256 600 x 3x ''; do
		run -64 --separate-stderr "$RL" lock -E "$n" x
		[[ $stderr == *"--conflict-exit-code: '$n' is not a number from 0 to 255"* ]]
	done
	run -69 "$RL" lock -E 0 x
	run -69 "$RL" lock -E 255 x
}

@test "numbers are digits only, in every option: a blank or a sign is a usage error naming the option" {
	use="usage: redlock lock [OPTIONS] NAME (see redlock lock --help)"
	for n in ' 3' '3 ' '  3' '+3' '-0' '3.0' '0x3'; do
		run -64 --separate-stderr "$RL" lock --limit "$n" x
		assert_equal "$stderr" "redlock: --limit: '$n' is not a number from 1 to 1000000; $use"
		run -64 --separate-stderr "$RL" lock -E "$n" x
		assert_equal "$stderr" "redlock: --conflict-exit-code: '$n' is not a number from 0 to 255; $use"
		run -64 --separate-stderr "$RL" lock --replicas "$n" x
		assert_equal "$stderr" "redlock: --replicas: '$n' is not a number from 0 to 1000; $use"
		run -64 --separate-stderr "$RL" lock --keepalive --pid "$n" x
		assert_equal "$stderr" "redlock: --pid: '$n' is not a process id; $use"
	done
	# Durations were already so: the same blanks and signs are refused.
	for d in ' 3' '3 ' '+3'; do
		run -64 --separate-stderr "$RL" lock --waiter-timeout "$d" x
		[[ $stderr == "redlock: --waiter-timeout: bad duration '$d'"* ]]
		run -64 --separate-stderr "$RL" exec --kill-after "$d" x -- true
		[[ $stderr == "redlock: --kill-after: bad duration '$d'"* ]]
		run -64 --separate-stderr "$RL" exec --max-hold "$d" x -- true
		[[ $stderr == "redlock: --max-hold: bad duration '$d'"* ]]
		run -64 --separate-stderr "$RL" --reply-timeout "$d" status x
		[[ $stderr == "redlock: --reply-timeout: bad duration '$d'"* ]]
		run -64 --separate-stderr "$RL" --connect-timeout "$d" status x
		[[ $stderr == "redlock: --connect-timeout: bad duration '$d'"* ]]
		run -64 --separate-stderr "$RL" queue --watch="$d" x
		[[ $stderr == "redlock: --watch: bad duration '$d'"* ]]
	done
	# Digits alone are taken, leading zeros too (then the server is
	# unreachable: 69).
	run -69 "$RL" lock --limit 03 x
	run -69 "$RL" lock -E 075 x
	run -69 "$RL" lock --replicas 0 x
	run -69 "$RL" lock --keepalive --pid "$$" x
}

@test "log -n takes 1 to 100000, digits only, and names --lines with the value quoted" {
	use="usage: redlock log [--json] [-n N] [--follow] NAME (see redlock log --help)"
	for n in 0 100001 -1 x '' ' 3' '3 ' '+3' '-0' '3.0' '0x3'; do
		run -64 --separate-stderr "$RL" log -n "$n" x
		assert_equal "$stderr" "redlock: --lines: '$n' is not a number of events from 1 to 100000; $use"
		run -64 --separate-stderr "$RL" log --lines="$n" x
		assert_equal "$stderr" "redlock: --lines: '$n' is not a number of events from 1 to 100000; $use"
	done
	# In range: then the server is unreachable (69).
	run -69 "$RL" -u redis://127.0.0.1:"$(free_port)" log -n 1 x
	run -69 "$RL" -u redis://127.0.0.1:"$(free_port)" log -n 100000 x
}

@test "unknown options, commands and missing operands are usage errors" {
	run -64 --separate-stderr "$RL" lock --bogus x
	assert_equal "$stderr" "redlock: unknown option '--bogus'; usage: redlock lock [OPTIONS] NAME (see redlock lock --help)"
	run -64 --separate-stderr "$RL" lock -Z x
	assert_equal "$stderr" "redlock: unknown option '-Z'; usage: redlock lock [OPTIONS] NAME (see redlock lock --help)"
	run -64 --separate-stderr "$RL" lock x -w
	assert_equal "$stderr" "redlock: option '-w' needs a value; usage: redlock lock [OPTIONS] NAME (see redlock lock --help)"
	run -64 --separate-stderr "$RL" lock x --ttl
	assert_equal "$stderr" "redlock: option '--ttl' needs a value; usage: redlock lock [OPTIONS] NAME (see redlock lock --help)"
	run -64 --separate-stderr "$RL" lock
	[[ $stderr == "redlock: missing NAME; usage: redlock lock [OPTIONS] NAME"* ]]
	run -64 --separate-stderr "$RL" lock a b
	run -64 --separate-stderr "$RL" lock ''
	run -64 --separate-stderr "$RL" unlock
	run -64 --separate-stderr "$RL" unlock x
	[[ $stderr == *"give --owner TOKEN"* ]]
	REDLOCK_OWNER= run -64 "$RL" unlock x
	run -64 --separate-stderr "$RL" unlock --owner t --force x
	# Several names are a pool's (pool.bats); an empty one is an error.
	run -64 --separate-stderr "$RL" status a ''
	[[ $stderr == "redlock: NAME is empty; usage: redlock status"* ]]
	run -64 --separate-stderr "$RL" status --bogus
	run -64 --separate-stderr "$RL"
	[[ $stderr == "redlock: missing COMMAND; see redlock --help" ]]
	run -64 --separate-stderr "$RL" frobnicate x
	[[ $stderr == "redlock: unknown command 'frobnicate'; see redlock --help" ]]
	run -64 --separate-stderr "$RL" --bogus status
	assert_equal "$stderr" "redlock: unknown option '--bogus'; see redlock --help"
	run -64 --separate-stderr "$RL" lock --owner '' x
}

@test "an empty URL, alone or between commas, is a usage error; so is an empty REDLOCK_URL unless -u is given" {
	run -64 --separate-stderr "$RL" -u '' status x
	assert_equal "$stderr" "redlock: --url is empty: give redis://HOST[:PORT] or unix:///PATH; see redlock --help"
	u=$REDLOCK_URL
	for list in "$u," ",$u" "$u,,redis://127.0.0.1:1" ","; do
		run -64 --separate-stderr "$RL" -u "$list" status x
		assert_equal "$stderr" "redlock: --url: empty URL in '$list': separate URLs by single commas; see redlock --help"
		REDLOCK_URL=$list run -64 --separate-stderr "$RL" status x
		assert_equal "$stderr" "redlock: REDLOCK_URL: empty URL in '$list': separate URLs by single commas; see redlock --help"
	done
	run -64 --separate-stderr "$RL" -u "$u" -u '' status x
	REDLOCK_URL= run -64 --separate-stderr "$RL" status x
	assert_equal "$stderr" "redlock: REDLOCK_URL is set but empty: give it a URL, or unset it; see redlock --help"
	# A URL given after an empty REDLOCK_URL is used (unreachable: 69).
	REDLOCK_URL= run -69 --separate-stderr "$RL" -u "$u" status x
	[[ $stderr == *"${u#redis://}"* ]]
}

@test "--owner with a control character is a usage error; other bytes are fine" {
	for t in $'a\nb' $'a\tb' $'a\rb' $'a\x7fb' $'\e[2J' $'a\x01'; do
		run -64 --separate-stderr "$RL" lock --owner "$t" x
		[[ $stderr == "redlock: --owner: '"*"' has a control character; give a token without one; usage: redlock lock [OPTIONS] NAME (see redlock lock --help)" ]]
		[[ $stderr != *$'\n'* && $stderr != *$'\e'* && $stderr != *$'\x7f'* ]]
		run -64 --separate-stderr "$RL" exec --owner "$t" x -- true
	done
	run -64 --separate-stderr "$RL" lock --owner $'a\nb' x
	assert_equal "$stderr" "redlock: --owner: 'a\\x0ab' has a control character; give a token without one; usage: redlock lock [OPTIONS] NAME (see redlock lock --help)"
	# Spaces, punctuation and UTF-8 are not control characters.
	for t in 'a b' 'deploy:42' 'ä€' '~!@#$%^&*()'; do
		run -69 "$RL" lock --owner "$t" x
	done
}

@test "every kind takes --waiter-timeout: plain, --fair, --limit, --shared and --write" {
	# Accepted (then the server is unreachable), before or after the kind.
	run -69 "$RL" lock -s --waiter-timeout 1s x
	run -69 "$RL" exec --waiter-timeout 10s --write x -- true
	run -69 "$RL" lock --waiter-timeout 1s x
	run -69 "$RL" exec --waiter-timeout 1s x -- true
	run -69 "$RL" lock --fair --waiter-timeout 1s x
	run -69 "$RL" lock --waiter-timeout 1s --fair x
	run -69 "$RL" lock --waiter-timeout 1s --limit 2 x
}

@test "--pubsub and REDLOCK_PUBSUB take auto, sharded or classic; anything else is a usage error" {
	for m in auto sharded classic; do
		run -69 "$RL" lock --pubsub "$m" x
		run -69 "$RL" exec --pubsub "$m" x -- true
		run -69 "$RL" unlock --pubsub "$m" --owner t x
		REDLOCK_PUBSUB=$m run -69 "$RL" lock x
	done
	# Set and empty, it counts as unset.
	REDLOCK_PUBSUB= run -69 "$RL" lock x
	run -64 --separate-stderr "$RL" unlock --pubsub Classic --owner t x
	assert_equal "$stderr" "redlock: --pubsub: 'Classic' is not auto, sharded or classic; usage: redlock unlock [--owner TOKEN | --force] NAME (see redlock unlock --help)"
	REDLOCK_PUBSUB=on run -64 --separate-stderr "$RL" exec x -- true
	assert_equal "$stderr" "redlock: REDLOCK_PUBSUB: 'on' is not auto, sharded or classic; fix it, or give --pubsub; usage: redlock exec [OPTIONS] NAME -- COMMAND [ARG...] (see redlock exec --help)"
	# The option wins: the variable is not read then.
	REDLOCK_PUBSUB=on run -69 "$RL" lock --pubsub classic x
	# status and queue neither publish nor subscribe: not theirs.
	run -64 "$RL" status --pubsub classic x
	REDLOCK_PUBSUB=on run -69 "$RL" status x
}

@test "--help and --version print to stdout and exit 0" {
	run -0 --separate-stderr "$RL" --help
	assert_line --index 0 'usage: redlock [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARG...]'
	for c in exec lock unlock status queue; do
		run -0 --separate-stderr "$RL" "$c" --help
		assert_line --index 0 --partial "usage: redlock [GLOBAL OPTIONS] $c"
		run -0 --separate-stderr "$RL" "$c" -h
	done
	run -0 "$RL" --version
	assert_line --index 0 --regexp '^redlock [0-9]+\.[0-9]+\.[0-9]+$'
	# The libraries: hiredis as built, OpenSSL as loaded.
	hiredis=$(dpkg-query -W -f='${Version}' libhiredis-dev | sed 's/[-~+].*//')
	assert_line --index 1 "hiredis $hiredis"
	assert_line --index 2 "$(openssl version | cut -d' ' -f1-5) (libssl, loaded for rediss://)"
	[ "${#lines[@]}" = 3 ]
}

@test "each COMMAND --help fits 40 lines of 80 columns, with examples and its exit statuses, and nothing of another command's" {
	local c
	for c in exec lock unlock status queue log config; do
		run -0 "$RL" "$c" --help
		[ "${#lines[@]}" -le 40 ] || { echo "$c: ${#lines[@]} lines"; false; }
		run -0 awk -v c="$c" 'length > 80 { print c ": " $0 }' <<<"$output"
		assert_output ""
		run -0 "$RL" "$c" --help
		assert_line "Examples:"
		assert_line --regexp "^  (.*[ (])?redlock $c( |$)"
		assert_line --regexp "^Exit status: .*"
		assert_output --partial "64 usage"
	done
	run -0 "$RL" lock --help
	refute_output --partial "COMMAND"
	run -0 "$RL" exec --help
	refute_output --partial "--keepalive"
	refute_output --partial "token"
}

@test "a full stdout is an error, not a silent success" {
	[ -w /dev/full ] || skip "no /dev/full"
	run -70 --separate-stderr sh -c '"$0" --help >/dev/full' "$RL"
	[[ $stderr == "redlock: cannot write to standard output: "* ]]
}

# Options as the reader sees them: --long and -s tokens; and --complete,
# which --help does not show (the completions' own), but the manual does.
help_options() {
	{
		"$RL" --help
		for c in exec lock unlock status queue log config; do "$RL" "$c" --help; done
		echo ' --complete'
	} | grep -oE -- '(^|[ ,])--?[a-zA-Z][a-z-]*' | grep -oE -- '--?[a-zA-Z][a-z-]*' | sort -u
}
man_options() {
	mandoc -Tascii "$BATS_TEST_DIRNAME/../../man/redlock.1" | col -b |
	    grep -oE -- '(^|[ ,[(|])--?[a-zA-Z][a-z-]*' | grep -oE -- '--?[a-zA-Z][a-z-]*' | sort -u
}

# The options that --complete lists, global and each command's, hidden
# ones too; --complete itself.
complete_options() {
	local c
	{
		"$RL" --complete
		for c in $("$RL" --complete | cut -f1 | grep -v '^-'); do
			"$RL" --complete "$c"
		done
	} | cut -f1 | grep -- '^-'
	echo --complete
}
binary_options() { { help_options; complete_options; } | sort -u; }

@test "every option in --help is in the manual and the other way round" {
	run -0 comm -23 <(help_options) <(man_options)
	assert_output ''
	[ "$(help_options | wc -l)" -gt 15 ]
	# Every long option the binary completes, those --help leaves out
	# too; and the manual names none that the binary does not take.
	run -0 comm -23 <(complete_options | grep -- '^--' | sort -u) <(man_options)
	assert_output ''
	[ "$(complete_options | grep -c -- '^--')" -gt 40 ]
	run -0 comm -13 <(binary_options) <(man_options)
	assert_output ''
}

# The exit statuses the binary uses: cmd/cmd.h's, and exec's 126, 127.
exit_codes() {
	sed -n 's/^[[:space:]]*EXIT_[A-Z_]* = \([0-9]*\).*/\1/p' \
	    "$BATS_TEST_DIRNAME/../../cmd/cmd.h"
	echo 126
	echo 127
}

@test "the manual is mandoc -Tlint clean and lists every exit status" {
	run -0 mandoc -Tlint -Wwarning "$BATS_TEST_DIRNAME/../../man/redlock.1"
	assert_output ''
	page=$(mandoc -Tascii "$BATS_TEST_DIRNAME/../../man/redlock.1" | col -bx |
	    sed -n '/^EXIT STATUS/,/^EXAMPLES/p')
	[ "$(exit_codes | wc -l)" -ge 12 ]
	for code in $(exit_codes) 128; do
		grep -qE "^ +$code( |$)" <<<"$page" || {
			echo "exit status $code is not in EXIT STATUS of redlock(1)"
			return 1
		}
	done
	# README.md's table too.
	for code in $(exit_codes); do
		grep -qE "^\| *$code *\|" "$BATS_TEST_DIRNAME/../../README.md" || {
			echo "exit status $code is not in README.md's table"
			return 1
		}
	done
}

# Each page: lint-clean, within its budget at 80 columns (redlock(1)
# 1,200 lines and 10,000 words), all of them 20,000 words at most, and
# each named in redlock(1)'s FILES and SEE ALSO.
@test "every manual page is mandoc -Tlint clean, within its length, and listed in redlock(1)" {
	local dir=$BATS_TEST_DIRNAME/../../man f n words lines total=0
	main=$(MANWIDTH=80 man -l "$dir/redlock.1" 2>/dev/null | col -bx)
	n=0
	for f in "$dir"/*.[1-9]; do
		n=$((n + 1))
		run -0 mandoc -Tlint -Wwarning "$f"
		assert_output ''
		read -r lines words < <(MANWIDTH=80 man -l "$f" 2>/dev/null | wc -lw)
		echo "$(basename "$f"): $lines lines, $words words" >&3
		total=$((total + words))
		case $f in
		*/redlock.1)
			[ "$lines" -le 1200 ] && [ "$words" -le 10000 ] ;;
		*)
			page=$(basename "$f")
			grep -q "share/man/man${page##*.}/$page" <<<"$main"
			grep -qF "${page%.*}(${page##*.})" <<<"$(sed -n '/^SEE ALSO/,$p' <<<"$main")" ;;
		esac
	done
	[ "$n" -ge 5 ]
	echo "all pages: $total words" >&3
	[ "$total" -le 20000 ]
}

@test "the manual does not call what runs a usage error or an exit 69" {
	# The page as one line, so that a phrase may span a line break.
	page=$(mandoc -Tascii "$BATS_TEST_DIRNAME/../../man/redlock.1" | col -b | tr -s '[:space:]' ' ')
	# --waiter-timeout is taken without --fair, and with -s or --write.
	run -69 "$RL" lock --waiter-timeout 1s x
	run -69 "$RL" lock -s --waiter-timeout 1s x
	[[ $page != *"--waiter-timeout without --fair"* ]]
	[[ $page != *"--waiter-timeout with -s or --write"* ]]
	# A waiter that loses the quorum keeps waiting (redlock.bats).
	[[ $page != *"exits 69, whether or not it was waiting"* ]]
	[[ $page == *"A waiter whose first attempt reached a quorum does not: it keeps waiting"* ]]
}

@test "--metrics-file: refused before connecting when its directory is missing; an unreachable server is recorded as 69" {
	run -64 --separate-stderr "$RL" exec --metrics-file "$BATS_TEST_TMPDIR/none/m.prom" x -- true
	[[ $stderr == "redlock: --metrics-file: the directory of '$BATS_TEST_TMPDIR/none/m.prom' does not exist: create it, or give a FILE in one that does; usage: redlock exec "* ]]
	run -64 --separate-stderr "$RL" lock --metrics-file "$BATS_TEST_TMPDIR/m.prom" x
	[[ $stderr == "redlock: --metrics-file is for exec: "* ]]
	run -69 --separate-stderr "$RL" exec --metrics-file "$BATS_TEST_TMPDIR/m.prom" x -- true
	grep -qx 'redlock_last_exit_status{name="x"} 69' "$BATS_TEST_TMPDIR/m.prom"
	grep -qx 'redlock_runs_total{name="x"} 0' "$BATS_TEST_TMPDIR/m.prom"
	grep -qx 'redlock_busy_total{name="x"} 0' "$BATS_TEST_TMPDIR/m.prom"
}

@test "exec: an unknown option after NAME, with no --, says to put -- before COMMAND" {
	use="usage: redlock exec [OPTIONS] NAME -- COMMAND [ARG...] (see redlock exec --help)"
	run -64 --separate-stderr "$RL" exec -n backup pg_dump -Fc -f db.dump db
	assert_equal "$stderr" "redlock: unknown option '-F' after NAME: put -- before COMMAND (redlock exec [options] NAME -- COMMAND...); $use"
	run -64 --separate-stderr "$RL" exec backup pg_dump --format=c db
	assert_equal "$stderr" "redlock: unknown option '--format=c' after NAME: put -- before COMMAND (redlock exec [options] NAME -- COMMAND...); $use"
	# Before NAME, or with --, it is only unknown; a known option
	# without its value is not called unknown.
	run -64 --separate-stderr "$RL" exec -Z backup -- true
	assert_equal "$stderr" "redlock: unknown option '-Z'; $use"
	run -64 --separate-stderr "$RL" exec -n backup pg_dump -w
	assert_equal "$stderr" "redlock: option '-w' needs a value; $use"
}

@test "global options are taken after the subcommand, before NAME; the subcommand's own spelling wins" {
	port=$(free_port)
	# -u after exec: the server it names is the one tried (none there).
	run -69 --separate-stderr "$RL" exec -u "redis://127.0.0.1:$port" -n x -- true
	[[ $stderr == *"127.0.0.1:$port"* ]]
	run -69 --separate-stderr "$RL" status --url="redis://127.0.0.1:$port" --connect-timeout 1s x
	[[ $stderr == *"127.0.0.1:$port"* ]]
	run -69 --separate-stderr "$RL" lock --reply-timeout 1s -n x
	run -64 --separate-stderr "$RL" queue --connect-timeout 0 x
	assert_equal "$stderr" "redlock: --connect-timeout must be more than 0; see redlock --help"
	# -h after the subcommand is its help, not the global one.
	run -0 "$RL" lock -h
	assert_line --index 0 'usage: redlock [GLOBAL OPTIONS] lock [OPTIONS] NAME'
	# After NAME the words are the subcommand's (exec: COMMAND's).
	run -64 --separate-stderr "$RL" lock x -u "redis://127.0.0.1:$port"
	assert_equal "$stderr" "redlock: unknown option '-u'; usage: redlock lock [OPTIONS] NAME (see redlock lock --help)"
}

@test "a word mixing a command's short options with a global one is the command's to refuse, in either order" {
	run -64 --separate-stderr "$RL" exec -nV x -- true
	assert_equal "$stderr" "redlock: unknown option '-V'; usage: redlock exec [OPTIONS] NAME -- COMMAND [ARG...] (see redlock exec --help)"
	run -64 --separate-stderr "$RL" exec -Vn x -- true
	assert_equal "$stderr" "redlock: unknown option '-V'; usage: redlock exec [OPTIONS] NAME -- COMMAND [ARG...] (see redlock exec --help)"
	assert_output ""
	# Alone, after the command and before NAME, it is the global one.
	run -0 "$RL" exec -V
	assert_line --index 0 --regexp '^redlock [0-9]'
}

@test "after the command: a global option without its value says so; an abbreviation the command alone has is the command's" {
	run -64 --separate-stderr "$RL" status -u
	assert_equal "$stderr" "redlock: option '-u' needs a value; usage: redlock status [--json] [-v] [NAME...] (see redlock status --help)"
	run -64 --separate-stderr "$RL" exec --url
	[[ $stderr == "redlock: option '--url' needs a value; "* ]]
	# --rep: --replicas (lock's) and --reply-timeout (global): lock's.
	run -69 --separate-stderr "$RL" lock --rep 1 -n x
	[[ $stderr == *"cannot connect"* ]]
	run -64 --separate-stderr "$RL" lock --rep x -n x
	[[ $stderr == "redlock: --replicas"* ]]
}

@test "redlock --help lists every command with the usage line of its own --help" {
	local c usage
	run -0 "$RL" --help
	for c in exec lock unlock status queue log config; do
		usage=$("$RL" "$c" --help | sed -n '1s/^usage: redlock \[GLOBAL OPTIONS\] //p')
		[ -n "$usage" ]
		assert_line --regexp "^  $(printf '%s' "$usage" | sed 's/[][\.*^$|+?(){}]/\\&/g')( |\$)"
	done
}

@test "--reply-timeout is the time allowed for each reply; --timeout is -w, as flock's, and the commands that do not wait refuse it (64)" {
	run -69 --separate-stderr "$RL" --reply-timeout 1s status x
	[[ $stderr != *"--timeout"* ]]
	run -64 --separate-stderr "$RL" --reply-timeout 0 status x
	assert_equal "$stderr" "redlock: --reply-timeout must be more than 0; see redlock --help"
	for c in "status x" "unlock --force x" "queue x" "log x"; do
		for words in "--timeout 1s $c" "${c%% *} --timeout 1s ${c#* }"; do
			# shellcheck disable=SC2086
			run -64 --separate-stderr "$RL" $words
			[[ $stderr == "redlock: --timeout bounds the wait for NAME, as -w, and only exec and lock wait: drop it (each reply is bounded by --reply-timeout); usage: redlock ${c%% *} "* ]]
		done
	done
	# Its value is a duration as -w's, named as given.
	run -64 --separate-stderr "$RL" --timeout 2x exec x -- true
	[[ $stderr == "redlock: --timeout: bad duration '2x': "*"; usage: redlock exec "* ]]
	run -64 --separate-stderr "$RL" lock --timeout=-1 x
	[[ $stderr == "redlock: --timeout: bad duration '-1': "*"; usage: redlock lock "* ]]
	run -0 "$RL" --help
	assert_output --partial "--reply-timeout DURATION"
	assert_output --partial "--timeout DURATION  wait at most DURATION for NAME, as -w"
	run -0 "$RL" exec --help
	assert_output --partial "wait at most DURATION for NAME; also --timeout"
	# The manual says the same, where a user of flock looks.
	page=$(mandoc -Tascii "$BATS_TEST_DIRNAME/../../man/redlock.1" | col -b | tr -s '[:space:]' ' ')
	[[ $page == *"flock(1)'s --timeout is redlock's too: -w by another name"* ]]
}

@test "flock's spellings: -x, -e, --exclusive, --nonblock, --nb, -o, --close and -V are taken; -x with another kind, --unlock, --fcntl and -F are refused" {
	for o in -x -e --exclusive --nonblock --nb; do
		run -69 "$RL" lock "$o" x
		run -69 "$RL" exec "$o" x -- true
	done
	run -69 "$RL" exec -o x -- true
	run -69 "$RL" exec --close x -- true
	run -0 "$RL" -V
	assert_line --index 0 --regexp '^redlock [0-9]+\.[0-9]+\.[0-9]+$'
	use="usage: redlock lock [OPTIONS] NAME (see redlock lock --help)"
	run -64 --separate-stderr "$RL" lock -x -s x
	assert_equal "$stderr" "redlock: -x (--exclusive) and --shared do not go together: -x asks for an exclusive lock, --shared for another kind; drop one; $use"
	run -64 --separate-stderr "$RL" exec --exclusive --write x -- true
	[[ $stderr == "redlock: -x (--exclusive) and --write do not go together"* ]]
	run -64 --separate-stderr "$RL" lock --limit 2 -e x
	[[ $stderr == "redlock: -x (--exclusive) and --limit do not go together"* ]]
	run -64 --separate-stderr "$RL" lock --unlock x
	assert_equal "$stderr" "redlock: --unlock is flock's: release a lock with redlock unlock NAME (exec releases NAME when COMMAND exits); $use"
	run -64 --separate-stderr "$RL" exec --fcntl x -- true
	[[ $stderr == "redlock: --fcntl is flock's: redlock's locks are keys in Redis, not locks on a file; "* ]]
	run -64 --separate-stderr "$RL" exec -F x -- true
	[[ $stderr == "redlock: -F (--no-fork) is flock's: redlock runs COMMAND in a child of its own, beside the watchdog that renews the lease; drop -F; "* ]]
}

@test "--complete: the global options and the commands, or a command's options, from the tables" {
	run -0 --separate-stderr "$RL" --complete
	grep -qx -- $'--url\tURL\t.*' <<<"$output"
	grep -qx -- $'--insecure\t\t.*' <<<"$output"
	grep -qx -- $'--timeout\tDURATION\twait at most DURATION for NAME, as -w' <<<"$output"
	grep -qx -- $'exec\t\trun COMMAND holding NAME, renewing its lease' <<<"$output"
	run -0 --separate-stderr "$RL" --complete exec
	grep -qx -- $'--on-lost\tterm|kill|ignore\twhen the lease is lost' <<<"$output"
	grep -qx -- $'-w\tDURATION\twait at most DURATION for NAME' <<<"$output"
	grep -qx -- $'--timeout\tDURATION\twait at most DURATION for NAME' <<<"$output"
	grep -qx -- $'--nb\t\tgive up at once if NAME is held' <<<"$output"
	grep -qx -- $'--fcntl\t\t' <<<"$output"
	! grep -q -- --keepalive <<<"$output"
	run -0 --separate-stderr "$RL" --complete queue
	grep -qx -- $'--watch\t\\[DURATION\\]\t.*' <<<"$output"
	# Not in --help: it is the completions' question.
	run -0 --separate-stderr "$RL" --help
	! grep -q -- --complete <<<"$output"
	run -64 --separate-stderr "$RL" --complete frobnicate
	assert_equal "$stderr" "redlock: unknown command 'frobnicate'; see redlock --help"
}
