-- permit_acquire: take one of the LIMIT permits of NAME for OWNER, in
-- Redisson's RPermitExpirableSemaphore layout, each permit with a lease.
-- KEYS[1]  semaphore  NAME                           string: permits free
-- KEYS[2]  permits    {NAME}:timeout                 zset: permit id -> expiry
--          (ms)
-- KEYS[3]  holder     redlock_holder:{NAME}          hash: permit id -> JSON
--          metadata; ID:n -> holds, for a permit re-entered by a nested
--          redlock; expires with the longest lease
-- KEYS[4]  token      redisson_lock_token:{NAME}     string: fencing counter
-- KEYS[5]  channel    redisson_sc:{NAME}             channel: permits free,
--          after a change that frees some
-- KEYS[6]  room       redlock_room:{NAME}            zset: waiter (permit id)
--          -> deadline (ms)
-- KEYS[7]  listener   redlock_listener:{NAME}        string: the waiter that
--          listens to the semaphore's channel
-- ARGV[1]  lease           lease in milliseconds
-- ARGV[2]  permit          the owner's key, hex digits (rl_permit): the
--                          caller's name in the room; its permit's id is 16
--                          bytes, as Redisson's
-- ARGV[3]  limit           LIMIT: how many permits NAME has
-- ARGV[4]  host            host of the caller
-- ARGV[5]  pid             pid of the caller
-- ARGV[6]  user            user of the caller
-- ARGV[7]  cmd             command of the caller
-- ARGV[8]  waiter_timeout  waiter timeout in ms: how long a waiter stays in the
--                          room
-- ARGV[9]  flags           flags; "j": join the room when none is free, "w":
--                          the caller is in the room (it leaves it when it
--                          takes a permit), "e": re-enter only (a nested
--                          call through REDLOCK_HELD): when OWNER holds no
--                          permit, nothing is taken (see rl_gone)
-- KEYS[8]  log        redlock_log:{NAME}             stream: history
-- ARGV[10] min_hold        --min-hold in ms (0: none), recorded as in
--                          acquire.lua
-- ARGV[11] hist_max        history: about how many events to keep ("": none
--                          kept)
-- ARGV[12] hist_ttl        history: the stream's expiry after an event, in ms
--                          (0: never)
-- ARGV[13] hist_entry      history: the caller's part of its entries
--                          (rl_history_entry: owner, host, pid, user, cmd, how
--                          long it waited, kind, "event"): a fresh permit
--                          records "acquired" with its token, a caller without
--                          "j" that finds none free "busy"; a re-entry records
--                          nothing
-- ARGV[14] holder_json     the start of the caller's holder record (see
--                          rl_holder_meta)
-- ARGV[15] publish         PUBLISH or SPUBLISH
-- The first caller sets the number of permits (as trySetPermits does);
-- one that names another number resizes NAME to it when no permit is
-- taken (as setPermits does), and is refused, nothing changed, when some
-- are.
-- Expiries are on the server's clock; expired permits are given back
-- first (as Redisson's calls do, by their clients' clocks), and the
-- holder records of permits no longer taken go. The replies
-- have the shapes of acquire's. A waiter that takes a permit leaves the
-- room, and wakes another waiter there when permits are still free
-- (so that a release or unlock --force that frees several wakes them in
-- turn).
-- RETURNS  acquired     {1, fence, holds, nopub, skipped}
-- RETURNS  busy         {0, pttl, owner, host, pid, user, cmd, held_ms, nil,
--                        queued, nil x 3, listen, nil, held_until, nil x 4,
--                        gone}
-- RETURNS  other_limit  {-2, permits, taken}
-- RETURNS  wrongtype    {-1, key, type}
-- Returns {1, fence, holds, nopub, skipped}
--                                      acquired; holds > 1: OWNER held a
--                                      permit already (re-entered, lease
--                                      lengthened); nopub: the channel this
--                                      user may not publish on, else nil;
--                                      skipped: why the history's XADD was
--                                      refused, or nil
--         {0, wait_ms, id, host, pid, user, cmd, held_ms, nil, taken,
--          nil, nil, nil, listen, nil, held_until}
--                                      none free; the first permit to
--                                      expire does so in wait_ms (nil: none
--                                      expires), id (in hex) and the rest
--                                      are its;
--                                      listen: 1 when the caller is the
--                                      room's listener; held_until: the
--                                      end of its minimum hold when that
--                                      permit is finished (--min-hold)
--         {-2, permits, taken}         NAME has that many permits, not
--                                      LIMIT, and that many are taken
--         {0, nil x 19, 1}             "e": OWNER holds no permit to
--                                      re-enter (rl_gone)
--         {-1, key, type}              KEY is not of the type needed
rl_pubcmd = A_publish or rl_pubcmd
-- Only a caller that waits joins the room; one in it leaves it when it
-- takes a permit, and wakes the next.
local room = K_listener ~= nil and string.find(A_flags or '', 'j', 1, true)
local member = K_listener ~= nil and string.find(A_flags or '', 'w', 1, true)
local bad, free = rl_semaphore_bad(K_semaphore, K_permits, K_holder)
if bad then return bad end
bad = rl_counter_bad(K_token)
if bad then return bad end
-- Before the first write of a call that writes several keys: every
-- command that a permit's acquisition and release write with allowed on
-- its key (an ACL), else the refusal and nothing written: a script is not
-- rolled back, and a refusal halfway would keep a permit's count taken
-- (the semaphore short of it for ever) or a record without its expiry.
local probed = false
local function denied()
  if probed then return nil end
  probed = true
  local need = {'SET', K_semaphore, 'INCRBY', K_semaphore, 'DECR',
                K_semaphore, 'INCR', K_semaphore, 'ZADD', K_permits, 'ZREM',
                K_permits, 'HSET', K_holder, 'HDEL', K_holder, 'HINCRBY',
                K_holder, 'PEXPIRE', K_holder, 'PTTL', K_holder, 'SET',
                K_token, 'INCR', K_token}
  if member then
    for _, v in ipairs({'ZREM', K_room, 'DEL', K_listener}) do
      need[#need + 1] = v
    end
  end
  return rl_denied(need)
end
local now_us, now_ms = rl_time()
local limit = tonumber(A_limit)
local taken = redis.call('ZCARD', K_permits)
-- Re-enter only: no semaphore, no permit of OWNER's (checked again below,
-- once expired permits are given back).
local reenter = string.find(A_flags or '', 'e', 1, true)
if reenter and not free then return rl_gone() end
free = tonumber(free)
if not free or free + taken ~= limit then
  -- Another size (or none yet): NAME gets LIMIT permits when none is
  -- taken, a permit past its expiry counting as not taken; else the
  -- refusal, and nothing is changed. No count of free permits beside
  -- live ones: the size is those.
  local live = taken > 0 and
      redis.call('ZCOUNT', K_permits, '(' .. now_ms, '+inf') or 0
  if live > 0 then return {-2, free and free + taken or live, live} end
  -- None taken: OWNER's is not, and re-entering changes nothing.
  if reenter then return rl_gone() end
  bad = denied()
  if bad then return bad end
  for _, id in ipairs(redis.call('ZRANGE', K_permits, 0, -1)) do
    redis.call('ZREM', K_permits, id)
  end
  if free then
    -- As Redisson's setPermits: the count moved (its expiry kept), the
    -- new number published.
    redis.call('INCRBY', K_semaphore, limit - free)
    rl_publish(K_channel, tostring(limit))
  else
    redis.call('SET', K_semaphore, limit)
  end
  free, taken = limit, 0
