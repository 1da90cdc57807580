#!/usr/bin/env bats
# Every kind of redlock lock beside every kind of Redisson lock, each way
# round, against test/bats/redisson.py speaking Redisson's own scripts:
# for each ordered pair, the second excludes (or, two readers, shares
# with; or, a key of the other type, is refused by) the first, and a
# waiter of the second is woken by the first's release. A cell is
# "pushed" when the waiter holds the name within 2 s of the release:
# every lease here is 30 s and every redlock waiter looks again every
# 20 s (--waiter-timeout 60s), so a poll would take 10 s at least. The
# cells that are not pushed are the ones the manual's REDISSON section lists,
# with their bound; each is named in POLLED below, with the reason.
# Each cell's time goes to fd 3 and to the summary the last test prints.

load helpers

setup_file() {
	start_redis R
	export CELLS=$BATS_FILE_TMPDIR/cells
	: >"$CELLS"
}
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
	: >"$D/events"
	bg=()
}
teardown() { stop_bg; stop_strays; }

RSN=$BATS_TEST_DIRNAME/redisson.py
rsn() { python3 "$RSN" --port "$R_PORT" "$@"; }
token() { echo "$(cat /proc/sys/kernel/random/uuid):$((RANDOM + 2))"; }

# The cells not pushed, "HOLDER>WAITER", and why.
# RedissonFairLock's release publishes on the channel of the head of its
# queue only, and on nothing when the queue is empty; -s and --write
# waiters do not queue: they find the name free at their next look.
declare -gA POLLED=(
	[RFairLock>shared]="a Java fair release wakes only its queue's head: -s looks again within a third of --waiter-timeout"
	[RFairLock>write]="a Java fair release wakes only its queue's head: --write looks again within a third of --waiter-timeout"
)

# Kinds. redlock's: plain, fair (--fair), shared (-s), write (--write),
# limit (--limit 1). Redisson's: RLock, RFairLock, RReadLock, RWriteLock,
# RSemaphore (RPermitExpirableSemaphore of 1 permit), RFencedLock.
# A semaphore's NAME is a string, every other kind's a hash: between the
# two the second is refused (redlock: exit 65; Redisson: WRONGTYPE).
is_sem() { [ "$1" = limit ] || [ "$1" = RSemaphore ]; }
# readers: the pairs that share.
readers() { [ "$1 $2" = "shared RReadLock" ] || [ "$1 $2" = "RReadLock shared" ]; }

rl_opts() {
	case $1 in
	plain) ;;
	fair) echo --fair ;;
	shared) echo -s ;;
	write) echo --write ;;
	limit) echo --limit 1 ;;
	esac
}

# hold KIND: KIND takes x for 30 s and keeps it; its token (a permit's
# id for RSemaphore) in $htok.
hold() {
	case $1 in
	plain | fair | shared | write | limit)
		htok=$(rl lock $(rl_opts "$1") -t 30s x)
		;;
	RSemaphore)
		rsn semaphore x set-permits 1 --try >/dev/null || :
		htok=$(rsn semaphore x acquire --lease 30000 --keep | cut -d' ' -f2)
		;;
	*)
		htok=$(token)
		java "$1" --id "$htok" --lease 30000 --keep >/dev/null
		;;
	esac
}

# java KIND ARGS...: redisson.py as KIND (not RSemaphore).
java() {
	local k=$1
	shift
	case $k in
	RLock) rsn lock x "$@" ;;
	RFairLock) rsn --fair lock x "$@" ;;
	RFencedLock) rsn fenced x "$@" ;;
	RReadLock) rsn rwlock x read "$@" ;;
	RWriteLock) rsn rwlock x write "$@" ;;
	esac
}

# release KIND: KIND gives x back; "released holder T" in the events
# for Redisson's (the time its script answered).
release() {
	case $1 in
	plain | fair | shared | write | limit) rl unlock --owner "$htok" x ;;
	RSemaphore) rsn --label holder semaphore x release "$htok" ;;
	RLock) rsn --label holder --id "$htok" unlock x ;;
	RFairLock) rsn --label holder --id "$htok" --fair unlock x ;;
	RFencedLock) rsn --label holder --id "$htok" unlock x ;;
	RReadLock) rsn --label holder rwlock x unlock-read --id "$htok" ;;
	RWriteLock) rsn --label holder rwlock x unlock-write --id "$htok" ;;
	esac >>"$D/events"
}

# try KIND: one attempt at x as KIND: got, busy or refused (the key is of
# the other type); what it got it gives back at once.
try() {
	local rc=0 out
	case $1 in
	plain | fair | shared | write | limit)
		out=$(rl lock -n -q $(rl_opts "$1") -t 30s x 2>/dev/null) || rc=$?
		[ "$rc" != 0 ] || rl unlock --owner "$out" x
		;;
	RSemaphore)
		out=$(rsn semaphore x acquire --wait 0 --lease 30000 --keep 2>/dev/null) || rc=$?
		[ "$rc" != 0 ] || rsn semaphore x release "$(echo "$out" | cut -d' ' -f2)" >/dev/null
		;;
	*)
		java "$1" --wait 0 --lease 30000 >/dev/null 2>&1 || rc=$?
		;;
	esac
	case $rc in
	0) echo got ;;
	1 | 75) echo busy ;;
	2 | 65) echo refused ;;
	*) echo "error $rc" ;;
	esac
}

