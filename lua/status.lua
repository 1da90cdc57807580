-- status: who holds lock NAME and how many wait for it, read atomically;
-- or, where Redisson keeps another kind at NAME, what is there.
-- KEYS[1]  lock       NAME                           hash: owner -> hold count;
--          a read-write lock has 'mode' too, and redlock's plain hold its
--          marker 'mode' -> 'write' without a field OWNER:write
-- KEYS[2]  holder     redlock_holder:{NAME}          hash: owner -> JSON
--          metadata
-- KEYS[3]  queue      redisson_lock_queue:{NAME}     list: fair waiters
-- KEYS[4]  timeout    redisson_lock_timeout:{NAME}   zset: fair waiter ->
--          deadline (ms)
-- KEYS[5]  waiter     redlock_waiter:{NAME}          hash: fair waiter -> JSON
--          metadata
-- KEYS[6]  permits    {NAME}:timeout                 zset: permit id -> expiry
--          (ms) of a permit-expirable semaphore
-- KEYS[7]  tag        {NAME}                         only named: a read hold's
--          lease is {NAME}:OWNER:rwlock_timeout:N
-- KEYS[8]  room       redlock_room:{NAME}            zset: plain waiter ->
--          deadline (ms)
-- KEYS[9]  listener   redlock_listener:{NAME}        string: the room's
--          listener
-- KEYS[10] writer     redlock_writer:{NAME}          string: a waiting writer's
--          owner
-- ARGV[1]  rwchannel       redisson_rwlock:{NAME} the read-write lock's channel
-- waiting: the fair waiters and the waiters of the room; and, for a
-- read-write lock, the clients that listen on its channel (its readers
-- and writers that wait: redlock's leave no other trace of waiting).
-- RETURNS  free       {0, waiting}
-- RETURNS  held       {1, waiting, pttl, owner, holds, host, pid, user, cmd,
--                      since_ms, fence, held_ms, mode, readers, writer,
--                      held_until, boot, pidns, renewed}
-- RETURNS  wrongtype  {-1, key, type, kind, free, taken, permits, waiting,
--                      ours}
-- RETURNS  reader     {owner, holds, pttl, host, pid, user, cmd, since_ms,
--                      fence, held_until, boot, pidns, renewed}
-- RETURNS  permit     {id, expires_ms, left_ms, host, pid, user, cmd,
--                      since_ms, fence, owner, held_until, boot, pidns,
--                      renewed}
-- Returns {0, waiting}                  free
--         {1, waiting, pttl, owner, holds, host, pid, user, cmd, since_ms,
--          fence, held_ms, mode, readers, writer, held_until}
--                                       held; unknown fields are nil;
--                                       fence is a decimal string. mode is
--                                       nil for an exclusive lock (readers
--                                       {}), else
--                                       'read' or 'write': then owner and
--                                       holds are the writer's (read mode:
--                                       nil and all read holds), its
--                                       metadata recorded under field
--                                       OWNER:write; readers {{owner,
--                                       holds, pttl, host, pid, user, cmd,
--                                       since_ms, fence}...} by owner, pttl
--                                       the longest lease of its last 100
--                                       read holds, nil when none is left,
--                                       the rest its metadata under field
--                                       OWNER (nil when not recorded);
--                                       writer: the owner of the writer
--                                       that waits first (announced in
--                                       K_writer), else nil;
--                                       held_until: the end of the
--                                       holder's (the writer's) minimum
--                                       hold when it is finished
--                                       (--min-hold), else nil; each
--                                       reader has its own as a tenth
--         {-1, key, type}               KEY is not of the type a lock needs
--         {-1, NAME, 'string', kind, free, taken, permits, waiting,
--          ours}
--                                       NAME is a Redisson semaphore: kind
--                                       'semaphore' or 'expirable'; taken
--                                       and permits {{id, expires_ms,
--                                       left_ms, host, pid, user, cmd,
--                                       since_ms, fence, owner,
--                                       held_until}...} (the first 100
--                                       to expire; nil expiry: none; the
--                                       holder's metadata where redlock
--                                       took it) are the expirable one's,
--                                       0 and {} else; waiting: the
--                                       waiters of the room (--limit);
--                                       ours: the permits taken that have
--                                       a holder record (redlock's)

-- Redisson's expiry for a permit without a lease.
local NO_EXPIRY = 922337203685477

-- How many of the permits taken (zset K_permits) have a holder record;
-- records of permits given back by others are not counted.
local function ours()
  if redis.call('TYPE', K_holder).ok ~= 'hash' then return 0 end
  local n = 0
  for _, f in ipairs(redis.call('HKEYS', K_holder)) do
    if redis.call('ZSCORE', K_permits, f) then n = n + 1 end
  end
  return n
end

-- NAME is a string: a Redisson semaphore when it holds a whole number.
local function semaphore()
  local v = redis.call('GET', K_lock)
  if #v > 15 or not string.match(v, '^%-?%d+$') then return nil end
  local _, now_ms = rl_time()
  local waiting = K_listener and
      rl_room_count(K_room, K_listener, K_timeout, now_ms) or 0
  if redis.call('TYPE', K_permits).ok ~= 'zset' then
    return {-1, K_lock, 'string', 'semaphore', tonumber(v), 0, {}, waiting,
            0}
  end
  local z = redis.call('ZRANGE', K_permits, 0, 99, 'WITHSCORES')
  local permits = {}
  local holders = redis.call('TYPE', K_holder).ok == 'hash'
  for i = 1, #z, 2 do
    local at = math.max(tonumber(z[i + 1]) or NO_EXPIRY, 0)
    local forever = at >= NO_EXPIRY
    local json = holders and redis.call('HGET', K_holder, z[i])
    local d = rl_decode(json)
    local since = tonumber(d.since_ms)
    permits[#permits + 1] = {rl_permit_hex(z[i]), (not forever) and at,
                             (not forever) and (at - now_ms),
                             d.host or false, tonumber(d.pid) or false,
                             d.user or false, d.cmd or false,
                             since or false, rl_fence(json),
                             d.owner or false,
                             d.finished and tonumber(d.until_ms) or false,
                             rl_proc(d)}
  end
  return {-1, K_lock, 'string', 'expirable', tonumber(v),
          redis.call('ZCARD', K_permits), permits, waiting, ours()}
end

-- The reply for a held lock: OWNER's metadata (none for false or a
-- Redisson holder), recorded under FIELD (default OWNER), around what the
-- caller found.
local function held(waiting, owner, holds, mode, readers, field)
  local json = owner and redis.call('HGET', K_holder, field or owner)
  local d = rl_decode(json)
  local _, now_ms = rl_time()
  local since = tonumber(d.since_ms)
  return {1, waiting, redis.call('PTTL', K_lock), owner, holds,
          d.host or false, tonumber(d.pid) or false, d.user or false,
          d.cmd or false, since or false, rl_fence(json),
          since and (now_ms - since) or false, mode, readers, false,
          d.finished and tonumber(d.until_ms) or false, rl_proc(d)}
