-- sliding-log (algorithms/sliding_log.go): an entry logged at s counts at t
-- iff t - s < W; admit iff the cost of the entries that count, plus cost,
-- is <= L, then log (now, cost). retry_after: until enough of the oldest
-- entries stop counting; never when cost > L. count-rejected logs rejected
-- requests too (a cost above L as L+1), and retry_after sees them.
-- State: a sorted set of one member per unit of cost, scored now + W (see
-- zset.lua); fresh when the last stops counting.
local cost, rate, per, burst, opt = args({['count-rejected'] = true})
local count_rejected = (opt['count-rejected'] or 0) ~= 0
local sum = prune(KEYS[1])
if cost <= rate and sum <= rate - cost then
  log_units(KEYS[1], now + per, cost)
  return reply(0, 0, 0)
end
if count_rejected then
  local c = math.min(cost, rate + 1)
  log_units(KEYS[1], now + per, c)
  sum = sum + c
end
if cost > rate then return reply(2, 0, -1) end
return reply(2, 0, wait_for(KEYS[1], sum - (rate - cost)))
