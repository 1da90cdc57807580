#!/bin/bash
# failover.sh: the torture's failover faults, on servers of their own:
# sentinel: a master, its replica and three sentinels; the workers go
#   through a redis+sentinel:// URL. Fault "failover": the replica is cut
#   off from its master for 300-500 ms (what the master writes then
#   stays there), then SENTINEL FAILOVER promotes it; once the sentinel
#   names the new master, the old one takes the writes of the clients
#   still on it for up to 400 ms more, and is then demoted as Sentinel
#   does it (REPLICAOF the new master, CLIENT KILL its clients), sooner
#   than Sentinel's 8-10 s.
# cluster: six nodes (three masters, three replicas) made with
#   redis-cli --cluster create; the workers are given one node's URL.
#   Fault "migrate": the names' slot moves to another master, keys and
#   all, as redis-cli --cluster reshard moves one slot. Fault "takeover":
#   the replica of the names' master is cut off from it for 300-500 ms,
#   then takes over (CLUSTER FAILOVER TAKEOVER); the old master learns
#   of it, turns into the new one's replica and drops its data.
# Two groups of 2 workers take turns, each on a name of its own and
# through a fenced store of its own (as in run.sh): DIR/TOPOLOGY with
# plain `redlock exec` (through Sentinel its default WAITs for a replica
# after each acquisition and renewal, and hears +switch-master), and
# DIR/TOPOLOGY-r0 with `exec --replicas 0` (neither WAIT; the switch
# still heard) for sentinel, DIR/TOPOLOGY-r1 with `exec --replicas 1`
# for cluster. The two names share a hash tag, so every fault hits both.
# A turn's waiter is connected before a failover, its next turn is a new
# process after it: the scenario of two holders on two masters.
# usage: test/torture/failover.sh sentinel|cluster DIR REDLOCK SECONDS
# Faults go on until SECONDS after the start (the set-up included), and
# past it (SECONDS more at most) until each kind happened SECONDS/30 times
# (at least once). Each
# fault appends "TOPOLOGY FAULT" to DIR/TOPOLOGY/faults (and to the other
# group's), and a failover its window, "FAULT START END" in nanoseconds from
# the cut to the end of the demotion, to DIR/TOPOLOGY/windows: the
# holders of those moments are the ones hit (run.sh). Every process it
# starts is killed before it exits.
set -u
topo=$1 dir=$2 rl=$3 seconds=$4
here=$(cd "$(dirname "$0")" && pwd)
server=${REDLOCK_TEST_SERVER:-redis-server}
end=$(($(date +%s) + seconds))
ttl=600ms
alt=$topo-r1 altopts=(--replicas 1)
[ "$topo" != sentinel ] || alt=$topo-r0 altopts=(--replicas 0)
groups="$topo $alt"
nodes=()	# the pids of the servers and sentinels
cleanup() {
	local g p
	for g in $groups; do touch "$dir/$g/stop"; done
	# The workers end after their turn (a wait of 5 s at most).
	for p in $(jobs -p); do
		[[ " ${nodes[*]} " == *" $p "* ]] || wait "$p" 2>/dev/null
	done
	for p in "${nodes[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
}
trap cleanup EXIT
trap 'exit 1' TERM INT HUP
log() { echo "failover.sh: $topo: $*" >&2; }

# wait_for SECONDS CMD...: poll CMD until it succeeds, at most SECONDS.
wait_for() {
	local deadline=$(($(date +%s%N) + $1 * 1000000000))
	shift
	until "$@"; do
		[ "$(date +%s%N)" -lt "$deadline" ] || return 1
		sleep 0.02
	done
}
# node NAME ARGS...: a server (a sentinel when ARGS is a config file and
# --sentinel) in DIR/NAME on a free port, which it puts in $port.
node() {
	local n=$1 pid
	shift
	mkdir -p "$dir/$n"
	for _ in $(seq 1 20); do
		port=$((20000 + RANDOM % 12000))
		redis-cli -p "$port" ping >/dev/null 2>&1 && continue
		if [ "${1-}" != --sentinel ]; then
			"$server" --port "$port" --bind 127.0.0.1 --save '' \
			    --appendonly no --dir "$dir/$n" --logfile "$dir/$n/log" \
			    --repl-diskless-sync-delay 0 "$@" >"$dir/$n/out" 2>&1 &
		elif [ "$server" = redis-server ]; then
			sentinel_conf "$dir/$n" "$port"
			redis-sentinel "$dir/$n/sentinel.conf" >"$dir/$n/out" 2>&1 &
		else
			sentinel_conf "$dir/$n" "$port"
			"$server" "$dir/$n/sentinel.conf" --sentinel \
			    >"$dir/$n/out" 2>&1 &
		fi
		pid=$!
		nodes+=("$pid")
		wait_for 5 eval 'redis-cli -p "$port" ping 2>/dev/null | grep -q PONG' &&
		    return 0
		kill -9 "$pid" 2>/dev/null
	done
	log "cannot start $n"
	return 1
}
cli() { redis-cli -p "$@"; }
link_up() { cli "$1" info replication | grep -q '^master_link_status:up'; }
role_is() { [ "$(cli "$1" role 2>/dev/null | head -n 1)" = "$2" ]; }
# cut PORT / uncut PORT: the replica on PORT loses its link to its master
# (it logs in as a user that does not exist) / may sync again.
cut() {
	cli "$1" config set masteruser torture-nobody masterauth nothing >/dev/null
	cli "$1" client kill type master >/dev/null
}
uncut() { cli "$1" config set masteruser "" masterauth "" >/dev/null; }
now() { date +%s%N; }

