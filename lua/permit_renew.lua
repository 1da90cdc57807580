-- permit_renew: extend the lease of OWNER's permit of NAME.
-- KEYS[1]  {NAME}:timeout                 zset: permit id -> expiry (ms)
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  permit id
-- Returns 1 renewed, 0 the permit is gone (expired and given back, or
-- released), {-1, key, type} when KEY is not a zset.
local bad = rl_badtype(KEYS[1], 'zset')
if bad then return bad end
local _, now_ms = rl_time()
local expiry = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[2]))
if not expiry or expiry <= now_ms then return 0 end
redis.call('ZADD', KEYS[1], now_ms + tonumber(ARGV[1]), ARGV[2])
return 1
