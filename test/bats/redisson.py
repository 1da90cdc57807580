#!/usr/bin/env python3
"""redisson.py: a Redisson client on the wire, for tests: RLock, RFairLock,
RFencedLock, RReadWriteLock and RPermitExpirableSemaphore.

Scripts, their arguments and the clients' loops from redisson/redisson at
commit 0c286e86eb813a26222b3dc281f0ca368dd46561 (tag redisson-4.7.0,
2026-08-04), with Redisson's default configuration (timeout 3000 ms,
retryAttempts 4, retryDelay EqualJitterDelay(1 s, 2 s), lockWatchdogTimeout
30000 ms, fairLockWaitTimeout 300000 ms, useScriptCache true). Each
script's text is Redisson's byte for byte (SCRIPTS names the Java method
of each; check-scripts compares them with a Redisson tree).

usage:
  redisson.py --port P [--host H] [--sharded] [--id UUID:TID] [--fair]
              [--fair-wait MS] [--skew MS] [--label L]
              lock NAME [--wait SECONDS] [--lease MS] [--hold SECONDS]
              [--watchdog MS] [--keep]
  redisson.py --port P [--host H] [--sharded] [--id UUID:TID] [--skew MS]
              [--label L]
              fenced NAME [--wait SECONDS] [--lease MS] [--hold SECONDS]
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
  redisson.py check-scripts REDISSON_TREE
  (--id, --fair, --fair-wait, --skew and --label also after the command;
  --skew and --label also after fenced, rwlock, semaphore and its action)

Speaks to one server the way Redisson's RedissonLock (or, with --fair,
RedissonFairLock; or rwlock, RedissonReadLock and RedissonWriteLock; or
semaphore, RedissonPermitExpirableSemaphore) does (RESP2 over a raw socket,
standard library only), so that tests can show that redlock and Java
services using Redisson exclude, queue behind and wake each other:

  lock hash      NAME: field UUID:TID -> hold count, PEXPIRE = lease
  channel        redisson_lock__channel:{NAME} (NAME itself when it has a
                 "{": the hash tag is kept), message "0" on a release
  unlock latch   redisson_unlock_latch:{NAME}:REQUEST (REQUEST 32 hex
                 digits), set PX (timeout + retry delay) * retryAttempts,
                 16000 to 20000 ms drawn anew per release, and deleted
                 (DEL) once the release script has answered
  --fair only:
  queue          redisson_lock_queue:{NAME}, list of UUID:TID, head first
  timeouts       redisson_lock_timeout:{NAME}, zset UUID:TID -> deadline
                 in ms on the clock of the client that wrote it
  own channel    redisson_lock__channel:{NAME}:UUID:TID, where a fair
                 release wakes the head of the queue, and only there

Every script goes as EVALSHA; a NOSCRIPT answer makes the client SCRIPT
LOAD it and send the EVALSHA again (useScriptCache). No WAIT follows a
script: Redisson sends one (checkLockSyncedSlaves) only when its
configuration is not a single server's, and this client is one.

lock: tries the lock; while it is busy, subscribes on a second connection
(SUBSCRIBE, or SSUBSCRIBE with --sharded) and tries again on each message
("message" or "smessage" push) or when the TTL the attempt returned has
run out, as RedissonLock.tryLock does; waits for ever without --wait, and
makes no last attempt when --wait runs out (neither does tryLock). The
messages wake it as LockPubSub's latch does: "0" (unlock) leaves one
permit, taken at once by a wait that starts after it came; "1" (read
unlock) wakes it only while it waits: one that comes while it tries (an
attempt's round trip) is lost, and it sleeps on until the TTL (said on
stderr). Others are reported on stderr. Once acquired, holds it for
--hold seconds (default 0), then releases one hold, publishing "0" with
PUBLISH (SPUBLISH with --sharded) if it was the last. Without --lease the
lease is the watchdog's, --watchdog ms (Redisson's lockWatchdogTimeout,
default 30000), renewed by renewal.LockTask's script a third of it after
the acquisition and a third of it after each renewal answered; with
--lease there is no renewal.
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

unlock: releases one hold of NAME by --id, publishing as a release does
(also for a fenced lock, which RedissonLock releases).

fenced: RFencedLock's tryLockAndGetToken(--wait, --lease) (without
--wait, for ever): the attempt is RLock's with one more key, the token
counter redisson_lock_token:{NAME} (NAME:... when NAME has a "{"), which
every acquisition increments, a re-entry too (INCR: a missing counter
starts at 1); it answers {-1, token} when acquired, else {PTTL, -1}. The
wait is RLock's, on the same channel, in the asynchronous loop: an
unlock message that wakes it also leaves a permit, so that the attempt
after the next failed one comes at once. Prints "acquired TOKEN T"
("acquired TOKEN L T" with --label); held, renewed (LockTask), kept and
released as by lock.

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
                 (READ_UNLOCK_MESSAGE); both wake a waiter as LockPubSub
                 does (see lock: a "1" only one that waits); a write
                 release that leaves this thread's own read holds turns
                 the lock to read mode and publishes nothing
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
is gone publishes all the same, "0" for a read and "1" for a write, and
answers nil: "lost" (exit 3) for both, as unlock throws
IllegalMonitorStateException.

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
at least 1 (SemaphorePubSub releases min(the entry's subscribers, count)
permits of its latch, whether they wait or not: here one, which a later
wait takes at once) or when that earliest expiry comes by its own clock;
no last attempt when --wait runs out. Holding a permit, it prints
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
  subscribed                 the lock was busy; the subscription is
                             confirmed, the attempt after it failed, and
                             the client now waits for a message
  woken T                    a message that wakes came on the channel
  acquired T
  acquired PERMIT_ID T       (semaphore) holding the permit PERMIT_ID
  acquired TOKEN T           (fenced) holding NAME with that fencing token
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

check-scripts REDISSON_TREE: for each script, whether its text is one of
the string constants (literals joined by +) of the Java file it comes
from, under REDISSON_TREE (a checkout of redisson/redisson): "same",
"DIFFERS" or "MISSING" (no such file), with the file and method; exit 1
if one is not the same.
"""
import argparse
import hashlib
import os
import random
import re
import secrets
import select
import socket
import sys
import time
import uuid

