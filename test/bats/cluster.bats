#!/usr/bin/env bats
# Redis Cluster: six real nodes (three masters, three replicas) made with
# redis-cli --cluster create; redlock is given one node's URL.

load helpers

setup_file() { start_cluster 6 1 --repl-diskless-sync-delay 0; }
teardown_file() { stop_cluster; }
setup() {
	D=$BATS_TEST_TMPDIR
	U="redis://127.0.0.1:$C1_PORT"
	redis-cli -c -p "$C1_PORT" flushall >/dev/null
	for p in $(masters); do redis-cli -p "$p" flushall >/dev/null; done
}

# tag NAME: Redisson's prefix of NAME's own keys, {NAME}, or NAME when it
# has a brace already.
tag() { case $1 in *'{'*) echo "$1" ;; *) echo "{$1}" ;; esac; }

# The ports of the masters (that serve slots: a node is a master without
# any for a while after the cluster is made), and the one that serves
# NAME's slot.
masters() {
	redis-cli -p "$C1_PORT" cluster nodes |
	    awk '$3 ~ /master/ && $3 !~ /fail/ && NF >= 9 {
		split($2, a, "[:@]"); print a[2] }'
}
owner() {
	local slot
	slot=$(redis-cli -p "$C1_PORT" cluster keyslot "$1")
	redis-cli -p "$C1_PORT" cluster nodes | awk -v s="$slot" '
	    $3 ~ /master/ && $3 !~ /fail/ {
		for (i = 9; i <= NF; i++) {
			if ($i ~ /^\[/) continue	# a slot being moved
			n = split($i, r, "-"); lo = r[1]; hi = n > 1 ? r[2] : r[1]
			if (s >= lo + 0 && s <= hi + 0) {
				split($2, a, "[:@]"); print a[2]; exit
			}
		}
	    }'
}
ccli() { redis-cli -c -p "$C1_PORT" "$@"; }

@test "exec, lock, unlock, status and queue on names across many slots, through one node's URL" {
	local n seen=""
	for n in $(seq 1 24); do
		run -0 --separate-stderr "$RL" -u "$U" exec -t 5s "job$n" -- \
		    sh -c 'echo "$REDLOCK_FENCE"'
		assert_output --regexp '^[0-9]+$'
		tok=$("$RL" -u "$U" lock -t 30s "job$n")
		[ "$(ccli hexists "job$n" "$tok")" = 1 ]
		run -0 "$RL" -u "$U" status "job$n"
		assert_output --partial "job$n: held"
		run -0 "$RL" -u "$U" queue "job$n"
		run -0 "$RL" -u "$U" unlock --owner "$tok" "job$n"
		[ "$(ccli exists "job$n")" = 0 ]
		seen="$seen $(owner "job$n")"
	done
	# The names fell on every master, not only the one in the URL.
	[ "$(tr ' ' '\n' <<<"$seen" | sort -u | grep -c .)" = 3 ]
}

@test "a master that may evict, reached through MOVED: exec warns once, naming that node, not the one in the URL" {
	local n name p
	for n in $(seq 1 64); do
		[ "$(owner "ev$n")" = "$C1_PORT" ] || break
	done
	name=ev$n
	p=$(owner "$name")
	[ "$p" != "$C1_PORT" ]
	redis-cli -p "$p" config set maxmemory 50mb >/dev/null
	redis-cli -p "$p" config set maxmemory-policy allkeys-lru >/dev/null
	run --separate-stderr "$RL" -u "$U" exec "$name" -- echo ran
	redis-cli -p "$p" config set maxmemory 0 >/dev/null
	redis-cli -p "$p" config set maxmemory-policy noeviction >/dev/null
	[ "$status" = 0 ]
	assert_output ran
	[ "$stderr" = "redlock: warning: redis://127.0.0.1:$p has maxmemory-policy allkeys-lru: it may evict a held lock (another holder then runs beside this one); set maxmemory-policy noeviction" ]
}

@test "status reads Redisson read-write locks and semaphores on every master: their keys share the name's slot" {
	local n a=b5c3a1f2-0000-4000-8000-000000000001:57 seen=""
	for n in rw1 rw2 rw3 rw4 'x{rw5}'; do
		ccli hset "$n" mode read "$a" 1 >/dev/null
		ccli pexpire "$n" 30000 >/dev/null
		ccli set "$(tag "$n"):$a:rwlock_timeout:1" 1 px 30000 >/dev/null
		run -0 --separate-stderr "$RL" -u "$U" status --json "$n"
		echo "$output" | jq -e '.mode == "read" and .readers[0].lease_ms > 20000'
		ccli set "s$n" 2 >/dev/null
		ccli zadd "$(tag "s$n"):timeout" 922337203685477 abcd >/dev/null
		run -0 --separate-stderr "$RL" -u "$U" status --json "s$n"
		echo "$output" | jq -e '.permits_free == 2 and .permits[0].id == "abcd"'
		seen="$seen $(owner "$n") $(owner "s$n")"
	done
	[ "$(tr ' ' '\n' <<<"$seen" | sort -u | grep -c .)" -ge 2 ]
}

@test "a fair queue on a name another master serves: the waiter is handed the lock" {
	name=fair7
	[ "$(owner "$name")" != "$C1_PORT" ] || name=fair8
	tok=$("$RL" -u "$U" lock --fair -t 30s "$name")
	"$RL" -u "$U" exec --fair -w 20s "$name" -- touch "$D/ran" 3>&- &
	epid=$!
	wait_for 10 eval '[ "$(ccli llen "redisson_lock_queue:{$name}")" = 1 ]'
	run -0 "$RL" -u "$U" unlock --owner "$tok" "$name"
	reap "$epid"
	[ -e "$D/ran" ]
	[ "$(ccli exists "$name")" = 0 ]
}

@test "a name whose keys would split over slots is a usage error, and nothing is written" {
	run -64 --separate-stderr "$RL" -u "$U" lock 'x{y'
	[[ $stderr == *"(CROSSSLOT): the keys of this name fall in different slots of the cluster"* ]]
	for p in $(masters); do [ "$(redis-cli -p "$p" dbsize)" = 0 ]; done
}

# move_slot NAME DST: migrate NAME's slot, keys and all, to the master on
# port DST, as redis-cli --cluster reshard does, one slot.
move_slot() {
	local name=$1 dst=$2 src slot src_id dst_id keys p
	src=$(owner "$name")
	slot=$(redis-cli -p "$src" cluster keyslot "$name")
	src_id=$(redis-cli -p "$src" cluster myid)
	dst_id=$(redis-cli -p "$dst" cluster myid)
	redis-cli -p "$dst" cluster setslot "$slot" importing "$src_id" >/dev/null
	redis-cli -p "$src" cluster setslot "$slot" migrating "$dst_id" >/dev/null
	keys=$(redis-cli -p "$src" cluster getkeysinslot "$slot" 100)
	if [ -n "$keys" ]; then
		# shellcheck disable=SC2086
		redis-cli -p "$src" migrate 127.0.0.1 "$dst" "" 0 5000 \
		    keys $keys >/dev/null
	fi
	assign_slot "$name" "$src" "$dst"
}
# assign_slot NAME SRC DST: end the move of NAME's slot from the master on
# port SRC to the one on DST, its keys moved: every master gives it to DST.
assign_slot() {
	local name=$1 src=$2 dst=$3 slot dst_id p
	slot=$(redis-cli -p "$dst" cluster keyslot "$name")
	dst_id=$(redis-cli -p "$dst" cluster myid)
	# The new owner first, then the old one, then the others: an old
	# owner that hands the slot on before the new one has taken it sends
	# clients back and forth between them (MOVED from both).
	for p in "$dst" "$src" $(masters | grep -vx -e "$dst" -e "$src"); do
		redis-cli -p "$p" cluster setslot "$slot" node "$dst_id" >/dev/null
	done
	# Until the new owner's bumped epoch reaches it, a node may still
	# take the old owner's word for the slot.
	wait_for 10 eval '[ "$(owner "$name")" = "$dst" ]'
}

@test "a resharding that moves a held lock's slot during exec leaves COMMAND undisturbed and the lock held" {
	src=$(owner job)
	dst=$(masters | grep -vx "$src" | head -n 1)
	# A 6 s lease: renewals every 2 s ride out a move that takes a few
	# seconds on a busy box. COMMAND runs until the test is done looking.
	"$RL" -u "$U" exec -v -t 6s job -- sh -c 'touch "$0/started"
	    while [ ! -e "$0/stop" ]; do sleep 0.05; done' "$D" 2>"$D/err" 3>&- &
	epid=$!
	wait_for 10 test -e "$D/started"
	sleep 1
	move_slot job "$dst"
	[ "$(owner job)" = "$dst" ]
	[ "$(redis-cli -p "$dst" exists job)" = 1 ]
	# Renewed on the new master: the lease left there, which only falls
	# between renewals, goes up again.
	last=$(redis-cli -p "$dst" pttl job)
	renewed() {
		local p
		p=$(redis-cli -p "$dst" pttl job)
		[ "$p" -gt "$last" ] && return 0
		last=$p
		return 1
	}
	wait_for 15 renewed
	touch "$D/stop"
	st=0
	reap "$epid" || st=$?
	cat "$D/err" >&3
	echo "exec exited $st" >&3
	[ "$st" = 0 ]
	! grep -q lost "$D/err" || false
	[ "$(redis-cli -p "$dst" exists job)" = 0 ]
}

@test "CLUSTER FAILOVER of the lock's master during exec: renewals go on on the promoted replica" {
	src=$(owner job)
	src_id=$(redis-cli -p "$src" cluster myid)
	"$RL" -u "$U" exec -v -t 3s job -- sh -c 'touch "$0/started"; sleep 7' \
	    "$D" 2>"$D/err" 3>&- &
	epid=$!
	wait_for 10 test -e "$D/started"
	# The replica has the lock before it takes over.
	[ "$(redis-cli -p "$src" wait 1 5000)" = 1 ]
	rep=$(redis-cli -p "$src" cluster replicas "$src_id" |
	    awk '{ split($2, a, "[:@]"); print a[2]; exit }')
	redis-cli -p "$rep" cluster failover >/dev/null
	wait_for 30 eval '[ "$(owner job)" = "$rep" ]'
	sleep 4
	left=$(redis-cli -p "$rep" pttl job)
	echo "lease left on the promoted replica 4 s after: $left ms" >&3
	[ "$left" -gt 1000 ]
	st=0
	reap "$epid" || st=$?
	cat "$D/err" >&3
	[ "$st" = 0 ]
	[ "$(redis-cli -p "$rep" exists job)" = 0 ]
}

@test "status without NAME lists the locks of every master, each once, Redisson's too, sorted" {
	local n
	for n in $(seq 1 24); do "$RL" -u "$U" lock -t 60s "job$n" >/dev/null; done
	# Redisson's RLocks (only their hashes) on whichever master serves
	# them, and an application's hashes beside them.
	for n in $(seq 1 6); do
		redis-cli -c -p "$C1_PORT" hset "java$n" "$(cat /proc/sys/kernel/random/uuid):1" 1 >/dev/null
		redis-cli -c -p "$C1_PORT" pexpire "java$n" 60000 >/dev/null
		redis-cli -c -p "$C1_PORT" hset "user:$n" name bob >/dev/null
	done
	run -0 --separate-stderr "$RL" -u "$U" status --json
	[ "$(jq length <<<"$output")" = 30 ]
	[ "$(jq -r '.[].name' <<<"$output" | sort -u | wc -l)" = 30 ]
	jq -e '[.[].name] == ([.[].name] | sort)' <<<"$output"
	jq -e '[.[].name | select(startswith("java"))] | length == 6' <<<"$output"
	# Through a replica's URL as well.
	rep=$(redis-cli -p "$C1_PORT" cluster nodes |
	    awk '$3 ~ /slave/ { split($2, a, "[:@]"); print a[2]; exit }')
	run -0 --separate-stderr "$RL" -u "redis://127.0.0.1:$rep" status --json
	[ "$(jq length <<<"$output")" = 30 ]
}

# Subscribers to NAME's channel on the master at PORT: sharded (SSUBSCRIBE)
# and plain.
shardsubs() {
	redis-cli -p "$1" pubsub shardnumsub "redisson_lock__channel:{$2}" |
	    sed -n 2p
}
plainsubs() {
	redis-cli -p "$1" pubsub numsub "redisson_lock__channel:{$2}" |
	    sed -n 2p
}

# A name the master in the URL does not serve.
elsewhere() {
	local n
	for n in $(seq 1 50); do
		[ "$(owner "$1$n")" != "$C1_PORT" ] && { echo "$1$n"; return; }
	done
}

@test "a waiter SSUBSCRIBEs on the master of its name and a release SPUBLISHes: woken by push" {
	name=$(elsewhere push)
	src=$(owner "$name")
	tok=$("$RL" -u "$U" lock -t 60s "$name")
	redis-cli -p "$src" ssubscribe "redisson_lock__channel:{$name}" \
	    >"$D/smsg" 3>&- &
	spid=$!
	"$RL" -u "$U" exec -w 30s "$name" -- sh -c 'date +%s%N >"$0/ran"' \
	    "$D" 3>&- &
	epid=$!
	wait_for 10 eval '[ "$(shardsubs "$src" "$name")" = 2 ]'
	[ "$(plainsubs "$src" "$name")" = 0 ]
	t0=$(date +%s%N)
	run -0 "$RL" -u "$U" unlock --owner "$tok" "$name"
	reap "$epid"
	ms=$((($(cat "$D/ran") - t0) / 1000000))
	echo "woken $ms ms after unlock began (the lease had 60 s left)" >&3
	[ "$ms" -lt 5000 ]
	# The release was an SPUBLISH of "0" on the lock's channel.
	wait_for 5 grep -qx smessage "$D/smsg"
	kill "$spid" 2>/dev/null || true
	[ "$(tail -n 1 "$D/smsg")" = 0 ]
}

@test "--limit and --shared on a name another master serves: permits and readers on its master, waiters woken by SPUBLISH" {
	name=$(elsewhere sem)
	src=$(owner "$name")
	tok=$("$RL" -u "$U" lock --limit 1 -t 60s "$name")
	[ "$(redis-cli -p "$src" zcard "$(tag "$name"):timeout")" = 1 ]
	"$RL" -u "$U" exec --limit 1 -w 30s "$name" -- sh -c 'date +%s%N >"$0/ran"' \
	    "$D" 3>&- &
	epid=$!
	wait_for 10 eval '[ "$(redis-cli -p "$src" pubsub shardnumsub "redisson_sc:{$name}" | sed -n 2p)" = 1 ]'
	t0=$(date +%s%N)
	run -0 "$RL" -u "$U" unlock --owner "$tok" "$name"
	reap "$epid"
	ms=$((($(cat "$D/ran") - t0) / 1000000))
	echo "permit waiter woken $ms ms after unlock began (lease 60 s)" >&3
	[ "$ms" -lt 5000 ]
	name=$(elsewhere rw)
	src=$(owner "$name")
	a=$("$RL" -u "$U" lock -s -t 60s "$name")
	run -0 "$RL" -u "$U" exec -s -n "$name" -- true
	[ "$(redis-cli -p "$src" hget "$name" mode)" = read ]
	rm -f "$D/ran"
	"$RL" -u "$U" exec --write -w 30s "$name" -- sh -c 'date +%s%N >"$0/ran"' \
	    "$D" 3>&- &
	epid=$!
	wait_for 10 eval '[ "$(redis-cli -p "$src" pubsub shardnumsub "redisson_rwlock:{$name}" | sed -n 2p)" = 1 ]'
	t0=$(date +%s%N)
	run -0 "$RL" -u "$U" unlock --owner "$a" "$name"
	reap "$epid"
	ms=$((($(cat "$D/ran") - t0) / 1000000))
	echo "writer woken $ms ms after the last reader's unlock began" >&3
	[ "$ms" -lt 5000 ]
}

@test "a waiter whose slot moves to another master subscribes there and is still woken by push" {
	name=$(elsewhere moving)
	src=$(owner "$name")
	dst=$(masters | grep -vx "$src" | head -n 1)
	tok=$("$RL" -u "$U" lock -t 60s "$name")
	"$RL" -u "$U" exec -v -w 40s "$name" -- sh -c 'date +%s%N >"$0/ran"' \
	    "$D" 2>"$D/err" 3>&- &
	epid=$!
	wait_for 10 eval '[ "$(shardsubs "$src" "$name")" = 1 ]'
	move_slot "$name" "$dst"
	# The server dropped the subscription (sunsubscribe); the waiter
	# followed MOVED and subscribed on the new master.
	wait_for 10 eval '[ "$(shardsubs "$dst" "$name")" = 1 ]'
	[ "$(shardsubs "$src" "$name")" = 0 ]
	t0=$(date +%s%N)
	run -0 "$RL" -u "$U" unlock --owner "$tok" "$name"
	reap "$epid" || { cat "$D/err" >&3; false; }
	ms=$((($(cat "$D/ran") - t0) / 1000000))
	echo "woken $ms ms after unlock began on the new master" >&3
	[ "$ms" -lt 5000 ]
}

# half_move NAME DST: start moving NAME's slot to DST and move only its
# fencing counter; finish_move NAME DST moves the rest.
half_move() {
	local slot src_id dst_id src=$(owner "$1")
	slot=$(redis-cli -p "$src" cluster keyslot "$1")
	src_id=$(redis-cli -p "$src" cluster myid)
	dst_id=$(redis-cli -p "$2" cluster myid)
	redis-cli -p "$2" cluster setslot "$slot" importing "$src_id" >/dev/null
	redis-cli -p "$src" cluster setslot "$slot" migrating "$dst_id" >/dev/null
	redis-cli -p "$src" migrate 127.0.0.1 "$2" "redisson_lock_token:{$1}" \
	    0 5000 >/dev/null
	echo "$src"
}
finish_move() {
	local slot keys src=$3
	slot=$(redis-cli -p "$src" cluster keyslot "$1")
	keys=$(redis-cli -p "$src" cluster getkeysinslot "$slot" 100)
	# shellcheck disable=SC2086
	[ -z "$keys" ] || redis-cli -p "$src" migrate 127.0.0.1 "$2" "" 0 \
	    5000 keys $keys >/dev/null
	assign_slot "$1" "$src" "$2"
}

@test "TRYAGAIN while a lock's keys are half migrated: tried again until --reply-timeout, and acquired once the move ends" {
	local lease
	# The lock on the old master (TRYAGAIN there), and then expired
	# (ASK to the new one, TRYAGAIN there).
	for lease in 60s 1s; do
		name=$(elsewhere "half$lease")
		dst=$(masters | grep -vx "$(owner "$name")" | head -n 1)
		"$RL" -u "$U" lock -t "$lease" "$name" >/dev/null
		src=$(half_move "$name" "$dst")
		[ "$lease" = 60s ] || sleep 1.2
		t0=$(now_ms)
		run -69 --separate-stderr "$RL" -u "$U" --reply-timeout 500ms lock -n "$name"
		t1=$(now_ms)
		echo "lease $lease, half moved: $((t1 - t0)) ms: $stderr" >&3
		[[ $stderr == *"(TRYAGAIN "*"the cluster is moving this slot: try again shortly"* ]]
		[ $((t1 - t0)) -ge 400 ]	# tried for most of 500 ms
		# The rest moves 300 ms into a wait, which then acquires.
		[ "$lease" = 1s ] || redis-cli -p "$src" del "$name" >/dev/null
		( sleep 0.3; finish_move "$name" "$dst" "$src" ) &
		mpid=$!
		run -0 --separate-stderr "$RL" -u "$U" lock -w 10s "$name"
		reap "$mpid"
		[ "$(redis-cli -p "$dst" hexists "$name" "$output")" = 1 ]
	done
}

# hand_on NAME DST [unaware]: move NAME's slot, keys and all, to the
# master on port DST as move_slot does, but end it in the wrong order: the
# old owner hands the slot on first, and until assign_slot the two send
# every client to each other (MOVED from both). Valkey's new owner takes
# a slot it imports when its old owner hands it on (at the next gossip);
# unaware, the new owner stops importing it first, so that it does not:
# then until take_over, on both servers. Prints the old owner's port.
hand_on() {
	local name=$1 dst=$2 src slot src_id dst_id keys
	src=$(owner "$name")
	slot=$(redis-cli -p "$src" cluster keyslot "$name")
	src_id=$(redis-cli -p "$src" cluster myid)
	dst_id=$(redis-cli -p "$dst" cluster myid)
	redis-cli -p "$dst" cluster setslot "$slot" importing "$src_id" >/dev/null
	redis-cli -p "$src" cluster setslot "$slot" migrating "$dst_id" >/dev/null
	keys=$(redis-cli -p "$src" cluster getkeysinslot "$slot" 100)
	# shellcheck disable=SC2086
	[ -z "$keys" ] || redis-cli -p "$src" migrate 127.0.0.1 "$dst" "" 0 \
	    5000 keys $keys >/dev/null
	[ "${3-}" != unaware ] ||
	    redis-cli -p "$dst" cluster setslot "$slot" stable >/dev/null
	redis-cli -p "$src" cluster setslot "$slot" node "$dst_id" >/dev/null
	echo "$src"
}
# take_over NAME SRC DST: after hand_on ... unaware, the master on port
# DST takes the slot SRC handed it, and every master learns it.
take_over() {
	local slot src_id
	slot=$(redis-cli -p "$3" cluster keyslot "$1")
	src_id=$(redis-cli -p "$2" cluster myid)
	redis-cli -p "$3" cluster setslot "$slot" importing "$src_id" >/dev/null
	assign_slot "$1" "$2" "$3"
}

@test "a slot its old owner hands on before the new one takes it: MOVED back and forth is tried again within --reply-timeout, lock and unlock go through" {
	name=$(elsewhere pingpong)
	dst=$(masters | grep -vx "$(owner "$name")" | head -n 1)
	src=$(hand_on "$name" "$dst" unaware)
	# For as long as it lasts, and no longer than --reply-timeout: one line
	# that names both nodes and what to do.
	t0=$(now_ms)
	run -69 --separate-stderr "$RL" -u "$U" --reply-timeout 500ms lock -n "$name"
	t1=$(now_ms)
	echo "back and forth: $((t1 - t0)) ms: $stderr" >&3
	a=redis://127.0.0.1:$src b=redis://127.0.0.1:$dst
	[[ $stderr == "redlock: $a and $b kept sending the acquire script to each other (MOVED "* ||
	    $stderr == "redlock: $b and $a kept sending the acquire script to each other (MOVED "* ]]
	[[ $stderr == *"finish the move with redis-cli --cluster fix, or CLUSTER SETSLOT <slot> NODE <owner-id> on both" ]]
	[ $((t1 - t0)) -ge 400 ]
	# Nothing was written anywhere.
	for p in $(masters); do [ "$(redis-cli -p "$p" dbsize)" = 0 ]; done
	# The new owner takes the slot a second into a lock that does not
	# wait (-n; --reply-timeout 5 s): acquired there.
	( sleep 1; take_over "$name" "$src" "$dst" ) 3>&- &
	mpid=$!
	t0=$(now_ms)
	run -0 --separate-stderr "$RL" -u "$U" lock -n -t 60s "$name"
	t1=$(now_ms)
	reap "$mpid"
	echo "lock -n acquired after $((t1 - t0)) ms" >&3
	[ "$(redis-cli -p "$dst" hexists "$name" "$output")" = 1 ]
	[ $((t1 - t0)) -ge 800 ]
	# The slot goes back the same way, the lock with it: unlock in the
	# meantime releases it.
	tok=$output
	hand_on "$name" "$src" unaware >/dev/null
	( sleep 1; take_over "$name" "$dst" "$src" ) 3>&- &
	mpid=$!
	t0=$(now_ms)
	run -0 --separate-stderr "$RL" -u "$U" unlock --owner "$tok" "$name"
	t1=$(now_ms)
	reap "$mpid"
	echo "unlock released after $((t1 - t0)) ms" >&3
	[ -z "$stderr" ]
	[ "$(redis-cli -p "$src" exists "$name")" = 0 ]
	[ $((t1 - t0)) -ge 800 ]
}

@test "a waiter whose slot goes back and forth while it moves subscribes where it went, and again at the next move: woken by push" {
	name=$(elsewhere bouncing)
	src=$(owner "$name")
	dst=$(masters | grep -vx "$src" | head -n 1)
	third=$(masters | grep -vx -e "$src" -e "$dst" | head -n 1)
	tok=$("$RL" -u "$U" lock -t 60s "$name")
	# The waiter refreshes its place every 20 minutes only: no attempt of
	# its own finds the new master for it, only the subscription.
	"$RL" -u "$U" exec -v -w 40s --waiter-timeout 1h "$name" -- \
	    sh -c 'date +%s%N >"$0/ran"' "$D" 2>"$D/err" 3>&- &
	epid=$!
	wait_for 10 eval '[ "$(shardsubs "$src" "$name")" = 1 ]'
	# A second of MOVED back and forth (less on Valkey).
	hand_on "$name" "$dst" >/dev/null
	sleep 1
	assign_slot "$name" "$src" "$dst"
	wait_for 10 eval '[ "$(shardsubs "$dst" "$name")" = 1 ]'
	move_slot "$name" "$third"
	wait_for 10 eval '[ "$(shardsubs "$third" "$name")" = 1 ]' ||
	    { cat "$D/err" >&3; false; }
	t0=$(date +%s%N)
	run -0 "$RL" -u "$U" unlock --owner "$tok" "$name"
	reap "$epid" || { cat "$D/err" >&3; false; }
	ms=$((($(cat "$D/ran") - t0) / 1000000))
	echo "woken $ms ms after unlock began on the third master" >&3
	[ "$ms" -lt 5000 ]
	# Lost once per move, when the server dropped the subscription (and
	# once more on Valkey, whose new owner had taken the slot already
	# when it was given it, and dropped it then): not at each MOVED back
	# and forth in between.
	[ "$(grep -c 'lost the server while waiting' "$D/err")" -le 3 ] ||
	    { cat "$D/err" >&3; false; }
}

@test "a Redisson client on sharded pub/sub (SSUBSCRIBE, SPUBLISH) and redlock wake each other" {
	local rsn="$BATS_TEST_DIRNAME/redisson.py"
	name=$(elsewhere java)
	own=$(owner "$name")
	# redlock holds; the Redisson client waits and is woken by SPUBLISH.
	tok=$("$RL" -u "$U" lock -t 60s "$name")
	python3 "$rsn" --port "$own" --sharded lock "$name" --wait 20 \
	    >"$D/java1" 2>&1 3>&- &
	jpid=$!
	wait_for 10 grep -qx subscribed "$D/java1"
	[ "$(shardsubs "$own" "$name")" = 1 ]
	run -0 "$RL" -u "$U" unlock --owner "$tok" "$name"
	reap "$jpid"
	cat "$D/java1" >&3
	grep -q '^woken ' "$D/java1"
	grep -q '^released ' "$D/java1"
	# The Redisson client holds (a 30 s watchdog lease) for 2 s; redlock
	# waits, and is woken by its SPUBLISH long before the lease ends.
	python3 "$rsn" --port "$own" --sharded lock "$name" --hold 2 \
	    >"$D/java2" 2>&1 3>&- &
	jpid=$!
	wait_for 10 grep -q '^acquired ' "$D/java2"
	t0=$(now_ms)
	run -0 --separate-stderr "$RL" -u "$U" exec -w 20s "$name" -- true
	t1=$(now_ms)
	reap "$jpid"
	echo "redlock acquired $((t1 - t0)) ms after the Redisson client did (it held 2 s)" >&3
	[ $((t1 - t0)) -lt 6000 ]
}

# The port of a replica of the master on port $1.
replica_of() {
	redis-cli -p "$1" cluster replicas "$(redis-cli -p "$1" cluster myid)" |
	    awk '{ split($2, a, "[:@]"); print a[2]; exit }'
}
# The replica on port $1 is connected to its master and in sync.
link_up() {
	redis-cli -p "$1" info replication | grep -q '^master_link_status:up'
}
# Whether key $2 exists on the replica on port $1 (read there, not
# redirected to its master).
replica_exists() {
	printf 'READONLY\nEXISTS %s\n' "$2" | redis-cli -p "$1" | tail -n 1
}
teardown() {
	# A replica the failover test cut off from its master syncs again.
	if [ -n "${cut_off-}" ]; then
		redis-cli -p "$cut_off" config set masteruser "" \
		    masterauth "" >/dev/null
	fi
	# Workers of the fenced store test stop after their turn.
	if [ -n "${workers-}" ]; then
		touch "$D/stop"
		wait_for 30 all_dead "${workers[@]}"
	fi
	stop_strays
}

@test "CLUSTER FAILOVER where the lock did not survive: COMMAND is terminated and exec exits 79" {
	# On a name C1 does not serve: C1 stays a master through the
	# failovers below, as setup and the helpers above expect.
	name=$(elsewhere job)
	src=$(owner "$name")
	# Right after the cluster is made, the master may not know its
	# replica yet.
	wait_for 60 eval 'rep=$(replica_of "$src"); [ -n "$rep" ]'
	wait_for 60 link_up "$rep"
	# The replica cannot sync any more: it logs in to its master as a
	# user that does not exist, and its link is cut. What the master
	# writes from now on stays there.
	cut_off=$rep
	redis-cli -p "$rep" config set masteruser redlock-test-nobody \
	    masterauth nothing >/dev/null
	redis-cli -p "$rep" client kill type master >/dev/null
	wait_for 10 eval '! link_up "$rep"'
	"$RL" -u "$U" exec -t 2s "$name" -- \
	    sh -c 'echo $$ >"$0/pid"; sleep 8; touch "$0/done"' "$D" \
	    2>"$D/err" 3>&- &
	epid=$!
	wait_for 10 test -s "$D/pid"
	[ "$(redis-cli -p "$src" exists "$name")" = 1 ]
	# A renewal later the replica still has not received it.
	sleep 1
	run ! link_up "$rep"
	[ "$(replica_exists "$rep" "$name")" = 0 ]
	# The replica takes over without its master's consent; the old
	# master learns of it, turns into its replica and drops its data.
	t0=$(now_ms)
	[ "$(redis-cli -p "$rep" cluster failover takeover)" = OK ]
	wait_for 10 eval '[ "$(owner "$name")" = "$rep" ]'
	[ "$(redis-cli -p "$rep" exists "$name")" = 0 ]
	wait_for 10 dead "$epid"
	st=0
	reap "$epid" || st=$?
	echo "exec exited $st $(($(now_ms) - t0)) ms after the takeover" >&3
	cat "$D/err" >&3
	[ "$st" = 79 ]
	[ "$(wc -l <"$D/err")" = 1 ]
	grep -q "^redlock: lost the lock on $name while COMMAND ran (it was removed while held" "$D/err"
	dead "$(cat "$D/pid")"
	[ ! -e "$D/done" ]
	# The renewal found the lock gone: it did not put it back.
	[ "$(redis-cli -p "$rep" exists "$name")" = 0 ]
	# The old master rejoins as the new one's replica.
	redis-cli -p "$rep" config set masteruser "" masterauth "" >/dev/null
	cut_off=
	wait_for 60 cluster_ok
	wait_for 60 link_up "$src"
	wait_for 30 eval '[ "$(replica_of "$rep")" = "$src" ]'
}

# Sections the fenced store in $D accepted so far.
accepted() { "$BATS_TEST_DIRNAME/../torture/check.sh" accepted "$D/store.log"; }
accepted_beyond() { [ "$(accepted)" -ge "$1" ]; }

@test "exclusion holds through a resharding and a failover, checked by a fenced store" {
	local i
	workers=()
	torture=$BATS_TEST_DIRNAME/../torture
	name=$(elsewhere turns)
	src=$(owner "$name")
	dst=$(masters | grep -vx -e "$C1_PORT" -e "$src" | head -n 1)
	[ -n "$dst" ]
	touch "$D/store.log"
	# Four workers take turns on the name, each turn a critical section
	# through the fenced store, with a 3 s lease: renewals every second
	# ride out the stalls of a busy box, where a 1 s lease ran out now
	# and then with no fault to blame (and the release said so). They
	# wait up to 60 s, longer than the 30 s the failover may take here: a
	# 10 s wait gave up now and then while a busy box failed over.
	for i in 1 2 3 4; do
		"$torture/worker" "$D" "$RL" -u "$U" exec -q -w 60s -t 3s \
		    "$name" 3>&- &
		workers+=($!)
	done
	wait_for 10 accepted_beyond 5
	# The name's slot moves to another master while they go on.
	move_slot "$name" "$dst"
	[ "$(owner "$name")" = "$dst" ]
	n=$(accepted)
	wait_for 10 accepted_beyond $((n + 5))
	# Then that master's replica takes over from it, gracefully.
	wait_for 60 eval 'rep=$(replica_of "$dst"); [ -n "$rep" ]'
	wait_for 60 link_up "$rep"
	[ "$(redis-cli -p "$rep" cluster failover)" = OK ]
	wait_for 30 eval '[ "$(owner "$name")" = "$rep" ]'
	n=$(accepted)
	wait_for 10 accepted_beyond $((n + 5))
	touch "$D/stop"
	wait_for 30 all_dead "${workers[@]}"
	reap "${workers[@]}"
	# The demoted master syncs from the new one before the next test.
	wait_for 60 cluster_ok
	wait_for 60 link_up "$dst"
	violations=$("$torture/check.sh" violations "$D/store.log")
	preempted=$("$torture/check.sh" preempted "$D/store.log")
	lost=$(grep -cx 79 "$D/outcomes" || :)
	echo "moved from $src to $dst, failed over to $rep" >&3
	echo "$(accepted) sections accepted, $preempted preempted," \
	    "$(grep -c '^reject' "$D/store.log") store writes refused" >&3
	echo "outcomes: $(sort -n "$D/outcomes" | uniq -c |
	    awk '{ printf "exit %s: %s  ", $2, $1 }')" >&3
	if [ -s "$D/stderr" ]; then sed -n 1,10p "$D/stderr" >&3; fi
	[ -z "$violations" ] || { echo "$violations" >&3; false; }
	[ "$(accepted)" -ge 10 ]
	# Only a lost lease (exit 79) may leave a section open to the next.
	[ "$preempted" -le "$lost" ]
	run ! grep -q -e AddressSanitizer -e 'runtime error' "$D/stderr"
	# Every turn ended with COMMAND's status or a lost lease: waiting
	# through the moves is the waiters' job, not their callers'.
	[ -z "$(grep -vx -e 0 -e 79 "$D/outcomes")" ]
	# And every release went through: none left the lock to its lease.
	[ -z "$(grep -v '^redlock: lost the lock on ' "$D/stderr")" ]
}

