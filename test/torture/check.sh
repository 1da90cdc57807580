#!/bin/bash
# check.sh: the checker of a fenced store's log (see store), shared by the
# torture run and the tests that drive workers through the store.
# usage: test/torture/check.sh violations|accepted|preempted STORE_LOG
# violations: accepted sections (begin and end both accepted) sorted by
#   their begin that overlap, and fencing tokens that do not rise in that
#   order, one line each; nothing when there are none.
# accepted: how many sections were accepted.
# preempted: how many sections another one began before they ended; only
#   a holder fault (killed, paused, robbed of its key, its lease lost) may
#   cause that, once per fault.
set -u
case ${1-} in
violations)
	awk '
		$1 == "begin" { b[$2] = $4 }
		$1 == "end" && ($2 in b) { print b[$2], $4, $2 }' "$2" |
	    sort -n | awk '
		NR > 1 && $1 < end { print "overlap: section " $3 " began " (end - $1) / 1e6 " ms before section " fence " ended" }
		NR > 1 && $3 <= fence { print "token " $3 " not above " fence }
		{ end = $2; fence = $3 }' ;;
accepted)
	awk '$1 == "end"' "$2" | wc -l ;;
preempted)
	awk '
		$1 == "begin" { if (open != "") n++; open = $2 }
		($1 == "end" || $1 == "reject-end") && $2 == open { open = "" }
		END { print n + 0 }' "$2" ;;
*)
	echo "usage: $0 violations|accepted|preempted STORE_LOG" >&2
	exit 64 ;;
esac
