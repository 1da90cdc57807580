#!/usr/bin/env bats
# Shell completions (man/redlock.bash, man/_redlock, man/redlock.fish),
# each run by its own shell: subcommands, options, values, and the held
# lock names from a live server, never stalling on a dead one.

load helpers

MAN=$BATS_TEST_DIRNAME/../../man

setup_file() {
	command -v zsh >/dev/null && command -v fish >/dev/null &&
	    [ -f /usr/share/bash-completion/bash_completion ] || return 0
	start_redis R
	# The completions run "redlock" from PATH, as typed.
	mkdir -p "$BATS_FILE_TMPDIR/bin"
	ln -s "$(readlink -f "$RL")" "$BATS_FILE_TMPDIR/bin/redlock"
	rl lock -t 5m 'deploy prod' >/dev/null
	rl lock -t 5m 'build:main' >/dev/null
	rl lock -t 5m backup >/dev/null
}

teardown_file() { stop_redis "${R_PID-}"; }
# A server a test starts (S) is that test's to stop: its variables do not
# reach teardown_file.
teardown() { stop_redis "${S_PID-}"; stop_strays; }

setup() {
	for t in zsh fish; do
		command -v "$t" >/dev/null ||
		    skip "$t is not installed (test/deps.sh test installs it)"
	done
	[ -f /usr/share/bash-completion/bash_completion ] ||
	    skip "bash-completion is not installed (test/deps.sh test installs it)"
	export PATH=$BATS_FILE_TMPDIR/bin:$PATH
	export REDLOCK_URL=redis://127.0.0.1:$R_PORT
}

