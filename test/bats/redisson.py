#!/usr/bin/env python3
"""redisson.py: a Redisson RLock client on the wire, for tests.

usage:
  redisson.py --port P [--host H] [--sharded] [--id UUID:TID]
              lock NAME [--wait SECONDS] [--lease MS] [--hold SECONDS]
              [--watchdog MS]
  redisson.py --port P [--host H] [--sharded] unlock NAME --id UUID:TID

Speaks to one server the way Redisson's RedissonLock does (RESP2 over a raw
socket, standard library only), so that tests can show that redlock and
Java services using Redisson exclude and wake each other:

  lock hash      NAME: field UUID:TID -> hold count, PEXPIRE = lease
  channel        redisson_lock__channel:{NAME} (NAME itself when it has a
                 "{": the hash tag is kept), message "0" on a release
  unlock latch   redisson_unlock_latch:{NAME}:REQUEST, kept for the
                 length of Redisson's retries and deleted after the release

lock: tries the lock; while it is busy, subscribes to the lock's channel
on a second connection (SUBSCRIBE, or SSUBSCRIBE with --sharded) and
tries again on each message ("message" or "smessage" push) or when the
TTL the attempt returned has run out, as RedissonLock.tryLock does; waits
for ever without --wait, and makes no last attempt when --wait runs out
(neither does tryLock). Only messages "0" (unlock) and "1" (read unlock)
wake it, as in LockPubSub; others are reported on stderr. Once acquired, holds it for --hold seconds
(default 0), then releases one hold, publishing "0" with PUBLISH (SPUBLISH
with --sharded) if it was the last. Without --lease the lease is the
watchdog's, --watchdog ms (Redisson's lockWatchdogTimeout, default 30000),
renewed every third of it while held; with --lease there is no renewal.
--id is the hash field (default: a fresh UUID, thread 1); the same --id in
two processes is one Redisson thread re-entering.

unlock: releases one hold of NAME by --id, publishing as a release does.

The connection is to a single server: on a cluster, the port of the master
that owns NAME's slot. A MOVED (or any other error) reply ends the program.

--sharded stands for a Redisson whose subscribe service found sharded
pub/sub: Redisson decides that once, on a Redis Cluster only (config
shardedSubscriptionMode AUTO by default: PUBSUB SHARDNUMSUB answers, i.e.
Redis 7 or later), and then subscribes with SSUBSCRIBE and passes SPUBLISH
to its release scripts; on a single server or Sentinel it always uses
SUBSCRIBE and PUBLISH.

Prints, flushed, one line per event, times from time.monotonic():
  subscribed                 the lock was busy; the subscription is confirmed
  woken T                    an unlock message came on the channel
  acquired T
  renewed T                  the watchdog extended the lease
  released T                 the last hold was given back (and published)
  decremented T              one hold given back, others remain
  lost T                     the lock was not held by --id when given back
Exit status: 0 done; 1 --wait ran out; 2 error (refused connection, error
reply such as MOVED, Redis without SSUBSCRIBE); 3 lost (not held by --id).
"""
import argparse
import secrets
import select
import socket
import sys
import time
import uuid

# tryLockInnerAsync: take NAME when it is free, or add a hold when this
# field has it already; either way the lease starts again. A busy lock
# answers its PTTL, a taken one nil.
# KEYS[1] NAME  ARGV[1] lease ms  ARGV[2] UUID:TID
LOCK = """
local free = redis.call('exists', KEYS[1]) == 0
if free or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return false
end
return redis.call('pttl', KEYS[1])
"""

# unlockInnerAsync: give back one hold of UUID:TID. A latch remembers the
# outcome under the request's id, so that a retried request answers the
# same and gives back nothing more. The last hold deletes NAME and wakes
# the waiters with the publish command the client chose.
# KEYS[1] NAME  KEYS[2] channel  KEYS[3] unlock latch
# ARGV[1] message "0"  ARGV[2] lease ms  ARGV[3] UUID:TID
# ARGV[4] PUBLISH or SPUBLISH  ARGV[5] latch lifetime ms
# Returns 1 released, 0 holds remain, nil not held by UUID:TID.
UNLOCK = """
local seen = redis.call('get', KEYS[3])
if seen then return tonumber(seen) end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then return false end
local left = redis.call('hincrby', KEYS[1], ARGV[3], -1)
local outcome = 1
if left > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  outcome = 0
else
  redis.call('del', KEYS[1])
  redis.call(ARGV[4], KEYS[2], ARGV[1])
end
redis.call('set', KEYS[3], outcome, 'px', ARGV[5])
return outcome
"""

