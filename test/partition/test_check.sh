#!/bin/bash
# test_check.sh: check.py against histories written by hand, each made to
# pass or to fail one rule; asserts the counts of its last line, the limit
# exceeded count, and its exit status.
# usage: bash test/partition/test_check.sh
set -u
check=$(dirname "$0")/check.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cases=0 bad=0

# new CASE [key=value...]: a fresh history with a meta (ttl_ms=1000,
# stall_bound_ms=2000 unless given) and empty logs; later lines win.
new() {
	d=$tmp/$1
	shift
	mkdir -p "$d"
	printf '%s\n' topology=single kind=plain fault=symmetric seed=1 \
	    ttl_ms=1000 stall_bound_ms=2000 "$@" >"$d/meta"
	: >"$d/sections.log"; : >"$d/store.log"; : >"$d/faults.log"
	: >"$d/waits.log"
}

# expect STATUS "N F O S D L" [LIMIT]: run check.py on $d.
expect() {
	local out rc got limit
	cases=$((cases + 1))
	out=$(python3 "$check" "$d" 2>&1)
	rc=$?
	got=$(tail -n 1 <<<"$out" | sed -n 's/^partition: \([0-9]*\) sections, \([0-9]*\) faults, \([0-9]*\) overlaps, \([0-9]*\) stale accepted, \([0-9]*\) duplicate tokens, \([0-9]*\) stalls$/\1 \2 \3 \4 \5 \6/p')
	limit=$(sed -n 's/.* \([0-9]*\) limit exceeded,.*/\1/p' <<<"$out")
	if [ "$rc" != "$1" ] || [ "$got" != "$2" ] || [ "${limit:-0}" != "${3:-0}" ]; then
		bad=$((bad + 1))
		echo "FAIL: ${d##*/}: want status $1, '$2', limit ${3:-0};" \
		    "got status $rc, '$got', limit ${limit:-0}:"
		sed 's/^/    /' <<<"$out"
	fi
}

# expect_malformed WHERE: exit 2 and one line naming the file:line.
expect_malformed() {
	local out rc
	cases=$((cases + 1))
	out=$(python3 "$check" "$d" 2>&1)
	rc=$?
	if [ "$rc" != 2 ] || [ "$(wc -l <<<"$out")" != 1 ] ||
	    [[ $out != "$d/$1"* ]]; then
		bad=$((bad + 1))
		echo "FAIL: ${d##*/}: want status 2 and '$d/$1...'; got $rc: $out"
	fi
}

ms=1000000

new clean
cat >"$d/sections.log" <<EOF
enter $((1 * ms)) redlock 11 n plain 1
exit $((5 * ms)) redlock 11 n plain 1 0
enter $((5 * ms)) redisson 12 n plain 2
exit $((9 * ms)) redisson 12 n plain 2 0
EOF
cat >"$d/store.log" <<EOF
$((2 * ms)) n 1 accepted 11
$((6 * ms)) n 2 accepted 12
$((7 * ms)) n 2 accepted 12
EOF
cat >"$d/faults.log" <<EOF
start $((3 * ms)) partition client 11 from server
heal $((4 * ms))
start $((6 * ms)) netem delay 100ms
end $((8 * ms)) netem
EOF
cat >"$d/waits.log" <<EOF
start $((2 * ms)) redisson 12 n 10000
got $((5 * ms)) redisson 12 n 10000
EOF
expect 0 "2 2 0 0 0 0"

new overlap
cat >"$d/sections.log" <<EOF
enter $((1 * ms)) redlock 11 n plain 1
enter $((4 * ms)) redlock 12 n plain 2
exit $((5 * ms)) redlock 11 n plain 1 79
exit $((9 * ms)) redlock 12 n plain 2 0
EOF
cat >"$d/store.log" <<EOF
$((4 * ms)) n 2 accepted 12
$((4 * ms + 1)) n 1 refused 11
EOF
expect 1 "2 0 1 0 0 0"

new same-pid-twice          # one pid's sections one after another
cat >"$d/sections.log" <<EOF
enter $((1 * ms)) redlock 11 n fair 1
exit $((2 * ms)) redlock 11 n fair 1 0
enter $((2 * ms)) redlock 11 n fair 2
exit $((3 * ms)) redlock 11 n fair 2 0
EOF
expect 0 "2 0 0 0 0 0"

new three-overlap           # three at once: three pairs
cat >"$d/sections.log" <<EOF
enter $((1 * ms)) redlock 11 n fair 1
enter $((2 * ms)) redlock 12 n fair 2
enter $((3 * ms)) redisson 13 n fair 3
exit $((6 * ms)) redlock 11 n fair 1
exit $((6 * ms)) redlock 12 n fair 2
exit $((6 * ms)) redisson 13 n fair 3
EOF
expect 1 "3 0 3 0 0 0"