end

-- The longest lease left of OWNER's read holds N, N-1, ... (100 at most).
local function read_lease(owner, n)
  local best = false
  for i = n, math.max(1, n - 99), -1 do
    local left = redis.call('PTTL', K_tag .. ':' .. owner ..
                            ':rwlock_timeout:' .. i)
    if left >= 0 and (not best or left > best) then best = left end
  end
  return best
end

-- A Redisson read-write lock in MODE: the writer, and the readers; the
-- waiters that listen on its channel, and the writer that waits first.
local function rwlock(waiting, mode)
  if A_rwchannel then waiting = waiting + rl_listeners(A_rwchannel) end
  local first = K_writer and redis.pcall('GET', K_writer)
  if type(first) ~= 'string' then first = false end
  local f = redis.call('HGETALL', K_lock)
  local writer, wholds, rholds, readers = false, 0, 0, {}
  for i = 1, #f, 2 do
    local n = tonumber(f[i + 1])
    local w = string.match(f[i], '^(.*):write$')
    if w and n then
      writer, wholds = w, n
    elseif f[i] ~= 'mode' and n then
      rholds = rholds + n
      local json = redis.call('HGET', K_holder, f[i])
      local d = rl_decode(json)
      readers[#readers + 1] = {f[i], n, read_lease(f[i], n),
                               d.host or false, tonumber(d.pid) or false,
                               d.user or false, d.cmd or false,
                               tonumber(d.since_ms) or false, rl_fence(json),
                               d.finished and tonumber(d.until_ms) or false,
                               rl_proc(d)}
    end
  end
  table.sort(readers, function(a, b) return a[1] < b[1] end)
  local out = held(waiting, writer, writer and wholds or rholds, mode,
                   readers, writer and writer .. ':write')
  out[15] = first
  return out
end

if redis.call('TYPE', K_lock).ok == 'string' then
  local sem = semaphore()
  if sem then return sem end
end
local keys = {K_lock, K_holder, K_queue, K_timeout, K_waiter}
local want = {'hash', 'hash', 'list', 'zset', 'hash'}
for i = 1, 5 do
  local bad = rl_badtype(keys[i], want[i])
  if bad then return bad end
end
-- A hash of another shape than a lock's (an application's) is none.
local shape = rl_not_lock(K_lock)
if shape then return shape end
local waiting = redis.call('LLEN', K_queue)
-- Fair waiters dead at the head of the queue (past their deadlines: a
-- waiter killed, left there until the queue's next call drops them, as
-- rl_drop_expired judges them) wait no more. Their number is the cost.
if waiting > 0 then
  local _, now_ms = rl_time()
  for i = 0, waiting - 1 do
    local w = redis.call('LINDEX', K_queue, i)
    local dl = rl_waiter_deadline(K_waiter, w) or rl_score_deadline(
        tonumber(redis.call('ZSCORE', K_timeout, w)))
    if not dl or dl > now_ms then break end
    waiting = waiting - 1
  end
end
-- The room's waiters past their deadlines are gone; its listener, which
-- queues too behind a Java holder, counts once.
if K_listener then
  local _, now_ms = rl_time()
  waiting = waiting + rl_room_count(K_room, K_listener, K_timeout, now_ms)
end
local mode = redis.call('HGET', K_lock, 'mode')
if mode == 'read' or (mode == 'write' and not rl_plain(K_lock)) then
  return rwlock(waiting, mode)
end
-- A plain lock; redlock's marker ("mode") names no holder.
local owner = rl_holder(K_lock)
if not owner then return {0, waiting} end
local holds = tonumber(redis.call('HGET', K_lock, owner)) or 0
return held(waiting, owner, holds, false, {})