# renewExpirationAsync (the watchdog): lengthen the lease only while
# UUID:TID still holds NAME. KEYS[1] NAME  ARGV[1] lease ms  ARGV[2] UUID:TID
RENEW = """
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then return 0 end
redis.call('pexpire', KEYS[1], ARGV[1])
return 1
"""

UNLOCK_MESSAGE = b"0"		# LockPubSub.UNLOCK_MESSAGE
READ_UNLOCK_MESSAGE = b"1"	# LockPubSub.READ_UNLOCK_MESSAGE (wakes all)
# (timeout 3000 + retryInterval 1500) * retryAttempts 3, Redisson's defaults
LATCH_MS = 13500


class Fail(Exception):
    """An error that ends the program with status 2."""


class RedisError(Exception):
    pass


def say(word, t=None):
    print(word if t is None else "%s %.6f" % (word, t), flush=True)


def hashtagged(prefix, name):
    """RedissonObject.prefixName: keep NAME's hash tag, or make it one."""
    if "{" in name:
        return prefix + ":" + name
    return prefix + ":{" + name + "}"


def encode(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, int):
            a = str(a)
        if isinstance(a, str):
            a = a.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Incomplete(Exception):
    pass


def parse(buf, pos):
    """One RESP2 reply at buf[pos:]: (value, next pos); Incomplete if cut."""
    end = buf.find(b"\r\n", pos)
    if end < 0:
        raise Incomplete()
    kind, line = buf[pos:pos + 1], buf[pos + 1:end]
    pos = end + 2
    if kind == b"+":
        return line.decode(), pos
    if kind == b"-":
        return RedisError(line.decode()), pos
    if kind == b":":
        return int(line), pos
    if kind == b"$":
        n = int(line)
        if n < 0:
            return None, pos
        if len(buf) < pos + n + 2:
            raise Incomplete()
        return buf[pos:pos + n], pos + n + 2
    if kind == b"*":
        n = int(line)
        if n < 0:
            return None, pos
        items = []
        for _ in range(n):
            v, pos = parse(buf, pos)
            items.append(v)
        return items, pos
    raise Fail("unexpected reply from the server: %r" % (kind + line))


