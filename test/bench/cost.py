#!/usr/bin/env python3
"""cost.py: Redisson's side of the server-cost comparison, and the
pipelined acquire+release ceiling, for test/bench/run.sh.

usage:
  cost.py rsn PORT KIND N
      Runs N operations of Redisson's scripts for KIND on a server of its
      own (test/bats/redisson.py's scripts and arguments, EVALSHA over a
      raw socket, one call at a time), after a warm-up, and prints the
      usec of EVALSHA (and EVAL) in INFO commandstats divided by N, then
      the usec of the DEL of the unlock latch that Redisson's client
      sends after each unlock, divided by N. KIND:
        lock    RLock: lock, then unlock
        renew   RLock's renewal (the watchdog's), one lock held
        fair    RFairLock: lock (nobody queued), then unlock
        permit  RPermitExpirableSemaphore of 1 permit: tryAcquire with a
                lease, then release
        read    RReadLock: lock, then unlock
        write   RWriteLock: lock, then unlock
  cost.py pipe PORT PAIRS OUT PINGS BENCH-LIB
      Catches with MONITOR the two script calls of one acquire+release
      that BENCH-LIB makes on the server at PORT, and writes to OUT PAIRS
      such pairs, as RESP, on 1000 names taken in turn ("pipe0" ...), and
      to PINGS twice as many PINGs: for redis-cli --pipe, which sends them
      all without waiting for replies.
"""
import os
import re
import socket
import subprocess
import sys
import time
import importlib.util

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "redisson", os.path.join(HERE, "..", "bats", "redisson.py"))
rsn = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rsn)