@test "workers taking turns through slot moves in the wrong order: no turn fails, and every release goes through" {
	local i to from
	workers=()
	torture=$BATS_TEST_DIRNAME/../torture
	name=$(elsewhere wrongway)
	a=$(owner "$name")
	b=$(masters | grep -vx -e "$C1_PORT" -e "$a" | head -n 1)
	[ -n "$b" ]
	touch "$D/store.log"
	for i in 1 2 3 4; do
		"$torture/worker" "$D" "$RL" -u "$U" exec -q -w 60s -t 3s \
		    "$name" 3>&- &
		workers+=($!)
	done
	wait_for 10 accepted_beyond 5
	# Each move leaves the two masters sending every command to each
	# other for a second (less on Valkey).
	for to in "$b" "$a" "$b"; do
		from=$(hand_on "$name" "$to")
		sleep 1
		assign_slot "$name" "$from" "$to"
		n=$(accepted)
		wait_for 10 accepted_beyond $((n + 5))
	done
	touch "$D/stop"
	wait_for 30 all_dead "${workers[@]}"
	reap "${workers[@]}"
	echo "$(accepted) sections accepted; outcomes: $(sort -n "$D/outcomes" |
	    uniq -c | awk '{ printf "exit %s: %s  ", $2, $1 }')" >&3
	if [ -s "$D/stderr" ]; then sed -n 1,10p "$D/stderr" >&3; fi
	violations=$("$torture/check.sh" violations "$D/store.log")
	[ -z "$violations" ] || { echo "$violations" >&3; false; }
	[ -z "$(grep -vx 0 "$D/outcomes")" ]
	[ ! -s "$D/stderr" ]
}

@test "--min-hold on names across the masters: finished holds stay until their end, of every kind" {
	local n k
	for n in $(seq 1 6); do
		for k in "" --fair -s --write "--limit 1"; do
			run -0 "$RL" -u "$U" exec $k --min-hold 30s "mh$n$k" -- true
			run -0 "$RL" -u "$U" status "mh$n$k"
			[[ $output == *"finished, held until "* ]]
			# The same kind (a writer beside readers) is kept out.
			run -75 --separate-stderr "$RL" -u "$U" exec -n \
			    ${k/#-s/--write} "mh$n$k" -- true
			[[ $stderr == *"finished, held until "* ]]
		done
		run -0 "$RL" -u "$U" unlock --force "mh$n"
		run -0 "$RL" -u "$U" exec -n "mh$n" -- true
	done
}
