-- ---- a log of units in a sorted set (redislua/lua/zset.lua) ----------------
-- One member per unit of cost, scored by the instant it stops counting, so
-- that the units still counting are ZCARD after trimming the scores <= now,
-- and the n-th to stop counting is ZRANGE n-1. Members are unique per unit:
-- "<score>.<i>" where i counts the units already logged with that score (all
-- of a score go at once, so 0..n-1 are the ones there).

-- log_units adds units that stop counting at upto.
local function log_units(key, upto, units)
  local s = fmt(upto)
  local n = redis.call('ZCOUNT', key, s, s)
  local i = 0
  while i < units do
    local z = {}
    local j = 0
    while j < 500 and i < units do -- ZADD in batches: Lua's unpack is bounded
      z[#z + 1] = s
      z[#z + 1] = s .. '.' .. fmt(n + i)
      i, j = i + 1, j + 1
    end
    redis.call('ZADD', key, unpack(z))
  end
  if EXPIRES then
    local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
    expire_at(key, tonumber(last[2]))
  end
end

-- prune drops the units that have stopped counting by now and returns how
-- many still count.
local function prune(key)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', fmt(now))
  return redis.call('ZCARD', key)
end

-- wait_for returns the wait until the over-th oldest unit stops counting
-- (over >= 1): until then the units count over too many.
local function wait_for(key, over)
  local e = redis.call('ZRANGE', key, over - 1, over - 1, 'WITHSCORES')
  return tonumber(e[2]) - now
end
