-- force: delete lock NAME whoever holds it, and wake its waiters: "0" on
-- the lock's channel, the head of the fair queue and one waiter of the
-- room on their own, and for a read-write lock "1" (wake all) on its
-- channel, where Redisson's readers and writers listen.
-- KEYS[1]  NAME                           hash: owner -> hold count
-- KEYS[2]  redisson_lock__channel:{NAME}  channel; CHANNEL:OWNER wakes a fair waiter
-- KEYS[3]  redlock_holder:{NAME}          hash: owner -> JSON metadata
-- KEYS[4]  redisson_lock_queue:{NAME}     list: fair waiters, head first
-- KEYS[5]  redisson_lock_timeout:{NAME}   zset: fair waiter -> deadline (ms)
-- KEYS[6]  redlock_waiter:{NAME}          hash: fair waiter -> JSON metadata
-- KEYS[7]  redlock_room:{NAME}            zset: plain waiter -> deadline (ms)
-- KEYS[8]  redlock_listener:{NAME}        string: the plain waiter that
--                                          listens to the lock's channel
-- KEYS[9]  {NAME}                          only named: a read hold N of a
--                                          read-write lock's FIELD has the
--                                          lease key KEYS[9]:FIELD:rwlock_timeout:N
-- KEYS[10] redisson_rwlock:{NAME}         channel of a read-write lock
-- KEYS[11] redlock_log:{NAME}            stream: history
-- ARGV[1]  message published ("0")
-- ARGV[2]  history: about how many events to keep ("": none kept)
-- ARGV[3]  history: the stream's expiry after an event, in ms (0: never)
-- ARGV[4..6] host, pid and user of the caller (who forced it)
-- ARGV[7]  PUBLISH or SPUBLISH: the command that wakes waiters
-- Returns {1, nopub, owner, host, pid, user, cmd, held_ms}
--                          a lock was deleted; nopub as in release; the
--                          holder removed (a plain lock's, or the
--                          writer's or first reader's; nil when unknown)
--         {0}              NAME was free
--         {-1, key, type}  KEY is not of the type a lock needs; nothing changed
rl_pubcmd = ARGV[7] or rl_pubcmd
local bad = rl_badtype(KEYS[1], 'hash') or rl_badtype(KEYS[3], 'hash')
if bad then return bad end
if redis.call('EXISTS', KEYS[1]) == 0 then return {0} end
-- Every holder goes: a plain lock's owner, or a read-write lock's readers
-- (with the lease keys of their first 1000 read holds each: more would
-- hold the server up, and they end with their leases) and writer. Only
-- their records leave the holder hash: NAME and {NAME} share it.
local f = redis.call('HGETALL', KEYS[1])
local mode = redis.call('HGET', KEYS[1], 'mode')
local _, now_ms = rl_time()
local who, rec = false, false
-- Each holder removed is recorded (a read-write lock's with its kind).
local log = {}
for i = 1, #f, 2 do
  if f[i] ~= 'mode' then
    local w = string.sub(f[i], -6) == ':write' and string.sub(f[i], 1, -7)
    local r = redis.call('HGET', KEYS[3], f[i]) or
              (w and redis.call('HGET', KEYS[3], w))
    if not who then who, rec = w or f[i], r end
    local e = rl_log_holder(w or f[i], r, now_ms)
    if w or mode == 'read' then
      e[#e + 1] = 'kind'
      e[#e + 1] = w and 'write' or 'read'
    end
    log[#log + 1] = e
  end
  redis.call('HDEL', KEYS[3], f[i])
  local n = tonumber(f[i + 1])
  if mode and KEYS[9] and f[i] ~= 'mode' and n and
      string.sub(f[i], -6) ~= ':write' then
    for j = 1, math.min(n, 1000) do
      redis.call('DEL', KEYS[9] .. ':' .. f[i] .. ':rwlock_timeout:' .. j)
    end
  end
end
redis.call('DEL', KEYS[1])
local d = rl_decode(rec)
local held = tonumber(d.since_ms) and now_ms - tonumber(d.since_ms) or false
for _, e in ipairs(log) do
  for _, v in ipairs({'by_host', ARGV[4] or '', 'by_pid', ARGV[5] or '',
                      'by_user', ARGV[6] or ''}) do
    e[#e + 1] = v
  end
  rl_log_event(KEYS[11], ARGV[2], ARGV[3], 'forced', e)
end
local nopub = false
-- No fair queue and no room (the common case): one call for both.
if redis.call('EXISTS', KEYS[4], KEYS[7] or KEYS[4]) > 0 and
    not (rl_wake_head(KEYS[4], KEYS[5], KEYS[6], KEYS[2], nil, ARGV[1]) and
         rl_room_wake(KEYS[7], KEYS[8], KEYS[2], ARGV[1])) then
  nopub = KEYS[2]
end
if not rl_publish(KEYS[2], ARGV[1]) then nopub = KEYS[2] end
if mode and KEYS[10] and not rl_publish(KEYS[10], '1') then
  nopub = KEYS[10]
end
return {1, nopub, who, d.host or false, tonumber(d.pid) or false,
        d.user or false, d.cmd or false, held}
