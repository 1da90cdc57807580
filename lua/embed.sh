#!/bin/sh
# embed.sh: turn lua/*.lua into a C include of rl_script structs, each
# the prelude's definitions that the script uses followed by the script,
# with the SHA-1 that EVALSHA names it by, computed here at build time;
# each script with an identity of its own (enum rl_script_id), defined
# once, where RL_SCRIPTS_DEFINE is (lib/rl_scripts.c), with the list of
# their SHA-1s (rl_script_shas).
# Every call of a script runs its prelude part again (Lua makes each
# function anew), so a script carries only what it needs.
#
# The prelude is read by top-level definition: `local function NAME(` at
# column 0 up to its `end` at column 0 (blank lines inside are its own),
# or `local NAME =` on one line (or, ending in `{` or `(`, up to the `}`
# or `)` at column 0), each with the comment lines right above it. Any
# other line outside a definition but comments and blank lines fails the
# build, naming the prelude's line: it is a stray `end`, or follows an
# inner `end` put at column 0. Then `luac5.1 -p` (Redis runs Lua 5.1)
# checks the prelude whole and every script as embedded; a syntax error
# fails the build, named by file and line of lua/. LUAC names another
# Lua 5.1 compiler; without one, the build fails and says how to get it.
#
# A script's header names its keys and arguments, one line each, at
# column 0 (the text may go on in comment lines below):
#   -- KEYS[N]  NAME  TEMPLATE  text
#   -- ARGV[N]  NAME  text
# N counts from 1 with none left out; NAME is [a-z][a-z0-9_]*, once per
# script for keys and once for arguments; TEMPLATE is the key made of
# the lock's name: NAME itself, PREFIX:{NAME}, {NAME} or {NAME}:SUFFIX
# (OWNER in SUFFIX stands for the owner token; a NAME with a brace is
# taken as it is, without braces added: rl_key). Every key is passed on
# every call: what a call does is said by its arguments, not by how many
# keys it passes. An argument named publish (the command that wakes
# waiters, PUBLISH or SPUBLISH) is the last one: the round sends the
# call again with SPUBLISH there where channels are sharded. From these,
# for script S (upper case S in C names):
#  - in C, enum rl_S_key { RL_S_KEY_NAME..., RL_S_KEYS } and enum
#    rl_S_arg { RL_S_ARG_NAME..., RL_S_ARGS }, the templates in key order
#    split into their parts (struct rl_template: its form, the prefix or
#    the suffix, and what follows OWNER), and in its struct rl_script the
#    counts, the templates and the position of its publish argument (-1:
#    none). rl_call_make in
#    lib/rl_kind.c fills the keys; callers set each argument by its enum
#    name, and state how many they set (RL_CALL_ARGS): a renamed
#    argument, or one added or taken away, does not compile, and a
#    reordered one is still set where the script reads it;
#  - in Lua, `local K_NAME, ... = KEYS[1], ...` and `local A_NAME, ... =
#    ARGV[1], ...` put before the script as embedded: script bodies use
#    these names, never KEYS[N] or ARGV[N] (test/check-calls.sh).
# A script's header also gives the shapes of its replies, one RETURNS
# line each (its elements may go on in comment lines below, up to the
# closing brace):
#   -- RETURNS  SHAPE  {ELEMENT, ...}
#   -- RETURNS  SHAPE  VALUE
# SHAPE is [a-z][a-z0-9_]*, once per script; an ELEMENT is a name (of the
# field at that position, once per shape), NAME... last (the rest of the
# array from there), an integer (a verdict: the shape's value when
# first), nil, or nil x N (N positions unused); VALUE an integer, or
# string, number or false (a reply that is not an array). Every script
# has one. From them, in C, enum rl_ret_SHAPE { RL_RET_SHAPE_NAME = its
# position... } and #define RL_RET_SHAPE its value: a shape of one name
# is the same in every script that gives it (the decoders read the
# replies of acquire, rw_acquire and permit_acquire alike), and a name at
# another position there, or another value, fails the build. RETURNS
# lines are not embedded: the C side reads them, the server has no use
# for them, and a script's text and SHA-1 stay what its code is.
# A header line that breaks these rules fails the build, named by its
# file and line.
# usage: embed.sh OUTPUT PRELUDE.lua SCRIPT.lua...
#        embed.sh -p PRELUDE.lua SCRIPT.lua   (SCRIPT as embedded, its
#        prelude part, names and body, on standard output: for the tests
#        that run a script with EVAL; not checked by luac)
set -eu
out=$1
prelude=$2
shift 2
tmp=$out.tmp
[ "$out" != -p ] || tmp=$(mktemp)
luac=${LUAC:-luac5.1}
me=lua/embed.sh
trap 'rm -f "$tmp" "$tmp.src" "$tmp.map" "$tmp.err" "$tmp.c" "$tmp.lua" \
    "$tmp.d" "$tmp.r" "$tmp.r.1" "$tmp.defs" "$tmp.ids"' EXIT

