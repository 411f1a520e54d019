--[[
Sliding window counter (see dev.sluice.algorithm.SlidingWindow): two epoch-aligned windows, the
previous one weighted by how much of it the trailing window still covers. With k = floor(t/W) and
e = t - k*W:
    estimate = prev*(W - e)/W + curr         allowed iff estimate + q <= C
compared exactly as prev*(W - e) <= (C - curr - q)*W on base-2^21 limbs (mul_le): no floating point.

State: the string "k:prev:curr" (window number, counts of windows k-1 and k), "/numbers" when named.
Under other numbers (Inheritance.slidingWindow): the same window length keeps both counts; another
makes the estimate at now, prev*(W - e)/W + curr rounded up, the count of the new window holding now.
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

-- The counts of windows k-1 and k as a state stored at window k0 tells them (0 when older).
local function counts_at(k0, prev0, curr0, k)
  if k0 == k then return prev0, curr0 end
  if k0 == k - 1 then return curr0, 0 end
  return 0, 0
end

-- ceil(a * b / d) for 0 <= b <= d < 2^53, 0 <= a < 2^31: the least x in [0, a] with a*b <= x*d.
local function mul_div_ceil(a, b, d)
  local lo, hi = 0, a
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if mul_le(a, b, mid, d) then hi = mid else lo = mid + 1 end
  end
  return lo
end

local function s_load(key, i, base)
  local v = get_string(key, i)
  if not v then return -1, 0, 0 end
  local numbers = numbers_of(base)
  local s, was = split_numbers(v, i, numbers)
  local k0, prev0, curr0 = parse_window(s, i, true)
  if was == numbers then return k0, prev0, curr0 end
  local unit0, wn0 = window_numbers(was, i)
  local unit, wn = tonumber(ARGV[base + 4]), tonumber(ARGV[base + 5])
  if unit0 == unit and wn0 == wn then return k0, prev0, curr0, true end
  local k, e = window_of(wn0, unit0)
  local prev, curr = counts_at(k0, prev0, curr0, k)
  local estimate = curr + mul_div_ceil(prev, wn0 - e, wn0)
  if estimate == 0 then return -1, 0, 0, true end
  return window_of(wn, unit), 0, estimate, true
end

local function s_try(k0, prev0, curr0, base)
  local q = tonumber(ARGV[base + 2])
  local c = tonumber(ARGV[base + 3])
  local wn = tonumber(ARGV[base + 5])
  local k, e = window_of(wn, tonumber(ARGV[base + 4]))
  local prev, curr = counts_at(k0, prev0, curr0, k)
  local room = c - curr - q
  local ok = room >= 0 and mul_le(prev, wn - e, room, wn)
  if ok then curr = curr + q end
  return ok, k0, prev0, curr0, k, prev, curr
end

local function s_save(key, k, prev, curr, base)
  -- a state read under other numbers as fresh (written by a denied call): nothing to keep
  if k < 0 then return redis.call('DEL', key) end
  local unit = tonumber(ARGV[base + 4])
  local wn = tonumber(ARGV[base + 5])
  local _, e = window_of(wn, unit)
  redis.call('SET', key, string.format('%d:%d:%d', k, prev, curr) .. numbers_suffix(base), 'PX', ttl(units_to_ms(2 * wn - e, unit)))
end

ALGOS['s'] = { s_load, s_try, s_save }
