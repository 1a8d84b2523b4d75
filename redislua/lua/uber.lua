-- uber-ratelimit (algorithms/uber.go): go.uber.org/ratelimit's Take
-- (limiter_atomic_int64.go). perRequest = per/rate in whole ns (Go's
-- integer division), maxSlack = slack * perRequest (slack 10 unless
-- given; 0 is WithoutSlack). A state of 0 is a key never seen. A request
-- of cost c is c Takes at now; it is never rejected, and waits until the
-- last one's permission. State: a hash {n = the next permission, ticks};
-- without slack it expires perRequest + 1 tick after n, with slack never.
local cost, rate, per, burst, opt, per_ns = args({['slack'] = true}, {})
local per_req = ticks('per/rate', divmod(per_ns, rate))
local slack = opt['slack'] or 10
local max_slack = slack * per_req

local st = redis.call('HGET', KEYS[1], 'n')
local state = 0
if st then state = tonumber(st) end
local function take(s)
  if s == 0 or (max_slack == 0 and now - s > per_req) then return now end
  if max_slack > 0 and now - s > max_slack + per_req then return now - max_slack end
  return s + per_req
end
local n = take(state)
local k = cost - 1
while k > 0 do
  if n ~= 0 then
    n = n + k * per_req -- every later Take adds perRequest
    break
  end
  n = now -- state 0: a first call again
  if n == 0 then break end
  k = k - 1
end
redis.call('HSET', KEYS[1], 'n', fmt(n))
if max_slack == 0 then expire_at(KEYS[1], n + per_req + 1) end
if n > now then return reply(1, n - now, 0) end
return reply(0, 0, 0)