# The scripts, each Redisson's text byte for byte, split as the Java source
# splits it (its comments kept); SCRIPTS below names the method of each,
# and "redisson.py check-scripts DIR" compares them with a Redisson tree.

# RedissonLock.tryLockInnerAsync: take NAME when it is free, or add a hold
# when this field has it already; either way the lease starts again. A
# busy lock answers its PTTL, a taken one nil.
# KEYS[1] NAME  ARGV[1] lease ms  ARGV[2] UUID:TID
LOCK = (
    "if ((redis.call('exists', KEYS[1]) == 0) "
            "or (redis.call('hexists', KEYS[1], ARGV[2]) == 1)) then "
        "redis.call('hincrby', KEYS[1], ARGV[2], 1); "
        "redis.call('pexpire', KEYS[1], ARGV[1]); "
        "return nil; "
    "end; "
    "return redis.call('pttl', KEYS[1]);"
)

# RedissonLock.unlockInnerAsync: give back one hold of UUID:TID. A latch
# remembers the outcome under the request's id, so that a retried request
# answers the same and gives back nothing more. The last hold deletes NAME
# and wakes the waiters with the publish command the client chose.
# KEYS[1] NAME  KEYS[2] channel  KEYS[3] unlock latch
# ARGV[1] message 0  ARGV[2] lease ms (internalLockLeaseTime)  ARGV[3] UUID:TID
# ARGV[4] PUBLISH or SPUBLISH  ARGV[5] latch lifetime ms
# Returns 1 released, 0 holds remain, nil not held by UUID:TID.
UNLOCK = (
    "local val = redis.call('get', KEYS[3]); "
    "if val ~= false then "
        "return tonumber(val);"
    "end; "
    "if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then "
        "return nil;"
    "end; "
    "local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); "
    "if (counter > 0) then "
        "redis.call('pexpire', KEYS[1], ARGV[2]); "
        "redis.call('set', KEYS[3], 0, 'px', ARGV[5]); "
        "return 0; "
    "else "
        "redis.call('del', KEYS[1]); "
        "redis.call(ARGV[4], KEYS[2], ARGV[1]); "
        "redis.call('set', KEYS[3], 1, 'px', ARGV[5]); "
        "return 1; "
    "end; "
)

# renewal.LockTask.buildChunk (the watchdog of RLock, RFairLock,
# RFencedLock and RWriteLock, one batch for all the client's locks): each
# lock KEYS[i] still held by field ARGV[i + 1] has its lease set again to
# ARGV[1] ms (lockWatchdogTimeout). Returns 1 (lengthened) or 0 per lock.
LOCK_RENEW = (
    "local result = {} "
    "for i = 1, #KEYS, 1 do "
        "if (redis.call('hexists', KEYS[i], ARGV[i + 1]) == 1) then "
            "redis.call('pexpire', KEYS[i], ARGV[1]); "
            "table.insert(result, 1); "
        "else "
            "table.insert(result, 0); "
        "end; "
    "end; "
    "return result;"
)

# RedissonFairLock.tryLockInnerAsync (EVAL_LONG, what tryLock and lock
# send): drop the dead heads of the queue (a deadline at or before the
# client's clock; an entry without one stays); take a free lock if nobody
# queues or this thread is the head, and then lower every queued deadline
# by the wait time; or re-enter. Otherwise a queued thread is answered the
# lock's PTTL (at least 0); a new one joins the tail with the deadline (the
# last waiter's, or now + the lock's PTTL) + the wait time, and is
# answered the time to the last waiter's deadline (or the PTTL).
# KEYS[1] NAME  KEYS[2] queue  KEYS[3] timeouts
# ARGV[1] lease ms  ARGV[2] UUID:TID  ARGV[3] wait ms (threadWaitTime, or
# tryLock's wait)  ARGV[4] client's clock ms (System.currentTimeMillis())
FAIR_LOCK = (
    "while true do "
        "local firstThreadId2 = redis.call('lindex', KEYS[2], 0);"
        "if firstThreadId2 == false then "
            "break;"
        "end;"
        "local timeout = redis.call('zscore', KEYS[3], firstThreadId2);"
        "if timeout ~= false and tonumber(timeout) <= tonumber(ARGV[4]) then "
            # remove the item from the queue and timeout set
            # NOTE we do not alter any other timeout
            "redis.call('zrem', KEYS[3], firstThreadId2);"
            "redis.call('lpop', KEYS[2]);"
        "else "
            "break;"
        "end;"
    "end;"
    # check if the lock can be acquired now
    "if (redis.call('exists', KEYS[1]) == 0) "
        "and ((redis.call('exists', KEYS[2]) == 0) "
            "or (redis.call('lindex', KEYS[2], 0) == ARGV[2])) then "
        # remove this thread from the queue and timeout set
        "redis.call('lpop', KEYS[2]);"
        "redis.call('zrem', KEYS[3], ARGV[2]);"
        # decrease timeouts for all waiting in the queue
        "local keys = redis.call('zrange', KEYS[3], 0, -1);"
        "for i = 1, #keys, 1 do "
            "redis.call('zincrby', KEYS[3], -tonumber(ARGV[3]), keys[i]);"
        "end;"
        # acquire the lock and set the TTL for the lease
        "redis.call('hset', KEYS[1], ARGV[2], 1);"
        "redis.call('pexpire', KEYS[1], ARGV[1]);"
        "return nil;"
    "end;"
    # check if the lock is already held, and this is a re-entry
    "if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then "
        "redis.call('hincrby', KEYS[1], ARGV[2],1);"
        "redis.call('pexpire', KEYS[1], ARGV[1]);"
        "return nil;"
    "end;"
    # the lock cannot be acquired
    # check if the thread is already in the queue
    "local timeout = redis.call('zscore', KEYS[3], ARGV[2]);"
    "if timeout ~= false then "
            "local ttl = redis.call('pttl', KEYS[1]);"
            "return math.max(0, ttl); "
        # the real timeout is the timeout of the prior thread
        # in the queue, but this is approximately correct, and
        # avoids having to traverse the queue
    #                        "return timeout - tonumber(ARGV[3]) - tonumber(ARGV[4]);" +
    "end;"
    # add the thread to the queue at the end, and set its timeout in the timeout set to the timeout of
    # the prior thread in the queue (or the timeout of the lock if the queue is empty) plus the
    # threadWaitTime
    "local lastThreadId = redis.call('lindex', KEYS[2], -1);"
    "local ttl;"
    "if lastThreadId ~= false and lastThreadId ~= ARGV[2] and redis.call('zscore', KEYS[3], lastThreadId) ~= false then "
        "ttl = tonumber(redis.call('zscore', KEYS[3], lastThreadId)) - tonumber(ARGV[4]);"
    "else "
        "ttl = redis.call('pttl', KEYS[1]);"
    "end;"
    "local timeout = ttl + tonumber(ARGV[3]) + tonumber(ARGV[4]);"
    "if redis.call('zadd', KEYS[3], timeout, ARGV[2]) == 1 then "
        "redis.call('rpush', KEYS[2], ARGV[2]);"
    "end;"
    "return ttl;"
)

