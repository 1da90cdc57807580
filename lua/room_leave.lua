-- room_leave: a plain or --limit waiter that stops waiting without the
-- lock (its wait ran out, or it was signalled) leaves the room of NAME; as
-- the listener, it hands the role to another waiter by waking it.
-- KEYS[1]  redlock_room:{NAME}            zset: waiter -> deadline (ms)
-- KEYS[2]  redlock_listener:{NAME}        string: the waiter that listens
--                                          to the name's channel
-- ARGV[1]  the waiter: its owner token, or a permit's id
-- ARGV[2]  the channel whose CHANNEL:WAITER wakes a waiter of the room
-- KEYS[3]  redlock_log:{NAME}             stream: history
-- ARGV[3]  history: about how many events to keep ("": none kept)
-- ARGV[4]  history: the stream's expiry after an event, in ms (0: never)
-- ARGV[5]  history: the waiter's part of its entry (rl_history_entry:
--          owner, host, pid, user, cmd, how long it waited, a permit's
--          kind, "event")
-- ARGV[6]  PUBLISH or SPUBLISH
-- Returns 1 when it was the listener (another waiter was woken), else 0.
rl_pubcmd = ARGV[6] or rl_pubcmd
if KEYS[3] then
  rl_log(KEYS[3], ARGV[3], ARGV[4], ARGV[5] .. 'gave_up', true)
end
return rl_room_leave(KEYS[1], KEYS[2], ARGV[1], ARGV[2], '0') and 1 or 0
