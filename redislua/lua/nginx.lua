-- nginx (algorithms/nginx.go), limit_req to the letter: rate in
-- milli-requests per second (L*1000/scale truncated, per 1s or 1m only),
-- excess, burst and delay in milli-requests, time in whole ms. A key's first
-- request sets excess = (cost-1)*1000, last = now_ms. After that, ms =
-- now_ms - last (nginx's guard: below -60000 counts as 1, below 0 as 0),
-- excess = max(0, excess - rate*ms/1000 + 1000) + (cost-1)*1000; reject iff
-- excess > burst*1000 (state unchanged); otherwise store excess, and last =
-- now_ms only when ms ~= 0. Delay (excess - delay*1000)*1000/rate ms when
-- excess > delay*1000, unless nodelay. retry_after: the first whole ms at
-- which the request fits; never when cost > burst+1. nginx-burst defaults
-- to burst-1. State: a hash {e = excess, l = last ms}; fresh once the next
-- request would compute excess 0, at last + ceil((excess+1000)*1000/rate) ms.

-- nginx_policy returns the rate in milli-requests per second, the burst and
-- the delay in requests, or refuses a bad policy.
local function nginx_policy(rate, burst, opt, per_ns)
  local scale
  if per_ns == 1000000000 then
    scale = 1
  elseif per_ns == 60000000000 then
    scale = 60
  else
    fail('per: nginx takes a rate per 1s (r/s) or per 1m (r/m) only, found ' .. fmt(per_ns) .. ' ns')
  end
  local nburst = opt['nginx-burst'] or (burst - 1)
  local ndelay = opt['delay'] or 0
  if nburst < 0 then fail('nginx-burst: want at least 0, found ' .. fmt(nburst)) end
  if ndelay < 0 then fail('delay: want at least 0, found ' .. fmt(ndelay)) end
  return divmod(rate * 1000, scale), nburst, ndelay
end

RULES['nginx'] = {
  options = {['nginx-burst'] = true, nodelay = true, delay = true},
  check = function(cost, rate, per, burst, opt, per_ns)
    nginx_policy(rate, burst, opt, per_ns)
  end,
  decide = function(key, cost, rate, per, burst, opt, per_ns)
    local r, nburst, ndelay = nginx_policy(rate, burst, opt, per_ns)
    local bm, dm = nburst * 1000, ndelay * 1000
    local nodelay = (opt['nodelay'] or 0) ~= 0
    if cost - 1 > nburst then return 2, 0, -1 end

    -- the fewest ms after which stored excess e computes excess 0
    local function drained_after(e)
      return ceildiv((e + 1000) * 1000, r)
    end

    local now_ms = divmod(now, MS)
    local extra = (cost - 1) * 1000
    local st = redis.call('HMGET', key, 'e', 'l')
    local excess, last = extra, now_ms
    if st[1] then
      local se, sl = tonumber(st[1]), tonumber(st[2])
      local ms = now_ms - sl
      if ms < -60000 then ms = 1 elseif ms < 0 then ms = 0 end
      excess = 0
      -- rate*ms < (e+1000)*1000 here: below 2^53
      if ms < drained_after(se) then
        excess = math.max(0, se - divmod(r * ms, 1000) + 1000)
      end
      excess = excess + extra
      if excess > bm then
        local m = sl + ceildiv((se + cost * 1000 - bm) * 1000, r)
        return 2, 0, math.max(m * MS - now, 1)
      end
      if ms == 0 then last = sl end
    end
    local verdict, delay = 0, 0
    if not nodelay and excess > dm then
      local d = divmod((excess - dm) * 1000, r)
      if d > 0 then verdict, delay = 1, d * MS end
    end
    return verdict, delay, 0, key, (last + drained_after(excess)) * MS, 'e', fmt(excess), 'l', fmt(last)
  end,
}
