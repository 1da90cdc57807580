-- permit_release: give back OWNER's permit of NAME, and wake a waiter.
-- KEYS[1]  NAME                           string: permits free
-- KEYS[2]  {NAME}:timeout                 zset: permit id -> expiry (ms)
-- KEYS[3]  redlock_holder:{NAME}          hash: permit id -> JSON metadata
-- KEYS[4]  redisson_sc:{NAME}             channel: permits free
-- ARGV[1]  permit id
-- ARGV[2]  PUBLISH or SPUBLISH
-- Returns {1, nopub}    released; nopub: the channel the server refused
--                       to publish on, else nil
--         {0}           OWNER holds no permit of NAME (it expired and was
--                       given back, or was released)
--         {-1, key, type}
rl_pubcmd = ARGV[2] or rl_pubcmd
local want = {'string', 'zset', 'hash'}
for i = 1, 3 do
  local bad = rl_badtype(KEYS[i], want[i])
  if bad then return bad end
end
if redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then return {0} end
redis.call('HDEL', KEYS[3], ARGV[1])
local free = redis.call('INCR', KEYS[1])
if not rl_publish(KEYS[4], tostring(free)) then return {1, KEYS[4]} end
return {1, false}
