-- all-of (algorithms/all_of.go): several limits on one request, each with
-- its own key and its own rule (RULES, above), charged as the commit mode
-- says:
--   all-or-nothing: every limit decides without writing; the request is
--     rejected iff any rejects, and then no limit is charged; otherwise
--     every limit's write is made;
--   every-hit: every limit decides and makes its write, as it alone would;
--   in-order: the limits decide in order, each making its write, stopping
--     at the first that rejects (the later ones are not asked).
-- A limit whose key index is 0 does not apply to the request (it carries
-- no value of that limit's key) and is not asked. Admitted: the largest
-- delay of the limits asked. Rejected: the largest retry_after of the
-- limits that rejected (never if any says never). fired is 1 + the index
-- of the limit that decided the request, 0 when none did: the first that
-- rejected, else the first with the largest delay.
clock()
local cost = int('cost', ARGV[2])
if cost < 1 then fail('cost: want at least 1, found ' .. ARGV[2]) end
local mode = ARGV[3]
if mode ~= 'all-or-nothing' and mode ~= 'every-hit' and mode ~= 'in-order' then
  fail('commit: want all-or-nothing, every-hit or in-order, found ' .. tostring(mode))
end
local n = int('limits', ARGV[4])
if n < 1 then fail('limits: want at least 1, found ' .. ARGV[4]) end

-- each limit's block: name key options rate per burst [OPTION VALUE]...
local limits = {}
local at = 5
for i = 1, n do
  local where = 'limits[' .. fmt(i - 1) .. ']: '
  local name = ARGV[at]
  if name == nil then fail(where .. 'missing: want name key options rate per burst') end
  local rule = RULES[name]
  if rule == nil then
    fail(where .. 'no rule ' .. name .. ' (want nginx, fixed-window, sliding-window or token-bucket)')
  end
  local k = int(where .. 'key', ARGV[at + 1])
  if k < 0 or k > #KEYS then
    fail(where .. 'key: want 0 (not asked) or an index of KEYS up to ' .. fmt(#KEYS) .. ', found ' .. ARGV[at + 1])
  end
  local nopt = int(where .. 'options', ARGV[at + 2])
  local rate = int(where .. 'rate', ARGV[at + 3])
  local per_ns = int(where .. 'per', ARGV[at + 4])
  local burst = int(where .. 'burst', ARGV[at + 5])
  if rate < 1 then fail(where .. 'rate: want at least 1, found ' .. ARGV[at + 3]) end
  if burst < 1 then fail(where .. 'burst: want at least 1, found ' .. ARGV[at + 5]) end
  if nopt < 0 then fail(where .. 'options: want at least 0, found ' .. ARGV[at + 2]) end
  local opt = {}
  for j = at + 6, at + 5 + 2 * nopt, 2 do
    local o = ARGV[j]
    if o == nil or not rule.options[o] then
      fail(where .. 'unknown option ' .. tostring(o) .. ' for ' .. name)
    end
    if ARGV[j + 1] == nil then fail(where .. o .. ': missing value') end
    opt[o] = int(where .. o, ARGV[j + 1])
  end
  for o, _ in pairs(rule.durations or {}) do
    if opt[o] then opt[o] = ticks(where .. o, opt[o]) end
  end
  local per = ticks(where .. 'per', per_ns)
  if per < 1 then fail(where .. 'per: want a period greater than 0, found ' .. ARGV[at + 4]) end
  if rule.check then
    local ok, err = pcall(rule.check, cost, rate, per, burst, opt, per_ns)
    if not ok then error(string.gsub(err, '^ratesim: ', 'ratesim: ' .. where), 0) end
  end
  local key = nil
  if k > 0 then key = KEYS[k] end
  limits[i] = {rule = rule, key = key, rate = rate, per = per, burst = burst, opt = opt, per_ns = per_ns}
  at = at + 6 + 2 * nopt
end

-- split returns a rule's decision and its write as a table (nil for none)
local function split(v, d, r, ...)
  if (...) == nil then return v, d, r, nil end
  return v, d, r, {...}
end
if at <= #ARGV then fail('found ' .. fmt(#ARGV - at + 1) .. ' arguments after the last limit') end

local verdict, delay, retry, fired = 0, 0, 0, 0
local writes = {}
for i = 1, n do
  local l = limits[i]
  if l.key then
    local v, d, r, w = split(l.rule.decide(l.key, cost, l.rate, l.per, l.burst, l.opt, l.per_ns))
    if verdict ~= 2 and (v == 2 or d > delay) then fired = i end
    if v == 2 then
      if verdict ~= 2 then
        verdict, delay, retry = 2, 0, r
      elseif retry == -1 or r == -1 then
        retry = -1
      else
        retry = math.max(retry, r)
      end
    elseif verdict ~= 2 then
      delay = math.max(delay, d)
    end
    if mode == 'all-or-nothing' then
      writes[i] = w
    else
      if w then commit(unpack(w)) end
      if v == 2 and mode == 'in-order' then break end
    end
  end
end
if mode == 'all-or-nothing' and verdict ~= 2 then
  for i = 1, n do
    if writes[i] then commit(unpack(writes[i])) end
  end
end
if verdict ~= 2 and delay > 0 then verdict = 1 end
local out = reply(verdict, delay, retry)
out[4] = fired
return out
