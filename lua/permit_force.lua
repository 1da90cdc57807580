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
-- ARGV[1]  PUBLISH or SPUBLISH
-- Returns the replies of force:
--         {1, nopub}       deleted; nopub as in release
--         {0}              NAME was not there
--         {-1, key, type}  not a semaphore's keys; nothing changed
rl_pubcmd = ARGV[1] or rl_pubcmd
local bad, free = rl_semaphore_bad(KEYS[1], KEYS[2], KEYS[3])
if bad then return bad end
if not free and redis.call('EXISTS', KEYS[2]) == 0 then return {0} end
local total = (tonumber(free) or 0) + redis.call('ZCARD', KEYS[2])
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
-- One waiter of the room: the first to take a permit wakes the next.
local ok = rl_room_wake(KEYS[5], KEYS[6], KEYS[4], tostring(total))
if not rl_publish(KEYS[4], tostring(total)) or not ok then
  return {1, KEYS[4]}
end
return {1, false}
