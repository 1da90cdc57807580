# bash completion for redlock(1). Installed by make install into
# bash-completion's completionsdir as "redlock"; or source it.
#
# The subcommands and options, and what each option's value is, come
# from "redlock --complete [SUBCOMMAND]" (one option a line: spelling,
# kind of value, description), asked once per shell session: nothing
# here lists them.
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

# "CMD --complete [SUB]", once per shell session for each CMD and SUB.
declare -gA _redlock_cache 2>/dev/null
_redlock_list()
{
	local key="$1 ${2-}"
	if [[ -z ${_redlock_cache[$key]+set} ]]; then
		_redlock_cache[$key]=$("$1" --complete ${2:+"$2"} 2>/dev/null \
		    </dev/null)
	fi
	printf '%s\n' "${_redlock_cache[$key]}"
}

# _redlock_load CMD [SUB]: the listing into KIND (option: kind of its
# value), OFFER (the options to offer) and, without SUB, SUBS.
_redlock_load()
{
	local line w k d
	# Tabs are blanks to read: the empty kind of a flag would vanish.
	while IFS= read -r line; do
		w=${line%%$'\t'*} d=${line#*$'\t'}
		k=${d%%$'\t'*} d=${d#*$'\t'}
		[[ -n $w ]] || continue
		if [[ $w != -* ]]; then
			subs+=("$w")
			continue
		fi
		kind[$w]=$k
		[[ -n $d ]] || continue
		offer+=("$w")
		[[ $k == \[*\] ]] && offer+=("$w=")
	done < <(_redlock_list "$@")
}

# _redlock_value KIND: complete the value of an option of that kind.
_redlock_value()
{
	case $1 in
	DURATION) _redlock_durations ;;
	FILE)
		if declare -F _filedir >/dev/null; then _filedir; else
			COMPREPLY=($(compgen -f -- "$cur")); fi
		;;
	DIR)
		if declare -F _filedir >/dev/null; then _filedir -d; else
			COMPREPLY=($(compgen -d -- "$cur")); fi
		;;
	PID) if declare -F _pids >/dev/null; then _pids; fi ;;
	URL)
		COMPREPLY=($(compgen -W 'redis:// rediss:// unix:///
		    redis+sentinel://' -- "$cur"))
		compopt -o nospace 2>/dev/null
		;;
	*\|*) COMPREPLY=($(compgen -W "${1//|/ }" -- "$cur")) ;;
	esac
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

	local cmd=${words[0]}
	[[ $cmd == */* || -z $cmd ]] || cmd=$(type -P "$cmd") || return
	[[ -x $cmd ]] || return
	local i w k sub= dashdash=0 npos=0
	local -A kind=() gkind=()
	local -a offer=() subs=() goffer=() conn=()
	_redlock_load "$cmd"
	for w in "${!kind[@]}"; do gkind[$w]=${kind[$w]}; done
	goffer=("${offer[@]}")

	# The subcommand, the global options before it (for the server the
	# names come from), the words after it that are not options, and
	# where "--" is (exec's COMMAND follows it).
	for ((i = 1; i < cword; i++)); do
		w=${words[i]}
		if [[ -z $sub ]]; then
			if [[ $w != -* ]]; then
				sub=$w
				kind=() offer=()
				_redlock_load "$cmd" "$sub"
				continue
			fi
			_redlock_conn "$w" "${words[i + 1]}" || ((i++))
		elif [[ $w == -- ]]; then
			dashdash=$i
			break
		elif [[ -n ${kind[$w]} && ${kind[$w]} != \[*\] ]]; then
			((i++))
		elif ((npos == 0)) && [[ -z ${kind[$w]+set} &&
		    -n ${gkind[$w]} && ${gkind[$w]} != \[*\] ]]; then
			# A global option after the subcommand, before NAME.
			_redlock_conn "$w" "${words[i + 1]}"
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

	# The value of an option: --opt VALUE, or --opt=VALUE (split).
	k=
	if [[ $prev == -* ]]; then
		if [[ -n $sub && -n ${kind[$prev]+set} ]]; then
			k=${kind[$prev]}
		elif [[ -z $sub || npos -eq 0 ]]; then
			k=${gkind[$prev]-}
		fi
		if [[ $k == \[*\] && $split == true ]]; then
			_redlock_value "${k:1:-1}"
			return
		elif [[ $k != \[*\] ]] && [[ -n $k ]]; then
			_redlock_value "$k"
			return
		fi
	fi

	if [[ -z $sub ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "${goffer[*]}" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "${subs[*]}" -- "$cur"))
		fi
		return
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "${offer[*]}" -- "$cur"))
		[[ ${COMPREPLY-} == *= ]] && compopt -o nospace 2>/dev/null
		return
	fi
	case $sub in
	exec)
		((npos == 1)) && COMPREPLY=(--)
		;;
	unlock | status | queue | log)
		((npos == 0)) && _redlock_complete_names "$cmd"
		;;
	esac
}

# _redlock_conn WORD NEXT: a global option (gkind) as the names' query
# needs it into conn: 0 when NEXT is not its value, 1 when it is.
_redlock_conn()
{
	local w=$1 k
	if [[ -n ${gkind[$w]+set} ]]; then
		k=${gkind[$w]}
		case $k in
		'' | \[*\]) [[ $w == --help || $w == -h || $w == --version ||
		    $w == -V ]] || conn+=("$w")
			return 0 ;;
		DURATION) return 1 ;;
		esac
		conn+=("$w" "$2")
		return 1
	fi
	# --url=URL, -uURL.
	k=${w%%=*}
	[[ $w == --*=* ]] || k=${w:0:2}
	[[ -n ${gkind[$k]+set} && ${gkind[$k]} != DURATION ]] &&
	    conn+=("$w")
	return 0
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
