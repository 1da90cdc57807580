#!/usr/bin/env python3
"""redisson.py: a Redisson RLock or RFairLock client on the wire, for tests.

usage:
  redisson.py --port P [--host H] [--sharded] [--id UUID:TID] [--fair]
              [--fair-wait MS] [--skew MS] [--label L]
              lock NAME [--wait SECONDS] [--lease MS] [--hold SECONDS]
              [--watchdog MS] [--keep]
  redisson.py --port P [--host H] [--sharded] [--fair] [--skew MS]
              [--label L] unlock NAME --id UUID:TID
  (--id, --fair, --fair-wait, --skew and --label also after the command)

Speaks to one server the way Redisson's RedissonLock (or, with --fair,
RedissonFairLock) does (RESP2 over a raw socket, standard library only),
so that tests can show that redlock and Java services using Redisson
exclude, queue behind and wake each other:

  lock hash      NAME: field UUID:TID -> hold count, PEXPIRE = lease
  channel        redisson_lock__channel:{NAME} (NAME itself when it has a
                 "{": the hash tag is kept), message "0" on a release
  unlock latch   redisson_unlock_latch:{NAME}:REQUEST, kept for the
                 length of Redisson's retries and deleted after the release
  --fair only:
  queue          redisson_lock_queue:{NAME}, list of UUID:TID, head first
  timeouts       redisson_lock_timeout:{NAME}, zset UUID:TID -> deadline
                 in ms on the clock of the client that wrote it
  own channel    redisson_lock__channel:{NAME}:UUID:TID, where a fair
                 release wakes the head of the queue, and only there

lock: tries the lock; while it is busy, subscribes on a second connection
(SUBSCRIBE, or SSUBSCRIBE with --sharded) and tries again on each message
("message" or "smessage" push) or when the TTL the attempt returned has
run out, as RedissonLock.tryLock does; waits for ever without --wait, and
makes no last attempt when --wait runs out (neither does tryLock). Only
messages "0" (unlock) and "1" (read unlock) wake it, as in LockPubSub;
others are reported on stderr. Once acquired, holds it for --hold seconds
(default 0), then releases one hold, publishing "0" with PUBLISH (SPUBLISH
with --sharded) if it was the last. Without --lease the lease is the
watchdog's, --watchdog ms (Redisson's lockWatchdogTimeout, default 30000),
renewed every third of it while held; with --lease there is no renewal.
--keep: exit once acquired, still holding (no watchdog, no release; give
--lease, and release later with unlock).
--id is the hash field (default: a fresh UUID, thread 1); the same --id in
two processes is one Redisson thread re-entering.

--fair: RedissonFairLock. The attempt first drops dead waiters from the
head of the queue (a deadline at or before the client's clock); takes a
free lock if the queue is empty or this thread is its head, and then
lowers every queued deadline by the wait time; re-enters a hold; else
answers the lock's PTTL (at least 0: behind a live head of a free lock it
tries again at once, and again, as current Redisson does) if already
queued, or joins the tail with the deadline (the last waiter's deadline,
else now + the lock's PTTL) + the wait time, and answers the time to the
last waiter's deadline (else the PTTL). The wait time is --fair-wait ms
(Redisson's fairLockWaitTimeout, threadWaitTime: default 300000), or
--wait when given, as tryLock(waitTime, ...) passes it. The client
subscribes to its own channel, not the lock's. When --wait runs out it
leaves the queue as acquireFailedAsync does: every waiter behind it has
its deadline lowered by the wait time, and nobody is woken. A release
drops dead heads, then publishes "0" on the channel of the head of the
queue only (none: nothing is published); releasing a lock that is gone
counts as released, as in Redisson.
--skew MS: the client's clock runs MS ahead (negative: behind); it is the
"current time" the fair scripts are given (Redisson passes the JVM's
System.currentTimeMillis(), never the server's TIME).

unlock: releases one hold of NAME by --id, publishing as a release does.

The connection is to a single server: on a cluster, the port of the master
that owns NAME's slot. A MOVED (or any other error) reply ends the program.

--sharded stands for a Redisson whose subscribe service found sharded
pub/sub: Redisson decides that once, on a Redis Cluster only (config
shardedSubscriptionMode AUTO by default: PUBSUB SHARDNUMSUB answers, i.e.
Redis 7 or later), and then subscribes with SSUBSCRIBE and passes SPUBLISH
to its release scripts; on a single server or Sentinel it always uses
SUBSCRIBE and PUBLISH.

Prints, flushed, one line per event, times from time.monotonic(). With
--label L each line is "EVENT L" or "EVENT L T", T from the wall clock
(seconds since the epoch), so that several clients writing to one file,
and other programs, can be told apart and their times compared:
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

# RedissonFairLock. Deadlines in the timeout zset are on the clock of the
# client that wrote them: each script below is given the caller's clock.
# The dead heads of the queue go first (a deadline at or before the clock;
# an entry without one stays), nothing else is looked at.
DROP_DEAD_HEADS = """
while true do
  local head = redis.call('lindex', KEYS[2], 0)
  if not head then break end
  local deadline = redis.call('zscore', KEYS[3], head)
  if not deadline or tonumber(deadline) > tonumber(%s) then break end
  redis.call('zrem', KEYS[3], head)
  redis.call('lpop', KEYS[2])
