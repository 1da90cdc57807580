#!/bin/bash
# test/bench/run.sh: redlock against flock(1), measured alternately in one run.
# usage: test/bench/run.sh path/to/redlock [ROUNDS]
# Prints a table and writes test/bench/RESULTS.md. Timings are wall clock per
# command, medians and p99 over ROUNDS (default 41), with the ratio to
# flock measured in the same rounds.
set -eu
rl=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
rounds=${2:-41}
load0=$(cut -d' ' -f1-3 /proc/loadavg)
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	rm -rf "$dir"
}
trap cleanup EXIT

# start_server [ARG...]: a private redis-server on a free port, with
# ARGs added to its command line; sets $port.
start_server() {
	local pid
	for _ in $(seq 1 20); do
		port=$((20000 + RANDOM % 12000))
		redis-cli -p "$port" ping >/dev/null 2>&1 && continue
		mkdir -p "$dir/$port"
		redis-server --port "$port" --bind 127.0.0.1 --save '' \
		    --appendonly no --dir "$dir/$port" --logfile "$dir/$port/log" \
		    "$@" >/dev/null 2>&1 &
		pid=$!
		for _ in $(seq 1 100); do
			if redis-cli -p "$port" info server 2>/dev/null |
			    grep -q "^process_id:$pid"; then
				pids="$pids $pid"
				return 0
			fi
			sleep 0.02
		done
		kill "$pid" 2>/dev/null || true
	done
	echo "bench: cannot start redis-server" >&2
	exit 1
}

masters=
for _ in 1 2 3 4 5; do
	start_server
	masters="$masters${masters:+,}redis://127.0.0.1:$port"