# subscribed: some client listens on a channel (the waiter: holders and
# tries have ended).
subscribed() {
	[ "$(rcli client list | grep -cE ' (sub|ssub)=[1-9]')" -ge 1 ]
}

# await KIND: a waiter of KIND in the background, giving up after 25 s;
# returns once it waits. Holding x it writes "acquired waiter T".
await() {
	case $1 in
	plain | fair | shared | write | limit)
		"$RL" -u "redis://127.0.0.1:$R_PORT" exec -w 25s -t 30s \
		    --waiter-timeout 60s $(rl_opts "$1") x -- \
		    sh -c 'echo "acquired waiter $(date +%s.%N)"' \
		    >>"$D/events" 2>"$D/waiter.err" 3>&- &
		bg+=($!)
		wait_for 5 subscribed || return 1
		[ "$1" != fair ] ||
		    wait_for 5 eval '[ "$(rcli llen "redisson_lock_queue:{x}")" -ge 1 ]'
		;;
	RSemaphore)
		python3 "$RSN" --port "$R_PORT" semaphore x acquire --wait 25 \
		    --label waiter >>"$D/events" 2>"$D/waiter.err" 3>&- &
		bg+=($!)
		wait_for 5 grep -qx 'subscribed waiter' "$D/events" || return 1
		;;
	*)
		java "$1" --wait 25 --lease 30000 --label waiter \
		    >>"$D/events" 2>"$D/waiter.err" 3>&- &
		bg+=($!)
		wait_for 5 grep -qx 'subscribed waiter' "$D/events" || return 1
		[ "$1" != RFairLock ] ||
		    wait_for 5 eval '[ "$(rcli llen "redisson_lock_queue:{x}")" -ge 1 ]'
		;;
	esac
}

# when_ms LABEL [EVENT]: when LABEL had EVENT (default acquired), ms since
# the epoch; lines end "LABEL T" (a semaphore's "acquired ID LABEL T").
when_ms() {
	awk -v l="$1" -v e="${2:-acquired}" \
	    '$1 == e && $(NF - 1) == l { printf "%.0f\n", $NF * 1000; exit }' \
	    "$D/events"
}

# way HOLDER WAITER: one direction of a cell.
way() {
	local h=$1 w=$2 want got t0 t note
	if [ "$(is_sem "$h" && echo s)" != "$(is_sem "$w" && echo s)" ]; then
		want=refused
	elif readers "$h" "$w"; then
		want=got
	else
		want=busy
	fi
	rcli flushall >/dev/null
	: >"$D/events"
	hold "$h"
	got=$(try "$w")
	if [ "$got" != "$want" ]; then
		echo "$h holds, $w tries: $got, want $want" | tee -a "$CELLS" >&3
		return 1
	fi
	if [ "$want" != busy ]; then
		echo "$h holds, $w tries: $got" | tee -a "$CELLS" >&3
		return 0
	fi
	if ! await "$w"; then
		echo "$h holds, $w waits: not waiting within 5 s" | tee -a "$CELLS" >&3
		cat "$D/waiter.err" >&3
		return 1
	fi
	# Excluded while the holder holds.
	if [ -n "$(when_ms waiter)" ]; then
		echo "$h holds, $w waits: acquired while $h held" | tee -a "$CELLS" >&3
		return 1
	fi
	t0=$(now_ms)
	release "$h"
	t=$(when_ms holder released)
	t0=${t:-$t0}
	wait_for 3 eval '[ -n "$(when_ms waiter)" ]' || :
	t=$(when_ms waiter)
	# Not woken: what the waiter said, and the events.
	[ -n "$t" ] || cat "$D/waiter.err" "$D/events" >&3
	note=${POLLED[$h>$w]-}
	if [ -n "$t" ]; then
		echo "$h holds, $w waits: woken in $((t - t0)) ms${note:+ (listed: $note)}" |
		    tee -a "$CELLS" >&3
	else
		echo "$h holds, $w waits: not woken within 3 s${note:+ (listed: $note)}" |
		    tee -a "$CELLS" >&3
	fi
	[ -n "$note" ] && return 0
	[ -n "$t" ]
	[ $((t - t0)) -lt 2000 ]
}

# cell REDLOCK JAVA: both directions, both always run.
cell() {
	local st=0
	way "$1" "$2" || st=1
	stop_bg
	bg=()
	way "$2" "$1" || st=1
	return "$st"
}

