-- acquire: take lock NAME for OWNER, or re-enter it; with ARGV[7] = "fair",
-- only the head of the FIFO queue may take a free lock (Redisson's RLock and
-- RFairLock layouts). A fair call is also a queued waiter's heartbeat.
-- KEYS[1]  NAME                           hash: owner -> hold count, and
--                                          "mode" -> "write", redlock's
--                                          marker; PEXPIRE = lease
-- KEYS[2]  redisson_lock_token:{NAME}     string: fencing counter
-- KEYS[3]  redlock_holder:{NAME}          hash: owner -> JSON metadata, same lease
-- KEYS[4]  redisson_lock_queue:{NAME}     list: fair waiters, head first
-- KEYS[5]  redisson_lock_timeout:{NAME}   zset: fair waiter -> deadline (ms)
-- KEYS[6]  redlock_waiter:{NAME}          hash: fair waiter -> JSON metadata
-- KEYS[7]  redlock_room:{NAME}            zset: plain waiter -> deadline (ms)
-- KEYS[8]  redlock_listener:{NAME}        string: the plain waiter that
--                                          listens to the lock's channel
-- KEYS[9]  redlock_writer:{NAME}          string: the exclusive waiter
--                                          (or --write) that new readers
--                                          wait behind; PX = its waiter
--                                          timeout
--          (KEYS[4..6] with ARGV[7] "fair" or "queue", KEYS[7..8] with a
--          plain waiter's call, KEYS[9] with any waiter's: a fair call
--          that does not wait passes six keys, a plain one three)
-- KEYS[#KEYS] redlock_log:{NAME}          stream: history, always the last
--                                          key, after those above
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner token
-- ARGV[3..6] host, pid, user, command of the caller
-- ARGV[7]  "fair", "" for a plain lock, or "queue": a plain lock whose
--          waiter queues as a fair one does
-- ARGV[8]  waiter timeout in ms (a deadline this far ahead)
-- ARGV[9]  flags; "j": join the queue (the room) when busy, "r": the
--          caller had joined the queue before, "w": the caller is in the
--          room (it leaves it when it acquires), "p": report the caller's
--          position (LPOS, O(n), for the waiting line on a terminal only)
--          With "j", a caller that finds NAME held in read mode (a
--          read-write lock's readers) announces itself in KEYS[9] as a
--          waiting --write does, unless another waiter's announcement is
--          there, so that no new reader of redlock's comes in; it renews
--          its own at each call, and takes it away when it acquires.
-- ARGV[10] redisson_lock__channel:{NAME}, the channel a release publishes on
-- ARGV[11] --min-hold in ms (0: none): a fresh hold records its end,
--          until_ms, in its holder record, and release.lua keeps the
--          hold until then
-- ARGV[12] history: about how many events to keep ("": none kept)
-- ARGV[13] history: the stream's expiry after an event, in ms (0: never)
-- ARGV[14] history: the caller's part of its entries (rl_history_entry:
--          owner, host, pid, user, cmd, how long it waited, "event")
-- ARGV[15] the start of the caller's holder record (see rl_holder_meta)
-- ARGV[16] how long the caller will still wait, in ms: a fair waiter's
--          entry keeps when it gives up (gives_up_ms, server clock; -1:
--          never), for queue; "" when not known
-- ARGV[17] PUBLISH or SPUBLISH: how releases wake waiters (checked here)
-- Fencing tokens are returned as decimal strings: a Lua number keeps only
-- 53 bits of the 63 a counter has.
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
--                                      KEYS[9] names the caller;
--                                      held_until: the end of the
--                                      holder's minimum hold when it is
--                                      finished (--min-hold); unknown
--                                      fields are nil
--         {-1, key, type}              KEY is not of the type a lock needs,
--                                      or a fencing counter that cannot
--                                      grow; nothing was changed
-- Expired waiters are evicted at the head only: the cost does not grow with
-- the length of the queue. A server out of memory refuses the first write
-- of a fresh hold, re-entry or join, and nothing before it is changed
-- (evicting dead waiters aside).
rl_pubcmd = ARGV[17] or rl_pubcmd
local logkey = KEYS[#KEYS]
local fair = ARGV[7] == 'fair'
-- "queue": a plain waiter that queues as well (behind a Java holder, whose
-- fair lock wakes only the head of the queue), taking a free lock as a
-- plain lock does.
local queue = fair or ARGV[7] == 'queue'
-- A plain waiter waits in the room (a queued one too): a release wakes
-- one of them.
local room = not fair and KEYS[8] ~= nil
local flags = ARGV[9] or ''
-- A queued call checks every key first (dropping dead waiters writes).
-- A plain one checks each key where a command would fail on it, before
-- anything is written: NAME, when it exists, by the HMGET below, the
-- holder records here, the counter by the SET (or INCR) that takes a
-- fresh hold's token, the first write.
local bad
if queue then
  local want = {'hash', 'string', 'hash', 'list', 'zset', 'hash'}
  for i = 1, 6 do
    bad = rl_badtype(KEYS[i], want[i])
    if bad then return bad end
  end
  bad = rl_counter_bad(KEYS[2])
else
  bad = rl_badtype(KEYS[3], 'hash')
end
if bad then return bad end

local now_us, now_ms = rl_time()
local dropped = 0
if queue then
  local _
  _, dropped = rl_drop_expired(KEYS[4], KEYS[5], KEYS[6], now_ms)
end

-- A read-write lock's reader (a "mode" field beside OWNER, other than
-- redlock's marker, or the marker beside OWNER:write: the writer's own
-- read) holds no lock of this kind: its hold is not re-entered, nor
-- counted twice. A hold without the marker (an older redlock's) is
-- re-entered as it is, so that the older redlock still gives it back.
-- A free NAME (the common case) has no hold to re-enter: no read.
local pttl = redis.call('PTTL', KEYS[1])
local mine = pttl ~= -2 and redis.pcall('HMGET', KEYS[1], ARGV[2], 'mode',
                                        ARGV[2] .. ':write')
if mine and mine.err then
  return {-1, KEYS[1], redis.call('TYPE', KEYS[1]).ok}
end
if mine and mine[1] and rl_plain_hold(mine[2], mine[3]) then
  local rec = redis.call('HGET', KEYS[3], ARGV[2])
  local longer = rl_hold_longer(rec, now_ms, ARGV[11])
  if longer ~= rec then
    redis.call('HSET', KEYS[3], ARGV[2], longer)
    rec = longer
  end
  local holds
  if rl_finished(rec) then
    -- Its owner takes up a finished hold (--min-hold) again: one hold.
    redis.call('HSET', KEYS[1], ARGV[2], 1)
    redis.call('HSET', KEYS[3], ARGV[2], rl_set_finished(rec, false))
    holds = 1
  else
    holds = redis.call('HINCRBY', KEYS[1], ARGV[2], 1)
  end
  rl_lengthen(KEYS[1], ARGV[1])
  rl_lengthen(KEYS[3], ARGV[1])
  return {1, rl_fence(redis.call('HGET', KEYS[3], ARGV[2])) or '0', holds}
end

local free = pttl == -2
local head = fair and redis.call('LINDEX', KEYS[4], 0)
if free and (not head or head == ARGV[2]) then
  -- The first write: a counter that cannot give a token stops it.
  local fence, old
  fence, bad, old = rl_take_fence(KEYS[2], now_us)
  if bad then return bad end
  -- The marker keeps Redisson's read and write locks out (see rl_mark).
  redis.call('HSET', KEYS[1], ARGV[2], 1, 'mode', rl_mark)
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  redis.call('HSET', KEYS[3], ARGV[2],
             rl_holder_meta(ARGV[15] or rl_holder_start(ARGV[3], ARGV[4],
                            ARGV[5], ARGV[6]), now_ms, fence, ARGV[11]))
  -- The lock was free: no hold of its holders is left to outlive.
  redis.call('PEXPIRE', KEYS[3], ARGV[1])
  if fair then
    if head then
      -- Redisson's waiters behind it: scored as after a Redisson handoff.
      rl_reanchor(KEYS[4], KEYS[5], KEYS[6], ARGV[2], now_ms)
      redis.call('LPOP', KEYS[4])
    end
    redis.call('ZREM', KEYS[5], ARGV[2])
    redis.call('HDEL', KEYS[6], ARGV[2])
  elseif queue and redis.call('ZREM', KEYS[5], ARGV[2]) == 1 then
    redis.call('LREM', KEYS[4], 1, ARGV[2])	-- O(place in the queue)
    redis.call('HDEL', KEYS[6], ARGV[2])
  end
  if room and string.find(flags, 'w', 1, true) then
    rl_room_leave(KEYS[7], KEYS[8], ARGV[2], ARGV[10], '0')
  end
  -- Its announcement goes: the readers it held back now find NAME held.
  if KEYS[9] and KEYS[10] and redis.pcall('GET', KEYS[9]) == ARGV[2] then
    redis.call('DEL', KEYS[9])
  end
  local skipped = ARGV[12] ~= '' and
      rl_log(logkey, ARGV[12], ARGV[13],
             ARGV[14] .. 'acquired\31fence\31' .. fence,
             rl_log_renews(ARGV[13], now_us, old))
  return {1, fence, 1, (not rl_may_publish(ARGV[10])) and ARGV[10], skipped}
end

local owner, d, held = false, {}, false
if free then
  pttl = false
else
  owner = rl_holder(KEYS[1])
  d = owner and rl_decode(redis.call('HGET', KEYS[3], owner)) or {}
  if tonumber(d.since_ms) then held = now_ms - tonumber(d.since_ms) end
end
local position, queued, head_wait, rejoined, ahead = false, false, false, 0, false
if queue then
  local deadline = now_ms + tonumber(ARGV[8])
  local queued_before = redis.call('ZSCORE', KEYS[5], ARGV[2])
  local w = redis.call('HGET', KEYS[6], ARGV[2])
  -- Still live by its own deadline, but out of the queue: a Redisson
  -- client evicted it, and only ever evicts the head. It goes back there.
  local restore = not queued_before and w and
      string.find(flags, 'r', 1, true) and
      (rl_waiter_deadline(KEYS[6], ARGV[2]) or 0) > now_ms
  -- A plain waiter need not keep its place: no margin, so that Redisson
  -- drops it on time if it dies. A fair one's score bears the mark of
  -- the margin (.5), which Redisson's waiters behind it inherit.
  local score = deadline + (fair and rl_fair_margin_ms + 0.5 or 0)
  if queued_before or restore then
    if restore then redis.call('LPUSH', KEYS[4], ARGV[2]) end
    -- How far its score moves up while someone is queued right behind
    -- it (the tail joined after it): see rl_reanchor.
    local lag = false
    if fair then
      lag = 0
      if queued_before and redis.call('LINDEX', KEYS[4], -1) ~= ARGV[2] then
        lag = rl_waiter_lag(w) + score - tonumber(queued_before)
      end
    end
    redis.call('ZADD', KEYS[5], score, ARGV[2])
    redis.call('HSET', KEYS[6], ARGV[2], rl_with_deadline(w, deadline, lag))
  elseif string.find(flags, 'j', 1, true) then
    if string.find(flags, 'r', 1, true) then rejoined = 1 end
    redis.call('RPUSH', KEYS[4], ARGV[2])
    redis.call('ZADD', KEYS[5], score, ARGV[2])
    w = cjson.encode({host = ARGV[3], pid = tonumber(ARGV[4]),
                      user = ARGV[5], cmd = ARGV[6]})
    local gives = tonumber(ARGV[16])
    if gives then
      gives = string.format(',"gives_up_ms":%.0f',
                            gives < 0 and -1 or now_ms + gives)
    end
    w = string.sub(w, 1, -2) ..
        string.format(',"since_ms":%.0f,"deadline_ms":%.0f', now_ms, deadline) ..
        (gives or '') .. '}'
    redis.call('HSET', KEYS[6], ARGV[2], w)
  else
    ahead = redis.call('LLEN', KEYS[4])	-- not queued: all are ahead
  end
  queued = redis.call('LLEN', KEYS[4])
  if string.find(flags, 'p', 1, true) then
    -- LPOS needs Redis 6.0.6; without it the place is simply unknown.
    local p = redis.pcall('LPOS', KEYS[4], ARGV[2])
    if type(p) == 'number' then
      position = p + 1
      ahead = p
    end
  end
  head = redis.call('LINDEX', KEYS[4], 0)
  if head == ARGV[2] then ahead = 0 end
  if free and head and head ~= ARGV[2] then
    local dl = rl_waiter_deadline(KEYS[6], head) or
               rl_score_deadline(tonumber(redis.call('ZSCORE', KEYS[5], head)))
    if dl then head_wait = dl - now_ms end
    -- Dead heads dropped before a free lock: the new head may be one
    -- that only a message wakes (Redisson's sleeps on its last answer).
    if dropped > 0 then rl_publish(ARGV[10] .. ':' .. head, '0') end
  end
end
local listen = false
if room and string.find(flags, 'j', 1, true) then
  listen = rl_room_join(KEYS[7], KEYS[8], ARGV[2], now_ms, tonumber(ARGV[8]))
end
-- An exclusive waiter held up by readers announces itself (a key of
-- another type, or a write the server refuses: it waits unannounced).
local announced = false
if KEYS[9] and KEYS[10] and not free and string.find(flags, 'j', 1, true) then
  local w = redis.pcall('GET', KEYS[9])
  if w == ARGV[2] or (not w and
      redis.call('HGET', KEYS[1], 'mode') == 'read') then
    announced = not redis.pcall('SET', KEYS[9], ARGV[2], 'PX', ARGV[8]).err
        and 1
  end
end
-- A caller that does not wait (-n) goes without it: a busy skip.
if not string.find(flags, 'j', 1, true) and ARGV[12] ~= '' then
  rl_log(logkey, ARGV[12], ARGV[13],
         ARGV[14] .. 'busy\31holder\31' ..
         string.gsub(owner or '', '\31', '?'), true)
end
return {0, pttl, owner, d.host or false, tonumber(d.pid) or false,
        d.user or false, d.cmd or false, held, position, queued,
        head_wait, rejoined, ahead, listen, announced,
        d.finished and tonumber(d.until_ms) or false}
