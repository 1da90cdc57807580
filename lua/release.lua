-- release: give back one hold of lock NAME by OWNER; the last one frees it
-- and wakes the waiters: "0" on the lock's channel (Redisson's RLock
-- waiters, and the room's listener), the head of the fair queue on its own
-- channel (RFairLock), and one plain waiter of the room on its own.
-- KEYS[1]  lock       NAME                           hash: owner -> hold count,
--          and redlock's marker "mode" -> "write"
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
-- KEYS[9]  rwchannel  redisson_rwlock:{NAME}         channel: "1" when a hold
--          with redlock's marker goes (Redisson's read and write locks wait
--          there)
-- ARGV[1]  owner           owner token
-- ARGV[2]  message         message published on release ("0"); empty: the
--                          release wakes nobody (an attempt undone on the
--                          masters that granted it because another master's
--                          holder is a Java client's: only that holder's
--                          release frees NAME, and it wakes the waiters)
-- KEYS[10] log        redlock_log:{NAME}             stream: history
-- ARGV[3]  hist_max        history: about how many events to keep ("": none
--                          kept)
-- ARGV[4]  hist_ttl        history: the stream's expiry, in ms (0: never),
--                          should the release find it gone
-- ARGV[5]  hist_entry      history: the caller's part of its entry
--                          (rl_history_entry: owner, COMMAND's exit status
--                          where known, "event")
-- ARGV[6]  flags           flags: "u", an acquisition undone (its minimum hold
--                          is not kept); "l", the watchdog's release, which
--                          records a hold that it finds gone as lost
-- ARGV[7]  publish         PUBLISH or SPUBLISH: the command that wakes waiters
-- RETURNS  released   {2, nopub, until}
-- RETURNS  nested     {1, holds}
-- RETURNS  not_held   {0, exists}
-- RETURNS  wrongtype  {-1, key, type}
-- Returns {2, nopub}       released: key deleted, waiters woken; nopub: the
--                          channel the server refused PUBLISH on (ACL), so
--                          waiters were not woken, else nil
--         {2, nopub, until}
--                          the last hold given back before the end of its
--                          minimum hold (--min-hold, until_ms in its
--                          holder record): the hold stays, finished, with
--                          its lease set to what is left of it, and the
--                          waiters are woken as by a release, to learn
--                          that lease and wake when it ends (nothing
--                          publishes when it does); a finished hold given
--                          back again changes nothing and wakes nobody
--         {1, holds}       one hold released, HOLDS remain
--         {0, held}        OWNER does not hold NAME (held = 1: someone else does)
--         {-1, key, type}  KEY is not of the type a lock needs; nothing changed
-- The last hold is given back with deletes only, which a server out of
-- memory still runs.
rl_pubcmd = A_publish or rl_pubcmd
-- Each key is checked where a command would fail on it, before anything
-- is written: NAME by this read, the holder records by the first write.
local r = redis.pcall('HMGET', K_lock, A_owner, 'mode', A_owner .. ':write')
if r.err then return rl_type_err(r, 'HMGET', K_lock) end
local holds = tonumber(r[1])
-- A Redisson read-write lock ("mode" other than redlock's marker, or
-- OWNER's write hold beside it, and a lease key per read hold) is never
-- redlock's to give back: taking a count off would strand its keys.
if not rl_plain_hold(r[2], r[3]) then holds = nil end
if not holds then
  if string.find(A_flags or '', 'l', 1, true) then
    rl_log(K_log, A_hist_max, A_hist_ttl, A_hist_entry .. 'lost', true)
  end
  return {0, redis.call('EXISTS', K_lock)}
end
if holds > 1 then return {1, redis.call('HINCRBY', K_lock, A_owner, -1)} end
local rec = redis.pcall('HGET', K_holder, A_owner)
if type(rec) == 'table' then return rl_type_err(rec, 'HGET', K_holder) end
-- Wake NAME's waiters ("" in A_message: nobody): the channel the server
-- refused PUBLISH on (ACL), or false.
local function wake()
  if A_message == '' then return false end
  local nopub = false
  -- No fair queue and no room (the common case): one call for both. The
  -- release has taken effect by now: a command the ACL refuses here (a
  -- script is not rolled back) wakes nobody, as a refused PUBLISH does,
  -- and fails nothing.
  local ok, woke = pcall(function()
    return redis.call('EXISTS', K_queue, K_room or K_queue) == 0 or
        (rl_wake_head(K_queue, K_timeout, K_waiter, K_channel, nil, A_message)
         and rl_room_wake(K_room, K_listener, K_channel, A_message))
  end)
  if not (ok and woke) then nopub = K_channel end
  if not rl_publish(K_channel, A_message) then nopub = K_channel end
  -- Redisson's read and write locks that the marker held back wait on
  -- the read-write lock's channel; "1" wakes them all, as after a write.
  -- Not reported when refused (ACL): NAME's own waiters were woken, and
  -- those look again when the lease they were told runs out.
  if r[2] and K_rwchannel then rl_publish(K_rwchannel, '1') end
  return nopub
end
-- The clock is read for a minimum hold only (the history's entries are
-- timed by their ids).
local keep = rl_until(rec)
local now_ms = 0
if keep then
  local _
  _, now_ms = rl_time()
  keep = rl_keep_until(rec, now_ms, A_flags)
end
if keep then
  if not rl_finished(rec) then
    redis.call('HSET', K_holder, A_owner, rl_set_finished(rec, true))
    redis.call('PEXPIRE', K_lock, keep - now_ms)
    redis.call('PEXPIRE', K_holder, keep - now_ms)
    if K_log and A_hist_max ~= '' then
      rl_log(K_log, A_hist_max, A_hist_ttl, A_hist_entry ..
             string.format('released\31held_until\31%.0f', keep))
    end
    return {2, wake(), keep}
  end
  return {2, false, keep}
end
local gone = redis.pcall('HDEL', K_holder, A_owner)
if type(gone) == 'table' then return rl_type_err(gone, 'HDEL', K_holder) end
redis.call('DEL', K_lock)
-- Recorded after the deletes, which a server out of memory still runs.
-- The owner's host, pid, command and token are in its acquisition's
-- event, and how long it held NAME between the two entries' ids.
-- An acquisition undone (flags "u": it won too few masters, or was
-- never used) is recorded as such, not as a run.
if K_log and A_hist_max ~= '' then
  rl_log(K_log, A_hist_max, A_hist_ttl,
         A_hist_entry .. (A_flags == 'u' and 'undone' or 'released'))
end
return {2, wake()}
