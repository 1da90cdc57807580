-- release: give back one hold of lock NAME by OWNER; the last one frees it
-- and wakes the waiters: "0" on the lock's channel, and the head of the
-- fair queue on its own channel (Redisson's RLock and RFairLock).
-- KEYS[1]  NAME                           hash: owner -> hold count
-- KEYS[2]  redisson_lock__channel:{NAME}  channel; CHANNEL:OWNER wakes a fair waiter
-- KEYS[3]  redlock_holder:{NAME}          hash: owner -> JSON metadata
-- KEYS[4]  redisson_lock_queue:{NAME}     list: fair waiters, head first
-- KEYS[5]  redisson_lock_timeout:{NAME}   zset: fair waiter -> deadline (ms)
-- KEYS[6]  redlock_waiter:{NAME}          hash: fair waiter -> JSON metadata
-- ARGV[1]  owner token
-- ARGV[2]  message published on release ("0")
-- Returns {2}              released: key deleted, waiters woken
--         {1, holds}       one hold released, HOLDS remain
--         {0, held}        OWNER does not hold NAME (held = 1: someone else does)
--         {-1, key, type}  KEY is not of the type a lock needs; nothing changed
for _, key in ipairs({KEYS[1], KEYS[3]}) do
  local t = redis.call('TYPE', key).ok
  if t ~= 'none' and t ~= 'hash' then return {-1, key, t} end
end
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return {0, redis.call('EXISTS', KEYS[1])}
end
local holds = redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
if holds > 0 then return {1, holds} end
redis.call('DEL', KEYS[1])
redis.call('HDEL', KEYS[3], ARGV[1])
if redis.call('TYPE', KEYS[4]).ok == 'list' and
   redis.call('TYPE', KEYS[5]).ok == 'zset' then
  -- Skip waiters past their deadline; wake the first live one.
  local t = redis.call('TIME')
  local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  while true do
    local head = redis.call('LINDEX', KEYS[4], 0)
    if not head then break end
    local dl = tonumber(redis.call('ZSCORE', KEYS[5], head))
    if dl and dl > now_ms then
      redis.call('PUBLISH', KEYS[2] .. ':' .. head, ARGV[2])
      break
    end
    redis.call('LPOP', KEYS[4])
    redis.call('ZREM', KEYS[5], head)
    redis.call('HDEL', KEYS[6], head)
  end
end
redis.call('PUBLISH', KEYS[2], ARGV[2])
return {2}
