-- concurrency (algorithms/concurrency.go): a request of cost c is c units in
-- flight during [now, now + S), S the backend's service time (option
-- service, ns); admit iff the units in flight at now, plus cost, are <= max
-- (option max, 0 or absent: burst). retry_after: until enough of the
-- earliest in flight complete; never when cost > max. With S = 0 nothing is
-- ever in flight and no state is kept. State: a sorted set of one member
-- per unit in flight, scored by its completion instant (see zset.lua).
local cost, rate, per, burst, opt = args({max = true, service = true}, {service = true})
local most = opt['max'] or 0
if most < 0 then fail('max: want at least 0 (0 means the burst), found ' .. fmt(most)) end
if most == 0 then most = burst end
local service = opt['service'] or 0
if service < 0 then fail('service: want at least 0, found ' .. fmt(service)) end
if cost > most then return reply(2, 0, -1) end
if service == 0 then return reply(0, 0, 0) end
local sum = prune(KEYS[1])
if sum > most - cost then
  return reply(2, 0, wait_for(KEYS[1], sum - (most - cost)))
end
log_units(KEYS[1], now + service, cost)
return reply(0, 0, 0)
