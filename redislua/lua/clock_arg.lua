-- ---- clock: arg (redislua/lua/clock_arg.lua) --------------------------------
-- now is ARGV[1], in ns since the caller's epoch; one tick is 1 ns. Keys get
-- no expiry: the caller's clock need not run at the speed of Redis's.
local NS = 1          -- ns per tick
local MS = 1000000    -- ticks per ms
local EXPIRES = false -- keys get no PEXPIRE
local now

local function ticks(name, ns)
  return ns
end

local function expire_at(key, fresh)
end

local function clock()
  now = int('now', ARGV[1])
end