new other-names             # two names, each held once at a time
cat >"$d/sections.log" <<EOF
enter $((1 * ms)) redlock 11 a plain 1
enter $((2 * ms)) redlock 12 b plain 1
exit $((6 * ms)) redlock 11 a plain 1 0
exit $((6 * ms)) redlock 12 b plain 1 0
EOF
expect 0 "2 0 0 0 0 0"

new inherent inherent=1
cat >"$d/sections.log" <<EOF
enter $((1 * ms)) redlock 11 n plain 1
enter $((4 * ms)) redlock 12 n plain 2
exit $((5 * ms)) redlock 11 n plain 1 0
exit $((9 * ms)) redlock 12 n plain 2 0
EOF
cat >"$d/faults.log" <<EOF
start $((2 * ms)) sigstop pid 11
end $((5 * ms)) sigstop pid 11
EOF
expect 0 "2 1 1 0 0 0"

new readers kind=read
cat >"$d/sections.log" <<EOF
enter $((1 * ms)) redlock 11 n read 1
enter $((2 * ms)) redisson 12 n read 2
enter $((3 * ms)) redlock 13 n read 3
exit $((5 * ms)) redlock 11 n read 1 0
exit $((5 * ms)) redisson 12 n read 2 0
exit $((5 * ms)) redlock 13 n read 3 0
EOF
cat >"$d/store.log" <<EOF
$((4 * ms)) n 3 accepted 13
$((4 * ms + 1)) n 1 accepted 11
EOF
expect 0 "3 0 0 0 0 0"

new reader-writer kind=write
cat >"$d/sections.log" <<EOF
enter $((1 * ms)) redlock 11 n read 1
enter $((2 * ms)) redlock 12 n read 2
enter $((3 * ms)) redisson 13 n write 3
exit $((4 * ms)) redlock 12 n read 2 0
exit $((5 * ms)) redlock 11 n read 1 0
exit $((6 * ms)) redisson 13 n write 3 0
EOF
expect 1 "3 0 2 0 0 0"

new limit2 kind=limit2
cat >"$d/sections.log" <<EOF
enter $((1 * ms)) redlock 11 n limit2 1
enter $((2 * ms)) redisson 12 n limit2 2
enter $((3 * ms)) redlock 13 n limit2 3
exit $((4 * ms)) redlock 11 n limit2 1 0
enter $((4 * ms)) redlock 14 n limit2 4
exit $((5 * ms)) redisson 12 n limit2 2 0
exit $((5 * ms)) redlock 13 n limit2 3 0
exit $((5 * ms)) redlock 14 n limit2 4 0
EOF
cat >"$d/store.log" <<EOF
$((3 * ms)) n 3 accepted 13
$((3 * ms + 1)) n 1 accepted 11
EOF
expect 1 "4 0 0 0 0 0" 2

new limit2-within kind=limit2
cat >"$d/sections.log" <<EOF
enter $((1 * ms)) redlock 11 n limit2 1
enter $((2 * ms)) redisson 12 n limit2 2
exit $((3 * ms)) redlock 11 n limit2 1 0
enter $((3 * ms)) redlock 13 n limit2 3
exit $((5 * ms)) redisson 12 n limit2 2 0
exit $((5 * ms)) redlock 13 n limit2 3 0
EOF
expect 0 "3 0 0 0 0 0"

new stale
cat >"$d/sections.log" <<EOF
enter $((1 * ms)) redlock 11 n plain 5
exit $((2 * ms)) redlock 11 n plain 5 0
enter $((3 * ms)) redlock 12 n plain 7
exit $((4 * ms)) redlock 12 n plain 7 0
EOF
cat >"$d/store.log" <<EOF
$((3 * ms)) n 7 accepted 12
$((3 * ms + 5)) n 5 refused 11
$((3 * ms + 9)) n 5 accepted 11
$((3 * ms + 10)) n 7 accepted 12
EOF
expect 1 "2 0 0 1 0 0"

new duplicate
cat >"$d/sections.log" <<EOF
enter $((1 * ms)) redlock 11 n plain 5
exit $((2 * ms)) redlock 11 n plain 5 0
enter $((3 * ms)) redisson 12 n plain 5
exit $((4 * ms)) redisson 12 n plain 5 0
enter $((5 * ms)) redisson 13 n plain -
exit $((6 * ms)) redisson 13 n plain - 0
enter $((7 * ms)) redisson 14 n plain -
exit $((8 * ms)) redisson 14 n plain - 0
EOF
expect 1 "4 0 0 0 1 0"

new duplicate-ok dup_ok=1
cp "$tmp/duplicate/sections.log" "$d/"
expect 0 "4 0 0 0 1 0"

new killed                  # no exit: open until the end of the history
cat >"$d/sections.log" <<EOF
enter $((1 * ms)) redlock 11 n write 1
enter $((30 * ms)) redlock 12 n write 2
exit $((40 * ms)) redlock 12 n write 2 0
EOF
cat >"$d/faults.log" <<EOF
start $((2 * ms)) kill9 pid 11
end $((2 * ms)) kill9
EOF
expect 1 "2 1 1 0 0 0"