end
"""

# tryLockInnerAsync (EVAL_LONG): after the dead heads, take a free lock if
# nobody queues or this thread is the head, and then lower every queued
# deadline by the wait time; or re-enter. Otherwise a queued thread is
# answered the lock's PTTL (0 when it is free or has none); a new one joins
# the tail with the deadline (the last waiter's, or now + the lock's PTTL)
# + the wait time, and is answered the time to the last waiter's deadline
# (or the PTTL).
# KEYS[1] NAME  KEYS[2] queue  KEYS[3] timeouts
# ARGV[1] lease ms  ARGV[2] UUID:TID  ARGV[3] wait ms  ARGV[4] client's clock ms
FAIR_LOCK = DROP_DEAD_HEADS % "ARGV[4]" + """
local now, wait = tonumber(ARGV[4]), tonumber(ARGV[3])
if redis.call('exists', KEYS[1]) == 0 and
    (redis.call('exists', KEYS[2]) == 0 or
     redis.call('lindex', KEYS[2], 0) == ARGV[2]) then
  redis.call('lpop', KEYS[2])
  redis.call('zrem', KEYS[3], ARGV[2])
  for _, waiter in ipairs(redis.call('zrange', KEYS[3], 0, -1)) do
    redis.call('zincrby', KEYS[3], -wait, waiter)
  end
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return false
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return false
end
if redis.call('zscore', KEYS[3], ARGV[2]) then
  return math.max(0, redis.call('pttl', KEYS[1]))
end
local last = redis.call('lindex', KEYS[2], -1)
local last_deadline = last and last ~= ARGV[2] and
    redis.call('zscore', KEYS[3], last)
local ttl
if last_deadline then
  ttl = tonumber(last_deadline) - now
else
  ttl = redis.call('pttl', KEYS[1])
end
if redis.call('zadd', KEYS[3], ttl + wait + now, ARGV[2]) == 1 then
  redis.call('rpush', KEYS[2], ARGV[2])
end
return ttl
"""

# acquireFailedAsync: the wait ran out. Every waiter behind UUID:TID has
# its deadline lowered by the wait time, then UUID:TID leaves the list and
# the zset. Nobody is woken, even when it was the head of a free lock.
# KEYS[1] queue  KEYS[2] timeouts  ARGV[1] UUID:TID  ARGV[2] wait ms
FAIR_GIVE_UP = """
local behind = false
for _, waiter in ipairs(redis.call('lrange', KEYS[1], 0, -1)) do
  if behind then
    redis.call('zincrby', KEYS[2], -tonumber(ARGV[2]), waiter)
  elseif waiter == ARGV[1] then
    behind = true
  end
end
redis.call('zrem', KEYS[2], ARGV[1])
redis.call('lrem', KEYS[1], 0, ARGV[1])
"""

# unlockInnerAsync of the fair lock: the latch as in UNLOCK; the dead heads
# go first; a lock that is gone counts as released and wakes the head;
# otherwise one hold of UUID:TID is given back, and the last one deletes
# NAME and wakes the head of the queue on its own channel, CHANNEL:HEAD.
# Nothing is published on the lock's channel.
# KEYS[1] NAME  KEYS[2] queue  KEYS[3] timeouts  KEYS[4] channel
# KEYS[5] unlock latch
# ARGV[1] message "0"  ARGV[2] lease ms  ARGV[3] UUID:TID
# ARGV[4] client's clock ms  ARGV[5] PUBLISH or SPUBLISH
# ARGV[6] latch lifetime ms
# Returns 1 released (or gone), 0 holds remain, nil held by another.
FAIR_UNLOCK = """
local seen = redis.call('get', KEYS[5])
if seen then return tonumber(seen) end
""" + DROP_DEAD_HEADS % "ARGV[4]" + """
local function wake_head()
  local head = redis.call('lindex', KEYS[2], 0)
  if head then redis.call(ARGV[5], KEYS[4] .. ':' .. head, ARGV[1]) end