done
port=${masters##*:}
export REDLOCK_URL=redis://127.0.0.1:$port

# TLS: the first master also listens on a TLS port, with a throwaway CA.
tlsport=$((port == 31999 ? 20000 : port + 1))
while redis-cli -p "$tlsport" ping >/dev/null 2>&1; do tlsport=$((tlsport + 1)); done
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$dir/ca.key" -out "$dir/ca.crt" -days 2 -subj /CN=bench-ca 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$dir/srv.key" -out "$dir/srv.csr" -subj /CN=localhost 2>/dev/null
echo "subjectAltName=IP:127.0.0.1" >"$dir/srv.ext"
openssl x509 -req -in "$dir/srv.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
    -CAcreateserial -out "$dir/srv.crt" -days 2 -extfile "$dir/srv.ext" 2>/dev/null
redis-cli -p "$port" config set tls-cert-file "$dir/srv.crt" >/dev/null
redis-cli -p "$port" config set tls-key-file "$dir/srv.key" >/dev/null
redis-cli -p "$port" config set tls-ca-cert-file "$dir/ca.crt" >/dev/null
redis-cli -p "$port" config set tls-auth-clients no >/dev/null
redis-cli -p "$port" config set tls-port "$tlsport" >/dev/null
tls="rediss://127.0.0.1:$tlsport"
export REDLOCK_CACERT=$dir/ca.crt

# Redis Cluster: three masters, no replicas (redis-cli --cluster create).
# $cluster is the node that owns the slot of "bench", $clusterx another.
cnodes=
for _ in 1 2 3; do
	start_server --cluster-enabled yes --cluster-config-file nodes.conf
	cnodes="$cnodes 127.0.0.1:$port"
done
port=${masters##*:}
redis-cli --cluster create $cnodes --cluster-replicas 0 --cluster-yes \
    >"$dir/cluster.out" 2>&1 || { cat "$dir/cluster.out" >&2; exit 1; }
cluster_ok() {
	local n
	for n in $cnodes; do
		redis-cli -p "${n#*:}" cluster info | grep -q '^cluster_state:ok' ||
		    return 1
	done
}
for _ in $(seq 1 500); do cluster_ok && break; sleep 0.02; done
cluster_ok || { echo "bench: the cluster did not come up" >&2; exit 1; }
for n in $cnodes; do
	if ! redis-cli -p "${n#*:}" get bench 2>&1 | grep -q MOVED; then
		cluster=redis://$n
	else
		clusterx=redis://$n
	fi
done

# Sentinel: one sentinel watching the first master as "bm".
listens() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
sport=$((port > 31900 ? 20000 : port + 3))
while listens "$sport"; do sport=$((sport + 1)); done
mkdir -p "$dir/sentinel"
printf '%s\n' "port $sport" "bind 127.0.0.1" "dir $dir/sentinel" \
    "logfile $dir/sentinel/log" "sentinel monitor bm 127.0.0.1 $port 1" \
    >"$dir/sentinel/sentinel.conf"
redis-sentinel "$dir/sentinel/sentinel.conf" >/dev/null 2>&1 &
pids="$pids $!"
for _ in $(seq 1 250); do
	redis-cli -p "$sport" sentinel get-master-addr-by-name bm 2>/dev/null |
	    grep -qx "$port" && break
	sleep 0.02
done
sentinel="redis+sentinel://127.0.0.1:$sport/bm"
# And a master with one replica, watched as "bm2": there the Sentinel
# default of --replicas WAITs for the replica after each acquisition.
p1=$port
start_server
m2=$port
start_server --replicaof 127.0.0.1 "$m2"
port=$p1
redis-cli -p "$sport" sentinel monitor bm2 127.0.0.1 "$m2" 1 >/dev/null
for _ in $(seq 1 500); do
	[ "$(redis-cli -p "$sport" sentinel replicas bm2 2>/dev/null |
	    grep -c '^flags$')" = 1 ] &&
	    redis-cli -p "$m2" info replication | grep -q 'state=online' &&
	    break
	sleep 0.02
done
sentinel2="redis+sentinel://127.0.0.1:$sport/bm2"
lockfile=$dir/flock

ns() { date +%s%N; }
# time_us CMD...: one run's wall time in microseconds.
time_us() {
	local t0 t1
	t0=$(ns)
	"$@" >/dev/null
	t1=$(ns)
	echo $(((t1 - t0) / 1000))
}
# stats FILE: "median p99" of the numbers in FILE.
stats() {
	sort -n "$1" | awk '{ v[NR] = $1 } END {
	    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	    p = v[int(NR * 0.99 + 0.999)]
	    printf "%d %d\n", m, p }'
}

# Warm up: the script cache, the page cache, the dynamic linker.
for _ in 1 2 3; do
	"$rl" exec warm -- true
	flock "$lockfile" true
done

: >"$dir/exec" >"$dir/lockunlock" >"$dir/flock" >"$dir/exec5" >"$dir/exectls"
: >"$dir/execcl" >"$dir/execclx" >"$dir/execsn" >"$dir/execsr" >"$dir/execsr0"
"$rl" -u "$masters" exec warm -- true
"$rl" -u "$tls" exec warm -- true
"$rl" -u "$cluster" exec warm -- true
"$rl" -u "$sentinel" exec warm -- true
"$rl" -u "$sentinel2" exec warm -- true
for _ in $(seq 1 "$rounds"); do
	time_us flock "$lockfile" true >>"$dir/flock"
	time_us "$rl" exec bench -- true >>"$dir/exec"
	time_us "$rl" -u "$tls" exec bench -- true >>"$dir/exectls"
	time_us "$rl" -u "$masters" exec bench -- true >>"$dir/exec5"
	time_us "$rl" -u "$cluster" exec bench -- true >>"$dir/execcl"
	time_us "$rl" -u "$clusterx" exec bench -- true >>"$dir/execclx"
	time_us "$rl" -u "$sentinel" exec bench -- true >>"$dir/execsn"
	time_us "$rl" -u "$sentinel2" exec bench -- true >>"$dir/execsr"
	time_us "$rl" -u "$sentinel2" exec --replicas 0 bench -- true >>"$dir/execsr0"
	t0=$(ns)
	tok=$("$rl" lock bench)
	"$rl" unlock --owner "$tok" bench
	echo $((($(ns) - t0) / 1000)) >>"$dir/lockunlock"
done

# Handoff: from the start of unlock to the waiter's acquisition, on the
# server's clock (TIME and the new holder's since_ms).
: >"$dir/handoff"
for _ in $(seq 1 "$rounds"); do
	tok=$("$rl" lock -t 10s hand)
	"$rl" lock -w 10s hand >"$dir/w" &
	w=$!
	until [ "$(redis-cli -p "$port" pubsub numsub 'redisson_lock__channel:{hand}' | sed -n 2p)" = 1 ]; do
		sleep 0.002
	done
	before=$(redis-cli -p "$port" time | { read -r s; read -r us; echo $((s * 1000000 + us)); })
	"$rl" unlock --owner "$tok" hand
	wait "$w"
	since=$("$rl" status --json hand | jq -r .since_ms)
	echo $((since * 1000 - before)) >>"$dir/handoff"
	"$rl" unlock --owner "$(cat "$dir/w")" hand
done

# Peak RSS (VmHWM) of redlock and of its watchdog, read by COMMAND.
rss=$("$rl" exec rss -- sh -c 'w=$PPID; p=$(ps -o ppid= -p $w | tr -d " ")
    echo $(awk "/VmHWM/ {print \$2}" /proc/$p/status) $(awk "/VmHWM/ {print \$2}" /proc/$w/status)')
read -r rss_p rss_w <<<"$rss"

# Contended: K workers x M runs of a 20 ms critical section on one lock,
# total wall time, flock and redlock alternating; median of 5 rounds.
contend() {	# contend K M CMD...: total wall ms of K workers x M runs
	local k=$1 m=$2 t0 i w=
	shift 2
	t0=$(ns)
	for i in $(seq 1 "$k"); do
		( for _ in $(seq 1 "$m"); do "$@" >/dev/null; done ) &
		w="$w $!"
	done
	wait $w		# the workers only: the servers are children too
	echo $((($(ns) - t0) / 1000000))
}
for k in 4 16; do
	: >"$dir/c_flock_$k" >"$dir/c_rl_$k"
	for _ in 1 2 3 4 5; do
		contend "$k" 10 flock "$lockfile" sleep 0.02 >>"$dir/c_flock_$k"
		contend "$k" 10 "$rl" exec -w 60s contend -- sleep 0.02 >>"$dir/c_rl_$k"
	done
done

# Handoff: three workers take turns with a 3 ms COMMAND, under redlock
# and under flock, 5 runs each per round, the kinds alternating round by
# round ($hrounds rounds). Gaps from one COMMAND's end to the next
# holder's acquisition (redlock's -v event) and to the next COMMAND's
# start, in microseconds. COMMAND is bash, so its clock needs no fork of
# its own. Each acquisition and each start is matched to the oldest end
# not yet matched: with one holder at a time that is the last end; with
# --limit 2 it is the permit that was freed first.
# The breakdown (one holder at a time): the k-th COMMAND end is followed
# by the k-th release (the watchdog's -v released event, printed on its
# reply), the (k+1)-th acquisition and the (k+1)-th start; the three
# pieces go to $dir/r_LABEL (end to released), w_LABEL (released to the
# next acquired: negative when the waiter held the lock before the
# releaser had printed its reply) and x_LABEL (acquired to the start).
hrounds=10
handoff() {	# handoff LABEL PREFIX...: one round's gaps appended to
	local label=$1 log=$dir/hlog_$1 w= i	# $dir/[asrwx]_LABEL
	shift
	rm -f "$log".*
	for i in 1 2 3; do	# a log each: redlock's stderr lines take
		( for _ in 1 2 3 4 5; do	# several writes
			"$@" bash -c 'echo "start $EPOCHREALTIME"
			    sleep 0.003; echo "end $EPOCHREALTIME"' 2>&1
		done ) >"$log.$i" &
		w="$w $!"
	done
	wait $w
	cat "$log".* >"$log"
	awk '
	    function epoch(v,  t) { split(v, t, "."); return (t[1] % 86400) * 1e6 + t[2] }
	    $1 == "start" || $1 == "end" { printf "%.0f %s\n", epoch($2), $1 }
	    $3 == "acquired" || $3 == "released" {
		split($2, d, "T"); split(d[2], h, ":"); sub("Z", "", h[3])
		split(h[3], f, ".")
		printf "%.0f %s\n", ((h[1] * 60 + h[2]) * 60 + f[1]) * 1e6 + f[2], $3 }' "$log" |
	    sort -n >"$log.ev"
	awk -v a="$dir/a_$label" -v s="$dir/s_$label" '
	    $2 == "end" { ea[na++] = $1; es[ns++] = $1 }
	    $2 == "acquired" && ha < na { printf "%.0f\n", $1 - ea[ha++] >>a }
	    $2 == "start" && hs < ns {
		printf "%.0f\n", $1 - es[hs++] >>s; ha = hs > ha ? hs : ha }' "$log.ev"
	awk -v r="$dir/r_$label" -v w="$dir/w_$label" -v x="$dir/x_$label" '
	    $2 == "end" { e[ne++] = $1 }
	    $2 == "released" { l[nl++] = $1 }
	    $2 == "acquired" { q[nq++] = $1 }
	    $2 == "start" { t[nt++] = $1 }
	    END { for (k = 0; k < nl && k < ne && k + 1 < nq && k + 1 < nt; k++) {
		printf "%.0f\n", l[k] - e[k] >>r
		printf "%.0f\n", q[k + 1] - l[k] >>w
		printf "%.0f\n", t[k + 1] - q[k + 1] >>x } }' "$log.ev"
	touch "$dir/a_$label" "$dir/r_$label" "$dir/w_$label" "$dir/x_$label"
}
# flock(1)'s own step from its lock to COMMAND's start, a fork and an
# exec, timed by bench-spawn (test/bench/spawn.c) running the same COMMAND:
# from its clock before the fork to COMMAND's EPOCHREALTIME.
spawned() {	# spawned: one fork+exec of the handoffs' COMMAND, in us
	"${rl%/*}/bench-spawn" bash -c 'echo "start $EPOCHREALTIME"' |
	    awk 'function epoch(v,  t) { split(v, t, "."); return (t[1] % 86400) * 1e6 + t[2] }
		$1 == "spawn" { s = epoch($2) } $1 == "start" { printf "%.0f\n", epoch($2) - s }'
}
: >"$dir/k_spawn"
for _ in $(seq 1 "$hrounds"); do
	for _ in 1 2 3 4 5; do spawned >>"$dir/k_spawn"; done
	handoff flock flock "$lockfile"
	handoff plain "$rl" exec -v -w 60s handoff --
	handoff fair "$rl" exec --fair -v -w 60s handoff --
	handoff redlock "$rl" -u "$masters" exec -v -w 60s handoff --
	handoff tls "$rl" -u "$tls" exec -v -w 60s handoff --
	handoff limit1 "$rl" exec --limit 1 -v -w 60s handoff-limit1 --
	handoff limit2 "$rl" exec --limit 2 -v -w 60s handoff-limit2 --
	handoff write "$rl" exec --write -v -w 60s handoff-write --
done
for f in "$dir"/[asrwx]_*; do sort -n -o "$f" "$f"; done

# Shared handoffs: K holders of one kind hold a name until M waiters of
# the other kind (for the plain lock: one of the same) wait on it
# (redlock's subscribed to its channel, flock's blocked in /proc/locks),
# then end together. Gaps from the last holder's
# COMMAND end to the first and to the last waiter's COMMAND start, in
# microseconds, one pair per round; flock(1) -x and -s alternate with
# redlock --write and -s in each round.
subscribed() {	# subscribed CHANNEL M: M redlock waiters on CHANNEL
	[ "$(redis-cli -p "$port" pubsub numsub "$1" | sed -n 2p)" = "$2" ]
}
flwaiting() {	# flwaiting M: M flock(1) waiters blocked on $lockfile
	[ "$(grep -c -- "-> FLOCK .*:$(stat -c %i "$lockfile") " /proc/locks)" = "$1" ]
}
burst() {	# burst LABEL K M WAITING...: "${hold[@]}" K times, "${wake[@]}"
	local label=$1 k=$2 m=$3 log=$dir/blog w= i	# M times, until WAITING M
	shift 3
	rm -f "$dir/go"
	: >"$log"
	for i in $(seq 1 "$k"); do
		"${hold[@]}" bash -c 'echo "hold $EPOCHREALTIME"
		    until [ -e "$0" ]; do sleep 0.001; done
		    echo "end $EPOCHREALTIME"' "$dir/go" >>"$log" 2>/dev/null &
		w="$w $!"
	done
	for i in $(seq 1 2500); do
		[ "$(grep -c '^hold' "$log")" = "$k" ] && break
		sleep 0.002
	done
	for i in $(seq 1 "$m"); do
		"${wake[@]}" bash -c 'echo "start $EPOCHREALTIME"' >>"$log" 2>/dev/null &
		w="$w $!"
	done
	for i in $(seq 1 2500); do "$@" "$m" && break; sleep 0.002; done
	touch "$dir/go"
	wait $w
	awk '{ split($2, t, "."); v = (t[1] % 86400) * 1e6 + t[2] }
	    $1 == "end" && v > e { e = v }
	    $1 == "start" { if (!n++ || v < f) f = v; if (v > l) l = v }
	    END { printf "%.0f %.0f\n", f - e, l - e }' "$log" |
	    { read -r first last
	      echo "$first" >>"$dir/f_$label"; echo "$last" >>"$dir/l_$label"; }
}
for _ in $(seq 1 "$rounds"); do
	hold=(flock -x "$lockfile") wake=(flock -x "$lockfile")
	burst flock_xx 1 1 flwaiting
	hold=("$rl" exec -w 60s burst-lock --) wake=("$rl" exec -w 60s burst-lock --)
	burst xx 1 1 subscribed 'redisson_lock__channel:{burst-lock}'
	hold=(flock -x "$lockfile") wake=(flock -s "$lockfile")
	burst flock_wr 1 3 flwaiting
	hold=("$rl" exec --write -w 60s burst --) wake=("$rl" exec -s -w 60s burst --)
	burst wr 1 3 subscribed 'redisson_rwlock:{burst}'
	hold=(flock -s "$lockfile") wake=(flock -x "$lockfile")
	burst flock_rw 3 1 flwaiting
	hold=("$rl" exec -s -w 60s burst --) wake=("$rl" exec --write -w 60s burst --)
	burst rw 3 1 subscribed 'redisson_rwlock:{burst}'
done
for f in "$dir"/[fl]_*; do sort -n -o "$f" "$f"; done

# Library level: acquire+release pairs per second from one process,
# against the server's ceiling of PINGs from one client.
pairs=$("${rl%/*}/bench-lib" 20000 "redis://127.0.0.1:$port")
m3=$(echo "$masters" | cut -d, -f1-3 | tr , ' ')
pairs3=$("${rl%/*}/bench-lib" 10000 $m3)
pairs5=$("${rl%/*}/bench-lib" 10000 $(echo "$masters" | tr , ' '))
pairstls=$("${rl%/*}/bench-lib" 20000 "$tls")
# Each kind's pairs per second, and the server's time per pair: the usec
# of EVALSHA (and EVAL) in INFO commandstats over the run, after a warm-up
# that loads the kind's scripts. Kinds alternate; medians of 5 rounds.
kindpairs() {	# kindpairs LABEL [KIND OPTION]: "pairs/s us-per-pair" >>k_LABEL
	local label=$1 p
	shift
	redis-cli -p "$port" del bench-lib >/dev/null
	"${rl%/*}/bench-lib" "$@" 10 "redis://127.0.0.1:$port" >/dev/null
	redis-cli -p "$port" config resetstat >/dev/null
	p=$("${rl%/*}/bench-lib" "$@" 5000 "redis://127.0.0.1:$port")
	redis-cli -p "$port" info commandstats | awk -F'[=,]' -v p="$p" '
	    /^cmdstat_eval(sha)?:/ { u += $4 }
	    END { printf "%s %.1f\n", p, u / 5000 }' >>"$dir/k_$label"
	redis-cli -p "$port" del bench-lib >/dev/null
}
# Redisson's side (test/bench/cost.py): the usec of its scripts for the same
# operation on the same server, "script-us latch-DEL-us" >>rsn_LABEL.
rsncost() {	# rsncost LABEL: Redisson's KIND LABEL, 5000 operations
	python3 "$here/cost.py" rsn "$port" "$1" 5000 >>"$dir/rsn_$1"
}
for _ in 1 2 3 4 5; do
	kindpairs lock
	# The history's cost: the same pairs recording none.
	REDLOCK_HISTORY=0 kindpairs nohist
	rsncost lock
	kindpairs renew --renew
	rsncost renew
	kindpairs fair --fair
	rsncost fair
	kindpairs permit --limit 1
	rsncost permit
	kindpairs read --shared
	rsncost read
	kindpairs write --write
	rsncost write
done
rmed() {	# rmed LABEL COLUMN: the median of Redisson's column
	cut -d' ' -f"$2" "$dir/rsn_$1" | sort -g | sed -n 3p
}

# The same acquire+release pairs through a cluster node and through
# Sentinel, against the standalone server; alternating, medians of 5.
: >"$dir/lp_plain" >"$dir/lp_cluster" >"$dir/lp_sentinel"
for _ in 1 2 3 4 5; do
	"${rl%/*}/bench-lib" 5000 "redis://127.0.0.1:$port" >>"$dir/lp_plain"
	"${rl%/*}/bench-lib" 5000 "$cluster" >>"$dir/lp_cluster"
	"${rl%/*}/bench-lib" 5000 "$sentinel" >>"$dir/lp_sentinel"
done
lpmed() { sort -n "$dir/lp_$1" | sed -n 3p; }

# Pipelined ceiling: redis-cli --pipe sends a file of commands on one
# connection without waiting for replies. 50000 acquire+release pairs
# (the two EVALSHA calls bench-lib makes, caught with MONITOR, on 1000
# names in turn), against 20 times as many PINGs; alternating, medians
# of 5, after one untimed pass that creates the fencing counters.
pipe_rate() {	# pipe_rate FILE N: N per second that FILE went through at
	local t0 t1 out
	t0=$(ns)
	out=$(redis-cli -p "$port" --pipe <"$1")
	t1=$(ns)
	case $out in
	*"errors: 0,"*) ;;
	*) echo "bench: redis-cli --pipe <$1: $out" >&2; exit 1 ;;
	esac
	echo $(($2 * 1000000000 / (t1 - t0)))
}
python3 "$here/cost.py" pipe "$port" 50000 "$dir/pipe" "$dir/pings" \
    "${rl%/*}/bench-lib"
