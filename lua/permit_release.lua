-- permit_release: give back one hold of OWNER's permit of NAME; the last
-- gives the permit back and wakes the waiters with the count of permits
-- free (Redisson's message on the semaphore's channel, which the room's
-- listener hears too), and one waiter of the room on its own channel.
-- KEYS[1]  semaphore  NAME                           string: permits free
-- KEYS[2]  permits    {NAME}:timeout                 zset: permit id -> expiry
--          (ms)
-- KEYS[3]  holder     redlock_holder:{NAME}          hash: permit id -> JSON
--          metadata; the records of permits no longer taken go
-- KEYS[4]  channel    redisson_sc:{NAME}             channel: permits free
-- KEYS[5]  room       redlock_room:{NAME}            zset: waiter (permit id)
--          -> deadline (ms)
-- KEYS[6]  listener   redlock_listener:{NAME}        string: the waiter that
--          listens to the semaphore's channel
-- KEYS[7]  log        redlock_log:{NAME}             stream: history
-- ARGV[1]  permit          the owner's key, hex digits (rl_permit: its permit's
--                          id)
-- ARGV[2]  hist_max        history: about how many events to keep ("": none
--                          kept)
-- ARGV[3]  hist_ttl        history: the stream's expiry, in ms (0: never),
--                          should the release find it gone
-- ARGV[4]  hist_entry      history: the caller's part of its entry
--                          (rl_history_entry: owner, COMMAND's exit status
--                          where known, kind, "event"): the last hold given
--                          back records "released" (with held_until when the
--                          minimum hold is kept)
-- ARGV[5]  flags           flags: "u", an acquisition undone (its minimum hold
--                          is not kept); "l", the watchdog's release, which
--                          records a permit that it finds gone as lost
-- ARGV[6]  publish         PUBLISH or SPUBLISH
-- RETURNS  released   {2, nopub, until}
-- RETURNS  nested     {1, holds}
-- RETURNS  not_held   {0, exists}
-- RETURNS  wrongtype  {-1, key, type}
-- The replies have the shapes of release's:
-- Returns {2, nopub}    released; nopub: the channel the server refused
--                       to publish on, else nil
--         {2, nopub, until}  the last hold given back before the end of
--                       the permit's minimum hold (--min-hold): the permit
--                       stays taken, finished, until then (its expiry in
--                       the zset); the waiters are woken to learn it; given
--                       back again, nothing changes and nobody is woken
--         {1, holds}    a nested hold given back, HOLDS remain
--         {0, taken}    OWNER holds no permit of NAME (it expired and was
--                       given back, or was released); taken: 1 when others
--                       hold permits
--         {-1, key, type}
rl_pubcmd = A_publish or rl_pubcmd
local logkey = A_hist_max ~= '' and K_log
local flags = A_flags or ''
local bad, free = rl_semaphore_bad(K_semaphore, K_permits, K_holder)
if bad then return bad end
local id = rl_permit(K_permits, A_permit)
rl_permits_tidy(K_holder, K_permits)
if not redis.call('ZSCORE', K_permits, id) then
  if logkey and string.find(flags, 'l', 1, true) then
    rl_log(logkey, A_hist_max, A_hist_ttl, A_hist_entry .. 'lost', true)
  end
  return {0, math.min(redis.call('ZCARD', K_permits), 1)}
end
local holds = tonumber(redis.call('HGET', K_holder, id .. ':n'))
if holds and holds > 2 then
  return {1, redis.call('HINCRBY', K_holder, id .. ':n', -1)}
end
if holds then
  redis.call('HDEL', K_holder, id .. ':n')
  return {1, 1}
end
local rec = redis.call('HGET', K_holder, id)
local _, now_ms = rl_time()
local keep = rl_keep_until(rec, now_ms, flags)
if keep then
  if not rl_finished(rec) then
    redis.call('ZADD', K_permits, keep, id)
    redis.call('HSET', K_holder, id, rl_set_finished(rec, true))
    rl_lengthen(K_holder, keep - now_ms)
    if logkey then
      rl_log(logkey, A_hist_max, A_hist_ttl, A_hist_entry ..
             string.format('released\31held_until\31%.0f', keep))
    end
    -- Nothing publishes when the permit's expiry comes: the waiters
    -- learn it now (the count of permits free is unchanged).
    local msg = tostring(free or 0)
    local ok = rl_room_wake(K_room, K_listener, K_channel, msg)
    if not rl_publish(K_channel, msg) or not ok then
      return {2, K_channel, keep}
    end
  end
  return {2, false, keep}
end
-- The permit comes back in three writes: each allowed (an ACL), or none
-- is made, so that a refusal never leaves the semaphore a permit short.
bad = rl_denied({'ZREM', K_permits, 'HDEL', K_holder, 'INCR', K_semaphore})
if bad then return bad end
redis.call('ZREM', K_permits, id)
redis.call('HDEL', K_holder, id)
free = redis.call('INCR', K_semaphore)
-- An acquisition undone (flags "u") is no run: recorded as such.
if logkey then
  rl_log(logkey, A_hist_max, A_hist_ttl,
         A_hist_entry .. (A_flags == 'u' and 'undone' or 'released'))
end
-- A command the ACL refuses in the room wakes nobody, as in release.
local woke, ok = pcall(rl_room_wake, K_room, K_listener, K_channel,
                       tostring(free))
ok = woke and ok
if not rl_publish(K_channel, tostring(free)) or not ok then
  return {2, K_channel}
end
return {2, false}
