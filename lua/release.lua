-- release: give back one hold of lock NAME by OWNER; the last one frees it
-- and wakes the waiters: "0" on the lock's channel (Redisson's RLock
-- waiters, and the room's listener), the head of the fair queue on its own
-- channel (RFairLock), and one plain waiter of the room on its own.
-- KEYS[1]  NAME                           hash: owner -> hold count, and
--                                          redlock's marker "mode" -> "write"
-- KEYS[2]  redisson_lock__channel:{NAME}  channel; CHANNEL:OWNER wakes a fair waiter
-- KEYS[3]  redlock_holder:{NAME}          hash: owner -> JSON metadata
-- KEYS[4]  redisson_lock_queue:{NAME}     list: fair waiters, head first
-- KEYS[5]  redisson_lock_timeout:{NAME}   zset: fair waiter -> deadline (ms)
-- KEYS[6]  redlock_waiter:{NAME}          hash: fair waiter -> JSON metadata
-- KEYS[7]  redlock_room:{NAME}            zset: plain waiter -> deadline (ms)
-- KEYS[8]  redlock_listener:{NAME}        string: the plain waiter that
--                                          listens to the lock's channel
-- KEYS[9]  redisson_rwlock:{NAME}         channel: "1" when a hold with
--                                          redlock's marker goes (Redisson's
--                                          read and write locks wait there)
-- ARGV[1]  owner token
-- ARGV[2]  message published on release ("0"); empty: the release wakes
--          nobody (an attempt undone on the masters that granted it
--          because another master's holder is a Java client's: only
--          that holder's release frees NAME, and it wakes the waiters)
-- KEYS[10] redlock_log:{NAME}            stream: history
-- ARGV[3]  history: about how many events to keep ("": none kept)
-- ARGV[4]  history: the stream's expiry, in ms (0: never), should the
--          release find it gone
-- ARGV[5]  history: the caller's part of its entry (rl_history_entry:
--          owner, COMMAND's exit status where known, "event")
-- ARGV[6]  flags: "u", an acquisition undone (its minimum hold is not
--          kept); "l", the watchdog's release, which records a hold that
--          it finds gone as lost
-- ARGV[7]  PUBLISH or SPUBLISH: the command that wakes waiters
-- Returns {2, nopub}       released: key deleted, waiters woken; nopub: the
--                          channel the server refused PUBLISH on (ACL), so
--                          waiters were not woken, else nil
--         {2, nil, until}  the last hold given back before the end of its
--                          minimum hold (--min-hold, until_ms in its
--                          holder record): the hold stays, finished, with
--                          its lease set to what is left of it, and nobody
--                          is woken; so again for a finished hold
--         {1, holds}       one hold released, HOLDS remain
--         {0, held}        OWNER does not hold NAME (held = 1: someone else does)
--         {-1, key, type}  KEY is not of the type a lock needs; nothing changed
-- The last hold is given back with deletes only, which a server out of
-- memory still runs.
rl_pubcmd = ARGV[7] or rl_pubcmd
-- Each key is checked where a command would fail on it, before anything
-- is written: NAME by this read, the holder records by the first write.
local r = redis.pcall('HMGET', KEYS[1], ARGV[1], 'mode', ARGV[1] .. ':write')
if r.err then return {-1, KEYS[1], redis.call('TYPE', KEYS[1]).ok} end
local holds = tonumber(r[1])
-- A Redisson read-write lock ("mode" other than redlock's marker, or
-- OWNER's write hold beside it, and a lease key per read hold) is never
-- redlock's to give back: taking a count off would strand its keys.
if not rl_plain_hold(r[2], r[3]) then holds = nil end
if not holds then
  if string.find(ARGV[6] or '', 'l', 1, true) then
    rl_log(KEYS[10], ARGV[3], ARGV[4], ARGV[5] .. 'lost', true)
  end
  return {0, redis.call('EXISTS', KEYS[1])}
end
if holds > 1 then return {1, redis.call('HINCRBY', KEYS[1], ARGV[1], -1)} end
local rec = redis.pcall('HGET', KEYS[3], ARGV[1])
if type(rec) == 'table' then
  return {-1, KEYS[3], redis.call('TYPE', KEYS[3]).ok}
end
-- The clock is read for a minimum hold only (the history's entries are
-- timed by their ids).
local keep = rl_until(rec)
local now_ms = 0
if keep then
  local _
  _, now_ms = rl_time()
  keep = rl_keep_until(rec, now_ms, ARGV[6])
end
if keep then
  if not rl_finished(rec) then
    redis.call('HSET', KEYS[3], ARGV[1], rl_set_finished(rec, true))
    redis.call('PEXPIRE', KEYS[1], keep - now_ms)
    redis.call('PEXPIRE', KEYS[3], keep - now_ms)
    if KEYS[10] and ARGV[3] ~= '' then
      rl_log(KEYS[10], ARGV[3], ARGV[4], ARGV[5] ..
             string.format('released\31held_until\31%.0f', keep))
    end
  end
  return {2, false, keep}
end
if type(redis.pcall('HDEL', KEYS[3], ARGV[1])) == 'table' then
  return {-1, KEYS[3], redis.call('TYPE', KEYS[3]).ok}
end
redis.call('DEL', KEYS[1])
-- Recorded after the deletes, which a server out of memory still runs.
-- The owner's host, pid, command and token are in its acquisition's
-- event, and how long it held NAME between the two entries' ids.
-- An acquisition undone (flags "u": it won too few masters, or was
-- never used) is recorded as such, not as a run.
if KEYS[10] and ARGV[3] ~= '' then
  rl_log(KEYS[10], ARGV[3], ARGV[4],
         ARGV[5] .. (ARGV[6] == 'u' and 'undone' or 'released'))
end
if ARGV[2] == '' then return {2, false} end
local nopub = false
-- No fair queue and no room (the common case): one call for both.
if redis.call('EXISTS', KEYS[4], KEYS[7] or KEYS[4]) > 0 and
    not (rl_wake_head(KEYS[4], KEYS[5], KEYS[6], KEYS[2], nil, ARGV[2]) and
         rl_room_wake(KEYS[7], KEYS[8], KEYS[2], ARGV[2])) then
  nopub = KEYS[2]
end
if not rl_publish(KEYS[2], ARGV[2]) then nopub = KEYS[2] end
-- Redisson's read and write locks that the marker held back wait on the
-- read-write lock's channel; "1" wakes them all, as after a write. Not
-- reported when refused (ACL): NAME's own waiters were woken, and those
-- look again when the lease they were told runs out.
if r[2] and KEYS[9] then rl_publish(KEYS[9], '1') end
return {2, nopub}
