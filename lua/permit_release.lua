-- permit_release: give back one hold of OWNER's permit of NAME; the last
-- gives the permit back and wakes the waiters with the count of permits
-- free (Redisson's message on the semaphore's channel, which the room's
-- listener hears too), and one waiter of the room on its own channel.
-- KEYS[1]  NAME                           string: permits free
-- KEYS[2]  {NAME}:timeout                 zset: permit id -> expiry (ms)
-- KEYS[3]  redlock_holder:{NAME}          hash: permit id -> JSON metadata;
--                                          the records of permits no
--                                          longer taken go
-- KEYS[4]  redisson_sc:{NAME}             channel: permits free
-- KEYS[5]  redlock_room:{NAME}            zset: waiter (permit id) ->
--                                          deadline (ms)
-- KEYS[6]  redlock_listener:{NAME}        string: the waiter that listens
--                                          to the semaphore's channel
-- KEYS[7]  redlock_log:{NAME}             stream: history
-- ARGV[1]  the owner's key, hex digits (rl_permit: its permit's id)
-- ARGV[2]  history: about how many events to keep ("": none kept)
-- ARGV[3]  history: the stream's expiry, in ms (0: never), should the
--          release find it gone
-- ARGV[4]  history: the caller's part of its entry (rl_history_entry:
--          owner, COMMAND's exit status where known, kind, "event"): the
--          last hold given back records "released" (with held_until when
--          the minimum hold is kept)
-- ARGV[5]  flags: "u", an acquisition undone (its minimum hold is not
--          kept); "l", the watchdog's release, which records a permit that
--          it finds gone as lost
-- ARGV[6]  PUBLISH or SPUBLISH
-- The replies have the shapes of release's:
-- Returns {2, nopub}    released; nopub: the channel the server refused
--                       to publish on, else nil
--         {2, nil, until}  the last hold given back before the end of the
--                       permit's minimum hold (--min-hold): the permit
--                       stays taken, finished, until then (its expiry in
--                       the zset); nobody is woken; so again when finished
--         {1, holds}    a nested hold given back, HOLDS remain
--         {0, taken}    OWNER holds no permit of NAME (it expired and was
--                       given back, or was released); taken: 1 when others
--                       hold permits
--         {-1, key, type}
rl_pubcmd = ARGV[6] or rl_pubcmd
local logkey = ARGV[2] ~= '' and KEYS[7]
local flags = ARGV[5] or ''
local bad, free = rl_semaphore_bad(KEYS[1], KEYS[2], KEYS[3])
if bad then return bad end
local id = rl_permit(KEYS[2], ARGV[1])
rl_permits_tidy(KEYS[3], KEYS[2])
if not redis.call('ZSCORE', KEYS[2], id) then
  if logkey and string.find(flags, 'l', 1, true) then
    rl_log(logkey, ARGV[2], ARGV[3], ARGV[4] .. 'lost', true)
  end
  return {0, math.min(redis.call('ZCARD', KEYS[2]), 1)}
end
local holds = tonumber(redis.call('HGET', KEYS[3], id .. ':n'))
if holds and holds > 2 then
  return {1, redis.call('HINCRBY', KEYS[3], id .. ':n', -1)}
end
if holds then
  redis.call('HDEL', KEYS[3], id .. ':n')
  return {1, 1}
end
local rec = redis.call('HGET', KEYS[3], id)
local _, now_ms = rl_time()
local keep = rl_keep_until(rec, now_ms, flags)
if keep then
  if not rl_finished(rec) then
    redis.call('ZADD', KEYS[2], keep, id)
    redis.call('HSET', KEYS[3], id, rl_set_finished(rec, true))
    rl_lengthen(KEYS[3], keep - now_ms)
    if logkey then
      rl_log(logkey, ARGV[2], ARGV[3], ARGV[4] ..
             string.format('released\31held_until\31%.0f', keep))
    end
  end
  return {2, false, keep}
end
redis.call('ZREM', KEYS[2], id)
redis.call('HDEL', KEYS[3], id)
free = redis.call('INCR', KEYS[1])
-- An acquisition undone (flags "u") is no run: recorded as such.
if logkey then
  rl_log(logkey, ARGV[2], ARGV[3],
         ARGV[4] .. (ARGV[5] == 'u' and 'undone' or 'released'))
end
local ok = rl_room_wake(KEYS[5], KEYS[6], KEYS[4], tostring(free))
if not rl_publish(KEYS[4], tostring(free)) or not ok then
  return {2, KEYS[4]}
end
return {2, false}
