-- force: delete lock NAME whoever holds it, and wake its waiters.
-- KEYS[1]  NAME                           hash: owner -> hold count
-- KEYS[2]  redisson_lock__channel:{NAME}  channel; CHANNEL:OWNER wakes a fair waiter
-- KEYS[3]  redlock_holder:{NAME}          hash: owner -> JSON metadata
-- KEYS[4]  redisson_lock_queue:{NAME}     list: fair waiters, head first
-- ARGV[1]  message published ("0")
-- Returns 1 when a lock was deleted, 0 when NAME was free,
--         {-1, key, type} when KEY is not of the type a lock needs (nothing changed).
for _, key in ipairs({KEYS[1], KEYS[3]}) do
  local t = redis.call('TYPE', key).ok
  if t ~= 'none' and t ~= 'hash' then return {-1, key, t} end
end
redis.call('DEL', KEYS[3])
if redis.call('DEL', KEYS[1]) == 0 then return 0 end
if redis.call('TYPE', KEYS[4]).ok == 'list' then
  local head = redis.call('LINDEX', KEYS[4], 0)
  if head then redis.call('PUBLISH', KEYS[2] .. ':' .. head, ARGV[1]) end
end
redis.call('PUBLISH', KEYS[2], ARGV[1])
return 1
