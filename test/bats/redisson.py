#!/usr/bin/env python3
"""redisson.py: a Redisson client on the wire, for tests: RLock, RFairLock,
RReadWriteLock and RPermitExpirableSemaphore.

usage:
  redisson.py --port P [--host H] [--sharded] [--id UUID:TID] [--fair]
              [--fair-wait MS] [--skew MS] [--label L]
              lock NAME [--wait SECONDS] [--lease MS] [--hold SECONDS]
              [--watchdog MS] [--keep]
  redisson.py --port P [--host H] [--sharded] [--fair] [--skew MS]
              [--label L] unlock NAME --id UUID:TID
  redisson.py --port P [--host H] [--sharded] [--skew MS] [--label L]
              rwlock NAME read|write [--wait SECONDS] [--lease MS]
              [--hold SECONDS] [--watchdog MS] [--keep] [--id UUID:TID]
  redisson.py --port P [--host H] [--sharded] [--skew MS] [--label L]
              rwlock NAME unlock-read|unlock-write --id UUID:TID
              [--lease MS | --watchdog MS]
  redisson.py --port P [--host H] [--sharded] [--skew MS] [--label L]
              semaphore NAME set-permits N [--try]
              semaphore NAME acquire [--lease MS] [--wait SECONDS]
                                     [--hold SECONDS] [--keep]
              semaphore NAME release PERMIT_ID
              semaphore NAME update-lease PERMIT_ID MS
              semaphore NAME available
  (--id, --fair, --fair-wait, --skew and --label also after the command;
  --skew and --label also after rwlock, semaphore and its action)

Speaks to one server the way Redisson's RedissonLock (or, with --fair,
RedissonFairLock; or rwlock, RedissonReadLock and RedissonWriteLock; or
semaphore, RedissonPermitExpirableSemaphore) does (RESP2 over a raw socket,
standard library only), so that tests can show that redlock and Java
services using Redisson exclude, queue behind and wake each other:

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

rwlock: the read lock (read) or the write lock (write) of the
RReadWriteLock NAME, through RedissonLock's tryLock, watchdog and unlock,
as "lock" (the same options, waits, events and exit status):
  lock hash      NAME: field "mode" -> "read" or "write"; a reader's
                 UUID:TID -> its read holds; the writer's UUID:TID:write ->
                 its write holds; PEXPIRE = the lock's lease: a read
                 only lengthens it, a read release sets it to the longest
                 read lease left
  read leases    {NAME}:UUID:TID:rwlock_timeout:N (NAME:... when NAME has a
                 "{"), one string per read hold N of UUID:TID, PEXPIRE =
                 that hold's lease
  channel        redisson_rwlock:{NAME}: the last read release publishes
                 "0" (UNLOCK_MESSAGE), the last write release "1"
                 (READ_UNLOCK_MESSAGE); both wake a waiter, as LockPubSub
                 does; a write release that leaves this thread's own read
                 holds turns the lock to read mode and publishes nothing
  unlock latch   redisson_unlock_latch:{NAME}:REQUEST, as for lock
A read is granted when NAME is free, in read mode, or in write mode by
the thread's own write (--id UUID:TID); a write when NAME is free, or
again to the writer (adding the lease to what is left). Without --lease
the watchdog renews every third of --watchdog ms as Redisson's renewal
tasks do: a read hold's lease keys (all of this thread's) and then NAME
while the thread has a read field (ReadLockTask); NAME while the writer's
field is there (LockTask). unlock-read and unlock-write give back one hold
of --id; a write release with holds left sets the lease to --lease (else
--watchdog) ms, as Redisson's internalLockLeaseTime. Releasing a lock that
is gone publishes all the same: "0" and "lost" for a read (as the current
RedissonReadLock answers), "1" and "released" for a write.

semaphore: RPermitExpirableSemaphore NAME.
  count          NAME: string, the free permits
  permits        {NAME}:timeout (NAME:timeout when NAME has a "{"): zset of
                 the permits taken, each 16 random bytes (Redisson shows
                 them, and this program takes and prints them, as 32 hex
                 digits) -> expiry in ms on the clock of the client that
                 took it (System.currentTimeMillis() + lease; 922337203685477
                 without --lease: it never expires)
  channel        redisson_sc:{NAME}: the free count after every change that
                 gives permits back (also the total after set-permits)
set-permits N: setPermits, which makes the total (free + taken) N by
changing the free count; with --try, trySetPermits, which sets N only if
NAME has no count yet (exit 1 and "kept FREE" otherwise). Prints "set N".
acquire: tryAcquire(wait, lease) of one permit (acquire(lease) without
--wait). Each attempt first gives back one expired permit (expiry at or
before the client's clock) and publishes the free count; takes a permit if
one is free, its lease starting then (and the zset takes NAME's TTL if NAME
has one); else is answered the earliest expiry in the zset (unless it is
the no-expiry score). While it fails, it subscribes (SUBSCRIBE, or
SSUBSCRIBE with --sharded) and tries again on each message whose count is
at least 1 (SemaphorePubSub releases min(threads waiting in the client,
count) permits of its latch; here one thread waits) or when that earliest expiry comes by its own clock; no last
attempt when --wait runs out. Holding a permit, it prints
"acquired PERMIT_ID T" ("acquired PERMIT_ID L T" with --label), keeps it
--hold seconds and releases it; --keep: exits holding it (no lease needed:
Redisson renews no permit). Nothing renews a permit here; update-lease is
updateLeaseTime (MS < 0: no expiry): every expired permit goes back first,
then PERMIT_ID, if still there, expires MS from the client's clock.
release: tryRelease of PERMIT_ID: the permit leaves the zset, one permit
goes back and the free count is published; "lost" (exit 3, as Redisson's
release throws) when it was not there, or had expired by the client's
clock (given back all the same). available: availablePermits, which gives
back every expired permit first (publishing the count), then prints the
free count.
--skew MS moves the client's clock for the semaphore too: permits expire,
and are given back, by the clocks of the clients that take and look.

Prints, flushed, one line per event, times from time.monotonic(). With
--label L each line is "EVENT L" or "EVENT L T", T from the wall clock
(seconds since the epoch), so that several clients writing to one file,
and other programs, can be told apart and their times compared (each line
is one write, whole):
  subscribed                 the lock was busy; the subscription is confirmed
  woken T                    an unlock message came on the channel
  acquired T
  acquired PERMIT_ID T       (semaphore) holding the permit PERMIT_ID
  renewed T                  the watchdog extended the lease
  released T                 the last hold was given back (and published);
                             a permit was given back
  decremented T              one hold given back, others remain (a read
                             release: this thread's or other readers')
  updated T                  (semaphore update-lease) the new lease is set
  lost T                     the lock was not held by --id when given back;
                             the permit was gone or had expired
Exit status: 0 done; 1 --wait ran out (set-permits --try: a count was
there); 2 error (refused connection, error reply such as MOVED or
WRONGTYPE, Redis without SSUBSCRIBE); 3 lost (not held by --id; permit
gone).

The scripts follow Redisson's own (master as stored in 2024-2026:
RedissonReadLock with the renewal scheduler, RedissonWriteLock with the
unlock latch, renewal.LockTask and renewal.ReadLockTask, and
RedissonPermitExpirableSemaphore taking several ids per call), written
anew with the same KEYS and ARGV.
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

# RLock's renewal as the watchdog's batch (LockTask) sends it, also for
# a write hold: each lock KEYS[i] still held by field ARGV[i + 1] has its
# lease set again to ARGV[1] ms. Returns 1 (lengthened) or 0 per lock.
LOCK_RENEW = """
local out = {}
for i = 1, #KEYS do
  if redis.call('hexists', KEYS[i], ARGV[i + 1]) == 1 then
    redis.call('pexpire', KEYS[i], ARGV[1])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
