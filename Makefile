# redlock: distributed locks on Redis for the command line.

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
# Shell completions: bash-completion's completionsdir (where its pkg-config
# file puts it, with its datadir moved under PREFIX so that PREFIX=$HOME/.local
# needs no root; bash-completion looks in every XDG data dir, /usr/local/share
# too), zsh's site-functions, fish's vendor_completions.d.
BASHCOMPDIR ?= $(or $(shell pkg-config --define-variable=datadir=$(PREFIX)/share \
	--variable=completionsdir bash-completion 2>/dev/null),$(PREFIX)/share/bash-completion/completions)
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d

CC ?= cc
WARN = -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wwrite-strings -Wformat=2 -Werror
CPPFLAGS += -D_GNU_SOURCE -Ibuild -Ilib -MMD -MP
CFLAGS ?= -O2 -g
LDLIBS = -lhiredis -lm

SAN = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
# LeakSanitizer checks every process of the suite against redis-server as
# it exits. Not checked for leaks: the suite against valkey-server (the
# same tests through the same code, under ASan and UBSan: test/suites.sh
# sets detect_leaks=0), the torture's workers (test/torture/run.sh: a
# run of fixed length whose point is faults, not leaks, and whose 600 ms
# leases the check's CPU ran out), and the waiters of herd.bats' drains,
# which run
# the release build (REDLOCK_RELEASE_BIN): hundreds of processes that end
# within seconds of one another, to count script calls. Why: the exit
# check stops the process from a child of its own (PTRACE_ATTACH, whose
# SIGSTOP it waits for), and a SIGCONT that lands before that stop cancels
# it: the process then spins for ever (state R, TracerPid its own child;
# test/bats/harness.bats makes one), so the more processes end at once,
# the more a stray SIGCONT can hold; and the check costs some 40 ms of CPU
# a process (an ASan process 60 ms more, a release one 5 ms in all), on a
# CPU that make test keeps busy from start to end on 2 cores.
export ASAN_OPTIONS = exitcode=99:detect_leaks=1
# The sanitizers' runtimes linked in: a process of the suite starts and
# ends in two thirds of the CPU time it takes with them as shared
# libraries (relocations, and the exit check scanning the 6 MB of
# libubsan's zeroed data page by page): `exec -- true` 119 ms against
# 180 (56 against 63 without the exit check; the release build 18), and
# make test starts tens of thousands.
SAN_LD = $(SAN) $(if $(findstring clang,$(CC)),,-static-libasan -static-libubsan)
export UBSAN_OPTIONS = halt_on_error=1:exitcode=98:print_stacktrace=1

