-- permit_renew: extend the lease of OWNER's permit of NAME; never shorten
-- it, never give a permit that is gone back to OWNER. The holder records
-- of permits no longer taken go, and the rest live as long as this
-- permit at least.
-- KEYS[1]  permits    {NAME}:timeout                 zset: permit id -> expiry
--          (ms)
-- KEYS[2]  holder     redlock_holder:{NAME}          hash: permit id -> JSON
--          metadata
-- ARGV[1]  lease           lease in milliseconds
-- ARGV[2]  permit          the owner's key, hex digits (rl_permit: its permit's
--                          id)
-- RETURNS  renewed  1
-- RETURNS  gone     0
-- Returns 1 renewed, 0 the permit is gone (expired and given back, or
-- released) or K_permits is not a zset, or it is finished (--min-hold).
if redis.call('TYPE', K_permits).ok ~= 'zset' then return 0 end
local _, now_ms = rl_time()
local holders = K_holder and redis.call('TYPE', K_holder).ok == 'hash'
if holders then rl_permits_tidy(K_holder, K_permits) end
local id = rl_permit(K_permits, A_permit)
local expiry = tonumber(redis.call('ZSCORE', K_permits, id))
if not expiry or expiry <= now_ms then return 0 end
-- A finished permit (--min-hold) is not renewed: it stays until the end
-- of its minimum hold only.
if holders and rl_finished(redis.call('HGET', K_holder, id)) then
  return 0
end
local want = now_ms + tonumber(A_lease)
if expiry < want then
  redis.call('ZADD', K_permits, want, id)
  expiry = want
end
if holders then rl_lengthen(K_holder, expiry - now_ms) end
return 1
