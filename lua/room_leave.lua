-- room_leave: a plain or --limit waiter that stops waiting without the
-- lock (its wait ran out, or it was signalled) leaves the room of NAME; as
-- the listener, it hands the role to another waiter by waking it.
-- KEYS[1]  redlock_room:{NAME}            zset: waiter -> deadline (ms)
-- KEYS[2]  redlock_listener:{NAME}        string: the waiter that listens
--                                          to the name's channel
-- ARGV[1]  the waiter: its owner token, or a permit's id
-- ARGV[2]  the channel whose CHANNEL:WAITER wakes a waiter of the room
-- ARGV[3]  PUBLISH or SPUBLISH
-- Returns 1 when it was the listener (another waiter was woken), else 0.
rl_pubcmd = ARGV[3] or rl_pubcmd
return rl_room_leave(KEYS[1], KEYS[2], ARGV[1], ARGV[2], '0') and 1 or 0