LUA_PRELUDE = lua/prelude.lua
LUA = $(filter-out $(LUA_PRELUDE),$(wildcard lua/*.lua))
LIB_SRC = $(wildcard lib/*.c)
CMD_SRC = $(wildcard cmd/*.c)
UNIT_SRC = $(wildcard test/unit/*.c)

OBJ = $(patsubst %.c,build/obj/%.o,$(LIB_SRC) $(CMD_SRC))
LIB_OBJ = $(patsubst %.c,build/obj/%.o,$(LIB_SRC))
CMD_OBJ = $(patsubst %.c,build/obj/%.o,$(CMD_SRC))
SAN_OBJ = $(patsubst %.c,build/asan/%.o,$(LIB_SRC) $(CMD_SRC))
SAN_LIB_OBJ = $(patsubst %.c,build/asan/%.o,$(LIB_SRC))
UNIT_BIN = $(patsubst test/unit/%.c,build/asan/unit/%,$(UNIT_SRC))

all: build/redlock

# Every build starts by checking its packages: a missing one is named, with
# the command that installs it, instead of a compiler error.
deps-check:
	@test/deps.sh -c build

build/rl_scripts.h: $(LUA_PRELUDE) $(LUA) lua/embed.sh | deps-check
	@mkdir -p build
	lua/embed.sh $@ $(LUA_PRELUDE) $(LUA)

build/obj/%.o: %.c build/rl_scripts.h | deps-check
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -c -o $@ $<

build/asan/%.o: %.c build/rl_scripts.h | deps-check
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) -O1 -g $(SAN) -c -o $@ $<

build/redlock: $(OBJ)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(OBJ) $(LDLIBS)

build/asan/redlock: $(SAN_OBJ)
	$(CC) -g $(SAN_LD) $(LDFLAGS) -o $@ $(SAN_OBJ) $(LDLIBS)

build/asan/unit/%: build/asan/test/unit/%.o $(SAN_LIB_OBJ)
	@mkdir -p $(@D)
	$(CC) -g $(SAN_LD) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcmocka
# The pieces of cmd/ that test_cmd links.
build/asan/unit/test_cmd: build/asan/cmd/sig.o

# Fuzz harnesses: libFuzzer with clang for `make fuzz`, and a plain driver
# that replays their corpus and regressions under ASan in `make test`.
FUZZ = duration url cli reply cluster sentinel
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS = -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined \
	-D_GNU_SOURCE -DREDLOCK_NO_MAIN -Ibuild -Ilib -Wall -Wextra -Werror
REPLAY_BIN = $(patsubst %,build/asan/replay/%,$(FUZZ))
NOMAIN_OBJ = $(filter-out build/asan/cmd/main.o,$(SAN_OBJ)) build/asan/nomain/main.o

build/fuzz/%: test/fuzz/fuzz_%.c test/fuzz/fake.h $(LIB_SRC) $(CMD_SRC) build/rl_scripts.h
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) -o $@ $< $(LIB_SRC) $(CMD_SRC) \
	    -lhiredis -lm

build/asan/nomain/main.o: cmd/main.c build/rl_scripts.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) -O1 -g $(SAN) -DREDLOCK_NO_MAIN -c -o $@ $<

build/asan/replay/%: build/asan/test/fuzz/fuzz_%.o build/asan/test/fuzz/driver.o $(NOMAIN_OBJ)
	@mkdir -p $(@D)
	$(CC) -g $(SAN_LD) $(LDFLAGS) -o $@ $^ $(LDLIBS)

fuzz:
	test/deps.sh fuzz
	$(MAKE) $(patsubst %,build/fuzz/%,$(FUZZ))
	@for f in $(FUZZ); do \
		mkdir -p build/fuzz/corpus/$$f test/fuzz/regressions/$$f; \
		echo "== fuzz_$$f for $(FUZZ_SECONDS)s"; \
		build/fuzz/$$f -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
		    $$([ $$f = cli ] && echo -close_fd_mask=3) \
		    -artifact_prefix=test/fuzz/regressions/$$f/ \
		    build/fuzz/corpus/$$f test/fuzz/corpus/$$f || exit 1; \
	done

deps:
	test/deps.sh build

# Structure: no include or call cycle between lib files, nor between cmd
# files (nm on their objects), no function over 80 lines nor over 6
# parameters, the Lua scripts' syntax as embedded
# (luac5.1 -p) and embed.sh's checks on copies of lua/ with a mistake
# each, and no script key or argument named by its position outside the
# generated code (check-calls.sh, with copies that must fail). All run,
# then any fails it.
check:
	test/deps.sh build
	$(MAKE) $(LIB_OBJ) $(CMD_OBJ)
	@s=0; \
	echo "== test/check-embed.sh (lua/ as embedded, then lua/ with mistakes)"; \
	test/check-embed.sh || s=1; \
	echo "== test/check-calls.sh (keys and arguments by name, then mistakes)"; \
	test/check-calls.sh || s=1; \
	echo "== test/check-cycles.sh build/obj/lib, then build/obj/cmd cmd"; \
	test/check-cycles.sh build/obj/lib || s=1; \
	test/check-cycles.sh build/obj/cmd cmd || s=1; \
	echo "== test/check-length.sh 80 lib/*.c cmd/*.c"; \
	test/check-length.sh 80 $(LIB_SRC) $(CMD_SRC) || s=1; \
	echo "== test/check-params.sh 6 lib/*.c cmd/*.c"; \
	test/check-params.sh 6 $(LIB_SRC) $(CMD_SRC) || s=1; \
	echo "== one master or several: decided in rl_quorum.c and rl_keys.c only"; \
	! grep -n -- 'c->n [<>=!]=* *[0-9]' $(filter-out lib/rl_quorum.c \
	    lib/rl_keys.c,$(LIB_SRC)) || s=1; \
	exit $$s

# The whole suite, built with AddressSanitizer and UBSan; the library
# program of make bench is built too, so that it follows the API.
test:
	test/deps.sh test
	$(MAKE) check
	$(MAKE) build/redlock build/asan/redlock $(UNIT_BIN) $(REPLAY_BIN) \
	    build/bench-lib
	@for t in $(UNIT_BIN); do echo "== $$t"; $$t || exit 1; done
	@for f in $(FUZZ); do printf '== fuzz replay %s: ' $$f; \
		build/asan/replay/$$f test/fuzz/corpus/$$f/* \
		    $$(ls test/fuzz/regressions/$$f/* 2>/dev/null) \
		    >build/asan/replay/$$f.log 2>&1 || \
		    { cat build/asan/replay/$$f.log; exit 1; }; \
		tail -n 1 build/asan/replay/$$f.log; \
	done
	mandoc -Tlint -Wwarning $(MAN1) $(MAN5) $(MAN7)
	test/suites.sh $(CURDIR)/build/asan/redlock build/asan/suites \
	    $(CURDIR)/build/redlock

# Faults injected while workers take turns; TORTURE_SECONDS=600 for long,
# TORTURE_TOPOLOGIES="sentinel cluster" (the default) for the failovers.
TORTURE_SECONDS ?= 30
torture:
	test/deps.sh test
	$(MAKE) build/asan/redlock
	test/torture/run.sh build/asan/redlock $(TORTURE_SECONDS)

demo:
	test/deps.sh test
	$(MAKE) build/redlock
	test/demo.sh build/redlock

build/bench-lib: test/bench/lib.c $(filter build/obj/lib/%,$(OBJ))
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -o $@ $^ $(LDLIBS)

build/bench-spawn: test/bench/spawn.c
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -o $@ $<

build/bench-handover: test/bench/handover.c
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -o $@ $< $(LDLIBS)

bench:
	test/deps.sh bench
	$(MAKE) build/redlock build/bench-lib build/bench-spawn \
	    build/bench-handover
	test/bench/run.sh build/redlock

# The manual: redlock(1), the configuration file, the concepts.
MAN1 = man/redlock.1
MAN5 = man/redlock.conf.5
MAN7 = man/redlock-kinds.7 man/redlock-ha.7 man/redlock-redisson.7

install: build/redlock
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
	    $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7 \
	    $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	install -m 755 build/redlock $(DESTDIR)$(BINDIR)/redlock
	install -m 644 $(MAN1) $(DESTDIR)$(MANDIR)/man1
	install -m 644 $(MAN5) $(DESTDIR)$(MANDIR)/man5
	install -m 644 $(MAN7) $(DESTDIR)$(MANDIR)/man7
	install -m 644 man/redlock.bash $(DESTDIR)$(BASHCOMPDIR)/redlock
	install -m 644 man/_redlock $(DESTDIR)$(ZSHCOMPDIR)/_redlock
	install -m 644 man/redlock.fish $(DESTDIR)$(FISHCOMPDIR)/redlock.fish

# Everything install put in place; directories stay (others share them).
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/redlock \
	    $(patsubst man/%,$(DESTDIR)$(MANDIR)/man1/%,$(MAN1)) \
	    $(patsubst man/%,$(DESTDIR)$(MANDIR)/man5/%,$(MAN5)) \
	    $(patsubst man/%,$(DESTDIR)$(MANDIR)/man7/%,$(MAN7)) \
	    $(DESTDIR)$(BASHCOMPDIR)/redlock $(DESTDIR)$(ZSHCOMPDIR)/_redlock \
	    $(DESTDIR)$(FISHCOMPDIR)/redlock.fish

# The Debian package, built from a tree that make install fills under
# DEBOUT (build/ unless told otherwise: tests build into a directory of
# their own) and a control file written here: binary stripped, manual
# pages gzipped, README, DEP-5 copyright from LICENSE, changelog.
# libssl3 is dlopen'ed for rediss:// only (lib/rl_tls.c), so
# dpkg-shlibdeps would not see it: it is a Recommends.
VERSION = $(shell sed -n 's/^\#define RL_VERSION "\(.*\)"/\1/p' lib/redlock.h)
DEBOUT ?= build
DEB_MAINTAINER ?= redlock maintainers <maintainers@users.noreply.a-seed-858824ef.example>
deb: build/redlock
	@command -v dpkg-deb >/dev/null || { echo "deb: dpkg-deb is missing (Debian: apt-get install dpkg)" >&2; exit 1; }
	$(eval ARCH := $(shell dpkg --print-architecture))
	$(eval ROOT := $(DEBOUT)/deb/redlock_$(VERSION)_$(ARCH))
	rm -rf $(ROOT)
	$(MAKE) --no-print-directory install DESTDIR=$(ROOT) PREFIX=/usr \
	    BASHCOMPDIR=/usr/share/bash-completion/completions \
	    ZSHCOMPDIR=/usr/share/zsh/vendor-completions
	strip --strip-unneeded --remove-section=.comment \
	    --remove-section=.note $(ROOT)/usr/bin/redlock
	gzip -9n $(ROOT)/usr/share/man/man[157]/*.[157]
	install -d $(ROOT)/usr/share/doc/redlock $(ROOT)/DEBIAN
	install -m 644 README.md $(ROOT)/usr/share/doc/redlock/README.md
	{ echo 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/'; \
	  echo 'Upstream-Name: redlock'; echo; \
	  echo 'Files: *'; \
	  echo "Copyright: $$(sed -n 's/^Copyright (c) //p' LICENSE)"; \
	  echo 'License: BSD-3-Clause'; echo; \
	  echo 'License: BSD-3-Clause'; \
	  sed -n '/^Redistribution/,$$p' LICENSE | sed -e 's/^$$/./' -e 's/^/ /'; \
	} >$(ROOT)/usr/share/doc/redlock/copyright
	{ echo 'redlock ($(VERSION)) unstable; urgency=medium'; echo; \
	  echo '  * Built by make deb from the redlock source tree.'; echo; \
	  echo ' -- $(DEB_MAINTAINER)  '"$$(date -R -d @$${SOURCE_DATE_EPOCH:-$$(stat -c %Y lib/redlock.h)})"; \
	} | gzip -9n >$(ROOT)/usr/share/doc/redlock/changelog.gz
	chmod 644 $(ROOT)/usr/share/doc/redlock/*
	{ echo 'Package: redlock'; \
	  echo 'Version: $(VERSION)'; \
	  echo 'Architecture: $(ARCH)'; \
	  echo 'Maintainer: $(DEB_MAINTAINER)'; \
	  echo "Installed-Size: $$(du -sk --exclude=DEBIAN $(ROOT) | cut -f1)"; \
	  echo "Depends: libc6 (>= $$(objdump -T $(ROOT)/usr/bin/redlock | \
	      grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1)), libhiredis0.14 (>= 0.14.1)"; \
	  echo 'Recommends: libssl3'; \
	  echo 'Section: utils'; \
	  echo 'Priority: optional'; \
	  echo 'Description: distributed locks on Redis for shell scripts, cron and CI'; \
	  echo ' redlock runs a command while holding a lock on a Redis server, with a'; \
	  echo ' lease that a watchdog renews, pub/sub wake-ups, fair queues, shared'; \
	  echo ' locks, semaphores and Redlock across several masters, in the key'; \
	  echo " layout of Redisson's locks, so Java services and shell scripts can"; \
	  echo ' exclude each other.'; \
	} >$(ROOT)/DEBIAN/control
	cd $(ROOT) && find usr -type f -exec md5sum {} + | sort -k2 >DEBIAN/md5sums
	chmod 644 $(ROOT)/DEBIAN/control $(ROOT)/DEBIAN/md5sums
	dpkg-deb --root-owner-group -Zxz --build $(ROOT) $(DEBOUT)/redlock_$(VERSION)_$(ARCH).deb

clean:
	rm -rf build

.PHONY: all deps deps-check check test torture fuzz demo bench install uninstall deb clean

-include $(OBJ:.o=.d) $(SAN_OBJ:.o=.d) \
    $(patsubst test/unit/%.c,build/asan/test/unit/%.d,$(UNIT_SRC))
