-- acquire: take lock NAME for OWNER, or re-enter it; with A_mode = "fair",
-- only the head of the FIFO queue may take a free lock (Redisson's RLock and
-- RFairLock layouts). A fair call is also a queued waiter's heartbeat.
-- KEYS[1]  lock       NAME                           hash: owner -> hold count,
--          and "mode" -> "write", redlock's marker; PEXPIRE = lease
-- KEYS[2]  token      redisson_lock_token:{NAME}     string: fencing counter
-- KEYS[3]  holder     redlock_holder:{NAME}          hash: owner -> JSON
--          metadata, same lease
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
-- KEYS[9]  writer     redlock_writer:{NAME}          string: the exclusive
--          waiter (or --write) that new readers wait behind; PX = its waiter
--          timeout
-- Every key is passed on every call; the arguments say which are used:
-- K_queue, K_timeout and K_waiter with A_mode "fair" or "queue", K_room
-- and K_listener with a plain waiter's call, K_writer with any waiter's
-- ("j" in A_flags).
-- KEYS[10] log        redlock_log:{NAME}             stream: history
-- KEYS[11] supersede  redlock_supersede:{NAME}       hash: --supersede waiter
--          -> JSON: its host, pid, user, cmd and since_ms while it waits;
--          {"by_owner", "at_ms", "by"} once a newer one superseded it
-- KEYS[12] guest      redlock_guest:{NAME}           hash: plain waiter ->
--          JSON: its host, pid, user, cmd, since_ms and gives_up_ms, for
--          queue; as long as the room
-- ARGV[1]  lease           lease in milliseconds
-- ARGV[2]  owner           owner token
-- ARGV[3]  host            host of the caller
-- ARGV[4]  pid             pid of the caller
-- ARGV[5]  user            user of the caller
-- ARGV[6]  cmd             command of the caller
-- ARGV[7]  mode            "fair", "" for a plain lock, or "queue": a plain
--                          lock whose waiter queues as a fair one does
-- ARGV[8]  waiter_timeout  waiter timeout in ms (a deadline this far ahead)
-- ARGV[9]  flags           flags; "j": join the queue (the room) when busy,
--                          "r": the caller had joined the queue before, "w":
--                          the caller is in the room (it leaves it when it
--                          acquires), "p": report the caller's position (LPOS,
--                          O(n), for the waiting line on a terminal only),
--                          "S": a --supersede caller's first call (it
--                          supersedes every older --supersede waiter of
--                          NAME: each leaves the queue, the room and
--                          K_writer, is marked superseded in K_supersede,
--                          recorded in the history and woken on its own
--                          channel, CHANNEL:OWNER), "s": a later call of a
--                          --supersede waiter (one marked superseded gets
--                          the reply below and its mark goes; one whose
--                          record is gone, stopped for longer than the
--                          record lasts, gets it with BY_OWNER "": it
--                          cannot tell that no newer one came), "e":
--                          re-enter only (a nested call through
--                          REDLOCK_HELD): when OWNER holds no hold of NAME,
--                          nothing is taken (see rl_gone). With
--                          "j", a caller that finds NAME held in read mode (a
--                          read-write lock's readers) announces itself in
--                          K_writer as a waiting --write does, unless another
--                          waiter's announcement is there, so that no new
--                          reader of redlock's comes in; it renews its own at
--                          each call, and takes it away when it acquires.
-- ARGV[10] channel         redisson_lock__channel:{NAME}, the channel a release
--                          publishes on
-- ARGV[11] min_hold        --min-hold in ms (0: none): a fresh hold records its
--                          end, until_ms, in its holder record, and release.lua
--                          keeps the hold until then
-- ARGV[12] hist_max        history: about how many events to keep ("": none
--                          kept)
-- ARGV[13] hist_ttl        history: the stream's expiry after an event, in ms
--                          (0: never)
-- ARGV[14] hist_entry      history: the caller's part of its entries
--                          (rl_history_entry: owner, host, pid, user, cmd, how
--                          long it waited, "event")
-- ARGV[15] holder_json     the start of the caller's holder record (see
--                          rl_holder_meta)
-- ARGV[16] gives_up        how long the caller will still wait, in ms: a fair
--                          waiter's entry keeps when it gives up (gives_up_ms,
--                          server clock; -1: never), for queue; "" when not
--                          known
-- ARGV[17] publish         PUBLISH or SPUBLISH: how releases wake waiters
--                          (checked here)
-- Fencing tokens are returned as decimal strings: a Lua number keeps only
-- 53 bits of the 63 a counter has.
-- RETURNS  acquired   {1, fence, holds, nopub, skipped}
-- RETURNS  busy       {0, pttl, owner, host, pid, user, cmd, held_ms,
--                      position, queued, head_wait_ms, rejoined, ahead,
--                      listen, announced, held_until, by_owner, by_host,
--                      by_pid, by_cmd, gone}
-- RETURNS  wrongtype  {-1, key, type}
-- Returns {1, fence, holds, nopub, skipped}
--                                      acquired (holds > 1: re-entered);
--                                      nopub: the channel this user may not
--                                      PUBLISH on (its release would wake
--                                      nobody), nil when it may or when the
--                                      server cannot tell; skipped: why the
--                                      history's XADD was refused, or nil
--         {0, pttl, owner, host, pid, user, cmd, held_ms,
--          position, queued, head_wait_ms, rejoined, ahead, listen,
--          announced, held_until}
--                                      not acquired; pttl nil when the lock
--                                      is free (a fair queue is ahead);
--                                      head_wait_ms: when a free lock's head
--                                      waiter is due to be evicted; ahead:
--                                      fair waiters ahead of the caller;
--                                      listen: 1 when the caller is the
--                                      room's listener; announced: 1 when
--                                      K_writer names the caller;
--                                      held_until: the end of the
--                                      holder's minimum hold when it is
--                                      finished (--min-hold); unknown
--                                      fields are nil
--         {0, nil x 15, by_owner, by_host, by_pid, by_cmd}
--                                      "s": the caller was superseded by
--                                      BY_OWNER (its host, pid, command):
--                                      it is out of the queue and the room
--                                      already, and stops waiting
--         {0, nil x 19, 1}             "e": OWNER holds nothing of NAME
--                                      to re-enter (rl_gone)
--         {-1, key, type}              KEY is not of the type a lock needs,
--                                      or a fencing counter that cannot
--                                      grow; nothing was changed
-- Expired waiters are evicted at the head only: the cost does not grow with
-- the length of the queue. A server out of memory refuses the first write
-- of a fresh hold, re-entry or join, and nothing before it is changed
-- (evicting dead waiters aside).
rl_pubcmd = A_publish or rl_pubcmd
local logkey = K_log
local fair = A_mode == 'fair'
-- "queue": a plain waiter that queues as well (behind a Java holder, whose
-- fair lock wakes only the head of the queue), taking a free lock as a
-- plain lock does.
local queue = fair or A_mode == 'queue'
local flags = A_flags or ''
-- A waiter's call ("j"): it joins the queue or the room when busy, and
-- may announce itself in K_writer.
local joins = string.find(flags, 'j', 1, true) ~= nil
-- A plain waiter waits in the room (a queued one too): a release wakes
-- one of them.
local room = not fair and joins
-- A queued call checks every key first (dropping dead waiters writes).
-- A plain one checks each key where a command would fail on it, before
-- anything is written: NAME, when it exists, by the HMGET below, the
-- holder records here, the counter by the SET (or INCR) that takes a
-- fresh hold's token, the first write.
local bad
if queue then
  local keys = {K_lock, K_token, K_holder, K_queue, K_timeout, K_waiter}
  local want = {'hash', 'string', 'hash', 'list', 'zset', 'hash'}
  for i = 1, 6 do
    bad = rl_badtype(keys[i], want[i])
    if bad then return bad end
  end
  bad = rl_counter_bad(K_token)
