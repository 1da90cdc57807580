-- rw_acquire: take the read or the write lock of read-write lock NAME for
-- OWNER, or re-enter it (Redisson's RReadWriteLock layout). Readers share;
-- a writer excludes everyone but its own reads. A redlock writer that
-- waits records its intent, and no new reader starts while it is there
-- (Redisson's readers do not look at it).
-- KEYS[1]  lock       NAME                           hash: mode -> read|write,
--          reader OWNER -> read holds, writer OWNER:write -> write holds;
--          PEXPIRE = the longest lease
-- KEYS[2]  token      redisson_lock_token:{NAME}     string: fencing counter
-- KEYS[3]  holder     redlock_holder:{NAME}          hash: field (OWNER,
--          OWNER:write) -> JSON metadata, longest lease
-- KEYS[4]  leases     {NAME}:OWNER:rwlock_timeout    the caller's read leases:
--          string K_leases:N per read hold N
-- KEYS[5]  writer     redlock_writer:{NAME}          string: the owner of a
--          redlock writer that waits; PX = its waiter timeout
-- ARGV[1]  lease           lease in milliseconds
-- ARGV[2]  owner           owner token
-- ARGV[3]  host            host of the caller
-- ARGV[4]  pid             pid of the caller
-- ARGV[5]  user            user of the caller
-- ARGV[6]  cmd             command of the caller
-- ARGV[7]  mode            "read" or "write"
-- ARGV[8]  waiter_timeout  waiter timeout in ms: how long a writer's intent
--                          lasts unless it calls again
-- ARGV[9]  flags           flags; "j": a writer that finds the lock busy
--                          records (or refreshes) its intent in K_writer,
--                          unless another writer's is there; "e": re-enter
--                          only (a nested call through REDLOCK_HELD): when
--                          OWNER holds neither a read nor the write hold of
--                          NAME, nothing is taken (see rl_gone)
-- ARGV[10] channel         redisson_rwlock:{NAME}, the channel a release
--                          publishes on
-- ARGV[11] min_hold        --min-hold in ms (0: none), recorded as in
--                          acquire.lua
-- KEYS[6]  log        redlock_log:{NAME}             stream: history
-- ARGV[12] hist_max        history: about how many events to keep ("": none
--                          kept)
-- ARGV[13] hist_ttl        history: the stream's expiry after an event, in ms
--                          (0: never)
-- ARGV[14] hist_entry      history: the caller's part of its entries
--                          (rl_history_entry: owner, host, pid, user, cmd, how
--                          long it waited, kind, "event"), as in acquire.lua: a
--                          fresh hold records "acquired" with its token, a
--                          caller without "j" that finds NAME busy "busy"; a
--                          re-entry records nothing
-- ARGV[15] holder_json     the start of the caller's holder record (see
--                          rl_holder_meta)
-- ARGV[16] publish         PUBLISH or SPUBLISH: how releases wake waiters
--                          (checked here)
-- RETURNS  acquired   {1, fence, holds, nopub, skipped}
-- RETURNS  busy       {0, pttl, owner, host, pid, user, cmd, held_ms, nil,
--                      queued, nil x 5, held_until, nil x 4, gone}
-- RETURNS  wrongtype  {-1, key, type}
-- Returns the replies of acquire.lua:
--         {1, fence, holds, nopub, skipped}
--                                      acquired (holds > 1: re-entered the
--                                      same field); fence a decimal string;
--                                      nopub: A_channel when this user may
--                                      not PUBLISH there, else nil;
--                                      skipped: why the history's XADD was
--                                      refused, or nil
--         {0, pttl, owner, host, pid, user, cmd, held_ms, nil, queued,
--          nil, nil, nil, nil, nil, held_until}
--                                      busy: pttl of NAME, or of K_writer
--                                      when a waiting writer holds a new
--                                      reader back (owner: that writer,
--                                      queued 1; else nil);
--                                      owner a holder's field in NAME
--                                      (OWNER or OWNER:write); its metadata
--                                      when recorded, else nil
--         {-1, key, type}              KEY is not of the type needed, or a
--                                      fencing counter that cannot grow;
--                                      nothing was changed
--         {0, nil x 19, 1}             "e": nothing of OWNER's to
--                                      re-enter (rl_gone)
-- A hash without "mode" is a plain lock (Redisson's RLock, or an older
-- redlock's): busy for both; so is redlock's plain hold, its marker "mode"
-- -> "write" without a writer's field OWNER:write. A writer ignores
-- another writer's intent: whoever comes first to a free lock takes it.
rl_pubcmd = A_publish or rl_pubcmd
local lease, owner, kind = A_lease, A_owner, A_mode
local wfield = owner .. ':write'
local keys = {K_lock, K_token, K_holder}
local want = {'hash', 'string', 'hash'}
for i = 1, 3 do
  local bad = rl_badtype(keys[i], want[i])
  if bad then return bad end
end
local bad = rl_badtype(K_writer, 'string') or rl_counter_bad(K_token)
if bad then return bad end

local now_us, now_ms = rl_time()
local mode = redis.call('HGET', K_lock, 'mode')
local exists = redis.call('EXISTS', K_lock) == 1
-- NAME held by someone else is examined: a hash of another shape than a
-- lock's (an application's) is never taken, waited for nor shown as held.
if exists and redis.call('HEXISTS', K_lock, owner) == 0 and
    redis.call('HEXISTS', K_lock, wfield) == 0 then
  bad = rl_not_lock(K_lock)
  if bad then return bad end
end
-- Re-enter only: OWNER holds NAME (a read hold, or the write hold under
-- which it may read too), or nothing is taken. (A read hold asked to
-- write is busy, as it is for anyone.)
if string.find(A_flags or '', 'e', 1, true) and
    redis.call('HEXISTS', K_lock, wfield) == 0 and
    redis.call('HEXISTS', K_lock, owner) == 0 then
  return rl_gone()
end

-- The holder to name when busy: the writer in write mode, else a reader.
local function holder()
  local first = nil
  for _, f in ipairs(redis.call('HKEYS', K_lock)) do
    if f ~= 'mode' then
      if mode ~= 'write' or string.sub(f, -6) == ':write' then return f end
      first = first or f
    end
  end
  return first
end

local function busy(pttl, who, writer_waits)
  local d = who and rl_decode(redis.call('HGET', K_holder, who)) or {}
  -- A caller that does not wait goes without it: a busy skip, naming the
  -- holder's owner (a writer's field less its ":write").
  if not string.find(A_flags or '', 'j', 1, true) and K_log and
      A_hist_max ~= '' then
    local o = who and string.gsub(who, ':write$', '') or ''
    rl_log(K_log, A_hist_max, A_hist_ttl, A_hist_entry .. 'busy\31holder\31' ..
           string.gsub(o, '\31', '?'), true)
  end
  local since = tonumber(d.since_ms)
  return {0, pttl, who or false, d.host or false, tonumber(d.pid) or false,
          d.user or false, d.cmd or false, since and (now_ms - since) or false,
          false, writer_waits and 1 or false, false, false, false, false,
          false, d.finished and tonumber(d.until_ms) or false}