class Conn:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.f = self.sock.makefile("rb")

    def call(self, *args):
        self.sock.sendall(rsn.encode(list(args)))
        return self.read()

    def read(self):
        line = self.f.readline()
        kind, rest = line[:1], line[1:-2]
        if kind == b"+":
            return rest
        if kind == b"-":
            raise SystemExit("cost.py: server error: %s" % rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self.f.read(n + 2)[:-2]
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise SystemExit("cost.py: bad reply %r" % line)


def commandstats(c):
    """{command: usec} from INFO commandstats."""
    out = {}
    for line in c.call("INFO", "commandstats").decode().split("\r\n"):
        m = re.match(r"cmdstat_([a-z|]+):calls=\d+,usec=(\d+)", line)
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


def now_ms():
    return int(time.time() * 1000)


class Kind:
    """One Redisson kind's operation, as redisson.py's clients call it."""
    LEASE = 30000
    PUB = "PUBLISH"

    def __init__(self, c, kind):
        self.c, self.kind = c, kind
        self.name = "rsnbench-" + kind
        self.field = "%s:1" % rsn.uuid.uuid4()
        self.channel = rsn.hashtagged("redisson_lock__channel", self.name)
        self.sha = {}
        self.req = 0

    def ev(self, script, keys, args):
        if script not in self.sha:
            self.sha[script] = self.c.call("SCRIPT", "LOAD", script)
        return self.c.call("EVALSHA", self.sha[script], len(keys), *keys,
                           *args)

    def latch(self):
        self.req += 1
        return rsn.hashtagged("redisson_unlock_latch", self.name) + \
            ":req%d" % self.req

    def unlock(self, script, keys, args, latch):
        self.ev(script, keys + [latch], args)
        self.c.call("DEL", latch)	# RedissonBaseLock.unlockAsync

    def lock(self):
        assert self.ev(rsn.LOCK, [self.name], [self.LEASE, self.field]) is None

    def release(self):
        self.unlock(rsn.UNLOCK, [self.name, self.channel],
                    ["0", self.LEASE, self.field, self.PUB, rsn.LATCH_MS],
                    self.latch())

    def setup(self):
        if self.kind == "renew":
            self.lock()
        elif self.kind == "permit":
            self.sem_channel = rsn.hashtagged("redisson_sc", self.name)
            self.timeouts = rsn.tagged(self.name, "timeout")
            self.ev(rsn.SEM_TRY_SET, [self.name, self.sem_channel],
                    [1, self.PUB])
        elif self.kind in ("read", "write"):
            self.channel = rsn.hashtagged("redisson_rwlock", self.name)
            self.prefix = rsn.tagged(self.name)
            self.timeout_prefix = self.prefix + ":" + self.field + \
                ":rwlock_timeout"
        elif self.kind == "fair":
            self.queue = rsn.hashtagged("redisson_lock_queue", self.name)
            self.timeouts = rsn.hashtagged("redisson_lock_timeout", self.name)

    def op(self):
        k = self.kind
        if k == "lock":
            self.lock()
            self.release()
        elif k == "renew":
            assert self.ev(rsn.LOCK_RENEW, [self.name],
                           [self.LEASE, self.field]) == [1]
        elif k == "fair":
            assert self.ev(rsn.FAIR_LOCK,
                           [self.name, self.queue, self.timeouts],
                           [self.LEASE, self.field, 300000, now_ms()]) is None
            self.unlock(rsn.FAIR_UNLOCK,
                        [self.name, self.queue, self.timeouts, self.channel],
                        ["0", self.LEASE, self.field, now_ms(), self.PUB,
                         rsn.LATCH_MS], self.latch())
        elif k == "permit":
            permit = os.urandom(16)
            assert self.ev(rsn.SEM_ACQUIRE,
                           [self.name, self.timeouts, self.sem_channel],
                           [1, now_ms() + self.LEASE, now_ms(), rsn.NO_EXPIRY,
                            self.PUB, permit]) == b"OK"
            assert self.ev(rsn.SEM_RELEASE,
                           [self.name, self.sem_channel, self.timeouts],
                           [permit, 1, now_ms(), self.PUB]) == 1
        elif k == "read":
            assert self.ev(rsn.READ_LOCK, [self.name, self.timeout_prefix],
                           [self.LEASE, self.field,
                            self.field + ":write"]) is None
            self.unlock(rsn.READ_UNLOCK,
                        [self.name, self.channel, self.timeout_prefix,
                         self.prefix],
                        ["0", self.field, self.PUB, rsn.LATCH_MS],
                        self.latch())
        elif k == "write":
            assert self.ev(rsn.WRITE_LOCK, [self.name],
                           [self.LEASE, self.field + ":write"]) is None
            self.unlock(rsn.WRITE_UNLOCK, [self.name, self.channel],
                        ["1", self.LEASE, self.field + ":write", self.PUB,
                         rsn.LATCH_MS], self.latch())
        else:
            raise SystemExit("cost.py: unknown kind %s" % k)

    def teardown(self):
        if self.kind == "renew":
            self.release()
        self.c.call("DEL", self.name, rsn.tagged(self.name, "timeout"))


def rsn_cost(port, kind, n):
    c = Conn(port)
    k = Kind(c, kind)
    k.setup()
    for _ in range(20):
        k.op()
    c.call("CONFIG", "RESETSTAT")
    for _ in range(n):
        k.op()
    st = commandstats(c)
    k.teardown()
    script = st.get("evalsha", 0) + st.get("eval", 0)
    print("%.2f %.2f" % (script / n, st.get("del", 0) / n))


def unrepr(s):
    """The arguments of one MONITOR line (sdscatrepr quoting)."""
    args, i = [], s.index('"')
    while i < len(s):
        if s[i] != '"':
            i += 1
            continue
        i += 1
        out = bytearray()
        while s[i] != '"':
            ch = s[i]
            if ch == "\\":
                nxt = s[i + 1]
                if nxt == "x":
                    out.append(int(s[i + 2:i + 4], 16))
                    i += 4
                    continue
                out += {"n": b"\n", "r": b"\r", "t": b"\t", "a": b"\a",
                        "b": b"\b"}.get(nxt, nxt.encode())
                i += 2
                continue
            out += ch.encode("latin-1")
            i += 1
        args.append(bytes(out))
        i += 1
    return args


def capture(port, benchlib):
    """The EVALSHA calls of one acquire+release of bench-lib."""
    subprocess.run([benchlib, "1", "redis://127.0.0.1:%d" % port],
                   check=True, stdout=subprocess.DEVNULL)	# scripts loaded
    c = Conn(port)
    assert c.call("MONITOR") == b"OK"
    subprocess.run([benchlib, "1", "redis://127.0.0.1:%d" % port],
                   check=True, stdout=subprocess.DEVNULL)
    c.sock.sendall(rsn.encode(["PING"]))	# its PONG ends the capture
    calls = []
    while True:
        line = c.read().decode("latin-1")
        if '"' not in line:
            break
        args = unrepr(line)
        if args[0].upper() in (b"EVALSHA", b"EVAL"):
            calls.append(args)
    if len(calls) != 2 or any(a[0].upper() != b"EVALSHA" for a in calls):
        raise SystemExit("cost.py: expected 2 EVALSHA calls, saw %r" % calls)
    return calls


def pipe(port, pairs, out, pings, benchlib):
    calls = capture(port, benchlib)
    per_name = []
    for i in range(1000):
        nm = b"pipe%d" % i
        per_name.append(b"".join(
            rsn.encode([a[0], a[1]] + [x.replace(b"bench-lib", nm)
                                       for x in a[2:]]) for a in calls))
    with open(out, "wb") as f:
        for i in range(pairs):
            f.write(per_name[i % 1000])
    ping = rsn.encode(["PING"])
    with open(pings, "wb") as f:
        f.write(ping * (2 * pairs))


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "rsn":
        rsn_cost(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]))
    elif len(sys.argv) == 7 and sys.argv[1] == "pipe":
        pipe(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5],
             sys.argv[6])
    else:
        sys.stderr.write(__doc__)
        sys.exit(64)


main()
