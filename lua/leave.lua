-- leave: take fair waiter OWNER out of the queue of lock NAME (its wait ran
-- out, it was signalled, or it cannot wait). If it was the head and the
-- lock is free, the next live waiter is woken so that the handoff does not
-- stall.
-- KEYS[1]  lock       NAME                           hash: owner -> hold count
-- KEYS[2]  channel    redisson_lock__channel:{NAME}  channel; CHANNEL:OWNER
--          wakes a fair waiter
-- KEYS[3]  queue      redisson_lock_queue:{NAME}     list: fair waiters, head
--          first
-- KEYS[4]  timeout    redisson_lock_timeout:{NAME}   zset: fair waiter ->
--          deadline (ms)
-- KEYS[5]  waiter     redlock_waiter:{NAME}          hash: fair waiter -> JSON
--          metadata
-- KEYS[6]  log        redlock_log:{NAME}             stream: history
-- ARGV[1]  owner           owner token
-- ARGV[2]  hist_max        history: about how many events to keep ("": none
--                          kept)
-- ARGV[3]  hist_ttl        history: the stream's expiry after an event, in ms
--                          (0: never)
-- ARGV[4]  waited          how long it waited, in ms
-- ARGV[5]  publish         PUBLISH or SPUBLISH: the command that wakes waiters
-- RETURNS  left  {removed, position, nopub}
-- Returns {removed, position, nopub}: queue entries removed (0 or 1), the
--   place OWNER had (1 first; 0 when not queued or unknown), and the
--   channel the server refused PUBLISH on, or nil.
-- LREM and LPOS walk the queue once: leaving is O(n), waiting is not.
rl_pubcmd = A_publish or rl_pubcmd
if redis.call('TYPE', K_queue).ok ~= 'list' then return {0, 0} end
local was_head = redis.call('LINDEX', K_queue, 0) == A_owner
-- LPOS needs Redis 6.0.6; without it the place is unknown.
local p = redis.pcall('LPOS', K_queue, A_owner)
local position = type(p) == 'number' and p + 1 or 0
-- Redisson's waiters behind a head that leaves: scored as after a handoff.
if was_head and redis.call('TYPE', K_timeout).ok == 'zset' and
    redis.call('TYPE', K_waiter).ok == 'hash' then
  local _, now_ms = rl_time()
  rl_reanchor(K_queue, K_timeout, K_waiter, A_owner, now_ms)
end
local n = redis.call('LREM', K_queue, 0, A_owner)
if redis.call('TYPE', K_timeout).ok == 'zset' then
  redis.call('ZREM', K_timeout, A_owner)
end
local w = false
if redis.call('TYPE', K_waiter).ok == 'hash' then
  w = redis.call('HGET', K_waiter, A_owner)
  redis.call('HDEL', K_waiter, A_owner)
end
if n > 0 then
  local d = rl_decode(w)
  rl_log_event(K_log, A_hist_max, A_hist_ttl, 'gave_up',
         {'owner', A_owner, 'host', d.host or '', 'pid', d.pid or '',
          'user', d.user or '', 'cmd', d.cmd or '', 'wait_ms', A_waited or ''})
end
local nopub = false
if was_head and redis.call('EXISTS', K_lock) == 0 then
  if not rl_wake_head(K_queue, K_timeout, K_waiter, K_channel, nil, '0') then
    nopub = K_channel
  end
end
return {n, position, nopub}