@test "matrix: redlock plain and Redisson RLock" { cell plain RLock; }
@test "matrix: redlock plain and Redisson RFairLock" { cell plain RFairLock; }
@test "matrix: redlock plain and Redisson RReadLock" { cell plain RReadLock; }
@test "matrix: redlock plain and Redisson RWriteLock" { cell plain RWriteLock; }
@test "matrix: redlock plain and Redisson RPermitExpirableSemaphore" { cell plain RSemaphore; }
@test "matrix: redlock plain and Redisson RFencedLock" { cell plain RFencedLock; }
@test "matrix: redlock --fair and Redisson RLock" { cell fair RLock; }
@test "matrix: redlock --fair and Redisson RFairLock" { cell fair RFairLock; }
@test "matrix: redlock --fair and Redisson RReadLock" { cell fair RReadLock; }
@test "matrix: redlock --fair and Redisson RWriteLock" { cell fair RWriteLock; }
@test "matrix: redlock --fair and Redisson RPermitExpirableSemaphore" { cell fair RSemaphore; }
@test "matrix: redlock --fair and Redisson RFencedLock" { cell fair RFencedLock; }
@test "matrix: redlock -s and Redisson RLock" { cell shared RLock; }
@test "matrix: redlock -s and Redisson RFairLock" { cell shared RFairLock; }
@test "matrix: redlock -s and Redisson RReadLock" { cell shared RReadLock; }
@test "matrix: redlock -s and Redisson RWriteLock" { cell shared RWriteLock; }
@test "matrix: redlock -s and Redisson RPermitExpirableSemaphore" { cell shared RSemaphore; }
@test "matrix: redlock -s and Redisson RFencedLock" { cell shared RFencedLock; }
@test "matrix: redlock --write and Redisson RLock" { cell write RLock; }
@test "matrix: redlock --write and Redisson RFairLock" { cell write RFairLock; }
@test "matrix: redlock --write and Redisson RReadLock" { cell write RReadLock; }
@test "matrix: redlock --write and Redisson RWriteLock" { cell write RWriteLock; }
@test "matrix: redlock --write and Redisson RPermitExpirableSemaphore" { cell write RSemaphore; }
@test "matrix: redlock --write and Redisson RFencedLock" { cell write RFencedLock; }
@test "matrix: redlock --limit 1 and Redisson RLock" { cell limit RLock; }
@test "matrix: redlock --limit 1 and Redisson RFairLock" { cell limit RFairLock; }
@test "matrix: redlock --limit 1 and Redisson RReadLock" { cell limit RReadLock; }
@test "matrix: redlock --limit 1 and Redisson RWriteLock" { cell limit RWriteLock; }
@test "matrix: redlock --limit 1 and Redisson RPermitExpirableSemaphore" { cell limit RSemaphore; }
@test "matrix: redlock --limit 1 and Redisson RFencedLock" { cell limit RFencedLock; }

# expect K J: what J gets beside a hold of K, by the rules above.
expect() {
	local a=0 b=0
	! is_sem "$1" || a=1
	! is_sem "$2" || b=1
	if [ "$a" != "$b" ]; then
		echo refused
	elif readers "$1" "$2"; then
		echo got
	else
		echo busy
	fi
}

@test "--min-hold: a finished hold of every redlock kind answers every Redisson kind as a live one; a Java waiter gets in at its end" {
	local k j got want
	for k in plain fair shared write limit; do
		rcli flushall >/dev/null
		# The hold is finished at once: COMMAND is true.
		rl exec $(rl_opts "$k") --min-hold 30s x -- true
		[ "$(rl status --json x | jq -r '.finished // .readers[0].finished // .permits[0].finished')" = true ]
		for j in RLock RFairLock RReadLock RWriteLock RSemaphore RFencedLock; do
			got=$(try "$j")
			want=$(expect "$k" "$j")
			echo "finished $k, $j: $got (want $want)" >&3
			[ "$got" = "$want" ]
		done
		rl unlock --force x >/dev/null
	done
	# A Java waiter behind a finished hold: in once the hold ends (its
	# retry follows the lease it was told; nothing is published).
	rcli flushall >/dev/null
	rl exec --min-hold 1500ms x -- true
	t0=$(now_ms)
	java RLock --label waiter --wait 10000 --hold 0 >>"$D/events" 2>>"$D/err"
	t=$(($(now_ms) - t0))
	echo "Java RLock waiter in after ${t} ms of a 1.5 s minimum hold" >&3
	[ "$t" -ge 1000 ]
	[ "$t" -lt 5000 ]
}

@test "matrix: summary (the median of the pushed cells)" {
	sed 's/^/  /' "$CELLS" >&3
	local ms
	ms=$(sed -n 's/.*woken in \([0-9-]*\) ms$/\1/p' "$CELLS" | sort -n)
	[ -n "$ms" ]
	echo "pushed cells: $(echo "$ms" | wc -l), median $(echo "$ms" |
	    awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }') ms, most $(echo "$ms" | tail -1) ms" >&3
}