pipe_rate "$dir/pipe" 50000 >/dev/null
: >"$dir/pp_pairs" >"$dir/pp_ping" >"$dir/pp_bench"
for _ in 1 2 3 4 5; do
	pipe_rate "$dir/pings" 1000000 >>"$dir/pp_ping"
	pipe_rate "$dir/pipe" 50000 >>"$dir/pp_pairs"
	redis-benchmark -p "$port" -c 1 -P 16 -n 500000 -t ping --csv \
	    2>/dev/null | awk -F'"' '/PING_MBULK/ {print int($4)}' \
	    >>"$dir/pp_bench"
done
ppmed() { sort -n "$dir/pp_$1" | sed -n 3p; }
rm -f "$dir/pipe" "$dir/pings"
kmed() {	# kmed LABEL: "median-pairs/s median-us-per-pair"
	echo "$(cut -d' ' -f1 "$dir/k_$1" | sort -n | sed -n 3p)" \
	    "$(cut -d' ' -f2 "$dir/k_$1" | sort -g | sed -n 3p)"
}
read -r kp_lock ku_lock < <(kmed lock)
read -r kp_nohist ku_nohist < <(kmed nohist)
read -r kp_write ku_write < <(kmed write)
read -r kp_read ku_read < <(kmed read)
read -r kp_permit ku_permit < <(kmed permit)
read -r _ ku_renew < <(kmed renew)
read -r _ ku_fair < <(kmed fair)
ping=$(redis-benchmark -p "$port" -c 1 -n 50000 -t ping --csv 2>/dev/null |
    awk -F'"' '/PING_MBULK/ {print int($4)}')

