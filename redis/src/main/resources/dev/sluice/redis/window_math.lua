--[[
Sluice: exact window arithmetic shared by fixed_window.lua and sliding_window.lua.
]]
local floor_div = function(x, d)
  local q = math.floor(x / d)
  if q * d > x then q = q - 1 end
  if (q + 1) * d <= x then q = q + 1 end
  return q
end

-- The window of now: k = floor(t / W) and e = t - k*W, with t = now in nanoseconds. W is given in
-- `unit` nanoseconds: unit 1000 (W a whole number of microseconds: exact for any W) or unit 1
-- (then W < 2^53 / 5, checked by the caller). e is returned in the same unit as W.
local function window_of(wn, unit)
  local k = floor_div(now_us, wn)
  local e = now_us - k * wn
  if unit ~= 1000 then
    -- t = 1000 * now_us: bring in the factor 1000 one prime factor at a time (2, 2, 2, 5, 5, 5)
    -- so that no intermediate exceeds 5 * W < 2^53.
    for f = 2, 5, 3 do
      for _ = 1, 3 do
        local r = e * f
        local d = floor_div(r, wn)
        k = k * f + d
        e = r - d * wn
      end
    end
  end
  return k, e
end

-- A duration of x units of `unit` ns in milliseconds, rounded up.
local function units_to_ms(x, unit)
  if unit == 1000 then return ceil_div(x, 1000) end
  return ceil_div(x, 1000000)
end

-- Reads "k:a" or "k:a:b" of non-negative integers, failing on anything Sluice did not write.
local function parse_window(v, i, three)
  local k, a, b
  if three then
    k, a, b = string.match(v, '^(%d+):(%d+):(%d+)$')
  else
    k, a = string.match(v, '^(%d+):(%d+)$')
    b = 0
  end
  if k == nil then error('SLUICECORRUPT ' .. i, 0) end
  return tonumber(k), tonumber(a), tonumber(b)
end
