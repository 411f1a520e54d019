--[[
Sliding window counter (see dev.sluice.algorithm.SlidingWindow): two epoch-aligned windows, the
previous one weighted by how much of it the trailing window still covers. With k = floor(t/W) and
e = t - k*W:
    estimate = prev*(W - e)/W + curr         allowed iff estimate + q <= C
compared exactly as prev*(W - e) <= (C - curr - q)*W on base-2^21 limbs (mul_le): no floating point.

State: the string "k:prev:curr" (window number, counts of windows k-1 and k).
A denied call writes nothing.
Expiry (SET ... PX): (k+2)*W - t, when both windows have passed, rounded up to the millisecond.

Fields (after the code 's'):  cost, C, unit (1000 when W is a whole number of microseconds, else 1),
                              W in that unit, unused
State reported:               k (-1 when fresh), prev, curr (as stored)
]]
local B21 = 2097152 -- 2^21

-- a * b as five base-2^21 limbs, least significant first, for 0 <= a < 2^31 and 0 <= b < 2^53.
local function mul_limbs(a, b)
  local b0 = b % B21
  local t = (b - b0) / B21
  local b1 = t % B21
  local b2 = (t - b1) / B21
  local v = a * b0 -- < 2^52: exact
  local r0 = v % B21
  v = a * b1 + (v - r0) / B21 -- < 2^52 + 2^31
  local r1 = v % B21
  v = a * b2 + (v - r1) / B21
  local r2 = v % B21
  v = (v - r2) / B21 -- < 2^33
  local r3 = v % B21
  return r0, r1, r2, r3, (v - r3) / B21
end

-- a * b <= c * d, exactly, for 0 <= a, c < 2^31 and 0 <= b, d < 2^53.
local function mul_le(a, b, c, d)
  local x0, x1, x2, x3, x4 = mul_limbs(a, b)
  local y0, y1, y2, y3, y4 = mul_limbs(c, d)
  if x4 ~= y4 then return x4 < y4 end
  if x3 ~= y3 then return x3 < y3 end
  if x2 ~= y2 then return x2 < y2 end
  if x1 ~= y1 then return x1 < y1 end
  return x0 <= y0
end

local function s_load(key, i)
  local v = get_string(key, i)
  if not v then return -1, 0, 0 end
  return parse_window(v, i, true)
end

local function s_try(k0, prev0, curr0, base)
  local q = tonumber(ARGV[base + 2])
  local c = tonumber(ARGV[base + 3])
  local wn = tonumber(ARGV[base + 5])
  local k, e = window_of(wn, tonumber(ARGV[base + 4]))
  local prev, curr = 0, 0
  if k0 == k then
    prev, curr = prev0, curr0
  elseif k0 == k - 1 then
    prev = curr0
  end
  local room = c - curr - q
  local ok = room >= 0 and mul_le(prev, wn - e, room, wn)
  return ok, k0, prev0, curr0, k, prev, curr + q
end

local function s_save(key, k, prev, curr, base)
  local unit = tonumber(ARGV[base + 4])
  local wn = tonumber(ARGV[base + 5])
  local _, e = window_of(wn, unit)
  redis.call('SET', key, string.format('%d:%d:%d', k, prev, curr), 'PX', ttl(units_to_ms(2 * wn - e, unit)))
end

ALGOS['s'] = { s_load, s_try, s_save }
