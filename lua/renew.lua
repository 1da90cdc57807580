-- renew: extend the lease of lock NAME if, and only if, OWNER still holds it.
-- Never re-creates a lock that is gone, and never shortens a lease that a
-- longer hold of the same owner gave it.
-- KEYS[1]  NAME                   hash: owner -> hold count
-- KEYS[2]  redlock_holder:{NAME}  hash: owner -> JSON metadata
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner token
-- Returns 1 when renewed; 0 when NAME is gone or not a lock, or OWNER's
-- hold is finished (--min-hold: given back, it stays only until the end of
-- its minimum hold); 2 when another owner holds NAME (OWNER is not among
-- its holders).
if redis.call('TYPE', KEYS[1]).ok ~= 'hash' then return 0 end
if redis.call('HEXISTS', KEYS[1], ARGV[2]) == 0 then return 2 end
if redis.call('TYPE', KEYS[2]).ok == 'hash' and
    rl_finished(redis.call('HGET', KEYS[2], ARGV[2])) then
  return 0
end
rl_lengthen(KEYS[1], ARGV[1])
if redis.call('TYPE', KEYS[2]).ok == 'hash' then
  rl_lengthen(KEYS[2], ARGV[1])
end
return 1
