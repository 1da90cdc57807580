-- rw_renew: extend the leases of OWNER's read or write holds of read-write
-- lock NAME if, and only if, it still has them. Never re-creates anything
-- that is gone, and never shortens a lease.
-- KEYS[1]  NAME                         hash: mode, OWNER -> read holds,
--                                       OWNER:write -> write holds
-- KEYS[2]  redlock_holder:{NAME}        hash: field -> JSON metadata
-- KEYS[3]  {NAME}:OWNER:rwlock_timeout  the caller's read leases: KEYS[3]:N
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner token
-- ARGV[3]  "read" or "write"
-- Returns 1 when renewed; 0 when NAME is gone or not a lock, or none of
-- OWNER's read holds has its lease key left, or that hold is finished
-- (--min-hold: given back, it stays only until the end of its minimum
-- hold); 2 when NAME is held and OWNER has no hold of that kind there
-- (another owner holds it, or it is a lock of another kind).
if redis.call('TYPE', KEYS[1]).ok ~= 'hash' then return 0 end
if redis.call('HEXISTS', KEYS[1], 'mode') == 0 then return 2 end
if redis.call('TYPE', KEYS[2]).ok == 'hash' and rl_finished(redis.call(
    'HGET', KEYS[2], ARGV[3] == 'read' and ARGV[2] or ARGV[2] .. ':write'))
then
  return 0
end
if ARGV[3] == 'read' then
  local n = tonumber(redis.call('HGET', KEYS[1], ARGV[2]))
  if not n then return 2 end
  local alive = false
  for i = 1, n do
    local key = KEYS[3] .. ':' .. i
    if redis.call('TYPE', key).ok == 'string' then
      rl_lengthen(key, ARGV[1])
      alive = true
    end
  end
  if not alive then return 0 end
elseif redis.call('HEXISTS', KEYS[1], ARGV[2] .. ':write') == 0 then
  return 2
end
rl_lengthen(KEYS[1], ARGV[1])
if redis.call('TYPE', KEYS[2]).ok == 'hash' then
  rl_lengthen(KEYS[2], ARGV[1])
end
return 1