class Conn:
    def __init__(self, host, port):
        try:
            self.sock = socket.create_connection((host, port), timeout=10)
        except OSError as e:
            raise Fail("cannot connect to %s:%d: %s" % (host, port, e))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.settimeout(None)
        self.buf = b""

    def send(self, *args):
        self.sock.sendall(encode(args))

    def read(self, timeout=None):
        """The next reply or push; None if TIMEOUT seconds pass first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                v, pos = parse(self.buf, 0)
                self.buf = self.buf[pos:]
                return v
            except Incomplete:
                pass
            left = None
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
            if not select.select([self.sock], [], [], left)[0]:
                return None
            chunk = self.sock.recv(65536)
            if not chunk:
                raise Fail("the server closed the connection")
            self.buf += chunk

    def call(self, *args):
        self.send(*args)
        v = self.read()
        if isinstance(v, RedisError):
            raise v
        return v

    def close(self):
        self.sock.close()


def expect_ok(v, what):
    if isinstance(v, RedisError):
        if str(v).startswith("MOVED"):
            raise Fail("%s: %s (give the port of the master that owns the slot)" % (what, v))
        raise Fail("%s: %s" % (what, v))


class Lock:
    def __init__(self, opts):
        self.opts = opts
        self.name = opts.name
        self.field = opts.id or "%s:1" % uuid.uuid4()
        self.channel = hashtagged("redisson_lock__channel", self.name)
        self.sub_cmd = "SSUBSCRIBE" if opts.sharded else "SUBSCRIBE"
        self.pub_cmd = "SPUBLISH" if opts.sharded else "PUBLISH"
        self.conn = Conn(opts.host, opts.port)
        # internalLockLeaseTime: the lease given, else the watchdog's
        self.lease = getattr(opts, "lease", None) or getattr(opts, "watchdog", 30000)

    def eval(self, script, keys, args):
        try:
            return self.conn.call("EVAL", script, len(keys), *keys, *args)
        except RedisError as e:
            expect_ok(e, "EVAL")

    def try_acquire(self):
        """None when acquired, else the lock's PTTL in ms."""
        return self.eval(LOCK, [self.name], [self.lease, self.field])

    def acquire(self, wait):
        """RedissonLock.tryLock(wait, lease) (lock() when WAIT is None)."""
        start = time.monotonic()
        ttl = self.try_acquire()
        if ttl is None:
            return True
        left = None if wait is None else wait - (time.monotonic() - start)
        if left is not None and left <= 0:
            return False
        sub = Conn(self.opts.host, self.opts.port)
        try:
            sub.send(self.sub_cmd, self.channel)
            v = sub.read(left)
            if v is None:
                return False
            expect_ok(v, self.sub_cmd)
            if not (isinstance(v, list) and v[0].lower() == self.sub_cmd.lower().encode()):
                raise Fail("%s answered %r" % (self.sub_cmd, v))
            say("subscribed")
            while True:
                ttl = self.try_acquire()
                if ttl is None:
                    return True
                pause = None
                if wait is not None:
                    pause = wait - (time.monotonic() - start)
                    if pause <= 0:
                        return False
                if ttl >= 0 and (pause is None or ttl / 1000.0 < pause):
                    pause = ttl / 1000.0
                self.await_message(sub, pause)
                if wait is not None and time.monotonic() - start >= wait:
                    return False	# no last attempt, as in tryLock
        finally:
            sub.close()	# unsubscribe, as the finally of tryLock does

    def await_message(self, sub, pause):
        """Until an unlock message comes or PAUSE seconds pass."""
        deadline = None if pause is None else time.monotonic() + pause
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            v = sub.read(left)
            if v is None:
                return
            expect_ok(v, self.sub_cmd)
            if isinstance(v, list) and len(v) == 3 and v[0] in (b"message", b"smessage"):
                if v[2] in (UNLOCK_MESSAGE, READ_UNLOCK_MESSAGE):
                    say("woken", time.monotonic())
                    return
                print("redisson.py: ignored message %r on %s" % (v[2], self.channel),
                      file=sys.stderr, flush=True)
            elif isinstance(v, list) and v and v[0] in (b"sunsubscribe", b"unsubscribe"):
                # the server dropped a sharded subscription (slot moved away)
                raise Fail("%s: the server ended the subscription: %r" % (self.sub_cmd, v))

    def hold(self, seconds):
        """Keep the lock SECONDS, renewing as the watchdog does without --lease."""
        end = time.monotonic() + seconds
        every = self.lease / 3000.0
        watchdog = getattr(self.opts, "lease", None) is None
        next_renewal = time.monotonic() + every
        while True:
            now = time.monotonic()
            if now >= end:
                return
            if watchdog and now >= next_renewal:
                if self.eval(RENEW, [self.name], [self.lease, self.field]) != 1:
                    return	# gone: the watchdog stops; unlock will say so
                say("renewed", time.monotonic())
                next_renewal += every
                continue
            until = min(end, next_renewal) if watchdog else end
            time.sleep(max(0.0, until - now))

    def release(self):
        """RedissonBaseLock.unlockAsync: the script, then the latch deleted."""
        latch = hashtagged("redisson_unlock_latch", self.name) + ":" + secrets.token_hex(16)
        r = self.eval(UNLOCK, [self.name, self.channel, latch],
                      [UNLOCK_MESSAGE, self.lease, self.field, self.pub_cmd, LATCH_MS])
        t = time.monotonic()
        try:
            self.conn.call("DEL", latch)
        except RedisError as e:
            expect_ok(e, "DEL")
        if r is None:
            say("lost", t)
            print("redisson.py: %s is not held by %s" % (self.name, self.field),
                  file=sys.stderr, flush=True)
            return 3
        say("released" if r == 1 else "decremented", t)
        return 0


def main():
    p = argparse.ArgumentParser(prog="redisson.py")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--sharded", action="store_true")
    p.add_argument("--id")
    sp = p.add_subparsers(dest="cmd", required=True)
    lk = sp.add_parser("lock")
    lk.add_argument("name")
    lk.add_argument("--wait", type=float)
    lk.add_argument("--lease", type=int)
    lk.add_argument("--hold", type=float, default=0.0)
    lk.add_argument("--watchdog", type=int, default=30000)
    lk.add_argument("--id", default=argparse.SUPPRESS)
    ul = sp.add_parser("unlock")
    ul.add_argument("name")
    ul.add_argument("--id", default=argparse.SUPPRESS)
    opts = p.parse_args()
    if opts.cmd == "unlock" and not opts.id:
        p.error("unlock needs --id UUID:TID")
    if opts.id is not None and ":" not in opts.id:
        p.error("--id is UUID:TID")
    lock = Lock(opts)
    if opts.cmd == "unlock":
        return lock.release()
    if not lock.acquire(opts.wait):
        return 1
    say("acquired", time.monotonic())
    lock.hold(opts.hold)
    return lock.release()


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Fail as e:
        print("redisson.py: %s" % e, file=sys.stderr, flush=True)
        sys.exit(2)
    except (OSError, RedisError) as e:
        print("redisson.py: %s" % e, file=sys.stderr, flush=True)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(2)
