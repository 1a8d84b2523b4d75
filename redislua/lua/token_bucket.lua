-- token-bucket (algorithms/token_bucket.go): B tokens, starts full, refills
-- L per W continuously; admit iff tokens >= cost, then take cost.
-- retry_after = (cost - tokens)/(L/W) rounded up; never when cost > B.
-- max-delay D: a request short of tokens is admitted with the wait as its
-- delay when the wait is <= D (it takes its tokens, the bucket goes into
-- debt); otherwise rejected with retry_after = wait - D.
-- State: a hash {d = deficit, t = last}, the deficit (B - tokens) scaled by
-- W/g (g = gcd(L, W)) so that a refill of dt ticks is dt*L/g, an integer;
-- fresh when full again, at last + ceil(deficit/(L/g)).
RULES['token-bucket'] = {
  options = {['max-delay'] = true},
  durations = {['max-delay'] = true},
  decide = function(key, cost, rate, per, burst, opt)
    local max_delay = opt['max-delay'] or 0
    if cost > burst then return 2, 0, -1 end
    local g = gcd(rate, per)
    local per_token, per_tick = per / g, rate / g -- exact: g divides both

    -- ticks to refill units (>= 0), rounded up
    local function ticks_for(units)
      if per_tick == 1 then return units end
      return ceildiv(units, per_tick)
    end

    local st = redis.call('HMGET', key, 'd', 't')
    local d, last = 0, now
    if st[1] then d, last = tonumber(st[1]), tonumber(st[2]) end
    local t = math.max(now, last) -- the bucket's clock never goes back
    if d > 0 then
      -- compare with the time to full first: dt*per_tick stays below d + per_tick
      local dt = t - last
      if dt >= ticks_for(d) then d = 0 else d = d - dt * per_tick end
    end

    local wait = 0
    local short = d - (burst - cost) * per_token
    if short > 0 then
      wait = ticks_for(short)
      if wait > max_delay then return 2, 0, wait - max_delay end
    end
    d = d + cost * per_token
    local verdict = 0
    if wait > 0 then verdict = 1 end
    return verdict, wait, 0, key, t + ticks_for(d), 'd', fmt(d), 't', fmt(t)
  end,
}
