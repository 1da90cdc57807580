-- runid: which server process answers, so that one server given under two
-- URLs (127.0.0.1 and localhost, /0 and /1, TCP and its unix socket) is not
-- counted twice towards a Redlock quorum. Reads INFO, changes nothing.
-- KEYS     none
-- ARGV     none
-- RETURNS  run_id   string
-- RETURNS  refused  false
-- Returns the server's run_id (40 hex digits), or false when INFO is
-- refused (an ACL without +info) or names no run_id.
local ok, info = pcall(redis.call, 'INFO', 'server')
if not ok or type(info) ~= 'string' then return false end
return string.match(info, '\nrun_id:(%x+)') or false
