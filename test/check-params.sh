#!/bin/sh
# check-params.sh: fail on functions that take more than MAX parameters.
# usage: check-params.sh MAX FILE...
#
# Reads OpenBSD style, as check-length.sh does: a definition's name at
# column 0 (after its return type), its parameters up to the ")" that
# closes them, then "{" alone at column 0. Prints FILE:LINE: NAME takes N
# parameters (max MAX) for each one over MAX, and exits 1 if any. A
# request struct is the way to pass more.
set -eu
if [ $# -lt 2 ]; then
	echo "usage: test/check-params.sh MAX FILE..." >&2
	exit 64
fi
case $1 in
'' | *[!0-9]*)
	echo "check-params: MAX must be a number, not '$1'" >&2
	exit 64
	;;
esac
max=$1
shift
for f in "$@"; do
	[ -r "$f" ] || { echo "check-params: cannot read $f" >&2; exit 2; }
done

awk -v max="$max" '
FNR == 1 { cand = ""; open = 0 }
# The parameters of a candidate, until the ")" that closes them.
open {
	cand = cand " " $0
	if (index($0, ")"))
		open = 0
	next
}
/^[A-Za-z_][^;]*\(/ && !/^(typedef|struct|union|enum)[ \t]/ {
	cand = $0
	line = FNR
	open = index($0, ")") == 0
	next
}
/^\{[ \t]*$/ && cand != "" {
	s = cand
	name = substr(s, 1, index(s, "(") - 1)
	sub(/.*[ \t*]/, "", name)
	p = substr(s, index(s, "(") + 1)
	sub(/\)[^)]*$/, "", p)
	# A function pointer: the parameters it takes count as none.
	while (match(p, /\([^()]*\)/))
		p = substr(p, 1, RSTART - 1) substr(p, RSTART + RLENGTH)
	if (p ~ /^[ \t]*(void)?[ \t]*$/)
		n = 0
	else
		n = gsub(/,/, ",", p) + 1
	if (n > max + 0) {
		printf "%s:%d: %s takes %d parameters (max %d)\n", FILENAME,
		    line, name, n, max
		over = 1
	}
	cand = ""
	next
}
/;[ \t]*$/ || /^[ \t]*$/ { cand = "" }
END { exit over }
' "$@"
