-- guava-bursty and guava-warming-up (algorithms/guava.go): Guava's
-- SmoothRateLimiter in doubles of microseconds, as Guava computes: every
-- product a Lua operation of its own (rounded, never fused), Java's (long)
-- casts toward zero. The clock is now in whole microseconds. A request is
-- admitted iff nextFree - timeout <= now; it then resyncs the stored
-- permits, spends min(cost, stored) of them and moves nextFree by their
-- wait plus (long)(fresh * stable); it waits only until the old nextFree.
-- State: a hash {n = nextFree in us, s = stored permits, %.17g: the
-- double itself}. Bursty keys never expire; warming-up keys expire once
-- cold again.
local cost, rate, per, burst, opt, per_ns = args(
  {['max-delay'] = true, ['max-burst'] = true, ['warmup'] = true, ['cold-factor'] = true}, {})
local warm = ALGORITHM == 'guava-warming-up'
if cost > 2147483647 then return reply(2, 0, -1) end

-- Go's Duration.Seconds(): whole seconds plus the ns over 1e9
local function seconds(ns)
  local s, r = divmod(ns, 1000000000)
  return s + r / 1e9
end
local function jlong(x) -- Java's (long) of a double, in range
  if x >= 0 then return math.floor(x) end
  return math.ceil(x)
end

local pps = rate / seconds(per_ns)
local stable = 1e6 / pps
local max_permits, threshold, slope, cool, initial = 0, 0, 0, stable, 0
if warm then
  local warmup = divmod(opt['warmup'] or fail('warmup: required'), 1000) -- toMicros
  local cold = stable * (opt['cold-factor'] or 3)
  threshold = (0.5 * warmup) / stable
  max_permits = threshold + (2.0 * warmup) / (stable + cold)
  slope = (cold - stable) / (max_permits - threshold)
  cool = warmup / max_permits
  initial = max_permits
else
  local b = 1.0
  if opt['max-burst'] then b = seconds(opt['max-burst']) end
  max_permits = b * pps
end
local timeout = divmod(opt['max-delay'] or 0, 1000)

local m = now -- the clock in us
if NS == 1 then m = divmod(now, 1000) end
local function tick_of(us) -- the tick of an instant in us (never us*1000/NS:
  if NS == 1000 then return us end -- us*1000 is above 2^53 on Redis's clock)
  return us * 1000
end

local st = redis.call('HMGET', KEYS[1], 'n', 's')
local nxt, stored = m, initial
if st[1] then nxt, stored = tonumber(st[1]), tonumber(st[2]) end

local at = nxt - timeout
if at > m then
  if at > 2305843009213693 then return reply(2, 0, -1) end
  return reply(2, 0, tick_of(at) - now)
end
if m > nxt then -- resync
  stored = math.min(max_permits, stored + (m - nxt) / cool)
  nxt = m
end
local ret = nxt
local spend = math.min(cost, stored)
local fresh = cost - spend
local wait = 0
if warm then
  local take = spend
  local above = stored - threshold
  if above > 0 then
    local above_take = math.min(above, take)
    local t1 = above * slope
    local t2 = (above - above_take) * slope
    local length = (stable + t1) + (stable + t2)
    local area = above_take * length
    wait = jlong(area / 2.0)
    take = take - above_take
  end
  local flat = stable * take
  wait = wait + jlong(flat)
end
local fresh_wait = fresh * stable
nxt = nxt + wait + jlong(fresh_wait)
stored = stored - spend
redis.call('HSET', KEYS[1], 'n', fmt(nxt), 's', string.format('%.17g', stored))
if warm and EXPIRES then
  -- cold again: the first us at which resync stores max_permits
  local f = nxt
  if stored < max_permits then
    local guess = (max_permits - stored) * cool
    f = nxt + jlong(guess)
    while f > nxt and stored + (f - 1 - nxt) / cool >= max_permits do f = f - 1 end
    while stored + (f - nxt) / cool < max_permits do f = f + 1 end
  end
  expire_at(KEYS[1], tick_of(f))
end
if ret > m then return reply(1, (ret - m) * 1000 / NS, 0) end
return reply(0, 0, 0)
