-- fixed-window (algorithms/fixed_window.go): window k = floor(now/W) at
-- offset e; admit iff count[k] + cost <= L, then count[k] += cost.
-- retry_after = W - e; never when cost > L. count-rejected counts rejected
-- requests too. State: a hash {w = k, c = count}; fresh at (k+1)*W.
RULES['fixed-window'] = {
  options = {['count-rejected'] = true},
  decide = function(key, cost, rate, per, burst, opt)
    local count_rejected = (opt['count-rejected'] or 0) ~= 0
    local k, e = divmod(now, per)

    local st = redis.call('HMGET', key, 'w', 'c')
    local count = 0
    if st[1] and tonumber(st[1]) == k then count = tonumber(st[2]) end

    local verdict, retry, counted = 0, 0, true
    if not (cost <= rate and count <= rate - cost) then
      verdict, counted = 2, count_rejected
      if cost > rate then retry = -1 else retry = per - e end
    end
    if counted then
      return verdict, 0, retry, key, (k + 1) * per, 'w', fmt(k), 'c', fmt(math.min(count + cost, SAT))
    end
    return verdict, 0, retry
  end,
}
