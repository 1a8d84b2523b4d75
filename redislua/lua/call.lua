-- ---- the calling convention (redislua/lua/call.lua) --------------------------
-- args parses ARGV[2..]: cost rate per burst [OPTION VALUE]..., taking only
-- the options in allowed. per (ns) and the options in durations (ns) are
-- turned into ticks of the clock.
local function args(allowed, durations)
  clock()
  local cost = int('cost', ARGV[2])
  local rate = int('rate', ARGV[3])
  local per_ns = int('per', ARGV[4])
  local burst = int('burst', ARGV[5])
  if cost < 1 then fail('cost: want at least 1, found ' .. ARGV[2]) end
  if rate < 1 then fail('rate: want at least 1, found ' .. ARGV[3]) end
  if burst < 1 then fail('burst: want at least 1, found ' .. ARGV[5]) end
  local opt = {}
  for i = 6, #ARGV, 2 do
    local name = ARGV[i]
    if not allowed[name] then
      fail('unknown option ' .. tostring(name) .. ' for ' .. ALGORITHM)
    end
    if ARGV[i + 1] == nil then fail(name .. ': missing value') end
    opt[name] = int(name, ARGV[i + 1])
  end
  for name, _ in pairs(durations or {}) do
    if opt[name] then opt[name] = ticks(name, opt[name]) end
  end
  local per = ticks('per', per_ns)
  if per < 1 then fail('per: want a period greater than 0, found ' .. ARGV[4]) end
  return cost, rate, per, burst, opt, per_ns
end

-- reply returns {verdict, delay_ns, retry_after_ns} from ticks; -1 (never)
-- stays -1.
local function reply(verdict, delay, retry)
  if retry > 0 then retry = retry * NS end
  return {verdict, delay * NS, retry}
end

-- ---- the algorithm ---------------------------------------------------------
