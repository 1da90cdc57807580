-- rw_renew: extend the leases of OWNER's read or write holds of read-write
-- lock NAME if, and only if, it still has them. Never re-creates anything
-- that is gone, and never shortens a lease.
-- KEYS[1]  lock       NAME                           hash: mode, OWNER -> read
--          holds, OWNER:write -> write holds
-- KEYS[2]  holder     redlock_holder:{NAME}          hash: field -> JSON
--          metadata
-- KEYS[3]  leases     {NAME}:OWNER:rwlock_timeout    the caller's read leases:
--          K_leases:N
-- ARGV[1]  lease           lease in milliseconds
-- ARGV[2]  owner           owner token
-- ARGV[3]  mode            "read" or "write"
-- RETURNS  renewed  1
-- RETURNS  gone     0
-- RETURNS  taken    2
-- Returns 1 when renewed; 0 when NAME is gone or not a lock, or none of
-- OWNER's read holds has its lease key left, or that hold is finished
-- (--min-hold: given back, it stays only until the end of its minimum
-- hold); 2 when NAME is held and OWNER has no hold of that kind there
-- (another owner holds it, or it is a lock of another kind).
if redis.call('TYPE', K_lock).ok ~= 'hash' then return 0 end
if redis.call('HEXISTS', K_lock, 'mode') == 0 then return 2 end
if redis.call('TYPE', K_holder).ok == 'hash' and rl_finished(redis.call(
    'HGET', K_holder, A_mode == 'read' and A_owner or A_owner .. ':write'))
then
  return 0
end
if A_mode == 'read' then
  local n = tonumber(redis.call('HGET', K_lock, A_owner))
  if not n then return 2 end
  local alive = false
  for i = 1, n do
    local key = K_leases .. ':' .. i
    if redis.call('TYPE', key).ok == 'string' then
      rl_lengthen(key, A_lease)
      alive = true
    end
  end
  if not alive then return 0 end
elseif redis.call('HEXISTS', K_lock, A_owner .. ':write') == 0 then
  return 2
end
rl_lengthen(K_lock, A_lease)
if redis.call('TYPE', K_holder).ok == 'hash' then
  rl_lengthen(K_holder, A_lease)
end
return 1