# RedissonFairLock.acquireFailedAsync: the wait ran out. Every waiter
# behind UUID:TID has its deadline lowered by the wait time, then UUID:TID
# leaves the list and the zset. Nobody is woken.
# KEYS[1] queue  KEYS[2] timeouts  ARGV[1] UUID:TID  ARGV[2] wait ms
FAIR_GIVE_UP = (
    "local queue = redis.call('lrange', KEYS[1], 0, -1);"
    # find the location in the queue where the thread is
    "local i = 1;"
    "while i <= #queue and queue[i] ~= ARGV[1] do "
    "i = i + 1;"
    "end;"
    # go to the next index which will exist after the current thread is removed
    "i = i + 1;"
    # decrement the timeout for the rest of the queue after the thread being removed
    "while i <= #queue do "
    "redis.call('zincrby', KEYS[2], -tonumber(ARGV[2]), queue[i]);"
    "i = i + 1;"
    "end;"
    # remove the thread from the queue and timeouts set
    "redis.call('zrem', KEYS[2], ARGV[1]);"
    "redis.call('lrem', KEYS[1], 0, ARGV[1]);"
)

# RedissonFairLock.unlockInnerAsync: the latch as in UNLOCK; the dead
# heads go first; a lock that is gone counts as released and wakes the
# head; otherwise one hold of UUID:TID is given back, and the last one
# deletes NAME and wakes the head of the queue on its own channel,
# CHANNEL:HEAD. Nothing is published on the lock's channel.
# KEYS[1] NAME  KEYS[2] queue  KEYS[3] timeouts  KEYS[4] channel
# KEYS[5] unlock latch
# ARGV[1] message 0  ARGV[2] lease ms  ARGV[3] UUID:TID
# ARGV[4] client's clock ms  ARGV[5] PUBLISH or SPUBLISH
# ARGV[6] latch lifetime ms
# Returns 1 released (or gone), 0 holds remain, nil held by another.
FAIR_UNLOCK = (
    "local val = redis.call('get', KEYS[5]); "
      "if val ~= false then "
          "return tonumber(val);"
      "end; "
      # remove stale threads
      "while true do "
      "local firstThreadId2 = redis.call('lindex', KEYS[2], 0);"
      "if firstThreadId2 == false then "
          "break;"
      "end; "
      "local timeout = redis.call('zscore', KEYS[3], firstThreadId2);"
      "if timeout ~= false and tonumber(timeout) <= tonumber(ARGV[4]) then "
          "redis.call('zrem', KEYS[3], firstThreadId2); "
          "redis.call('lpop', KEYS[2]); "
      "else "
          "break;"
      "end; "
    "end;"
    "if (redis.call('exists', KEYS[1]) == 0) then "
          "local nextThreadId = redis.call('lindex', KEYS[2], 0); "
          "if nextThreadId ~= false then "
              "redis.call(ARGV[5], KEYS[4] .. ':' .. nextThreadId, ARGV[1]); "
          "end; "
          "redis.call('set', KEYS[5], 1, 'px', ARGV[6]); "
          "return 1; "
      "end;"
      "if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then "
          "return nil;"
      "end; "
      "local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); "
      "if (counter > 0) then "
          "redis.call('pexpire', KEYS[1], ARGV[2]); "
          "redis.call('set', KEYS[5], 0, 'px', ARGV[6]); "
          "return 0; "
      "end; "
      "redis.call('del', KEYS[1]); "
      "redis.call('set', KEYS[5], 1, 'px', ARGV[6]); "
      "local nextThreadId = redis.call('lindex', KEYS[2], 0); "
      "if nextThreadId ~= false then "
          "redis.call(ARGV[5], KEYS[4] .. ':' .. nextThreadId, ARGV[1]); "
      "end; "
      "return 1; "
)

# RedissonFencedLock.tryLockInnerAsync(leaseTime, unit, threadId) (what
# tryLockAndGetToken and lockAndGetToken send): as LOCK, and every
# acquisition, a re-entry too, takes the next value of the token counter
# (INCR: a missing counter gives 1). Answers {-1, token} when acquired,
# else {PTTL, -1} (a busy lock without a TTL answers {-1, -1}, which the
# client takes for acquired with token -1).
# KEYS[1] NAME  KEYS[2] redisson_lock_token:{NAME}
# ARGV[1] lease ms  ARGV[2] UUID:TID
FENCED_LOCK = (
    "if (redis.call('exists', KEYS[1]) == 0 "
    "or (redis.call('hexists', KEYS[1], ARGV[2]) == 1)) then "
        "local token = redis.call('incr', KEYS[2]);"
        "redis.call('hincrby', KEYS[1], ARGV[2], 1); "
        "redis.call('pexpire', KEYS[1], ARGV[1]); "
        "return {-1, token}; "
    "end; "
    "return {redis.call('pttl', KEYS[1]), -1};"
)

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
READ_LOCK = (
    "local mode = redis.call('hget', KEYS[1], 'mode'); "
    "if (mode == false) then "
      "redis.call('hset', KEYS[1], 'mode', 'read'); "
      "redis.call('hset', KEYS[1], ARGV[2], 1); "
      "redis.call('set', KEYS[2] .. ':1', 1); "
      "redis.call('pexpire', KEYS[2] .. ':1', ARGV[1]); "
      "redis.call('pexpire', KEYS[1], ARGV[1]); "
      "return nil; "
    "end; "
    "if (mode == 'read') or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then "
      "local ind = redis.call('hincrby', KEYS[1], ARGV[2], 1); "
      "local key = KEYS[2] .. ':' .. ind;"
      "redis.call('set', key, 1); "
      "redis.call('pexpire', key, ARGV[1]); "
      "local remainTime = redis.call('pttl', KEYS[1]); "
      "redis.call('pexpire', KEYS[1], math.max(remainTime, ARGV[1])); "
      "return nil; "
    "end;"
    "return redis.call('pttl', KEYS[1]);"
)

