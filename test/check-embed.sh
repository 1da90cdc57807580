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
#  - without a Lua 5.1 compiler the build fails and says how to get one;
#  - a script header's KEYS and ARGV lines: one named twice or not at all,
#    a name used twice, a key template of no known form, or a publish
#    argument that is not the last fail the build, naming the line;
#  - a script header's RETURNS lines are not embedded; a reply field
#    named twice, an element of no known form, a shape without its
#    closing brace or given twice, a field at another position (or a
#    value other) than in another script with that shape, and a script
#    without RETURNS fail the build, naming the line;
#  - lib/ compiled against the header generated from the copy: a renamed
#    argument, and one added, fail to compile; two arguments swapped in
#    the header (names and positions together) compile, and C and Lua
#    both follow the header; a reply field renamed fails to compile, and
#    two swapped compile, C following the header.
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
	    '-- RETURNS  result  number' 'local r = rl_check_a(1)' 'return r' \
	    >"$work/$script"
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
printf '%s\n' '-- check-embed: a syntax error on line 3.' \
    '-- RETURNS  result  number' 'local r = = 1' >"$work/$script"
refused "a syntax error in a script (its RETURNS line counted)" \
    "$script:3: unexpected symbol near '='"

setup
line 7 '  if y them'
refused "a syntax error in a prelude function" \
    "lua/prelude.lua:$((base + 7)): 'then' expected near 'them'"

setup
printf '%s\n' '-- RETURNS  result  number' 'local r = rl_check_a(1)' 'end' \
    'return r' >"$work/$script"
refused "an end too many in a script" \
    "$script:3: '<eof>' expected near 'end'"

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

# header SCRIPT FROM TO: in the copy's lua/SCRIPT.lua, the header line
# FROM (a sed pattern) replaced by TO.
header() {
	sed -i "s/^$2\$/$3/" "$work/lua/$1.lua"
	grep -qxF -- "$(printf '%b\n' "$3" | head -n 1)" "$work/lua/$1.lua" ||
	    { echo "check-embed: no line $2 in lua/$1.lua" >&2; exit 2; }
}

# at SCRIPT TEXT: the copy's line number of TEXT in lua/SCRIPT.lua.
at() { grep -nF -- "$2" "$work/lua/$1.lua" | head -n 1 | cut -d: -f1; }

setup
header renew '-- ARGV\[2\]  owner.*' '-- ARGV[1]  owner  owner token'
refused "an argument's number given twice (a swap half done)" \
    "lua/renew.lua:$(at renew '-- ARGV[1]  owner'): ARGV[1] named twice"

setup
header renew '-- ARGV\[2\]  owner.*' '-- ARGV[3]  owner  owner token'
refused "an argument left out" \
    "lua/renew.lua:1: ARGV[2] is not named, though ARGV[3] is"

setup
header renew '-- ARGV\[2\]  owner.*' '-- ARGV[2]  lease  owner token'
refused "a name used twice" "ARGV name lease used twice"

setup
header renew '-- ARGV\[2\]  owner.*' '-- ARGV[2]  Owner token'
refused "an argument without a name" "ARGV[2] has no name"

setup
header renew '-- KEYS\[2\]  holder.*' \
    '-- KEYS[2]  holder  redlock_holder:NAME  hash'
refused "a key template of no known form" \
    "KEYS[2]: template redlock_holder:NAME is not NAME"

setup
header release '-- ARGV\[7\]  publish .*' '-- ARGV[6]  publish  PUBLISH'
header release '-- ARGV\[6\]  flags .*' '-- ARGV[7]  flags  flags'
refused "a publish argument before another" \
    "lua/release.lua:$(at release '-- ARGV[6]  publish'): ARGV[6] publish is not the last argument"

setup
if ! embed; then
	fail "RETURNS lines" "did not embed"
elif sed -n '/^#ifdef RL_SCRIPTS_DEFINE/,$p' "$work/out.h" | grep -q RETURNS; then
	fail "RETURNS lines" "embedded in a script"
else
	pass "RETURNS lines: read, and not embedded in the scripts"
fi

setup
header release '-- RETURNS  nested     {1, holds}' \
    '-- RETURNS  nested     {1, holds, holds}'
refused "a reply field named twice" \
    "lua/release.lua:$(at release '-- RETURNS  nested'): RETURNS nested: holds named twice"

setup
header release '-- RETURNS  not_held   {0, exists}' \
    '-- RETURNS  not_held   {0, Exists}'
refused "a reply element of no known form" \
    "RETURNS not_held: element 2 (Exists) is not a name"

