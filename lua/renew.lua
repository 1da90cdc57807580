-- renew: extend the lease of lock NAME if, and only if, OWNER still holds it.
-- Never re-creates a lock that is gone, and never shortens a lease that a
-- longer hold of the same owner gave it.
-- KEYS[1]  lock       NAME                           hash: owner -> hold count
-- KEYS[2]  holder     redlock_holder:{NAME}          hash: owner -> JSON
--          metadata
-- ARGV[1]  lease           lease in milliseconds
-- ARGV[2]  owner           owner token
-- RETURNS  renewed  1
-- RETURNS  gone     0
-- RETURNS  taken    2
-- Returns 1 when renewed; 0 when NAME is gone or not a lock, or OWNER's
-- hold is finished (--min-hold: given back, it stays only until the end of
-- its minimum hold); 2 when another owner holds NAME (OWNER is not among
-- its holders), or OWNER's field is a read-write lock's (a reader's count
-- sits under its bare token, as a plain hold's does, but its leases are
-- keys of their own, which rw_renew lengthens): lock --extend, which
-- learns the kind only from Redis, must not lengthen such a hold's hash
-- alone. Read as release reads it.
if redis.call('TYPE', K_lock).ok ~= 'hash' then return 0 end
local r = redis.call('HMGET', K_lock, A_owner, 'mode', A_owner .. ':write')
if not r[1] or not rl_plain_hold(r[2], r[3]) then return 2 end
if redis.call('TYPE', K_holder).ok == 'hash' and
    rl_finished(redis.call('HGET', K_holder, A_owner)) then
  return 0
end
rl_lengthen(K_lock, A_lease)
if redis.call('TYPE', K_holder).ok == 'hash' then
  rl_lengthen(K_holder, A_lease)
end
return 1
