-- leaky-bucket (algorithms/leaky_bucket.go), the queue: D = W/L exactly
-- (num/den); the queue holds at most B requests released D apart. Admit iff
-- max(TAT, now) + cost*D - now <= B*D; released at max(TAT, now), so
-- delay = max(TAT, now) - now rounded up; then TAT = release + cost*D.
-- retry_after as gcra; never when cost > B. State: a hash {n, r}, TAT =
-- n + r/den ticks; fresh (queue empty) at ceil(TAT).
local cost, rate, per, burst, opt = args({})
if cost > burst then return reply(2, 0, -1) end
local g = gcd(rate, per)
local num, den = per / g, rate / g

local function times(c)
  local x = c * num
  if den == 1 then return x, 0 end
  return divmod(x, den)
end

local st = redis.call('HMGET', KEYS[1], 'n', 'r')
local rn, rr = now, 0 -- release = max(TAT, now); a fresh queue is empty
if st[1] then
  local tn, tr = tonumber(st[1]), tonumber(st[2])
  if fafter(tn, tr, now, 0) then rn, rr = tn, tr end
end
local wn, wr = rn - now, rr           -- the work queued ahead
local mn, mr = times(burst - cost)    -- the most it may wait: (B-c)*D
if fafter(wn, wr, mn, mr) then
  return reply(2, 0, fceil(fsub(wn, wr, mn, mr, den)))
end
local cn, cr = times(cost)
local tn, tr = fadd(rn, rr, cn, cr, den)
redis.call('HSET', KEYS[1], 'n', fmt(tn), 'r', fmt(tr))
expire_at(KEYS[1], fceil(tn, tr))
local delay = fceil(wn, wr)
if delay > 0 then return reply(1, delay, 0) end
return reply(0, 0, 0)
