-- rw_leave: a redlock writer that waited for read-write lock NAME gives up
-- (its wait ran out, it was signalled, or it cannot wait): its intent goes,
-- and the readers it held back are told they may go.
-- KEYS[1]  redlock_writer:{NAME}   string: the owner of the waiting writer
-- KEYS[2]  redisson_rwlock:{NAME}  channel
-- ARGV[1]  owner token
-- ARGV[2]  PUBLISH or SPUBLISH: the command that wakes waiters
-- Returns 1 when OWNER's intent was removed ("1" published on KEYS[2]: all
--   wake), 0 when KEYS[1] did not hold OWNER (nothing changed).
rl_pubcmd = ARGV[2] or rl_pubcmd
if redis.call('TYPE', KEYS[1]).ok ~= 'string' then return 0 end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
rl_publish(KEYS[2], '1')
return 1
