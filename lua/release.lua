-- release: give back one hold of lock NAME by OWNER.
-- KEYS[1]  NAME                           hash: owner -> hold count
-- KEYS[2]  redisson_lock__channel:{NAME}  channel woken when the lock is free
-- KEYS[3]  redlock_holder:{NAME}          hash: owner -> JSON metadata
-- ARGV[1]  owner token
-- ARGV[2]  message published on release ("0": wake one waiter)
-- Returns {2}              released: key deleted, ARGV[2] published
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
redis.call('PUBLISH', KEYS[2], ARGV[2])
return {2}
