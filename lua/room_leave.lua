-- room_leave: a plain or --limit waiter that stops waiting without the
-- lock (its wait ran out, or it was signalled) leaves the room of NAME; as
-- the listener, it hands the role to another waiter by waking it.
-- KEYS[1]  redlock_room:{NAME}            zset: waiter -> deadline (ms)
-- KEYS[2]  redlock_listener:{NAME}        string: the waiter that listens
--                                          to the name's channel
-- ARGV[1]  the waiter: its owner token, or a permit's id
-- ARGV[2]  the channel whose CHANNEL:WAITER wakes a waiter of the room
-- KEYS[3]  redlock_log:{NAME}             stream: history (a lock's
--                                          waiter; absent for a permit's)
-- ARGV[3]  history: "MAXLEN TTL_MS" (see rl_log), or "" (off)
-- ARGV[4..8] the waiter's owner token, host, pid, user and command
-- ARGV[9]  how long it waited, in ms
-- ARGV[10] PUBLISH or SPUBLISH
-- Returns 1 when it was the listener (another waiter was woken), else 0.
rl_pubcmd = ARGV[10] or rl_pubcmd
if KEYS[3] then
  rl_log(KEYS[3], ARGV[3], 'gave_up',
         {'owner', ARGV[4], 'host', ARGV[5], 'pid', ARGV[6], 'user', ARGV[7],
          'cmd', ARGV[8], 'wait_ms', ARGV[9]})
end
return rl_room_leave(KEYS[1], KEYS[2], ARGV[1], ARGV[2], '0') and 1 or 0
