-- rw_release: give back one read or write hold of read-write lock NAME by
-- OWNER (Redisson's RedissonReadLock and RedissonWriteLock unlock). When
-- NAME goes, every waiter is woken: Redisson's read and write locks on
-- the read-write lock's channel, RLock waiters and the room's listener on
-- the lock channel, and, as release does, the head of the fair queue
-- (RFairLock's waiters hear nothing else) and one waiter of the room on
-- their own channels.
-- KEYS[1]  lock       NAME                           hash: mode, OWNER -> read
--          holds, OWNER:write -> write holds
-- KEYS[2]  rwchannel  redisson_rwlock:{NAME}         channel: "0" after the
--          last read, "1" after a write
-- KEYS[3]  channel    redisson_lock__channel:{NAME}  channel: "0" when NAME
--          goes
-- KEYS[4]  holder     redlock_holder:{NAME}          hash: field -> JSON
--          metadata
-- KEYS[5]  leases     {NAME}:OWNER:rwlock_timeout    the caller's read leases:
--          K_leases:N
-- KEYS[6]  tag        {NAME}                         only named: a read hold N
--          of FIELD has the lease key K_tag:FIELD:rwlock_timeout:N
-- KEYS[7]  queue      redisson_lock_queue:{NAME}     list: fair waiters, head
--          first
-- KEYS[8]  timeout    redisson_lock_timeout:{NAME}   zset: fair waiter ->
--          deadline (ms)
-- KEYS[9]  waiter     redlock_waiter:{NAME}          hash: fair waiter -> JSON
--          metadata
-- KEYS[10] room       redlock_room:{NAME}            zset: plain waiter ->
--          deadline (ms)
-- KEYS[11] listener   redlock_listener:{NAME}        string: the plain waiter
--          that listens to the lock's channel
-- KEYS[12] log        redlock_log:{NAME}             stream: history
-- ARGV[1]  owner           owner token
-- ARGV[2]  mode            "read" or "write"
-- ARGV[3]  hist_max        history: about how many events to keep ("": none
--                          kept)
-- ARGV[4]  hist_ttl        history: the stream's expiry, in ms (0: never),
--                          should the release find it gone
-- ARGV[5]  hist_entry      history: the caller's part of its entry
--                          (rl_history_entry: owner, COMMAND's exit status
--                          where known, kind, "event"): the last hold of that
--                          kind given back records "released" (with held_until
--                          when its minimum hold is kept)
-- ARGV[6]  flags           flags: "u", an acquisition undone (its minimum hold
--                          is not kept); "l", the watchdog's release, which
--                          records a hold that it finds gone as lost
-- ARGV[7]  publish         PUBLISH or SPUBLISH: the command that wakes waiters
-- RETURNS  released   {2, nopub, until}
-- RETURNS  nested     {1, holds}
-- RETURNS  not_held   {0, exists}
-- RETURNS  wrongtype  {-1, key, type}
-- Returns {2, nopub}       OWNER's last hold of that kind given back; nopub:
--                          a channel the server refused PUBLISH on (ACL),
--                          else nil
--         {2, nopub, until}
--                          OWNER's last hold of that kind given back before
--                          the end of its minimum hold (--min-hold): it
--                          stays, finished (one hold, a read hold's lease
--                          key kept), with its lease set to what is left;
--                          every waiter is woken to learn that lease;
--                          given back again, nothing changes and nobody
--                          is woken
--         {1, holds}       one hold given back, HOLDS of that kind remain
--         {0, exists}      OWNER has no hold of that kind (exists = 1: NAME
--                          is there, held by others or a plain lock, which
--                          is never touched)
--         {-1, key, type}  KEY is not of the type a lock needs; nothing changed
-- Leases: a read release sets NAME's to the longest of the read holds left
-- (Redisson's rule), but in write mode only lengthens it, so that the
-- writer's lease is never cut; a write release with holds left keeps it.
-- The last write hold given back while the writer's own reads remain turns
-- NAME to read mode, as Redisson does, and says so with "1" on K_rwchannel:
-- waiting readers may come in. When NAME goes, the holder hash goes too.
rl_pubcmd = A_publish or rl_pubcmd
local owner, kind, flags = A_owner, A_mode, A_flags or ''
local logkey = A_hist_max ~= '' and K_log
local bad = rl_badtype(K_lock, 'hash') or rl_badtype(K_holder, 'hash')
if bad then return bad end
local mode = redis.call('HGET', K_lock, 'mode')
local field = kind == 'write' and owner .. ':write' or owner
local holds = mode and tonumber(redis.call('HGET', K_lock, field))
-- In write mode only the writer reads: OWNER beside redlock's marker and
-- no OWNER:write is a plain hold, never given back here.
if kind == 'read' and mode == 'write' and
    redis.call('HEXISTS', K_lock, owner .. ':write') == 0 then
  holds = nil
end
if not holds then
  if logkey and string.find(flags, 'l', 1, true) then
    rl_log(logkey, A_hist_max, A_hist_ttl, A_hist_entry .. 'lost', true)
  end
  return {0, redis.call('EXISTS', K_lock)}
end

-- Wake everyone: MSG on the read-write lock's channel; the channel the
-- server refused PUBLISH on (ACL), or false.
local function wake(msg)
  local nopub = false
  if not rl_publish(K_rwchannel, msg) then nopub = K_rwchannel end
  -- No fair queue and no room (the common case): one call for both; a
  -- command the ACL refuses here wakes nobody, as in release.
  local ok, woke = pcall(function()
    return not K_listener or redis.call('EXISTS', K_queue, K_room) == 0 or
        (rl_wake_head(K_queue, K_timeout, K_waiter, K_channel, nil, '0') and
         rl_room_wake(K_room, K_listener, K_channel, '0'))
  end)
  if not (ok and woke) then nopub = K_channel end
  if not rl_publish(K_channel, '0') then nopub = K_channel end
  return nopub
end

-- NAME is gone: wake everyone; MSG on the read-write lock's channel.
local function freed(msg)
  redis.call('DEL', K_lock)
  redis.call('DEL', K_holder)
  return {2, wake(msg)}
end

-- The longest lease left of the read holds in NAME, -2 when none is left.
local function longest()
  local best = -2
  local f = redis.call('HGETALL', K_lock)
  for i = 1, #f, 2 do
    local n = tonumber(f[i + 1])
    if f[i] ~= 'mode' and n and string.sub(f[i], -6) ~= ':write' then
      for j = n, 1, -1 do
        local left = redis.call('PTTL',
            K_tag .. ':' .. f[i] .. ':rwlock_timeout:' .. j)
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
  redis.call('HSET', K_holder, field, rl_set_finished(rec, true))
  if logkey then
    rl_log(logkey, A_hist_max, A_hist_ttl, A_hist_entry ..
           string.format('released\31held_until\31%.0f', keep))
  end
  local alone = redis.call('HLEN', K_lock) <= 2
  if kind == 'read' then
    redis.call('SET', K_leases .. ':1', 1, 'PX', ms)
  end
  if kind == 'read' and mode == 'read' then
    redis.call('PEXPIRE', K_lock, math.max(longest(), ms))
  elseif alone then
    redis.call('PEXPIRE', K_lock, ms)
  else
    rl_lengthen(K_lock, ms)
  end
  if alone then redis.call('PEXPIRE', K_holder, ms) else
    rl_lengthen(K_holder, ms) end
  -- Nothing publishes when that lease runs out: the waiters learn it now.
  return {2, wake('1'), keep}
end

if holds == 1 then
  local rec = redis.call('HGET', K_holder, field)
  local _, now_ms = rl_time()
  local keep = rl_keep_until(rec, now_ms, flags)
  if keep then return finish(rec, keep, keep - now_ms) end
end

local left = redis.call('HINCRBY', K_lock, field, -1)
if kind == 'read' then
  redis.call('DEL', K_leases .. ':' .. (left + 1))
end
if left > 0 then return {1, left} end
redis.call('HDEL', K_lock, field)
redis.call('HDEL', K_holder, field)
-- Recorded after the deletes, which a server out of memory still runs.
-- An acquisition undone (flags "u") is no run: recorded as such.
if logkey then
  rl_log(logkey, A_hist_max, A_hist_ttl,
         A_hist_entry .. (A_flags == 'u' and 'undone' or 'released'))
end
if kind == 'write' then
  if redis.call('HLEN', K_lock) <= 1 then return freed('1') end
  redis.call('HSET', K_lock, 'mode', 'read')
  local nopub = false
  if not rl_publish(K_rwchannel, '1') then nopub = K_rwchannel end
  return {2, nopub}
end
if redis.call('HLEN', K_lock) > 1 then
  local ms = longest()
  if mode == 'write' then
    if ms > 0 then rl_lengthen(K_lock, ms) end
    return {2, false}
  end
  if ms > 0 then
    redis.call('PEXPIRE', K_lock, ms)
    return {2, false}
  end
end
return freed('0')