new killed-then-alone       # the open section ends with the history
cat >"$d/sections.log" <<EOF
enter $((1 * ms)) redlock 12 n write 2
exit $((2 * ms)) redlock 12 n write 2 0
enter $((30 * ms)) redlock 11 n write 3
EOF
expect 0 "2 0 0 0 0 0"

new stall
cat >"$d/faults.log" <<EOF
start $((1 * ms)) partition master from replicas
heal $((2000 * ms))
EOF
cat >"$d/waits.log" <<EOF
start $((1000 * ms)) redlock 21 n 40000
start $((1000 * ms)) redlock 22 n 40000
got $((5001 * ms)) redlock 22 n 40000 0
start $((1000 * ms)) redlock 23 n -
got $((4999 * ms)) redlock 23 n - 0
start $((1500 * ms)) redlock 24 n 1000
start $((1600 * ms)) redlock 25 n 200
got $((1700 * ms)) redlock 25 n 200 0
start $((3000 * ms)) redlock 26 n 1000
EOF
echo "heal $((9000 * ms))" >>"$d/faults.log"
expect 1 "0 1 0 0 0 2"

new stall-too-soon          # the history ends before the bound: no verdict
cat >"$d/faults.log" <<EOF
start $((1 * ms)) partition master from replicas
heal $((2000 * ms))
EOF
cat >"$d/waits.log" <<EOF
start $((1000 * ms)) redlock 21 n 40000
start $((4000 * ms)) redlock 22 n 40000
EOF
expect 0 "0 1 0 0 0 0"

new gaveup
cat >"$d/faults.log" <<EOF
start $((1 * ms)) partition master from sentinels
heal $((2000 * ms))
start $((6000 * ms)) partition master from sentinels
heal $((9000 * ms))
EOF
cat >"$d/waits.log" <<EOF
start $((500 * ms)) redlock 31 n 1000
gaveup $((1500 * ms)) redlock 31 n 1000 75
start $((500 * ms)) redlock 32 n 40000
gaveup $((1500 * ms)) redlock 32 n 40000 69
start $((2500 * ms)) redlock 33 n 40000
gaveup $((4500 * ms)) redlock 33 n 40000 69
start $((5500 * ms)) redlock 34 n 40000
gaveup $((7000 * ms)) redlock 34 n 40000 69
start $((3000 * ms)) redlock 35 n 1000
gaveup $((4000 * ms)) redlock 35 n 1000 69
start $((3000 * ms)) redlock 36 n 40000
gaveup $((4000 * ms)) redlock 36 n 40000 75
EOF
expect 1 "0 2 0 0 0 1"

new faults
cat >"$d/faults.log" <<EOF
start $((1 * ms)) partition a b
start $((1 * ms)) netem loss 30%
end $((2 * ms)) netem loss 30%
start $((3 * ms)) kill9 pid 7
heal $((4 * ms))
EOF
expect 0 "0 3 0 0 0 0"

new two-dirs                # sums and the worst status over HISTDIRs
cases=$((cases + 1))
out=$(python3 "$check" --table "$tmp/clean" "$tmp/overlap" "$tmp/inherent" 2>&1)
rc=$?
if [ "$rc" != 1 ] ||
    [ "$(tail -n 1 <<<"$out")" != "partition: 6 sections, 3 faults, 2 overlaps, 0 stale accepted, 0 duplicate tokens, 0 stalls" ] ||
    [ "$(grep -c '^| single | symmetric | plain |' <<<"$out")" != 3 ] ||
    ! grep -q '^| single | symmetric | plain | 2 | 1 | 1 (inherent) | 0 | 0 | 0 | 0 |$' <<<"$out"; then
	bad=$((bad + 1))
	echo "FAIL: two-dirs: status $rc:"
	sed 's/^/    /' <<<"$out"
fi

new malformed-field
printf 'enter 1000 redlock 11 n plain 1\nexit soon redlock 11 n plain 1 0\n' \
    >"$d/sections.log"
expect_malformed sections.log:2
new malformed-kind
echo 'enter 1000 redlock 11 n exclusive 1' >"$d/sections.log"
expect_malformed sections.log:1
new malformed-exit
echo 'exit 1000 redlock 11 n plain 1 0' >"$d/sections.log"
expect_malformed sections.log:1
new malformed-store
printf '1000 n 1 accepted 11\n1001 n 2 maybe 12\n' >"$d/store.log"
expect_malformed store.log:2
new malformed-waits
echo 'got 1000 redlock 11 n 100' >"$d/waits.log"
expect_malformed waits.log:1
new malformed-meta
echo 'inherent' >>"$d/meta"
expect_malformed meta:7

if [ "$bad" != 0 ]; then
	echo "check: $bad of $cases cases failed"
	exit 1
fi
echo "check: $cases cases ok"
