-- permit_force: delete semaphore NAME, every permit taken and its count
-- (unlock --force: the operator's way out, and the way to change the
-- number of permits), and wake its waiters with the count it had.
-- KEYS[1]  NAME                           string: permits free
-- KEYS[2]  {NAME}:timeout                 zset: permit id -> expiry (ms)
-- KEYS[3]  redlock_holder:{NAME}          hash: permit id -> JSON metadata
-- KEYS[4]  redisson_sc:{NAME}             channel: permits free
-- KEYS[5]  redlock_room:{NAME}            zset: waiter (permit id) ->
--                                          deadline (ms)
-- KEYS[6]  redlock_listener:{NAME}        string: the waiter that listens
--                                          to the semaphore's channel
-- KEYS[7]  redlock_log:{NAME}             stream: history: a "forced"
--                                          event for each permit taken
--                                          (its holder, kind "permit")
-- ARGV[1]  history: about how many events to keep ("": none kept)
-- ARGV[2]  history: the stream's expiry after an event, in ms (0: never)
-- ARGV[3..5] host, pid and user of the caller (who forced it)
-- ARGV[6]  PUBLISH or SPUBLISH
-- Returns the replies of force:
--         {1, nopub}       deleted; nopub as in release
--         {0}              NAME was not there
--         {-1, key, type}  not a semaphore's keys; nothing changed
rl_pubcmd = ARGV[6] or rl_pubcmd
local bad, free = rl_semaphore_bad(KEYS[1], KEYS[2], KEYS[3])
if bad then return bad end
if not free and redis.call('EXISTS', KEYS[2]) == 0 then return {0} end
local total = (tonumber(free) or 0) + redis.call('ZCARD', KEYS[2])
-- Each permit's holder is named (the first 1000: more would hold the
-- server up; there are seldom more than a few).
if KEYS[7] and ARGV[1] ~= '' then
  local _, now_ms = rl_time()
  for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, 999)) do
    local rec = redis.call('HGET', KEYS[3], id)
    local e = rl_log_holder(tostring(rl_decode(rec).owner or ''), rec, now_ms)
    for _, v in ipairs({'kind', 'permit', 'by_host', ARGV[3] or '',
                        'by_pid', ARGV[4] or '', 'by_user', ARGV[5] or ''}) do
      e[#e + 1] = v
    end
    rl_log_event(KEYS[7], ARGV[1], ARGV[2], 'forced', e)
  end
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
-- One waiter of the room: the first to take a permit wakes the next.
local ok = rl_room_wake(KEYS[5], KEYS[6], KEYS[4], tostring(total))
if not rl_publish(KEYS[4], tostring(total)) or not ok then
  return {1, KEYS[4]}
end
return {1, false}