end
-- Permits past their expiry come back.
local gone = redis.call('ZRANGEBYSCORE', K_permits, '-inf', now_ms)
bad = #gone > 0 and denied()
if bad then return bad end
for _, id in ipairs(gone) do
  redis.call('ZREM', K_permits, id)
end
if #gone > 0 then
  free = redis.call('INCRBY', K_semaphore, #gone)
  rl_publish(K_channel, tostring(free))
end
rl_permits_tidy(K_holder, K_permits)
local nopub = (not rl_may_publish(K_channel)) and K_channel
local expiry = now_ms + tonumber(A_lease)
local id = rl_permit(K_permits, A_permit)
local mine = tonumber(redis.call('ZSCORE', K_permits, id))
local rec = mine and redis.call('HGET', K_holder, id)
local longer = mine and rl_hold_longer(rec, now_ms, A_min_hold)
if longer and longer ~= rec then
  redis.call('HSET', K_holder, id, longer)
  rec = longer
end
if mine and rl_finished(rec) then
  -- A finished permit (--min-hold) taken up again by its owner: one hold.
  if mine < expiry then redis.call('ZADD', K_permits, expiry, id) end
  redis.call('HSET', K_holder, id, rl_set_finished(rec, false))
  rl_lengthen(K_holder, math.max(mine, expiry) - now_ms)
  return {1, rl_fence(rec) or '0', 1, nopub}
end
if reenter and not mine then return rl_gone() end
if mine then
  if mine < expiry then redis.call('ZADD', K_permits, expiry, id) end
  local holds = redis.call('HINCRBY', K_holder, id .. ':n', 1)
  if holds == 1 then holds = redis.call('HINCRBY', K_holder, id .. ':n', 1) end
  rl_lengthen(K_holder, math.max(mine, expiry) - now_ms)
  return {1, rl_fence(redis.call('HGET', K_holder, id)) or '0', holds,
          nopub}
end
if free < 1 then
  local listen = false
  if room then
    listen = rl_room_join(K_room, K_listener, A_permit, now_ms,
                          tonumber(A_waiter_timeout))
  end
  local first = redis.call('ZRANGE', K_permits, 0, 0, 'WITHSCORES')
  local d = rl_decode(first[1] and redis.call('HGET', K_holder, first[1]))
  -- A caller that does not wait goes without it: a busy skip, naming the
  -- owner of the permit that expires first.
  if not string.find(A_flags or '', 'j', 1, true) and K_log and
      A_hist_max ~= '' then
    rl_log(K_log, A_hist_max, A_hist_ttl, A_hist_entry .. 'busy\31holder\31' ..
           string.gsub(tostring(d.owner or ''), '\31', '?'), true)
  end
  if not first[1] then
    return {0, false, false, false, false, false, false, false, false,
            false, false, false, false, listen, false, false}
  end
  local since = tonumber(d.since_ms)
  return {0, tonumber(first[2]) - now_ms, rl_permit_hex(first[1]),
          d.host or false,
          tonumber(d.pid) or false, d.user or false, d.cmd or false,
          since and (now_ms - since) or false, false, taken - #gone,
          false, false, false, listen, false,
          d.finished and tonumber(d.until_ms) or false}
end
bad = denied()
if bad then return bad end
local fence, old = rl_next_fence(K_token, now_us)
free = redis.call('DECR', K_semaphore)
redis.call('ZADD', K_permits, expiry, id)
-- The record names the owner token: the id, a hash of it, does not.
local meta = rl_holder_meta(A_holder_json or rl_holder_start(A_host, A_pid,
                            A_user, A_cmd), now_ms, fence, A_min_hold)
redis.call('HSET', K_holder, id, string.sub(meta, 1, -2) .. ',"owner":' ..
           cjson.encode(rl_permit_owner(A_permit)) .. '}')
rl_lengthen(K_holder, A_lease)
-- Taken now: a read the ACL refuses in the room wakes nobody.
if member then
  pcall(function()
    if not rl_room_leave(K_room, K_listener, A_permit, K_channel,
                         tostring(free)) and free > 0 then
      rl_room_wake(K_room, K_listener, K_channel, tostring(free))
    end
  end)
end
local skipped = K_log and A_hist_max ~= '' and
    rl_log(K_log, A_hist_max, A_hist_ttl,
           A_hist_entry .. 'acquired\31fence\31' .. fence,
           rl_log_renews(A_hist_ttl, now_us, old))
return {1, fence, 1, nopub, skipped}