# bcomp LINE: what bash offers for LINE (cursor at its end), one a line,
# from bash-completion's library and man/redlock.bash, through the function
# that "complete -p redlock" names.
bcomp() {
	bash --norc --noprofile -c '
		source /usr/share/bash-completion/bash_completion
		source "$1"
		line=$2
		read -ra COMP_WORDS <<<"$line"
		[[ $line == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE=$line COMP_POINT=${#line}
		spec=$(complete -p redlock) || exit 1
		fn=${spec#*-F }
		fn=${fn%% *}
		"$fn" redlock "${COMP_WORDS[COMP_CWORD]}" \
		    "${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
		printf "%s\n" "${COMPREPLY[@]}"' _ "$MAN/redlock.bash" "$1"
}

# zcomp LINE: what zsh's completion system offers (test/bats/zcomp.zsh).
zcomp() { zsh -f "$BATS_TEST_DIRNAME/zcomp.zsh" "$MAN" "$1"; }

# fcomp LINE: what fish offers (complete -C), without descriptions.
fcomp() {
	fish --no-config -c 'source $argv[1]; complete -C $argv[2]' \
	    "$MAN/redlock.fish" "$1" | cut -f1
}

# each_shell CHECK LINE: run CHECK on what each shell offers for LINE.
each_shell() {
	local check=$1 line=$2 sh
	for sh in bcomp zcomp fcomp; do
		run -0 "$sh" "$line"
		"$check" || { echo "with $sh for '$line':"; echo "$output"; return 1; }
	done
}

@test "bash registers the completion with complete -F; zsh and fish parse theirs" {
	run -0 bash --norc -c 'source "$1"; complete -p redlock' _ "$MAN/redlock.bash"
	assert_output 'complete -F _redlock redlock'
	run -0 zsh -n "$MAN/_redlock"
	run -0 head -n 1 "$MAN/_redlock"
	assert_output '#compdef redlock'
	run -0 fish --no-execute "$MAN/redlock.fish"
}

subcommands() {
	[ "$(sort <<<"$output" | tr '\n' ' ')" = 'config exec lock log queue status unlock ' ]
}
@test "every shell offers the seven subcommands, and completes a prefix" {
	each_shell subcommands 'redlock '
	only_exec() { [ "$output" = exec ]; }
	each_shell only_exec 'redlock ex'
}

global_options() {
	grep -qx -- --url <<<"$output" && grep -qx -- --connect-timeout <<<"$output" &&
	    grep -qx -- --cacertdir <<<"$output" && grep -qx -- --version <<<"$output" &&
	    ! grep -qx -- --ttl <<<"$output"
}
exec_options() {
	local o
	for o in --wait --no-wait --ttl --fair --shared --write --limit \
	    --waiter-timeout --min-hold --replicas --pubsub --conflict-exit-code \
	    --owner --label --quiet --verbose --on-lost --kill-after --max-hold \
	    --metrics-file --help; do
		grep -qx -- "$o" <<<"$output" || return 1
	done
	! grep -qx -- --keepalive <<<"$output" && ! grep -qx -- --url <<<"$output"
}
lock_options() {
	grep -qx -- --keepalive <<<"$output" && grep -qx -- --pid <<<"$output" &&
	    grep -qx -- --label <<<"$output" &&
	    grep -qx -- --shared <<<"$output" && ! grep -qx -- --on-lost <<<"$output" &&
	    ! grep -qx -- --max-hold <<<"$output" &&
	    ! grep -qx -- --metrics-file <<<"$output"
}
@test "global options before the subcommand, each subcommand's own after it" {
	each_shell global_options 'redlock --'
	each_shell exec_options 'redlock exec --'
	each_shell lock_options 'redlock -u redis://127.0.0.1:1 lock --'
	status_options() { grep -qx -- --json <<<"$output" && ! grep -qx -- --force <<<"$output"; }
	each_shell status_options 'redlock status --'
	unlock_options() { grep -qx -- --force <<<"$output" && grep -qx -- --owner <<<"$output" && grep -qx -- --pubsub <<<"$output"; }
	each_shell unlock_options 'redlock unlock --'
}

@test "--on-lost offers term, kill and ignore" {
	on_lost() { [ "$(sort <<<"$output" | tr '\n' ' ')" = 'ignore kill term ' ]; }
	each_shell on_lost 'redlock exec --on-lost '
	only_kill() { [ "$output" = kill ]; }
	each_shell only_kill 'redlock exec -t 5s --on-lost k'
}

@test "--pubsub offers auto, sharded and classic to exec, lock and unlock" {
	modes() { [ "$(sort <<<"$output" | tr '\n' ' ')" = 'auto classic sharded ' ]; }
	each_shell modes 'redlock exec --pubsub '
	each_shell modes 'redlock lock -t 5s --pubsub '
	each_shell modes 'redlock unlock --pubsub '
	only_classic() { [ "$output" = classic ]; }
	each_shell only_classic 'redlock exec --pubsub c'
	# Its value is not NAME: unlock still completes the held names.
	each_shell held_names_quoted 'redlock unlock --pubsub classic '
}

@test "durations: examples for every duration option, units after a number" {
	examples() { [ "$(sort <<<"$output" | tr '\n' ' ')" = '250ms 2h 30s 5m ' ]; }
	units() { [ "$(sort <<<"$output" | tr '\n' ' ')" = '15h 15m 15ms 15s ' ]; }
	local o
	for o in -w --wait -t --ttl --waiter-timeout --min-hold --kill-after \
	    --max-hold; do
		each_shell examples "redlock exec $o "
	done
	each_shell examples 'redlock --connect-timeout '
	each_shell examples 'redlock --reply-timeout '
	each_shell units 'redlock exec -w 15'
}

@test "exec --metrics-file completes files, and its value is not NAME" {
	mkdir -p "$BATS_TEST_TMPDIR/prom"
	touch "$BATS_TEST_TMPDIR/prom/redlock.prom"
	cd "$BATS_TEST_TMPDIR"
	prom_file() { grep -q 'redlock\.prom$' <<<"$output"; }
	each_shell prom_file 'redlock exec --metrics-file prom/r'
	dashdash() { [ "$output" = -- ]; }
	each_shell dashdash 'redlock exec --metrics-file prom/redlock.prom deploy '
}

@test "the TLS options complete files, --cacertdir directories" {
	mkdir -p "$BATS_TEST_TMPDIR/tls/certs.d"
	touch "$BATS_TEST_TMPDIR/tls/ca.pem"
	cd "$BATS_TEST_TMPDIR"
	files() { grep -q 'ca\.pem$' <<<"$output"; }
	each_shell files 'redlock --cacert tls/c'
	each_shell files 'redlock --key tls/c'
	dirs() { grep -q 'certs\.d/\?$' <<<"$output" && ! grep -q ca.pem <<<"$output"; }
	each_shell dirs 'redlock --cacertdir tls/c'
}

@test "exec: -- after NAME, then COMMAND as a command line of its own" {
	dashdash() { [ "$output" = -- ]; }
	each_shell dashdash 'redlock exec -w 5s deploy '
	command_name() { grep -qx 'echo' <<<"$output"; }
	each_shell command_name 'redlock exec deploy -- ech'
}

held_names() {
	[ "$(sort <<<"$output" | tr '\n' '|')" = 'backup|build:main|deploy prod|' ]
}
# bash and zsh show the names quoted for the shell.
held_names_quoted() {
	local want
	want=$(printf '%s\n' backup 'build:main' 'deploy\ prod')
	[ "$(sed 's/^\(build\\\?:\)/build:/' <<<"$output" | sort)" = "$want" ] ||
	    held_names
}
@test "status, queue and unlock complete the held lock names from REDLOCK_URL" {
	local c
	for c in status queue unlock 'unlock --owner x' 'status --json'; do
		each_shell held_names_quoted "redlock $c "
	done
	deploy_only() { grep -q '^deploy' <<<"$output" && [ "$(wc -l <<<"$output")" = 1 ]; }
	each_shell deploy_only 'redlock status de'
	# Not after NAME, and not for exec's NAME (a new name as often as not).
	no_names() { ! grep -q backup <<<"$output"; }
	each_shell no_names 'redlock status backup '
	each_shell no_names 'redlock exec '
}

@test "the names come from the -u on the line, not REDLOCK_URL, when given" {
	export REDLOCK_URL=redis://127.0.0.1:$(free_port)
	nothing() { ! grep -q backup <<<"$output"; }
	each_shell nothing 'redlock status '
	each_shell held_names_quoted "redlock -u redis://127.0.0.1:$R_PORT status "
	each_shell held_names_quoted "redlock --url=redis://127.0.0.1:$R_PORT queue "
}

# timed CHECK LINE: as each_shell, and in each shell LINE costs less than
# 2.5 s more than completing a subcommand, which asks no server (the
# shell's own start, slow on a busy box, is in both). The completions
# give redlock 300 ms a step and 1 s in all; a redlock left to its
# defaults would wait 5 s for a stopped server's reply.
timed() {
	local sh t0 t1 t2
	for sh in bcomp zcomp fcomp; do
		t0=$(now_ms)
		run -0 "$sh" 'redlock sta'
		t1=$(now_ms)
		run -0 "$sh" "$2"
		t2=$(now_ms)
		echo "$sh: $((t2 - t1)) ms, $((t1 - t0)) ms without a server"
		[ $((t2 - t1 - (t1 - t0))) -lt 2500 ] || return 1
		"$1" || { echo "$output"; return 1; }
	done
}
@test "a dead server costs the completions at most their own bound and offers no names: refused, and never answering" {
	empty() { [ -z "$output" ]; }
	export REDLOCK_URL=redis://127.0.0.1:$(free_port)
	timed empty 'redlock status '
	# A server that accepts connections and never answers (stopped).
	start_redis S
	kill -STOP "$S_PID"
	export REDLOCK_URL=redis://127.0.0.1:$S_PORT
	timed empty 'redlock status '
	timed empty 'redlock unlock '
	kill -CONT "$S_PID"
}

@test "--label takes a text: nothing is offered for it, and it is not NAME" {
	nothing_offered() { [ -z "$output" ]; }
	each_shell nothing_offered 'redlock exec --label '
	each_shell nothing_offered 'redlock lock --label '
	# The word after the label's is NAME: options are offered after it.
	has_ttl() { grep -qx -- --ttl <<<"$output"; }
	each_shell has_ttl 'redlock exec --label deploy --'
}

@test "flock's spellings, -c, --reply-timeout and --timeout (-w) are offered; a global option's value after the subcommand is not NAME" {
	flock_spellings() {
		local o
		for o in --exclusive --nonblock --nb --command --close --timeout; do
			grep -qx -- "$o" <<<"$output" || return 1
		done
	}
	each_shell flock_spellings 'redlock exec --'
	reply_timeout() { grep -qx -- --reply-timeout <<<"$output" && grep -qx -- --timeout <<<"$output"; }
	each_shell reply_timeout 'redlock --'
	dashdash() { [ "$output" = -- ]; }
	for sh in bcomp fcomp; do
		run -0 "$sh" 'redlock exec -u redis://127.0.0.1:1 deploy '
		dashdash || { echo "with $sh:"; echo "$output"; return 1; }
	done
	# The names come from the -u given after the subcommand.
	export REDLOCK_URL=redis://127.0.0.1:$(free_port)
	for sh in bcomp fcomp; do
		run -0 "$sh" "redlock status -u redis://127.0.0.1:$R_PORT "
		held_names_quoted || { echo "with $sh:"; echo "$output"; return 1; }
	done
}

# listed SUB: the long options "redlock --complete [SUB]" says to offer
# (those with a description), one a line, sorted.
listed() {
	redlock --complete ${1:+"$1"} | awk -F '\t' '$1 ~ /^--/ && $3 != "" { print $1 }' | sort
}
# longs: the long options in $output, without "=", sorted.
longs() { grep -- '^--' <<<"$output" | sed 's/=.*//' | sort -u; }

@test "each shell offers exactly the options redlock --complete lists, for every subcommand" {
	local sub sh want
	run -0 redlock --complete
	for sub in '' $(awk -F '\t' '$1 !~ /^-/ { print $1 }' <<<"$output"); do
		want=$(listed "$sub")
		[ -n "$want" ]
		for sh in bcomp zcomp fcomp; do
			run -0 "$sh" "redlock ${sub:+$sub }--"
			diff -u <(echo "$want") <(longs) ||
			    { echo "with $sh for '$sub'"; return 1; }
		done
	done
}

@test "each shell completes every option's value by the kind redlock --complete gives" {
	local sub w k line
	examples() { [ "$(sort <<<"$output" | tr '\n' ' ')" = '250ms 2h 30s 5m ' ]; }
	choices() { [ "$(sort <<<"$output" | tr '\n' ' ')" = "$(tr '|' '\n' <<<"$k" | sort | tr '\n' ' ')" ]; }
	for sub in exec lock unlock; do
		while IFS= read -r line; do
			w=${line%%$'\t'*} k=${line#*$'\t'} k=${k%%$'\t'*}
			case $k in
			DURATION) each_shell examples "redlock $sub $w " ;;
			*'|'*) each_shell choices "redlock $sub $w " ;;
			esac
		done < <(redlock --complete "$sub" | grep -- '^--')
	done
}

@test "an option added to the table is completed by every shell, the files unchanged" {
	# A redlock whose listing has one more option than the real one's:
	# what a new table entry gives.
	cat >"$BATS_TEST_TMPDIR/redlock" <<-EOS
	#!/bin/sh
	"$(readlink -f "$RL")" "\$@"
	[ "\$1 \$2" = "--complete exec" ] &&
	    printf '%s\t%s\t%s\n' --new-one DURATION 'a new option' \
	    --new-mode 'one|two' 'a new choice'
	exit 0
	EOS
	chmod +x "$BATS_TEST_TMPDIR/redlock"
	export PATH=$BATS_TEST_TMPDIR:$PATH
	new_ones() { grep -qx -- --new-one <<<"$output" && grep -qx -- --new-mode <<<"$output"; }
	each_shell new_ones 'redlock exec --new'
	examples() { [ "$(sort <<<"$output" | tr '\n' ' ')" = '250ms 2h 30s 5m ' ]; }
	each_shell examples 'redlock exec --new-one '
	modes() { [ "$(sort <<<"$output" | tr '\n' ' ')" = 'one two ' ]; }
	each_shell modes 'redlock exec --new-mode '
	# Its value is not NAME: "--" follows NAME.
	dashdash() { [ "$output" = -- ]; }
	each_shell dashdash 'redlock exec --new-one 5s deploy '
}

@test "no completion file spells a lock option: they come from redlock --complete" {
	local o f
	run -0 redlock --complete
	globals=$(cut -f1 <<<"$output")
	for o in $( (redlock --complete exec; redlock --complete lock) |
	    cut -f1 | grep -- '^--' | sort -u); do
		grep -qx -- "$o" <<<"$globals" && continue
		for f in "$MAN/redlock.bash" "$MAN/_redlock" "$MAN/redlock.fish"; do
			! grep -nE -- "$o\b|-l ${o#--}\b" "$f" ||
			    { echo "$f spells $o"; return 1; }
		done
	done
}