"""

# RReadWriteLock NAME: one hash for both locks. 'mode' is 'read' or
# 'write'; a reader's field UUID:TID counts its read holds, the writer's
# UUID:TID:write its write holds. Each read hold N of UUID:TID has a lease
# of its own in the string {NAME}:UUID:TID:rwlock_timeout:N, and NAME
# lives as long as the longest of them (or the writer's lease).

# RedissonReadLock.tryLockInnerAsync: a free lock becomes read mode with
# this hold; in read mode, or in write mode held by this thread's own
# write hold, one more read hold. Each hold gets its lease key; NAME's
# lease only grows. Otherwise the PTTL of NAME.
# KEYS[1] NAME  KEYS[2] {NAME}:UUID:TID:rwlock_timeout
# ARGV[1] lease ms  ARGV[2] UUID:TID  ARGV[3] UUID:TID:write
READ_LOCK = """
local mode = redis.call('hget', KEYS[1], 'mode')
if not mode then
  redis.call('hset', KEYS[1], 'mode', 'read', ARGV[2], 1)
  redis.call('set', KEYS[2] .. ':1', 1, 'px', ARGV[1])
  redis.call('pexpire', KEYS[1], ARGV[1])
  return false
end
if mode == 'read' or
    (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then
  local n = redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('set', KEYS[2] .. ':' .. n, 1, 'px', ARGV[1])
  local left = redis.call('pttl', KEYS[1])
  redis.call('pexpire', KEYS[1], math.max(left, tonumber(ARGV[1])))
  return false
end
return redis.call('pttl', KEYS[1])
"""

# RedissonReadLock.unlockInnerAsync: the latch as in UNLOCK. A lock that
# is gone wakes the waiters all the same and answers nil (not held). The
# last read hold of UUID:TID drops its field; hold N drops its lease key.
# While other fields remain, NAME keeps the longest lease left of every
# read hold (answer 0), or, none left, stays as it is in write mode
# (answer 0); otherwise NAME goes, and "0" is published (answer 1).
# KEYS[1] NAME  KEYS[2] channel  KEYS[3] {NAME}:UUID:TID:rwlock_timeout
# KEYS[4] {NAME}  KEYS[5] unlock latch
# ARGV[1] message "0"  ARGV[2] UUID:TID  ARGV[3] PUBLISH or SPUBLISH
# ARGV[4] latch lifetime ms
READ_UNLOCK = """
local seen = redis.call('get', KEYS[5])
if seen then return tonumber(seen) end
local mode = redis.call('hget', KEYS[1], 'mode')
if not mode then
  redis.call(ARGV[3], KEYS[2], ARGV[1])
  redis.call('set', KEYS[5], 1, 'px', ARGV[4])
  return false
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then return false end
local left = redis.call('hincrby', KEYS[1], ARGV[2], -1)
if left == 0 then redis.call('hdel', KEYS[1], ARGV[2]) end
redis.call('del', KEYS[3] .. ':' .. (left + 1))
if redis.call('hlen', KEYS[1]) > 1 then
  local longest = -3
  for _, field in ipairs(redis.call('hkeys', KEYS[1])) do
    local holds = tonumber(redis.call('hget', KEYS[1], field))
    if holds then
      for i = holds, 1, -1 do
        longest = math.max(longest, redis.call('pttl',
            KEYS[4] .. ':' .. field .. ':rwlock_timeout:' .. i))
      end
    end
  end
  if longest > 0 or mode == 'write' then
    if longest > 0 then redis.call('pexpire', KEYS[1], longest) end
    redis.call('set', KEYS[5], 0, 'px', ARGV[4])
    return 0
  end
end
redis.call('del', KEYS[1])
redis.call(ARGV[3], KEYS[2], ARGV[1])
redis.call('set', KEYS[5], 1, 'px', ARGV[4])
return 1
"""

# The read holds' renewal as the watchdog's batch (ReadLockTask) sends
# it: for each lock KEYS[i] (KEYS[i + 1] its {NAME}), ARGV gives how many
# of this client's threads follow, then their UUID:TID; each thread still
# holding has the lease keys of its read holds set again to ARGV[1] ms,
# and then NAME too. Returns 1 (lengthened) or 0 per lock.
READ_RENEW = """
local out, a = {}, 2
for i = 1, #KEYS, 2 do
  local alive = false
  local threads = tonumber(ARGV[a])
  a = a + 1
  for _ = 1, threads do
    local holds = redis.call('hget', KEYS[i], ARGV[a])
    if holds then
      alive = true
      for n = tonumber(holds), 1, -1 do
        redis.call('pexpire',
            KEYS[i + 1] .. ':' .. ARGV[a] .. ':rwlock_timeout:' .. n, ARGV[1])
      end
    end
    a = a + 1
  end
  if alive then redis.call('pexpire', KEYS[i], ARGV[1]) end
  out[#out + 1] = alive and 1 or 0
end
return out
"""

# RedissonWriteLock.tryLockInnerAsync: a free lock becomes write mode
# held by UUID:TID:write; its own write re-enters and adds the lease to
# what is left. Otherwise the PTTL of NAME.
# KEYS[1] NAME  ARGV[1] lease ms  ARGV[2] UUID:TID:write
WRITE_LOCK = """
local mode = redis.call('hget', KEYS[1], 'mode')
if not mode then
  redis.call('hset', KEYS[1], 'mode', 'write', ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return false
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], redis.call('pttl', KEYS[1]) + ARGV[1])
  return false
end
return redis.call('pttl', KEYS[1])
"""

# RedissonWriteLock.unlockInnerAsync: the latch as in UNLOCK. A lock that
# is gone wakes the waiters and counts as released. In write mode, one
# write hold of UUID:TID:write given back: others remain (lease set to
# ARGV[2], answer 0); the last one goes, and then either nothing else is
# left (NAME goes, "1" is published: all wake) or this thread's own read
# holds are (read mode, nobody is told); answer 1. Read mode, or another
# writer: nil.
# KEYS[1] NAME  KEYS[2] channel  KEYS[3] unlock latch
# ARGV[1] message "1"  ARGV[2] lease ms  ARGV[3] UUID:TID:write
# ARGV[4] PUBLISH or SPUBLISH  ARGV[5] latch lifetime ms
WRITE_UNLOCK = """
local seen = redis.call('get', KEYS[3])
if seen then return tonumber(seen) end
local mode = redis.call('hget', KEYS[1], 'mode')
if not mode then
  redis.call(ARGV[4], KEYS[2], ARGV[1])
  redis.call('set', KEYS[3], 1, 'px', ARGV[5])
  return 1
end
if mode ~= 'write' or redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return false
end
if redis.call('hincrby', KEYS[1], ARGV[3], -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  redis.call('set', KEYS[3], 0, 'px', ARGV[5])
  return 0
end
redis.call('hdel', KEYS[1], ARGV[3])
if redis.call('hlen', KEYS[1]) == 1 then
  redis.call('del', KEYS[1])
  redis.call(ARGV[4], KEYS[2], ARGV[1])
else
  redis.call('hset', KEYS[1], 'mode', 'read')
end
redis.call('set', KEYS[3], 1, 'px', ARGV[5])
return 1
"""

# RPermitExpirableSemaphore NAME: the string NAME counts the free permits;
# the zset {NAME}:timeout maps each permit taken (16 random bytes, shown
# by Redisson in hex) to its expiry in ms on the clock of the client that
# took it (922337203685477: none). Whoever comes next with a later clock
# gives expired permits back to NAME and announces the new count.
NO_EXPIRY = 922337203685477

# Expired permits (score at or before the caller's clock ARGV[N]), at most
# LIMIT of them, go back to NAME; if that leaves some free, the count is
# published on the channel.
RECLAIM = """
local expired = redis.call('zrangebyscore', KEYS[%(zset)d], 0, ARGV[%(now)d],
                           'limit', 0, %(limit)s)
if #expired > 0 then
  redis.call('zrem', KEYS[%(zset)d], unpack(expired))
  local free = redis.call('incrby', KEYS[1], #expired)
  if free > 0 then redis.call(ARGV[%(pub)d], KEYS[%(chan)d], free) end
  %(then)s
end
"""

# tryAcquireAsync: after giving back as many expired permits as it wants,
# take ARGV[1] permits if that many are free: each id goes in the zset
# with the expiry ARGV[2], which takes NAME's own TTL if it has one;
# answer 'OK'. Else ':' and the earliest expiry in the zset unless it is
# the no-expiry score ARGV[4]; else nil.
# KEYS[1] NAME  KEYS[2] {NAME}:timeout  KEYS[3] channel
# ARGV[1] permits wanted  ARGV[2] expiry ms  ARGV[3] client's clock ms
# ARGV[4] the no-expiry score  ARGV[5] PUBLISH or SPUBLISH
# ARGV[6...] the permit ids (bytes)
SEM_ACQUIRE = RECLAIM % {"zset": 2, "now": 3, "limit": "ARGV[1]", "pub": 5,
                         "chan": 3, "then": ""} + """
local free = tonumber(redis.call('get', KEYS[1]))
if free and free >= tonumber(ARGV[1]) then
  redis.call('decrby', KEYS[1], ARGV[1])
  for i = 6, #ARGV do redis.call('zadd', KEYS[2], ARGV[2], ARGV[i]) end
  local ttl = redis.call('pttl', KEYS[1])
  if ttl > 0 then redis.call('pexpire', KEYS[2], ttl) end
  return 'OK'
end
local first = redis.call('zrange', KEYS[2], 0, 0, 'withscores')
if first[1] and first[2] ~= ARGV[4] then return ':' .. first[2] end
return false
"""

# tryReleaseAsync (one permit): a permit still in the zset leaves it, and
# ARGV[2] permits go back to NAME, whose new count is published; answer 1,
# or 0 when it had expired by the caller's clock (given back all the
# same) or was not there (nothing done).
# KEYS[1] NAME  KEYS[2] channel  KEYS[3] {NAME}:timeout
# ARGV[1] permit id  ARGV[2] 1  ARGV[3] client's clock ms
# ARGV[4] PUBLISH or SPUBLISH
SEM_RELEASE = """
local expiry = redis.call('zscore', KEYS[3], ARGV[1])
if redis.call('zrem', KEYS[3], ARGV[1]) ~= 1 then return 0 end
local free = redis.call('incrby', KEYS[1], ARGV[2])
redis.call(ARGV[4], KEYS[2], free)
if tonumber(expiry) <= tonumber(ARGV[3]) then return 0 end
return 1
"""

# availablePermitsAsync: every expired permit goes back first; the count
# of free permits (0 when NAME is missing).
# KEYS[1] NAME  KEYS[2] {NAME}:timeout  KEYS[3] channel
# ARGV[1] client's clock ms  ARGV[2] PUBLISH or SPUBLISH
SEM_AVAILABLE = RECLAIM % {"zset": 2, "now": 1, "limit": "-1", "pub": 2,
                           "chan": 3, "then": "return free"} + """
return tonumber(redis.call('get', KEYS[1])) or 0
"""

# trySetPermitsAsync: NAME gets ARGV[1] free permits only if it has no
# count yet (then published; answer 1), else 0.
# KEYS[1] NAME  KEYS[2] channel  ARGV[1] permits  ARGV[2] PUBLISH or SPUBLISH
SEM_TRY_SET = """
if redis.call('get', KEYS[1]) then return 0 end
redis.call('set', KEYS[1], ARGV[1])
redis.call(ARGV[2], KEYS[2], ARGV[1])
return 1
"""

# setPermitsAsync: make the total (free + taken, expired ones included)
# ARGV[1] by changing the free count, and publish the total; nothing when
# it already is.
# KEYS[1] NAME  KEYS[2] channel  KEYS[3] {NAME}:timeout
# ARGV[1] permits  ARGV[2] PUBLISH or SPUBLISH
SEM_SET = """
local free = redis.call('get', KEYS[1])
if not free then
  redis.call('set', KEYS[1], ARGV[1])
  redis.call(ARGV[2], KEYS[2], ARGV[1])
  return
end
local total = redis.call('zcount', KEYS[3], 0, '+inf') + tonumber(free)
if total == tonumber(ARGV[1]) then return end
redis.call('incrby', KEYS[1], tonumber(ARGV[1]) - total)
redis.call(ARGV[2], KEYS[2], ARGV[1])
"""

# updateLeaseTimeAsync: every expired permit goes back first; then a
# permit still held gets the expiry ARGV[2] (answer 1), else 0.
# KEYS[1] NAME  KEYS[2] {NAME}:timeout  KEYS[3] channel
# ARGV[1] permit id  ARGV[2] expiry ms  ARGV[3] client's clock ms
# ARGV[4] PUBLISH or SPUBLISH
SEM_UPDATE_LEASE = RECLAIM % {"zset": 2, "now": 3, "limit": "-1", "pub": 4,
                              "chan": 3, "then": ""} + """
if not redis.call('zscore', KEYS[2], ARGV[1]) then return 0 end
redis.call('zadd', KEYS[2], ARGV[2], ARGV[1])
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
    # one write for the whole line: several clients append to one file
    print((word if t is None else "%s %.6f" % (word, t)) + "\n", end="", flush=True)


def hashtagged(prefix, name):
    """RedissonObject.prefixName: keep NAME's hash tag, or make it one."""
    if "{" in name:
        return prefix + ":" + name
    return prefix + ":{" + name + "}"


def tagged(name, suffix=None):
    """RedissonObject.suffixName: NAME:SUFFIX when NAME has a hash tag, else
    {NAME}:SUFFIX; without SUFFIX, the part before the colon."""
    base = name if "{" in name else "{" + name + "}"
    return base if suffix is None else base + ":" + suffix


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


class Client:
    """What every Redisson object here shares: its connection, the publish
    and subscribe commands its subscribe service chose, the client's clock,
    and the wait of a tryLock or tryAcquire on a channel."""

    def __init__(self, opts):
        self.opts = opts
        self.name = opts.name
        self.sub_cmd = "SSUBSCRIBE" if opts.sharded else "SUBSCRIBE"
        self.pub_cmd = "SPUBLISH" if opts.sharded else "PUBLISH"
        self.conn = Conn(opts.host, opts.port)

    def now_ms(self):
        """System.currentTimeMillis() of a client whose clock is --skew off."""
        return int(time.time() * 1000) + self.opts.skew

    def eval(self, script, keys, args):
        try:
            return self.conn.call("EVAL", script, len(keys), *keys, *args)
        except RedisError as e:
            expect_ok(e, "EVAL")

    def wakes(self, message):
        """Whether MESSAGE on the channel wakes the waiter."""
        raise NotImplementedError

    def wait_loop(self, wait, attempt):
        """Redisson's tryLock/tryAcquire loop: ATTEMPT() answers (result,
        None) once it got what it wanted, else (None, seconds after which
        to try again without a message, or None). Tries; while that fails,
        subscribes to self.listen on a second connection and tries again on
        each message that wakes (self.wakes) or when that time has run out.
        WAIT seconds at most (None: for ever), with no last attempt once it
        ran out. Returns the result, or None."""
        start = time.monotonic()
        got, _ = attempt()
        if got is not None:
            return got
        left = None if wait is None else wait - (time.monotonic() - start)
        if left is not None and left <= 0:
            return None
        sub = Conn(self.opts.host, self.opts.port)
        try:
            sub.send(self.sub_cmd, self.listen)
            v = sub.read(left)
            if v is None:
                return None
            expect_ok(v, self.sub_cmd)
            if not (isinstance(v, list) and v[0].lower() == self.sub_cmd.lower().encode()):
                raise Fail("%s answered %r" % (self.sub_cmd, v))
            say("subscribed")
            while True:
                got, retry = attempt()
                if got is not None:
                    return got
                pause = None
                if wait is not None:
                    pause = wait - (time.monotonic() - start)
                    if pause <= 0:
                        return None
                if retry is not None and (pause is None or retry < pause):
                    pause = retry
                self.await_message(sub, pause)
                if wait is not None and time.monotonic() - start >= wait:
                    return None	# no last attempt, as in tryLock
        finally:
            sub.close()	# unsubscribe, as the finally of tryLock does

    def await_message(self, sub, pause):
        """Until a message that wakes comes or PAUSE seconds pass."""
        deadline = None if pause is None else time.monotonic() + pause
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            v = sub.read(left)
            if v is None:
                return
            expect_ok(v, self.sub_cmd)
            if isinstance(v, list) and len(v) == 3 and v[0] in (b"message", b"smessage"):
                if self.wakes(v[2]):
                    say("woken", stamp())
                    return
                print("redisson.py: ignored message %r on %s" % (v[2], self.listen),
                      file=sys.stderr, flush=True)
            elif isinstance(v, list) and v and v[0] in (b"sunsubscribe", b"unsubscribe"):
                # the server dropped a sharded subscription (slot moved away)
                raise Fail("%s: the server ended the subscription: %r" % (self.sub_cmd, v))

    def del_latch(self, latch):
        """The unlock latch goes once the release script has answered."""
        try:
            self.conn.call("DEL", latch)
        except RedisError as e:
            expect_ok(e, "DEL")

    def unlock_latch(self):
        return hashtagged("redisson_unlock_latch", self.name) + ":" + secrets.token_hex(16)


class Lock(Client):
    def __init__(self, opts):
        super().__init__(opts)
        self.field = opts.id or "%s:1" % uuid.uuid4()
        self.fair = getattr(opts, "fair", False)
        self.channel = hashtagged("redisson_lock__channel", self.name)
        if self.fair:
            self.queue = hashtagged("redisson_lock_queue", self.name)
            self.timeouts = hashtagged("redisson_lock_timeout", self.name)
            # RedissonFairLock.subscribe: the thread's own channel
            self.listen = self.channel + ":" + self.field
        else:
            self.listen = self.channel
        # internalLockLeaseTime: the lease given, else the watchdog's
        self.lease = getattr(opts, "lease", None) or getattr(opts, "watchdog", 30000)
        # threadWaitTime, replaced by tryLock's wait time when there is one
        wait = getattr(opts, "wait", None)
        self.fair_wait = int(wait * 1000) if wait and wait > 0 else opts.fair_wait

    def wakes(self, message):
        # LockPubSub: UNLOCK_MESSAGE wakes one, READ_UNLOCK_MESSAGE all
        return message in (UNLOCK_MESSAGE, READ_UNLOCK_MESSAGE)

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
        def attempt():
            ttl = self.try_acquire()
            if ttl is None:
                return True, None
            return None, (ttl / 1000.0 if ttl >= 0 else None)
        return self.wait_loop(wait, attempt) is not None

    def renew(self):
        """renewExpirationAsync (the watchdog): True while still held."""
        return self.eval(RENEW, [self.name], [self.lease, self.field]) == 1

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
                if not self.renew():
                    return	# gone: the watchdog stops; unlock will say so
                say("renewed", stamp())
                next_renewal += every
                continue
            until = min(end, next_renewal) if watchdog else end
            time.sleep(max(0.0, until - now))

    def unlock_script(self, latch):
        """unlockInnerAsync: 1 released, 0 holds remain, None not held."""
        if self.fair:
            return self.eval(FAIR_UNLOCK,
                             [self.name, self.queue, self.timeouts, self.channel, latch],
                             [UNLOCK_MESSAGE, self.lease, self.field, self.now_ms(),
                              self.pub_cmd, LATCH_MS])
        return self.eval(UNLOCK, [self.name, self.channel, latch],
                         [UNLOCK_MESSAGE, self.lease, self.field, self.pub_cmd, LATCH_MS])

    def release(self):
        """RedissonBaseLock.unlockAsync: the script, then the latch deleted."""
        latch = self.unlock_latch()
        r = self.unlock_script(latch)
        t = stamp()
        self.del_latch(latch)
        if r is None:
            say("lost", t)
            print("redisson.py: %s is not held by %s" % (self.name, self.held_as()),
                  file=sys.stderr, flush=True)
            return 3
        say("released" if r == 1 else "decremented", t)
        return 0

    def held_as(self):
        return self.field


class RWLock(Lock):
    """RReadLock (MODE 'read') or RWriteLock ('write') of RReadWriteLock NAME:
    RedissonLock's tryLock, watchdog and unlock around the scripts of
    RedissonReadLock and RedissonWriteLock."""

    def __init__(self, opts, mode):
        opts.fair = False
        super().__init__(opts)
        self.mode = mode
        # RedissonReadLock/RedissonWriteLock.getChannelName
        self.channel = self.listen = hashtagged("redisson_rwlock", self.name)
        # getReadWriteTimeoutNamePrefix and getKeyPrefix: a read hold N
        # has the lease of PREFIX:UUID:TID:rwlock_timeout:N
        self.key_prefix = tagged(self.name)
        self.timeout_prefix = self.key_prefix + ":" + self.field + ":rwlock_timeout"

    def held_as(self):
        return self.field + (":write" if self.mode == "write" else "")

    def try_acquire(self):
        if self.mode == "read":
            return self.eval(READ_LOCK, [self.name, self.timeout_prefix],
                             [self.lease, self.field, self.field + ":write"])
        return self.eval(WRITE_LOCK, [self.name], [self.lease, self.field + ":write"])

    def acquire_failed(self):
        pass

    def renew(self):
        # the renewal tasks: ReadLockTask for a read hold, LockTask for a write
        if self.mode == "read":
            r = self.eval(READ_RENEW, [self.name, self.key_prefix],
                          [self.lease, 1, self.field])
        else:
            r = self.eval(LOCK_RENEW, [self.name], [self.lease, self.field + ":write"])
        return r == [1]

    def unlock_script(self, latch):
        if self.mode == "read":
            return self.eval(READ_UNLOCK,
                             [self.name, self.channel, self.timeout_prefix,
                              self.key_prefix, latch],
                             [UNLOCK_MESSAGE, self.field, self.pub_cmd, LATCH_MS])
        return self.eval(WRITE_UNLOCK, [self.name, self.channel, latch],
                         [READ_UNLOCK_MESSAGE, self.lease, self.field + ":write",
                          self.pub_cmd, LATCH_MS])


class Semaphore(Client):
    """RPermitExpirableSemaphore NAME: RedissonPermitExpirableSemaphore's
    scripts, and its tryAcquire loop on the channel redisson_sc:{NAME}."""

    def __init__(self, opts):
        super().__init__(opts)
        self.timeouts = tagged(self.name, "timeout")	# suffixName(NAME, "timeout")
        self.channel = self.listen = hashtagged("redisson_sc", self.name)

    def wakes(self, message):
        # SemaphorePubSub: the latch is given min(waiting threads, message)
        # permits; this client's one thread waits for one
        try:
            return int(message) >= 1
        except ValueError:
            return False

    def expiry(self, lease_ms):
        """calcTimeout: the permit's expiry on the client's clock."""
        return NO_EXPIRY if lease_ms is None else self.now_ms() + lease_ms

    def try_acquire(self, lease_ms):
        """(permit id in hex, None), or (None, seconds until the permit
        that expires first does, or None when none will)."""
        permit = secrets.token_bytes(16)	# ServiceManager.generateId
        r = self.eval(SEM_ACQUIRE, [self.name, self.timeouts, self.channel],
                      [1, self.expiry(lease_ms), self.now_ms(), NO_EXPIRY,
                       self.pub_cmd, permit])
        if r == b"OK":
            return permit.hex(), None
        if isinstance(r, bytes) and r.startswith(b":"):
            # nearestTimeout: the earliest expiry, less the client's clock
            return None, max(0.0, (float(r[1:]) - self.now_ms()) / 1000.0)
        return None, None

    def acquire(self, wait, lease_ms):
        """tryAcquire(wait, lease) (acquire(lease) when WAIT is None): the
        permit id, or None when WAIT ran out."""
        return self.wait_loop(wait, lambda: self.try_acquire(lease_ms))

    def release(self, permit_hex):
        """tryRelease: True when the permit was held and had not expired."""
        r = self.eval(SEM_RELEASE, [self.name, self.channel, self.timeouts],
                      [bytes.fromhex(permit_hex), 1, self.now_ms(), self.pub_cmd])
        return r == 1

    def available(self):
        return self.eval(SEM_AVAILABLE, [self.name, self.timeouts, self.channel],
                         [self.now_ms(), self.pub_cmd])

    def set_permits(self, n, only_if_unset):
        """trySetPermits (ONLY_IF_UNSET) or setPermits: True when set."""
        if only_if_unset:
            return self.eval(SEM_TRY_SET, [self.name, self.channel],
                             [n, self.pub_cmd]) == 1
        self.eval(SEM_SET, [self.name, self.channel, self.timeouts], [n, self.pub_cmd])
        return True

    def update_lease(self, permit_hex, lease_ms):
        """updateLeaseTime: True when the permit was still held."""
        return self.eval(SEM_UPDATE_LEASE, [self.name, self.timeouts, self.channel],
                         [bytes.fromhex(permit_hex), self.expiry(lease_ms),
                          self.now_ms(), self.pub_cmd]) == 1


def semaphore_main(opts):
    sem = Semaphore(opts)
    if opts.action == "set-permits":
        if not sem.set_permits(opts.permits, opts.only_if_unset):
            print("kept %d" % sem.available(), flush=True)
            return 1
        print("set %d" % opts.permits, flush=True)
        return 0
    if opts.action == "available":
        print(sem.available(), flush=True)
        return 0
    if opts.action == "update-lease":
        ok = sem.update_lease(opts.permit, None if opts.ms < 0 else opts.ms)
        say("updated" if ok else "lost", stamp())
        return 0 if ok else 3
    if opts.action == "acquire":
        permit = sem.acquire(opts.wait, opts.lease)
        if permit is None:
            return 1
        say("acquired " + permit, stamp())
        if opts.keep:
            return 0
        time.sleep(opts.hold)
    else:
        permit = opts.permit
    ok = sem.release(permit)
    say("released" if ok else "lost", stamp())
    if not ok:
        print("redisson.py: permit %s of %s has already been released or doesn't exist"
              % (permit, opts.name), file=sys.stderr, flush=True)
        return 3
    return 0


def rwlock_main(opts):
    lock = RWLock(opts, "write" if opts.op.endswith("write") else "read")
    if opts.op.startswith("unlock-"):
        return lock.release()
    if not lock.acquire(opts.wait):
        return 1
    say("acquired", stamp())
    if opts.keep:
        return 0
    lock.hold(opts.hold)
    return lock.release()


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
    rw = sp.add_parser("rwlock")
    rw.add_argument("name")
    rw.add_argument("op", choices=("read", "write", "unlock-read", "unlock-write"))
    rw.add_argument("--wait", type=float)
    rw.add_argument("--lease", type=int)
    rw.add_argument("--hold", type=float, default=0.0)
    rw.add_argument("--watchdog", type=int, default=30000)
    rw.add_argument("--keep", action="store_true")
    rw.add_argument("--id", default=argparse.SUPPRESS)
    sem = sp.add_parser("semaphore")
    sem.add_argument("name")
    ssp = sem.add_subparsers(dest="action", required=True)
    sset = ssp.add_parser("set-permits")
    sset.add_argument("permits", type=int)
    sset.add_argument("--try", dest="only_if_unset", action="store_true")
    sacq = ssp.add_parser("acquire")
    sacq.add_argument("--lease", type=int)
    sacq.add_argument("--wait", type=float)
    sacq.add_argument("--hold", type=float, default=0.0)
    sacq.add_argument("--keep", action="store_true")
    srel = ssp.add_parser("release")
    srel.add_argument("permit")
    savail = ssp.add_parser("available")
    supd = ssp.add_parser("update-lease")
    supd.add_argument("permit")
    supd.add_argument("ms", type=int)
    for sub in (rw, sem, sset, sacq, srel, savail, supd):
        sub.add_argument("--skew", type=int, default=argparse.SUPPRESS)
        sub.add_argument("--label", default=argparse.SUPPRESS)
    opts = p.parse_args()
    if opts.cmd in ("unlock", "rwlock") and not opts.id and (
            opts.cmd == "unlock" or opts.op.startswith("unlock-")):
        p.error("%s needs --id UUID:TID" % (
            "unlock" if opts.cmd == "unlock" else opts.op))
    if opts.id is not None and ":" not in opts.id:
        p.error("--id is UUID:TID")
    if opts.fair_wait <= 0:
        p.error("--fair-wait is a number of milliseconds above 0")
    if opts.fair and opts.cmd in ("rwlock", "semaphore"):
        p.error("--fair is for lock and unlock")
    if ((opts.cmd == "lock" or (opts.cmd == "rwlock" and opts.op in ("read", "write")))
            and opts.keep and opts.lease is None):
        p.error("--keep needs --lease (nothing renews a kept lock)")
    if opts.cmd == "semaphore" and opts.action in ("release", "update-lease"):
        try:
            if len(bytes.fromhex(opts.permit)) == 0:
                raise ValueError()
        except ValueError:
            p.error("PERMIT_ID is the permit's id in hex, as acquire printed it")
    global LABEL
    LABEL = opts.label
    if opts.cmd == "semaphore":
        return semaphore_main(opts)
    if opts.cmd == "rwlock":
        return rwlock_main(opts)
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