# RedissonReadLock.unlockInnerAsync: the latch as in UNLOCK. A lock that
# is gone wakes the waiters all the same and answers nil (not held). The
# last read hold of UUID:TID drops its field; hold N drops its lease key.
# While other fields remain, NAME keeps the longest lease left of every
# read hold (answer 0), or, none left, stays as it is in write mode
# (answer 0); otherwise NAME goes, and 0 is published (answer 1).
# KEYS[1] NAME  KEYS[2] channel  KEYS[3] {NAME}:UUID:TID:rwlock_timeout
# KEYS[4] {NAME}  KEYS[5] unlock latch
# ARGV[1] message 0  ARGV[2] UUID:TID  ARGV[3] PUBLISH or SPUBLISH
# ARGV[4] latch lifetime ms
READ_UNLOCK = (
    "local val = redis.call('get', KEYS[5]); "
    "if val ~= false then "
        "return tonumber(val);"
    "end; "
    "local mode = redis.call('hget', KEYS[1], 'mode'); "
    "if (mode == false) then "
        "redis.call(ARGV[3], KEYS[2], ARGV[1]); "
        "redis.call('set', KEYS[5], 1, 'px', ARGV[4]); "
        "return nil; "
    "end; "
    "local lockExists = redis.call('hexists', KEYS[1], ARGV[2]); "
    "if (lockExists == 0) then "
        "return nil;"
    "end; "
    "local counter = redis.call('hincrby', KEYS[1], ARGV[2], -1); "
    "if (counter == 0) then "
        "redis.call('hdel', KEYS[1], ARGV[2]); "
    "end;"
    "redis.call('del', KEYS[3] .. ':' .. (counter+1)); "
    "if (redis.call('hlen', KEYS[1]) > 1) then "
        "local maxRemainTime = -3; "
        "local keys = redis.call('hkeys', KEYS[1]); "
        "for n, key in ipairs(keys) do "
            "counter = tonumber(redis.call('hget', KEYS[1], key)); "
            "if type(counter) == 'number' then "
                "for i=counter, 1, -1 do "
                    "local remainTime = redis.call('pttl', KEYS[4] .. ':' .. key .. ':rwlock_timeout:' .. i); "
                    "maxRemainTime = math.max(remainTime, maxRemainTime);"
                "end; "
            "end; "
        "end; "
        "if maxRemainTime > 0 then "
            "redis.call('pexpire', KEYS[1], maxRemainTime); "
            "redis.call('set', KEYS[5], 0, 'px', ARGV[4]); "
            "return 0; "
        "end;"
        "if mode == 'write' then "
            "redis.call('set', KEYS[5], 0, 'px', ARGV[4]); "
            "return 0;"
        "end; "
    "end; "
    "redis.call('del', KEYS[1]); "
    "redis.call(ARGV[3], KEYS[2], ARGV[1]); "
    "redis.call('set', KEYS[5], 1, 'px', ARGV[4]); "
    "return 1; "
)

# renewal.ReadLockTask.buildChunk (the watchdog of RReadLock): for each
# lock KEYS[i] (KEYS[i + 1] its {NAME}), ARGV gives how many of this
# client's threads follow, then their UUID:TID; each thread still holding
# has the lease keys of its read holds set again to ARGV[1] ms, and then
# NAME too. Returns 1 (lengthened) or 0 per lock.
READ_RENEW = (
    "local result = {} "
    "local argIdx = 2 "
    "for i = 1, #KEYS, 2 do "
        "local anyAlive = false; "
        "local lockNamesCount = tonumber(ARGV[argIdx]); "
        "argIdx = argIdx + 1; "
        "for k = 1, lockNamesCount do "
            "local counter = redis.call('hget', KEYS[i], ARGV[argIdx]); "
            "if (counter ~= false) then "
                "anyAlive = true; "
                "for c=counter, 1, -1 do "
                    "redis.call('pexpire', KEYS[i+1] .. ':' .. ARGV[argIdx] .. ':rwlock_timeout:' .. c, ARGV[1]); "
                "end; "
            "end; "
            "argIdx = argIdx + 1; "
        "end; "
        "if (anyAlive) then "
            "redis.call('pexpire', KEYS[i], ARGV[1]); "
            "table.insert(result, 1); "
        "else "
            "table.insert(result, 0); "
        "end; "
    "end; "
    "return result;"
)

# RedissonWriteLock.tryLockInnerAsync: a free lock becomes write mode
# held by UUID:TID:write; its own write re-enters and adds the lease to
# what is left. Otherwise the PTTL of NAME.
# KEYS[1] NAME  ARGV[1] lease ms  ARGV[2] UUID:TID:write
WRITE_LOCK = (
    "local mode = redis.call('hget', KEYS[1], 'mode'); "
    "if (mode == false) then "
          "redis.call('hset', KEYS[1], 'mode', 'write'); "
          "redis.call('hset', KEYS[1], ARGV[2], 1); "
          "redis.call('pexpire', KEYS[1], ARGV[1]); "
          "return nil; "
      "end; "
      "if (mode == 'write') then "
          "if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then "
              "redis.call('hincrby', KEYS[1], ARGV[2], 1); "
              "local currentExpire = redis.call('pttl', KEYS[1]); "
              "redis.call('pexpire', KEYS[1], currentExpire + ARGV[1]); "
              "return nil; "
          "end; "
        "end;"
        "return redis.call('pttl', KEYS[1]);"
)

