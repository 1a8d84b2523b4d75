-- ---- shared helpers (redislua/lua/lib.lua) --------------------------------
-- Every number below is an integer held in a Lua double: exact while it stays
-- below 2^53 in magnitude, which ratesim checks for a policy before a run.

local MAXI = 9007199254740992 -- 2^53
local SAT = MAXI - 1          -- counts saturate here (the Go rule at 2^63-1:
                              -- any count above the limit decides alike)

local function fail(msg)
  error('ratesim: ' .. msg, 0)
end

-- fmt writes an integer for Redis: never tostring, which is %.14g.
local function fmt(x)
  return string.format('%d', x)
end

-- int parses one integer argument.
local function int(name, s)
  local x = tonumber(s)
  if x == nil or x ~= math.floor(x) or x >= MAXI or x <= -MAXI then
    fail(name .. ': want an integer below 2^53 in magnitude, found ' .. tostring(s))
  end
  return x
end

-- divmod returns q, r with a = q*b + r and 0 <= r < b (floor division), for
-- |a| < 2^53 and 0 < b < 2^53. The double quotient is correctly rounded and
-- its floor is already exact in that range; the correction is a guard.
local function divmod(a, b)
  local q = math.floor(a / b)
  local r = a - q * b
  if r < 0 then
    q, r = q - 1, r + b
  elseif r >= b then
    q, r = q + 1, r - b
  end
  return q, r
end

-- ceildiv returns ceil(a/b) for a >= 0, b > 0.
local function ceildiv(a, b)
  local q, r = divmod(a, b)
  if r > 0 then q = q + 1 end
  return q
end

local function gcd(a, b)
  while b ~= 0 do
    local _, r = divmod(a, b)
    a, b = b, r
  end
  return a
end

-- Exact instants and durations ns + rem/den (0 <= rem < den), as
-- algorithms/exact.go keeps them: whole ticks plus a remainder over den.
local function fadd(an, ar, bn, br, den)
  local n, r = an + bn, ar + br
  if r >= den then n, r = n + 1, r - den end
  return n, r
end

local function fsub(an, ar, bn, br, den)
  local n, r = an - bn, ar - br
  if r < 0 then n, r = n - 1, r + den end
  return n, r
end

local function fafter(an, ar, bn, br)
  return an > bn or (an == bn and ar > br)
end

local function fceil(n, r)
  if r > 0 then return n + 1 end
  return n
end
