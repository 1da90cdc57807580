-- permit_renew: extend the lease of OWNER's permit of NAME; never shorten
-- it, never give a permit that is gone back to OWNER. The holder records
-- of permits no longer taken go, and the rest live as long as this
-- permit at least.
-- KEYS[1]  {NAME}:timeout                 zset: permit id -> expiry (ms)
-- KEYS[2]  redlock_holder:{NAME}          hash: permit id -> JSON metadata
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  the owner's key, hex digits (rl_permit: its permit's id)
-- Returns 1 renewed, 0 the permit is gone (expired and given back, or
-- released) or KEYS[1] is not a zset, or it is finished (--min-hold).
if redis.call('TYPE', KEYS[1]).ok ~= 'zset' then return 0 end
local _, now_ms = rl_time()
local holders = KEYS[2] and redis.call('TYPE', KEYS[2]).ok == 'hash'
if holders then rl_permits_tidy(KEYS[2], KEYS[1]) end
local id = rl_permit(KEYS[1], ARGV[2])
local expiry = tonumber(redis.call('ZSCORE', KEYS[1], id))
if not expiry or expiry <= now_ms then return 0 end
-- A finished permit (--min-hold) is not renewed: it stays until the end
-- of its minimum hold only.
if holders and rl_finished(redis.call('HGET', KEYS[2], id)) then
  return 0
end
local want = now_ms + tonumber(ARGV[1])
if expiry < want then
  redis.call('ZADD', KEYS[1], want, id)
  expiry = want
end
if holders then rl_lengthen(KEYS[2], expiry - now_ms) end
return 1