# RedissonWriteLock.unlockInnerAsync: the latch as in UNLOCK. A lock that
# is gone publishes 1 all the same and answers nil (not held: unlock
# throws IllegalMonitorStateException). In write mode, one write hold of
# UUID:TID:write given back: others remain (lease set to ARGV[2], answer
# 0); the last one goes, and then either nothing else is left (NAME goes,
# 1 is published: all wake) or this thread's own read holds are (read
# mode, nobody is told); answer 1. Read mode, or another writer: nil.
# KEYS[1] NAME  KEYS[2] channel  KEYS[3] unlock latch
# ARGV[1] message 1  ARGV[2] lease ms  ARGV[3] UUID:TID:write
# ARGV[4] PUBLISH or SPUBLISH  ARGV[5] latch lifetime ms
WRITE_UNLOCK = (
    "local val = redis.call('get', KEYS[3]); "
    "if val ~= false then "
        "return tonumber(val);"
    "end; "
    "local mode = redis.call('hget', KEYS[1], 'mode'); "
    "if (mode == false) then "
        "redis.call(ARGV[4], KEYS[2], ARGV[1]); "
        "redis.call('set', KEYS[3], 1, 'px', ARGV[5]); "
        "return nil; "
    "end;"
    "if (mode == 'write') then "
        "local lockExists = redis.call('hexists', KEYS[1], ARGV[3]); "
        "if (lockExists == 0) then "
            "return nil;"
        "else "
            "local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); "
            "if (counter > 0) then "
                "redis.call('pexpire', KEYS[1], ARGV[2]); "
                "redis.call('set', KEYS[3], 0, 'px', ARGV[5]); "
                "return 0; "
            "else "
                "redis.call('hdel', KEYS[1], ARGV[3]); "
                "if (redis.call('hlen', KEYS[1]) == 1) then "
                    "redis.call('del', KEYS[1]); "
                    "redis.call(ARGV[4], KEYS[2], ARGV[1]); "
                "else "
                    # has unlocked read-locks
                    "redis.call('hset', KEYS[1], 'mode', 'read'); "
                "end; "
                "redis.call('set', KEYS[3], 1, 'px', ARGV[5]); "
                "return 1; "
            "end; "
        "end; "
    "end; "
    "return nil;"
)

# RPermitExpirableSemaphore NAME: the string NAME counts the free permits;
# the zset {NAME}:timeout maps each permit taken (16 random bytes, shown
# by Redisson in hex) to its expiry in ms on the clock of the client that
# took it (922337203685477: none). Whoever comes next with a later clock
# gives expired permits back to NAME and announces the new count.
NO_EXPIRY = 922337203685477

# RedissonPermitExpirableSemaphore.tryAcquireAsync(ids, timeoutDate): give
# back at most ARGV[1] expired permits (publishing the count if some are
# free); take ARGV[1] permits if that many are free: each id goes in the
# zset with the expiry ARGV[2], which takes NAME's own TTL if it has one;
# answer 'OK'. Else ':' and the earliest expiry in the zset unless it is
# the no-expiry score ARGV[4]; else nil.
# KEYS[1] NAME  KEYS[2] {NAME}:timeout  KEYS[3] channel
# ARGV[1] permits wanted  ARGV[2] expiry ms  ARGV[3] client's clock ms
# ARGV[4] the no-expiry score  ARGV[5] PUBLISH or SPUBLISH
# ARGV[6...] the permit ids (bytes)
SEM_ACQUIRE = (
    "local expiredIds = redis.call('zrangebyscore', KEYS[2], 0, ARGV[3], 'limit', 0, ARGV[1]); "
    "if #expiredIds > 0 then "
        "redis.call('zrem', KEYS[2], unpack(expiredIds)); "
        "local value = redis.call('incrby', KEYS[1], #expiredIds); "
        "if tonumber(value) > 0 then "
            "redis.call(ARGV[5], KEYS[3], value); "
        "end;"
    "end; "
    "local value = redis.call('get', KEYS[1]); "
    "if (value ~= false and tonumber(value) >= tonumber(ARGV[1])) then "
        "redis.call('decrby', KEYS[1], ARGV[1]); "
        "for i = 6, #ARGV, 1 do "
            "redis.call('zadd', KEYS[2], ARGV[2], ARGV[i]); "
        "end; "
        "local ttl = redis.call('pttl', KEYS[1]); "
        "if ttl > 0 then "
            "redis.call('pexpire', KEYS[2], ttl); "
        "end; "
        "return 'OK'; "
    "end; "
    "local v = redis.call('zrange', KEYS[2], 0, 0, 'WITHSCORES'); "
    "if v[1] ~= nil and v[2] ~= ARGV[4] then "
        "return ':' .. tostring(v[2]); "
    "end "
    "return nil;"
)

# RedissonPermitExpirableSemaphore.tryReleaseAsync(permitId): a permit
# still in the zset leaves it, and ARGV[2] permits go back to NAME, whose
# new count is published; answer 1, or 0 when it had expired by the
# caller's clock (given back all the same) or was not there (nothing done).
# KEYS[1] NAME  KEYS[2] channel  KEYS[3] {NAME}:timeout
# ARGV[1] permit id  ARGV[2] 1  ARGV[3] client's clock ms
# ARGV[4] PUBLISH or SPUBLISH
SEM_RELEASE = (
    "local expire = redis.call('zscore', KEYS[3], ARGV[1]);"
    "local removed = redis.call('zrem', KEYS[3], ARGV[1]);"
    "if tonumber(removed) ~= 1 then "
        "return 0;"
    "end;"
    "local value = redis.call('incrby', KEYS[1], ARGV[2]); "
    "redis.call(ARGV[4], KEYS[2], value); "
    "if tonumber(expire) <= tonumber(ARGV[3]) then "
        "return 0;"
    "end;"
    "return 1;"
)

