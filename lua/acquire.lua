-- acquire: take lock NAME for OWNER, or re-enter it; with ARGV[7] = "fair",
-- only the head of the FIFO queue may take a free lock (Redisson's RLock and
-- RFairLock layouts). A fair call is also a queued waiter's heartbeat.
-- KEYS[1]  NAME                           hash: owner -> hold count, PEXPIRE = lease
-- KEYS[2]  redisson_lock_token:{NAME}     string: fencing counter
-- KEYS[3]  redlock_holder:{NAME}          hash: owner -> JSON metadata, same lease
-- KEYS[4]  redisson_lock_queue:{NAME}     list: fair waiters, head first
-- KEYS[5]  redisson_lock_timeout:{NAME}   zset: fair waiter -> deadline (ms)
-- KEYS[6]  redlock_waiter:{NAME}          hash: fair waiter -> JSON metadata
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner token
-- ARGV[3..6] host, pid, user, command of the caller
-- ARGV[7]  "fair", or "" for a plain lock
-- ARGV[8]  fair: waiter timeout in ms (a deadline this far ahead)
-- ARGV[9]  fair: flags; "j": join the queue when busy, "r": the caller had
--          joined before, "p": report the caller's position (LPOS, O(n),
--          for the waiting line on a terminal only)
-- Returns {1, fence, holds}            acquired (holds > 1: re-entered)
--         {0, pttl, owner, host, pid, user, cmd, held_ms,
--          position, queued, head_wait_ms, rejoined}
--                                      not acquired; pttl nil when the lock
--                                      is free (a fair queue is ahead);
--                                      head_wait_ms: when a free lock's head
--                                      waiter is due to be evicted;
--                                      unknown fields are nil
--         {-1, key, type}              KEY is not of the type a lock needs;
--                                      nothing was changed
-- Expired waiters are evicted at the head only: the cost does not grow with
-- the length of the queue.
local fair = ARGV[7] == 'fair'
local want = {'hash', 'string', 'hash', 'list', 'zset', 'hash'}
for i = 1, fair and 6 or 3 do
  local t = redis.call('TYPE', KEYS[i]).ok
  if t ~= 'none' and t ~= want[i] then return {-1, KEYS[i], t} end
end
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

if fair then
  while true do
    local head = redis.call('LINDEX', KEYS[4], 0)
    if not head then break end
    local dl = tonumber(redis.call('ZSCORE', KEYS[5], head))
    if dl and dl > now_ms then break end
    redis.call('LPOP', KEYS[4])
    redis.call('ZREM', KEYS[5], head)
    redis.call('HDEL', KEYS[6], head)
  end
end

if redis.call('HEXISTS', KEYS[1], ARGV[2]) == 1 then
  local holds = redis.call('HINCRBY', KEYS[1], ARGV[2], 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  redis.call('PEXPIRE', KEYS[3], ARGV[1])
  local d = decode(redis.call('HGET', KEYS[3], ARGV[2]))
  return {1, (d and tonumber(d.fence)) or 0, holds}
end

local free = redis.call('EXISTS', KEYS[1]) == 0
local head = fair and redis.call('LINDEX', KEYS[4], 0)
if free and (not head or head == ARGV[2]) then
  if fair then
    if head then redis.call('LPOP', KEYS[4]) end
    redis.call('ZREM', KEYS[5], ARGV[2])
    redis.call('HDEL', KEYS[6], ARGV[2])
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
end

local owner, pttl, d, held = false, false, {}, false
if not free then
  owner = redis.call('HKEYS', KEYS[1])[1]
  pttl = redis.call('PTTL', KEYS[1])
  d = owner and decode(redis.call('HGET', KEYS[3], owner)) or {}
  if tonumber(d.since_ms) then held = now_ms - tonumber(d.since_ms) end
end
local position, queued, head_wait, rejoined = false, false, false, 0
if fair then
  local flags = ARGV[9] or ''
  local deadline = now_ms + tonumber(ARGV[8])
  if redis.call('ZSCORE', KEYS[5], ARGV[2]) then
    redis.call('ZADD', KEYS[5], deadline, ARGV[2])
  elseif string.find(flags, 'j', 1, true) then
    if string.find(flags, 'r', 1, true) then rejoined = 1 end
    redis.call('RPUSH', KEYS[4], ARGV[2])
    redis.call('ZADD', KEYS[5], deadline, ARGV[2])
    local w = cjson.encode({host = ARGV[3], pid = tonumber(ARGV[4]),
                            user = ARGV[5], cmd = ARGV[6]})
    w = string.sub(w, 1, -2) .. string.format(',"since_ms":%.0f}', now_ms)
    redis.call('HSET', KEYS[6], ARGV[2], w)
  end
  queued = redis.call('LLEN', KEYS[4])
  if string.find(flags, 'p', 1, true) then
    -- LPOS needs Redis 6.0.6; without it the place is simply unknown.
    local p = redis.pcall('LPOS', KEYS[4], ARGV[2])
    if type(p) == 'number' then position = p + 1 end
  end
  head = redis.call('LINDEX', KEYS[4], 0)
  if free and head and head ~= ARGV[2] then
    local dl = tonumber(redis.call('ZSCORE', KEYS[5], head))
    if dl then head_wait = dl - now_ms end
  end
end
return {0, pttl, owner, d.host or false, tonumber(d.pid) or false,
        d.user or false, d.cmd or false, held, position, queued,
        head_wait, rejoined}
