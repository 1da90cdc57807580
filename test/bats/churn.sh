#!/usr/bin/env bash
# churn.sh: jobs that take names with redlock exec, under chaos, and a
# fenced checker of what they did. For test/bats/churn.bats.
#
# usage: churn.sh DIR SECONDS SLOTS URL EXEC_ARGS...
# SLOTS jobs run at once, each `redlock -u URL exec EXEC_ARGS -- SECTION`
# in a session of its own, a new one as each ends, for SECONDS; while they
# do, every 0.2-0.5 s one running job (at random) is hit: SIGKILL of
# redlock alone (its watchdog must end COMMAND before it releases), of
# every process of the job (no release: the lease runs out), or SIGSTOP of
# every process for 2-2.6 s, past a lease of 1.5 s, then SIGCONT. Files in
# DIR: log (sections: "start|end|term NAME FENCE JOB US"), chaos
# ("ACTION JOB US"), exits ("JOB STATUS"). Then `churn.sh check DIR`.
set -u
if [ "$1" = check ]; then
	# The fenced checker, per name: no fence given twice; fences grow
	# with the sections' starts; a section that a newer one started
	# inside (an overlap) is only allowed for a job killed whole in
	# it, which cannot know, or one that exited 79 (lost): it was told
	# (one stopped past its lease must say so, never exit 0). Prints "sections N overlaps M tolerated T" and one
	# line per violation; exit 1 on any.
	d=$2
	awk '
	FILENAME ~ /chaos$/ { hit[$2] = hit[$2] " " $1; at[$2] = $3; if ($1 == "killall") kt[$2] = $3; next }
	FILENAME ~ /exits$/ { st[$1] = $2; next }
	{
		ev = $1; n = $2; f = $3; j = $4; t = $5
		if (ev == "start") {
			if ((n SUBSEP f) in seen) { print "duplicate fence " f " on " n " (jobs " seen[n, f] " and " j ")"; bad = 1 }
			seen[n, f] = j; sj[j] = n; sf[j] = f; ss[j] = t; secs++
		} else if (!(j in se)) se[j] = t
	}
	END {
		for (j in sj) {
			if (!(j in se)) se[j] = (j in kt) ? kt[j] : 9e18
			if (!(j in st)) { print "job " j " never ended"; bad = 1 }
		}
		for (a in sj) for (b in sj) {
			if (a == b || sj[a] != sj[b]) continue
			if (ss[b] < ss[a]) continue
			# b, with the older fence, began its section later: fine
			# only when b exited 79, told that its lease was lost (a
			# job stopped whole between the start of its COMMAND and
			# the first line of the section begins late, and its watchdog
			# then finds the lease run out).
			if (sf[b] <= sf[a] && st[b] == 79) continue
			if (sf[b] <= sf[a]) { print "fence went back on " sj[a] ": job " b " (" sf[b] ") started after job " a " (" sf[a] ")"; bad = 1 }
			# b started inside a.
			if (ss[b] >= se[a]) continue
			overlaps++
			if ((a in kt && kt[a] >= ss[a]) || st[a] == 79) { tol++; continue }
			print "double holder of " sj[a] ": job " b " (fence " sf[b] ") started inside job " a " (fence " sf[a] ", exit " st[a] "," hit[a] ")"
			bad = 1
		}
		for (j in st) if (st[j] !~ /^(0|79|75|80|137|143)$/) { print "job " j " exited " st[j]; bad = 1 }
		printf "sections %d overlaps %d tolerated %d\n", secs, overlaps, tol
		exit bad
	}' "$d/chaos" "$d/exits" "$d/log"
	exit
fi

d=$1 secs=$2 slots=$3 url=$4
shift 4
RL=${REDLOCK_BIN:?}
mkdir -p "$d/run"
: >"$d/log"
: >"$d/chaos"
: >"$d/exits"
cat >"$d/section.sh" <<'EOF'
j=$1 log=$2 hold=$3
s() { echo "$1 $REDLOCK_NAME $REDLOCK_FENCE $j ${EPOCHREALTIME/./}" >>"$log"; }
trap 's term; exit 143' TERM
s start
: >"${log%/*}/run/$j.held"
sleep "$hold" &
wait $!
s end
EOF
us() { echo "${EPOCHREALTIME/./}"; }
end=$(($(us) + secs * 1000000))

slot() {
	local k=$1 n=0 j p st
	shift
	while [ "$(us)" -lt "$end" ]; do
		n=$((n + 1))
		j=$k.$n
		setsid "$RL" -u "$url" exec "$@" -- bash "$d/section.sh" "$j" \
		    "$d/log" "0.$((RANDOM % 4))$((RANDOM % 10))" \
		    >/dev/null 2>"$d/run/$j.err" &
		p=$!
		echo "$p" >"$d/run/$j"
		st=0
		wait "$p" || st=$?
		rm -f "$d/run/$j" "$d/run/$j.held"
		echo "$j $st" >>"$d/exits"
	done
}
# tree PID: PID and every process under it.
tree() {
	local c
	echo "$1"
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do tree "$c"; done
}
chaos() {
	local f j p pids act
	while [ "$(us)" -lt "$end" ]; do
		sleep "0.$((1 + RANDOM % 3))"
		# Two times in three a job that holds its name, if any.
		j=
		[ $((RANDOM % 3)) = 0 ] ||
		    j=$(ls "$d/run" | sed -n 's/\.held$//p' | shuf -n 1)
		[ -n "$j" ] || j=$(ls "$d/run" | grep -x '[0-9]*\.[0-9]*' | shuf -n 1)
		[ -n "$j" ] || continue
		p=$(cat "$d/run/$j" 2>/dev/null) || continue
		pids=$(tree "$p")
		case $((RANDOM % 3)) in
		0) act=kill1; echo "$act $j $(us)" >>"$d/chaos"; kill -9 "$p" ;;
		1) act=killall; echo "$act $j $(us)" >>"$d/chaos"
		   # shellcheck disable=SC2086
		   kill -9 $pids ;;
		2) act=stop; echo "$act $j $(us)" >>"$d/chaos"
		   # shellcheck disable=SC2086
		   kill -STOP $pids
		   sleep "2.$((RANDOM % 7))"
		   # shellcheck disable=SC2086
		   kill -CONT $pids ;;
		esac 2>/dev/null
	done
}
pids=()
for k in $(seq 1 "$slots"); do
	slot "$k" "$@" &
	pids+=($!)
done
chaos &
pids+=($!)
wait "${pids[@]}"
exit 0
