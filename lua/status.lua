-- status: who holds lock NAME and how many wait for it, read atomically.
-- KEYS[1]  NAME                         hash: owner -> hold count
-- KEYS[2]  redlock_holder:{NAME}        hash: owner -> JSON metadata
-- KEYS[3]  redisson_lock_queue:{NAME}   list: fair waiters
-- Returns {0, waiting}                  free
--         {1, waiting, pttl, owner, holds, host, pid, user, cmd, since_ms,
--          fence, held_ms}              held; unknown fields are nil
--         {-1, key, type}               KEY is not of the type a lock needs
local want = {[KEYS[1]] = 'hash', [KEYS[2]] = 'hash', [KEYS[3]] = 'list'}
for _, key in ipairs(KEYS) do
  local t = redis.call('TYPE', key).ok
  if t ~= 'none' and t ~= want[key] then return {-1, key, t} end
end
local waiting = redis.call('LLEN', KEYS[3])
local owner = redis.call('HKEYS', KEYS[1])[1]
if not owner then return {0, waiting} end
local d = {}
local json = redis.call('HGET', KEYS[2], owner)
if json then
  local ok, v = pcall(cjson.decode, json)
  if ok and type(v) == 'table' then d = v end
end
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local since = tonumber(d.since_ms)
return {1, waiting, redis.call('PTTL', KEYS[1]), owner,
        tonumber(redis.call('HGET', KEYS[1], owner)) or 0,
        d.host or false, tonumber(d.pid) or false, d.user or false,
        d.cmd or false, since or false, tonumber(d.fence) or false,
        since and (now_ms - since) or false}
