-- acquire: take lock NAME for OWNER, or re-enter it (Redisson's RLock layout).
-- KEYS[1]  NAME                           hash: owner -> hold count, PEXPIRE = lease
-- KEYS[2]  redisson_lock_token:{NAME}     string: fencing counter
-- KEYS[3]  redlock_holder:{NAME}          hash: owner -> JSON metadata, same lease
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner token
-- ARGV[3..6] host, pid, user, command of the new holder
-- Returns {1, fence, holds}            acquired (holds > 1: re-entered)
--         {0, pttl, owner, host, pid, user, cmd, held_ms}
--                                      held by another; unknown fields are nil
--         {-1, key, type}              KEY is not of the type a lock needs;
--                                      nothing was changed
local function kind(key, want)
  local t = redis.call('TYPE', key).ok
  if t ~= 'none' and t ~= want then return t end
  return nil
end
local bad = kind(KEYS[1], 'hash')
if bad then return {-1, KEYS[1], bad} end
bad = kind(KEYS[2], 'string')
if bad then return {-1, KEYS[2], bad} end
bad = kind(KEYS[3], 'hash')
if bad then return {-1, KEYS[3], bad} end
local counter = redis.call('GET', KEYS[2])
if counter and not string.match(counter, '^%d+$') then
  return {-1, KEYS[2], 'string that is not a counter'}
end

local function decode(json)
  if not json then return nil end
  local ok, d = pcall(cjson.decode, json)
  if ok and type(d) == 'table' then return d end
  return nil
end

local t = redis.call('TIME')
local now_us = tonumber(t[1]) * 1000000 + tonumber(t[2])
local now_ms = math.floor(now_us / 1000)

if redis.call('HEXISTS', KEYS[1], ARGV[2]) == 1 then
  local holds = redis.call('HINCRBY', KEYS[1], ARGV[2], 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  redis.call('PEXPIRE', KEYS[3], ARGV[1])
  local d = decode(redis.call('HGET', KEYS[3], ARGV[2]))
  return {1, (d and tonumber(d.fence)) or 0, holds}
end

if redis.call('EXISTS', KEYS[1]) == 1 then
  local owner = redis.call('HKEYS', KEYS[1])[1]
  local d = owner and decode(redis.call('HGET', KEYS[3], owner)) or {}
  local held = false
  if tonumber(d.since_ms) then held = now_ms - tonumber(d.since_ms) end
  return {0, redis.call('PTTL', KEYS[1]), owner or false,
          d.host or false, tonumber(d.pid) or false, d.user or false,
          d.cmd or false, held}
end

if not counter then
  redis.call('SET', KEYS[2], string.format('%.0f', now_us))
end
local fence = redis.call('INCR', KEYS[2])
redis.call('HINCRBY', KEYS[1], ARGV[2], 1)
redis.call('PEXPIRE', KEYS[1], ARGV[1])
local meta = cjson.encode({host = ARGV[3], pid = tonumber(ARGV[4]),
                           user = ARGV[5], cmd = ARGV[6]})
meta = string.sub(meta, 1, -2) ..
       string.format(',"since_ms":%.0f,"fence":%.0f}', now_ms, fence)
redis.call('HSET', KEYS[3], ARGV[2], meta)
redis.call('PEXPIRE', KEYS[3], ARGV[1])
return {1, fence, 1}
