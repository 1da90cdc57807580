-- room_leave: a plain or --limit waiter that stops waiting without the
-- lock (its wait ran out, or it was signalled) leaves the room of NAME; as
-- the listener, it hands the role to another waiter by waking it.
-- KEYS[1]  room       redlock_room:{NAME}            zset: waiter -> deadline
--          (ms)
-- KEYS[2]  listener   redlock_listener:{NAME}        string: the waiter that
--          listens to the name's channel
-- ARGV[1]  waiter          the waiter: its owner token, or a permit's id
-- ARGV[2]  channel         the channel whose CHANNEL:WAITER wakes a waiter of
--                          the room
-- KEYS[3]  log        redlock_log:{NAME}             stream: history
-- ARGV[3]  hist_max        history: about how many events to keep ("": none
--                          kept)
-- ARGV[4]  hist_ttl        history: the stream's expiry after an event, in ms
--                          (0: never)
-- ARGV[5]  hist_entry      history: the waiter's part of its entry
--                          (rl_history_entry: owner, host, pid, user, cmd, how
--                          long it waited, a permit's kind, "event")
-- KEYS[4]  guest      redlock_guest:{NAME}           hash: plain waiter ->
--          its record, for queue (rl_guest_join); none for --limit
-- ARGV[6]  publish         PUBLISH or SPUBLISH
-- RETURNS  listener  1
-- RETURNS  waiter    0
-- Returns 1 when it was the listener (another waiter was woken), else 0.
rl_pubcmd = A_publish or rl_pubcmd
if K_log then
  rl_log(K_log, A_hist_max, A_hist_ttl, A_hist_entry .. 'gave_up', true)
end
return rl_room_leave(K_room, K_listener, A_waiter, A_channel, '0',
                     K_guest) and 1 or 0
