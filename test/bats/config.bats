#!/usr/bin/env bats
# The configuration file: where it is found, KEY = VALUE lines named as
# the long options, command line > environment > file > default, a bad
# file or key refused naming FILE:LINE, and redlock config saying where
# each setting comes from, passwords masked.

load helpers

setup_file() { start_redis R; }
teardown_file() { stop_redis "$R_PID"; }
setup() {
	rcli flushall >/dev/null
	D=$BATS_TEST_TMPDIR
	# No file but the test's: neither ~/.config nor /etc is read.
	unset REDLOCK_CONFIG REDLOCK_URL REDLOCK_PREFIX REDLOCK_PUBSUB \
	    REDLOCK_PASSWORD REDLOCK_CACERT REDLOCK_CERT REDLOCK_KEY
	export HOME=$D/home XDG_CONFIG_HOME=$D/xdg
	mkdir -p "$HOME" "$XDG_CONFIG_HOME/redlock"
	F=$XDG_CONFIG_HOME/redlock/config
	U=redis://127.0.0.1:$R_PORT
}

# Every key, for "nothing changed".
keys() { rcli --scan | LC_ALL=C sort; }

@test "the file's url, prefix and timeouts are used without -u or a variable (a crontab's line)" {
	printf '# the fleet\n\nurl = %s\nprefix = app:\n  reply-timeout=3s  \n' \
	    "$U" >"$F"
	run -0 --separate-stderr env -i PATH="$PATH" HOME="$HOME" \
	    XDG_CONFIG_HOME="$XDG_CONFIG_HOME" "$RL" exec x -- true
	run -0 --separate-stderr "$RL" lock x
	[ "$(rcli exists app:x)" = 1 ]
	[ "$(rcli exists x)" = 0 ]
	run -0 --separate-stderr "$RL" config
	assert_line --index 0 "$F:3	url=$U"
	assert_line "$F:4	prefix=app:"
	assert_line "$F:5	reply-timeout=3s"
	assert_line "default	connect-timeout=2s"
	assert_line "default	pubsub=auto"
}

@test "the command line wins over the environment, which wins over the file" {
	printf 'url = redis://127.0.0.1:1\nprefix = file:\nconnect-timeout = 1s\npubsub = sharded\n' >"$F"
	REDLOCK_URL=$U REDLOCK_PREFIX=env: REDLOCK_PUBSUB=classic \
	    run -0 --separate-stderr "$RL" --connect-timeout 3s config
	assert_line "REDLOCK_URL	url=$U"
	assert_line "REDLOCK_PREFIX	prefix=env:"
	assert_line -- "--connect-timeout	connect-timeout=3s"
	assert_line "REDLOCK_PUBSUB	pubsub=classic"
	REDLOCK_URL=$U REDLOCK_PREFIX=env: run -0 "$RL" lock x
	[ "$(rcli exists env:x)" = 1 ]
	REDLOCK_PREFIX=env: run -0 "$RL" -u "$U" --prefix cli: lock x
	[ "$(rcli exists cli:x)" = 1 ]
	# -u alone: the file's unreachable URL is not used.
	run -1 "$RL" -u "$U" status --json
	# An empty --prefix is none, whatever the file says.
	run -0 "$RL" -u "$U" --prefix '' lock y
	[ "$(rcli exists y)" = 1 ]
}

@test "the file's replicas and pubsub reach exec and lock unless given" {
	printf 'url = %s\nreplicas = 1\n' "$U" >"$F"
	# No replica acknowledges: refused, as --replicas 1 would be.
	run -69 --separate-stderr "$RL" lock x
	[[ $stderr == *replica* ]]
	[ "$(rcli exists x)" = 0 ]
	run -0 "$RL" lock --replicas 0 x
	printf 'url = %s\npubsub = bogus\n' "$U" >"$F"
	run -64 --separate-stderr "$RL" lock y
	assert_equal "$stderr" "redlock: $F:2: pubsub: 'bogus' is not one of auto|sharded|classic; see redlock --help"
}