setup
header leave '-- RETURNS  left  {removed, position, nopub}' \
    '-- RETURNS  left  {removed, position, nopub'
refused "a reply shape without its closing brace" \
    "lua/leave.lua:$(at leave '-- RETURNS  left'): RETURNS left: no closing }"

setup
header release '-- RETURNS  nested     {1, holds}' \
    '-- RETURNS  nested     {1, holds}\n-- RETURNS  nested     {1}'
refused "a reply shape given twice in a script" \
    "RETURNS nested: a shape given twice"

setup
header rw_release '-- RETURNS  released   {2, nopub, until}' \
    '-- RETURNS  released   {2, until, nopub}'
refused "a reply field at another position than in another script" \
    "lua/rw_release.lua:$(at rw_release '-- RETURNS  released'): RETURNS released: until at position 1, but at 2 at lua/permit_release.lua"

setup
header renew '-- RETURNS  gone     0' '-- RETURNS  gone     3'
refused "a reply value other than in another script" \
    "RETURNS gone: value 3, but 0 at lua/permit_renew.lua"

setup
sed -i '/^-- RETURNS/d' "$work/lua/runid.lua"
refused "a script without RETURNS" \
    "lua/runid.lua:1: no RETURNS header"

# compiles WHAT: lib/ compiled against the copy's generated header; its
# messages in $work/err.
compiles() {
	rm -rf "$work/inc"
	mkdir "$work/inc"
	embed || { fail "$1" "did not embed"; return 1; }
	mv "$work/out.h" "$work/inc/rl_scripts.h"
	${CC:-cc} -std=c11 -D_GNU_SOURCE -fsyntax-only -I"$work/inc" \
	    -I"$root/lib" "$root"/lib/rl_kind.c "$root"/lib/rl_lock.c \
	    "$root"/lib/rl_decode.c \
	    2>"$work/err"
}

# uncompiled WHAT TEXT: lib/ does not compile, with TEXT in the messages.
uncompiled() {
	if compiles "$1"; then
		fail "$1" "compiled, but should have failed"
	elif [ -f "$work/inc/rl_scripts.h" ] &&
	    ! grep -qF -- "$2" "$work/err"; then
		fail "$1" "no message with: $2"
	elif [ -f "$work/inc/rl_scripts.h" ]; then
		pass "$1: $(grep -F -- "$2" "$work/err" | head -n 1 |
		    sed 's/^.*error: //')"
	fi
}

setup
if compiles "lib/ against the header of the sources"; then
	pass "lib/ compiles against the header of the sources"
else
	fail "lib/ against the header of the sources" "did not compile"
fi

setup
header renew '-- ARGV\[1\]  lease .*' '-- ARGV[1]  ttl  lease in ms'
uncompiled "an argument renamed" "RL_RENEW_ARG_LEASE"

setup
header renew '-- ARGV\[2\]  owner .*' \
    '-- ARGV[2]  owner  owner token\n-- ARGV[3]  extra  an argument more'
uncompiled "an argument added" "the arguments of RENEW changed"

setup
header renew '-- ARGV\[1\]  lease .*' '-- ARGV[2]  lease  lease in ms'
header renew '-- ARGV\[2\]  owner .*' '-- ARGV[1]  owner  owner token'
if ! compiles "two arguments swapped"; then
	fail "two arguments swapped" "did not compile"
elif ! grep -q 'RL_RENEW_ARG_OWNER,$' "$work/inc/rl_scripts.h" ||
    ! sed -n '/rl_script_renew =/,/^};/p' "$work/inc/rl_scripts.h" |
    grep -qF 'local A_owner, A_lease = ARGV[1], ARGV[2]'; then
	fail "two arguments swapped" "C or Lua does not follow the header"
else
	pass "two arguments swapped in the header: compiled, C and Lua follow it"
fi

setup
header leave '-- RETURNS  left  {removed, position, nopub}' \
    '-- RETURNS  left  {removed, place, nopub}'
uncompiled "a reply field renamed" "RL_RET_LEFT_POSITION"

setup
header leave '-- RETURNS  left  {removed, position, nopub}' \
    '-- RETURNS  left  {removed, nopub, position}'
if ! compiles "two reply fields swapped"; then
	fail "two reply fields swapped" "did not compile"
elif ! grep -q 'RL_RET_LEFT_POSITION = 2' "$work/inc/rl_scripts.h"; then
	fail "two reply fields swapped" "C does not follow the header"
else
	pass "two reply fields swapped in the header: compiled, C follows it"
fi

exit $failed