else
  bad = rl_badtype(K_holder, 'hash')
end
if bad then return bad end
-- A read-write lock's reader (a "mode" field beside OWNER, other than
-- redlock's marker, or the marker beside OWNER:write: the writer's own
-- read) holds no lock of this kind: its hold is not re-entered, nor
-- counted twice. A hold without the marker (an older redlock's) is
-- re-entered as it is, so that the older redlock still gives it back.
-- A free NAME (the common case) has no hold to re-enter: no read.
local pttl = redis.call('PTTL', K_lock)
local mine = pttl ~= -2 and redis.pcall('HMGET', K_lock, A_owner, 'mode',
                                        A_owner .. ':write')
if mine and mine.err then return rl_type_err(mine, 'HMGET', K_lock) end
-- NAME held by someone else is examined: a hash of another shape than a
-- lock's (an application's) is never taken, waited for nor shown as held.
if mine and not mine[1] and not mine[3] then
  bad = rl_not_lock(K_lock)
  if bad then return bad end
end
-- --supersede: "S" arrives, "s" waits on (see the flags).
local sflag = K_supersede and (string.find(flags, 'S', 1, true) and 'S' or
                               string.find(flags, 's', 1, true) and 's')
if sflag then
  bad = rl_badtype(K_supersede, 'hash') or
      rl_denied({'HSET', K_supersede, 'HSETNX', K_supersede, 'HDEL',
                 K_supersede, 'PEXPIRE', K_supersede, 'PTTL', K_supersede})
  if bad then return bad end
