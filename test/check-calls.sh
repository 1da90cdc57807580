#!/bin/sh
# check-calls.sh: no script key, argument or reply field is named by its
# position outside the code that lua/embed.sh generates from the scripts'
# headers.
# usage: check-calls.sh [DIR]   (DIR: the tree to check, by default this
#                                one; then copies of it with one mistake
#                                each, which must fail)
#
# In DIR/lua/*.lua, KEYS and ARGV appear only on a header's declaration
# lines (-- KEYS[N] NAME TEMPLATE text, -- ARGV[N] NAME text; -- KEYS
# none): bodies and comments use the names K_NAME and A_NAME. In
# DIR/lib/*.[ch], no args[DIGITS] or keys[DIGITS] (nor args[X + N]): a
# call's arguments and keys are set by their enum names
# (RL_<SCRIPT>_ARG_<NAME>, build/rl_scripts.h); and no reply position by
# number (nor X + N) to rl_elem_int, rl_elem_str, or rl_decode.c's elem
# and list: a reply is read by the names its script's RETURNS header
# gives (RL_RET_<SHAPE>_<FIELD>). Prints each offending line as
# FILE:LINE: TEXT; exits 1 if there is any.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)

# scan DIR: the offending lines of DIR; 1 if any.
scan() {
	(
		cd "$1"
		s=0
		awk '/^-- (KEYS|ARGV)\[[0-9]+\][ \t]/ { next }
		/^-- (KEYS|ARGV)[ \t]+none$/ { next }
		/(KEYS|ARGV)[ \t]*\[|#[ \t]*(KEYS|ARGV)|\((KEYS|ARGV)[,)]|= *(KEYS|ARGV)$/ {
			printf "%s:%d: %s\n", FILENAME, FNR, $0
			bad = 1
		}
		END { exit bad }' lua/*.lua || s=1
		awk '/(^|[^A-Za-z0-9_])(args|keys)\[([0-9]+|[^]]*[-+] *[0-9]+)\]/ {
			printf "%s:%d: %s\n", FILENAME, FNR, $0
			bad = 1
			next
		}
		/(^|[^A-Za-z0-9_])(rl_elem_int|rl_elem_str|elem|list)\([^,()]*, *([0-9]+|[^,)]*[-+] *[0-9]+) *[,)]/ {
			printf "%s:%d: %s\n", FILENAME, FNR, $0
			bad = 1
		}
		END { exit bad }' lib/*.c lib/*.h || s=1
		exit $s
	)
}

if [ $# -gt 0 ]; then
	scan "$1"
	exit
fi

failed=0
if scan "$root"; then
	echo "ok - lua/ and lib/ name every key, argument and reply position"
else
	echo "FAIL - lua/ or lib/ names a key, argument or reply field by its position"
	failed=1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# mistake WHAT FILE LINE: a copy of lua/ and lib/ with LINE added to
# FILE must fail, naming FILE and LINE.
mistake() {
	rm -rf "$work/lua" "$work/lib"
	cp -R "$root/lua" "$root/lib" "$work/"
	printf '%s\n' "$3" >>"$work/$2"
	n=$(wc -l <"$work/$2")
	if scan "$work" >"$work/out" 2>&1; then
		echo "FAIL - $1: not found"
		failed=1
	elif ! grep -qF -- "$2:$n: $3" "$work/out"; then
		echo "FAIL - $1: not named as $2:$n"
		sed 's/^/    /' "$work/out"
		failed=1
	else
		echo "ok - $1: $(cat "$work/out")"
	fi
}

mistake "a key by its number in a script" lua/renew.lua \
    "local k = KEYS[2]"
mistake "an argument by its number in a script" lua/renew.lua \
    "if ARGV[1] == '' then return 0 end"
mistake "a script's last key" lua/acquire.lua "local log = KEYS[#KEYS]"
mistake "KEYS[n] in a comment" lua/release.lua "-- see KEYS[3] above"
mistake "an argument by its number in lib/" lib/rl_kind.c \
    "	call->args[1] = owner;"
mistake "a key by its number in lib/" lib/rl_lock.c "	keys[0] = name;"
mistake "an argument by arithmetic on a position in lib/" lib/rl_kind.c \
    "	call->args[at + 1] = pid;"
mistake "a reply position by number in lib/" lib/rl_lock.c \
    "	long long size = rl_elem_int(r, 1, 0);"
mistake "a reply position by number, a string, in lib/" lib/rl_decode.c \
    "	a->owner = rl_elem_str(r, 2);"
mistake "a reply position by arithmetic in lib/" lib/rl_decode.c \
    "	p->pidns = rl_elem_str(e, first + 1);"
mistake "a reply's array by number in lib/" lib/rl_decode.c \
    "	st->list = list(r, 13, &st->readers);"
exit $failed
