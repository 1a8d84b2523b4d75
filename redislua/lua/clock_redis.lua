-- ---- clock: redis (redislua/lua/clock_redis.lua) -----------------------------
-- now is Redis's TIME in microseconds since the Unix epoch (ARGV[1] is
-- ignored); one tick is 1 us, so per, max-delay and service must be whole
-- microseconds. Each write sets a PEXPIRE for the instant the key's state
-- becomes indistinguishable from a fresh key's, rounded up to a whole ms.
local NS = 1000      -- ns per tick
local MS = 1000      -- ticks per ms
local EXPIRES = true -- keys get a PEXPIRE
local now

local function ticks(name, ns)
  local t, r = divmod(ns, 1000)
  if r ~= 0 then
    fail(name .. ': ' .. fmt(ns) .. ' ns is not a whole number of microseconds, the resolution of --clock redis')
  end
  return t
end

local function expire_at(key, fresh)
  local ms = ceildiv(math.max(fresh - now, 1), 1000)
  redis.call('PEXPIRE', key, fmt(ms))
end

local function clock()
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
