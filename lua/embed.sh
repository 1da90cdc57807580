#!/bin/sh
# embed.sh: turn lua/*.lua into a C include of rl_script structs, each
# the prelude's definitions that the script uses followed by the script,
# with the SHA-1 that EVALSHA names it by, computed here at build time.
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
# usage: embed.sh OUTPUT PRELUDE.lua SCRIPT.lua...
set -eu
out=$1
prelude=$2
shift 2
tmp=$out.tmp
luac=${LUAC:-luac5.1}
me=lua/embed.sh
trap 'rm -f "$tmp" "$tmp.src" "$tmp.map" "$tmp.err"' EXIT

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

# The prelude's layout first (for none of its definitions), then its
# syntax, then each script's.
needed "$prelude" /dev/null "$tmp.map" >/dev/null
awk -v f="$prelude" '{ print f ":" NR } END { print f ":" NR + 1 }' \
    "$prelude" >"$tmp.map"
syntax "$prelude" "$tmp.map" "$prelude"
{
	echo "/* Generated by lua/embed.sh from lua/; do not edit. */"
	echo "/* A script is one string, longer than C's 4095-byte minimum. */"
	echo "#pragma GCC diagnostic ignored \"-Woverlength-strings\""
	for f in "$@"; do
		name=$(basename "$f" .lua)
		needed "$prelude" "$f" "$tmp.map" >"$tmp.src"
		cat "$f" >>"$tmp.src"
		awk -v f="$f" '{ print f ":" NR } END { print f ":" NR + 1 }' \
		    "$f" >>"$tmp.map"
		syntax "$tmp.src" "$tmp.map" "$f, as embedded (the prelude part, then the script),"
		sha=$(sha1sum <"$tmp.src" | cut -d' ' -f1)
		printf 'static const struct rl_script rl_script_%s = {\n' "$name"
		printf '\t"%s", "%s",\n\t' "$name" "$sha"
		jq -Rs . <"$tmp.src" |
		    sed 's/\\u00\([0-9a-fA-F][0-9a-fA-F]\)/\\x\1/g'
		printf '};\n'
	done
} >"$tmp"
mv "$tmp" "$out"
