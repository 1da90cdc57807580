#!/usr/bin/env bats
# make on a machine that lacks a build package: it says which, and the one
# command that installs them, before compiling anything. The check is
# pointed at a package that does not exist (DEPS), so nothing needs to be
# uninstalled.

load helpers

ROOT=$BATS_TEST_DIRNAME/../..

@test "make names a missing build package and the command that installs it, and compiles nothing" {
	run -2 env DEPS="gcc no-such-package-redlock" make -C "$ROOT" --no-print-directory build/redlock
	[[ ${lines[0]} == "redlock: missing packages: no-such-package-redlock; install them with: "* ]]
	if [ "$(id -u)" = 0 ]; then
		[[ ${lines[0]} == *": make deps" ]]
	fi
	[[ $output != *" -c -o "* ]]
	[[ $output != *"No such file"* ]]
}

@test "not root: the apt-get line instead of make deps" {
	command -v setpriv >/dev/null || skip "setpriv is not installed"
	[ "$(id -u)" = 0 ] || skip "needs root to run as another user"
	deps=$(public_copy "$ROOT/test/deps.sh")
	run -1 env DEPS="gcc no-such-package-redlock" setpriv --reuid=65534 \
	    --regid=65534 --clear-groups "$deps" -c build
	rm -rf "${deps%/*}"
	[[ $output == "redlock: missing packages: no-such-package-redlock; install them with: "*"apt-get update && "*"apt-get install -y --no-install-recommends no-such-package-redlock" ]]
}

@test "with every package there, the check says nothing" {
	run -0 "$ROOT/test/deps.sh" -c build
	assert_output ''
}
