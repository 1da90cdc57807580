#!/bin/sh
# check-length.sh: fail on functions longer than MAX lines.
# usage: check-length.sh MAX FILE...
#
# Reads OpenBSD style: the function name at column 0 (after its return
# type), its parameters, then `{` alone at column 0 and `}` at column 0 to
# close. A function's length is the line of its `}` minus the line of its
# `{`. Prints FILE:LINE: NAME is N lines (max MAX), LINE being the name's,
# for each one over MAX, and exits 1 if any.
set -eu
if [ $# -lt 2 ]; then
	echo "usage: test/check-length.sh MAX FILE..." >&2
	exit 64
fi
case $1 in
'' | *[!0-9]*)
	echo "check-length: MAX must be a number of lines, not '$1'" >&2
	exit 64
	;;
esac
max=$1
shift
for f in "$@"; do
	[ -r "$f" ] || { echo "check-length: cannot read $f" >&2; exit 2; }
done

awk -v max="$max" '
FNR == 1 { name = ""; open = 0 }
# Inside a body, only the closing brace matters.
open {
	if (/^}/) {
		if (FNR - open > max + 0) {
			printf "%s:%d: %s is %d lines (max %d)\n", FILENAME,
			    nameline, name, FNR - open, max
			over = 1
		}
		open = 0
		name = ""
	}
	next
}
/^\{[ \t]*$/ {
	# A brace with no name before it opens an initializer, not a body.
	if (name != "")
		open = FNR
	next
}
# A line at column 0 with a parenthesis may name a function: the
# identifier before the first "(".
/^[A-Za-z_][^;]*\(/ && !/^(typedef|struct|union|enum)[ \t]/ {
	s = substr($0, 1, index($0, "(") - 1)
	name = ""
	if (match(s, /[A-Za-z_][A-Za-z0-9_]*$/)) {
		name = substr(s, RSTART, RLENGTH)
		nameline = FNR
	}
}
# A declaration ends in ";" and a blank line ends any candidate.
/;[ \t]*$/ || /^[ \t]*$/ { name = "" }
END { exit over }
' "$@"
