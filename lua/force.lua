-- force: delete lock NAME whoever holds it, and wake waiters.
-- KEYS[1]  NAME                           hash: owner -> hold count
-- KEYS[2]  redisson_lock__channel:{NAME}  channel woken when the lock is free
-- KEYS[3]  redlock_holder:{NAME}          hash: owner -> JSON metadata
-- ARGV[1]  message published ("0": wake one waiter)
-- Returns 1 when a lock was deleted, 0 when NAME was free,
--         {-1, key, type} when KEY is not of the type a lock needs (nothing changed).
for _, key in ipairs({KEYS[1], KEYS[3]}) do
  local t = redis.call('TYPE', key).ok
  if t ~= 'none' and t ~= 'hash' then return {-1, key, t} end
end
redis.call('DEL', KEYS[3])
if redis.call('DEL', KEYS[1]) == 1 then
  redis.call('PUBLISH', KEYS[2], ARGV[1])
  return 1
end
return 0