end

local now_us, now_ms = rl_time()
local dropped = 0
if queue then
  local _
  _, dropped, bad = rl_drop_expired(K_queue, K_timeout, K_waiter, now_ms)
  if bad then return bad end
end

if mine and mine[1] and rl_plain_hold(mine[2], mine[3]) then
  local rec = redis.call('HGET', K_holder, A_owner)
  local longer = rl_hold_longer(rec, now_ms, A_min_hold)
  if longer ~= rec then
    redis.call('HSET', K_holder, A_owner, longer)
    rec = longer
  end
  local holds
  if rl_finished(rec) then
    -- Its owner takes up a finished hold (--min-hold) again: one hold.
    redis.call('HSET', K_lock, A_owner, 1)
    redis.call('HSET', K_holder, A_owner, rl_set_finished(rec, false))
    holds = 1
  else
    holds = redis.call('HINCRBY', K_lock, A_owner, 1)
  end
  rl_lengthen(K_lock, A_lease)
  rl_lengthen(K_holder, A_lease)
  return {1, rl_fence(redis.call('HGET', K_holder, A_owner)) or '0', holds}
end
-- Only a hold of OWNER's was to be re-entered, and there is none. (A hold
-- of another kind, a read hold, is no hold of this one: busy, as for any
-- exclusive caller.)
if string.find(flags, 'e', 1, true) and not (mine and (mine[1] or mine[3])) then
  return rl_gone()
end

-- The caller's record in K_supersede, as a waiter's entry is: what the
-- history and the message of the one it supersedes name.
local me = A_holder_json or rl_holder_start(A_host, A_pid, A_user, A_cmd)
-- K_supersede lives three waiter timeouts past the last call of a waiter
-- of it, as the room does (each call refreshes it).
local slife = 3 * tonumber(A_waiter_timeout)
if sflag == 's' then
  local rec = redis.call('HGET', K_supersede, A_owner)
  local d = rl_decode(rec)
  if d.by_owner then
    redis.call('HDEL', K_supersede, A_owner)
    local by = type(d.by) == 'table' and d.by or {}
    return {0, false, false, false, false, false, false, false, false,
            false, false, false, false, false, false, false, d.by_owner,
            by.host or false, tonumber(by.pid) or false, by.cmd or false}
  end
  -- Its record is gone: it made no call for as long as the record lasts
  -- (stopped, or the server lost it), and the mark of a newer waiter may
  -- have gone with it. It cannot tell that none came: it never takes
  -- NAME, and gives up as a superseded waiter does.
  if not rec then
    return {0, false, false, false, false, false, false, false, false,
            false, false, false, false, false, false, false, ''}
  end
