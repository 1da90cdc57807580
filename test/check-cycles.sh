#!/bin/sh
# check-cycles.sh: fail when the files of lib/ (or cmd/) depend on each
# other in a circle, through calls or through headers.
# usage: check-cycles.sh [-v] OBJ_DIR [SRC_DIR]
#
# Nodes are the .c files of SRC_DIR (default lib). Edges:
#  - calls: X.c -> Y.c when OBJ_DIR/X.o leaves a symbol undefined that
#    OBJ_DIR/Y.o defines (nm -P; objects without a .c are stale, skipped);
#  - headers: X.c -> Y.c when X.c, or its own X.h, includes "Y.h" and
#    SRC_DIR/Y.c exists. A header with no .c of its own (rl_int.h,
#    redlock.h) is no node: its includes count for every file that
#    includes it, transitively.
# Prints one line per elementary cycle, starting from its first file in
# name order, and exits 1; prints nothing and exits 0 when acyclic.
# -v also prints each edge that lies on a cycle, with its symbols or
# include.
set -eu
verbose=0
if [ "${1:-}" = -v ]; then
	verbose=1
	shift
fi
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: test/check-cycles.sh [-v] OBJ_DIR [SRC_DIR]" >&2
	exit 64
fi
obj=$1
src=${2:-lib}
[ -d "$obj" ] || { echo "check-cycles: no directory $obj; build it first" >&2; exit 2; }
[ -d "$src" ] || { echo "check-cycles: no directory $src" >&2; exit 2; }

tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.nm"' EXIT

# One record per fact, tagged by its first field, for the awk below.
{
	for c in "$src"/*.c; do
		[ -e "$c" ] || continue
		echo "node ${c##*/}"
	done
	for h in "$src"/*.h; do
		[ -e "$h" ] || continue
		echo "header ${h##*/}"
	done
	for f in "$src"/*.c "$src"/*.h; do
		[ -e "$f" ] || continue
		sed -n 's/^[ 	]*#[ 	]*include[ 	]*"\([^"]*\)".*/\1/p' "$f" |
		    while read -r inc; do
			echo "include ${f##*/} ${inc##*/}"
		done
	done
	for o in "$obj"/*.o; do
		[ -e "$o" ] || continue
		c=${o##*/}
		c=${c%.o}.c
		[ -e "$src/$c" ] || continue
		if ! nm -P "$o" >"$tmp.nm"; then
			echo "check-cycles: nm failed on $o" >&2
			exit 2
		fi
		awk -v c="$c" 'NF >= 2 { print "sym", c, $1, $2 }' "$tmp.nm"
	done
} >"$tmp"

awk -v verbose="$verbose" -v dir="${src##*/}" '
$1 == "node" { order[++n] = $2; idx[$2] = n; next }
$1 == "header" { header[$2] = 1; next }
$1 == "include" { ninc[$2]++; inc[$2, ninc[$2]] = $3; next }
$1 == "sym" {
	# Undefined: U, or w/v (weak, undefined). Defined and global: any
	# other upper-case type but N (debugging).
	if ($4 == "U" || $4 == "w" || $4 == "v") {
		nuse[$2]++; use[$2, nuse[$2]] = $3
	} else if ($4 ~ /^[A-Z]$/ && $4 != "N") {
		ndef[$3]++; def[$3, ndef[$3]] = $2
	}
	next
}
function add(from, to, why) {
	if (from == to)
		return
	if (!((from, to) in edge))
		edge[from, to] = why
	else if (index(" " edge[from, to] " ", " " why " ") == 0)
		edge[from, to] = edge[from, to] " " why
}
# Follow the includes of file f on behalf of c: a header of some other .c
# is an edge to it; a shared header, or c own header, is read in turn.
function walk(c, f,    i, h, owner) {
	if ((c, f) in seen)
		return
	seen[c, f] = 1
	for (i = 1; i <= ninc[f]; i++) {
		h = inc[f, i]
		owner = h
		sub(/\.h$/, ".c", owner)
		if (owner != h && owner in idx && owner != c)
			add(c, owner, "#include \"" h "\"")
		else if (h in header)
			walk(c, h)
	}
}
# Elementary cycles through start s that visit only files after s; their
# number can grow exponentially, so stop at a bound.
function cycles(s, v, depth,    w, i, line) {
	path[depth] = v
	onpath[v] = 1
	for (w = idx[s]; w <= n && found < max; w++) {
		if (!((v, order[w]) in edge))
			continue
		if (order[w] == s) {
			line = dir " cycle:"
			for (i = 1; i <= depth; i++) {
				line = line " " path[i] " ->"
				if (i < depth)
					oncycle[path[i], path[i + 1]] = 1
			}
			oncycle[v, s] = 1
			print line " " s
			found++
		} else if (!(order[w] in onpath))
			cycles(s, order[w], depth + 1)
	}
	delete onpath[v]
}
END {
	for (i = 1; i <= n; i++) {
		c = order[i]
		for (j = 1; j <= nuse[c]; j++) {
			s = use[c, j]
			for (k = 1; k <= ndef[s]; k++)
				add(c, def[s, k], s)
		}
		h = c
		sub(/\.c$/, ".h", h)
		walk(c, c)
		if (h in header)
			walk(c, h)
	}
	max = 200
	for (i = 1; i <= n; i++)
		cycles(order[i], order[i], 1)
	if (found >= max)
		print "check-cycles: stopped after " max " cycles" \
		    >"/dev/stderr"
	if (verbose)
		for (i = 1; i <= n; i++)
			for (j = 1; j <= n; j++)
				if ((order[i], order[j]) in oncycle)
					print "  " order[i] " -> " order[j] ": " \
					    edge[order[i], order[j]]
	exit (found > 0)
}' "$tmp"