# RedissonPermitExpirableSemaphore.availablePermitsAsync: every expired
# permit goes back first (the count published if some are free, and
# answered); else the count of free permits (0 when NAME is missing).
# KEYS[1] NAME  KEYS[2] {NAME}:timeout  KEYS[3] channel
# ARGV[1] client's clock ms  ARGV[2] PUBLISH or SPUBLISH
SEM_AVAILABLE = (
    "local expiredIds = redis.call('zrangebyscore', KEYS[2], 0, ARGV[1], 'limit', 0, -1); "
    "if #expiredIds > 0 then "
        "redis.call('zrem', KEYS[2], unpack(expiredIds)); "
        "local value = redis.call('incrby', KEYS[1], #expiredIds); "
        "if tonumber(value) > 0 then "
            "redis.call(ARGV[2], KEYS[3], value); "
        "end;"
        "return value; "
    "end; "
    "local ret = redis.call('get', KEYS[1]); "
    "return ret == false and 0 or ret;"
)

# RedissonPermitExpirableSemaphore.trySetPermitsAsync: NAME gets ARGV[1]
# free permits only if it has no count yet (then published; answer 1),
# else 0.
# KEYS[1] NAME  KEYS[2] channel  ARGV[1] permits  ARGV[2] PUBLISH or SPUBLISH
SEM_TRY_SET = (
    "local value = redis.call('get', KEYS[1]); "
    "if (value == false) then "
        "redis.call('set', KEYS[1], ARGV[1]); "
        "redis.call(ARGV[2], KEYS[2], ARGV[1]); "
        "return 1;"
    "end;"
    "return 0;"
)

# RedissonPermitExpirableSemaphore.setPermitsAsync: make the total (free
# + taken, expired ones included) ARGV[1] by changing the free count, and
# publish the total; nothing when it already is.
# KEYS[1] NAME  KEYS[2] channel  KEYS[3] {NAME}:timeout
# ARGV[1] permits  ARGV[2] PUBLISH or SPUBLISH
SEM_SET = (
    "local available = redis.call('get', KEYS[1]); "
    "if (available == false) then "
        "redis.call('set', KEYS[1], ARGV[1]); "
        "redis.call(ARGV[2], KEYS[2], ARGV[1]); "
        "return;"
    "end;"
    "local acquired = redis.call('zcount', KEYS[3], 0, '+inf'); "
    "local maximum = (acquired == false and 0 or acquired) + tonumber(available); "
    "if (maximum == tonumber(ARGV[1])) then "
        "return;"
    "end;"
    "redis.call('incrby', KEYS[1], tonumber(ARGV[1]) - maximum); "
    "redis.call(ARGV[2], KEYS[2], ARGV[1]);"
)

# RedissonPermitExpirableSemaphore.updateLeaseTimeAsync: every expired
# permit goes back first; then a permit still held gets the expiry
# ARGV[2] (answer 1), else 0.
# KEYS[1] NAME  KEYS[2] {NAME}:timeout  KEYS[3] channel
# ARGV[1] permit id  ARGV[2] expiry ms  ARGV[3] client's clock ms
# ARGV[4] PUBLISH or SPUBLISH
SEM_UPDATE_LEASE = (
    "local expiredIds = redis.call('zrangebyscore', KEYS[2], 0, ARGV[3], 'limit', 0, -1); "
    "if #expiredIds > 0 then "
        "redis.call('zrem', KEYS[2], unpack(expiredIds)); "
        "local value = redis.call('incrby', KEYS[1], #expiredIds); "
        "if tonumber(value) > 0 then "
            "redis.call(ARGV[4], KEYS[3], value); "
        "end;"
    "end; "
      "local value = redis.call('zscore', KEYS[2], ARGV[1]); "
      "if (value ~= false) then "
        "redis.call('zadd', KEYS[2], ARGV[2], ARGV[1]); "
        "return 1;"
    "end;"
    "return 0;"
)

# Each script: the Java file (under redisson/src/main/java/org/redisson/)
# and method it comes from, for check-scripts.
SCRIPTS = [
    ("LOCK", "RedissonLock.java", "tryLockInnerAsync"),
    ("UNLOCK", "RedissonLock.java", "unlockInnerAsync"),
    ("LOCK_RENEW", "renewal/LockTask.java", "buildChunk"),
    ("FAIR_LOCK", "RedissonFairLock.java", "tryLockInnerAsync (EVAL_LONG)"),
    ("FAIR_GIVE_UP", "RedissonFairLock.java", "acquireFailedAsync"),
    ("FAIR_UNLOCK", "RedissonFairLock.java", "unlockInnerAsync"),
    ("FENCED_LOCK", "RedissonFencedLock.java", "tryLockInnerAsync(leaseTime, unit, threadId)"),
    ("READ_LOCK", "RedissonReadLock.java", "tryLockInnerAsync"),
    ("READ_UNLOCK", "RedissonReadLock.java", "unlockInnerAsync"),
    ("READ_RENEW", "renewal/ReadLockTask.java", "buildChunk"),
    ("WRITE_LOCK", "RedissonWriteLock.java", "tryLockInnerAsync"),
    ("WRITE_UNLOCK", "RedissonWriteLock.java", "unlockInnerAsync"),
    ("SEM_ACQUIRE", "RedissonPermitExpirableSemaphore.java", "tryAcquireAsync(ids, timeoutDate)"),
    ("SEM_RELEASE", "RedissonPermitExpirableSemaphore.java", "tryReleaseAsync(permitId)"),
    ("SEM_AVAILABLE", "RedissonPermitExpirableSemaphore.java", "availablePermitsAsync"),
    ("SEM_TRY_SET", "RedissonPermitExpirableSemaphore.java", "trySetPermitsAsync"),
    ("SEM_SET", "RedissonPermitExpirableSemaphore.java", "setPermitsAsync"),
    ("SEM_UPDATE_LEASE", "RedissonPermitExpirableSemaphore.java", "updateLeaseTimeAsync"),
]

