-- gcra (algorithms/gcra.go): T = W/L exactly (num/den, reduced by
-- gcd(L, W)); admit iff max(TAT, now) + cost*T - now <= B*T, then
-- TAT = max(TAT, now) + cost*T. retry_after = max(TAT, now) + cost*T -
-- B*T - now rounded up; never when cost > B. max-delay D: admitted with
-- delay = the excess rounded up when the excess is <= D; retry_after =
-- excess - D. State: a hash {n, r}, TAT = n + r/den ticks; fresh at
-- ceil(TAT).
local cost, rate, per, burst, opt = args({['max-delay'] = true}, {['max-delay'] = true})
local max_delay = opt['max-delay'] or 0
if cost > burst then return reply(2, 0, -1) end
local g = gcd(rate, per)
local num, den = per / g, rate / g -- exact: g divides both

-- c intervals, c*T, as n + r/den
local function times(c)
  local x = c * num
  if den == 1 then return x, 0 end
  return divmod(x, den)
end

local st = redis.call('HMGET', KEYS[1], 'n', 'r')
local bn, br = now, 0 -- base = max(TAT, now); a fresh key conforms at once
if st[1] then
  local tn, tr = tonumber(st[1]), tonumber(st[2])
  if fafter(tn, tr, now, 0) then bn, br = tn, tr end
end
local an, ar = bn - now, br -- ahead = base - now
local sn, sr = times(burst - cost) -- slack (B-c)*T
local ln, lr = sn + max_delay, sr  -- slack + D
if fafter(an, ar, ln, lr) then
  return reply(2, 0, fceil(fsub(an, ar, ln, lr, den)))
end
local cn, cr = times(cost)
local tn, tr = fadd(bn, br, cn, cr, den)
redis.call('HSET', KEYS[1], 'n', fmt(tn), 'r', fmt(tr))
expire_at(KEYS[1], fceil(tn, tr))
if fafter(an, ar, sn, sr) then
  return reply(1, fceil(fsub(an, ar, sn, sr, den)), 0)
end
return reply(0, 0, 0)
