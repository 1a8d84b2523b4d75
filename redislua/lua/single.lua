-- ---- the rule alone (redislua/lua/single.lua) --------------------------------
local rule = RULES[ALGORITHM]
local cost, rate, per, burst, opt, per_ns = args(rule.options, rule.durations)

local function finish(verdict, delay, retry, ...)
  commit(...)
  return reply(verdict, delay, retry)
end
return finish(rule.decide(KEYS[1], cost, rate, per, burst, opt, per_ns))