@test "a bad line, an unknown key or a bad value is exit 64 naming FILE:LINE, and nothing is changed" {
	before=$(keys)
	printf 'url = %s\n# fine\nthis is no setting\n' "$U" >"$F"
	run -64 --separate-stderr "$RL" lock x
	assert_equal "$stderr" "redlock: $F:3: 'this is no setting' is not KEY = VALUE; see redlock --help"
	printf 'url = %s\nttl = 5s\n' "$U" >"$F"
	run -64 --separate-stderr "$RL" lock x
	[[ $stderr == "redlock: $F:2: unknown key 'ttl'; the keys are url, password-file, prefix, "*"; see redlock --help" ]]
	printf 'url = %s\nconnect-timeout = soon\n' "$U" >"$F"
	run -64 --separate-stderr "$RL" lock x
	[[ $stderr == "redlock: $F:2: "*soon* ]]
	printf 'url = %s\nsni =\n' "$U" >"$F"
	run -64 --separate-stderr "$RL" lock x
	assert_equal "$stderr" "redlock: $F:2: sni has no value; see redlock --help"
	printf 'url = redis://127.0.0.1:notaport\n' >"$F"
	run -64 --separate-stderr "$RL" lock x
	[[ $stderr == "redlock: "*"bad URL"* ]]
	# Unreadable: 64, naming the file (root reads every file).
	if [ "$(id -u)" != 0 ]; then
		printf 'url = %s\n' "$U" >"$F"
		chmod 000 "$F"
		run -64 --separate-stderr "$RL" lock x
		[[ $stderr == "redlock: cannot read the configuration file $F: "* ]]
	fi
	assert_equal "$(keys)" "$before"
}

@test "a broken file does not stand between a command and its --help" {
	printf 'this is no setting\n' >"$F"
	run -0 --separate-stderr "$RL" exec --help
	assert_line --index 0 "usage: redlock [GLOBAL OPTIONS] exec [OPTIONS] NAME -- COMMAND [ARG...]"
	assert_equal "$stderr" ""
	run -0 "$RL" --help
	# The file is still read before anything else runs.
	run -64 "$RL" status x
}

@test "REDLOCK_CONFIG names the file, which must exist; none at the default places is no error" {
	printf 'prefix = named:\n' >"$D/named"
	printf 'prefix = xdg:\n' >"$F"
	REDLOCK_CONFIG=$D/named run -0 "$RL" config
	assert_line "$D/named:1	prefix=named:"
	REDLOCK_CONFIG=$D/missing run -64 --separate-stderr "$RL" -u "$U" lock x
	[[ $stderr == "redlock: cannot read the configuration file $D/missing: No such file or directory; fix REDLOCK_CONFIG or unset it; see redlock --help" ]]
	REDLOCK_CONFIG= run -64 --separate-stderr "$RL" -u "$U" lock x
	[[ $stderr == "redlock: REDLOCK_CONFIG is set but empty"* ]]
	rm "$F"
	run -0 "$RL" -u "$U" lock x
	[ "$(rcli exists x)" = 1 ]
}

