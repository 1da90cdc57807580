-- permit_force: delete semaphore NAME, every permit taken and its count
-- (unlock --force: the operator's way out, and the way to change the
-- number of permits), and wake its waiters with the count it had.
-- KEYS[1]  semaphore  NAME                           string: permits free
-- KEYS[2]  permits    {NAME}:timeout                 zset: permit id -> expiry
--          (ms)
-- KEYS[3]  holder     redlock_holder:{NAME}          hash: permit id -> JSON
--          metadata
-- KEYS[4]  channel    redisson_sc:{NAME}             channel: permits free
-- KEYS[5]  room       redlock_room:{NAME}            zset: waiter (permit id)
--          -> deadline (ms)
-- KEYS[6]  listener   redlock_listener:{NAME}        string: the waiter that
--          listens to the semaphore's channel
-- KEYS[7]  log        redlock_log:{NAME}             stream: history: a
--          "forced" event for each permit taken (its holder, kind "permit")
-- ARGV[1]  hist_max        history: about how many events to keep ("": none
--                          kept)
-- ARGV[2]  hist_ttl        history: the stream's expiry after an event, in ms
--                          (0: never)
-- ARGV[3]  host            host of the caller (who forced it)
-- ARGV[4]  pid             pid of the caller (who forced it)
-- ARGV[5]  user            user of the caller (who forced it)
-- ARGV[6]  publish         PUBLISH or SPUBLISH
-- RETURNS  deleted    {1, nopub}
-- RETURNS  free       {0}
-- RETURNS  wrongtype  {-1, key, type}
-- Returns the replies of force:
--         {1, nopub}       deleted; nopub as in release
--         {0}              NAME was not there
--         {-1, key, type}  not a semaphore's keys; nothing changed
rl_pubcmd = A_publish or rl_pubcmd
local bad, free = rl_semaphore_bad(K_semaphore, K_permits, K_holder)
if bad then return bad end
if not free and redis.call('EXISTS', K_permits) == 0 then return {0} end
local total = (tonumber(free) or 0) + redis.call('ZCARD', K_permits)
-- Each permit's holder is named (the first 1000: more would hold the
-- server up; there are seldom more than a few).
if K_log and A_hist_max ~= '' then
  local _, now_ms = rl_time()
  for _, id in ipairs(redis.call('ZRANGE', K_permits, 0, 999)) do
    local rec = redis.call('HGET', K_holder, id)
    local e = rl_log_holder(tostring(rl_decode(rec).owner or ''), rec, now_ms)
    for _, v in ipairs({'kind', 'permit', 'by_host', A_host or '',
                        'by_pid', A_pid or '', 'by_user', A_user or ''}) do
      e[#e + 1] = v
    end
    rl_log_event(K_log, A_hist_max, A_hist_ttl, 'forced', e)
  end
end
-- One DEL of three keys: refused whole or done whole.
redis.call('DEL', K_semaphore, K_permits, K_holder)
-- One waiter of the room: the first to take a permit wakes the next.
local woke, ok = pcall(rl_room_wake, K_room, K_listener, K_channel,
                       tostring(total))
ok = woke and ok
if not rl_publish(K_channel, tostring(total)) or not ok then
  return {1, K_channel}
end
return {1, false}
