-- leave: take fair waiter OWNER out of the queue of lock NAME (its wait ran
-- out, it was signalled, or it cannot wait). If it was the head and the
-- lock is free, the next live waiter is woken so that the handoff does not
-- stall.
-- KEYS[1]  NAME                           hash: owner -> hold count
-- KEYS[2]  redisson_lock__channel:{NAME}  channel; CHANNEL:OWNER wakes a fair waiter
-- KEYS[3]  redisson_lock_queue:{NAME}     list: fair waiters, head first
-- KEYS[4]  redisson_lock_timeout:{NAME}   zset: fair waiter -> deadline (ms)
-- KEYS[5]  redlock_waiter:{NAME}          hash: fair waiter -> JSON metadata
-- KEYS[6]  redlock_log:{NAME}             stream: history
-- ARGV[1]  owner token
-- ARGV[2]  history: about how many events to keep ("": none kept)
-- ARGV[3]  history: the stream's expiry after an event, in ms (0: never)
-- ARGV[4]  how long it waited, in ms
-- ARGV[5]  PUBLISH or SPUBLISH: the command that wakes waiters
-- Returns {removed, position, nopub}: queue entries removed (0 or 1), the
--   place OWNER had (1 first; 0 when not queued or unknown), and the
--   channel the server refused PUBLISH on, or nil.
-- LREM and LPOS walk the queue once: leaving is O(n), waiting is not.
rl_pubcmd = ARGV[5] or rl_pubcmd
if redis.call('TYPE', KEYS[3]).ok ~= 'list' then return {0, 0} end
local was_head = redis.call('LINDEX', KEYS[3], 0) == ARGV[1]
-- LPOS needs Redis 6.0.6; without it the place is unknown.
local p = redis.pcall('LPOS', KEYS[3], ARGV[1])
local position = type(p) == 'number' and p + 1 or 0
-- Redisson's waiters behind a head that leaves: scored as after a handoff.
if was_head and redis.call('TYPE', KEYS[4]).ok == 'zset' and
    redis.call('TYPE', KEYS[5]).ok == 'hash' then
  local _, now_ms = rl_time()
  rl_reanchor(KEYS[3], KEYS[4], KEYS[5], ARGV[1], now_ms)
end
local n = redis.call('LREM', KEYS[3], 0, ARGV[1])
if redis.call('TYPE', KEYS[4]).ok == 'zset' then
  redis.call('ZREM', KEYS[4], ARGV[1])
end
local w = false
if redis.call('TYPE', KEYS[5]).ok == 'hash' then
  w = redis.call('HGET', KEYS[5], ARGV[1])
  redis.call('HDEL', KEYS[5], ARGV[1])
end
if n > 0 then
  local d = rl_decode(w)
  rl_log_event(KEYS[6], ARGV[2], ARGV[3], 'gave_up',
         {'owner', ARGV[1], 'host', d.host or '', 'pid', d.pid or '',
          'user', d.user or '', 'cmd', d.cmd or '', 'wait_ms', ARGV[4] or ''})
end
local nopub = false
if was_head and redis.call('EXISTS', KEYS[1]) == 0 then
  if not rl_wake_head(KEYS[3], KEYS[4], KEYS[5], KEYS[2], nil, '0') then
    nopub = KEYS[2]
  end
end
return {n, position, nopub}