@test "XDG_CONFIG_HOME's file, else ~/.config/redlock/config, else /etc/redlock.conf" {
	mkdir -p "$HOME/.config/redlock"
	printf 'prefix = home:\n' >"$HOME/.config/redlock/config"
	printf 'prefix = xdg:\n' >"$F"
	run -0 "$RL" config
	assert_line "$F:1	prefix=xdg:"
	unset XDG_CONFIG_HOME
	run -0 "$RL" config
	assert_line "$HOME/.config/redlock/config:1	prefix=home:"
	# /etc/redlock.conf, in a mount namespace of its own: this host's
	# /etc is not touched.
	unshare -rm true 2>/dev/null || skip "unshare -rm is not permitted here"
	run -0 --separate-stderr unshare -rm sh -c 'mount -t tmpfs none /etc &&
	    echo "prefix = etc:" >/etc/redlock.conf && exec "$@"' sh \
	    env -u XDG_CONFIG_HOME HOME=/nonexistent "$RL" config
	assert_line "/etc/redlock.conf:1	prefix=etc:"
	# A user's file is read instead of /etc's, not as well.
	run -0 --separate-stderr unshare -rm sh -c 'mount -t tmpfs none /etc &&
	    printf "prefix = etc:\nurl = redis://127.0.0.1:1\n" >/etc/redlock.conf &&
	    exec "$@"' sh "$RL" config
	assert_line "$HOME/.config/redlock/config:1	prefix=home:"
	assert_line "default	url=redis://127.0.0.1:6379"
}

@test "REDLOCK_URL set but empty is exit 64, not the default server" {
	printf 'url = %s\n' "$U" >"$F"
	REDLOCK_URL= run -64 --separate-stderr "$RL" lock x
	assert_equal "$stderr" "redlock: REDLOCK_URL is set but empty: give it a URL, or unset it; see redlock --help"
	[ "$(rcli exists x)" = 0 ]
	# -u wins over it.
	REDLOCK_URL= run -0 "$RL" -u "$U" lock x
}

@test "password-file: its first line is the password; refused when others can read it; redlock config masks every password" {
	start_redis P --requirepass s3cret
	P_URL=redis://127.0.0.1:$P_PORT
	printf 's3cret\n' >"$D/pw"
	chmod 600 "$D/pw"
	printf 'url = %s\npassword-file = %s\n' "$P_URL" "$D/pw" >"$F"
	run -0 --separate-stderr "$RL" lock x
	[ "$(redis-cli -p "$P_PORT" -a s3cret --no-auth-warning exists x)" = 1 ]
	run -0 "$RL" config
	assert_line "$F:2	password-file=$D/pw"
	assert_line "$F:2	password=***"
	refute_output --partial s3cret
	# REDLOCK_PASSWORD wins over the file's password-file...
	REDLOCK_PASSWORD=wrong run -69 "$RL" lock y
	# ...and --password-file over REDLOCK_PASSWORD.
	REDLOCK_PASSWORD=wrong run -0 "$RL" --password-file "$D/pw" lock y
	# A password in the URL wins, and is masked.
	run -0 --separate-stderr "$RL" -u "redis://:s3cret@127.0.0.1:$P_PORT" config
	assert_line -- "--url	url=$P_URL"
	assert_line "url	password=***"
	refute_output --partial s3cret
	printf 'url = redis://u:s3cret@127.0.0.1:%s\n' "$P_PORT" >"$F"
	run -0 "$RL" config
	assert_line "$F:1	url=redis://u:***@127.0.0.1:$P_PORT"
	refute_output --partial s3cret
	# Others may read it: refused, nothing sent.
	printf 'url = %s\npassword-file = %s\n' "$P_URL" "$D/pw" >"$F"
	chmod 640 "$D/pw"
	run -64 --separate-stderr "$RL" lock z
	assert_equal "$stderr" "redlock: $F:2: password-file $D/pw can be read by others (mode 0640): chmod 600 it"
	run -64 --separate-stderr "$RL" --password-file "$D/missing" lock z
	[[ $stderr == "redlock: --password-file $D/missing cannot be read: No such file or directory; "* ]]
	[ "$(redis-cli -p "$P_PORT" -a s3cret --no-auth-warning exists z)" = 0 ]
	stop_redis "$P_PID"
}

@test "config is in --help and the completions' listing; it takes no operand" {
	run -0 "$RL" --help
	assert_line --partial "  config "
	assert_line --partial "--password-file FILE"
	assert_line --partial "--prefix P"
	run -0 "$RL" --complete
	assert_line --partial "config		"
	run -64 --separate-stderr "$RL" config x
}
