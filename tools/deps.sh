#!/bin/sh
# deps.sh: install the Debian packages a make target needs, if missing.
# usage: deps.sh build|test|bench|fuzz
# As root it runs apt-get, otherwise sudo apt-get; without either it prints
# the exact command and fails.
set -eu
build="gcc make jq libhiredis-dev libssl-dev"
test="$build redis-server redis-sentinel redis-tools openssl bats bats-support bats-assert libcmocka-dev mandoc util-linux bsdutils bsdextrautils procps hostname python3 python3-yaml systemd bash-completion zsh fish lintian binutils dpkg"
bench="$build redis-server redis-tools openssl util-linux hostname python3"
fuzz="$build clang-14 libclang-rt-14-dev"
case "${1:-}" in
build) want=$build ;;
test) want=$test ;;
bench) want=$bench ;;
fuzz) want=$fuzz ;;
*) echo "usage: tools/deps.sh build|test|bench|fuzz" >&2; exit 64 ;;
esac
missing=
for p in $want; do
	if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
	    grep -q '^install ok installed$'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0
cmd="apt-get install -y --no-install-recommends$missing"
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