elseif sflag == 'S' then
  -- Every older --supersede waiter gives up: out of the fair queue (a
  -- head that leaves a free lock wakes the next one), the room (a
  -- listener hands its role on) and K_writer, marked for its next call,
  -- recorded, and woken on its own channel to make that call at once.
  local mark = '{"by_owner":' .. cjson.encode(A_owner) ..
      string.format(',"at_ms":%.0f,"by":', now_ms) .. me .. '}}'
  local all = redis.call('HGETALL', K_supersede)
  local headless = false
  for i = 1, #all, 2 do
    local w, d = all[i], rl_decode(all[i + 1])
    if w == A_owner then
    elseif d.by_owner then
      -- Marked before and never heard of since: dead.
      if (tonumber(d.at_ms) or 0) + slife < now_ms then
        redis.call('HDEL', K_supersede, w)
      end
    else
      redis.call('HSET', K_supersede, w, mark)
      if redis.call('TYPE', K_timeout).ok == 'zset' and
          redis.call('ZSCORE', K_timeout, w) then
        local t = redis.call('TYPE', K_queue).ok == 'list'
        if t and redis.call('LINDEX', K_queue, 0) == w then
          headless = true
          if redis.call('TYPE', K_waiter).ok == 'hash' then
            rl_reanchor(K_queue, K_timeout, K_waiter, w, now_ms)
          end
        end
        if t then redis.call('LREM', K_queue, 0, w) end
        redis.call('ZREM', K_timeout, w)
        redis.pcall('HDEL', K_waiter, w)
      end
      rl_room_leave(K_room, K_listener, w, A_channel, '0', K_guest)
      if redis.pcall('GET', K_writer) == w then redis.call('DEL', K_writer) end
      local since = tonumber(d.since_ms)
      rl_log_event(logkey, A_hist_max, A_hist_ttl, 'superseded',
          {'owner', w, 'host', d.host or '', 'pid', tostring(d.pid or ''),
           'user', d.user or '', 'cmd', d.cmd or '',
           'wait_ms', since and string.format('%.0f', now_ms - since) or '',
           'by_owner', A_owner, 'by_host', A_host, 'by_pid', A_pid,
           'by_user', A_user, 'by_cmd', A_cmd})
      rl_publish(A_channel .. ':' .. w, 'superseded')
    end
  end
  if headless and pttl == -2 then
    rl_wake_head(K_queue, K_timeout, K_waiter, A_channel, now_ms, '0')
  end
end