if ! "$luac" -p - </dev/null >/dev/null 2>&1 ||
    ! "$luac" -v 2>&1 | grep -q '^Lua 5\.1'; then
	echo "$me: no Lua 5.1 compiler ($luac) to check the scripts' syntax;" \
	    "install it with: make deps (Debian: apt-get install lua5.1)," \
	    "or name one with LUAC=" >&2
	exit 1
fi

# needed PRELUDE SCRIPT MAP: the prelude's definitions that SCRIPT uses,
# or that a definition it uses uses (its comment lines count), in the
# prelude's order, each followed by a blank line; and in MAP, for each
# line printed, the prelude's line it comes from (FILE:LINE).
needed() {
	awk -v script="$2" -v map="$3" '
	function uses(text, n,    re) {
		re = "(^|[^A-Za-z0-9_])" n "([^A-Za-z0-9_]|$)"
		return text ~ re
	}
	function fail(line, msg) {
		printf "%s:%d: %s\n", FILENAME, line, msg >"/dev/stderr"
		failed = 1
		exit 1
	}
	function start(kind,    s) {
		s = $0
		sub(/^local (function )?/, "", s)
		match(s, /^[A-Za-z_][A-Za-z0-9_]*/)
		n++
		name[n] = substr(s, 1, RLENGTH)
		first[n] = comment ? comment : FNR
		text[n] = (comment ? ctext "\n" : "") $0
		defline = FNR
		open = kind
		comment = 0
	}
	BEGIN {
		while ((getline line < script) > 0)
			body = body line "\n"
	}
	# Inside a definition: up to its end at column 0, or an error when
	# another definition starts first.
	open {
		if (/^local (function )?[A-Za-z_]/)
			fail(FNR, "a definition inside " name[n] " (line " \
			    defline "): its closing " open " is missing," \
			    " or not at column 0")
		text[n] = text[n] "\n" $0
		if ((open == "end" && $0 ~ /^end[ \t]*(--.*)?$/) ||
		    (open != "end" && substr($0, 1, 1) == open)) {
			last[n] = FNR
			open = ""
		}
		next
	}
	/^[ \t]*--/ {
		if (!comment) {
			comment = FNR
			ctext = $0
		} else
			ctext = ctext "\n" $0
		next
	}
	/^[ \t]*$/ { comment = 0; next }
	/^local function [A-Za-z_][A-Za-z0-9_]*[ \t]*\(/ { start("end"); next }
	/^local [A-Za-z_][A-Za-z0-9_]*[ \t]*=/ {
		if (/\{[ \t]*$/)
			start("}")
		else if (/\([ \t]*$/)
			start(")")
		else {
			start("")
			last[n] = FNR
		}
		next
	}
	/^end/ {
		fail(FNR, "an end at column 0 outside any function: one end" \
		    " too many, or an inner end at column 0 that closed its" \
		    " function early")
	}
	{
		fail(FNR, "outside any definition (local function NAME(" \
		    " ... end, or local NAME =): after an inner end at" \
		    " column 0 that closed its function early?")
	}
	END {
		if (failed)
			exit 1
		if (open)
			fail(defline, name[n] " has no closing " open \
			    " at column 0")
		for (i = 1; i <= n; i++)
			want[i] = uses(body, name[i])
		do {
			more = 0
			for (i = 1; i <= n; i++) {
				if (!want[i])
					continue
				for (j = 1; j <= n; j++)
					if (!want[j] && j != i &&
					    uses(text[i], name[j])) {
						want[j] = 1
						more = 1
					}
			}
		} while (more)
		printf "" >map
		for (i = 1; i <= n; i++) {
			if (!want[i])
				continue
			printf "%s\n\n", text[i]
			for (l = first[i]; l <= last[i]; l++)
				print FILENAME ":" l >map
			print FILENAME ":" last[i] >map
		}
	}' "$1"
}

# header SCRIPT NAME CFILE LUAFILE DFILE RFILE: the keys, arguments and
# replies named in SCRIPT's header: the C enums and counts into CFILE (the
# struct's fields last, as #define lines), the key templates split into
# their parts into DFILE, the Lua locals into LUAFILE, and one line per
# reply position or value (RETURNS) into RFILE for returns() below.
header() {
	awk -v name="$2" -v cfile="$3" -v lfile="$4" -v dfile="$5" \
	    -v rfile="$6" '
	function fail(msg) {
		printf "%s:%d: %s\n", FILENAME, FNR, msg >"/dev/stderr"
		failed = 1
		exit 1
	}
	function decl(kind, rest,    n, id) {
		n = rest
		sub(/\].*/, "", n)
		if (n !~ /^[1-9][0-9]*$/)
			fail(kind "[" n "]: not a number from 1")
		sub(/^[0-9]+\][ \t]*/, "", rest)
		id = rest
		sub(/[ \t].*/, "", id)
		if (id !~ /^[a-z][a-z0-9_]*$/)
			fail(kind "[" n "] has no name ([a-z][a-z0-9_]*) first")
		if ((kind, n) in at)
			fail(kind "[" n "] named twice")
		if ((kind, id) in seen)
			fail(kind " name " id " used twice")
		at[kind, n] = id
		seen[kind, id] = n
		if (n + 0 > count[kind])
			count[kind] = n + 0
		line[kind, n] = FNR
		sub(/^[a-z0-9_]+[ \t]*/, "", rest)
		return n
	}
	# positions(V, WORD, L): the enum of V'"'"'s (KEYS or ARGV) positions,
	# RL_<SCRIPT>_<WORD>_<NAME> and their count RL_<SCRIPT>_<WORD>S, into
	# CFILE, and the Lua locals L<name> bound to them into LFILE.
	function positions(v, word, l,    i, s) {
		if (count[v] == 0) {
			printf "enum { RL_%s_%sS = 0 };\n", up, word >cfile
			return
		}
		printf "enum rl_%s_%s {", name, tolower(word) >cfile
		for (i = 1; i <= count[v]; i++)
			printf "\n\tRL_%s_%s_%s,", up, word, \
			    toupper(at[v, i]) >cfile
		printf "\n\tRL_%s_%sS\n};\n", up, word >cfile
		s = "local"
		for (i = 1; i <= count[v]; i++)
			s = s (i > 1 ? "," : "") " " l at[v, i]
		s = s " ="
		for (i = 1; i <= count[v]; i++)
			s = s (i > 1 ? "," : "") " " v "[" i "]"
		print s >lfile
	}
	# template(T): key template T split, as a struct rl_template: its
	# form, and the prefix, or the suffix (before OWNER) and what comes
	# after OWNER.
	function template(t,    s, o) {
		if (t == "NAME")
			return "{ RL_TEMPLATE_NAME, NULL, NULL }"
		if (t !~ /^\{/) {
			sub(/:\{NAME\}$/, "", t)
			return "{ RL_TEMPLATE_PREFIX, \"" t "\", NULL }"
		}
		if (t == "{NAME}")
			return "{ RL_TEMPLATE_SUFFIX, NULL, NULL }"
		s = substr(t, 8)
		if ((o = index(s, "OWNER")) == 0)
			return "{ RL_TEMPLATE_SUFFIX, \"" s "\", NULL }"
		return "{ RL_TEMPLATE_OWNER, \"" substr(s, 1, o - 1) "\", \"" \
		    substr(s, o + 5) "\" }"
	}
	# A RETURNS header line (its shape named) fails with MSG.
	function badret(msg) {
		FNR = retline
		fail("RETURNS " shape ": " msg)
	}
	# The elements of shape SHAPE (RET, from its { to its }): a name
	# (the field at that position), NAME... last (the rest, from that
	# position on), a number (a verdict: the shape'"'"'s value when first),
	# nil, or nil x N; into RFILE, one line each named.
	function elements(   body, n, i, e, pos, f, seenf) {
		body = ret
		sub(/^\{/, "", body)
		sub(/\}.*/, "", body)
		n = split(body, el, ",")
		pos = 0
		split("", seenf)
		for (i = 1; i <= n; i++) {
			e = el[i]
			gsub(/^[ \t]+|[ \t]+$/, "", e)
			if (e ~ /^-?[0-9]+$/) {
				if (i == 1)
					print "value", shape, e, where >rfile
				pos++
				continue
			}
			if (e == "nil") {
				pos++
				continue
			}
			if (e ~ /^nil x [1-9][0-9]*$/) {
				pos += substr(e, 7) + 0
				continue
			}
			f = e
			if (e ~ /^[a-z][a-z0-9_]*\.\.\.$/) {
				if (i != n)
					badret(e " is not the last element")
				sub(/\.\.\.$/, "", f)
			} else if (e !~ /^[a-z][a-z0-9_]*$/)
				badret("element " i " (" e ") is not a name " \
				    "([a-z][a-z0-9_]*), NAME..., a number, nil " \
				    "or nil x N")
			if (f in seenf)
				badret(f " named twice")
			seenf[f] = 1
			print "field", shape, f, pos, where >rfile
			pos++
		}
		if (n == 0 || body ~ /^[ \t]*$/)
			badret("no elements")
		inret = 0
	}
	inret {
		t = substr($0, 3)
		sub(/\}.*/, "", t)
		if ($0 !~ /^--[ \t]/ || t ~ /[^a-z0-9_ ,.\t-]/)
			badret("no closing }: line " FNR " goes on with" \
			    " other text")
		ret = ret " " substr($0, 3)
		if (index($0, "}"))
			elements()
		next
	}
	/^-- RETURNS/ {
		rest = substr($0, 11)
		retline = FNR
		where = FILENAME ":" FNR
		shape = "?"
		if (rest !~ /^[ \t]/)
			badret("not -- RETURNS  SHAPE  {...} or VALUE")
		sub(/^[ \t]+/, "", rest)
		shape = rest
		sub(/[ \t].*/, "", shape)
		if (shape !~ /^[a-z][a-z0-9_]*$/)
			badret("no shape name ([a-z][a-z0-9_]*) first")
		if (shape in shapes)
			badret("a shape given twice")
		shapes[shape] = 1
		nret++
		sub(/^[a-z0-9_]+[ \t]*/, "", rest)
		if (substr(rest, 1, 1) == "{") {
			ret = rest
			inret = 1
			if (index(rest, "}"))
				elements()
			next
		}
		v = rest
		sub(/[ \t].*/, "", v)
		if (v ~ /^-?[0-9]+$/)
			print "value", shape, v, where >rfile
		else if (v != "string" && v != "number" && v != "false")
			badret(v " is not {...}, an integer, string, number" \
			    " or false")
		next
	}
	/^-- KEYS\[/ {
		rest = substr($0, 9)
		n = decl("KEYS", rest)
		sub(/^[0-9]+\][ \t]*[a-z0-9_]+[ \t]*/, "", rest)
		t = rest
		sub(/[ \t].*/, "", t)
		if (t != "NAME" && t !~ /^[A-Za-z0-9_]+:\{NAME\}$/ &&
		    t !~ /^\{NAME\}(:[A-Za-z0-9_:]+)?$/)
			fail("KEYS[" n "]: template " t " is not NAME," \
			    " PREFIX:{NAME}, {NAME} or {NAME}:SUFFIX")
		tmpl[n] = t
		next
	}
	/^-- ARGV\[/ { decl("ARGV", substr($0, 9)); next }
	END {
		if (failed)
			exit 1
		if (inret)
			badret("no closing }")
		if (nret == 0) {
			FNR = 1
			fail("no RETURNS header: the shapes of its replies")
		}
		up = toupper(name)
		for (k = 0; k < 2; k++) {
			kind = k ? "ARGV" : "KEYS"
			for (i = 1; i <= count[kind]; i++)
				if (!((kind, i) in at)) {
					FNR = 1
					fail(kind "[" i "] is not named, " \
					    "though " kind "[" count[kind] "] is")
				}
		}
		if (("ARGV", "publish") in seen &&
		    seen["ARGV", "publish"] != count["ARGV"]) {
			FNR = line["ARGV", seen["ARGV", "publish"]]
			fail("ARGV[" seen["ARGV", "publish"] "] publish is" \
			    " not the last argument")
		}
		printf "" >lfile
		printf "" >cfile
		printf "" >dfile
		positions("KEYS", "KEY", "K_")
		if (count["KEYS"] > 0) {
			printf "static const struct rl_template " \
			    "rl_%s_templates[] = {", name >dfile
			for (i = 1; i <= count["KEYS"]; i++)
				printf "\n\t%s,", template(tmpl[i]) >dfile
			printf "\n};\n" >dfile
		}
		positions("ARGV", "ARG", "A_")
		pub = ("ARGV", "publish") in seen ? count["ARGV"] - 1 : -1
		tv = count["KEYS"] ? "rl_" name "_templates" : "NULL"
		printf "#define RL_%s_PUB %d\n", up, pub >cfile
		printf "#define RL_%s_COUNTS %d %d\n", up, count["KEYS"],
		    count["ARGV"] >cfile
		printf "#define RL_%s_TEMPLATES %s\n", up, tv >cfile
	}' "$1"
}

# body SCRIPT MAP: SCRIPT as embedded, without its RETURNS lines (what the
# C side reads of its replies: the server has no use for them); in MAP
# (appended), for each line printed, SCRIPT's line (FILE:LINE), and one
# past its end.
body() {
	awk -v map="$2" '
	inret { if (index($0, "}")) inret = 0; next }
	/^-- RETURNS/ {
		inret = index($0, "{") && !index($0, "}")
		next
	}
	{ print; print FILENAME ":" FNR >>map }
	END { print FILENAME ":" FNR + 1 >>map }' "$1"
}

# returns RFILE: the reply positions of every script's RETURNS (RFILE's
# lines: field SHAPE NAME POSITION WHERE, value SHAPE VALUE WHERE) as C
# enums, one per shape: RL_RET_<SHAPE>_<NAME> its position; and
# RL_RET_<SHAPE> its value (its first element, a verdict), a #define. A shape of one name is one
# shape in every script that gives it: a name at another position, or
# another value, fails the build, naming both lines; so does a C name
# made twice (shape a_b's value and shape a's field b).
returns() {
	awk '
	function fail(where, msg) {
		printf "%s: %s\n", where, msg >"/dev/stderr"
		exit 1
	}
	function made(id, what, where) {
		if (id in origin && origin[id] != what)
			fail(where, "RETURNS: " id " made twice (also at " \
			    at[id] ")")
		origin[id] = what
	}
	$1 == "value" {
		id = "RL_RET_" toupper($2)
		if ((id in value) && value[id] != $3)
			fail($4, "RETURNS " $2 ": value " $3 ", but " value[id] \
			    " at " at[id])
		made(id, "value " $2, $4)
		if (!(id in value)) {
			value[id] = $3
			at[id] = $4
			nv++
			vs[nv] = id
		}
		next
	}
	$1 == "field" {
		id = "RL_RET_" toupper($2) "_" toupper($3)
		if ((id in pos) && pos[id] != $4)
			fail($5, "RETURNS " $2 ": " $3 " at position " $4 \
			    ", but at " pos[id] " at " at[id])
		made(id, "field " $2 " " $3, $5)
		if (id in pos)
			next
		pos[id] = $4
		at[id] = $5
		if (!($2 in shape)) {
			ns++
			order[ns] = $2
			shape[$2] = 0
		}
		nf[$2]++
		field[$2, nf[$2]] = id
	}
	END {
		for (i = 1; i <= ns; i++) {
			s = order[i]
			printf "enum rl_ret_%s {", s
			for (j = 1; j <= nf[s]; j++)
				printf "\n\t%s = %d%s", field[s, j],
				    pos[field[s, j]], j < nf[s] ? "," : ""
			printf "\n};\n"
		}
		for (i = 1; i <= nv; i++)
			printf "#define %s %d\n", vs[i], value[vs[i]]
	}' "$1"
}

# syntax SOURCE MAP WHAT: luac -p on SOURCE; on an error, its message
# with SOURCE's line numbers turned into the lua/ lines of MAP, and fail.
syntax() {
	if "$luac" -p - <"$1" 2>"$tmp.err"; then
		return 0
	fi
	echo "$me: $3 is not valid Lua 5.1 ($luac -p):" >&2
	awk 'NR == FNR { at[FNR] = $0; next }
	function where(n) { return (n in at) ? at[n] : "line " n }
	{
		sub(/^[^:]*: /, "")
		if (match($0, /^stdin:[0-9]+:/)) {
			n = substr($0, 7, RLENGTH - 7)
			$0 = where(n) ":" substr($0, RLENGTH + 1)
		}
		while (match($0, /at line [0-9]+\)/)) {
			n = substr($0, RSTART + 8, RLENGTH - 9)
			$0 = substr($0, 1, RSTART - 1) "at " where(n) ")" \
			    substr($0, RSTART + RLENGTH)
		}
		print "  " $0
	}' "$2" "$tmp.err" >&2
	exit 1
}

if [ "$out" = -p ]; then
	header "$1" "$(basename "$1" .lua)" "$tmp.c" "$tmp.lua" "$tmp.d" \
	    "$tmp.r"
	needed "$prelude" "$1" "$tmp.map"
	cat "$tmp.lua"
	body "$1" "$tmp.map"
	exit 0
fi

# The prelude's layout first (for none of its definitions), then its
# syntax, then each script's.
needed "$prelude" /dev/null "$tmp.map" >/dev/null
awk -v f="$prelude" '{ print f ":" NR } END { print f ":" NR + 1 }' \
    "$prelude" >"$tmp.map"
syntax "$prelude" "$tmp.map" "$prelude"
: >"$tmp.r"
: >"$tmp.defs"
: >"$tmp.ids"
keys_max=0
args_max=0
{
	echo "/* Generated by lua/embed.sh from lua/; do not edit. */"
	echo "#ifndef RL_SCRIPTS_H"
	echo "#define RL_SCRIPTS_H"
	echo
	echo "#include <stddef.h>"
	echo
	echo "/* A key's template (a script's header), split: the lock's name"
	echo " * itself; PREFIX:{NAME} (TEXT the prefix); {NAME} or {NAME}:SUFFIX"
	echo " * (TEXT the suffix, or NULL); {NAME}:SUFFIX with the owner token in"
	echo " * the suffix, TEXT before it and AFTER after it. */"
	echo "enum rl_template_form {"
	echo "	RL_TEMPLATE_NAME, RL_TEMPLATE_PREFIX, RL_TEMPLATE_SUFFIX,"
	echo "	RL_TEMPLATE_OWNER"
	echo "};"
	echo "struct rl_template {"
	echo "	enum rl_template_form form;"
	echo "	const char *text, *after;"
	echo "};"
	echo
	echo "/* Every script, by the identity it is told apart by. */"
	echo "enum rl_script_id {"
	for f in "$@"; do
		printf '\tRL_SCRIPT_%s,\n' "$(basename "$f" .lua | tr a-z A-Z)"
	done
	echo "	RL_SCRIPTS"
	echo "};"
	echo
	echo "/* A Lua script embedded at build time: its identity, name, SHA-1"
	echo " * and text; from its header, how many keys and arguments it takes,"
	echo " * its keys' templates and the position of its publish argument, the"
	echo " * last, or -1. */"
	echo "struct rl_script {"
	echo "	enum rl_script_id id;"
	echo "	const char *name;"
	echo "	const char *sha;"
	echo "	const char *src;"
	echo "	int nkeys, nargs;"
	echo "	const struct rl_template *templates;"
	echo "	int pub;"
	echo "};"
	for f in "$@"; do
		name=$(basename "$f" .lua)
		up=$(echo "$name" | tr a-z A-Z)
		header "$f" "$name" "$tmp.c" "$tmp.lua" "$tmp.d" "$tmp.r.1"
		cat "$tmp.r.1" >>"$tmp.r"
		needed "$prelude" "$f" "$tmp.map" >"$tmp.src"
		cat "$tmp.lua" >>"$tmp.src"
		sed "s|^|$f: the names of its header's KEYS and ARGV, line |" \
		    "$tmp.lua" | awk '{ print $0 NR }' >>"$tmp.map"
		body "$f" "$tmp.map" >>"$tmp.src"
		syntax "$tmp.src" "$tmp.map" "$f, as embedded (the prelude part, the names, then the script),"
		sha=$(sha1sum <"$tmp.src" | cut -d' ' -f1)
		printf '\n/* lua/%s.lua */\n' "$name"
		grep -v '^#define' "$tmp.c"
		printf 'extern const struct rl_script rl_script_%s;\n' "$name"
		counts=$(sed -n "s/^#define RL_${up}_COUNTS //p" "$tmp.c")
		[ "${counts% *}" -le "$keys_max" ] || keys_max=${counts% *}
		[ "${counts#* }" -le "$args_max" ] || args_max=${counts#* }
		{
			printf '\n/* lua/%s.lua */\n' "$name"
			cat "$tmp.d"
			printf 'const struct rl_script rl_script_%s = {\n' "$name"
			printf '\tRL_SCRIPT_%s, "%s", "%s",\n\t' "$up" "$name" "$sha"
			jq -Rs . <"$tmp.src" |
			    sed 's/\\u00\([0-9a-fA-F][0-9a-fA-F]\)/\\x\1/g'
			printf '\t, RL_%s_KEYS, RL_%s_ARGS, %s, %s\n};\n' "$up" \
			    "$up" \
			    "$(sed -n "s/^#define RL_${up}_TEMPLATES //p" "$tmp.c")" \
			    "$(sed -n "s/^#define RL_${up}_PUB //p" "$tmp.c")"
		} >>"$tmp.defs"
		echo "$name $sha" >>"$tmp.ids"
	done
	printf '\n/* Reply positions, from the scripts'"'"' RETURNS headers. */\n'
	returns "$tmp.r"
	printf '\n/* The most keys, and arguments, of any script. */\n'
	printf '#define RL_SCRIPT_KEYS_MAX %d\n' "$keys_max"
	printf '#define RL_SCRIPT_ARGS_MAX %d\n' "$args_max"
	echo
	echo "/* Every script's SHA-1, by identity. */"
	echo "extern const char *const rl_script_shas[RL_SCRIPTS];"
	echo
	echo "/* The scripts themselves, in the one file that defines them. */"
	echo "#ifdef RL_SCRIPTS_DEFINE"
	echo "/* A script is one string, longer than C's 4095-byte minimum. */"
	echo "#pragma GCC diagnostic ignored \"-Woverlength-strings\""
	cat "$tmp.defs"
	echo
	echo "const char *const rl_script_shas[RL_SCRIPTS] = {"
	while read -r name sha; do
		printf '\t"%s",\n' "$sha"
	done <"$tmp.ids"
	echo "};"
	echo "#endif"
	echo "#endif"
} >"$tmp"
mv "$tmp" "$out"