end

-- One more hold of FIELD: a fresh one takes a fence and records the caller.
local function granted(field, holds)
  rl_lengthen(K_lock, lease)
  local fence, skipped
  local rec = redis.call('HGET', K_holder, field)
  local longer = holds > 1 and rl_hold_longer(rec, now_ms, A_min_hold)
  if longer and longer ~= rec then
    redis.call('HSET', K_holder, field, longer)
    rec = longer
  end
  if rl_finished(rec) then
    -- Its owner takes up a finished hold (--min-hold) again: one hold.
    redis.call('HSET', K_holder, field, rl_set_finished(rec, false))
    fence = rl_fence(rec) or '0'
  elseif holds > 1 then
    fence = rl_fence(redis.call('HGET', K_holder, field)) or '0'
  else
    local old
    fence, old = rl_next_fence(K_token, now_us)
    redis.call('HSET', K_holder, field,
               rl_holder_meta(A_holder_json or rl_holder_start(A_host, A_pid,
                              A_user, A_cmd), now_ms, fence, A_min_hold))
    skipped = K_log and A_hist_max ~= '' and
        rl_log(K_log, A_hist_max, A_hist_ttl,
               A_hist_entry .. 'acquired\31fence\31' .. fence,
               rl_log_renews(A_hist_ttl, now_us, old))
  end
  rl_lengthen(K_holder, lease)
  return {1, fence, holds, (not rl_may_publish(A_channel)) and A_channel,
          skipped}
