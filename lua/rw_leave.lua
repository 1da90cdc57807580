-- rw_leave: a redlock writer that waited for read-write lock NAME gives up
-- (its wait ran out, it was signalled, or it cannot wait): its intent goes,
-- and the readers it held back are told they may go.
-- KEYS[1]  writer     redlock_writer:{NAME}          string: the owner of the
--          waiting writer
-- KEYS[2]  rwchannel  redisson_rwlock:{NAME}         channel
-- KEYS[3]  log        redlock_log:{NAME}             stream: history (a
--          read-write lock's waiter; absent for an exclusive one, whose leaving
--          the room records it)
-- ARGV[1]  owner           owner token
-- ARGV[2]  hist_max        history: about how many events to keep ("": none
--                          kept)
-- ARGV[3]  hist_ttl        history: the stream's expiry after an event, in ms
--                          (0: never)
-- ARGV[4]  hist_entry      history: the waiter's part of its entry
--                          (rl_history_entry: owner, host, pid, user, cmd, how
--                          long it waited, kind, "event")
-- ARGV[5]  publish         PUBLISH or SPUBLISH: the command that wakes waiters
-- RETURNS  withdrawn  1
-- RETURNS  absent     0
-- Returns 1 when OWNER's intent was removed ("1" published on K_rwchannel: all
--   wake), 0 when K_writer did not hold OWNER (nothing else changed).
rl_pubcmd = A_publish or rl_pubcmd
-- A reader has no intent to withdraw: it comes here to be recorded.
if K_log then
  rl_log(K_log, A_hist_max, A_hist_ttl, A_hist_entry .. 'gave_up', true)
end
if redis.call('TYPE', K_writer).ok ~= 'string' then return 0 end
if redis.call('GET', K_writer) ~= A_owner then return 0 end
redis.call('DEL', K_writer)
rl_publish(K_rwchannel, '1')
return 1
