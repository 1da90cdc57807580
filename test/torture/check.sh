#!/bin/bash
# check.sh: the checker of a fenced store's log (see store), shared by the
# torture run and the tests that drive workers through the store. Each
# line of the log says how its section held the name (KIND: lock, read,
# write, permits:N; lock when absent), and the rules are the kind's:
# exclusive sections (lock, write) run alone, readers beside readers, and
# at most N sections of permits:N at once.
# usage: test/torture/check.sh violations|accepted|preempted STORE_LOG
#        test/torture/check.sh unexplained STORE_LOG HITS [STALLS]
# violations: accepted sections (begin and end both accepted), by their
#   begin, that break the rules (an exclusive one beside any other, a
#   reader beside an exclusive one, more than N permits), and fencing
#   tokens out of order (an exclusive token not above every token begun
#   before it, a reader's not above every exclusive one before it, a
#   permit's token seen twice), one line each; nothing when there are
#   none. The store refuses such sections, so any line here means the
#   tokens redlock handed out let it down.
# accepted: how many sections were accepted.
# preempted: how many sections were displaced: by the times of the begins
#   and ends (the store's verdicts aside, a refused end still ends its
#   section), a section that has not ended when another one begins that
#   the rules forbid beside it (for permits: the lowest token of the N
#   open when one more begins). A section that was terminated and said so
#   (abort) ends there, at the time the signal landed (its own line in
#   store.aborts beside STORE_LOG): lines are taken in the order of their
#   times; a begin that the store took after that (a call already under
#   way when the signal landed) opens nothing: the holder had been told
#   to stop, and what it writes then is the fencing's to refuse. Only a
#   holder fault (killed, paused past its lease, robbed of its key) may
#   cause a displacement, once per fault.
# unexplained: the displacements in which no section (the one beginning,
#   nor the ones it displaces) is of an owner in HITS, a file with the
#   owners the injector hit (32 hex digits of the UUID of REDLOCK_OWNER,
#   as the store logs them), one line each. With STALLS (lines "START
#   END" in ns: the box did not schedule a sleeping process for that
#   long), one whose displaced sections lived through a stall is printed
#   "stalled: ..." instead: a holder not scheduled past its lease.
set -u
kinds='function excl(k) { return k == "" || k == "lock" || k == "write" }
function limit(k) { return k ~ /^permits:/ ? substr(k, 9) + 0 : 0 }'
case ${1-} in
violations)
	awk '
		$1 == "begin" { b[$2 " " $3] = $4; k[$2 " " $3] = $5 }
		$1 == "end" && (($2 " " $3) in b) {
			print b[$2 " " $3], $4, $2, k[$2 " " $3] }' "$2" |
	    sort -n | awk "$kinds"'
		{
			# drop the sections that ended before this one began
			for (f in end) if (end[f] <= $1) { delete end[f]; delete kind[f] }
			n = 0
			for (f in end) {
				n++
				if (excl($4) || excl(kind[f]))
					print "overlap: section " $3 " (" ($4 == "" ? "lock" : $4) ") began " (end[f] - $1) / 1e6 " ms before section " f " (" (kind[f] == "" ? "lock" : kind[f]) ") ended"
			}
			if (limit($4) && n >= limit($4))
				print "overlap: section " $3 " began while " n " sections of " $4 " were running"
			if (excl($4) && $3 <= max) print "token " $3 " not above " max
			if (!excl($4) && $3 <= wmax) print "token " $3 " not above writer " wmax
			if ($3 in seen) print "token " $3 " twice"
			seen[$3] = 1
			if ($3 > max) max = $3
			if (excl($4) && $3 > wmax) wmax = $3
			end[$3] = $2; kind[$3] = $4
		}' ;;
accepted)
	awk '$1 == "end"' "$2" | wc -l ;;
preempted | unexplained)
	awk -v mode="$1" -v hits="${3-}" -v stalls="${4-}" "$kinds"'
		BEGIN {
			if (hits != "") while ((getline h < hits) > 0) hit[h] = 1
			if (stalls != "") while ((getline h < stalls) > 0) {
				split(h, se, " "); ns++; s0[ns] = se[1] + 0; s1[ns] = se[2] + 0
			}
		}
		# A stall began while section O ran, before time T.
		function stalled(o, t,    i) {
			for (i = 1; i <= ns; i++)
				if (s1[i] >= since[o] && s0[i] <= t) return 1
			return 0
		}
		$1 == "begin" && (($2 " " $3) in aborted) { next }
		$1 == "begin" {
			key = $2 " " $3
			n = 0; blame = ($6 in hit); gone = ""; stall = 0
			for (o in open)
				if (excl($5) || excl(kind[o])) {
					n++; blame = blame || (owner[o] in hit); gone = gone SUBSEP o
					stall = stall || stalled(o, $4 + 0)
				}
			m = split(substr(gone, 2), g, SUBSEP)
			for (i = 1; i <= m; i++) close_(g[i])
			if (limit($5)) while (nopen >= limit($5)) {
				low = ""
				for (o in open) if (low == "" || fence[o] < fence[low]) low = o
				n++; blame = blame || (owner[low] in hit)
				stall = stall || stalled(low, $4 + 0); close_(low)
			}
			if (n && !blame && mode == "unexplained")
				print (stall ? "stalled: " : "") "section " $2 " (" ($5 == "" ? "lock" : $5) ") began while " n " conflicting ones ran, and none of them was hit"
			pre += n
			open[key] = 1; kind[key] = $5; owner[key] = $6; fence[key] = $2 + 0; nopen++
			since[key] = $4 + 0
		}
		$1 == "abort" && !(($2 " " $3) in open) { aborted[$2 " " $3] = 1 }
		($1 == "end" || $1 == "reject-end" || $1 == "abort") &&
		    (($2 " " $3) in open) { close_($2 " " $3) }
		function close_(o) { delete open[o]; nopen-- }
		END { if (mode == "preempted") print pre + 0 }' \
	    <(cat "$2" "$(dirname "$2")/store.aborts" 2>/dev/null |
	    sort -s -n -k4,4) ;;
*)
	echo "usage: $0 violations|accepted|preempted STORE_LOG" >&2
	echo "       $0 unexplained STORE_LOG HITS [STALLS]" >&2
	exit 64 ;;
esac
