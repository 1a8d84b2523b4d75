-- sliding-window (algorithms/sliding_window.go), Cloudflare's two counters:
-- window k = floor(now/W) at offset e, prev = count[k-1], cur = count[k];
-- admit iff prev*(W-e) + (cur+cost)*W <= L*W, then count[k] += cost.
-- retry_after is the shortest exact wait (later in window k, in k+1, or at
-- the start of k+2); never when cost > L. count-rejected counts rejected
-- requests too, and retry_after sees them. State: a hash {w = k, p = prev,
-- c = cur}; fresh at (k+2)*W.
RULES['sliding-window'] = {
  options = {['count-rejected'] = true},
  decide = function(key, cost, rate, per, burst, opt)
    local count_rejected = (opt['count-rejected'] or 0) ~= 0
    local k, e = divmod(now, per)

    local st = redis.call('HMGET', key, 'w', 'p', 'c')
    local prev, cur = 0, 0
    if st[1] then
      local w = tonumber(st[1])
      if w == k then
        prev, cur = tonumber(st[2]), tonumber(st[3])
      elseif w == k - 1 then
        prev = tonumber(st[3])
      end
    end

    -- prev*span <= (L-cur-cost)*W, as prev <= floor(room/span): room <= L*W
    -- stays below 2^53, where the product prev*span need not.
    local function fits(span)
      local room = (rate - cur - cost) * per
      local q = divmod(room, span)
      return prev <= q
    end

    if cost <= rate and cur <= rate - cost and fits(per - e) then
      return 0, 0, 0, key, (k + 2) * per, 'w', fmt(k), 'p', fmt(prev), 'c', fmt(cur + cost)
    end
    if count_rejected then
      cur = math.min(cur + cost, SAT)
    end

    local retry
    local to_next = per - e
    if cost > rate then
      retry = -1
    elseif cur <= rate - cost then
      -- later in this window: prev*(W-e') <= room iff W-e' <= floor(room/prev);
      -- prev > 0 here, else the request would have fitted
      local q = divmod((rate - cur - cost) * per, prev)
      if q >= 1 then
        retry = math.max(per - q - e, 1)
      else
        retry = to_next -- fits as window k+1 starts
      end
    else
      -- in window k+1, where prev' = cur: cur*(W-e') <= (L-cost)*W
      local q = divmod((rate - cost) * per, cur)
      if q >= 1 then
        retry = to_next + per - q
      else
        retry = to_next + per -- window k+2: both counts forgotten
      end
    end
    if count_rejected then
      return 2, 0, retry, key, (k + 2) * per, 'w', fmt(k), 'p', fmt(prev), 'c', fmt(cur)
    end
    return 2, 0, retry
  end,
}
