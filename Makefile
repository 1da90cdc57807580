# redlock: distributed locks on Redis for the command line.

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man

CC ?= cc
WARN = -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wwrite-strings -Wformat=2 -Werror
CPPFLAGS += -D_GNU_SOURCE -Ibuild -Ilib -MMD -MP
CFLAGS ?= -O2 -g
LDLIBS = -lhiredis -lm

SAN = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
export ASAN_OPTIONS = exitcode=99:detect_leaks=1
export UBSAN_OPTIONS = halt_on_error=1:exitcode=98:print_stacktrace=1

LUA = $(wildcard lua/*.lua)
LIB_SRC = $(wildcard lib/*.c)
CMD_SRC = $(wildcard cmd/*.c)
UNIT_SRC = $(wildcard test/unit/*.c)

OBJ = $(patsubst %.c,build/obj/%.o,$(LIB_SRC) $(CMD_SRC))
SAN_OBJ = $(patsubst %.c,build/asan/%.o,$(LIB_SRC) $(CMD_SRC))
SAN_LIB_OBJ = $(patsubst %.c,build/asan/%.o,$(LIB_SRC))
UNIT_BIN = $(patsubst test/unit/%.c,build/asan/unit/%,$(UNIT_SRC))

all: build/redlock

build/rl_scripts.h: $(LUA) tools/embed-lua.sh
	@mkdir -p build
	tools/embed-lua.sh $@ $(LUA)

build/obj/%.o: %.c build/rl_scripts.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -c -o $@ $<

build/asan/%.o: %.c build/rl_scripts.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) -O1 -g $(SAN) -c -o $@ $<

build/redlock: $(OBJ)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(OBJ) $(LDLIBS)

build/asan/redlock: $(SAN_OBJ)
	$(CC) -g $(SAN) $(LDFLAGS) -o $@ $(SAN_OBJ) $(LDLIBS)

# Units that fake hiredis name the calls they wrap.
WRAP_test_lease = -Wl,--wrap=redisCommandArgv

build/asan/unit/%: build/asan/test/unit/%.o $(SAN_LIB_OBJ)
	@mkdir -p $(@D)
	$(CC) -g $(SAN) $(LDFLAGS) $(WRAP_$*) -o $@ $^ $(LDLIBS) -lcmocka

deps:
	tools/deps.sh build

# The whole suite, built with AddressSanitizer and UBSan.
test:
	tools/deps.sh test
	$(MAKE) build/asan/redlock $(UNIT_BIN)
	@for t in $(UNIT_BIN); do echo "== $$t"; $$t || exit 1; done
	mandoc -Tlint -Wwarning man/redlock.1
	REDLOCK_BIN=$(CURDIR)/build/asan/redlock bats --print-output-on-failure test/bats

demo:
	tools/deps.sh test
	$(MAKE) build/redlock
	tools/demo.sh build/redlock

bench:
	tools/deps.sh bench
	$(MAKE) build/redlock
	bench/run.sh build/redlock

install: build/redlock
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 755 build/redlock $(DESTDIR)$(BINDIR)/redlock
	install -m 644 man/redlock.1 $(DESTDIR)$(MANDIR)/man1/redlock.1

clean:
	rm -rf build

.PHONY: all deps test demo bench install clean

-include $(OBJ:.o=.d) $(SAN_OBJ:.o=.d)
