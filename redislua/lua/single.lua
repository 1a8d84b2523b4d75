-- ---- the rule alone (redislua/lua/single.lua) --------------------------------
local rule = RULES[ALGORITHM]
local cost, rate, per, burst, opt, per_ns = args(rule.options, rule.durations)
local verdict, delay, retry, w = rule.decide(KEYS[1], rule.policy(cost, rate, per, burst, opt, per_ns))
commit(w)
return reply(verdict, delay, retry)