end

-- A fresh hold of FIELD (N its read hold, nil for a write) checks first
-- that the ACL lets this user run, on its key, every command that the
-- hold's acquisition and its release write with: a script is not rolled
-- back, and a refusal after the first write would keep that write (NAME
-- without its lease). Nil when all are allowed, else the refusal.
local function denied(n)
  local need = {'HSET', K_lock, 'HINCRBY', K_lock, 'PEXPIRE', K_lock,
                'SET', K_token, 'INCR', K_token, 'HSET', K_holder, 'PEXPIRE',
                K_holder, 'PTTL', K_lock, 'PTTL', K_holder, 'HDEL', K_lock,
                'HDEL', K_holder, 'DEL', K_lock, 'DEL', K_holder}
  local more = n and {'SET', K_leases .. ':' .. n, 'DEL',
                      K_leases .. ':' .. n} or {'DEL', K_writer}
  for _, v in ipairs(more) do need[#need + 1] = v end
  return rl_denied(need)
end

if kind == 'read' then
  local reader = redis.call('HEXISTS', K_lock, owner) == 1
  local writer = mode == 'write' and
      redis.call('HEXISTS', K_lock, wfield) == 1
  if exists and mode ~= 'read' and not writer then
    return busy(redis.call('PTTL', K_lock), holder())
  end
  local waiting = redis.call('GET', K_writer)
  if not reader and not writer and waiting and waiting ~= owner then
    return busy(redis.call('PTTL', K_writer), waiting, true)
  end
  -- A finished read hold (--min-hold) taken up again: one hold.
  local fin = reader and rl_finished(redis.call('HGET', K_holder, owner))
  local n = reader and not fin and
      tonumber(redis.call('HGET', K_lock, owner)) + 1 or 1
  bad = rl_badtype(K_leases .. ':' .. n, 'string') or
      (not reader and denied(n))
  if bad then return bad end
  if not exists then
    redis.call('HSET', K_lock, 'mode', 'read', owner, 1)
    redis.call('PEXPIRE', K_lock, lease)
  elseif fin then
    redis.call('HSET', K_lock, owner, 1)
  else
    n = redis.call('HINCRBY', K_lock, owner, 1)
  end
  redis.call('SET', K_leases .. ':' .. n, 1, 'PX', lease)
  return granted(owner, n)
end

if not exists then
  bad = denied(nil)
  if bad then return bad end
  redis.call('HSET', K_lock, 'mode', 'write', wfield, 1)
  redis.call('PEXPIRE', K_lock, lease)
  if redis.call('GET', K_writer) == owner then redis.call('DEL', K_writer) end
  return granted(wfield, 1)
end
if mode == 'write' and redis.call('HEXISTS', K_lock, wfield) == 1 then
  if rl_finished(redis.call('HGET', K_holder, wfield)) then
    redis.call('HSET', K_lock, wfield, 1)	-- taken up again: one hold
    return granted(wfield, 1)
  end
  return granted(wfield, redis.call('HINCRBY', K_lock, wfield, 1))
end
if string.find(A_flags or '', 'j', 1, true) then
  local waiting = redis.call('GET', K_writer)
  if not waiting or waiting == owner then
    -- Its intent goes when it gives up (rw_leave) or acquires.
    bad = rl_denied({'SET', K_writer, 'DEL', K_writer})
    if bad then return bad end
    redis.call('SET', K_writer, owner, 'PX', A_waiter_timeout)
  end
end
return busy(redis.call('PTTL', K_lock), holder())