end
if redis.call('exists', KEYS[1]) == 0 then
  wake_head()
  redis.call('set', KEYS[5], 1, 'px', ARGV[6])
  return 1
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then return false end
if redis.call('hincrby', KEYS[1], ARGV[3], -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  redis.call('set', KEYS[5], 0, 'px', ARGV[6])
  return 0
end
redis.call('del', KEYS[1])
redis.call('set', KEYS[5], 1, 'px', ARGV[6])
wake_head()
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


LABEL = None	# --label


def stamp():
    """The time of an event: monotonic, or the wall clock with --label."""
    return time.monotonic() if LABEL is None else time.time()


def say(word, t=None):
    if LABEL is not None:
        word += " " + LABEL
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
        self.fair = opts.fair
        self.channel = hashtagged("redisson_lock__channel", self.name)
        if self.fair:
            self.queue = hashtagged("redisson_lock_queue", self.name)
            self.timeouts = hashtagged("redisson_lock_timeout", self.name)
            # RedissonFairLock.subscribe: the thread's own channel
            self.listen = self.channel + ":" + self.field
        else:
            self.listen = self.channel
        self.sub_cmd = "SSUBSCRIBE" if opts.sharded else "SUBSCRIBE"
        self.pub_cmd = "SPUBLISH" if opts.sharded else "PUBLISH"
        self.conn = Conn(opts.host, opts.port)
        # internalLockLeaseTime: the lease given, else the watchdog's
        self.lease = getattr(opts, "lease", None) or getattr(opts, "watchdog", 30000)
        # threadWaitTime, replaced by tryLock's wait time when there is one
        wait = getattr(opts, "wait", None)
        self.fair_wait = int(wait * 1000) if wait and wait > 0 else opts.fair_wait

    def now_ms(self):
        """System.currentTimeMillis() of a client whose clock is --skew off."""
        return int(time.time() * 1000) + self.opts.skew

    def eval(self, script, keys, args):
        try:
            return self.conn.call("EVAL", script, len(keys), *keys, *args)
        except RedisError as e:
            expect_ok(e, "EVAL")

    def try_acquire(self):
        """None when acquired, else the TTL in ms to wait for at most."""
        if self.fair:
            return self.eval(FAIR_LOCK, [self.name, self.queue, self.timeouts],
                             [self.lease, self.field, self.fair_wait, self.now_ms()])
        return self.eval(LOCK, [self.name], [self.lease, self.field])

    def acquire_failed(self):
        """acquireFailedAsync: RFairLock leaves the queue; RLock has nothing to do."""
        if self.fair:
            self.eval(FAIR_GIVE_UP, [self.queue, self.timeouts],
                      [self.field, self.fair_wait])

    def acquire(self, wait):
        """RedissonLock.tryLock(wait, lease) (lock() when WAIT is None)."""
        if not self.wait_for_lock(wait):
            self.acquire_failed()
            return False
        return True

    def wait_for_lock(self, wait):
        start = time.monotonic()
        ttl = self.try_acquire()
        if ttl is None:
            return True
        left = None if wait is None else wait - (time.monotonic() - start)
        if left is not None and left <= 0:
            return False
        sub = Conn(self.opts.host, self.opts.port)
        try:
            sub.send(self.sub_cmd, self.listen)
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
                    say("woken", stamp())
                    return
                print("redisson.py: ignored message %r on %s" % (v[2], self.listen),
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
                say("renewed", stamp())
                next_renewal += every
                continue
            until = min(end, next_renewal) if watchdog else end
            time.sleep(max(0.0, until - now))

    def release(self):
        """RedissonBaseLock.unlockAsync: the script, then the latch deleted."""
        latch = hashtagged("redisson_unlock_latch", self.name) + ":" + secrets.token_hex(16)
        if self.fair:
            r = self.eval(FAIR_UNLOCK,
                          [self.name, self.queue, self.timeouts, self.channel, latch],
                          [UNLOCK_MESSAGE, self.lease, self.field, self.now_ms(),
                           self.pub_cmd, LATCH_MS])
        else:
            r = self.eval(UNLOCK, [self.name, self.channel, latch],
                          [UNLOCK_MESSAGE, self.lease, self.field, self.pub_cmd, LATCH_MS])
        t = stamp()
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
    p.add_argument("--fair", action="store_true")
    p.add_argument("--fair-wait", type=int, default=300000)
    p.add_argument("--skew", type=int, default=0)
    p.add_argument("--label")
    sp = p.add_subparsers(dest="cmd", required=True)
    lk = sp.add_parser("lock")
    lk.add_argument("name")
    lk.add_argument("--wait", type=float)
    lk.add_argument("--lease", type=int)
    lk.add_argument("--hold", type=float, default=0.0)
    lk.add_argument("--watchdog", type=int, default=30000)
    lk.add_argument("--keep", action="store_true")
    ul = sp.add_parser("unlock")
    ul.add_argument("name")
    for sub in (lk, ul):
        # also after the command, as --id always was
        sub.add_argument("--id", default=argparse.SUPPRESS)
        sub.add_argument("--fair", action="store_true", default=argparse.SUPPRESS)
        sub.add_argument("--fair-wait", type=int, default=argparse.SUPPRESS)
        sub.add_argument("--skew", type=int, default=argparse.SUPPRESS)
        sub.add_argument("--label", default=argparse.SUPPRESS)
    opts = p.parse_args()
    if opts.cmd == "unlock" and not opts.id:
        p.error("unlock needs --id UUID:TID")
    if opts.id is not None and ":" not in opts.id:
        p.error("--id is UUID:TID")
    if opts.fair_wait <= 0:
        p.error("--fair-wait is a number of milliseconds above 0")
    if opts.cmd == "lock" and opts.keep and opts.lease is None:
        p.error("--keep needs --lease (nothing renews a kept lock)")
    global LABEL
    LABEL = opts.label
    lock = Lock(opts)
    if opts.cmd == "unlock":
        return lock.release()
    if not lock.acquire(opts.wait):
        return 1
    say("acquired", stamp())
    if opts.keep:
        return 0
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
