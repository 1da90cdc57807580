-- queue: the holder of lock NAME and its fair waiters in order, read
-- atomically (for the queue command; it walks the whole queue).
-- KEYS[1]  lock       NAME                           hash: owner -> hold count
-- KEYS[2]  holder     redlock_holder:{NAME}          hash: owner -> JSON
--          metadata
-- KEYS[3]  queue      redisson_lock_queue:{NAME}     list: fair waiters, head
--          first
-- KEYS[4]  timeout    redisson_lock_timeout:{NAME}   zset: fair waiter ->
--          deadline (ms)
-- KEYS[5]  waiter     redlock_waiter:{NAME}          hash: fair waiter -> JSON
--          metadata
-- KEYS[6]  room       redlock_room:{NAME}            zset: plain waiter ->
--          deadline (ms)
-- KEYS[7]  listener   redlock_listener:{NAME}        string: the room's
--          listener
-- KEYS[8]  writer     redlock_writer:{NAME}          string: a waiting writer's
--          owner
-- KEYS[9]  guest      redlock_guest:{NAME}           hash: plain waiter ->
--          its record (rl_guest_join)
-- ARGV[1]  rwchannel       redisson_rwlock:{NAME} the read-write lock's channel
-- RETURNS  queue      {now_ms, holder, unordered, rw, guests, waiters...}
-- RETURNS  wrongtype  {-1, key, type}
-- RETURNS  rw         {mode, readers, waiting, writer, writer_ms}
-- RETURNS  entry      {owner, ms, host, pid, user, cmd, age_ms, held_until,
--                      gives_up, boot, pidns, renewed}
-- Returns {-1, key, type} when KEY is not of the type a lock needs, else
--   {now_ms, holder, unordered, rw, guests, waiters...} where unordered
--   is the number of plain and --limit waiters, in the room, guests the
--   first 100 of them by deadline, each as a waiter is below (those
--   with no record, from an older redlock or a user who may not write
--   it, by their tokens), holder is {} when
--   free, else {owner, pttl, host, pid, user, cmd, held_ms, until_ms}
--   (until_ms: a finished hold's end, --min-hold, else nil), rw is {} but
--   for a read-write lock: {mode, readers, waiting, writer, writer_ms}
--   (readers: how many hold it; waiting: the clients that listen on its
--   channel, its waiting readers and writers, redlock's and Redisson's;
--   writer: the owner of the writer that waits first, announced in
--   K_writer for writer_ms more, else nil), and each waiter is
--   {owner, deadline_ms_left, host, pid, user, cmd, waiting_ms, nil,
--   gives_up_ms_left} (deadline: its heartbeat's; gives_up: its own wait,
--   -1 when it waits for ever);
--   unknown fields are nil.
local keys = {K_lock, K_holder, K_queue, K_timeout, K_waiter}
local want = {'hash', 'hash', 'list', 'zset', 'hash'}
for i = 1, 5 do
  local bad = rl_badtype(keys[i], want[i])
  if bad then return bad end
end
-- A hash of another shape than a lock's (an application's) has no queue.
local shape = rl_not_lock(K_lock)
if shape then return shape end
local _, now_ms = rl_time()
local function since(d)
  local s = tonumber(d.since_ms)
  if s then return now_ms - s end
  return false
end
local out = {now_ms}
local owner = rl_holder(K_lock)
if owner then
  local d = rl_decode(redis.call('HGET', K_holder, owner))
  out[2] = {owner, redis.call('PTTL', K_lock), d.host or false,
            tonumber(d.pid) or false, d.user or false, d.cmd or false,
            since(d), d.finished and tonumber(d.until_ms) or false, false,
            rl_proc(d)}
else
  out[2] = {}
end
out[3] = K_listener and rl_room_count(K_room, K_listener, K_timeout, now_ms)
         or 0
out[4] = {}
out[5] = {}
if K_listener and out[3] > 0 then
  local queued = redis.call('TYPE', K_timeout).ok == 'zset'
  local guest = redis.call('TYPE', K_guest).ok == 'hash'
  local r = redis.call('ZRANGEBYSCORE', K_room, now_ms, '+inf',
                       'WITHSCORES', 'LIMIT', 0, 100)
  for i = 1, #r, 2 do
    local w, dl = r[i], tonumber(r[i + 1])
    -- The listener that queues behind a Java holder is a fair waiter.
    if not (queued and redis.call('ZSCORE', K_timeout, w)) then
      local d = guest and rl_decode(redis.call('HGET', K_guest, w)) or {}
      local g = tonumber(d.gives_up_ms)
      if g and g >= 0 then g = math.max(g - now_ms, 0) end
      out[5][#out[5] + 1] = {type(d.owner) == 'string' and d.owner or w,
                             dl - now_ms, d.host or false, tonumber(d.pid) or false,
                             d.user or false, d.cmd or false, since(d), false,
                             g or false}
    end
  end
end
local mode = redis.call('HGET', K_lock, 'mode')
if owner and (mode == 'read' or (mode == 'write' and not rl_plain(K_lock))) then
  local readers = 0
  for _, f in ipairs(redis.call('HKEYS', K_lock)) do
    if f ~= 'mode' and string.sub(f, -6) ~= ':write' then
      readers = readers + 1
    end
  end
  local first = K_writer and redis.pcall('GET', K_writer)
  if type(first) ~= 'string' then first = false end
  out[4] = {mode, readers, A_rwchannel and rl_listeners(A_rwchannel) or 0,
            first, first and redis.call('PTTL', K_writer) or false}
end
for _, w in ipairs(redis.call('LRANGE', K_queue, 0, -1)) do
  local dl = rl_waiter_deadline(K_waiter, w) or
             rl_score_deadline(tonumber(redis.call('ZSCORE', K_timeout, w)))
  local d = rl_decode(redis.call('HGET', K_waiter, w))
  local g = tonumber(d.gives_up_ms)
  if g and g >= 0 then g = math.max(g - now_ms, 0) end
  out[#out + 1] = {w, dl and (dl - now_ms) or false, d.host or false,
                   tonumber(d.pid) or false, d.user or false,
                   d.cmd or false, since(d), false, g or false}
end
return out
