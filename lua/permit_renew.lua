-- permit_renew: extend the lease of OWNER's permit of NAME; never shorten
-- it, never give a permit that is gone back to OWNER.
-- KEYS[1]  {NAME}:timeout                 zset: permit id -> expiry (ms)
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  permit id
-- Returns 1 renewed, 0 the permit is gone (expired and given back, or
-- released) or KEYS[1] is not a zset.
if redis.call('TYPE', KEYS[1]).ok ~= 'zset' then return 0 end
local _, now_ms = rl_time()
local expiry = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[2]))
if not expiry or expiry <= now_ms then return 0 end
local want = now_ms + tonumber(ARGV[1])
if expiry < want then redis.call('ZADD', KEYS[1], want, ARGV[2]) end
return 1
