-- ---- rules that decide, then commit (redislua/lua/member.lua) --------------
-- The rules an all-of script combines (all_of.lua) are split in two, so that
-- a request can be checked against every limit before any is charged:
--   RULES[name].decide(key, cost, rate, per, burst, opt, per_ns) reads the
--     key's state and writes nothing: it returns verdict, delay, retry
--     (ticks, as reply takes them), then the write its decision makes, if
--     any: key, fresh, field, value, ...; a bad policy is an error reply
--     before it reads;
--   RULES[name].check(cost, rate, per, burst, opt, per_ns), when there is
--     one, refuses a bad policy as decide would, without deciding;
--   commit(key, fresh, field, value, ...) makes that write: HSET of the
--     fields, then the PEXPIRE of --clock redis for fresh, the instant the
--     state is fresh again.
-- A rule's script alone (single.lua) decides, commits and replies. The
-- write goes back as values, not a table: a call allocates no more than
-- it must.
local RULES = {}

local function commit(key, fresh, ...)
  if key == nil then return end
  redis.call('HSET', key, ...)
  expire_at(key, fresh)
end
