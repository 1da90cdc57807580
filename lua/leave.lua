-- leave: take fair waiter OWNER out of the queue of lock NAME (its wait ran
-- out, or it was signalled). If it was the head and the lock is free, the
-- next waiter is woken so that the handoff does not stall.
-- KEYS[1]  NAME                           hash: owner -> hold count
-- KEYS[2]  redisson_lock__channel:{NAME}  channel; CHANNEL:OWNER wakes a fair waiter
-- KEYS[3]  redisson_lock_queue:{NAME}     list: fair waiters, head first
-- KEYS[4]  redisson_lock_timeout:{NAME}   zset: fair waiter -> deadline (ms)
-- KEYS[5]  redlock_waiter:{NAME}          hash: fair waiter -> JSON metadata
-- ARGV[1]  owner token
-- Returns the number of queue entries removed (0 or 1).
if redis.call('TYPE', KEYS[3]).ok ~= 'list' or
   redis.call('TYPE', KEYS[4]).ok ~= 'zset' then
  return 0
end
local was_head = redis.call('LINDEX', KEYS[3], 0) == ARGV[1]
local n = redis.call('LREM', KEYS[3], 0, ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
if redis.call('TYPE', KEYS[5]).ok == 'hash' then
  redis.call('HDEL', KEYS[5], ARGV[1])
end
if was_head and redis.call('EXISTS', KEYS[1]) == 0 then
  local head = redis.call('LINDEX', KEYS[3], 0)
  if head then redis.call('PUBLISH', KEYS[2] .. ':' .. head, '0') end
end
return n
