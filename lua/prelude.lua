-- prelude: helpers that the embedder puts in front of every script in lua/
-- (it is not a script of its own). They touch only the keys passed to them.

-- {-1, key, type} when KEY exists with a type other than WANT, else nil.
local function rl_badtype(key, want)
  local t = redis.call('TYPE', key).ok
  if t ~= 'none' and t ~= want then return {-1, key, t} end
  return nil
end

-- A semaphore's keys checked: NAME a string of a whole number of permits
-- free, TIMEOUT the zset of permits taken, HOLDERS a hash. {-1, key, why}
-- when one is not, else nil and NAME's value (false when missing).
local function rl_semaphore_bad(name, timeout, holders)
  local bad = rl_badtype(name, 'string') or rl_badtype(timeout, 'zset') or
              rl_badtype(holders, 'hash')
  if bad then return bad end
  local free = redis.call('GET', name)
  if free and not string.match(free, '^-?%d+$') then
    return {-1, name, 'string that is not a number of permits'}
  end
  return nil, free
end

-- The bytes that hex digits H spell.
local function rl_unhex(h)
  return (string.gsub(h, '%x%x', function(d)
    return string.char(tonumber(d, 16))
  end))
end

-- A permit id as Redisson shows its own: the hex digits of its 16 bytes.
-- An id stored as hex digits (older Redisson versions, and redlock
-- before its ids were Redisson's) is shown as it is.
local function rl_permit_hex(m)
  if #m ~= 16 and string.match(m, '^[0-9a-f]+$') then return m end
  return (string.gsub(m, '.', function(c)
    return string.format('%02x', string.byte(c))
  end))
end

-- The owner token whose hex KEY rl_kind.c made (see rl_permit): a
-- redlock token "UUID:pid" from its 39 digits (the pid's 7 in decimal),
-- any other token's bytes.
local function rl_permit_owner(key)
  if #key ~= 39 then return rl_unhex(key) end
  return string.format('%s-%s-%s-%s-%s:%d', string.sub(key, 1, 8),
      string.sub(key, 9, 12), string.sub(key, 13, 16), string.sub(key, 17, 20),
      string.sub(key, 21, 32), tonumber(string.sub(key, 33), 10))
end

-- The permit in zset TIMEOUT of the caller whose KEY (hex digits of its
-- owner token, made by rl_kind.c: for a redlock token its UUID's 32
-- and its pid's 7, else two for each byte) is given: 16 bytes, as
-- Redisson's ids are, the first 16 of the SHA-1 of the owner token, so
-- that two tokens never share a permit, not even two that differ only
-- after their UUID. A permit that an older redlock took under KEY itself,
-- and that is still taken, is the caller's: then KEY is its id.
local function rl_permit(timeout, key)
  local id = rl_unhex(string.sub(redis.sha1hex(rl_permit_owner(key)), 1, 32))
  if redis.call('TYPE', timeout).ok == 'zset' and
      not redis.call('ZSCORE', timeout, id) and
      redis.call('ZSCORE', timeout, key) then
    return key
  end
  return id
end

-- The holder records in HOLDERS (permit id -> metadata, ID:n -> holds)
-- of permits no longer in zset TIMEOUT go: given back by another client,
-- or expired and given back by Redisson's calls, which do not know them.
local function rl_permits_tidy(holders, timeout)
  for _, f in ipairs(redis.call('HKEYS', holders)) do
    if not redis.call('ZSCORE', timeout, f) then
      local id = string.sub(f, -2) == ':n' and string.sub(f, 1, -3)
      if not (id and redis.call('ZSCORE', timeout, id)) then
        redis.call('HDEL', holders, f)
      end
    end
  end
end

-- How many clients listen on CHANNEL (sharded channels counted too): for
-- a read-write lock's channel, its waiters, redlock's and Redisson's
-- (one per Java client, however many of its threads wait). 0 where the
-- server will not tell (an ACL without PUBSUB).
local function rl_listeners(channel)
  local n = 0
  for _, sub in ipairs({'NUMSUB', 'SHARDNUMSUB'}) do
    local r = redis.pcall('PUBSUB', sub, channel)
    if type(r) == 'table' and not r.err then n = n + (tonumber(r[2]) or 0) end
  end
  return n
end

-- The reply of a call that may only re-enter (flag "e": a nested call
-- through REDLOCK_HELD) when OWNER holds nothing of NAME: the hold of the
-- exec above it is gone, and taking NAME afresh would be a second holder
-- beside whoever took it meanwhile. Nothing was changed. The shape of a
-- busy reply, with a 1 after the superseded fields.
local function rl_gone()
  local r = {0}
  for i = 2, 20 do r[i] = false end
  r[21] = 1
  return r
end

-- The server's clock: microseconds and milliseconds since the epoch.
local function rl_time()
  local t = redis.call('TIME')
  local us = tonumber(t[1]) * 1000000 + tonumber(t[2])
  return us, math.floor(us / 1000)
end

-- A JSON object, or an empty table when JSON is missing or not one.
local function rl_decode(json)
  if not json then return {} end
  local ok, d = pcall(cjson.decode, json)
  if ok and type(d) == 'table' then return d end
  return {}
end

-- Where the process of a holder whose record is D (decoded) runs: its
-- host's boot id and pid namespace, and 1 when a process renews its
-- lease; false each where not recorded. Three values, for the end of a
-- reply's list.
local function rl_proc(d)
  return type(d.boot) == 'string' and d.boot or false,
         type(d.pidns) == 'string' and d.pidns or false,
         d.renew == true and 1 or false
end

-- The fencing token recorded in holder metadata JSON, as the decimal
-- string it was written as (a Lua number keeps only 53 bits), or false.
local function rl_fence(json)
  return json and string.match(json, '"fence":(%d+)') or false
end

-- What the error reply ERR of a pcall of CMD on KEY says: {-1, key, type}
-- when KEY is of another type (WRONGTYPE); any other error (an ACL's
-- refusal, out of memory) is the server's own and is raised, CMD named, so
-- that the caller reports a refusal, not a key that is no lock.
local function rl_type_err(err, cmd, key)
  if string.find(err.err, 'WRONGTYPE', 1, true) then
    return {-1, key, redis.call('TYPE', key).ok}
  end
  error({err = err.err .. ' (' .. cmd .. ')'})
end

-- {-1, key, why} when fencing counter KEY cannot give a next token (not
-- a string, not a decimal integer INCR takes, or at 2^63-1); else nil and
-- the counter's value (false when there is none).
local function rl_counter_bad(key)
  -- INCR takes a decimal integer without leading zeros, up to 2^63-1.
  local counter = redis.pcall('GET', key)
  if type(counter) == 'table' then return rl_type_err(counter, 'GET', key) end
  if counter and not (counter == '0' or string.match(counter, '^[1-9]%d*$')) then
    return {-1, key, 'string that is not a counter'}
  end
  if counter and (#counter > 19 or
      (#counter == 19 and counter >= '9223372036854775807')) then
    return {-1, key, 'fencing counter at its largest value (2^63-1)'}
  end
  return nil, counter
end

-- Every token redlock hands out is at least the server's TIME in
-- microseconds: a counter behind it (missing, or started again from 1 by
-- Redisson's RFencedLock after its delete() or a loss of data) is moved
-- up to it first, so that no token goes below one handed out before.

-- The next fencing token from counter KEY (checked with rl_counter_bad,
-- whose value is COUNTER: false when missing, nil when not read yet), as
-- a decimal string; at least the server's NOW_US + 1. Second, the
-- counter's value before (see rl_log_renews).
local function rl_next_fence(key, now_us, counter)
  if counter == nil then counter = redis.call('GET', key) end
  -- A counter of 17 digits or more is past any TIME in microseconds.
  if not counter or (#counter < 17 and tonumber(counter) < now_us) then
    redis.call('SET', key, string.format('%.0f', now_us))
  end
  local fence = redis.call('INCR', key)
  if fence < 9007199254740992 then	-- 2^53: exact as a Lua number
    return string.format('%.0f', fence), counter
  end
  return redis.call('GET', key), counter
end

-- The next fencing token from counter KEY, as a decimal string; or nil and
-- {-1, key, why} when KEY cannot give one (of another type, not a decimal
-- integer INCR takes, or at 2^63-1), and then nothing was written. The
-- token is NOW_US + 1, or the counter's next value where the counter is
-- ahead of the server's clock. Third, the token taken before, when the
-- counter was behind the clock (about when it was taken, in us).
local function rl_take_fence(key, now_us)
  -- The common case in one write: the counter behind the clock (or
  -- missing) is swapped for NOW_US + 1 by SET ... GET (Redis 6.2). One
  -- ahead of the clock, or not a counter, is put back as it was (with its
  -- expiry) and INCR decides, as it does on a server without GET.
  local want = string.format('%.0f', now_us + 1)
  local old = redis.pcall('SET', key, want, 'KEEPTTL', 'GET')
  if not old then return want end
  if type(old) == 'string' then
    if (old == '0' or string.match(old, '^[1-9]%d*$')) and
        (#old < #want or (#old == #want and old < want)) then
      return want, nil, old
    end
    redis.call('SET', key, old, 'KEEPTTL')
  end
  local fence = redis.pcall('INCR', key)
  if type(fence) == 'table' then
    local t = redis.call('TYPE', key).ok
    if t ~= 'string' and t ~= 'none' then return nil, {-1, key, t} end
    if string.find(fence.err, 'overflow', 1, true) then
      return nil, {-1, key, 'fencing counter at its largest value (2^63-1)'}
    end
    if string.find(fence.err, 'not an integer', 1, true) then
      return nil, {-1, key, 'string that is not a counter'}
    end
    error(fence)	-- the server's own refusal (out of memory...)
  end
  if fence <= now_us then	-- behind the clock: missing, wound back, or
                                -- restarted small by another client
    fence = now_us + 1
    redis.call('SET', key, string.format('%.0f', fence))
  end
  if fence < 9007199254740992 then	-- 2^53: exact as a Lua number
    return string.format('%.0f', fence)
  end
  return redis.call('GET', key)
end

-- The start of a holder record as rl_holder_json writes it, from HOST,
-- PID, USER and CMD: for a call that does not pass one (the tests that
-- run a script by hand).
local function rl_holder_start(host, pid, user, cmd)
  local meta = cjson.encode({host = host, pid = tonumber(pid), user = user,
                             cmd = cmd})
  return string.sub(meta, 1, -2)
end

-- A holder's metadata: JSON with host, pid, user and cmd, from START
-- (the object without its closing brace, written by rl_kind.c's
-- rl_holder_json: cheaper than cjson here), since_ms and fence; with
-- MIN_HOLD (--min-hold, ms) above 0, until_ms: the end of the minimum
-- hold, NOW_MS + MIN_HOLD.
local function rl_holder_meta(start, now_ms, fence, min_hold)
  local m = tonumber(min_hold) or 0
  if m > 0 then
    return start .. string.format(
        ',"since_ms":%.0f,"fence":%s,"until_ms":%.0f}', now_ms, fence,
        now_ms + m)
  end
  return start .. string.format(',"since_ms":%.0f,"fence":%s}', now_ms, fence)
end

-- --min-hold: the end (server clock, ms) of the minimum hold that holder
-- metadata JSON records, or nil; and whether that hold is finished (its
-- holder gave it back before that end: it stays until then, and is
-- neither renewed nor given back again).
local function rl_until(json)
  return json and tonumber(string.match(json, '"until_ms":(%d+)'))
end

local function rl_finished(json)
  return json and string.find(json, '"finished":true', 1, true) ~= nil
end

-- Holder metadata JSON marked finished, or no longer (FINISHED false: a
-- re-entry by its owner takes the hold up again).
local function rl_set_finished(json, finished)
  json = string.gsub(json, ',"finished":true', '')
  if not finished then return json end
  return string.sub(json, 1, -2) .. ',"finished":true}'
end

-- Whether the last hold of a holder whose metadata is JSON, given back
-- at the server's NOW_MS with FLAGS (a release's: "u" for an acquisition
-- undone, which never keeps it), stays until its minimum hold ends: the
-- end, or nil.
local function rl_keep_until(json, now_ms, flags)
  if string.find(flags or '', 'u', 1, true) then return nil end
  local u = rl_until(json)
  if u and u > now_ms then return u end
  return nil
end

-- The first of the commands in list C (a command, then the key it runs
-- on, and so on) that the ACL does not let this user run on that key, as
-- the error reply a script returns before its first write: a script is
-- not rolled back, so a command refused after a write would keep that
-- write (a hash whose PEXPIRE was refused, without an expiry for ever).
-- nil when every one is allowed, or where the server cannot tell
-- (redis.acl_check_cmd came with Redis 7). Each costs about a tenth of
-- a microsecond: a script checks what its path needs, once.
local function rl_denied(c)
  local check = redis.acl_check_cmd
  if type(check) ~= 'function' then return nil end
  for i = 1, #c, 2 do
    if not check(c[i], c[i + 1]) then
      return {err = 'NOPERM this user may not run ' .. c[i] .. ' on ' ..
                    c[i + 1]}
    end
  end
  return nil
end

-- Give KEY a lease of MS milliseconds unless it already lives longer: a
-- hold never shortens the lease of another hold of the same name.
local function rl_lengthen(key, ms)
  local left = redis.call('PTTL', key)
  if left == -1 or (left >= 0 and left < tonumber(ms)) then
    redis.call('PEXPIRE', key, ms)
  end
end

-- The command that wakes waiters: PUBLISH, or SPUBLISH where channels are
-- sharded (Redis 7 clusters). Each script that publishes takes it as its
-- last argument, as Redisson's scripts do, and sets it here.
local rl_pubcmd = 'PUBLISH'

-- Publish without failing the script: false when the server refused it
-- (an ACL user without the channel), so that a release that took effect
-- is reported as done.
local function rl_publish(channel, msg)
  local r = redis.pcall(rl_pubcmd, channel, msg)
  return type(r) ~= 'table' or not r.err
end

-- Whether this user may publish on CHANNEL; true where the server cannot
-- tell (redis.acl_check_cmd came with Redis 7).
local function rl_may_publish(channel)
  if type(redis.acl_check_cmd) ~= 'function' then return true end
  local ok, r = pcall(redis.acl_check_cmd, rl_pubcmd, channel, '0')
  return not ok or r == true
end

-- A redlock fair waiter's score in the timeout zset: its deadline plus
-- this margin at least, more behind Redisson's waiters (rl_fair_score).
-- Redisson's fair lock judges the same scores by its client's clock, at
-- the head of the queue only, and each time one of its waiters takes the
-- lock it takes that waiter's wait time (300 s by default) off every
-- score; the margin keeps a live redlock waiter from looking dead to it
-- (a client clock minutes off, and the wait time of the Redisson waiter
-- whose acquisition makes it the head). redlock itself judges its waiters
-- by the deadline in the waiters hash, on the server's clock.
local rl_fair_margin_ms = 600000

-- Such a score also ends in half a millisecond (deadline + margin + 0.5),
-- a mark that Redisson's arithmetic carries on: it scores a waiter that
-- joins behind another as that one's score plus its own wait time, and
-- takes whole milliseconds off at a handoff. A Redisson waiter whose score
-- ends in .5 queued behind a redlock waiter and carries its margin, which
-- would keep it, dead, at the head for ten minutes more than its wait
-- time. When that redlock waiter leaves the head (rl_reanchor), the
-- Redisson waiters behind it are scored as Redisson would have scored
-- them had it taken the lock: now + their wait time, plus this allowance
-- for the clocks of Redisson's hosts, plus 0.25, the mark of that
-- allowance. redlock judges them on the server's clock without it.
local rl_java_slack_ms = 10000

-- The deadline (server clock, ms) of a fair waiter that is not redlock's,
-- from its SCORE: less the allowance when the score carries its mark.
local function rl_score_deadline(score)
  if score and score % 1 == 0.25 then
    return score - rl_java_slack_ms - 0.25
  end
  return score
end

-- How far (ms) redlock fair waiter entry W has moved its score up since a
-- waiter last joined the queue right behind it (0 while it is the tail).
local function rl_waiter_lag(w)
  return w and tonumber(string.match(w, '"lag_ms":(%-?%d+)')) or 0
end

-- redlock's marker on each plain (and --fair) hold it takes: the "mode"
-- field of NAME set to this beside the owner's count. Redisson's read and
-- write locks look at "mode" only, and take a hash without one for free;
-- with it they find NAME held for writing by another and wait, as behind
-- a writer. A real writer always has its field OWNER:write in write mode;
-- a marked plain hold has none.
local rl_mark = 'write'

-- Whether OWNER's field in a lock hash whose "mode" field is MODE is a
-- plain hold, given WRITE, the hash's field OWNER:write: no mode (an older
-- redlock's hold, or Redisson's RLock), or redlock's marker and no write
-- hold of OWNER's.
local function rl_plain_hold(mode, write)
  return not mode or (mode == rl_mark and not write)
end

-- Whether lock hash KEY, held, is a plain lock and not a read-write lock:
-- no "mode", or redlock's marker and no writer's field OWNER:write.
local function rl_plain(key)
  local mode = redis.call('HGET', key, 'mode')
  if mode ~= rl_mark then return not mode end
  for _, f in ipairs(redis.call('HKEYS', key)) do
    if string.sub(f, -6) == ':write' then return false end
  end
  return true
end

-- Who holds lock hash KEY: its first owner; a Redisson read-write lock's
-- first reader or writer, not its "mode" field (nor redlock's marker).
local function rl_holder(key)
  for _, f in ipairs(redis.call('HKEYS', key)) do
    if f ~= 'mode' then return f end
  end
  return nil
end

-- The shapes of a lock that redlock and Redisson write at NAME, where it
-- is a hash: every field an owner's hold count (a decimal integer: an
-- exclusive lock's UUID:pid or Redisson's UUID:threadId, a read-write
-- lock's readers and its writer's OWNER:write), and "mode", where there
-- is one, "read" or "write" (a read-write lock, or redlock's marker).
-- (A semaphore is a string of a number of permits: rl_semaphore_bad; a
-- fair queue's keys are checked by their types.) {-1, key, why} when
-- hash KEY has another shape, naming the first field that is not a
-- lock's; else nil. Only what one HSCAN step gives is read (all of a
-- small hash): callers examine a key only when they found it held by
-- someone else, never a free key or their own hold.
local function rl_not_lock(key)
  local cursor, f = '0', {}
  for _ = 1, 4 do
    local r = redis.pcall('HSCAN', key, cursor, 'COUNT', 32)
    if type(r) ~= 'table' or r.err then return nil end
    cursor, f = r[1], r[2]
    if #f > 0 or cursor == '0' then break end
  end
  for i = 1, #f, 2 do
    local k, v = f[i], f[i + 1]
    local ok
    if k == 'mode' then
      ok = v == 'read' or v == 'write'
    else
      ok = #v < 20 and string.match(v, '^%d+$') ~= nil
    end
    if not ok then
      local function clip(x)
        if #x > 40 then return string.sub(x, 1, 40) .. '...' end
        return x
      end
      return {-1, key, "hash that is not a lock (field '" .. clip(k) ..
              "' = '" .. clip(v) .. "')"}
    end
  end
  return nil
end

-- The deadline (server clock, ms) of redlock fair waiter OWNER, from its
-- entry in WAITERS; nil for a waiter that is not redlock's (Redisson's),
-- or an entry written before deadlines were kept there.
local function rl_waiter_deadline(waiters, owner)
  local w = redis.call('HGET', waiters, owner)
  if not w then return nil end
  return tonumber(string.match(w, '"deadline_ms":(%d+)'))
end

-- JSON object W (a waiters hash entry) with number field NAME set to V.
local function rl_with_number(w, name, v)
  local kv = string.format('"%s":%.0f', name, v)
  if not w or string.sub(w, 1, 1) ~= '{' or string.sub(w, -1) ~= '}' or
      #w < 3 then
    return '{' .. kv .. '}'
  end
  local out, n = string.gsub(w, '"' .. name .. '":%-?%d+', kv, 1)
  if n == 1 then return out end
  return string.sub(w, 1, -2) .. ',' .. kv .. '}'
end

-- Holder metadata JSON REC of a hold re-entered at the server's NOW_MS
-- with a minimum hold of MIN_HOLD ms (--min-hold of a nested call): its
-- until_ms moved to NOW_MS + MIN_HOLD when that is later; REC itself
-- when MIN_HOLD is 0 or REC is not a record.
local function rl_hold_longer(rec, now_ms, min_hold)
  local m = tonumber(min_hold) or 0
  if m <= 0 or not rec or string.sub(rec, 1, 1) ~= '{' then return rec end
  if (rl_until(rec) or 0) >= now_ms + m then return rec end
  return rl_with_number(rec, 'until_ms', now_ms + m)
end

-- A waiters hash entry with its deadline set to DEADLINE, and its lag
-- (see rl_waiter_lag) to LAG when given.
local function rl_with_deadline(w, deadline, lag)
  w = rl_with_number(w, 'deadline_ms', deadline)
  if lag then w = rl_with_number(w, 'lag_ms', lag) end
  return w
end

-- The least score a redlock fair waiter needs right behind waiter W of
-- zset TIMEOUT (WAITERS: redlock's entries), or nil when W has none: a
-- redlock fair waiter's own (the .5 mark), which covers the same waiters
-- ahead; a Redisson waiter's plus the margin, with the mark.
local function rl_cover(timeout, waiters, w)
  local s = tonumber(redis.call('ZSCORE', timeout, w))
  if not s then return nil end
  if s % 1 == 0.5 and redis.call('HEXISTS', waiters, w) == 1 then return s end
  return math.floor(s) + rl_fair_margin_ms + 0.5
end

-- The score of redlock fair waiter OWNER (in QUEUE, TIMEOUT and WAITERS)
-- whose deadline is DEADLINE: CUR is its score now, nil when it joins the
-- queue (at the tail); HEAD when it goes back to the head.
-- Each time a Redisson waiter takes the lock, it takes its wait time off
-- every score: a redlock waiter with N Redisson waiters ahead loses the
-- sum of their wait times before it is the head, in however short a
-- time, between two of its heartbeats. So its score is not only its
-- deadline plus the margin, but never less than the score of the nearest
-- Redisson waiter ahead of it plus the margin, the way Redisson scores
-- its own waiters (the last one's score plus the wait time): it joins
-- with the cover of the tail (rl_cover: behind a redlock waiter, that
-- one's score, which covers the same Redisson waiters), and a heartbeat
-- raises its score to its deadline plus the margin, never lowers it, as
-- Redisson's arithmetic moves the two alike. Redisson's waiter takes the
-- lock only while its score is ahead of its client's clock: the redlock
-- waiter behind it is left its margin less that one wait time, and loses
-- nothing more, nobody being ahead of it to take the lock. At the head
-- the score is the deadline plus the margin: nobody ahead can take
-- anything off it, and Redisson's clients drop a dead redlock head by
-- then. A redlock waiter that leaves the head scores the next one anew
-- (rl_reanchor, rl_lift), so that the margins of redlock waiters, who
-- take nothing off, do not add up along the queue.
local function rl_fair_score(queue, timeout, waiters, owner, deadline, cur,
                             head)
  local score = deadline + rl_fair_margin_ms + 0.5
  if head or redis.call('LINDEX', queue, 0) == owner then return score end
  if cur then return math.max(score, math.floor(tonumber(cur)) + 0.5) end
  local tail = redis.call('LINDEX', queue, -1)
  local c = tail and tail ~= owner and rl_cover(timeout, waiters, tail)
  return c and math.max(score, c) or score
end

-- The redlock fair waiter W (in QUEUE, TIMEOUT and WAITERS), now behind no
-- one but Redisson waiters whose highest score is TOP (nil: none), scored
-- anew: its deadline plus the margin, at least TOP's cover (see
-- rl_fair_score); its lag moves as far, for the Redisson waiters behind
-- it. Nothing for a waiter without the mark (a plain one that queues).
local function rl_lift(queue, timeout, waiters, w, top)
  local s = tonumber(redis.call('ZSCORE', timeout, w))
  local entry = redis.call('HGET', waiters, w)
  local dl = entry and tonumber(string.match(entry, '"deadline_ms":(%d+)'))
  if not (s and dl) or s % 1 ~= 0.5 then return end
  local new = dl + rl_fair_margin_ms + 0.5
  if top then new = math.max(new, math.floor(top) + rl_fair_margin_ms + 0.5) end
  if new == s then return end
  redis.call('ZADD', timeout, new, w)
  local lag = 0
  if redis.call('LINDEX', queue, -1) ~= w then
    lag = rl_waiter_lag(entry) + new - s
  end
  redis.call('HSET', waiters, w, rl_with_number(entry, 'lag_ms', lag))
end

-- When redlock fair waiter OWNER, at the head of QUEUE (a list; TIMEOUT a
-- zset, WAITERS a hash), leaves it (it takes the lock, or is dropped or
-- passed over), the Redisson waiters right behind it, up to the next
-- redlock waiter, whose scores carry its margin (the .5 mark), are scored
-- as Redisson would have had OWNER been one of its own: the first one
-- gets NOW_MS + its wait time (its score less OWNER's at the time it
-- joined) + the allowance + 0.25, and those behind it move by as much,
-- keeping their wait times apart; the redlock waiter behind them (or
-- right behind OWNER) is scored anew from them (rl_lift). Its cost is
-- the number of those waiters.
local function rl_reanchor(queue, timeout, waiters, owner, now_ms)
  local own = tonumber(redis.call('ZSCORE', timeout, owner))
  if not own or own % 1 ~= 0.5 then return end
  local entry = redis.call('HGET', waiters, owner)
  if not entry then return end
  local lag = rl_waiter_lag(entry)
  local shift, top = false, nil
  local i = 1
  while true do
    local batch = redis.call('LRANGE', queue, i, i + 15)
    for _, w in ipairs(batch) do
      if w == owner then return end
      if redis.call('HEXISTS', waiters, w) == 1 then
        -- The next redlock waiter: scored from those now ahead of it.
        rl_lift(queue, timeout, waiters, w, top)
        return
      end
      local s = tonumber(redis.call('ZSCORE', timeout, w))
      if s and s % 1 == 0.5 then
        if not shift then
          -- Redisson's waiters and OWNER lose the same at its handoffs;
          -- OWNER moved its own score up by LAG since this one joined.
          local wait = math.max(0, s - own + lag)
          shift = now_ms + wait + rl_java_slack_ms + 0.25 - s
        end
        s = tonumber(redis.call('ZINCRBY', timeout, shift, w))
      elseif not shift then
        return
      end
      if s and (not top or s > top) then top = s end
    end
    if #batch < 16 then return end
    i = i + 16
  end
end

-- Drop fair waiters past their deadline (or without one) from the head of
-- QUEUE; returns the first live waiter, or nil, and how many were dropped.
-- A redlock waiter's deadline is in WAITERS, anyone else's is its score
-- (see rl_score_deadline). Its cost is the number of dead heads, not the
-- length of the queue, and of the Redisson waiters right behind a
-- redlock one it drops (rl_reanchor).
-- NOW_MS: the server's clock, read here when not given.
local function rl_drop_expired(queue, timeout, waiters, now_ms)
  if redis.call('TYPE', queue).ok ~= 'list' then return nil, 0 end
  if not now_ms then
    local _
    _, now_ms = rl_time()
  end
  local zset = redis.call('TYPE', timeout).ok == 'zset'
  local hash = redis.call('TYPE', waiters).ok == 'hash'
  local dropped = 0
  while true do
    local head = redis.call('LINDEX', queue, 0)
    if not head then return nil, dropped end
    local dl = hash and rl_waiter_deadline(waiters, head)
    local ours = dl
    if not dl then
      dl = zset and
          rl_score_deadline(tonumber(redis.call('ZSCORE', timeout, head)))
    end
    if dl and dl > now_ms then return head, dropped end
    -- Dropping writes three keys: it starts only where each may be
    -- written (an ACL), else nil, nothing dropped, and the refusal.
    if dropped == 0 then
      local no = rl_denied({'LPOP', queue, 'ZREM', timeout, 'ZINCRBY',
                            timeout, 'HDEL', waiters})
      if no then return nil, 0, no end
    end
    if ours and zset then
      rl_reanchor(queue, timeout, waiters, head, now_ms)
    end
    redis.call('LPOP', queue)
    if zset then redis.call('ZREM', timeout, head) end
    if hash then redis.call('HDEL', waiters, head) end
    dropped = dropped + 1
  end
end

-- A redlock fair waiter whose channel nobody listens to, queued for long
-- enough to have subscribed (250 ms): dead (its deadline not passed
-- yet), or between two connections.
local function rl_silent(waiters, owner, now_ms)
  local w = redis.call('HGET', waiters, owner)
  -- No record (false): not redlock's waiter, a Java one.
  local since = w and tonumber(string.match(w, '"since_ms":(%d+)'))
  return since and now_ms - since > 250 or false
end

-- Wake the first live fair waiter on its own channel, CHANNEL:OWNER,
-- dropping dead heads first (NOW_MS as above). A redlock waiter that no
-- one hears is passed over (out of the list and the zset, its entry in
-- WAITERS kept: alive, it puts itself back at the head), a few at most, so that a waiter killed just
-- before a release does not hold up the others, Redisson's included,
-- until its deadline. False when the server refused the PUBLISH.
local function rl_wake_head(queue, timeout, waiters, channel, now_ms, msg)
  -- No queue (a plain lock's common case): one call.
  if redis.call('TYPE', queue).ok ~= 'list' then return true end
  if not now_ms then
    local _
    _, now_ms = rl_time()
  end
  local hash = redis.call('TYPE', waiters).ok == 'hash'
  for _ = 1, 3 do
    local head = rl_drop_expired(queue, timeout, waiters, now_ms)
    if not head then return true end
    local r = redis.pcall(rl_pubcmd, channel .. ':' .. head, msg)
    if type(r) == 'table' and r.err then return false end
    if r ~= 0 or not hash or not rl_silent(waiters, head, now_ms) then
      return true
    end
    if redis.call('TYPE', timeout).ok == 'zset' then
      rl_reanchor(queue, timeout, waiters, head, now_ms)
    end
    redis.call('LPOP', queue)
    redis.call('ZREM', timeout, head)
    -- Its entry in WAITERS stays, for it to come back; with nobody left
    -- in the queue, none is needed.
    if redis.call('LLEN', queue) == 0 then redis.call('DEL', waiters) end
  end
  return true
end

-- The waiting room of a plain lock or a semaphore: ROOM, a zset of
-- waiter -> deadline (ms, server clock), each woken on CHANNEL:WAITER;
-- and LISTENER, a string naming the one waiter of them that listens to
-- CHANNEL itself, where Redisson's releases publish. A release wakes one
-- waiter, not every one; waiters are not ordered (that is --fair).

-- Wake one waiter of ROOM on CHANNEL:WAITER with MSG: the one heard from
-- last, and the listener only when no other is there (it hears CHANNEL).
-- One that nobody hears (killed, or not subscribed yet: it tries again
-- once it is) is taken out and the next one woken, a few at most. No
-- room: one call. False when the server refused the PUBLISH.
local function rl_room_wake(room, listener, channel, msg)
  if not room or redis.call('EXISTS', room) == 0 then return true end
  local _, now_ms = rl_time()
  if type(redis.pcall('ZREMRANGEBYSCORE', room, '-inf', now_ms)) == 'table'
  then return true end	-- not a zset: no room of ours
  local l = redis.pcall('GET', listener)
  if type(l) ~= 'string' then
    l = false
  elseif not redis.call('ZSCORE', room, l) then
    redis.call('DEL', listener)	-- it left or went silent: free the role
    l = false
  end
  for _ = 1, 3 do
    local top = redis.call('ZREVRANGE', room, 0, 1)
    local w = top[1] == l and top[2] or top[1]
    if not w then return true end
    local r = redis.pcall(rl_pubcmd, channel .. ':' .. w, msg)
    if type(r) == 'table' and r.err then return false end
    if r ~= 0 then return true end
    redis.call('ZREM', room, w)
  end
  return true
end

-- WAITER joins ROOM, or stays in it, until NOW_MS + MS when it is the
-- listener (it refreshes every MS/3) and 3 * MS otherwise (every MS); it
-- becomes the listener when no waiter in the room is. 1 when it is the
-- listener, else false. Keys of another type are not written: then, as
-- when the server refuses the write (out of memory), it listens.
local function rl_room_join(room, listener, waiter, now_ms, ms)
  local l = redis.pcall('GET', listener)
  if type(l) == 'table' then return 1 end
  local listen = l == waiter or not l or
      type(redis.pcall('ZSCORE', room, l)) ~= 'string'
  -- A user who may not PEXPIRE the room does not join it: a room left
  -- without its expiry would outlive every waiter.
  if rl_denied({'PEXPIRE', room, 'PTTL', room}) then return 1 end
  local r = redis.pcall('ZADD', room, now_ms + (listen and ms or 3 * ms),
                        waiter)
  if type(r) == 'table' then return 1 end
  -- The room lasts as long as the latest deadline in it, no longer.
  rl_lengthen(room, listen and ms or 3 * ms)
  if listen then redis.pcall('SET', listener, waiter, 'PX', ms) end
  return listen and 1 or false
end

-- The live waiters of ROOM (by their deadlines, at the server's NOW_MS),
-- less its listener when it is queued in the fair queue's TIMEOUT zset as
-- well (behind a Java holder), where it is counted.
local function rl_room_count(room, listener, timeout, now_ms)
  if redis.call('TYPE', room).ok ~= 'zset' then return 0 end
  local n = redis.call('ZCOUNT', room, now_ms, '+inf')
  local l = redis.pcall('GET', listener)
  if type(l) == 'string' and redis.call('ZSCORE', room, l) and
      redis.call('TYPE', timeout).ok == 'zset' and
      redis.call('ZSCORE', timeout, l) then
    n = n - 1
  end
  return n
end

-- The record of WAITER, a waiter of ROOM, in GUEST: a hash of waiter ->
-- REC (JSON: host, pid, user, cmd, since_ms, gives_up_ms), which queue
-- reads to name the waiters without --fair. Written once, at its first
-- call in the room (since_ms stays), and kept as long as the room is.
-- A key of another type, a write the server refuses, or a user who
-- may not give it its expiry: the waiter waits unnamed, nothing written.
-- Records of waiters gone from the room without leaving (killed) go once
-- there are many more of them than waiters.
local function rl_guest_join(guest, room, waiter, rec)
  if not guest or
      rl_denied({'HSETNX', guest, 'PEXPIRE', guest, 'PTTL', guest}) then
    return
  end
  -- Only a waiter that is in the room (not one that listens instead: a
  -- room of another type, or one it may not write or read).
  local left = redis.pcall('PTTL', room)
  if type(left) ~= 'number' or left <= 0 or
      type(redis.pcall('ZSCORE', room, waiter)) ~= 'string' then
    return
  end
  local r = redis.pcall('HSETNX', guest, waiter, rec)
  if type(r) ~= 'number' then return end
  rl_lengthen(guest, left)
  -- (What the ACL refuses here only leaves records to their expiry.)
  if r == 1 then
    pcall(function()
      if redis.call('HLEN', guest) <= 2 * redis.call('ZCARD', room) + 16
      then return end
      for _, w in ipairs(redis.call('HKEYS', guest)) do
        if not redis.call('ZSCORE', room, w) then
          redis.call('HDEL', guest, w)
        end
      end
    end)
  end
end

-- WAITER leaves ROOM (it acquired, or stopped waiting), and its record
-- GUEST (rl_guest_join; nil: none); a listener that leaves gives up the
-- role and wakes another waiter, which takes it up. True when a waiter
-- was woken.
local function rl_room_leave(room, listener, waiter, channel, msg, guest)
  redis.pcall('ZREM', room, waiter)
  if guest then redis.pcall('HDEL', guest, waiter) end
  if redis.pcall('GET', listener) ~= waiter then return false end
  redis.call('DEL', listener)
  rl_room_wake(room, listener, channel, msg)
  return true
end

-- History: ENTRY appended to stream KEY (redlock_log:{NAME}) as its one
-- field "e", the stream trimmed to about MAX entries (MAX "": history is
-- off). ENTRY is an event's field/value pairs, each string but the last
-- followed by byte 31 (the unit separator), the pair "event" NAME last:
-- the caller's part comes from rl_kind.c ready made (rl_history_entry),
-- so that a script on the hot path adds only what the server knows (a
-- token, which event it was) in one concatenation. The stream expires
-- TTL ms (0: never) after an event that REFRESHes it (every event off
-- the hot path, and the acquisitions that rl_log_renews picks). Any
-- other event only appends to the stream, live (NOMKSTREAM), or makes it
-- anew, with its expiry, when it is gone (expired, or deleted). Every call is a
-- pcall: a stream key of another type, a user without XADD (ACL), or
-- without the PEXPIRE that a stream it makes needs, or a server out of
-- memory skips the event, never the lock's own work.
-- Returns the server's refusal of XADD (or of that PEXPIRE), or nil.
local function rl_log(key, max, ttl, entry, refresh)
  if not key or not max or max == '' then return end
  local r
  if not refresh then
    r = redis.pcall('XADD', key, 'NOMKSTREAM', 'MAXLEN', '~', max, '*',
                    'e', entry)
    if type(r) == 'string' then return nil end
    -- A server before Redis 6.2 knows no NOMKSTREAM: as a refresh.
    if r and not string.find(r.err, 'syntax', 1, true) then return r.err end
  end
  -- A stream it may make but not PEXPIRE would never expire: no event.
  local no = ttl and ttl ~= '0' and rl_denied({'PEXPIRE', key})
  if no then return no.err end
  r = redis.pcall('XADD', key, 'MAXLEN', '~', max, '*', 'e', entry)
  if type(r) == 'table' and r.err then return r.err end
  if ttl and ttl ~= '0' then redis.pcall('PEXPIRE', key, ttl) end
end

-- History: whether an acquisition at NOW_US, the one before it having
-- taken the fencing token OLD (about its time in us; nil: unknown),
-- renews the expiry of the stream, TTL ms: the first one in each period
-- of TTL/2 does, so that the stream lives at least TTL/2 after the last
-- acquisition, at most TTL, and most acquisitions skip the PEXPIRE.
local function rl_log_renews(ttl, now_us, old)
  local t = tonumber(ttl)
  if not t or t <= 0 then return false end
  old = tonumber(old)
  return not old or
      math.floor(now_us / (t * 500)) ~= math.floor(old / (t * 500))
end

-- History: event EV off the hot path, with the field/value pairs in list
-- F (values from holder records may hold byte 31: made '?').
local function rl_log_event(key, max, ttl, ev, f)
  if not key or not max or max == '' then return end
  for i = 2, #f, 2 do f[i] = string.gsub(f[i], '\31', '?') end
  f[#f + 1] = 'event'
  f[#f + 1] = ev
  return rl_log(key, max, ttl, table.concat(f, '\31'), true)
end

-- History: the fields of holder metadata JSON REC (host, pid, user, cmd,
-- fence) for OWNER, and hold_ms (from since_ms to NOW_MS), into a list
-- of field/value pairs.
local function rl_log_holder(owner, rec, now_ms)
  local d = rl_decode(rec)
  local f = {'owner', owner, 'host', d.host or '', 'pid', d.pid or '',
             'user', d.user or '', 'cmd', d.cmd or '',
             'fence', rl_fence(rec) or ''}
  if tonumber(d.since_ms) then
    f[#f + 1] = 'hold_ms'
    f[#f + 1] = string.format('%.0f', now_ms - tonumber(d.since_ms))
  end
  return f
end