UNLOCK_MESSAGE = b"0"		# LockPubSub.UNLOCK_MESSAGE
READ_UNLOCK_MESSAGE = b"1"	# LockPubSub.READ_UNLOCK_MESSAGE (wakes all)


def latch_ms():
    """The unlock latch's lifetime, as RedissonBaseLock.unlockInnerAsync
    computes it with Redisson's defaults: (timeout 3000 + retryDelay's
    EqualJitterDelay(1 s, 2 s).calcDelay(retryAttempts 4), a random 1000
    to 2000) * retryAttempts 4: 16000 to 20000 ms, drawn per release."""
    return (3000 + 1000 + random.randint(0, 1000)) * 4


LATCH_MS = 16000	# the least latch_ms(), for callers that want one number


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
                left = max(0.0, deadline - time.monotonic())
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
        self.announced = False	# "subscribed" said in this wait

    def now_ms(self):
        """System.currentTimeMillis() of a client whose clock is --skew off."""
        return int(time.time() * 1000) + self.opts.skew

    def eval(self, script, keys, args):
        """CommandAsyncService.evalAsync with useScriptCache (the default):
        EVALSHA; on NOSCRIPT, SCRIPT LOAD and EVALSHA again."""
        sha = hashlib.sha1(script.encode()).hexdigest()
        try:
            try:
                return self.conn.call("EVALSHA", sha, len(keys), *keys, *args)
            except RedisError as e:
                if not str(e).startswith("NOSCRIPT"):
                    raise
            self.conn.call("SCRIPT", "LOAD", script)
            return self.conn.call("EVALSHA", sha, len(keys), *keys, *args)
        except RedisError as e:
            expect_ok(e, "EVALSHA")

    def wakes(self, message):
        """Whether MESSAGE on the channel wakes a thread that waits on the
        entry's latch (PublishSubscribe.onMessage)."""
        raise NotImplementedError

    def keeps(self, message):
        """Whether MESSAGE leaves a permit on the latch when no thread waits
        on it, for the next wait to take at once."""
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
            self.announced = False
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
        """The latch's tryAcquire(PAUSE): until a message that wakes comes or
        PAUSE seconds pass; the message, or None. The messages that came
        while the thread was not waiting (it was trying) come first: those
        that leave a permit (self.keeps) end the wait at once, the others
        are lost, as LockPubSub loses READ_UNLOCK_MESSAGE then (it releases
        as many permits as threads wait: none). The first wait that
        blocks is said ("subscribed") once those are taken: a message sent
        after that finds the thread waiting."""
        while True:
            v = sub.read(0)
            if v is None:
                break
            m = self.message(v)
            if m is None:
                continue
            if self.keeps(m):
                say("woken", stamp())
                self.waited = False
                return m
            print("redisson.py: message %r on %s came while not waiting: lost" %
                  (m, self.listen), file=sys.stderr, flush=True)
        if not self.announced:
            say("subscribed")
            self.announced = True
        deadline = None if pause is None else time.monotonic() + pause
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            v = sub.read(left)
            if v is None:
                return None
            m = self.message(v)
            if m is None:
                continue
            if self.wakes(m):
                say("woken", stamp())
                self.waited = True
                return m
            print("redisson.py: ignored message %r on %s" % (m, self.listen),
                  file=sys.stderr, flush=True)

    def message(self, v):
        """The payload of a message push V, or None for another push."""
        expect_ok(v, self.sub_cmd)
        if isinstance(v, list) and len(v) == 3 and v[0] in (b"message", b"smessage"):
            return v[2]
        if isinstance(v, list) and v and v[0] in (b"sunsubscribe", b"unsubscribe"):
            # the server dropped a sharded subscription (slot moved away)
            raise Fail("%s: the server ended the subscription: %r" % (self.sub_cmd, v))
        return None

    def del_latch(self, latch):
        """The unlock latch goes once the release script has answered."""
        try:
            self.conn.call("DEL", latch)
        except RedisError as e:
            expect_ok(e, "DEL")

    def unlock_latch(self):
        """getUnlockLatchName(requestId), requestId generateId(): 16 random
        bytes in hex."""
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
        # LockPubSub.onMessage: UNLOCK_MESSAGE releases one permit of the
        # latch, READ_UNLOCK_MESSAGE one per thread waiting on it
        return message in (UNLOCK_MESSAGE, READ_UNLOCK_MESSAGE)

    def keeps(self, message):
        # the one permit of UNLOCK_MESSAGE stays for a thread that comes to
        # wait later; READ_UNLOCK_MESSAGE's are as many as the threads
        # waiting: none when the thread is trying
        return message == UNLOCK_MESSAGE

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
        """The watchdog's renewal (renewal.LockTask): True while still held."""
        return self.eval(LOCK_RENEW, [self.name], [self.lease, self.field]) == [1]

    def hold(self, seconds):
        """Keep the lock SECONDS, renewing as the watchdog does without
        --lease: RenewalTask runs lockWatchdogTimeout/3 after the lock was
        taken, and again that long after each renewal has answered."""
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
                next_renewal = time.monotonic() + every
                continue
            until = min(end, next_renewal) if watchdog else end
            time.sleep(max(0.0, until - now))

    def unlock_script(self, latch):
        """unlockInnerAsync: 1 released, 0 holds remain, None not held."""
        if self.fair:
            return self.eval(FAIR_UNLOCK,
                             [self.name, self.queue, self.timeouts, self.channel, latch],
                             [UNLOCK_MESSAGE, self.lease, self.field, self.now_ms(),
                              self.pub_cmd, latch_ms()])
        return self.eval(UNLOCK, [self.name, self.channel, latch],
                         [UNLOCK_MESSAGE, self.lease, self.field, self.pub_cmd, latch_ms()])

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