# The workers: 2 per group, each turn a section through the group's
# store. $url and $names are set by the topology.
workers() {
	local g opts
	for g in $groups; do
		mkdir -p "$dir/$g"
		touch "$dir/$g/store.log" "$dir/$g/hits" "$dir/$g/faults" \
		    "$dir/$g/windows"
		opts=()
		[ "$g" = "$topo" ] || opts=("${altopts[@]}")
		for _ in 1 2; do
			TORTURE_KIND=lock "$here/worker" "$dir/$g" "$rl" -u "$url" \
			    exec "${opts[@]}" -w 5s --ttl "$ttl" --kill-after 200ms \
			    "${names[$g]}" 2>>"$dir/$g/workers.err" &
		done
	done
}
# noted FAULT [START END]: the fault is done; a failover's window too.
noted() {
	local g
	for g in $groups; do
		echo "$topo $1" >>"$dir/$g/faults"
		[ $# = 1 ] || echo "$1 $2 $3" >>"$dir/$g/windows"
	done
	echo "$(now) $topo $*" >>"$dir/$topo/faults.log"
}
declare -A names

# --- sentinel ---
sentinel_conf() {
	{
		echo "port $2"
		echo "bind 127.0.0.1"
		echo "dir $1"
		echo "logfile $1/log"
		echo "sentinel monitor mymaster 127.0.0.1 $m1 2"
		echo "sentinel down-after-milliseconds mymaster 1000"
		echo "sentinel failover-timeout mymaster 5000"
	} >"$1/sentinel.conf"
}
sentinel_master() {
	cli "$s1" sentinel get-master-addr-by-name mymaster | tail -n 1
}
# The sentinel knows the replica of mymaster, and it is not down.
sentinel_sees_replica() {
	cli "$s1" sentinel replicas mymaster | paste - - |
	    awk '$1 == "flags" { f = $2 } END { exit f != "slave" }'
}
sentinel_setup() {
	node m1 || return 1
	m1=$port
	node m2 --replicaof 127.0.0.1 "$m1" || return 1
	m2=$port
	wait_for 10 link_up "$m2" || { log "the replica does not sync"; return 1; }
	local s sp=()
	for s in s1 s2 s3; do node "$s" --sentinel || return 1; sp+=("$port"); done
	s1=${sp[0]}
	wait_for 20 sentinel_sees_replica || { log "the sentinel sees no replica"; return 1; }
	url="redis+sentinel://127.0.0.1:${sp[0]},127.0.0.1:${sp[1]},127.0.0.1:${sp[2]}/mymaster"
	names=([sentinel]=torture-sentinel [sentinel-r0]=torture-sentinel-r0)
}
sentinel_fault() {
	local m r t0
	m=$(sentinel_master)
	if [ "$m" = "$m1" ]; then r=$m2; else r=$m1; fi
	link_up "$r" && sentinel_sees_replica || return 1
	t0=$(now)
	cut "$r"
	sleep "0.$((RANDOM % 3 + 3))"
	if ! cli "$s1" sentinel failover mymaster | grep -q OK; then
		uncut "$r"
		return 1
	fi
	wait_for 10 role_is "$r" master || log "the replica was not promoted"
	uncut "$r"
	wait_for 10 eval '[ "$(sentinel_master)" = "$r" ]' ||
	    log "the sentinel does not name the new master"
	sleep "0.$((RANDOM % 5))"
	cli "$m" replicaof 127.0.0.1 "$r" >/dev/null
	cli "$m" client kill type normal >/dev/null
	cli "$m" client kill type pubsub >/dev/null
	wait_for 10 link_up "$m" || log "the old master does not sync"
	noted failover "$t0" "$(now)"
}

# --- cluster ---
cluster_ok() {
	local p
	for p in "${cn[@]}"; do
		cli "$p" cluster info 2>/dev/null | grep -q '^cluster_state:ok' ||
		    return 1
		[ "$(cli "$p" cluster nodes | wc -l)" = 6 ] || return 1
	done
}
cluster_setup() {
	local i addrs=()
	cn=()
	for i in 1 2 3 4 5 6; do
		node "c$i" --cluster-enabled yes --cluster-config-file nodes.conf \
		    --cluster-node-timeout 2000 || return 1
		cn+=("$port")
		addrs+=("127.0.0.1:$port")
	done
	redis-cli --cluster create "${addrs[@]}" --cluster-replicas 1 \
	    --cluster-yes >"$dir/cluster-create.out" 2>&1 ||
	    { log "redis-cli --cluster create failed"; return 1; }
	wait_for 30 cluster_ok || { log "the cluster is not up"; return 1; }
	url=redis://127.0.0.1:${cn[0]}
	# One hash tag: both names' keys are in one slot.
	names=([cluster]='{torture}' [cluster-r1]='{torture}-r1')
	slot=$(cli "${cn[0]}" cluster keyslot '{torture}')
}
# The masters' ports, and the one that serves the names' slot.
masters() {
	cli "${cn[0]}" cluster nodes | awk '$3 ~ /master/ && $3 !~ /fail/ &&
	    NF >= 9 { split($2, a, "[:@]"); print a[2] }'
}
owner() {
	cli "${cn[0]}" cluster nodes | awk -v s="$slot" '
	    $3 ~ /master/ && $3 !~ /fail/ {
		for (i = 9; i <= NF; i++) {
			if ($i ~ /^\[/) continue
			n = split($i, r, "-"); lo = r[1]; hi = n > 1 ? r[2] : r[1]
			if (s >= lo + 0 && s <= hi + 0) {
				split($2, a, "[:@]"); print a[2]; exit
			}
		}
	    }'
}
replica_of() {
	cli "$1" cluster replicas "$(cli "$1" cluster myid)" |
	    awk '{ split($2, a, "[:@]"); print a[2]; exit }'
}
# Takeovers and migrations take turns, a takeover first.
turn=0
cluster_fault() {
	if [ $((turn % 2)) = 0 ]; then cluster_takeover; else cluster_migrate; fi &&
	    turn=$((turn + 1))
}
# As test/bats/cluster.bats moves a slot: importing, migrating, MIGRATE
# the keys, then every master gives the slot to the new owner, it first.
cluster_migrate() {
	local src dst src_id dst_id keys p
	src=$(owner)
	dst=$(masters | grep -vx "$src" | shuf -n 1)
	[ -n "$src" ] && [ -n "$dst" ] || return 1
	src_id=$(cli "$src" cluster myid)
	dst_id=$(cli "$dst" cluster myid)
	cli "$dst" cluster setslot "$slot" importing "$src_id" >/dev/null
	cli "$src" cluster setslot "$slot" migrating "$dst_id" >/dev/null
	keys=$(cli "$src" cluster getkeysinslot "$slot" 100)
	# shellcheck disable=SC2086
	[ -z "$keys" ] || cli "$src" migrate 127.0.0.1 "$dst" "" 0 5000 \
	    keys $keys >>"$dir/migrate.out"
	for p in "$dst" "$src" $(masters | grep -vx -e "$dst" -e "$src"); do
		cli "$p" cluster setslot "$slot" node "$dst_id" >/dev/null
	done
	wait_for 10 eval '[ "$(owner)" = "$dst" ]' || log "the slot did not move"
	noted migrate
}
cluster_takeover() {
	local m r t0
	m=$(owner)
	r=$(replica_of "$m")
	[ -n "$r" ] && link_up "$r" && cluster_ok || return 1
	t0=$(now)
	cut "$r"
	sleep "0.$((RANDOM % 3 + 3))"
	if [ "$(cli "$r" cluster failover takeover)" != OK ]; then
		uncut "$r"
		return 1
	fi
	wait_for 10 eval '[ "$(owner)" = "$r" ]' || log "the takeover did not happen"
	uncut "$r"
	wait_for 15 eval 'role_is "$m" slave && link_up "$m"' ||
	    log "the old master does not sync from the new one"
	noted takeover "$t0" "$(now)"
	wait_for 15 cluster_ok || log "the cluster is not ok after the takeover"
}

"${topo}_setup" || exit 1
workers
# Faults until the end, 1 to 2 s apart; one with nothing to do (the
# sentinel not ready, a replica still syncing) is tried again. On a loaded
# box the set-up (a cluster of six made and agreed on) can take most of
# SECONDS: the faults go on past the end, for as long again at most, until
# each kind of fault happened as often as run.sh asks (SECONDS/30, at
# least once).
min=$((seconds / 30))
[ "$min" -ge 1 ] || min=1
case $topo in
sentinel) kinds=failover ;;
cluster) kinds="takeover migrate" ;;
esac
enough() {
	local k
	for k in $kinds; do
		[ "$(grep -c "^$topo $k\$" "$dir/$topo/faults")" -ge "$min" ] ||
		    return 1
	done
}
hard_end=$((end + seconds))
while [ "$(date +%s)" -lt "$end" ] ||
    { ! enough && [ "$(date +%s)" -lt "$hard_end" ]; }; do
	sleep "1.$((RANDOM % 10))"
	if [ "$(date +%s)" -ge "$end" ] &&
	    { enough || [ "$(date +%s)" -ge "$hard_end" ]; }; then
		break
	fi
	"${topo}_fault"
done
exit 0
