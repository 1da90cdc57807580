-- rw_release: give back one read or write hold of read-write lock NAME by
-- OWNER (Redisson's RedissonReadLock and RedissonWriteLock unlock). When
-- NAME goes, every waiter is woken: Redisson's read and write locks on
-- the read-write lock's channel, RLock waiters and the room's listener on
-- the lock channel, and, as release does, the head of the fair queue
-- (RFairLock's waiters hear nothing else) and one waiter of the room on
-- their own channels.
-- KEYS[1]  NAME                            hash: mode, OWNER -> read holds,
--                                          OWNER:write -> write holds
-- KEYS[2]  redisson_rwlock:{NAME}          channel: "0" after the last
--                                          read, "1" after a write
-- KEYS[3]  redisson_lock__channel:{NAME}   channel: "0" when NAME goes
-- KEYS[4]  redlock_holder:{NAME}           hash: field -> JSON metadata
-- KEYS[5]  {NAME}:OWNER:rwlock_timeout     the caller's read leases: KEYS[5]:N
-- KEYS[6]  {NAME}                          only named: a read hold N of
--                                          FIELD has the lease key
--                                          KEYS[6]:FIELD:rwlock_timeout:N
-- KEYS[7]  redisson_lock_queue:{NAME}      list: fair waiters, head first
-- KEYS[8]  redisson_lock_timeout:{NAME}    zset: fair waiter -> deadline (ms)
-- KEYS[9]  redlock_waiter:{NAME}           hash: fair waiter -> JSON metadata
-- KEYS[10] redlock_room:{NAME}             zset: plain waiter -> deadline (ms)
-- KEYS[11] redlock_listener:{NAME}         string: the plain waiter that
--                                          listens to the lock's channel
--          (KEYS[7..11]: a caller that passes six wakes no fair waiter and
--          no waiter of the room on its own channel)
-- KEYS[12] redlock_log:{NAME}              stream: history (with all
--          eleven keys before it)
-- ARGV[1]  owner token
-- ARGV[2]  "read" or "write"
-- ARGV[3]  history: about how many events to keep ("": none kept)
-- ARGV[4]  history: the stream's expiry, in ms (0: never), should the
--          release find it gone
-- ARGV[5]  history: the caller's part of its entry (rl_history_entry:
--          owner, COMMAND's exit status where known, kind, "event"): the
--          last hold of that kind given back records "released" (with
--          held_until when its minimum hold is kept)
-- ARGV[6]  flags: "u", an acquisition undone (its minimum hold is not
--          kept); "l", the watchdog's release, which records a hold that
--          it finds gone as lost
-- ARGV[7]  PUBLISH or SPUBLISH: the command that wakes waiters
-- Returns {2, nopub}       OWNER's last hold of that kind given back; nopub:
--                          a channel the server refused PUBLISH on (ACL),
--                          else nil
--         {2, nil, until}  OWNER's last hold of that kind given back before
--                          the end of its minimum hold (--min-hold): it
--                          stays, finished (one hold, a read hold's lease
--                          key kept), with its lease set to what is left;
--                          nobody is woken; so again for a finished hold
--         {1, holds}       one hold given back, HOLDS of that kind remain
--         {0, exists}      OWNER has no hold of that kind (exists = 1: NAME
--                          is there, held by others or a plain lock, which
--                          is never touched)
--         {-1, key, type}  KEY is not of the type a lock needs; nothing changed
-- Leases: a read release sets NAME's to the longest of the read holds left
-- (Redisson's rule), but in write mode only lengthens it, so that the
-- writer's lease is never cut; a write release with holds left keeps it.
-- The last write hold given back while the writer's own reads remain turns
-- NAME to read mode, as Redisson does, and says so with "1" on KEYS[2]:
-- waiting readers may come in. When NAME goes, the holder hash goes too.
rl_pubcmd = ARGV[7] or rl_pubcmd
local owner, kind, flags = ARGV[1], ARGV[2], ARGV[6] or ''
local logkey = ARGV[3] ~= '' and KEYS[12]
local bad = rl_badtype(KEYS[1], 'hash') or rl_badtype(KEYS[4], 'hash')
if bad then return bad end
local mode = redis.call('HGET', KEYS[1], 'mode')
local field = kind == 'write' and owner .. ':write' or owner
local holds = mode and tonumber(redis.call('HGET', KEYS[1], field))
-- In write mode only the writer reads: OWNER beside redlock's marker and
-- no OWNER:write is a plain hold, never given back here.
if kind == 'read' and mode == 'write' and
    redis.call('HEXISTS', KEYS[1], owner .. ':write') == 0 then
  holds = nil
end
if not holds then
  if logkey and string.find(flags, 'l', 1, true) then
    rl_log(logkey, ARGV[3], ARGV[4], ARGV[5] .. 'lost', true)
  end
  return {0, redis.call('EXISTS', KEYS[1])}
end

-- NAME is gone: wake everyone; MSG on the read-write lock's channel.
local function freed(msg)
  redis.call('DEL', KEYS[1])
  redis.call('DEL', KEYS[4])
  local nopub = false
  if not rl_publish(KEYS[2], msg) then nopub = KEYS[2] end
  -- No fair queue and no room (the common case): one call for both.
  if KEYS[11] and redis.call('EXISTS', KEYS[7], KEYS[10]) > 0 and
      not (rl_wake_head(KEYS[7], KEYS[8], KEYS[9], KEYS[3], nil, '0') and
           rl_room_wake(KEYS[10], KEYS[11], KEYS[3], '0')) then
    nopub = KEYS[3]
  end
  if not rl_publish(KEYS[3], '0') then nopub = KEYS[3] end
  return {2, nopub}
end

-- The longest lease left of the read holds in NAME, -2 when none is left.
local function longest()
  local best = -2
  local f = redis.call('HGETALL', KEYS[1])
  for i = 1, #f, 2 do
    local n = tonumber(f[i + 1])
    if f[i] ~= 'mode' and n and string.sub(f[i], -6) ~= ':write' then
      for j = n, 1, -1 do
        local left = redis.call('PTTL',
            KEYS[6] .. ':' .. f[i] .. ':rwlock_timeout:' .. j)
        if left > best then best = left end
      end
    end
  end
  return best
end

-- The last hold of FIELD given back before its minimum hold ends: it
-- stays until then (the lease of NAME, of the holder records and of the
-- read hold set to what is left, only lengthened where others hold too).
local function finish(rec, keep, ms)
  if rl_finished(rec) then return {2, false, keep} end
  redis.call('HSET', KEYS[4], field, rl_set_finished(rec, true))
  if logkey then
    rl_log(logkey, ARGV[3], ARGV[4], ARGV[5] ..
           string.format('released\31held_until\31%.0f', keep))
  end
  local alone = redis.call('HLEN', KEYS[1]) <= 2
  if kind == 'read' then
    redis.call('SET', KEYS[5] .. ':1', 1, 'PX', ms)
  end
  if kind == 'read' and mode == 'read' then
    redis.call('PEXPIRE', KEYS[1], math.max(longest(), ms))
  elseif alone then
    redis.call('PEXPIRE', KEYS[1], ms)
  else
    rl_lengthen(KEYS[1], ms)
  end
  if alone then redis.call('PEXPIRE', KEYS[4], ms) else
    rl_lengthen(KEYS[4], ms) end
  return {2, false, keep}
end

if holds == 1 then
  local rec = redis.call('HGET', KEYS[4], field)
  local _, now_ms = rl_time()
  local keep = rl_keep_until(rec, now_ms, flags)
  if keep then return finish(rec, keep, keep - now_ms) end
end

local left = redis.call('HINCRBY', KEYS[1], field, -1)
if kind == 'read' then
  redis.call('DEL', KEYS[5] .. ':' .. (left + 1))
end
if left > 0 then return {1, left} end
redis.call('HDEL', KEYS[1], field)
redis.call('HDEL', KEYS[4], field)
-- Recorded after the deletes, which a server out of memory still runs.
-- An acquisition undone (flags "u") is no run: recorded as such.
if logkey then
  rl_log(logkey, ARGV[3], ARGV[4],
         ARGV[5] .. (ARGV[6] == 'u' and 'undone' or 'released'))
end
if kind == 'write' then
  if redis.call('HLEN', KEYS[1]) <= 1 then return freed('1') end
  redis.call('HSET', KEYS[1], 'mode', 'read')
  local nopub = false
  if not rl_publish(KEYS[2], '1') then nopub = KEYS[2] end
  return {2, nopub}
end
if redis.call('HLEN', KEYS[1]) > 1 then
  local ms = longest()
  if mode == 'write' then
    if ms > 0 then rl_lengthen(KEYS[1], ms) end
    return {2, false}
  end
  if ms > 0 then
    redis.call('PEXPIRE', KEYS[1], ms)
    return {2, false}
  end
end
return freed('0')
