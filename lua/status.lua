-- status: who holds lock NAME and how many wait for it, read atomically.
-- KEYS[1]  NAME                           hash: owner -> hold count
-- KEYS[2]  redlock_holder:{NAME}          hash: owner -> JSON metadata
-- KEYS[3]  redisson_lock_queue:{NAME}     list: fair waiters
-- KEYS[4]  redisson_lock_timeout:{NAME}   zset: fair waiter -> deadline (ms)
-- KEYS[5]  redlock_waiter:{NAME}          hash: fair waiter -> JSON metadata
-- Returns {0, waiting}                  free
--         {1, waiting, pttl, owner, holds, host, pid, user, cmd, since_ms,
--          fence, held_ms}              held; unknown fields are nil;
--                                       fence is a decimal string
--         {-1, key, type}               KEY is not of the type a lock needs
local want = {'hash', 'hash', 'list', 'zset', 'hash'}
for i = 1, 5 do
  local bad = rl_badtype(KEYS[i], want[i])
  if bad then return bad end
end
local waiting = redis.call('LLEN', KEYS[3])
local owner = redis.call('HKEYS', KEYS[1])[1]
if not owner then return {0, waiting} end
local json = redis.call('HGET', KEYS[2], owner)
local d = rl_decode(json)
local _, now_ms = rl_time()
local since = tonumber(d.since_ms)
return {1, waiting, redis.call('PTTL', KEYS[1]), owner,
        tonumber(redis.call('HGET', KEYS[1], owner)) or 0,
        d.host or false, tonumber(d.pid) or false, d.user or false,
        d.cmd or false, since or false, rl_fence(json),
        since and (now_ms - since) or false}