read -r fm fp < <(stats "$dir/flock")
read -r em ep < <(stats "$dir/exec")
read -r e5m e5p < <(stats "$dir/exec5")
read -r etm etp < <(stats "$dir/exectls")
read -r eclm eclp < <(stats "$dir/execcl")
read -r eclxm eclxp < <(stats "$dir/execclx")
read -r esnm esnp < <(stats "$dir/execsn")
read -r esrm esrp < <(stats "$dir/execsr")
read -r esr0m esr0p < <(stats "$dir/execsr0")
read -r lm lp < <(stats "$dir/lockunlock")
read -r hm hp < <(stats "$dir/handoff")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
pct() {	# pct FILE P: the P-th percentile of the sorted numbers in FILE
	awk -v p="$2" '{ v[NR] = $1 } END { i = int(NR * p / 100 + 0.999); if (i < 1) i = 1; print v[i] + 0 }' "$1"
}
read -r c4f _ < <(stats "$dir/c_flock_4")
read -r c4r _ < <(stats "$dir/c_rl_4")
read -r c16f _ < <(stats "$dir/c_flock_16")
read -r c16r _ < <(stats "$dir/c_rl_16")

table=$(cat <<TABLE
| scenario | median | p99 | median / flock |
| --- | --- | --- | --- |
| \`flock FILE true\` | ${fm} us | ${fp} us | 1.00 |
| \`redlock exec NAME -- true\` (uncontended) | ${em} us | ${ep} us | $(ratio "$em" "$fm") |
| \`redlock -u M1,...,M5 exec NAME -- true\` (Redlock, 5 masters) | ${e5m} us | ${e5p} us | $(ratio "$e5m" "$fm") ($(ratio "$e5m" "$em") x one master) |
| \`redlock -u rediss://... exec NAME -- true\` (TLS, one server) | ${etm} us | ${etp} us | $(ratio "$etm" "$fm") ($(ratio "$etm" "$em") x plain) |
| \`redlock -u redis://NODE exec NAME -- true\` (Redis Cluster of 3 masters, through the node that owns NAME's slot) | ${eclm} us | ${eclp} us | $(ratio "$eclm" "$fm") ($(ratio "$eclm" "$em") x standalone) |
| the same through another node of the cluster (a MOVED first) | ${eclxm} us | ${eclxp} us | $(ratio "$eclxm" "$fm") ($(ratio "$eclxm" "$em") x standalone) |
| \`redlock -u redis+sentinel://S/bm exec NAME -- true\` (one sentinel, one master) | ${esnm} us | ${esnp} us | $(ratio "$esnm" "$fm") ($(ratio "$esnm" "$em") x direct) |
| \`redlock -u redis+sentinel://S/bm2 exec NAME -- true\` (a master with one replica: the default WAITs for it) | ${esrm} us | ${esrp} us | $(ratio "$esrm" "$fm") ($(ratio "$esrm" "$esr0m") x --replicas 0) |
| the same with \`--replicas 0\` | ${esr0m} us | ${esr0p} us | $(ratio "$esr0m" "$fm") |
| \`redlock lock\` + \`redlock unlock\` (two processes) | ${lm} us | ${lp} us | $(ratio "$lm" "$fm") |
| handoff: unlock start to next holder's acquisition (ms clock) | ${hm} us | ${hp} us | - |
TABLE
)
hrow() {	# hrow TITLE LABEL: one handoff row
	local s=$dir/s_$2 a=$dir/a_$2 acq=-
	[ -s "$a" ] && acq="$(pct "$a" 50) us / $(pct "$a" 99) us"
	echo "| $1 | $(pct "$s" 50) us | $(pct "$s" 99) us | $(ratio "$(pct "$s" 50)" "$(pct "$dir/s_flock" 50)") | $(ratio "$(pct "$s" 50)" "$(pct "$dir/s_plain" 50)") | $acq | $(wc -l <"$s") |"
}
brow() {	# brow TITLE FILE FLOCKFILE: one shared handoff row
	local m fm
	m=$(pct "$dir/$2" 50)
	fm=$(pct "$dir/$3" 50)
	echo "| $1 | $m us | $(pct "$dir/$2" 99) us | $fm us | $(pct "$dir/$3" 99) us | $(ratio "$m" "$fm") | $(ratio "$m" "$(pct "$dir/f_xx" 50)") |"
}
crow() {	# crow TITLE US LABEL: redlock's server time against Redisson's
	local r
	r=$(rmed "$3" 1)
	echo "| $1 | $2 us | $r us | $(ratio "$2" "$r") | $(rmed "$3" 2) us |"
}
xrow() {	# xrow TITLE LABEL: one handoff's breakdown
	local s=$dir/s_$2 x
	x=$(pct "$dir/x_$2" 50)
	echo "| $1 | $(pct "$dir/r_$2" 50) us | $(pct "$dir/w_$2" 50) us | $x us | $((x - $(pct "$dir/k_spawn" 50))) us | $(pct "$s" 50) us | $(ratio "$(pct "$s" 50)" "$(pct "$dir/s_flock" 50)") | $(pct "$s" 99) us | $(ratio "$(pct "$s" 99)" "$(pct "$dir/s_flock" 99)") | $(wc -l <"$dir/r_$2") |"
}
krow() {	# krow TITLE PAIRS US: one kind's library row
	echo "| $1 | $2 | $(ratio "$kp_lock" "$2") | $3 us | $(ratio "$3" "$ku_lock") |"
}
more=$(cat <<TABLE
| scenario | redlock | flock | redlock / flock |
| --- | --- | --- | --- |
| contended, 4 workers x 10 runs of 20 ms, total wall (median of 5) | ${c4r} ms | ${c4f} ms | $(ratio "$c4r" "$c4f") |
| contended, 16 workers x 10 runs of 20 ms, total wall (median of 5) | ${c16r} ms | ${c16f} ms | $(ratio "$c16r" "$c16f") |

| handoff: one COMMAND's end to the next one's start | median | p99 | median / flock | median / redlock | to the acquisition: median / p99 | handoffs |
| --- | --- | --- | --- | --- | --- | --- |
$(hrow "flock(1)" flock)
$(hrow "redlock, one server" plain)
$(hrow "redlock \`--fair\`, one server" fair)
$(hrow "redlock, 5 masters (Redlock)" redlock)
$(hrow "redlock over TLS, one server" tls)
$(hrow "redlock \`--limit 1\` (a permit), one server" limit1)
$(hrow "redlock \`--limit 2\`, 3 workers, one server" limit2)
$(hrow "redlock \`--write\` to \`--write\`, one server" write)

| shared handoff: the last holder's COMMAND end to a waiter's COMMAND start | median | p99 | flock(1) -x / -s, same case: median | p99 | median / flock | median / redlock's plain lock |
| --- | --- | --- | --- | --- | --- | --- |
$(brow "plain lock: one holder to one waiter" f_xx f_flock_xx)
$(brow "\`--write\` to 3 \`-s\` waiters: the first reader starts" f_wr f_flock_wr)
$(brow "\`--write\` to 3 \`-s\` waiters: the last reader starts" l_wr l_flock_wr)
$(brow "3 \`-s\` holders to a \`--write\` waiter" f_rw f_flock_rw)

| resources | value |
| --- | --- |
| peak RSS (VmHWM) of redlock during exec | ${rss_p} KiB |
| peak RSS (VmHWM) of its watchdog | ${rss_w} KiB |
| library: acquire+release pairs per second, one process | ${pairs} |
| the same on 3 masters (Redlock) | ${pairs3} (pair takes $(ratio "$pairs" "$pairs3") x one master) |
| the same on 5 masters (Redlock) | ${pairs5} (pair takes $(ratio "$pairs" "$pairs5") x one master) |
| the same over TLS, one server | ${pairstls} (pair takes $(ratio "$pairs" "$pairstls") x plain) |
| server ceiling: PING round trips per second, one client | ${ping} (= $((ping / 2)) pairs) |
| library: pairs per second, standalone server (alternating with the next two, median of 5 x 5000) | $(lpmed plain) |
| the same through a Redis Cluster node (3 masters) | $(lpmed cluster) (pair takes $(ratio "$(lpmed plain)" "$(lpmed cluster)") x standalone) |
| the same through \`redis+sentinel://\` (one sentinel) | $(lpmed sentinel) (pair takes $(ratio "$(lpmed plain)" "$(lpmed sentinel)") x direct) |

| pipelined, one connection (\`redis-cli --pipe\`, median of 5) | per second | x PING |
| --- | --- | --- |
| PING (1000000 per pass) | $(ppmed ping) | 1.00 |
| acquire+release pairs, 2 EVALSHA each, 1000 names in turn (50000 per pass) | $(ppmed pairs) | a pair costs $(ratio "$(ppmed ping)" "$(ppmed pairs)") PINGs |
| PING, \`redis-benchmark -c 1 -P 16\` | $(ppmed bench) | $(ratio "$(ppmed bench)" "$(ppmed ping)") |

| server time per operation (INFO commandstats: usec of EVALSHA and EVAL / 5000; median of 5, alternating) | redlock | Redisson | redlock / Redisson | Redisson's DEL of the unlock latch, not counted |
| --- | --- | --- | --- | --- |
$(crow "acquire+release / \`RLock\` lock+unlock" "$ku_lock" lock)
$(crow "renewal / \`RLock\`'s watchdog renewal" "$ku_renew" renew)
$(crow "\`--fair\` acquire+release (nobody queued) / \`RFairLock\` lock+unlock" "$ku_fair" fair)
$(crow "\`--limit 1\` acquire+release / \`RPermitExpirableSemaphore\` tryAcquire+release" "$ku_permit" permit)
$(crow "\`-s\` acquire+release / \`RReadLock\` lock+unlock" "$ku_read" read)
$(crow "\`--write\` acquire+release / \`RWriteLock\` lock+unlock" "$ku_write" write)

| handoff breakdown (one holder at a time; medians) | COMMAND end to the release reply (-v released) | release reply to the next -v acquired | acquired to COMMAND start | the same, minus a bare fork and exec of COMMAND | COMMAND end to start | / flock | p99 | p99 / flock | handoffs |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
| flock(1) | - | - | $(pct "$dir/k_spawn" 50) us (bench-spawn: fork and exec) | 0 us | $(pct "$dir/s_flock" 50) us | 1.00 | $(pct "$dir/s_flock" 99) us | 1.00 | $(wc -l <"$dir/s_flock") |
$(xrow "redlock, one server" plain)
$(xrow "redlock \`--fair\`" fair)
$(xrow "redlock \`--limit 1\`" limit1)
$(xrow "redlock \`--write\`" write)
$(xrow "redlock over TLS" tls)

| library, one server: acquire+release of each kind (median of 5 x 5000) | pairs per second | pair takes x the lock's | server time per pair (EVALSHA usec) | server time x the lock's |
| --- | --- | --- | --- | --- |
$(krow "lock (exclusive)" "$kp_lock" "$ku_lock")
$(krow "lock (exclusive), no history (\`REDLOCK_HISTORY=0\`)" "$kp_nohist" "$ku_nohist")
$(krow "\`--write\` (write lock)" "$kp_write" "$ku_write")
$(krow "\`-s\` (read lock)" "$kp_read" "$ku_read")
$(krow "\`--limit 1\` (a permit)" "$kp_permit" "$ku_permit")
TABLE
)
echo "$table"
echo
echo "$more"
echo
fair=$(printf '%s\n%s\n%s\n' \
    "| fair waiters | handoff median | handoff p99 | EVALSHA us/call, busy path | EVALSHA us/call, handoffs |" \
    "| --- | --- | --- | --- | --- |" \
    "$("$here/fair.sh" "$rl" "$port")")
echo "$fair"
drain=$(printf '%s\n%s\n%s\n' \
    "| waiters | plain: script calls | server time | wall | \`--fair\`: script calls | server time | wall |" \
    "| --- | --- | --- | --- | --- | --- | --- |" \
    "$("$here/drain.sh" "$rl" "$port")")
echo "$drain"
wake=$(printf '%s\n%s\n%s\n' \
    "| holder released \\ waiter | redlock | redlock \`--fair\` | Redisson \`RLock\` | Redisson \`RFairLock\` |" \
    "| --- | --- | --- | --- | --- |" \
    "$("$here/wake.sh" "$rl" "$port")")
echo "$wake"
# handover_rows LABEL: bench-handover's two ways, 2000 rounds, as rows.
handover_rows() {
	"${rl%/*}/bench-handover" "$port" 2000 | awk -v l="$1" '
	function row(w) { printf "| %s%s | %d us | %d us | %d us | %d |\n", l, w, $2, $3, $4, $5 }
	$1 == "message" { row("the message, then the acquisition (as redlock waits)") }
	$1 == "pop" { row("the acquisition queued behind a blocking pop (as a grant would go)") }'
}
handover=$(
	echo "| the release's send to the waiter's acquisition reply | median | p90 | p99 | rounds |"
	echo "| --- | --- | --- | --- | --- |"
	handover_rows ""
	while :; do /bin/true; done &
	churn=$!
	handover_rows "beside a loop that forks and execs true: "
	kill "$churn"
	wait "$churn" 2>/dev/null || :
)
echo "$handover"
{
	echo "# Benchmark results"
	echo
	echo "Written by \`make bench\` (test/bench/run.sh) on $(date -u +%Y-%m-%d),"
	echo "$(nproc) cores, $(uname -sr), Redis $(redis-server --version | cut -d' ' -f3 | cut -d= -f2),"
	echo "$rounds rounds, redlock and flock alternating in each round"
	echo "(p99 of $rounds rounds is the slowest round)."
	echo "Load average (1, 5, 15 min) $load0 at the start and"
	echo "$(cut -d' ' -f1-3 /proc/loadavg) at the end, on $(nproc) cores${BENCH_NOTE:+: $BENCH_NOTE}."
	echo "Other work on the machine slows both sides of a ratio alike:"
	echo "every figure below is a ratio within this run, the two sides"
	echo "measured in the same rounds, kinds alternating round by round."
	echo "Wall time per command from the shell, including fork and exec."
	echo "Handoff times come from the server's clock at millisecond"
	echo "resolution (since_ms of the new holder), so they read in steps"
	echo "of 1000 us."
	echo
	echo "$table"
	echo
	echo "Contended runs start all workers at once and time until the last"
	echo "finishes. Handoffs: three workers take turns, 5 runs each per"
	echo "round, the kinds alternating round by round ($hrounds rounds), each running a bash"
	echo "COMMAND that prints EPOCHREALTIME at its start and, 3 ms later, at"
	echo "its end. A gap runs from one COMMAND's end to the next one's start,"
	echo "so it holds COMMAND's exit, the release, the wake-up, the"
	echo "acquisition, the spawn of COMMAND by the watchdog (forked before"
	echo "the wait: one vfork and exec after the acquisition), and bash's"
	echo "start; the same for flock(1) in the same run. The column to the"
	echo "acquisition stops at the next holder's -v acquired event."
	echo "Permits (\`--limit\`) and write locks take turns the same way;"
	echo "with \`--limit 2\` two of the three workers hold at once, and each"
	echo "start is matched to the permit freed first. Shared handoffs: in"
	echo "each of $rounds rounds, K holders of one kind hold a name until M"
	echo "waiters of the other kind wait on it (for the plain lock, one"
	echo "holder and one waiter; subscribed to its channel, or for flock(1)"
	echo "blocked in /proc/locks), then end within a millisecond of each"
	echo "other; the gap runs from the last holder's COMMAND end to a"
	echo "waiter's COMMAND start. flock(1) -x and -s run the same cases in"
	echo "the same rounds. Unlike the turns above, no worker that released"
	echo "starts its next run at that moment and competes for the 2 cores:"
	echo "compare each row with the plain lock's and flock's of its own"
	echo "table. Redis Cluster: three masters made by"
	echo "\`redis-cli --cluster create\`, no replicas; Sentinel: one"
	echo "\`redis-sentinel\` watching the standalone server (redlock asks it"
	echo "for the master at every connect), and another master with one"
	echo "replica (bm2), where the Sentinel default WAITs for the replica"
	echo "after each acquisition. The library's"
	echo "server time per pair is the usec of EVALSHA (and EVAL) in INFO"
	echo "commandstats over 5000 pairs, divided by 5000; the kinds"
	echo "alternate, medians of 5 rounds. Redisson's side is test/bench/cost.py"
	echo "running Redisson's scripts (test/bats/redisson.py) with the"
	echo "arguments its client gives, over a raw socket, 5000 operations"
	echo "on the same server, alternating with redlock's kind for kind:"
	echo "RLock's lock and unlock, its watchdog renewal, RFairLock's lock"
	echo "and unlock with nobody queued, RPermitExpirableSemaphore's"
	echo "tryAcquire (one permit, leased) and release, RReadLock's and"
	echo "RWriteLock's lock and unlock. redlock's side is bench-lib, which"
	echo "records holder metadata as exec does; its renewal is 5000"
	echo "renewals of one hold. Redisson's client also deletes an unlock"
	echo "latch key with a DEL after each unlock: shown, not counted."
	echo "Pipelined: \`redis-cli --pipe\` sends a file of commands on one"
	echo "connection without waiting for replies; the pairs are the two"
	echo "EVALSHA calls of bench-lib's acquire+release, caught with MONITOR,"
	echo "on 1000 names in turn. The handoff breakdown splits each handoff"
	echo "of the turns above at the releasing watchdog's -v released event"
	echo "(printed once the release's reply came) and the next holder's -v"
	echo "acquired event; a negative middle part means the next holder had"
	echo "the lock before the releaser had read its reply. Its fourth column"
	echo "takes away what flock(1) itself spends there: test/bench/spawn.c"
	echo "reads the clock, forks and execs the same bash COMMAND (5 times a"
	echo "round, median)."
	echo
	echo "$more"
	echo
	cat <<'WHERE'
Where the time of a handoff goes, profiled by hand on 2026-11-28 with
`strace -f -tt` and `perf record` (2 cores, Redis 7.0.15), each side
measured alone, alternating, 80 runs, medians:

- Acquired to COMMAND start: since the watchdog does the waiting and
  spawns COMMAND with one vfork, 1947 us against 1896 us for
  bench-spawn's bare fork and exec of the same bash COMMAND (+51 us:
  COMMAND's environment, its process group, the signal dispositions
  put back, the pipe that carries exec's errno). With the watchdog
  forked after the acquisition and forking COMMAND in turn, the same
  step took 2524 us (+628 us). In the turns above the step reads
  longer, since the releasing worker's processes exit and the next
  worker starts on the same 2 cores at that moment.
- COMMAND end to the release reply: 640 us alone, most of it bash's
  own exit; from the watchdog's SIGCHLD to its EVALSHA there are a
  dozen system calls, then one round trip and the release script.
- Release reply to the next acquisition: 820 us alone (one holder, one
  waiter, 30 runs): the PUBLISH, the waiter's wake-up, its one EVALSHA.
  On this virtual machine a process woken on an idle core takes a few
  hundred microseconds to run (strace: the waiter reads the message
  480 us after the releaser's event), and a handoff wakes a process six
  times (the watchdog at COMMAND's exit, the server, the waiter, the
  server, the waiter, COMMAND) where flock(1) wakes three. A release
  that handed the lock to the waiter it wakes would save two; it is not
  built (the waiter's local deadline would start at its last word to
  the server, the grant's lease bounded by its waiter timeout, and on
  several masters each could grant a different waiter). The last table
  below bounds what it would save: 25-50 us at the median, where the
  plain lock's handoff has been 60-140 us over 1.2 x flock(1) in the
  last runs of this benchmark.
- TLS: a process spends about 8 ms of CPU in OpenSSL 3.0 before its
  first command (`perf stat`: 9.3 ms of task clock for a `status` over
  rediss://, 1.1 ms over redis://): SSL_CTX_new fetches every cipher
  (EVP_CIPHER_fetch), the CA file goes through OpenSSL's decoders,
  libssl and libcrypto are loaded and relocated (lazy binding changes
  nothing measurable), then the handshake. The watchdog no longer
  makes a second connection, but every run still pays that once, and
  in the turns the next worker pays it while the lock changes hands.
  Step by step (a C program doing only these, 3 runs each, 2026-11-28):
  dlopen of libssl 0.77-0.95 ms, OPENSSL_init_ssl 0.43-0.50 ms (0.13 ms
  without reading openssl.cnf, which carries the system's TLS policy),
  SSL_CTX_new 0.94-1.24 ms, the CA file 0.28-0.33 ms, the handshake
  (P-256) 1.09-1.21 ms: about 3.7 ms, where a whole uncontended plain
  `exec -- true` takes 2.25 ms (`perf stat`, 300 runs). TLS `exec`
  within 1.5 x plain would need all of it under 1.2 ms; resuming a
  session (from a cache on disk, with its secrets) would save part of
  the handshake only.
- Uncontended `exec -- true` (`perf stat`, 300 runs, 2026-11-28):
  2.25 ms against 1.60 ms for flock(1). Beyond flock's work redlock
  connects, makes two round trips (the acquisition and the release),
  and forks its watchdog, which outlives a SIGKILLed redlock to end
  COMMAND and release (guarantee 3): a second process, its fork, its
  exit and its wait are on this path. Each script round used to format
  the EVAL of the whole script (20-42 KB, twice more with SPUBLISH)
  beside its EVALSHA; it is now made only for a master that needs it,
  and the holder's metadata (host, user, the masked command
  line) is computed while HELLO is on its way: 2.28-2.30 ms before
  these two, 2.25-2.27 ms after, 17 fewer page faults; the library's
  acquire+release pairs per second went from 6536 to 6942 between two
  runs of `make bench`, whose PING ceilings were 19477 and 19936.
- What changes to the start and end of exec would buy, measured on
  2026-11-28 with throwaway builds (`perf stat`, 200 runs each of
  `exec -- true`, the builds alternating in 8 rounds, medians;
  flock(1) 1548 us, the current exec 2141 us):
  - redlock itself as the watchdog (it acquires, spawns COMMAND,
    keeps the lease and releases), with a helper forked before the
    acquisition that only waits for redlock's death (guarantee 3):
    2005 us, 100-163 us less in every round. The end no longer waits
    for a watchdog's exit and a wake-up of redlock. The helper measured
    exited once COMMAND had started; built for real it stays until the
    release is written, and its exit overlaps the release's round trip.
    Not built: COMMAND would then be redlock's child, and must die
    with it (a parent-death SIGKILL), or a SIGKILL of both redlock and
    its helper (`pkill -9 redlock`) would leave COMMAND running past
    its lease. So a SIGKILL of redlock alone, a CI runner's cancel of
    its process group among them, would kill COMMAND at once, where
    today the watchdog, COMMAND's parent, outlives redlock and sends
    COMMAND SIGTERM and then SIGKILL after --kill-after, and COMMAND
    still dies with the watchdog.
  - The watchdog forked only once the acquisition's EVALSHA is
    written, so that the fork overlaps the round trip: 2161 us, no
    gain.
  - The user's name without NSS: getpwuid takes 60-90 us on its first
    call in a fresh process, reading /etc/passwd 5 us. Built: where
    /etc/nsswitch.conf has users looked up in files first, the name is
    the uid's first entry in /etc/passwd, as getpwuid would find it.
    In 8 more rounds: exec 2154 -> 2092 us, `lock -n` 1202 -> 1150 us
    (flock 1531 us).
  - redlock exiting without waiting for its watchdog's exit: 20-150 us
    less in 4 rounds. Not taken: init would be left to reap the
    watchdog, a zombie per run under a PID 1 that does not reap.
  - hiredis linked statically: 2186 -> 2114 us in 8 more rounds. Not
    taken: a fix to hiredis's reply reader (CVE-2021-32765 was one)
    would then reach redlock only by a rebuild. Bound at load time
    (-z now): 2160 us, within the noise.
  - Measured again on 2026-11-28, each command through env(1), 6 to 8
    rounds of 200 runs (flock 2166-2214 us): redlock and its watchdog
    kept on one core until COMMAND starts, so that the fork and the
    wake-ups between them stay on a warm core (sched_setaffinity, put
    back for COMMAND), 2770 against 2778 us; the watchdog ending with
    _exit right after its report, without closing its connections,
    2829 against 2833 us; -z now, 2831 us. None of them gains. An exec
    takes 222 page faults, flock(1) and its COMMAND 151.
- The slowest handoffs of the turns, measured apart on 2026-11-28
  (3 workers, 10 rounds of 5 runs each, each run's launch time kept):
  of 140 handoffs of the plain lock, 2 to 5 (in each of 5 sets) went to
  a process started after the last COMMAND had ended, when no waiter
  was left: 2.8-3.2 ms, the slowest of the set, against a median of
  1.5-1.6 ms. Its worker had lost the lock to the other two several
  times in a row and ran its last runs alone. None under `--fair`,
  none under flock(1), whose waiters the kernel wakes in turn. The
  plain lock's p99 there is redlock's start up to COMMAND rather than a
  handoff. Waking the room's oldest waiter instead of its newest
  changed nothing measurable (1 and 2 such handoffs against 2 and 3);
  publishing on the name's channel, where the room's listener hears,
  before waking the room's waiter made it worse (6 to 19 against 3
  and 4, in 4 sets each).
WHERE
	echo
	echo 'Fair queues (test/bench/fair.sh): N `exec --fair` waiters queued behind a'
	echo "holder, then handed the lock one after another. Handoff is the gap"
	echo "from one COMMAND's end to the next one's start (release, wake-up,"
	echo "acquire, watchdog and COMMAND start). The busy path is 200 attempts"
	echo 'of `lock --fair -n` with N queued: the script every heartbeat runs.'
	echo
	echo "$fair"
	echo
	echo 'Draining a crowd (test/bench/drain.sh): N `exec -w` waiters, plain'
	echo 'or `--fair`, behind a held lock, then one release; each takes the'
	echo "lock in turn and runs true. Script calls (EVALSHA and EVAL) and the"
	echo "server's time in them from INFO commandstats, from the release to"
	echo "the last waiter's end. A release wakes one plain waiter of the"
	echo "room (and the room's listener), not all of them: waking them all"
	echo "cost about N squared over 2 calls (20,301 for 200 waiters)."
	echo
	echo "$drain"
	echo
	echo "Wake-ups across kinds (test/bench/wake.sh): a holder of each kind takes"
	echo "a name with a 30 s lease, a waiter of each kind waits on it, and"
	echo "the holder releases; the median of 5 rounds of the time from the"
	echo "release (the start of \`redlock unlock\`, or the reply to a Redisson"
	echo "release script) to the waiter holding the name. Redisson's clients"
	echo "are test/bats/redisson.py speaking its protocol on the wire. \"-\""
	echo "where the waiter was not woken within 3 s: Redisson's own releases"
	echo "do not wake those Redisson waiters, which wait for the lease."
	echo
	echo "$wake"
	echo
	echo "The server's side of a handoff (test/bench/handover.c): one holder,"
	echo "one waiter, the least scripts a lock needs (SET NX PX, DEL), from"
	echo "the release's send to the waiter reading the reply of the"
	echo "acquisition that took the lock; the two ways alternate round by"
	echo "round. Today a waiter hears the release's message, then sends its"
	echo "acquisition: the server and then the waiter wake once more. Queued"
	echo "behind a blocking pop that the release feeds, the acquisition runs"
	echo "as the pop returns and the waiter wakes once, for both replies. A"
	echo "release that granted the lock to the waiter it wakes removes the"
	echo "same two wake-ups, so the difference bounds what such a grant, or"
	echo "such a queued acquisition, would take off a handoff."
	echo
	echo "$handover"
} >"$here/RESULTS.md"
