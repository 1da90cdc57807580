#!/usr/bin/env bats
# make install / make uninstall into a DESTDIR, and make deb: contents,
# control, a throwaway root it runs from, lintian.
#
# make test runs the suite against two servers at once: each run installs
# and packages into a temporary directory of its own, and the make runs
# that build build/redlock take turns (flock on build/.package.lock).

load helpers

TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)

# tmake ARGS...: make ARGS in the source tree, one at a time.
tmake() {
	mkdir -p "$TOP/build"
	flock "$TOP/build/.package.lock" make --no-print-directory -C "$TOP" "$@"
}

version() { sed -n 's/^#define RL_VERSION "\(.*\)"/\1/p' "$TOP/lib/redlock.h"; }

@test "make install puts binary, manual pages and completions in place; make uninstall removes every one" {
	local d=$BATS_TEST_TMPDIR/dest
	run -0 tmake install DESTDIR="$d" PREFIX=/usr/local
	run -0 sh -c "cd '$d' && find . ! -type d | sort"
	assert_output "$(printf '%s\n' ./usr/local/bin/redlock \
	    ./usr/local/share/bash-completion/completions/redlock \
	    ./usr/local/share/fish/vendor_completions.d/redlock.fish \
	    ./usr/local/share/man/man1/redlock.1 \
	    ./usr/local/share/man/man5/redlock.conf.5 \
	    ./usr/local/share/man/man7/redlock-ha.7 \
	    ./usr/local/share/man/man7/redlock-kinds.7 \
	    ./usr/local/share/man/man7/redlock-redisson.7 \
	    ./usr/local/share/zsh/site-functions/_redlock)"
	run -0 "$d/usr/local/bin/redlock" --version
	assert_output --partial "redlock $(version)"

	# Each shell finds its file where it was put, the way it looks (fish
	# only for a command on PATH).
	run -0 env XDG_DATA_DIRS="$d/usr/local/share" bash --norc -c '
	    source /usr/share/bash-completion/bash_completion
	    __load_completion redlock && complete -p redlock'
	assert_output 'complete -F _redlock redlock'
	if command -v zsh >/dev/null; then
		run -0 zsh -f -c 'fpath=($1 $fpath); autoload -U compinit
		    compinit -u -D; print -r -- $_comps[redlock]' _ \
		    "$d/usr/local/share/zsh/site-functions"
		assert_output _redlock
	fi
	if command -v fish >/dev/null; then
		run -0 env PATH="$d/usr/local/bin:$PATH" HOME="$BATS_TEST_TMPDIR" \
		    XDG_CONFIG_HOME="$BATS_TEST_TMPDIR/config" \
		    XDG_DATA_DIRS="$d/usr/local/share" \
		    fish -c 'complete -C "redlock --on-lost "; complete -C "redlock ex"'
		assert_line --partial exec
	fi

	run -0 tmake uninstall DESTDIR="$d" PREFIX=/usr/local
	run -0 find "$d" ! -type d
	assert_output ''
}

@test "make deb: contents, control fields, owned by root, stripped" {
	local out=$BATS_FILE_TMPDIR/deb arch deb
	arch=$(dpkg --print-architecture)
	deb=$out/redlock_$(version)_$arch.deb
	run -0 tmake deb DEBOUT="$out"
	[ -f "$deb" ]
	run -0 dpkg-deb -c "$deb"
	local f
	for f in ./usr/bin/redlock ./usr/share/man/man1/redlock.1.gz \
	    ./usr/share/man/man5/redlock.conf.5.gz \
	    ./usr/share/man/man7/redlock-ha.7.gz \
	    ./usr/share/man/man7/redlock-kinds.7.gz \
	    ./usr/share/man/man7/redlock-redisson.7.gz \
	    ./usr/share/bash-completion/completions/redlock \
	    ./usr/share/zsh/vendor-completions/_redlock \
	    ./usr/share/fish/vendor_completions.d/redlock.fish \
	    ./usr/share/doc/redlock/README.md \
	    ./usr/share/doc/redlock/copyright \
	    ./usr/share/doc/redlock/changelog.gz; do
		assert_line --regexp " ${f//./\\.}\$"
	done
	refute_line --regexp '^[^ ]+ [^ ]*[^t]/|^[^ ]+ root/[^r]'
	run -0 dpkg-deb -f "$deb" Package Version Architecture Section Priority Maintainer
	assert_output "$(printf '%s\n' 'Package: redlock' "Version: $(version)" \
	    "Architecture: $arch" 'Section: utils' 'Priority: optional' \
	    'Maintainer: redlock maintainers <maintainers@users.noreply.a-seed-858824ef.example>')"
	run -0 dpkg-deb -f "$deb" Depends
	assert_output --regexp '^libc6 \(>= 2\.[0-9]+\), libhiredis0\.14 \(>= 0\.14\.1\)$'
	run -0 dpkg-deb -f "$deb" Recommends
	assert_output libssl3
	run -0 dpkg-deb -f "$deb" Description
	assert_line --index 0 'distributed locks on Redis for shell scripts, cron and CI'

	rm -rf "$out/root"
	run -0 dpkg-deb -x "$deb" "$out/root"
	run -0 readelf -S "$out/root/usr/bin/redlock"
	refute_output --partial .symtab
	refute_output --partial .debug_
	run -0 sh -c "zcat '$out/root/usr/share/doc/redlock/copyright' 2>/dev/null ||
	    cat '$out/root/usr/share/doc/redlock/copyright'"
	assert_line 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/'
	assert_line 'License: BSD-3-Clause'
	assert_line ' Redistribution and use in source and binary forms, with or without'
	run -0 sh -c "zcat '$out/root/usr/share/man/man1/redlock.1.gz' | head -c 200"
	assert_output --partial '.Dt REDLOCK 1'
	# Each page, gzipped, as man finds it.
	for f in man5/redlock.conf.5 man7/redlock-ha.7 man7/redlock-kinds.7 \
	    man7/redlock-redisson.7; do
		run -0 sh -c "zcat '$out/root/usr/share/man/$f.gz' | head -c 200"
		assert_output --partial ".Dt $(basename "$f" | sed 's/\.[0-9]$//' | tr a-z A-Z)"
	done
}

@test "the redlock of the package runs from a throwaway root, against a server" {
	local out=$BATS_FILE_TMPDIR/deb deb
	deb=$out/redlock_$(version)_$(dpkg --print-architecture).deb
	[ -f "$deb" ] || run -0 tmake deb DEBOUT="$out"
	rm -rf "$out/root2"
	run -0 dpkg-deb -x "$deb" "$out/root2"
	run -0 "$out/root2/usr/bin/redlock" --version
	assert_output --partial "redlock $(version)"
	start_redis R
	run -0 "$out/root2/usr/bin/redlock" -u "redis://127.0.0.1:$R_PORT" \
	    exec -t 5s packaged -- "$out/root2/usr/bin/redlock" \
	    -u "redis://127.0.0.1:$R_PORT" status packaged
	assert_line 'packaged: held'
	stop_redis "$R_PID"
}

@test "lintian reports no errors on the package" {
	command -v lintian >/dev/null ||
	    skip "lintian is not installed: test/deps.sh test installs it"
	local out=$BATS_FILE_TMPDIR/deb deb
	deb=$out/redlock_$(version)_$(dpkg --print-architecture).deb
	[ -f "$deb" ] || run -0 tmake deb DEBOUT="$out"
	run lintian --fail-on error --display-info "$deb"
	echo "$output"
	[ "$status" -eq 0 ]
	refute_line --regexp '^E: '
}
