-- rw_leave: a redlock writer that waited for read-write lock NAME gives up
-- (its wait ran out, it was signalled, or it cannot wait): its intent goes,
-- and the readers it held back are told they may go.
-- KEYS[1]  redlock_writer:{NAME}   string: the owner of the waiting writer
-- KEYS[2]  redisson_rwlock:{NAME}  channel
-- KEYS[3]  redlock_log:{NAME}     stream: history (a read-write lock's
--                                  waiter; absent for an exclusive one,
--                                  whose leaving the room records it)
-- ARGV[1]  owner token
-- ARGV[2]  history: about how many events to keep ("": none kept)
-- ARGV[3]  history: the stream's expiry after an event, in ms (0: never)
-- ARGV[4]  history: the waiter's part of its entry (rl_history_entry:
--          owner, host, pid, user, cmd, how long it waited, kind, "event")
-- ARGV[5]  PUBLISH or SPUBLISH: the command that wakes waiters
-- Returns 1 when OWNER's intent was removed ("1" published on KEYS[2]: all
--   wake), 0 when KEYS[1] did not hold OWNER (nothing else changed).
rl_pubcmd = ARGV[5] or rl_pubcmd
-- A reader has no intent to withdraw: it comes here to be recorded.
if KEYS[3] then
  rl_log(KEYS[3], ARGV[2], ARGV[3], ARGV[4] .. 'gave_up', true)
end
if redis.call('TYPE', KEYS[1]).ok ~= 'string' then return 0 end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
rl_publish(KEYS[2], '1')
return 1
