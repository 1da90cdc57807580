# bash completion for redlock(1). Installed by make install into
# bash-completion's completionsdir as "redlock"; or source it.
#
# Lock names for status, queue and unlock come from the server: the held
# locks that "redlock status --json" lists (one object a line, "name"
# first), asked with the -u and TLS options already on the line, within
# 300ms to connect and 300ms a reply, and killed after 1s whatever
# happens, so a dead server costs at most a second. Names holding
# control characters are not offered, and neither are the names of free
# locks that only have waiters.

# _redlock_names CMD ARGS...: the held lock names, one a line.
_redlock_names()
{
	local cmd=$1
	shift
	timeout -k 1 1 "$cmd" --connect-timeout 300ms --reply-timeout 300ms \
	    "$@" status --json 2>/dev/null </dev/null |
	    sed -n 's/^ *{"name":"\(\([^"\\]\|\\["\\/]\)*\)",.*/\1/p' |
	    sed 's/\\\(["\\/]\)/\1/g'
}

_redlock()
{
	local cur prev words cword split=false
	if declare -F _init_completion >/dev/null; then
		_init_completion -s -n : || return
	else
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD - 1]}
	fi

	local durations='250ms 30s 5m 2h'
	local global='-u --url --connect-timeout --reply-timeout --sentinel-user
	    --sentinel-password --cacert --cacertdir --cert --key --sni
	    --insecure -h --help -V --version'
	local lockopts='-w --wait -n --no-wait --nonblock --nb -t --ttl --fair
	    -x -e --exclusive -s --shared --write --limit --waiter-timeout
	    --min-hold --replicas --pubsub -E --conflict-exit-code --label
	    --owner -q --quiet -v --verbose -h --help'

	# The subcommand, the global options before it (for the server the
	# names come from), the words after it that are not options, and
	# where "--" is (exec's COMMAND follows it).
	local i w sub= subi=0 dashdash=0 npos=0
	local -a conn=()
	for ((i = 1; i < cword; i++)); do
		w=${words[i]}
		if [[ -z $sub ]]; then
			case $w in
			-u | --url | --cacert | --cacertdir | --cert | --key | --sni | \
			    --sentinel-user | --sentinel-password)
				conn+=("$w" "${words[i + 1]}")
				((i++))
				;;
			--connect-timeout | --reply-timeout | --timeout) ((i++)) ;;
			--url=* | -u?* | --cacert=* | --cacertdir=* | --cert=* | \
			    --key=* | --sni=* | --sentinel-user=* | \
			    --sentinel-password=* | --insecure)
				conn+=("$w")
				;;
			-*) ;;
			*) sub=$w subi=$i ;;
			esac
		elif [[ $w == -- ]]; then
			dashdash=$i
			break
		elif ((npos == 0)) && _redlock_global_arg "$w"; then
			# A global option after the subcommand, before NAME.
			[[ $w == --connect-timeout || $w == --reply-timeout ||
			    $w == --timeout ]] || conn+=("$w" "${words[i + 1]}")
			((i++))
		elif _redlock_takes_arg "$sub" "$w"; then
			((i++))
		elif [[ $w != -* ]]; then
			((npos++))
		fi
	done

	if ((dashdash > 0)); then
		if declare -F _command_offset >/dev/null; then
			_command_offset $((dashdash + 1))
		else
			COMPREPLY=($(compgen -c -- "$cur"))
		fi
		return
	fi

	# The value of an option.
	case $prev in
	-w | --wait | -t | --ttl | --waiter-timeout | --min-hold | \
	    --kill-after | --max-hold | --connect-timeout | --reply-timeout | \
	    --timeout)
		_redlock_durations
		return
		;;
	--on-lost)
		COMPREPLY=($(compgen -W 'term kill ignore' -- "$cur"))
		return
		;;
	--pubsub)
		COMPREPLY=($(compgen -W 'auto sharded classic' -- "$cur"))
		return
		;;
	--cacert | --cert | --key | --metrics-file)
		if declare -F _filedir >/dev/null; then _filedir; else
			COMPREPLY=($(compgen -f -- "$cur")); fi
		return
		;;
	--cacertdir)
		if declare -F _filedir >/dev/null; then _filedir -d; else
			COMPREPLY=($(compgen -d -- "$cur")); fi
		return
		;;
	--pid)
		if declare -F _pids >/dev/null; then _pids; fi
		return
		;;
	-u | --url)
		COMPREPLY=($(compgen -W 'redis:// rediss:// unix:///
		    redis+sentinel://' -- "$cur"))
		compopt -o nospace 2>/dev/null
		return
		;;
	--limit | --replicas | -E | --conflict-exit-code | --owner | --sni | \
	    --sentinel-user | --sentinel-password | --label | -c | --command)
		return
		;;
	esac
	# --watch=INTERVAL, whether or not bash split the word at "=".
	if [[ $sub == queue && ( $prev == --watch && $split == true ||
	    $prev == = && ${words[cword - 2]} == --watch ) ]]; then
		_redlock_durations
		return
	fi

	if [[ -z $sub ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$global" -- "$cur"))
		else
			COMPREPLY=($(compgen -W 'exec lock unlock status queue log' \
			    -- "$cur"))
		fi
		return
	fi

	local opts
	case $sub in
	exec) opts="$lockopts -c --command -o --close --on-lost --kill-after
	    --max-hold --metrics-file" ;;
	lock) opts="$lockopts --keepalive --pid" ;;
	unlock) opts='--owner --force --pubsub -h --help' ;;
	status) opts='--json -h --help' ;;
	queue) opts='--json --watch --watch= -h --help' ;;
	log) opts='--json -n --lines --follow -f -h --help' ;;
	*) return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		[[ ${COMPREPLY-} == *= ]] && compopt -o nospace 2>/dev/null
		return
	fi
	case $sub in
	exec)
		((npos == 1)) && COMPREPLY=(--)
		;;
	unlock | status | queue | log)
		((npos == 0)) && _redlock_complete_names "${words[0]}"
		;;
	esac
}

