-- permit_acquire: take one of the LIMIT permits of NAME for OWNER, in
-- Redisson's RPermitExpirableSemaphore layout, each permit with a lease.
-- KEYS[1]  NAME                           string: permits free
-- KEYS[2]  {NAME}:timeout                 zset: permit id -> expiry (ms)
-- KEYS[3]  redlock_holder:{NAME}          hash: permit id -> JSON metadata;
--                                          ID:n -> holds, for a permit
--                                          re-entered by a nested redlock;
--                                          expires with the longest lease
-- KEYS[4]  redisson_lock_token:{NAME}     string: fencing counter
-- KEYS[5]  redisson_sc:{NAME}             channel: permits free, after a
--                                          change that frees some
-- KEYS[6]  redlock_room:{NAME}            zset: waiter (permit id) ->
--                                          deadline (ms)
-- KEYS[7]  redlock_listener:{NAME}        string: the waiter that listens
--                                          to the semaphore's channel
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  the owner's key, hex digits (rl_permit): the caller's name in
--          the room; its permit's id is 16 bytes, as Redisson's
-- ARGV[3]  LIMIT: how many permits NAME has
-- ARGV[4..7] host, pid, user, command of the caller
-- ARGV[8]  waiter timeout in ms: how long a waiter stays in the room
-- ARGV[9]  flags; "j": join the room when none is free, "w": the caller
--          is in the room (it leaves it when it takes a permit)
-- KEYS[8]  redlock_log:{NAME}             stream: history
-- ARGV[10] --min-hold in ms (0: none), recorded as in acquire.lua
-- ARGV[11] history: about how many events to keep ("": none kept)
-- ARGV[12] history: the stream's expiry after an event, in ms (0: never)
-- ARGV[13] history: the caller's part of its entries (rl_history_entry:
--          owner, host, pid, user, cmd, how long it waited, kind,
--          "event"): a fresh permit records "acquired" with its token, a
--          caller without "j" that finds none free "busy"; a re-entry
--          records nothing
-- ARGV[14] the start of the caller's holder record (see rl_holder_meta)
-- ARGV[15] PUBLISH or SPUBLISH
-- The first caller sets the number of permits (as trySetPermits does);
-- one that names another number is refused, and nothing is changed.
-- Expiries are on the server's clock; expired permits are given back
-- first (as Redisson's calls do, by their clients' clocks), and the
-- holder records of permits no longer taken go. The replies
-- have the shapes of acquire's. A waiter that takes a permit leaves the
-- room, and wakes another waiter there when permits are still free
-- (so that a release or unlock --force that frees several wakes them in
-- turn).
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
--         {-2, permits}                NAME has that many permits, not LIMIT
--         {-1, key, type}              KEY is not of the type needed
rl_pubcmd = ARGV[15] or rl_pubcmd
-- Only a caller that waits joins the room; one in it leaves it when it
-- takes a permit, and wakes the next.
local room = KEYS[7] ~= nil and string.find(ARGV[9] or '', 'j', 1, true)
local member = KEYS[7] ~= nil and string.find(ARGV[9] or '', 'w', 1, true)
local bad, free = rl_semaphore_bad(KEYS[1], KEYS[2], KEYS[3])
if bad then return bad end
bad = rl_counter_bad(KEYS[4])
if bad then return bad end
local now_us, now_ms = rl_time()
local limit = tonumber(ARGV[3])
local taken = redis.call('ZCARD', KEYS[2])
if not free then
  if taken > 0 then return {-2, taken} end
  free = limit
  redis.call('SET', KEYS[1], limit)
end
free = tonumber(free)
if free + taken ~= limit then return {-2, free + taken} end
-- Permits past their expiry come back.
local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now_ms)
for _, id in ipairs(gone) do
  redis.call('ZREM', KEYS[2], id)
end
if #gone > 0 then
  free = redis.call('INCRBY', KEYS[1], #gone)
  rl_publish(KEYS[5], tostring(free))
end
rl_permits_tidy(KEYS[3], KEYS[2])
local nopub = (not rl_may_publish(KEYS[5])) and KEYS[5]
local expiry = now_ms + tonumber(ARGV[1])
local id = rl_permit(KEYS[2], ARGV[2])
local mine = tonumber(redis.call('ZSCORE', KEYS[2], id))
local rec = mine and redis.call('HGET', KEYS[3], id)
local longer = mine and rl_hold_longer(rec, now_ms, ARGV[10])
if longer and longer ~= rec then
  redis.call('HSET', KEYS[3], id, longer)
  rec = longer
end
if mine and rl_finished(rec) then
  -- A finished permit (--min-hold) taken up again by its owner: one hold.
  if mine < expiry then redis.call('ZADD', KEYS[2], expiry, id) end
  redis.call('HSET', KEYS[3], id, rl_set_finished(rec, false))
  rl_lengthen(KEYS[3], math.max(mine, expiry) - now_ms)
  return {1, rl_fence(rec) or '0', 1, nopub}
end
if mine then
  if mine < expiry then redis.call('ZADD', KEYS[2], expiry, id) end
  local holds = redis.call('HINCRBY', KEYS[3], id .. ':n', 1)
  if holds == 1 then holds = redis.call('HINCRBY', KEYS[3], id .. ':n', 1) end
  rl_lengthen(KEYS[3], math.max(mine, expiry) - now_ms)
  return {1, rl_fence(redis.call('HGET', KEYS[3], id)) or '0', holds,
          nopub}
end
if free < 1 then
  local listen = false
  if room then
    listen = rl_room_join(KEYS[6], KEYS[7], ARGV[2], now_ms, tonumber(ARGV[8]))
  end
  local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  local d = rl_decode(first[1] and redis.call('HGET', KEYS[3], first[1]))
  -- A caller that does not wait goes without it: a busy skip, naming the
  -- owner of the permit that expires first.
  if not string.find(ARGV[9] or '', 'j', 1, true) and KEYS[8] and
      ARGV[11] ~= '' then
    rl_log(KEYS[8], ARGV[11], ARGV[12], ARGV[13] .. 'busy\31holder\31' ..
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
local fence, old = rl_next_fence(KEYS[4], now_us)
free = redis.call('DECR', KEYS[1])
redis.call('ZADD', KEYS[2], expiry, id)
-- The record names the owner token: the id, a hash of it, does not.
local meta = rl_holder_meta(ARGV[14] or rl_holder_start(ARGV[4], ARGV[5],
                            ARGV[6], ARGV[7]), now_ms, fence, ARGV[10])
redis.call('HSET', KEYS[3], id, string.sub(meta, 1, -2) .. ',"owner":' ..
           cjson.encode(rl_permit_owner(ARGV[2])) .. '}')
rl_lengthen(KEYS[3], ARGV[1])
if member and not rl_room_leave(KEYS[6], KEYS[7], ARGV[2], KEYS[5],
                                tostring(free)) and free > 0 then
  rl_room_wake(KEYS[6], KEYS[7], KEYS[5], tostring(free))
end
local skipped = KEYS[8] and ARGV[11] ~= '' and
    rl_log(KEYS[8], ARGV[11], ARGV[12],
           ARGV[13] .. 'acquired\31fence\31' .. fence,
           rl_log_renews(ARGV[12], now_us, old))
return {1, fence, 1, nopub, skipped}