class FencedLock(Lock):
    """RFencedLock NAME: RedissonLock's lock, unlock and watchdog around
    RedissonFencedLock's acquire script, through tryLockAndGetToken (an
    asynchronous loop of its own)."""

    def __init__(self, opts):
        opts.fair = False
        super().__init__(opts)
        self.token_key = hashtagged("redisson_lock_token", self.name)	# tokenName
        self.token = None
        # the asynchronous loop's listener takes an unlock message, and the
        # permit that LockPubSub also leaves on the latch is there for the
        # next wait, which ends at once (one attempt more)
        self.spare = False

    def try_acquire(self):
        ttl, token = self.eval(FENCED_LOCK, [self.name, self.token_key],
                               [self.lease, self.field])
        if ttl == -1:
            self.token = token
            return None
        return ttl

    def acquire(self, wait):
        """tryLockAndGetToken(wait, lease): the loop gives up with no call
        of acquireFailed (RLock's does nothing)."""
        return self.wait_for_lock(wait)

    def await_message(self, sub, pause):
        if self.spare:
            self.spare = False
            return UNLOCK_MESSAGE
        m = super().await_message(sub, pause)
        # only a message that found the loop's listener waiting leaves the
        # permit too; one that came before was the permit it took
        self.spare = m == UNLOCK_MESSAGE and self.waited
        return m


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
                             [UNLOCK_MESSAGE, self.field, self.pub_cmd, latch_ms()])
        return self.eval(WRITE_UNLOCK, [self.name, self.channel, latch],
                         [READ_UNLOCK_MESSAGE, self.lease, self.field + ":write",
                          self.pub_cmd, latch_ms()])


class Semaphore(Client):
    """RPermitExpirableSemaphore NAME: RedissonPermitExpirableSemaphore's
    scripts, and its tryAcquire loop on the channel redisson_sc:{NAME}."""

    def __init__(self, opts):
        super().__init__(opts)
        self.timeouts = tagged(self.name, "timeout")	# suffixName(NAME, "timeout")
        self.channel = self.listen = hashtagged("redisson_sc", self.name)

    def wakes(self, message):
        # SemaphorePubSub.onMessage: the latch is given min(acquired(),
        # message) permits, acquired() the entry's subscribers (this
        # client's one), whether or not they wait
        try:
            return int(message) >= 1
        except ValueError:
            return False

    def keeps(self, message):
        return self.wakes(message)

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
        # the count, as an integer or (GET's) a string
        return int(self.eval(SEM_AVAILABLE, [self.name, self.timeouts, self.channel],
                             [self.now_ms(), self.pub_cmd]))

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


def fenced_main(opts):
    lock = FencedLock(opts)
    if not lock.acquire(opts.wait):
        return 1
    say("acquired %d" % lock.token, stamp())
    if opts.keep:
        return 0
    lock.hold(opts.hold)
    return lock.release()


def read_java_strings(path):
    """Every run of string literals joined by + in the Java file PATH (the
    comments between them skipped), as the strings they make."""
    src = open(path, encoding="utf-8").read()
    toks = []
    for m in re.finditer(r'"((?:[^"\\\n]|\\.)*)"|//[^\n]*|/\*.*?\*/|\s+|.', src, re.S):
        t = m.group(0)
        if t.startswith('"'):
            toks.append(("s", m.group(1).encode().decode("unicode_escape")))
        elif not (t.startswith("//") or t.startswith("/*") or t.isspace()):
            toks.append(("o", t))
    runs, k = [], 0
    while k < len(toks):
        if toks[k][0] != "s":
            k += 1
            continue
        run = toks[k][1]
        k += 1
        while k + 1 < len(toks) and toks[k] == ("o", "+") and toks[k + 1][0] == "s":
            run += toks[k + 1][1]
            k += 2
        runs.append(run)
    return runs


def check_scripts(tree):
    """Each script of SCRIPTS, found byte for byte in its Java file under
    TREE (a checkout of redisson/redisson, or its redisson/ module, or
    the org/redisson source folder)? One line each; 0 when all are."""
    for base in ("redisson/src/main/java/org/redisson", "src/main/java/org/redisson", "."):
        if os.path.exists(os.path.join(tree, base, "RedissonLock.java")):
            break
    else:
        raise Fail("no RedissonLock.java under %s" % tree)
    bad = 0
    for name, java, method in SCRIPTS:
        path = os.path.join(tree, base, java)
        if not os.path.exists(path):
            verdict = "MISSING"
        elif globals()[name] in read_java_strings(path):
            verdict = "same"
        else:
            verdict = "DIFFERS"
        bad += verdict != "same"
        print("%-8s %-16s %s %s" % (verdict, name, java, method), flush=True)
    return 1 if bad else 0


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
    p.add_argument("--port", type=int)
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
    fc = sp.add_parser("fenced")
    fc.add_argument("name")
    fc.add_argument("--wait", type=float)
    fc.add_argument("--lease", type=int)
    fc.add_argument("--hold", type=float, default=0.0)
    fc.add_argument("--watchdog", type=int, default=30000)
    fc.add_argument("--keep", action="store_true")
    cs = sp.add_parser("check-scripts")
    cs.add_argument("tree")
    rw = sp.add_parser("rwlock")
    rw.add_argument("name")
    rw.add_argument("op", choices=("read", "write", "unlock-read", "unlock-write"))
    rw.add_argument("--wait", type=float)
    rw.add_argument("--lease", type=int)
    rw.add_argument("--hold", type=float, default=0.0)
    rw.add_argument("--watchdog", type=int, default=30000)
    rw.add_argument("--keep", action="store_true")
    rw.add_argument("--id", default=argparse.SUPPRESS)
    fc.add_argument("--id", default=argparse.SUPPRESS)
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
    for sub in (fc, rw, sem, sset, sacq, srel, savail, supd):
        sub.add_argument("--skew", type=int, default=argparse.SUPPRESS)
        sub.add_argument("--label", default=argparse.SUPPRESS)
    opts = p.parse_args()
    if opts.port is None and opts.cmd != "check-scripts":
        p.error("the following arguments are required: --port")
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
    if opts.fair and opts.cmd == "fenced":
        p.error("--fair is for lock and unlock")
    if ((opts.cmd in ("lock", "fenced") or
         (opts.cmd == "rwlock" and opts.op in ("read", "write")))
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
    if opts.cmd == "check-scripts":
        return check_scripts(opts.tree)
    if opts.cmd == "fenced":
        return fenced_main(opts)
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
