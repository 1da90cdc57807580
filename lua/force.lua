-- force: delete lock NAME whoever holds it, and wake its waiters: "0" on
-- the lock's channel, the head of the fair queue and one waiter of the
-- room on their own, and for a read-write lock "1" (wake all) on its
-- channel, where Redisson's readers and writers listen.
-- KEYS[1]  lock       NAME                           hash: owner -> hold count
-- KEYS[2]  channel    redisson_lock__channel:{NAME}  channel; CHANNEL:OWNER
--          wakes a fair waiter
-- KEYS[3]  holder     redlock_holder:{NAME}          hash: owner -> JSON
--          metadata
-- KEYS[4]  queue      redisson_lock_queue:{NAME}     list: fair waiters, head
--          first
-- KEYS[5]  timeout    redisson_lock_timeout:{NAME}   zset: fair waiter ->
--          deadline (ms)
-- KEYS[6]  waiter     redlock_waiter:{NAME}          hash: fair waiter -> JSON
--          metadata
-- KEYS[7]  room       redlock_room:{NAME}            zset: plain waiter ->
--          deadline (ms)
-- KEYS[8]  listener   redlock_listener:{NAME}        string: the plain waiter
--          that listens to the lock's channel
-- KEYS[9]  tag        {NAME}                         only named: a read hold N
--          of a read-write lock's FIELD has the lease key
--          K_tag:FIELD:rwlock_timeout:N
-- KEYS[10] rwchannel  redisson_rwlock:{NAME}         channel of a read-write
--          lock
-- KEYS[11] log        redlock_log:{NAME}             stream: history
-- ARGV[1]  message         message published ("0")
-- ARGV[2]  hist_max        history: about how many events to keep ("": none
--                          kept)
-- ARGV[3]  hist_ttl        history: the stream's expiry after an event, in ms
--                          (0: never)
-- ARGV[4]  host            host of the caller (who forced it)
-- ARGV[5]  pid             pid of the caller (who forced it)
-- ARGV[6]  user            user of the caller (who forced it)
-- ARGV[7]  publish         PUBLISH or SPUBLISH: the command that wakes waiters
-- RETURNS  deleted    {1, nopub, owner, host, pid, user, cmd, held_ms}
-- RETURNS  free       {0}
-- RETURNS  wrongtype  {-1, key, type}
-- Returns {1, nopub, owner, host, pid, user, cmd, held_ms}
--                          a lock was deleted; nopub as in release; the
--                          holder removed (a plain lock's, or the
--                          writer's or first reader's; nil when unknown)
--         {0}              NAME was free
--         {-1, key, type}  KEY is not of the type a lock needs; nothing changed
rl_pubcmd = A_publish or rl_pubcmd
local bad = rl_badtype(K_lock, 'hash') or rl_badtype(K_holder, 'hash')
if bad then return bad end
if redis.call('EXISTS', K_lock) == 0 then return {0} end
-- A hash of another shape than a lock's (an application's) is not
-- deleted.
bad = rl_not_lock(K_lock)
if bad then return bad end
-- Every holder goes: a plain lock's owner, or a read-write lock's readers
-- (with the lease keys of their first 1000 read holds each: more would
-- hold the server up, and they end with their leases) and writer. Only
-- their records leave the holder hash: NAME and {NAME} share it.
local f = redis.call('HGETALL', K_lock)
local mode = redis.call('HGET', K_lock, 'mode')
-- Each delete allowed (an ACL), or none is made: a script is not rolled
-- back, and records deleted before a refusal would leave NAME held by
-- holders nobody can name.
local need = {'HDEL', K_holder, 'DEL', K_lock}
for i = 1, #f, 2 do
  if mode and K_tag and f[i] ~= 'mode' and string.sub(f[i], -6) ~= ':write'
  then
    need[#need + 1] = 'DEL'
    need[#need + 1] = K_tag .. ':' .. f[i] .. ':rwlock_timeout:1'
  end
end
bad = rl_denied(need)
if bad then return bad end
local _, now_ms = rl_time()
local who, rec = false, false
-- Each holder removed is recorded (a read-write lock's with its kind).
local log = {}
for i = 1, #f, 2 do
  if f[i] ~= 'mode' then
    local w = string.sub(f[i], -6) == ':write' and string.sub(f[i], 1, -7)
    local r = redis.call('HGET', K_holder, f[i]) or
              (w and redis.call('HGET', K_holder, w))
    if not who then who, rec = w or f[i], r end
    local e = rl_log_holder(w or f[i], r, now_ms)
    if w or mode == 'read' then
      e[#e + 1] = 'kind'
      e[#e + 1] = w and 'write' or 'read'
    end
    log[#log + 1] = e
  end
  redis.call('HDEL', K_holder, f[i])
  local n = tonumber(f[i + 1])
  if mode and K_tag and f[i] ~= 'mode' and n and
      string.sub(f[i], -6) ~= ':write' then
    for j = 1, math.min(n, 1000) do
      redis.call('DEL', K_tag .. ':' .. f[i] .. ':rwlock_timeout:' .. j)
    end
  end
end
redis.call('DEL', K_lock)
local d = rl_decode(rec)
local held = tonumber(d.since_ms) and now_ms - tonumber(d.since_ms) or false
for _, e in ipairs(log) do
  for _, v in ipairs({'by_host', A_host or '', 'by_pid', A_pid or '',
                      'by_user', A_user or ''}) do
    e[#e + 1] = v
  end
  rl_log_event(K_log, A_hist_max, A_hist_ttl, 'forced', e)
end
local nopub = false
-- No fair queue and no room (the common case): one call for both; a
-- command the ACL refuses here wakes nobody, as in release.
local ok, woke = pcall(function()
  return redis.call('EXISTS', K_queue, K_room or K_queue) == 0 or
      (rl_wake_head(K_queue, K_timeout, K_waiter, K_channel, nil, A_message)
       and rl_room_wake(K_room, K_listener, K_channel, A_message))
end)
if not (ok and woke) then nopub = K_channel end
if not rl_publish(K_channel, A_message) then nopub = K_channel end
if mode and K_rwchannel and not rl_publish(K_rwchannel, '1') then
  nopub = K_rwchannel
end
return {1, nopub, who, d.host or false, tonumber(d.pid) or false,
        d.user or false, d.cmd or false, held}