local free = pttl == -2
local head = fair and redis.call('LINDEX', K_queue, 0)
if free and (not head or head == A_owner) then
  -- Every command of this path, and of the hold's release, allowed on its
  -- key (an ACL), or nothing is written: no hash is left without its
  -- lease, and no hold that cannot be given back is taken.
  local need = {'SET', K_token, 'HSET', K_lock, 'PEXPIRE', K_lock, 'HSET',
                K_holder, 'PEXPIRE', K_holder, 'HDEL', K_holder, 'DEL', K_lock}
  local function needs(...)
    for _, v in ipairs({...}) do need[#need + 1] = v end
  end
  if fair then
    needs('ZREM', K_timeout, 'HDEL', K_waiter)
    if head then
      needs('LPOP', K_queue, 'ZINCRBY', K_timeout, 'LRANGE', K_queue,
            'HEXISTS', K_waiter)
    end
  elseif queue then
    needs('ZREM', K_timeout, 'LREM', K_queue, 'HDEL', K_waiter)
  end
  if room and string.find(flags, 'w', 1, true) then
    needs('ZREM', K_room, 'DEL', K_listener)
  end
  if joins then needs('DEL', K_writer) end
  bad = rl_denied(need)
  if bad then return bad end
  -- The first write: a counter that cannot give a token stops it.
  local fence, old
  fence, bad, old = rl_take_fence(K_token, now_us)
  if bad then return bad end
  -- The marker keeps Redisson's read and write locks out (see rl_mark).
  redis.call('HSET', K_lock, A_owner, 1, 'mode', rl_mark)
  redis.call('PEXPIRE', K_lock, A_lease)
  redis.call('HSET', K_holder, A_owner,
             rl_holder_meta(A_holder_json or rl_holder_start(A_host, A_pid,
                            A_user, A_cmd), now_ms, fence, A_min_hold))
  -- The lock was free: no hold of its holders is left to outlive.
  redis.call('PEXPIRE', K_holder, A_lease)
  if fair then
    if head then
      -- Redisson's waiters behind it: scored as after a Redisson handoff.
      rl_reanchor(K_queue, K_timeout, K_waiter, A_owner, now_ms)
      redis.call('LPOP', K_queue)
    end
    redis.call('ZREM', K_timeout, A_owner)
    redis.call('HDEL', K_waiter, A_owner)
  elseif queue and redis.call('ZREM', K_timeout, A_owner) == 1 then
    redis.call('LREM', K_queue, 1, A_owner)	-- O(place in the queue)
    redis.call('HDEL', K_waiter, A_owner)
  end
  if room and string.find(flags, 'w', 1, true) then
    -- Held now: a read the ACL refuses in the room wakes nobody.
    pcall(rl_room_leave, K_room, K_listener, A_owner, A_channel, '0',
          K_guest)
  end
  -- Its announcement goes: the readers it held back now find NAME held.
  if joins and redis.pcall('GET', K_writer) == A_owner then
    redis.call('DEL', K_writer)
  end
  -- A --supersede waiter that acquires is no waiter to supersede.
  if sflag then redis.call('HDEL', K_supersede, A_owner) end
  local skipped = A_hist_max ~= '' and
      rl_log(logkey, A_hist_max, A_hist_ttl,
             A_hist_entry .. 'acquired\31fence\31' .. fence,
             rl_log_renews(A_hist_ttl, now_us, old))
  return {1, fence, 1, (not rl_may_publish(A_channel)) and A_channel, skipped}
end

local owner, d, held = false, {}, false
if free then
  pttl = false
else
  owner = rl_holder(K_lock)
  d = owner and rl_decode(redis.call('HGET', K_holder, owner)) or {}
  if tonumber(d.since_ms) then held = now_ms - tonumber(d.since_ms) end
end
local position, queued, head_wait, rejoined, ahead = false, false, false, 0, false
if queue then
  local deadline = now_ms + tonumber(A_waiter_timeout)
  local queued_before = redis.call('ZSCORE', K_timeout, A_owner)
  local w = redis.call('HGET', K_waiter, A_owner)
  -- Still live by its own deadline, but out of the queue: a Redisson
  -- client evicted it, and only ever evicts the head. It goes back there.
  local restore = not queued_before and w and
      string.find(flags, 'r', 1, true) and
      (rl_waiter_deadline(K_waiter, A_owner) or 0) > now_ms
  -- A plain waiter need not keep its place: no margin, so that Redisson
  -- drops it on time if it dies. A fair one's score covers the Redisson
  -- waiters ahead of it (rl_fair_score) and bears the mark of the margin
  -- (.5), which Redisson's waiters behind it inherit.
  local score = fair and rl_fair_score(K_queue, K_timeout, K_waiter, A_owner,
      deadline, queued_before, restore) or deadline
  if queued_before or restore then
    if restore then redis.call('LPUSH', K_queue, A_owner) end
    -- How far its score moves up while someone is queued right behind
    -- it (the tail joined after it): see rl_reanchor.
    local lag = false
    if fair then
      lag = 0
      if queued_before and redis.call('LINDEX', K_queue, -1) ~= A_owner then
        lag = rl_waiter_lag(w) + score - tonumber(queued_before)
      end
    end
    redis.call('ZADD', K_timeout, score, A_owner)
    redis.call('HSET', K_waiter, A_owner, rl_with_deadline(w, deadline, lag))
  elseif string.find(flags, 'j', 1, true) then
    -- Joining writes three keys, and leaving (leave) takes them back:
    -- each allowed, or none written (a waiter's entry in a queue without
    -- an expiry would stay at its head for ever).
    bad = rl_denied({'RPUSH', K_queue, 'ZADD', K_timeout, 'HSET', K_waiter,
                     'LREM', K_queue, 'ZREM', K_timeout, 'HDEL', K_waiter})
    if bad then return bad end
    if string.find(flags, 'r', 1, true) then rejoined = 1 end
    redis.call('RPUSH', K_queue, A_owner)
    redis.call('ZADD', K_timeout, score, A_owner)
    w = cjson.encode({host = A_host, pid = tonumber(A_pid),
                      user = A_user, cmd = A_cmd})
    local gives = tonumber(A_gives_up)
    if gives then
      gives = string.format(',"gives_up_ms":%.0f',
                            gives < 0 and -1 or now_ms + gives)
    end
    w = string.sub(w, 1, -2) ..
        string.format(',"since_ms":%.0f,"deadline_ms":%.0f', now_ms, deadline) ..
        (gives or '') .. '}'
    redis.call('HSET', K_waiter, A_owner, w)
  else
    ahead = redis.call('LLEN', K_queue)	-- not queued: all are ahead
  end
  queued = redis.call('LLEN', K_queue)
  if string.find(flags, 'p', 1, true) then
    -- LPOS needs Redis 6.0.6; without it the place is simply unknown.
    local p = redis.pcall('LPOS', K_queue, A_owner)
    if type(p) == 'number' then
      position = p + 1
      ahead = p
    end
  end
  head = redis.call('LINDEX', K_queue, 0)
  if head == A_owner then ahead = 0 end
  if free and head and head ~= A_owner then
    local dl = rl_waiter_deadline(K_waiter, head) or
               rl_score_deadline(tonumber(redis.call('ZSCORE', K_timeout,
                                                     head)))
    if dl then head_wait = dl - now_ms end
    -- Dead heads dropped before a free lock: the new head may be one
    -- that only a message wakes (Redisson's sleeps on its last answer).
    if dropped > 0 then rl_publish(A_channel .. ':' .. head, '0') end
  end
end
local listen = false
if room and string.find(flags, 'j', 1, true) then
  listen = rl_room_join(K_room, K_listener, A_owner, now_ms,
                        tonumber(A_waiter_timeout))
  local gives = tonumber(A_gives_up)
  rl_guest_join(K_guest, K_room, A_owner, me ..
                string.format(',"since_ms":%.0f', now_ms) ..
                (gives and string.format(',"gives_up_ms":%.0f', gives < 0 and
                                         -1 or now_ms + gives) or '') .. '}')
end
-- An exclusive waiter held up by readers announces itself (a key of
-- another type, or a write the server refuses: it waits unannounced).
local announced = false
if joins and not free then
  local w = redis.pcall('GET', K_writer)
  if w == A_owner or (not w and
      redis.call('HGET', K_lock, 'mode') == 'read') then
    announced = not redis.pcall('SET', K_writer, A_owner, 'PX',
                                A_waiter_timeout).err and 1
  end
end
-- A --supersede caller that waits is recorded for a newer one to find.
if sflag and joins then
  local rec = me .. string.format(',"since_ms":%.0f}', now_ms)
  redis.call(sflag == 'S' and 'HSET' or 'HSETNX', K_supersede, A_owner, rec)
  rl_lengthen(K_supersede, slife)
end
-- A caller that does not wait (-n) goes without it: a busy skip.
if not string.find(flags, 'j', 1, true) and A_hist_max ~= '' then
  rl_log(logkey, A_hist_max, A_hist_ttl,
         A_hist_entry .. 'busy\31holder\31' ..
         string.gsub(owner or '', '\31', '?'), true)
end
return {0, pttl, owner, d.host or false, tonumber(d.pid) or false,
        d.user or false, d.cmd or false, held, position, queued,
        head_wait, rejoined, ahead, listen, announced,
        d.finished and tonumber(d.until_ms) or false}
