-- ---- rules that decide, then commit (redislua/lua/member.lua) --------------
-- The rules an all-of script combines (all_of.lua) are split in two, so that
-- a request can be checked against every limit before any is charged:
--   RULES[name].policy(cost, rate, per, burst, opt, per_ns) checks the
--     arguments (an error reply for a bad one) and returns the policy;
--   RULES[name].decide(key, pol) reads the key's state and writes nothing:
--     it returns verdict, delay, retry (ticks, as reply takes them) and the
--     write the decision makes, or nil;
--   commit(w) makes that write: HSET of its fields, then the PEXPIRE of
--     --clock redis for the instant the state is fresh again.
-- A rule's script alone (single.lua) decides, commits, and replies.
local RULES = {}

-- write returns the write of fields (name, value, ...) to key, fresh at
-- the instant fresh.
local function write(key, fresh, ...)
  return {key = key, fresh = fresh, ...}
end

local function commit(w)
  if w == nil then return end
  redis.call('HSET', w.key, unpack(w))
  expire_at(w.key, w.fresh)
end
