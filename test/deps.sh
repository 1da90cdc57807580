#!/bin/sh
# deps.sh: the Debian packages a make target needs.
# usage: deps.sh [-c] build|test|bench|fuzz
# Without -c it installs those missing: as root with apt-get, otherwise
# with sudo apt-get; without either it prints the exact command and fails.
# With -c (plain make) it only checks: the missing packages and the one
# command that installs them, on one line, and exit 1; nothing when none
# is missing, or on a system without dpkg (the compiler will speak).
# DEPS, when set, replaces the target's list (the tests use it).
set -eu
check=0
if [ "${1:-}" = -c ]; then
	check=1
	shift
fi
build="gcc make jq lua5.1 libhiredis-dev libssl-dev"
test="$build redis-server redis-sentinel redis-tools openssl bats bats-support bats-assert libcmocka-dev mandoc util-linux bsdutils bsdextrautils procps hostname python3 python3-yaml systemd bash-completion zsh fish lintian binutils dpkg strace tmux"
bench="$build redis-server redis-tools openssl util-linux hostname python3"
fuzz="$build clang-14 libclang-rt-14-dev"
case "${1:-}" in
build) want=$build ;;
test) want=$test ;;
bench) want=$bench ;;
fuzz) want=$fuzz ;;
*) echo "usage: test/deps.sh [-c] build|test|bench|fuzz" >&2; exit 64 ;;
esac
want=${DEPS:-$want}
command -v dpkg-query >/dev/null 2>&1 || {
	[ "$check" = 1 ] && exit 0
	echo "deps: no dpkg here; install these with your package manager: $want" >&2
	exit 1
}
missing=
for p in $want; do
	if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
	    grep -q '^install ok installed$'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0
cmd="apt-get install -y --no-install-recommends$missing"
if [ "$check" = 1 ]; then
	if [ "$(id -u)" -eq 0 ]; then
		how="make deps"
	elif command -v sudo >/dev/null 2>&1; then
		how="sudo apt-get update && sudo $cmd"
	else
		how="as root: apt-get update && $cmd"
	fi
	echo "redlock: missing packages:$missing; install them with: $how" >&2
	exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "deps: missing packages:$missing; install them with your package manager" >&2
	exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
	sudo=
elif command -v sudo >/dev/null 2>&1; then
	sudo="sudo"
else
	echo "deps: missing packages; as root run: apt-get update && $cmd" >&2
	exit 1
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
