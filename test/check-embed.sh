#!/bin/sh
# check-embed.sh: lua/embed.sh on copies of lua/ with one mistake each.
# usage: check-embed.sh
#
# Each case copies lua/, appends a function of its own to the prelude
# (rl_check_a, with a blank line inside, then rl_check_b, which only
# rl_check_a uses) and adds a script that calls rl_check_a, then puts the
# mistake in and runs embed.sh on the copy, as make does. Proves that:
#  - the sources as they are, and a blank line inside a prelude function,
#    embed, the function whole and what it uses after it;
#  - a syntax error in a script or a prelude function, an `end` too many
#    in a script, and in the prelude an inner `end` at column 0 (the
#    function's own indented), a function without its `end` at column 0
#    and an `end` at column 0 too many each fail the build, with a message
#    naming the file and line of the mistake, and leave no output;
#  - without a Lua 5.1 compiler the build fails and says how to get one.
# Prints one line per case and exits 1 if any failed.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

# setup: a fresh copy of lua/ in $work/lua with the fixture added; sets
# $base, the prelude's line count before it, and $script.
setup() {
	rm -rf "$work/lua" "$work/out.h" "$work/err"
	mkdir "$work/lua"
	cp "$root"/lua/*.lua "$work/lua/"
	base=$(wc -l <"$work/lua/prelude.lua")
	cat >>"$work/lua/prelude.lua" <<'LUA'

-- check-embed: a function with a blank line inside,
-- and a definition it uses that no script names.
local function rl_check_a(x)
  local y = x

  if y then
    return rl_check_b(y)
  end
  return 0
end

local function rl_check_b(y)
  return y + 1
end
LUA
	script=lua/check_embed.lua
	printf '%s\n' '-- check-embed: a script of the test.' \
	    'local r = rl_check_a(1)' 'return r' >"$work/$script"
}

# embed_in DIR OUT [LUAC]: embed.sh as make runs it, in DIR, into OUT
# (with LUAC as its compiler when given); its messages in $work/err.
embed_in() {
	(
		cd "$1"
		out=$2
		LUAC=${3:-${LUAC:-luac5.1}}
		export LUAC
		set --
		for f in lua/*.lua; do
			[ "$f" = lua/prelude.lua ] || set -- "$@" "$f"
		done
		"$root/lua/embed.sh" "$out" lua/prelude.lua "$@"
	) 2>"$work/err"
}

# embed [LUAC]: embed_in on the copy, into $work/out.h.
embed() { embed_in "$work" out.h "$@"; }

pass() { echo "ok - $1"; }
fail() {
	echo "FAIL - $1: $2"
	sed 's/^/    /' "$work/err"
	failed=1
}

# refused NAME TEXT [LUAC]: embed failed, with TEXT among its messages,
# and wrote nothing.
refused() {
	what=$1
	text=$2
	shift 2
	if embed "$@"; then
		fail "$what" "embedded, but should have failed"
	elif ! grep -qF -- "$text" "$work/err"; then
		fail "$what" "no message with: $text"
	elif ls "$work"/out.h* >/dev/null 2>&1; then
		fail "$what" "left $(ls "$work"/out.h*)"
	else
		pass "$what: $(grep -F -- "$text" "$work/err" | sed 's/^ *//')"
	fi
}

# line N TEXT: the prelude copy's line N (counted from $base) replaced.
line() {
	awk -v n=$((base + $1)) -v t="$2" 'NR == n { $0 = t } { print }' \
	    "$work/lua/prelude.lua" >"$work/p" && mv "$work/p" "$work/lua/prelude.lua"
}

setup
rm "$work/$script"
sed -i "$((base + 1)),\$d" "$work/lua/prelude.lua"
if ! embed_in "$root" "$work/real.h" || ! embed; then
	fail "the sources as they are" "did not embed"
elif ! cmp -s "$work/real.h" "$work/out.h"; then
	fail "the sources as they are" "embedded differently from a copy"
else
	pass "the sources as they are embed, the same from a copy"
fi

setup
want=$(sed -n "$((base + 4)),\$p" "$work/lua/prelude.lua" | jq -Rs . |
    sed 's/^"//; s/"$//')
if ! embed; then
	fail "blank line inside a function" "did not embed"
elif ! sed -n '/rl_script_check_embed =/,/^};/p' "$work/out.h" |
    grep -qF -- "$want"; then
	fail "blank line inside a function" "rl_check_a or rl_check_b not whole in out.h"
else
	pass "a blank line inside a prelude function: embedded whole, with what it uses"
fi

setup
printf '%s\n' '-- check-embed: a syntax error on line 2.' 'local r = = 1' \
    >"$work/$script"
refused "a syntax error in a script" \
    "$script:2: unexpected symbol near '='"

setup
line 7 '  if y them'
refused "a syntax error in a prelude function" \
    "lua/prelude.lua:$((base + 7)): 'then' expected near 'them'"

setup
printf '%s\n' 'local r = rl_check_a(1)' 'end' 'return r' >"$work/$script"
refused "an end too many in a script" \
    "$script:2: '<eof>' expected near 'end'"

setup
line 9 'end'
line 11 '  end'
refused "an inner end at column 0, the function's own indented" \
    "lua/prelude.lua:$((base + 10)): outside any definition"

setup
line 11 '  end'
refused "a function without its end at column 0" \
    "lua/prelude.lua:$((base + 13)): a definition inside rl_check_a (line $((base + 4))): its closing end is missing"

setup
line 12 'end'
refused "an end at column 0 too many" \
    "lua/prelude.lua:$((base + 12)): an end at column 0 outside any function"

setup
refused "no Lua 5.1 compiler" \
    "install it with: make deps (Debian: apt-get install lua5.1)" \
    /nonexistent/luac5.1

exit $failed
