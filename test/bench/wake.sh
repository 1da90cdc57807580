#!/bin/bash
# test/bench/wake.sh: time to wake, for every kind of holder and waiter on one
# name: redlock, redlock --fair, and Redisson's RLock and RFairLock as
# test/bats/redisson.py speaks them on the wire.
# usage: test/bench/wake.sh path/to/redlock PORT [ROUNDS]
# Prints one markdown table row per holder: the median, over ROUNDS
# (default 5), of the time from the release to the waiter holding the
# lock, for each kind of waiter; "-" where the waiter was not woken within
# 3 s (the lease was 30 s: polled, not pushed).
set -u
rl=$1
port=$2
rounds=${3:-5}
rsn=$(cd "$(dirname "$0")/../bats" && pwd)/redisson.py
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$dir"' EXIT
export REDLOCK_URL=redis://127.0.0.1:$port
cli() { redis-cli -p "$port" "$@"; }
token() { echo "$(cat /proc/sys/kernel/random/uuid):$((RANDOM + 2))"; }
now() { echo "$EPOCHREALTIME"; }
fairflag() { case $1 in rlfair | rfair) echo --fair ;; esac; }

# until_ok CMD...: CMD succeeds within 5 s.
until_ok() {
	local i
	for i in $(seq 1 250); do "$@" && return 0; sleep 0.02; done
	return 1
}
listening() { [ "$(cli pubsub numsub "$1" | sed -n 2p)" -ge 1 ]; }

# cell HOLDER WAITER: seconds from the release to the waiter's hold, or
# nothing when it was not woken within 3 s.
cell() {
	local h=$1 w=$2 htok wtok t0 t1 pid
	cli del w 'redisson_lock_queue:{w}' 'redisson_lock_timeout:{w}' \
	    'redlock_waiter:{w}' 'redlock_holder:{w}' >/dev/null
	: >"$dir/ev"
	htok=$(token)
	case $h in
	rl | rlfair) htok=$("$rl" lock $(fairflag "$h") -t 30s w) ;;
	*) python3 "$rsn" --port "$port" --id "$htok" $(fairflag "$h") \
	    lock w --lease 30000 --keep >/dev/null ;;
	esac
	wtok=$(token)
	case $w in
	rl | rlfair)
		# A fair waiter's heartbeat every 20 s: not what wakes it.
		"$rl" exec -w 10s --owner "$wtok" $([ "$w" = rl ] ||
		    echo --fair --waiter-timeout 60s) w -- \
		    bash -c 'echo "acquired waiter $EPOCHREALTIME"' \
		    >>"$dir/ev" 2>/dev/null &
		pid=$!
		if [ "$w" = rl ]; then
			until_ok listening 'redisson_lock__channel:{w}'
		else
			until_ok listening "redisson_lock__channel:{w}:$wtok"
		fi ;;
	*)
		python3 "$rsn" --port "$port" $(fairflag "$w") lock w \
		    --wait 10 --label waiter >>"$dir/ev" 2>/dev/null &
		pid=$!
		until_ok grep -qx 'subscribed waiter' "$dir/ev" ;;
	esac
	t0=$(now)
	case $h in
	rl | rlfair) "$rl" unlock --owner "$htok" w ;;
	*) python3 "$rsn" --port "$port" --id "$htok" --label holder \
	    $(fairflag "$h") unlock w >>"$dir/ev" ;;
	esac
	t1=$(sed -n 's/^released holder //p' "$dir/ev")
	t0=${t1:-$t0}
	for _ in $(seq 1 150); do
		grep -q '^acquired waiter ' "$dir/ev" && break
		sleep 0.02
	done
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	t1=$(sed -n 's/^acquired waiter \([0-9.]*\).*/\1/p' "$dir/ev")
	[ -n "$t1" ] && awk -v a="$t1" -v b="$t0" 'BEGIN { print a - b }'
}

# median of the numbers on stdin, in ms with one decimal; "-" for none.
median_ms() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "-"; exit }
		printf "%.1f ms", 1000 * v[int((NR + 1) / 2)] }'
}

name() {
	case $1 in
	rl) echo redlock ;; rlfair) echo 'redlock `--fair`' ;;
	rlock) echo 'Redisson `RLock`' ;; rfair) echo 'Redisson `RFairLock`' ;;
	esac
}
for h in rl rlfair rlock rfair; do
	row="| $(name "$h") |"
	for w in rl rlfair rlock rfair; do
		for _ in $(seq 1 "$rounds"); do cell "$h" "$w"; done >"$dir/t"
		row="$row $(median_ms <"$dir/t") |"
	done
	echo "$row"
done