# _redlock_takes_arg SUB WORD: WORD is an option of SUB that takes the
# next word as its value.
_redlock_takes_arg()
{
	case $1:$2 in
	exec:* | lock:*)
		case $2 in
		-w | --wait | -t | --ttl | --limit | --waiter-timeout | \
		    --min-hold | --replicas | -E | --conflict-exit-code | --owner | \
		    --label | --on-lost | --kill-after | --max-hold | \
		    --metrics-file | --pid | --pubsub | -c | --command)
			return 0 ;;
		esac
		;;
	unlock:--owner | unlock:--pubsub | log:-n | log:--lines) return 0 ;;
	esac
	return 1
}

# _redlock_global_arg WORD: WORD is a global option that takes the next
# word as its value (they may come after the subcommand, before NAME).
_redlock_global_arg()
{
	case $1 in
	-u | --url | --connect-timeout | --reply-timeout | --timeout | \
	    --cacert | --cacertdir | --cert | --key | --sni | --sentinel-user | \
	    --sentinel-password)
		return 0 ;;
	esac
	return 1
}

# Durations: the examples, or the units after the number typed so far.
_redlock_durations()
{
	if [[ $cur =~ ^[0-9]+(\.[0-9]*)?$ ]]; then
		COMPREPLY=("${cur}ms" "${cur}s" "${cur}m" "${cur}h")
	else
		COMPREPLY=($(compgen -W '250ms 30s 5m 2h' -- "$cur"))
	fi
}

# _redlock_complete_names CMD: held lock names starting with $cur, quoted
# for the shell (names may hold spaces and colons).
_redlock_complete_names()
{
	local cmd=$1 name
	[[ $cmd == */* || -z $cmd ]] || cmd=$(type -P "$cmd") || return
	[[ -x $cmd ]] || return
	COMPREPLY=()
	while IFS= read -r name; do
		[[ $name == "$cur"* ]] &&
		    COMPREPLY+=("$(printf '%q' "$name")")
	done < <(_redlock_names "$cmd" "${conn[@]}")
	if declare -F __ltrim_colon_completions >/dev/null; then
		__ltrim_colon_completions "$cur"
	fi
}

complete -F _redlock redlock
